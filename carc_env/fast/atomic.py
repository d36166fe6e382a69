"""An atomic fetch-and-add for the compiled engine's threads: :func:`fetch_add`.

Contract
--------
``fetch_add(counter, i, n)`` adds ``n`` to ``counter[i]`` (an int64 array) atomically and returns the
value before the addition; compiled code only (a Numba intrinsic: one ``atomicrmw add`` instruction).
Several threads running one kernel take chunks of games from one counter with it, without going back
to Python (and its lock) between chunks: :func:`carc_env.fast.kernels.step_chunks`.  Without Numba it is
a plain function (the declarations stay importable; the engine cannot run then).
"""

from __future__ import annotations

from typing import Any


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


__all__ = ["fetch_add"]
