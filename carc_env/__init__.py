"""carc_env: a fast, faithful Carcassonne rules engine and PettingZoo environment.

``carc_env.core`` is the pure rules engine (numpy only).  The PettingZoo
environment (``carc_env.env`` / ``carc_env.raw_env``) is imported lazily so
that using the core alone never imports gymnasium or pettingzoo.
"""

from __future__ import annotations

from typing import Any

from . import expansions  # noqa: F401  (registers the built-in expansions)
from .core import ConfigError, Game, GameConfig, IllegalActionError, new_game

__version__ = "0.1.0"

__all__ = ["ConfigError", "Game", "GameConfig", "IllegalActionError", "new_game", "env", "raw_env", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("env", "raw_env", "parallel_env"):
        from .env import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'carc_env' has no attribute {name!r}")
