"""The example plug-in of docs/examples/tolls: an expansion written outside carc_env, registered from
user code and played through ``carc_env.env(expansions=...)`` (the "writing an expansion" walkthrough of
docs/architecture.md is built on it)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import play
from pettingzoo.test import api_test
from test_env_api import _documented

import carc_env
from carc_env.core import FeatureScored, Game, GameConfig, PointsAwarded, ScoreItem
from carc_env.core.expansion import plugins, unregister
from carc_env.render import render_image, render_text

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture
def tolls():
    """Import the example (which registers it), then leave the registry as it was."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        module = importlib.import_module("tolls")
        assert plugins()["tolls"].package == "tolls"
        yield module
    finally:
        if "tolls" in plugins():
            unregister("tolls")
        for name in [m for m in sys.modules if m == "tolls" or m.startswith("tolls.")]:
            del sys.modules[name]
        sys.path.remove(str(EXAMPLES))


ORDER = ["TL-tollhouse", "BA-A", "BA-A", "BA-U"]
MOVES = [
    "tile 1,0 r0", "follower r1",  # P0: a toll house on the start road, and a follower on it
    "tile 2,0 r1", "pass",  # P1: a cloister; its road ends the road in the east
    "tile -1,0 r3", "pass",  # P0: a cloister ending it in the west: 4 road tiles, 1 toll house
]  # fmt: skip


def test_completing_a_toll_road_lets_its_player_cash_the_toll(tolls):
    g = Game(GameConfig(2, ("base", "tolls")), seed=0, draw_order=ORDER)
    ev = play(g, MOVES)
    (road,) = [e for e in ev if isinstance(e, FeatureScored)]
    assert (road.items, road.points) == ((ScoreItem("tiles", "4 road tiles x 1", 4),), (4, 0))
    assert g.phase == "tolls_collect" and g.player == 0 and g.ext["tolls"].pending == 1
    ev = g.apply("toll cash")
    assert [(a.player, a.items) for a in ev if isinstance(a, PointsAwarded)] == [
        (0, (ScoreItem("toll", "1 toll x 2", 2),))
    ]
    assert g.scores == [6, 0] and g.ext["tolls"].pending == 0


def test_a_banked_toll_pays_double_at_the_end(tolls):
    g = Game(GameConfig(2, ("base", "tolls"), {"tolls": {"toll": 3}}), seed=0, draw_order=ORDER)
    play(g, MOVES)
    ev = g.apply("toll bank")
    assert [e for e in ev if isinstance(e, tolls.TollBanked)] == [tolls.TollBanked(0, 1)]
    assert g.ext["tolls"].banked == [1, 0] and g.scores == [4, 0]
    ev = play(g, ["tile 3,0 r1", "pass"])  # P1: the last tile; final scoring
    final = [a for a in ev if isinstance(a, PointsAwarded)]
    assert [(a.player, a.items, a.final) for a in final] == [(0, (ScoreItem("toll", "1 banked toll x 6", 6),), True)]
    assert g.over and g.scores[0] == 10


def test_the_example_in_the_environment(tolls):
    env = carc_env.env(expansions=("base", "tolls"), render_mode="ansi")
    api_test(env, num_cycles=300)
    raw = env.unwrapped
    ranges = raw.codec.ranges
    assert ranges["tolls_collect"].size == 2 and ranges["tolls_collect"].start == ranges["follower"].stop
    assert "toll_house" in raw.channel_names
    assert {"tolls_pending", "tolls_banked_p0", "tolls_banked_p1"} <= set(raw.global_names)
    documented = _documented(importlib.import_module("tolls.observe").__doc__)
    for name in ["toll_house", "tolls_pending", "tolls_banked_p0", "tolls_banked_p1"]:
        assert any(p.match(name) for p in documented), name
    # the scripted game above, through the env: the collect decision has its own two-entry range
    env.reset(seed=0, options={"draw_order": ORDER})
    for move in MOVES:
        env.step(raw.action_from_text(move))
    obs, *_ = env.last()
    assert raw.game.phase == "tolls_collect" and env.agent_selection == "player_0"
    assert np.flatnonzero(obs["action_mask"]).tolist() == [
        ranges["tolls_collect"].start,
        ranges["tolls_collect"].start + 1,
    ]
    assert raw.action_to_text(ranges["tolls_collect"].start + 1) == "toll bank"
    env.step(ranges["tolls_collect"].start + 1)
    glob = dict(zip(raw.global_names, raw.observe("player_1")["globals"], strict=True))
    assert (glob["tolls_banked_p0"], glob["tolls_banked_p1"]) == (0.0, 0.25)  # relative seats: P0 is p1 for P1
    assert "Tolls banked: P0 1, P1 0" in render_text(raw.game)
    assert render_image(raw.game, tile_px=32).ndim == 3
    # a whole random game, every decision from the mask
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert raw.game.over and raw.game.followers_conserved()


def test_an_invalid_option_is_refused_by_the_plug_in(tolls):
    with pytest.raises(carc_env.ConfigError, match="tolls.toll must be at least 1"):
        carc_env.env(expansions=("base", "tolls"), rules={"tolls": {"toll": 0}})
