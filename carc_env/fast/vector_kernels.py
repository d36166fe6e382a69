"""Compiled helpers of the batched vector env's step on the compiled engine (:mod:`carc_env.env.vector`).

A batched step of 64 games is one kernel call of a few hundred microseconds that runs on every thread;
what ``step()`` does around it in Python (checking the actions against the published masks, the rewards,
infos and bookkeeping) runs on one core whatever the threads, so it bounds what a second thread can add
(Amdahl).  Done with numpy it was about thirty small array operations per step; here it is two compiled
calls that release the GIL:

* :func:`first_illegal`: the first game whose action is outside the space or not enabled in its mask
  (-1 if none), the whole batch checked before any game moves;
* :func:`post_step`: from the engine's outputs, the acting seats' rewards, the seats' rewards as
  float32, the next acting seats (written into the env's ``seats`` in place, and a copy for the infos),
  the winners of the games that ended, the episode counters, the placements outside the window, written
  into fresh arrays that the calling thread allocated (:meth:`carc_env.fast.engine.FastBatch.take_extra`;
  allocated by a helper thread they cost each step page faults: :meth:`carc_env.fast.engine.FastBatch._ahead`).

and the handshake of a threaded batched step (:class:`carc_env.fast.engine.FastBatch` with ``threads > 1``):
the helper threads are started once and wait for the next step in compiled code that releases the GIL,
watching a control array (``ctl``, int64) with atomic loads, instead of being woken by the operating
system twice per step (a thread pool's job and its result: each wake-up costs tens of microseconds on a
virtual machine, and each return to Python contends for the GIL):

* :func:`publish`: the calling thread opens step ``epoch`` (``ctl[C_EPOCH]``; its core in ``ctl[C_CPU]``)
  and learns how many helpers had stopped watching and sleep (they need a notification);
* :func:`wait_go`: a helper reports the step it joined done (``ctl[C_ACTIVE] -= 1``, its illegal actions
  added to ``ctl[C_BAD]``) and watches for the next step, spinning on the processor's hint; it *joins* a
  step once the caller has opened it *and* entered the kernel (it has taken a chunk: ``ctl[C_COUNTER]
  != 0``, so the GIL is free when the helper goes back to Python for the step's arguments), unless the
  caller has closed it already (``ctl[C_CLOSED]``): ``ctl[C_ACTIVE] += 1``, then the check, both
  sequentially consistent.  The first helper to join claims the step's ``prepare`` (``ctl[C_CLAIM]``).
  After ``spin_ns`` nanoseconds without a step it sleeps on a condition, marked in ``ctl[C_SLEEP]``, and
  :func:`publish` tells the caller to wake it; a helper on the caller's core yields that core between
  its looks (:func:`cede`);
* :func:`finish`: the calling thread, its chunks done (every chunk is then taken), closes the step and
  waits only for the helpers that joined it (``ctl[C_ACTIVE] == 0``; yielding between rounds of looks,
  in case one shares its core); it runs the step's ``prepare`` itself if no helper claimed it.  A helper
  that the operating system had taken off its core when the step opened (another job's turn) so never
  holds a step up: it finds the step closed when it is back, and waits for the next.

and the compiled random masked policy a loop calls between steps (the vector env's
``sample_legal_actions``), which scans the masks on the same threads:

* :func:`sample_chunks`: row ``i``'s ``floor(u_i k_i)``-th enabled entry (``k_i`` of them) for every row
  of a batch's masks, in chunks of rows taken as a step's games are (each thread its own games' rows
  first: :func:`carc_env.fast.atomic.take_chunk`)
  (:func:`sample_row`: a row's whole 8-byte words counted in blocks by a loop the compiler vectorises,
  then the block that holds the pick scanned), the entries numpy's
  :func:`carc_env.env.sampling.nth_enabled` picks.

Imported only where the compiled engine runs (it needs Numba); compiled once and cached on disk like the
engine's entry points.
"""

from __future__ import annotations

import platform
import sys

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from .atomic import take_chunk

