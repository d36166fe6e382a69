"""How the compiled engine compiles (carc_env.fast.seam._compilers): the kernels' code libraries and the
entry points linking them (docs/results/compile.md)."""

from __future__ import annotations

import types

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from carc_env.fast import seam  # noqa: E402


def _work(a, i):
    s = 0
    for j in range(i):
        s += a[j] * (j + 1)
    for j in range(i):  # enough code that LLVM inlines it only when told to
        if a[j] % 3 == 0:
            s ^= a[j] << 2
        elif a[j] % 5 == 1:
            s -= a[(j * 7) % i] // 3
    for j in range(i - 1, -1, -1):
        s = s * 31 + a[j] if s < 1000 else s // 2 - a[j]
    for j in range(i):
        s += (a[j] * a[j]) % 11 if j % 2 else (a[j] + j) % 13
    for k in range(3, 9):
        for j in range(i):
            if (a[j] + k) % 4 == 1:
                s += a[(j + k) % i] * k - s // (k + 1)
            elif s > a[j] * k:
                s = (s * 7 + a[j]) % 100_003
            else:
                s ^= (a[j] + k) << 3
    return s


def _copy(fn, name: str):
    """A distinct function object with ``fn``'s code (one body for the two kernels compared below)."""
    out = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    out.__qualname__ = name
    return out


_hot = seam.inline_kernel(_copy(_work, "_hot"))
_cold = seam.kernel(_copy(_work, "_cold"))


@seam.kernel
def _calls_both(a, i):
    return _hot(a, i) + _hot(a, i + 1) + _hot(a, i + 2) + _cold(a, i) + _cold(a, i + 1) + _cold(a, i + 2)


def _entry():
    return numba.njit(**{**seam.ENTRY_OPTS, "cache": False}, pipeline_class=seam._compilers()[1])(_calls_both.py_func)


def _attributes(kernel) -> list[str]:
    (lib,) = {c.library for c in kernel.overloads.values()}
    return [b" ".join(fn.attributes).decode() for fn in lib.own_module().functions if not fn.is_declaration]


def test_inline_kernel_is_compiled_once_and_marked_alwaysinline():
    f = _entry()
    a = np.arange(1, 6, dtype=np.int64)
    assert f(a, 2) == sum(k.py_func(a, i) for k in (_hot, _cold) for i in (2, 3, 4))
    assert len(_hot.overloads) == 1  # three call sites, one compilation
    assert all("alwaysinline" in attrs for attrs in _attributes(_hot))
    assert not any("alwaysinline" in attrs for attrs in _attributes(_cold))


def _called(ir: str, kernel) -> bool:
    names = [
        fn.name for c in kernel.overloads.values() for fn in c.library.own_module().functions if not fn.is_declaration
    ]
    assert names
    return any(f"@{name}(" in ir or f'@"{name}"(' in ir for name in names)


def test_entry_point_inlines_an_inline_kernel():
    f = _entry()
    f(np.arange(1, 6, dtype=np.int64), 2)
    ir = f.inspect_llvm(f.signatures[0])
    assert not _called(ir, _hot)
    assert _called(ir, _cold)  # the same code as a plain kernel stays a call: the attribute is what inlines


def test_inline_kernel_without_numba_leaves_the_function(monkeypatch):
    monkeypatch.setattr(seam, "_njit", lambda: None)

    def plain(x):
        return x + 1

    assert seam.inline_kernel(plain) is plain and plain(1) == 2


def test_engine_helpers_are_inlined_by_llvm_not_by_numba():
    """Numba's own inlining (``seam.inline``, ``inline="always"``) types the body again at every call site
    and under every specialisation of the caller; the engine's and the plug-ins' helpers use
    ``seam.inline_kernel`` (typed once, inlined by LLVM).  Only the composed hooks, written by
    ``seam._source``, use ``seam.inline``."""
    import pathlib
    import re

    import carc_env

    root = pathlib.Path(carc_env.__file__).parent
    files = [*sorted((root / "fast").glob("*.py")), *sorted((root / "expansions").glob("*/fast.py"))]
    assert len(files) > 10
    offenders = [
        f"{f.relative_to(root)}:{n}"
        for f in files
        for n, line in enumerate(f.read_text().splitlines(), 1)
        if re.fullmatch(r"\s*@(seam\.)?inline\s*", line)
    ]
    assert not offenders, f"use @inline_kernel instead of @inline at {offenders}"
