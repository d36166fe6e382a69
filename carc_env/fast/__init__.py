"""The compiled engine: Numba kernels over batches of games, identical to the Python reference.

The Python engine (:mod:`carc_env.core`) defines the rules and covers every
expansion; this package is a fast path for the configurations RL users train
on most.  The environments use it automatically when it covers their
configuration (``engine="auto"``, the default), and say which engine runs
(``env.unwrapped.engine``, ``CarcassonneVectorEnv.engine``).

Covered (:func:`coverage`): the base game with 2 to 5 players, any number of
followers, every base-game option, every reward mode and window size; with
any combination of the expansions whose plug-in has a ``fast`` part (its
compiled rules: :mod:`carc_env.fast.seam`, :mod:`carc_env.fast.support`) and
every option that part lists.  The coverage table is in
``docs/architecture.md``; any other configuration runs on the Python engine,
and ``engine_reason`` says why.

Public names:

* :func:`available`: whether Numba imports (if not, the environments run on
  the Python engine and one :class:`FastEngineWarning` says so, once);
* :class:`~carc_env.fast.config.EngineConfig`: what the engine reads of a
  configuration (the resolved rule set, window and reward; env options resolve
  into one, once: ``EnvOptions.engine_config()``);
* :func:`coverage` / :func:`select_engine`: which engine a configuration gets,
  and why;
* :class:`~carc_env.fast.engine.FastBatch`: N games stepped by the kernels
  (what the vector env and the AEC env drive);
* :func:`~carc_env.env.differential.compare_game`: the differential check
  against the reference (``tests/fast/test_fast_differential.py``,
  ``scripts/fast_differential.py``);
* :class:`~carc_env.fast.support.FastSupport`: what a plug-in's ``fast`` part
  declares; :mod:`carc_env.fast.seam`: how its kernels join the engine.

The kernels are compiled on first use and cached on disk (the composed
module's entry points, :mod:`carc_env.fast.seam`): the first process on a
machine pays the compilation (``scripts/bench.py`` reports it), later ones
load the cache in about a second.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..core import ConfigError
from .config import EngineConfig
from .support import FastSupport
from .tables import coverage, features_coverage, rules_coverage

ENGINES = ("auto", "python", "numba")


class FastEngineWarning(UserWarning):
    """The compiled engine cannot run here (Numba is missing); the Python engine runs instead."""


_available: bool | None = None
_import_error: str = ""


def available() -> bool:
    """True if Numba imports.  The first time it does not, one FastEngineWarning is issued."""
    global _available, _import_error
    if _available is None:
        try:
            import numba  # noqa: F401
        except ImportError as exc:  # no wheel for this platform, or not installed
            _available = False
            _import_error = str(exc)
            warnings.warn(
                f"numba is not available ({exc}); carc_env runs on its Python engine (same games, slower). "
                "Install numba (a dependency of carc_env) for the compiled engine.",
                FastEngineWarning,
                stacklevel=3,
            )
        else:
            _available = True
    return _available


def select_engine(options: Any, engine: str = "auto") -> tuple[str, str]:
    """``(engine, reason)`` for a configuration (an :class:`EngineConfig` or validated env options):
    ``"numba"`` where the compiled engine covers it
    (and Numba imports), else ``"python"`` with the reason in words.  ``engine="numba"`` raises
    ConfigError instead of falling back; ``"python"`` always picks the reference engine."""
    if engine not in ENGINES:
        raise ConfigError(f"option engine must be one of {list(ENGINES)}, got {engine!r}")
    if engine == "python":
        return "python", "engine='python' was asked for"
    reason = coverage(options)
    if reason is None and not available():
        reason = f"numba is not available ({_import_error})"
    if reason is not None:
        if engine == "numba":
            raise ConfigError(f"engine='numba' cannot run this configuration: {reason}; use engine='auto'")
        return "python", reason
    return "numba", ""


__all__ = [
    "ENGINES", "EngineConfig", "FastEngineWarning", "FastSupport", "available", "coverage", "features_coverage",
    "rules_coverage",
    "select_engine",
]  # fmt: skip
