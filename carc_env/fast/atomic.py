"""An atomic fetch-and-add for the compiled engine's threads, and the chunks they take with it.

Contract
--------
``fetch_add(counter, i, n)`` adds ``n`` to ``counter[i]`` (an int64 array) atomically and returns the
value before the addition; compiled code only (a Numba intrinsic: one ``atomicrmw add`` instruction).
Without Numba it is a plain function (the declarations stay importable; the engine cannot run then).

``take_chunk(counter, me, n, size, chunk, k) -> (lo, hi, k)``: the next chunk of rows ``[lo, hi)`` of
``size`` rows (a batch's games, or its masks' rows) for thread ``me`` of ``n`` threads running one kernel
call each (:func:`carc_env.fast.kernels.step_chunks`, :func:`carc_env.fast.vector_kernels.sample_chunks`;
no thread goes back to Python, and its lock, between chunks).  Thread ``t`` *owns* rows
``[t * size // n, (t + 1) * size // n)`` and takes chunks of ``chunk`` rows of them from its own counter,
``counter[STRIDE * t]`` (its own cache line); when its rows are taken it takes the other threads' rows
from their counters (``k`` is how many owners it has moved past; start at 0; ``lo == hi == size``: every
row is taken).  So while both threads keep up, a game is stepped by the same thread at every step and
its state and observation stay in that core's cache (on a host whose two cores share no cache, games
that change threads from step to step cost a third of the second thread: docs/benchmark.md, "Session
10"), and a thread the OS deschedules still leaves its rows to the others.
"""

from __future__ import annotations

from typing import Any

STRIDE = 16
"""int64 slots between two threads' counters of :func:`take_chunk` (128 bytes: never one cache line)."""


def _plain(counter: Any, i: int, n: int) -> int:
    old = int(counter[i])
    counter[i] = old + n
    return old


try:
    from numba.core import cgutils, types
    from numba.extending import intrinsic
except ImportError:  # pragma: no cover - numba missing: coverage reports why the engine cannot run
    fetch_add: Any = _plain
else:

    @intrinsic
    def fetch_add(typingctx: Any, counter: Any, i: Any, n: Any) -> Any:
        if not (isinstance(counter, types.Array) and counter.dtype == types.int64 and counter.ndim == 1):
            return None
        sig = types.int64(counter, types.intp, types.int64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
            return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

        return sig, codegen


def _take_chunk(counter: Any, me: int, n: int, size: int, chunk: int, k: int) -> tuple[int, int, int]:
    while k < n:
        t = me + k
        if t >= n:
            t -= n
        last = (t + 1) * size // n
        lo = t * size // n + fetch_add(counter, STRIDE * t, chunk)
        if lo < last:
            return lo, min(lo + chunk, last), k
        k += 1
    return size, size, k


try:
    from numba import njit
except ImportError:  # pragma: no cover - numba missing
    take_chunk: Any = _take_chunk
else:
    take_chunk = njit(cache=True, nogil=True)(_take_chunk)


__all__ = ["STRIDE", "fetch_add", "take_chunk"]
