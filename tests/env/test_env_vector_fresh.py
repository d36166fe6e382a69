"""Every array the batched vector env hands out is its own.

On the compiled engine the calling thread allocates each step's output arrays (the step's and the vector
env's own: :meth:`carc_env.fast.engine.FastBatch.take_extra`), on one thread or several; each step must
hand out fresh arrays that no later step writes into, with the same values as the Python engine's."""

from __future__ import annotations

import numpy as np
import pytest

from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.fast import available

CASES = [("python", None)] + ([("numba", 1), ("numba", 2)] if available() else [])


def _arrays(out) -> list[np.ndarray]:
    obs, rewards, terms, truncs, infos = out
    return [*obs.values(), rewards, terms, truncs, *infos.values()]


@pytest.mark.parametrize(("engine", "threads"), CASES)
def test_each_step_hands_out_arrays_no_later_step_writes(engine, threads):
    env = CarcassonneVectorEnv(4, seed=9, engine=engine, threads=threads)
    env.reset()
    rng = np.random.default_rng(0)
    held = []
    prev: list[np.ndarray] = []
    ended = 0
    for t in range(220):
        out = env.step(env.sample_legal_actions(rng))
        ended += int(out[2].sum())
        arrays = _arrays(out)
        assert not any(np.shares_memory(a, b) for a in arrays for b in prev), t
        prev = arrays
        if t % 20 == 0:
            held.append((arrays, [a.copy() for a in arrays]))
        if t == 110:
            env.reset()  # a reset between steps: the next step allocates after its kernel
    assert ended  # games ended and restarted in the steps (the infos of finished games included)
    for arrays, copies in held:  # what a caller kept is unchanged by every later step
        assert all(np.array_equal(a, c) for a, c in zip(arrays, copies, strict=True))
    env.close()


@pytest.mark.skipif(not available(), reason="numba is not available")
def test_the_compiled_steps_outputs_equal_the_python_engines():
    envs = [CarcassonneVectorEnv(3, seed=4, engine=e, threads=t) for e, t in (("python", None), ("numba", 2))]
    outs = [e.reset() for e in envs]
    rng = np.random.default_rng(1)
    for _ in range(150):
        actions = envs[0].sample_legal_actions(rng)
        outs = [e.step(actions) for e in envs]
        a, b = (_arrays(o) for o in outs)
        assert sorted(outs[0][4]) == sorted(outs[1][4])
        assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    for e in envs:
        e.close()
