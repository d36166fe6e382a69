"""The compiled engine's deal: ``numpy.random.default_rng(seed).permutation(n)``, compiled, for many seeds at once.

Contract
--------
A game's draw order starts as the reference's shuffle of the bag with the game's own generator
(``Game._shuffled_bag``: ``default_rng(seed)``, then ``rng.permutation(len(bag))``).  Building that
generator in Python costs more than a whole base game's compiled rules (``SeedSequence`` hashing and
the ``PCG64`` object: ~10 us a seed), so the engine's bulk paths (``FastBatch.play_random``) deal here
instead: :func:`shuffle` reproduces, for a vector of seeds,

* NumPy's ``SeedSequence(seed)`` (entropy = the seed's 32-bit words, pool of 4 words, ``mix_entropy``
  and ``generate_state(4, uint64)`` with NumPy's hash constants),
* ``PCG64``'s seeding from those words (``pcg64_set_seed``: state and increment as 128-bit integers,
  two LCG steps),
* ``Generator.permutation(n)``: ``shuffle(arange(n))``, a Fisher-Yates from the last position down, each
  index drawn by ``random_interval`` (mask-and-reject on 32-bit outputs, served half a 64-bit output at a
  time),

and writes each seed's shuffled bag and, when asked, the generator's words after the shuffle (the layout
of :func:`carc_env.fast.rng.generator_words`), bit for bit.  ``tests/fast/test_deal.py`` checks both
against NumPy.  Seeds are integers in ``[0, 2**63)`` (the engine's seeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rng import M32, MULT_HI, MULT_LO, S32, S58, S63, S64, U1
from .rng import _mul64 as _mul64_kernel

S16 = np.uint64(16)
# numpy/random/bit_generator.pyx: SeedSequence's hash constants
INIT_A = np.uint64(0x43B0D7E5)
MULT_A = np.uint64(0x931E8875)
INIT_B = np.uint64(0x8B51F9DD)
MULT_B = np.uint64(0x58F38DED)
MIX_MULT_L = np.uint64(0xCA01F9DD)
MIX_MULT_R = np.uint64(0x4973F715)

_compiled: Any = None


# The 128-bit product is the generator's (fast/rng.py), re-jitted here as a plain function of this module (its
# on-disk cache is keyed on this file: a change to rng._mul64 must come with a change here).
_mul64 = getattr(_mul64_kernel, "py_func", _mul64_kernel)


def _step(sh, sl, ih, il):
    """One LCG step of the 128-bit state (sh, sl) with increment (ih, il): state * MULT + inc."""
    hi, lo = _mul64(sl, MULT_LO)
    hi = hi + sl * MULT_HI + sh * MULT_LO
    nlo = lo + il
    carry = U1 if nlo < lo else np.uint64(0)
    return hi + ih + carry, nlo


def _hashmix(value, hc):
    value = (value ^ hc) & M32
    hc = (hc * MULT_A) & M32
    value = (value * hc) & M32
    value ^= value >> S16
    return value, hc


def _mix(x, y):
    r = ((MIX_MULT_L * x) - (MIX_MULT_R * y)) & M32
    return r ^ (r >> S16)


def _seeded(seed):
    """PCG64 seeded as ``default_rng(seed)`` seeds it: (state high, state low, inc high, inc low)."""
    s = np.uint64(seed)
    w0 = s & M32
    w1 = s >> S32
    n_ent = 2 if w1 else 1
    pool = np.empty(4, dtype=np.uint64)
    hc = INIT_A
    for i in range(4):
        v = np.uint64(0)
        if i == 0:
            v = w0
        elif i == 1 and n_ent == 2:
            v = w1
        pool[i], hc = _hashmix(v, hc)
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                h, hc = _hashmix(pool[i_src], hc)
                pool[i_dst] = _mix(pool[i_dst], h)
    hb = INIT_B
    out = np.empty(8, dtype=np.uint64)
    for i in range(8):
        v = pool[i % 4]
        v = (v ^ hb) & M32
        hb = (hb * MULT_B) & M32
        v = (v * hb) & M32
        v ^= v >> S16
        out[i] = v
    seed_hi = out[0] | (out[1] << S32)  # generate_state(4, uint64): words 0..3, low 32 bits first
    seed_lo = out[2] | (out[3] << S32)
    inc_hi = out[4] | (out[5] << S32)
    inc_lo = out[6] | (out[7] << S32)
    # pcg64_srandom_r: inc = initseq << 1 | 1; state = 0; step; state += initstate; step
    ih = (inc_hi << U1) | (inc_lo >> S63)
    il = (inc_lo << U1) | U1
    sh, sl = _step(np.uint64(0), np.uint64(0), ih, il)
    nl = sl + seed_lo
    carry = U1 if nl < sl else np.uint64(0)
    sh = sh + seed_hi + carry
    sl = nl
    sh, sl = _step(sh, sl, ih, il)
    return sh, sl, ih, il


def _words(v):
    """A uint64 as two int32 words (low first), as ``generator_words`` writes them."""
    lo = np.int64(v & M32)
    hi = np.int64(v >> S32)
    if lo >= 1 << 31:
        lo -= 1 << 32
    if hi >= 1 << 31:
        hi -= 1 << 32
    return lo, hi


def _shuffle(seeds, base, bags, words, want_words):
    """Row i of ``bags``: ``base[default_rng(seeds[i]).permutation(len(base))]``; row i of ``words``
    (when ``want_words``): that generator's words after the shuffle."""
    n = base.shape[0]
    perm = np.empty(n, dtype=np.int64)
    for row in range(seeds.shape[0]):
        sh, sl, ih, il = _seeded(seeds[row])
        has32 = False
        buf = np.uint64(0)
        for i in range(n):
            perm[i] = i
        for i in range(n - 1, 0, -1):
            mx = np.uint64(i)
            mask = mx
            mask |= mask >> U1
            mask |= mask >> np.uint64(2)
            mask |= mask >> np.uint64(4)
            mask |= mask >> np.uint64(8)
            mask |= mask >> S16
            while True:
                if has32:
                    has32 = False
                    r = buf
                else:
                    sh, sl = _step(sh, sl, ih, il)
                    x = sh ^ sl
                    rot = sh >> S58
                    out = (x >> rot) | (x << ((S64 - rot) & S63))
                    has32 = True
                    buf = out >> S32
                    r = out & M32
                v = r & mask
                if v <= mx:
                    break
            j = np.int64(v)
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
        for i in range(n):
            bags[row, i] = base[perm[i]]
        if want_words:
            a, b = _words(sl)
            c, d = _words(sh)
            words[row, 0] = a
            words[row, 1] = b
            words[row, 2] = c
            words[row, 3] = d
            a, b = _words(il)
            c, d = _words(ih)
            words[row, 4] = a
            words[row, 5] = b
            words[row, 6] = c
            words[row, 7] = d
            words[row, 8] = 1 if has32 else 0
            a, b = _words(buf)
            words[row, 9] = a


