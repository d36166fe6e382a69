"""RL environments over the rules core.

* :mod:`carc_env.env.aec`: the PettingZoo AEC env (``env()``, ``raw_env``);
* :mod:`carc_env.env.gym_env`: a Gymnasium single-agent env (one learner
  seat, opponents from a policy list);
* :mod:`carc_env.env.vector`: a batched env stepping N games for rollouts;
* :mod:`carc_env.env.wrappers`: observation flattening (Dict -> Box);
* :mod:`carc_env.env.bench`: throughput measurements.

Importing this package registers ``"carc_env/Carcassonne-v0"`` with
Gymnasium (``gymnasium.make("carc_env/Carcassonne-v0", **options)``) and
``"carc_env/carcassonne-v0"`` with PettingZoo's AEC registry
(``pettingzoo.make("aec", "carc_env/carcassonne-v0", **options)``, PettingZoo
>= 1.27; skipped on older versions, which have no registry).

``carc_env.env(**options)`` is the wrapped AEC env whether ``carc_env.env``
resolves to the function or, once this subpackage is imported, to the package
itself (the package is callable and forwards to :func:`carc_env.env.aec.env`).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import gymnasium

from .aec import env, raw_env
from .options import REWARD_MODES, EnvOptions

GYM_ID = "carc_env/Carcassonne-v0"
PETTINGZOO_ID = "carc_env/carcassonne-v0"


def _register() -> None:
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point="carc_env.env.gym_env:CarcassonneGymEnv")
    try:
        import pettingzoo

        registry = getattr(pettingzoo, "aec_registry", None)
        if registry is not None and PETTINGZOO_ID not in registry:
            pettingzoo.register("aec", PETTINGZOO_ID, entry_point="carc_env.env.aec:env")
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - old PettingZoo without a registry
        pass


_register()


class _CallableModule(types.ModuleType):
    """Importing this subpackage makes ``carc_env.env`` the module, not the function ``env``;
    calling the module keeps ``carc_env.env(**options)`` working either way."""

    def __call__(self, **options: Any) -> Any:
        return env(**options)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["env", "raw_env", "EnvOptions", "REWARD_MODES", "GYM_ID", "PETTINGZOO_ID"]