C_COUNTER, C_EPOCH, C_ACTIVE, C_SLEEP, C_BAD, C_CLOSED, C_CLAIM, C_CPU, C_LEN = 0, 1, 2, 3, 4, 5, 6, 7, 8
"""Slots of the control array of a threaded step (``ctl``, int64, ``STRIDE`` slots per thread): the
calling thread's chunk counter of ``step_chunks`` (``ctl[0]``; helper ``t``'s is ``ctl[STRIDE * t]``,
:func:`carc_env.fast.atomic.take_chunk`), the step's epoch, the helpers that joined the step and
have not finished it, the helpers asleep, the illegal actions the helpers met, the last step the caller
closed, the claims on the step's ``prepare`` (the first claim runs it), the core the calling thread ran on
when it last opened or finished a step."""


def _slot(context, builder, signature, args):  # pragma: no cover - compiled
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])


@intrinsic
def atomic_load(typingctx, arr, i):  # pragma: no cover - compiled
    """``arr[i]`` (int64) read atomically (sequentially consistent): a loop on it is never hoisted."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        ptr = _slot(context, builder, signature, args)
        return builder.load_atomic(ptr, "seq_cst", 8)

    return types.int64(arr, types.intp), codegen


@intrinsic
def atomic_add(typingctx, arr, i, n):  # pragma: no cover - compiled
    """``arr[i] += n`` atomically (sequentially consistent); the value before."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        ptr = _slot(context, builder, signature, args)
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

    return types.int64(arr, types.intp, types.int64), codegen


if sys.platform.startswith(("linux", "darwin", "freebsd")):
    _sched_yield = types.ExternalFunction("sched_yield", types.int32())  # the C library's
    # clock_gettime(clock, struct timespec *): the pointer passed as an integer (the same register)
    _clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.intp))
    _MONOTONIC = 1 if sys.platform.startswith("linux") else 6 if sys.platform == "darwin" else 4

    @njit(nogil=True, inline="always")
    def cede() -> None:  # pragma: no cover - compiled
        """Let another thread that waits for this core run (``sched_yield``; at once if none waits): a
        thread of a step that waits for another must not keep it off a core they share (a machine with
        more threads than free cores)."""
        _sched_yield()

    @njit(nogil=True, inline="always")
    def now_ns(ts: np.ndarray) -> int:  # pragma: no cover - compiled
        """The monotonic clock in nanoseconds (``ts``: an int64 scratch of 2)."""
        _clock_gettime(_MONOTONIC, ts.ctypes.data)
        return ts[0] * 1_000_000_000 + ts[1]
else:  # pragma: no cover - no sched_yield, no clock: the watch counts its loads

    @njit(nogil=True, inline="always")
    def cede() -> None:
        pass

    @njit(nogil=True, inline="always")
    def now_ns(ts: np.ndarray) -> int:
        ts[0] += 25 * WATCH  # (about 25 ns a load and a pause)
        return ts[0]


if sys.platform.startswith("linux"):
    _sched_getcpu = types.ExternalFunction("sched_getcpu", types.int32())

    @njit(nogil=True, inline="always")
    def core() -> int:  # pragma: no cover - compiled
        """The core this thread runs on now (``sched_getcpu``)."""
        return np.int64(_sched_getcpu())
else:  # pragma: no cover - unknown: a helper never finds itself on the caller's core

    @njit(nogil=True, inline="always")
    def core() -> int:
        return -1


_HINT = {"x86_64": ("llvm.x86.sse2.pause", ()), "AMD64": ("llvm.x86.sse2.pause", ()),
         "aarch64": ("llvm.aarch64.hint", (1,)), "arm64": ("llvm.aarch64.hint", (1,))}.get(platform.machine())  # fmt: skip
"""The processor's spin-wait hint (x86 ``pause``, Arm ``yield``) as an LLVM intrinsic, or None."""


@intrinsic
def relax(typingctx):  # pragma: no cover - compiled
    """A spin-wait hint to the processor (not to the operating system: the core stays this thread's)."""

    def codegen(context, builder, signature, args):
        if _HINT is not None:
            name, consts = _HINT
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i32] * len(consts))
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            builder.call(fn, [ir.Constant(i32, c) for c in consts])
        return context.get_dummy_value()

    return types.none(), codegen


