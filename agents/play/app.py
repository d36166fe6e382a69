"""The play page's web app (Starlette): a JSON API over :mod:`agents.play.session` and the static page.

Routes (every answer JSON; a refused request is status 400 with ``{"error": message}`` and changes
nothing; an unknown game id is 404 with a message saying to start a new game):

=======================================  ============================================================
``GET  /``                               the page (``static/index.html``)
``GET  /api/options``                    expansions, player kinds, shipped agents
``POST /api/games``                      new game ``{"players": [...], "expansions": [...], "seed"}``
``GET  /api/games/{id}``                 its state (``?inspect=1``: with the policy inspector)
``POST /api/games/{id}/act``             a human's action ``{"action": text, "expect": n}``
``POST /api/games/{id}/agent``           one decision of the deciding agent ``{"expect": n}``
``POST /api/games/{id}/swap``            a new game: same deck, seats rotated by one
``GET  /api/games/{id}/record``          the JSON game record
``POST /api/replays``                    load a record ``{"record": {...}}``
``GET  /api/replays/{id}?step=k``        the replay's state after k decisions
=======================================  ============================================================

Games live in this process's memory (the newest 64 games and 16 replays are kept).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from carc_env.core.expansion import registry

from ..players import player_kinds
from .session import GameSession, PlayError, ReplaySession

STATIC = Path(__file__).resolve().parent / "static"
MAX_GAMES = 64
MAX_REPLAYS = 16


def _error(msg: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": msg}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    try:
        data = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise PlayError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise PlayError("the request body must be a JSON object")
    return data


def create_app(hints: list[Any] | None = None, pretrained: list[str] | None = None) -> Starlette:
    """The app; ``hints``: networks (policies with ``.net``) the inspector may use for human seats and
    replays (the first that fits a game's layout)."""
    games: OrderedDict[str, GameSession] = OrderedDict()
    replays: OrderedDict[str, ReplaySession] = OrderedDict()

    def keep(store: OrderedDict, item: Any, cap: int) -> None:
        store[item.id] = item
        while len(store) > cap:
            store.popitem(last=False)

    def game_of(request: Request) -> GameSession:
        gid = request.path_params["gid"]
        g = games.get(gid)
        if g is None:
            raise LookupError(
                f"no game {gid!r} here (the server was restarted or the game is too old); start a new game"
            )
        return g

    async def locked(session: Any, fn: Any) -> Any:
        """Run ``fn`` in a worker thread holding the session's lock: an agent's search does not block the
        server, and two requests never change one game at the same time."""

        def work() -> Any:
            with session.lock:
                return fn()

        return await run_in_threadpool(work)

    def handler(fn):
        async def run(request: Request) -> JSONResponse:
            try:
                return JSONResponse(await fn(request))
            except PlayError as exc:
                return _error(str(exc))
            except LookupError as exc:
                return _error(str(exc).strip("'\""), 404)

        return run

    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def options(request: Request) -> dict[str, Any]:
        return {"expansions": [k for k in registry() if k != "base"], "kinds": player_kinds(),
                "pretrained": pretrained or [], "hint": bool(hints)}  # fmt: skip

    async def new_game(request: Request) -> dict[str, Any]:
        data = await _body(request)
        seed = data.get("seed")
        if seed in ("", None):
            seed = None
        elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise PlayError(f"seed must be empty or a non-negative integer, got {seed!r}")
        g = await run_in_threadpool(GameSession, data.get("players"), data.get("expansions", []), seed,
                                    data.get("rules"), hints)  # fmt: skip
        keep(games, g, MAX_GAMES)
        return await locked(g, g.state)

    async def state(request: Request) -> dict[str, Any]:
        g = game_of(request)
        return await locked(g, lambda: g.state(inspect=request.query_params.get("inspect") == "1"))

    async def act(request: Request) -> dict[str, Any]:
        g = game_of(request)
        data = await _body(request)
        return await locked(g, lambda: {"played": g.act(data.get("action"), data.get("expect")), **g.state()})

    async def agent(request: Request) -> dict[str, Any]:
        g = game_of(request)
        data = await _body(request)
        return await locked(g, lambda: {"played": g.agent_move(data.get("expect")), **g.state()})

    async def swap(request: Request) -> dict[str, Any]:
        old = game_of(request)
        g = await locked(old, old.swapped)
        keep(games, g, MAX_GAMES)
        return await locked(g, g.state)

    async def record(request: Request) -> dict[str, Any]:
        g = game_of(request)
        return await locked(g, g.record)

    async def new_replay(request: Request) -> dict[str, Any]:
        data = await _body(request)
        rec = data.get("record")
        if isinstance(rec, str):
            try:
                rec = json.loads(rec)
            except ValueError as exc:
                raise PlayError(f"the record is not JSON: {exc}") from None
        r = await run_in_threadpool(ReplaySession, rec, hints)
        keep(replays, r, MAX_REPLAYS)
        return await locked(r, r.state)

    async def replay_state(request: Request) -> dict[str, Any]:
        rid = request.path_params["rid"]
        r = replays.get(rid)
        if r is None:
            raise LookupError(f"no replay {rid!r} here; load the record again")
        step = request.query_params.get("step")
        if step is not None:
            try:
                k = int(step)
            except ValueError:
                raise PlayError(f"step must be an integer, got {step!r}") from None

            def step_to() -> dict[str, Any]:
                r.goto(k)
                return r.state()

            return await locked(r, step_to)
        return await locked(r, r.state)

    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Route("/api/options", handler(options)),
        Route("/api/games", handler(new_game), methods=["POST"]),
        Route("/api/games/{gid}", handler(state)),
        Route("/api/games/{gid}/act", handler(act), methods=["POST"]),
        Route("/api/games/{gid}/agent", handler(agent), methods=["POST"]),
        Route("/api/games/{gid}/swap", handler(swap), methods=["POST"]),
        Route("/api/games/{gid}/record", handler(record)),
        Route("/api/replays", handler(new_replay), methods=["POST"]),
        Route("/api/replays/{rid}", handler(replay_state)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.games = games
    app.state.replays = replays
    return app


__all__ = ["create_app"]
