"""The compiled sampler of random legal actions (:func:`carc_env.fast.vector_kernels.sample_chunks`,
:meth:`FastBatch.sample_rows <carc_env.fast.engine.FastBatch.sample_rows>`) picks exactly numpy's
entries (:func:`carc_env.env.sampling.nth_enabled`) on one thread and on several.

The masks cover what the compiled scan distinguishes: rows whose start is or is not on an 8-byte word,
rows shorter than a word, enabled entries in the bytes before and after a row's whole words and in the
last word of a block, a mask that starts mid-word (read byte by byte), bool and non-contiguous masks,
rows that enable nothing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from carc_env.env.options import EnvOptions  # noqa: E402
from carc_env.env.sampling import nth_enabled  # noqa: E402
from carc_env.fast.engine import FastBatch  # noqa: E402
from carc_env.fast.vector_kernels import BLOCK  # noqa: E402

SHAPES = [(64, 12428, 0.003), (64, 2925, 0.01), (7, 100, 1.0), (5, 3, 0.5), (9, 1, 0.3), (33, 8 * BLOCK + 13, 0.002)]


def _masks(rng: np.random.Generator, n: int, a: int, density: float) -> np.ndarray:
    m = (rng.random((n, a)) < density).astype(np.int8)
    m[::4] = 0
    m[1::4, 0] = 1  # the first entry of a row (a row starting mid-word: its bytes before the words)
    m[2::4, -1] = 1  # the last
    if a > 8 * BLOCK:
        m[3::4, 8 * BLOCK - 1] = 1  # the last byte of the first block (rows starting on a word)
    return m


@pytest.fixture(scope="module", params=[1, 2, 3])
def batch(request):
    fb = FastBatch(EnvOptions.from_kwargs(num_players=2), 4, threads=request.param)
    yield fb
    fb.close()


@pytest.mark.parametrize(("n", "a", "density"), SHAPES)
def test_sample_rows_picks_numpys_entries(batch, n, a, density):
    rng = np.random.default_rng(n * a)
    m = _masks(rng, n, a, density)
    shifted = np.vstack([m[:1], m])[1:]  # the same rows in a buffer that starts a row later (mid-word)
    variants = [m, m.astype(bool), shifted, np.asfortranarray(m), m.copy()]
    variants[-1].flags.writeable = False  # the vector env hands its masks out read-only
    for t in range(25):
        u = rng.random(n) if t > 1 else np.full(n, [0.0, 1 - 2**-53][t])
        want = nth_enabled(m, u)
        if t % 2:
            u.flags.writeable = False  # (another overload of the compiled scan than a writable u)
        for v in variants:
            got, empty = batch.sample_rows(v, u)
            assert got.dtype == np.int64 and np.array_equal(got, want), (t, v.dtype, v.flags.c_contiguous)
            assert empty == int((want < 0).sum()) == int((~m.any(axis=1)).sum())
