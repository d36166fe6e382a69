"""Observation flattening for libraries that need a flat ``Box`` observation.

* :class:`FlattenObservation` (Gymnasium): wraps the single-agent env (or any
  env with the carc_env dict observation); observations become one
  ``float32`` vector ``board.ravel() ++ globals ++ windows.ravel()``.  The
  mask leaves the observation and stays in ``info["action_mask"]`` and in
  ``action_masks()`` (for sb3-contrib's ``MaskablePPO``).
* :class:`FlattenObservationAEC` (PettingZoo): the same for an AEC env
  (wrap the output of ``carc_env.env()`` or ``raw_env``); the mask stays in
  ``infos[agent]["action_mask"]``.

``flatten_observation(obs)`` is the function both use; ``flat_layout(space)``
gives each part's slice of the vector.

``classic_space`` / ``classic_observation`` (and ``classic_batch`` for the
vector env's stacked rows) give PettingZoo's classic convention,
``{"observation": flat float32 vector, "action_mask": int8 mask}``: what the
envs hand out with the option ``obs_format="classic"``.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

FLAT_KEYS = ("board", "globals", "windows")


def flat_layout(space: spaces.Dict) -> dict[str, slice]:
    """Slice of each observation part in the flat vector."""
    out, start = {}, 0
    for key in FLAT_KEYS:
        size = int(np.prod(space[key].shape or ()))
        out[key] = slice(start, start + size)
        start += size
    return out


def flat_space(space: spaces.Dict) -> spaces.Box:
    boxes = [cast(spaces.Box, space[k]) for k in FLAT_KEYS]
    lows = [np.asarray(b.low, dtype=np.float32).ravel() for b in boxes]
    highs = [np.asarray(b.high, dtype=np.float32).ravel() for b in boxes]
    return spaces.Box(low=np.concatenate(lows), high=np.concatenate(highs), dtype=np.float32)


def flatten_observation(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``float32`` concatenation of board, globals and windows (the mask is left out)."""
    return np.concatenate([np.asarray(obs[k], dtype=np.float32).ravel() for k in FLAT_KEYS])


def classic_space(space: spaces.Dict) -> spaces.Dict:
    """The classic-convention space of a carc_env dict observation space."""
    return spaces.Dict({"observation": flat_space(space), "action_mask": space["action_mask"]})


def classic_observation(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``{"observation": flatten_observation(obs), "action_mask": mask}``, read-only."""
    flat = flatten_observation(obs)
    flat.flags.writeable = False
    return {"observation": flat, "action_mask": obs["action_mask"]}


def classic_batch(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The classic convention for stacked observations (leading axis: the game), read-only."""
    n = len(batch["action_mask"])
    flat = np.concatenate([np.asarray(batch[k], dtype=np.float32).reshape(n, -1) for k in FLAT_KEYS], axis=1)
    flat.flags.writeable = False
    return {"observation": flat, "action_mask": batch["action_mask"]}


class FlattenObservation(gymnasium.ObservationWrapper):
    """Dict -> flat Box for the Gymnasium env; the mask stays in info and ``action_masks()``."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        inner = cast(spaces.Dict, env.observation_space)
        self.observation_space = flat_space(inner)
        self.layout = flat_layout(inner)
        self._mask: np.ndarray | None = None

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        self._mask = observation["action_mask"]
        return flatten_observation(observation)

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        info = dict(info)
        info["action_mask"] = obs["action_mask"]
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        info["action_mask"] = obs["action_mask"]
        return self.observation(obs), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        if self._mask is None:
            raise RuntimeError("call reset() first")
        return self._mask.astype(bool)


class FlattenObservationAEC(BaseWrapper):
    """Dict -> flat Box for an AEC env; the mask stays in ``infos[agent]["action_mask"]``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        self._space = flat_space(inner)
        self.layout = flat_layout(inner)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> np.ndarray | None:
        obs = self.env.observe(agent)
        return None if obs is None else flatten_observation(obs)


__all__ = [
    "FlattenObservation", "FlattenObservationAEC", "classic_batch", "classic_observation", "classic_space",
    "flat_layout", "flat_space", "flatten_observation",
]  # fmt: skip
