"""Uniformly random legal actions from action masks, with numpy: the random masked policy of the
benchmark's loops and the Python engine's :meth:`CarcassonneVectorEnv.sample_legal_actions
<carc_env.env.vector.CarcassonneVectorEnv.sample_legal_actions>`.

* :func:`nth_enabled`: row ``i``'s ``floor(u_i k_i)``-th enabled entry (``k_i`` of them), -1 where a row
  enables nothing;
* :func:`random_legal_actions`: the same with ``u = rng.random(N)``, one draw per row (every row enables
  at least one entry);
* ``_nonzero``: the enabled entries of a flat mask (the AEC loops' policy).

The compiled engine's vector env picks the same entries from the same draws with compiled code on its
threads (:func:`carc_env.fast.vector_kernels.sample_chunks`); the tests compare the two.
"""

from __future__ import annotations

import numpy as np


def _nonzero(mask: np.ndarray) -> np.ndarray:
    """Indices of the enabled entries of a flat 0/1 mask (a bool view of an int8 mask: 3x faster than
    ``np.flatnonzero`` on int8, which matters next to a step of a few microseconds).  A large mask (a
    batch's, about one entry in a hundred enabled) is scanned eight bytes at a time: the nonzero words
    first, then the bytes of those words only (2-3x faster again; the same indices in the same order)."""
    if mask.dtype.itemsize == 1 and mask.dtype.kind in "iub" and mask.flags.c_contiguous:
        flat = mask.reshape(-1).view(np.uint8)
        if flat.size >= 4096 and not flat.size % 8:
            words = flat.view(np.uint64)
            if words.flags.aligned:  # (its address, read without building a ctypes object)
                hit = np.flatnonzero(words != 0)
                pos = np.flatnonzero(words[hit].view(np.uint8) != 0)  # byte j of word w is entry 8 w + j
                return hit[pos >> 3] * 8 + (pos & 7)
        return np.flatnonzero(flat.view(np.bool_))
    return np.flatnonzero(mask)


def nth_enabled(masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row ``i``'s ``floor(u_i k_i)``-th enabled entry of ``masks`` (N, A) (``k_i`` of them, ``0 <= u_i <
    1``), int64 (N,); -1 for a row that enables nothing."""
    flat = _nonzero(masks)
    N, A = masks.shape
    bounds = np.searchsorted(flat, np.arange(0, (N + 1) * A, A))  # each row's run of the sorted indices
    counts = bounds[1:] - bounds[:-1]
    pick = bounds[:-1] + (u * counts).astype(np.int64)
    if not flat.size:
        return np.full(N, -1, dtype=np.int64)
    picked = flat[np.minimum(pick, flat.size - 1)] - np.arange(0, N * A, A)
    return picked if counts.all() else np.where(counts > 0, picked, -1)


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random enabled index per row of ``masks`` (every row has at least one): row ``i``
    takes its ``floor(u_i k_i)``-th enabled entry (``k_i`` of them, ``u_i`` from ``rng.random``)."""
    return nth_enabled(masks, rng.random(len(masks)))


__all__ = ["nth_enabled", "random_legal_actions"]
