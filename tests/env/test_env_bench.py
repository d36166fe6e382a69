"""The benchmark's random policy (:mod:`carc_env.env.bench`): uniform over exactly the enabled actions.

Speed is measured by ``scripts/bench.py``, never here; these tests check what the policy picks."""

from __future__ import annotations

import numpy as np
import pytest

from carc_env.env.bench import _nonzero, random_legal_actions, vector_env_benchmark


@pytest.mark.parametrize("shape", [(64, 2925), (7, 2925), (3, 10), (256, 17)])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.3, 1.0])
def test_nonzero_finds_exactly_the_enabled_entries_in_order(shape, density):
    rng = np.random.default_rng(5)
    mask = (rng.random(shape) < density).astype(np.int8)
    mask[0, -1] = 1  # an entry in the last byte of a word
    assert np.array_equal(_nonzero(mask), np.flatnonzero(mask))
    mask.flags.writeable = False  # the vector env hands out read-only masks
    assert np.array_equal(_nonzero(mask), np.flatnonzero(mask))
    assert np.array_equal(_nonzero(mask[1:]), np.flatnonzero(mask[1:]))  # a view that may start mid-word


def test_random_legal_actions_is_uniform_over_each_rows_enabled_actions():
    mask = np.zeros((2, 4096), dtype=np.int8)
    mask[0, [3, 700, 4095]] = 1
    mask[1, 2048] = 1
    rng = np.random.default_rng(0)
    picks = np.array([random_legal_actions(mask, rng) for _ in range(3000)])
    assert set(picks[:, 1].tolist()) == {2048}
    counts = np.bincount(picks[:, 0], minlength=4096)[[3, 700, 4095]]
    assert counts.sum() == 3000 and counts.min() > 900  # about 1,000 each


@pytest.mark.parametrize("engine,threads", [("python", None), ("numba", 1), ("numba", 2)])
def test_a_vector_window_too_short_for_a_step_still_times_one_batched_step(engine, threads):
    # a window over before the first step ends (as when the process gets no core in a short window):
    # one batched step is timed, never a rate over no step (which read 0 and made a 2 / 1 thread ratio 0)
    d = vector_env_benchmark(4, 1e-9, seed=3, threads=threads, engine=engine)
    assert d["steps"] == 4 and d["batches_per_s"] > 0 and d["steps_per_s"] == 4 / d["seconds"]
