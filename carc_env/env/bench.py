"""Throughput measurements of the environments (called by ``scripts/bench.py``).

Every function plays uniformly random legal actions (chosen from the action
mask with a seeded generator) with full observations built at every step, and
returns a dict with ``steps_per_s`` and details.  Nothing here is asserted by
tests: speed is measured, not tested.

* :func:`env_benchmark`: through ``carc_env.env()`` (all PettingZoo classic
  wrappers), the usual ``agent_iter`` / ``last`` / ``step`` loop; one AEC step
  is one ``step()`` call (the dead steps at the end of a game included);
  ``engine`` picks the engine (``"auto"``, ``"python"``, ``"numba"``);
* :func:`vector_env_benchmark`: through :class:`CarcassonneVectorEnv`
  (self-play); one step is one decision in one game, so a batched
  ``step()`` counts ``num_envs`` steps; ``threads`` sets the compiled
  engine's threads;
* :func:`vector_step_breakdown`: where the calling thread's CPU time goes in the
  compiled vector env's batched step on one thread (the kernel, the rest of
  ``step()`` in Python, the random policy): the Python part runs on one core
  whatever ``threads`` is, so it bounds what a second thread can add;
* :func:`pettingzoo_benchmark`: the same AEC loop through a PettingZoo
  classic env (``connect_four_v3``, ``go_v5`` 9x9, ``chess_v6``), the peers;
* :func:`random_legal_actions` (from :mod:`carc_env.env.sampling`): one uniformly random legal action
  per mask row.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .sampling import _nonzero, random_legal_actions

PEERS = {
    "connect_four": ("pettingzoo.classic", "connect_four_v3", {}),
    "go_9x9": ("pettingzoo.classic", "go_v5", {"board_size": 9}),
    "chess": ("pettingzoo.classic", "chess_v6", {}),
}
"""PettingZoo classic envs measured side by side: name -> (module, env module, kwargs)."""


def _aec_loop(e: Any, seconds: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    steps = games = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    deadline = t0 + seconds
    while True:
        e.reset(seed=seed + games)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                action = None
            else:
                legal = _nonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            e.step(action)
            steps += 1
            del agent
        games += 1
        if time.perf_counter() >= deadline:
            break
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {
        "steps_per_s": steps / dt,
        "games_per_s": games / dt,
        "steps": steps,
        "games": games,
        "seconds": dt,
        "cpu_seconds": cpu,
    }


def env_steps_per_s(seconds: float = 5.0, seed: int = 0, **options: Any) -> float:
    """AEC steps per second through ``env()`` with random legal play."""
    return env_benchmark(seconds, seed, **options)["steps_per_s"]


def vector_env_steps_per_s(num_envs: int = 16, seconds: float = 5.0, seed: int = 0, **options: Any) -> float:
    """Decisions per second through the vector env (self-play, random legal play)."""
    return vector_env_benchmark(num_envs, seconds, seed, **options)["steps_per_s"]


def env_benchmark(seconds: float = 5.0, seed: int = 0, **options: Any) -> dict[str, Any]:
    """:func:`env_steps_per_s` with details (games per second, counts, duration, engine)."""
    from .aec import env as make_env

    e = make_env(**options)
    out: dict[str, Any] = _aec_loop(e, seconds, seed)
    out["engine"] = e.unwrapped.engine
    return out


def vector_env_benchmark(
    num_envs: int = 16, seconds: float = 5.0, seed: int = 0, threads: int | None = None, **options: Any
) -> dict[str, Any]:
    """:func:`vector_env_steps_per_s` with details (batches and games per second, counts, engine, threads).
    Steps until ``seconds`` have passed, and at least one batched step (as the AEC loop plays at least
    one game): a window in which the process got no core still times a step, never reads as 0 steps."""
    from .vector import CarcassonneVectorEnv

    venv = CarcassonneVectorEnv(num_envs, seed=seed, threads=threads, **options)
    rng = np.random.default_rng(seed)
    obs, _ = venv.reset()
    steps = batches = games = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    deadline = t0 + seconds
    while True:  # at least one batched step, however short the window: a rate over no step would read 0
        obs, _, dones, _, _ = venv.step(venv.sample_legal_actions(rng))
        steps += num_envs
        batches += 1
        games += len(dones.nonzero()[0])  # (ndarray.sum goes through numpy's Python wrappers)
        if time.perf_counter() >= deadline:
            break
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    venv.close()
    return {
        "steps_per_s": steps / dt,
        "batches_per_s": batches / dt,
        "games_per_s": games / dt,
        "num_envs": num_envs,
        "steps": steps,
        "seconds": dt,
        "cpu_seconds": cpu,
        "engine": venv.engine,
        "threads": venv.threads,
    }


def vector_step_breakdown(num_envs: int = 64, seconds: float = 5.0, seed: int = 0, **options: Any) -> dict[str, Any]:
    """CPU time per batched step of the compiled vector env on one thread, in the benchmark's loop
    (``env.step(env.sample_legal_actions(rng))``): ``kernel_us`` (the compiled step), ``prepare_us`` (the
    next draw orders of the games the last step restarted: Python, which a threaded step runs in a helper
    thread while the other threads step games), ``sample_us`` (the policy's compiled scan of the masks,
    which a threaded env runs on its threads), ``policy_us`` (the rest of the policy: its draws and call),
    ``python_us`` (the rest of ``step()``); ``serial_share``, the part that runs on one core whatever the
    threads (python and policy), with ``amdahl_2_threads``, the most two threads can give then (thread
    CPU time, so other jobs on the machine matter less)."""
    from .vector import CarcassonneVectorEnv

    venv = CarcassonneVectorEnv(num_envs, seed=seed, threads=1, engine="numba", **options)
    batch: Any = venv._batch
    rng = np.random.default_rng(seed)
    venv.reset()
    venv.step(venv.sample_legal_actions(rng))  # the step's and the sampler's kernel entries are found
    kernel = batch._entries["step_chunks"]
    prepare = batch._ahead
    sample = batch._sample
    spent = [0, 0, 0]

    def timed(*args: Any) -> int:
        t = time.thread_time_ns()
        try:
            return kernel(*args)
        finally:
            spent[0] += time.thread_time_ns() - t

    def timed_prepare(games: list[int]) -> int:
        t = time.thread_time_ns()
        try:
            return prepare(games)
        finally:
            spent[1] += time.thread_time_ns() - t

    def timed_sample(*args: Any) -> int:
        t = time.thread_time_ns()
        try:
            return sample(*args)
        finally:
            spent[2] += time.thread_time_ns() - t

    policy = batches = 0
    batch._entries["step_chunks"] = timed
    batch._ahead = timed_prepare
    batch._sample = timed_sample
    try:
        t0 = time.thread_time_ns()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            t = time.thread_time_ns()
            actions = venv.sample_legal_actions(rng)
            policy += time.thread_time_ns() - t
            venv.step(actions)
            batches += 1
        total = time.thread_time_ns() - t0
    finally:
        venv.close()
    parallel = spent[0] + spent[1] + spent[2]
    serial = (total - parallel) / total
    return {
        "num_envs": num_envs,
        "batches": batches,
        "kernel_us": round(spent[0] / batches / 1e3, 1),
        "prepare_us": round(spent[1] / batches / 1e3, 1),
        "sample_us": round(spent[2] / batches / 1e3, 1),
        "policy_us": round((policy - spent[2]) / batches / 1e3, 1),
        "python_us": round((total - parallel - policy + spent[2]) / batches / 1e3, 1),
        "serial_share": round(serial, 3),
        "amdahl_2_threads": round(1 / (serial + (1 - serial) / 2), 2),
    }


def pettingzoo_benchmark(name: str, seconds: float = 5.0, seed: int = 0) -> dict[str, Any]:
    """The AEC loop through a PettingZoo classic peer (:data:`PEERS`); ``{"error": ...}`` if it cannot load."""
    import importlib

    module, env_name, kwargs = PEERS[name]
    try:
        mod = importlib.import_module(f"{module}.{env_name}")
        e = mod.env(**kwargs)
    except Exception as exc:  # noqa: BLE001 - an optional peer: report why, measure the rest
        return {"error": f'not installed ({type(exc).__name__}: {exc}); pip install -e ".[bench]"'}
    return _aec_loop(e, seconds, seed)


__all__ = [
    "PEERS", "env_benchmark", "env_steps_per_s", "pettingzoo_benchmark", "random_legal_actions",
    "vector_env_benchmark", "vector_env_steps_per_s", "vector_step_breakdown",
]  # fmt: skip
