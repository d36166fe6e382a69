"""RL environments over the rules core.

* :mod:`carc_env.env.aec`: the PettingZoo AEC env (``env()``, ``raw_env``);
* :mod:`carc_env.env.gym_env`: a Gymnasium single-agent env (one learner
  seat, opponents from a policy list);
* :mod:`carc_env.env.vector`: a ``gymnasium.vector.VectorEnv`` stepping N games at once
  (``gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=N)`` builds it);
* :mod:`carc_env.env.start`: every env starts from a saved game record
  (``reset(options={"record": rec})``);
* :mod:`carc_env.env.wrappers`: observation flattening (Dict -> Box) and PettingZoo's
  classic ``{"observation", "action_mask"}`` convention (option ``obs_format="classic"``);
* :mod:`carc_env.env.bench`: throughput measurements.

The ids ``"carc_env/Carcassonne-v0"`` (Gymnasium:
``gymnasium.make("carc_env/Carcassonne-v0", **options)``) and
``"carc_env/carcassonne-v0"`` (PettingZoo's AEC registry:
``pettingzoo.make("aec", "carc_env/carcassonne-v0", **options)``) are
registered by ``import carc_env`` itself (:mod:`carc_env.registration`).

``carc_env.env(**options)`` is the wrapped AEC env whether ``carc_env.env``
resolves to the function or, once this subpackage is imported, to the package
itself (the package is callable and forwards to :func:`carc_env.env.aec.env`).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..registration import GYM_ID, PETTINGZOO_ID
from .aec import env, raw_env
from .options import REWARD_MODES, EnvOptions


class _CallableModule(types.ModuleType):
    """Importing this subpackage makes ``carc_env.env`` the module, not the function ``env``;
    calling the module keeps ``carc_env.env(**options)`` working either way."""

    def __call__(self, **options: Any) -> Any:
        return env(**options)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["env", "raw_env", "EnvOptions", "REWARD_MODES", "GYM_ID", "PETTINGZOO_ID"]
