"""Throughput measurements of the environments (called by ``scripts/bench.py``).

Both functions return steps per second as a float (``env_benchmark`` and
``vector_env_benchmark`` return the details as a dict).  They play uniformly
random legal actions (chosen from the action mask with a seeded generator) on
the calling process's single core, with full observations built at every
step.  Nothing here is asserted by tests: speed is measured, not tested.

* :func:`env_steps_per_s`: through ``carc_env.env()`` (all PettingZoo classic
  wrappers), the usual ``agent_iter`` / ``last`` / ``step`` loop; one AEC step
  is one ``step()`` call (the dead steps at the end of a game included).
* :func:`vector_env_steps_per_s`: through :class:`CarcassonneVectorEnv`
  (self-play); one step is one decision in one game, so a batched
  ``step()`` counts ``num_envs`` steps.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np


def env_steps_per_s(seconds: float = 5.0, seed: int = 0, **options: Any) -> float:
    """AEC steps per second through ``env()`` with random legal play."""
    return env_benchmark(seconds, seed, **options)["steps_per_s"]


def vector_env_steps_per_s(num_envs: int = 16, seconds: float = 5.0, seed: int = 0, **options: Any) -> float:
    """Decisions per second through the vector env (self-play, random legal play)."""
    return vector_env_benchmark(num_envs, seconds, seed, **options)["steps_per_s"]


def env_benchmark(seconds: float = 5.0, seed: int = 0, **options: Any) -> dict[str, float]:
    """:func:`env_steps_per_s` with details (games per second, counts, duration)."""
    from .aec import env as make_env

    e = make_env(**options)
    rng = np.random.default_rng(seed)
    steps = games = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        e.reset(seed=seed + games)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            e.step(action)
            steps += 1
            del agent
        games += 1
        if time.perf_counter() >= deadline:
            break
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "games_per_s": games / dt, "steps": steps, "games": games, "seconds": dt}


def vector_env_benchmark(num_envs: int = 16, seconds: float = 5.0, seed: int = 0, **options: Any) -> dict[str, float]:
    """:func:`vector_env_steps_per_s` with details (batches and games per second, counts)."""
    from .vector import CarcassonneVectorEnv

    venv = CarcassonneVectorEnv(num_envs, seed=seed, **options)
    rng = np.random.default_rng(seed)
    obs, _ = venv.reset()
    steps = batches = games = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        masks = obs["action_mask"]
        # one uniform legal action per row, vectorised: argmax of random keys over the mask
        keys = rng.random(masks.shape) * masks
        actions = keys.argmax(axis=1)
        obs, _, dones, _ = venv.step(actions)
        steps += num_envs
        batches += 1
        games += int(dones.sum())
    dt = time.perf_counter() - t0
    return {
        "steps_per_s": steps / dt,
        "batches_per_s": batches / dt,
        "games_per_s": games / dt,
        "num_envs": num_envs,
        "steps": steps,
        "seconds": dt,
    }


__all__ = ["env_benchmark", "env_steps_per_s", "vector_env_benchmark", "vector_env_steps_per_s"]
