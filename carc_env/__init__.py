"""carc_env: a fast, faithful Carcassonne rules engine and PettingZoo environment.

``carc_env.core`` is the pure rules engine (numpy only).  The environments
(``carc_env.env`` / ``carc_env.raw_env``, the Gymnasium and vector envs) are
imported lazily, on first use.

Importing the package registers the environment ids
(:mod:`carc_env.registration`): ``gymnasium.make("carc_env/Carcassonne-v0")``,
``gymnasium.make("carc_env:Carcassonne-v0")`` (no import needed) and
``pettingzoo.make("aec", "carc_env/carcassonne-v0")``.  Registering imports
``gymnasium`` and ``pettingzoo`` (not the env modules): about 1.4 times the
core's import time, the price of ids that resolve after a plain ``import carc_env``.

Framework adapters live in :mod:`carc_env.integrations` (optional extras
``[rllib]`` and ``[sb3]``); nothing here imports them.

Expansions are plug-ins (``carc_env/expansions/<key>/``); importing this
package registers the built-in ones.  A plug-in written elsewhere registers
itself with :func:`carc_env.core.register` (see ``docs/architecture.md``,
"Writing an expansion", and ``docs/examples/tolls``).
"""

from __future__ import annotations

from typing import Any

from .core import ConfigError, Game, GameConfig, IllegalActionError, new_game
from .core.registry import load_builtins
from .registration import register as _register

__version__ = "0.1.0"

load_builtins()  # every package under carc_env/expansions/ registers itself
_register()

__all__ = [
    "ConfigError", "Game", "GameConfig", "IllegalActionError", "new_game", "env", "raw_env", "CarcassonneGymEnv",
    "CarcassonneVectorEnv", "RandomPolicy", "GreedyPolicy", "__version__",
]  # fmt: skip


_LAZY = {
    "env": "carc_env.env.aec",
    "raw_env": "carc_env.env.aec",
    "CarcassonneGymEnv": "carc_env.env.gym_env",
    "CarcassonneVectorEnv": "carc_env.env.vector",
    "RandomPolicy": "carc_env.policies",
    "GreedyPolicy": "carc_env.policies",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(module), name)
    if name == "parallel_env":
        raise AttributeError("carcassonne_v0 is turn-based (is_parallelizable=False); use carc_env.env() instead")
    raise AttributeError(f"module 'carc_env' has no attribute {name!r}")