def _build() -> Any:
    from numba import njit

    opts = {"nogil": True, "cache": True}
    g = globals()
    inner = {"_mul64", "_step", "_hashmix", "_mix", "_seeded", "_words"}
    for name in inner:
        g[name] = njit(inline="always", **opts)(g[name])
    return njit(**opts)(_shuffle)


def shuffle(seeds: Any, base: np.ndarray, want_words: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """``(bags, words)``: bag ``i`` is ``base[numpy.random.default_rng(seeds[i]).permutation(len(base))]``;
    ``words[i]`` (when ``want_words``, else None) the generator's :data:`carc_env.fast.rng.WORDS` words
    after that shuffle.  Compiled on the first call (cached on disk)."""
    global _compiled
    if _compiled is None:
        _compiled = _build()
    s = np.asarray(seeds, dtype=np.int64)
    if s.ndim != 1 or (s.size and s.min() < 0):
        raise ValueError(
            "the seeds to deal must be a 1-d sequence of integers >= 0; pass game seeds as given to reset()"
        )
    base = np.ascontiguousarray(base, dtype=np.int64)
    bags = np.empty((len(s), len(base)), dtype=np.int64)
    words = np.zeros((len(s), 10), dtype=np.int32)
    _compiled(s, base, bags, words, bool(want_words))
    return bags, (words if want_words else None)


__all__ = ["shuffle"]
