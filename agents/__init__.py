"""Example agents: masked PPO with self-play (torch), evaluation, checkpoints.

Uses only the public ``carc_env`` API.  Entry points: ``scripts/train.py``,
``scripts/evaluate.py`` and ``scripts/main.py``.
"""
