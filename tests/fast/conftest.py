"""Fixtures shared by the compiled engine's tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

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


@pytest.fixture
def base_only_package(tmp_path: Path) -> Path:
    """A copy of the ``carc_env`` package under ``tmp_path / "src"`` (returned: put it on ``PYTHONPATH``)
    that keeps only the base game's compiled part: the composed engine holds every plug-in with a ``fast``
    part, so a test that compiles it afresh for games without expansions compiles in about 20 s rather
    than 45-55 s on the project's 2-core machine."""
    src = tmp_path / "src"
    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "carc_env", src / "carc_env", ignore=shutil.ignore_patterns("__pycache__"))
    for fast in (src / "carc_env" / "expansions").glob("*/fast.py"):
        if fast.parent.name != "base":
            fast.unlink()
    return src