WATCH = 64
"""Loads of the control array between two looks at the clock (a helper's watch) or two :func:`cede` calls
(the caller's wait)."""


@njit(cache=True, nogil=True)
def publish(ctl: np.ndarray, epoch: int) -> int:  # pragma: no cover - compiled
    """Open step ``epoch`` (the chunk counter is already 0); the number of helpers asleep (to notify).
    Both are sequentially consistent: a helper that goes to sleep either sees the epoch or is counted."""
    atomic_add(ctl, C_CPU, core() - atomic_load(ctl, C_CPU))  # (only the calling thread writes it)
    atomic_add(ctl, C_EPOCH, epoch - atomic_load(ctl, C_EPOCH))
    return atomic_load(ctl, C_SLEEP)


@njit(cache=True, nogil=True)
def wait_go(ctl: np.ndarray, done: int, bad: int, spin_ns: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """Report the step this helper joined finished with ``bad`` illegal actions (``bad < 0``: it joined
    none), then watch for the next step after ``done`` (see the module docstring) and join it.  Returns
    ``(status, epoch)``: status 1 (joined step ``epoch`` and claimed its ``prepare``), 0 (joined), or -1
    (no step within ``spin_ns`` nanoseconds of watching: now counted asleep; ``epoch``: the last step it
    saw, joined or missed).

    The watch spins on the processor's hint (:func:`relax`), keeping its core, except where the helper
    finds itself on the core the calling thread last ran on: then it yields that core to the operating
    system after every :data:`WATCH` loads (``sched_yield``, :func:`cede`), so that its watch does not
    keep the caller off it (the machine's other core is busy with another job)."""
    if bad > 0:
        atomic_add(ctl, C_BAD, bad)
    if bad >= 0:
        atomic_add(ctl, C_ACTIVE, -1)  # (after its results: the caller's load of 0 sees them)
    ts = np.zeros(2, np.int64)
    while True:
        end = now_ns(ts) + spin_ns
        while True:
            for _ in range(WATCH):
                e = atomic_load(ctl, C_EPOCH)
                if e != done and atomic_load(ctl, C_COUNTER) != 0:
                    atomic_add(ctl, C_ACTIVE, 1)
                    if atomic_load(ctl, C_CLOSED) < e:  # (still open: the caller's close will count this join)
                        return (1 if atomic_add(ctl, C_CLAIM, 1) == 0 else 0), e
                    atomic_add(ctl, C_ACTIVE, -1)  # missed: the caller closed it (it took every chunk)
                    done = e
                relax()
            if now_ns(ts) >= end:
                break
            if core() == atomic_load(ctl, C_CPU):  # the caller's core: let the caller have it
                cede()
        atomic_add(ctl, C_SLEEP, 1)
        if atomic_load(ctl, C_EPOCH) == done:
            return -1, done
        atomic_add(ctl, C_SLEEP, -1)  # opened meanwhile: watch again rather than sleep


@njit(cache=True, nogil=True)
def awake(ctl: np.ndarray) -> int:  # pragma: no cover - compiled
    """A helper that slept is back (``ctl[C_SLEEP] -= 1``)."""
    return atomic_add(ctl, C_SLEEP, -1)


@njit(cache=True, nogil=True)
def finish(ctl: np.ndarray, epoch: int, spins: int) -> int:  # pragma: no cover - compiled
    """The calling thread, its chunks done (so every chunk is taken): close step ``epoch`` (a helper that
    had not joined it now never will) and wait for the helpers that joined it.  Returns 1 (all done, and
    the caller claimed the step's ``prepare``: no helper did), 0 (all done), or -1 if some helper is still
    at work after ``spins`` rounds of :data:`WATCH` loads and a :func:`cede` (the caller asks again)."""
    atomic_add(ctl, C_CLOSED, epoch - atomic_load(ctl, C_CLOSED))
    atomic_add(ctl, C_CPU, core() - atomic_load(ctl, C_CPU))
    for _ in range(spins):
        for _ in range(WATCH):
            if atomic_load(ctl, C_ACTIVE) == 0:
                return 1 if atomic_add(ctl, C_CLAIM, 1) == 0 else 0
        cede()
    return -1


@njit(cache=True, nogil=True)
def first_illegal(mask: np.ndarray, actions: np.ndarray) -> int:  # pragma: no cover - compiled
    """The first row ``i`` whose ``actions[i]`` is outside ``0..A-1`` or not enabled in ``mask[i]``; -1 if
    every action is legal."""
    n = mask.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= n or mask[i, a] == 0:
            return i
    return -1


@njit(cache=True, nogil=True)
def post_step(
    rewards, dones, final, seats, acting, episodes, gi, outside_col, own, seat_rewards, nxt, winners, outside
):  # pragma: no cover - compiled
    """What ``step()`` hands out after a batched step, in one pass over the games, written into fresh arrays
    the calling thread allocated (:meth:`carc_env.fast.engine.FastBatch.take_extra`).

    ``rewards`` float64 (N, P), ``dones`` bool (N,), ``final`` int64 (N, P), ``seats`` int64 (N,): the
    engine's outputs; ``acting`` int64 (N,): the seats that chose this step's actions, overwritten in
    place by the next acting seats (the env's ``seats``); ``episodes`` int64 (N,): +1 per ended game;
    ``gi[:, outside_col]``: the legal placements outside the window.  Writes the rewards of the acting
    seats ``own`` float32 (N,), the seat rewards ``seat_rewards`` float32 (N, P), the next seats ``nxt``
    int64 (N,) (a copy), the winners of the games that ended ``winners`` bool (N, P) (zeroed by the
    caller: only those rows are written), the placements outside ``outside`` int64 (N,).  Returns
    ``(games ended, games with placements outside)``."""
    N, P = rewards.shape
    ended = 0
    clipped = 0
    for i in range(N):
        for p in range(P):
            seat_rewards[i, p] = np.float32(rewards[i, p])
        own[i] = seat_rewards[i, acting[i]]
        nxt[i] = seats[i]
        acting[i] = seats[i]
        if dones[i]:
            ended += 1
            episodes[i] += 1
            best = final[i, 0]
            for p in range(1, P):
                if final[i, p] > best:
                    best = final[i, p]
            for p in range(P):
                winners[i, p] = final[i, p] == best
        o = gi[i, outside_col]
        outside[i] = o
        if o:
            clipped += 1
    return ended, clipped


BLOCK = 128
"""Words (of 8 mask entries) counted at once by :func:`sample_row`: a loop the compiler vectorises (a
slice, so that its index starts at 0); at most 255, so that no byte of the word sum carries."""

_LO8 = np.uint64(0x00FF00FF00FF00FF)
_ONES16 = np.uint64(0x0001000100010001)
_ONES8 = np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True, inline="always")
def _block_count(blk) -> int:  # pragma: no cover - compiled
    """Enabled entries in a slice of at most :data:`BLOCK` words of 0/1 bytes: the words added (each byte
    lane counts its entries), the lanes added pairwise into 16-bit lanes, those summed."""
    acc = np.uint64(0)
    for t in range(blk.shape[0]):
        acc += blk[t]
    pairs = (acc & _LO8) + ((acc >> np.uint64(8)) & _LO8)
    return np.int64((pairs * _ONES16) >> np.uint64(48))


