"""The play page: play against the agents in a browser, inspect a policy, step through saved games.

``python scripts/play.py`` serves it on 127.0.0.1 (extra ``[play]``: Starlette and uvicorn).
:mod:`agents.play.session` holds the games (on the project's env), :mod:`agents.play.app` the web app.
"""
