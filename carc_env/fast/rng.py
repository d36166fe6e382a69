"""The game's random generator in the compiled engine: NumPy's PCG64 and ``Generator.integers``, exactly.

Contract
--------
The reference game owns one ``numpy.random.Generator`` (``game.rng``, PCG64, seeded by the game's seed);
it shuffles the bag at setup, and plug-ins draw from it during play (Stained Glass's token bag).  The
compiled engine keeps the same generator per game as :data:`WORDS` int32 words of ``State.ls`` (at
``T.P[P_O_RNG]``: the 128-bit state and increment, four 32-bit words each, low first, then
``has_uint32`` and ``uinteger``, the bit generator's buffered half-output), loaded from the Python
generator after the deal (:func:`generator_words`, the words of ``bit_generator.state``), so
:func:`integers` continues the reference's stream: ``integers(ls, g, o, n)`` returns what
``game.rng.integers(n)`` returns, advancing the state the same way (NumPy's
``random_bounded_uint64_fill`` for a range below 2**32: Lemire's multiply-and-reject on 32-bit outputs,
which PCG64 serves half a 64-bit output at a time; ``n == 1`` draws nothing).  ``tests/fast/`` checks it
against NumPy over many states and ranges.

A plug-in whose kernels draw says so (``FastSupport.random``): only then does the engine compute the
words when it deals a game (a few microseconds of Python per game).  The kernels take 32-bit words
because ``State.ls`` is int32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .seam import kernel

WORDS = 10
"""int32 words of one generator: state (4, low first), increment (4), has_uint32, uinteger."""
_MASK32 = (1 << 32) - 1
_MULT = 0x2360ED051FC65DA44385DF649FCCF645  # PCG64's 128-bit multiplier (PCG_DEFAULT_MULTIPLIER_128)
MULT_HI = np.uint64(_MULT >> 64)
MULT_LO = np.uint64(_MULT & ((1 << 64) - 1))
M32 = np.uint64(_MASK32)
S32 = np.uint64(32)
S58 = np.uint64(58)
S63 = np.uint64(63)
S64 = np.uint64(64)
U1 = np.uint64(1)


def _signed32(v: int) -> int:
    v &= _MASK32
    return v - (1 << 32) if v >= 1 << 31 else v


def generator_words(rng: np.random.Generator) -> np.ndarray:
    """The :data:`WORDS` int32 words of a PCG64 generator's state (``rng.bit_generator.state``)."""
    st = rng.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise ValueError(f"the compiled engine continues PCG64 generators only, got {st.get('bit_generator')!r}")
    state, inc = st["state"]["state"], st["state"]["inc"]
    words = [_signed32(state >> (32 * i)) for i in range(4)] + [_signed32(inc >> (32 * i)) for i in range(4)]
    words += [int(st["has_uint32"]), _signed32(st["uinteger"])]
    return np.array(words, dtype=np.int32)


def words_generator(words: Any) -> np.random.Generator:
    """The generator the words describe (the inverse of :func:`generator_words`; for tests and inspection)."""
    w = [int(v) & _MASK32 for v in words]
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {
            "state": sum(w[i] << (32 * i) for i in range(4)),
            "inc": sum(w[4 + i] << (32 * i) for i in range(4)),
        },
        "has_uint32": w[8],
        "uinteger": w[9],
    }
    return np.random.Generator(bg)


@kernel
def _u64(ls, g, o):
    """Two int32 words (low first) as one uint64."""
    lo = np.uint64(np.int64(ls[g, o])) & M32
    hi = np.uint64(np.int64(ls[g, o + 1])) & M32
    return (hi << S32) | lo


@kernel
def _put64(ls, g, o, v):
    ls[g, o] = np.int32(np.int64(v & M32) - (np.int64(1) << 32) if (v & M32) >= np.uint64(1 << 31) else v & M32)
    h = v >> S32
    ls[g, o + 1] = np.int32(np.int64(h) - (np.int64(1) << 32) if h >= np.uint64(1 << 31) else h)


@kernel
def _mul64(a, b):
    """The 128-bit product of two uint64 as (high, low)."""
    a0 = a & M32
    a1 = a >> S32
    b0 = b & M32
    b1 = b >> S32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> S32) + (p01 & M32) + (p10 & M32)
    lo = (p00 & M32) | (mid << S32)
    hi = p11 + (p01 >> S32) + (p10 >> S32) + (mid >> S32)
    return hi, lo


@kernel
def next64(ls, g, o):
    """PCG64's next 64-bit output (XSL-RR of the advanced 128-bit LCG state)."""
    sl = _u64(ls, g, o)
    sh = _u64(ls, g, o + 2)
    il = _u64(ls, g, o + 4)
    ih = _u64(ls, g, o + 6)
    hi, lo = _mul64(sl, MULT_LO)
    hi = hi + sl * MULT_HI + sh * MULT_LO
    nlo = lo + il
    carry = U1 if nlo < lo else np.uint64(0)
    nhi = hi + ih + carry
    _put64(ls, g, o, nlo)
    _put64(ls, g, o + 2, nhi)
    x = nhi ^ nlo
    rot = nhi >> S58
    return (x >> rot) | (x << ((S64 - rot) & S63))


@kernel
def next32(ls, g, o):
    """PCG64's next 32-bit output: the low half of a fresh 64-bit output, then its buffered high half."""
    if ls[g, o + 8]:
        ls[g, o + 8] = 0
        return np.uint64(np.int64(ls[g, o + 9])) & M32
    v = next64(ls, g, o)
    ls[g, o + 8] = 1
    h = v >> S32
    ls[g, o + 9] = np.int32(np.int64(h) - (np.int64(1) << 32) if h >= np.uint64(1 << 31) else h)
    return v & M32


@kernel
def integers(ls, g, o, n):
    """``Generator.integers(n)`` (0 <= value < n, 1 <= n < 2**32) of the generator at ``ls[g, o:o + WORDS]``."""
    rng = np.uint64(n - 1)
    if rng == np.uint64(0):
        return 0
    excl = rng + U1
    m = next32(ls, g, o) * excl
    left = m & M32
    if left < excl:
        threshold = (M32 - rng) % excl
        while left < threshold:
            m = next32(ls, g, o) * excl
            left = m & M32
    return np.int64(m >> S32)


__all__ = ["WORDS", "generator_words", "integers", "next32", "next64", "words_generator"]
