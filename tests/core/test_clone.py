"""Game.clone: a clone shares no mutable object with its game, and a new attribute cannot slip through.

``Game.CLONE`` says how each attribute is copied; ``clone`` refuses an
attribute it does not list.  The walk below follows every list, dict, set,
array, generator and (non-frozen) dataclass reachable from a game's attributes
and checks that none of them is the same object in the clone, so a copy that
is too shallow (e.g. ``dict.copy`` for a dict of lists) fails here.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _env_expansions import ALL, pick, seed_quarters

from carc_env.core import Game, GameConfig
from carc_env.encoding import ActionCodec

SHARED = {name for name, how in Game.CLONE.items() if how is None}


def _mutables(obj, path: str, out: dict[int, str]) -> None:
    """Record ``id -> path`` of every mutable object reachable from ``obj``."""
    if isinstance(obj, (int, float, str, bool, type(None), bytes, frozenset)):
        return
    if isinstance(obj, tuple):
        for i, v in enumerate(obj):
            _mutables(v, f"{path}[{i}]", out)
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if obj.__dataclass_params__.frozen:
            return
        if id(obj) in out:
            return
        out[id(obj)] = path
        for f in dataclasses.fields(obj):
            _mutables(getattr(obj, f.name), f"{path}.{f.name}", out)
        return
    if id(obj) in out:
        return
    if isinstance(obj, (list, dict, set, np.ndarray, np.random.Generator)):
        out[id(obj)] = path
    else:
        raise AssertionError(f"{path}: a {type(obj).__name__} the walk does not know; teach it to this test")
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            _mutables(v, f"{path}[{i}]", out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _mutables(v, f"{path}[{k!r}]", out)
    elif isinstance(obj, set):
        for v in obj:
            _mutables(v, f"{path}{{}}", out)


def _game_mutables(g: Game) -> dict[int, str]:
    out: dict[int, str] = {}
    for name, value in vars(g).items():
        if name not in SHARED:
            _mutables(value, name, out)
    return out


def _mid_game(seed: int, steps: int) -> Game:
    g = Game(GameConfig(3, ALL), seed=seed)
    codec = ActionCodec(g.rules)
    rng = np.random.default_rng(seed)
    seed_quarters(g, rng)
    for _ in range(steps):
        if g.over:
            break
        g.apply(codec.decode(g, pick(g, codec, codec.mask(g), rng)))
    return g


@pytest.mark.parametrize(("seed", "steps"), [(1, 0), (2, 40), (3, 400)])
def test_a_clone_shares_no_mutable_object_with_its_game(seed, steps):
    g = _mid_game(seed, steps)
    mine = _game_mutables(g)
    theirs = _game_mutables(g.clone())
    shared = set(mine) & set(theirs)
    assert not shared, f"shared with the clone: {sorted(mine[i] for i in shared)}"
    assert {"occupants", "tiles", "ext", "rng"} <= {p.split("[")[0].split(".")[0] for p in mine.values()}


def test_every_attribute_of_a_game_is_declared_or_immutable():
    g = _mid_game(4, 200)
    for name, value in vars(g).items():
        assert name in Game.CLONE or type(value) in (int, float, str, bool, type(None)), name


def test_clone_shares_immutable_values_of_any_number_type():
    g = Game(GameConfig(2), seed=np.int64(5))
    assert g.clone().seed == 5


def test_clone_refuses_an_attribute_it_does_not_know():
    g = Game(GameConfig(2), seed=0)
    g.new_table = {}
    with pytest.raises(TypeError, match="attribute 'new_table'.*add it to Game.CLONE"):
        g.clone()


def test_a_too_shallow_copy_is_caught(monkeypatch):
    """The walk above would catch a shallow copy of a nested attribute (the check this file relies on)."""
    monkeypatch.setitem(Game.CLONE, "occupants", dict.copy)
    g = _mid_game(5, 60)
    assert g.occupants
    mine = _game_mutables(g)
    shared = set(mine) & set(_game_mutables(g.clone()))
    assert shared and all(mine[i].startswith("occupants[") for i in shared)


def test_a_clone_plays_on_alone():
    g = _mid_game(6, 100)
    before = (g.scores[:], g.supply[:], len(g.placements), dict(g.followers), repr(g.ext))
    c = g.clone()
    codec = ActionCodec(c.rules)
    rng = np.random.default_rng(0)
    while not c.over:
        c.apply(codec.decode(c, pick(c, codec, codec.mask(c), rng)))
    assert (g.scores, g.supply, len(g.placements), g.followers, repr(g.ext)) == before


def test_a_clone_draws_the_same_random_numbers():
    g = _mid_game(7, 30)
    c = g.clone()
    assert c.rng is not g.rng
    assert c.rng.integers(1 << 30, size=8).tolist() == g.rng.integers(1 << 30, size=8).tolist()
