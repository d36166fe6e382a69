"""Fixtures shared by the compiled engine's tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from carc_env.env.options import EnvOptions
from carc_env.fast.engine import FastBatch


@pytest.fixture(scope="module")
def batches() -> Callable[..., tuple[EnvOptions, FastBatch]]:
    """``batches(kw, n=2)``: the options of env kwargs ``kw`` and an ``n``-game FastBatch for them, built once
    per test module (building the tables costs more than a short game)."""
    cache: dict[tuple[str, int], tuple[EnvOptions, FastBatch]] = {}

    def get(kw: dict, n: int = 2) -> tuple[EnvOptions, FastBatch]:
        key = (repr(sorted(kw.items())), n)
        if key not in cache:
            opts = EnvOptions.from_kwargs(**kw)
            cache[key] = (opts, FastBatch(opts, n))
        return cache[key]

    return get