@njit(cache=True, nogil=True, inline="always")
def _nth_byte(seg, pick) -> int:  # pragma: no cover - compiled
    """The index in ``seg`` (bytes) of its ``pick``-th (from 0) nonzero entry, or ``-1 - (entries seen)``."""
    for j in range(seg.shape[0]):
        if seg[j] != 0:
            if pick == 0:
                return j
            pick -= 1
    return -1 - pick


@njit(cache=True, nogil=True, inline="always")
def sample_row(flat, words, s, A, u, scratch) -> int:  # pragma: no cover - compiled
    """The ``floor(u k)``-th enabled entry of the row ``flat[s : s + A]`` of 0/1 bytes (``k`` of them,
    ``0 <= u < 1``), as an index in the row; -1 if none.  ``words``: ``flat``'s leading whole words
    (uint64, aligned), which the row's aligned middle is read through; ``scratch``: int64, at least
    ``A // (8 * BLOCK) + 1`` entries.

    The middle's blocks of :data:`BLOCK` words are counted once (their counts kept in ``scratch``), the
    few bytes before and after it one by one; then the block that holds the pick is scanned word by word
    (a word's entries: its bytes summed by a multiplication) and that word byte by byte."""
    e = s + A
    ws = (s + 7) // 8
    we = min(e // 8, words.shape[0])
    if we <= ws:  # no whole word in the row: bytes only
        ws = we = e // 8 + 1
        mid0 = mid1 = e
    else:
        mid0, mid1 = 8 * ws, 8 * we
    head = flat[s:mid0]
    tail = flat[mid1:e]
    k = 0
    for j in range(head.shape[0]):
        k += head[j] != 0
    n_head = k
    nb = 0
    for j in range(ws, we, BLOCK):
        c = _block_count(words[j : min(j + BLOCK, we)])
        scratch[nb] = c
        nb += 1
        k += c
    n_mid = k - n_head
    for j in range(tail.shape[0]):
        k += tail[j] != 0
    if k == 0:
        return -1
    pick = np.int64(u * k)  # (truncation: floor for u, k >= 0, as numpy's astype(int64))
    if pick < n_head:
        return _nth_byte(head, pick)
    pick -= n_head
    if pick >= n_mid:
        return mid1 - s + _nth_byte(tail, pick - n_mid)
    for b in range(nb):
        c = scratch[b]
        if pick < c:  # the block: its words in turn (most are 0), then the word that holds the pick
            blk = words[ws + b * BLOCK : min(ws + (b + 1) * BLOCK, we)]
            for t in range(blk.shape[0]):
                w = blk[t]
                if w:
                    c = np.int64((w * _ONES8) >> np.uint64(56))
                    if pick < c:
                        t8 = 8 * (ws + b * BLOCK + t)
                        return t8 - s + _nth_byte(flat[t8 : t8 + 8], pick)
                    pick -= c
        pick -= c
    return -1  # (not reached: the counts add up to k)


@njit(cache=True, nogil=True)
def sample_chunks(ctl, chunk, me, n, mask, u, out):  # pragma: no cover - compiled
    """:func:`sample_row` of every row ``i`` of ``mask`` (N, A) (C-contiguous, of one-byte entries, each 0
    or 1) with ``u[i]``, into ``out[i]``, in chunks of ``chunk`` rows taken with
    :func:`~carc_env.fast.atomic.take_chunk` (thread ``me`` of ``n``: the rows of its own games first, the
    games it steps, so their masks are in its cache) until every row is done: each thread of a threaded
    sample makes one call (as :func:`carc_env.fast.kernels.step_chunks` for a step).  Returns the number of
    rows this call found without an enabled entry (``out`` -1 there)."""
    N, A = mask.shape
    flat = mask.reshape(mask.size).view(np.uint8)
    whole = flat.size // 8 * 8 if flat.ctypes.data % 8 == 0 else 0  # (a view that starts mid-word: bytes)
    words = flat[:whole].view(np.uint64)
    scratch = np.empty(A // (8 * BLOCK) + 2, np.int64)
    empty = 0
    k = 0
    while True:
        lo, hi, k = take_chunk(ctl, me, n, N, chunk, k)
        if lo >= hi:
            return empty
        for i in range(lo, hi):
            a = sample_row(flat, words, i * A, A, u[i], scratch)
            out[i] = a
            if a < 0:
                empty += 1


__all__ = ["BLOCK", "C_ACTIVE", "C_BAD", "C_CLAIM", "C_CLOSED", "C_COUNTER", "C_CPU", "C_EPOCH", "C_LEN", "C_SLEEP", "awake",
           "finish", "first_illegal", "post_step", "publish", "relax", "sample_chunks", "sample_row", "wait_go"]  # fmt: skip
