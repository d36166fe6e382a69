"""Maps - Germany on the compiled engine against the Python reference, step by step (issue 30).

Every game is played through both engines with the same random masked actions and compared at every
step (legal placements, masks, the fixed window, every observation byte, rewards, scores, the itemised
scoring: :func:`carc_env.env.differential.compare_game`).  The map alone with 2-5 players and every
option of the plug-in, another map file of the same format (``tests/data/maps/mini.toml``: start squares
next to printed features abroad, a one-square large city), a window larger than the board, and the
expansions the map combines with.  A few games per configuration keep the suite short;
``scripts/fast_differential.py --maps`` plays thousands.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from carc_env.core import GameConfig
from carc_env.core.record import replay
from carc_env.env.differential import compare_batch, compare_game
from carc_env.env.options import EnvOptions
from carc_env.fast import coverage

M = "maps_germany"
MINI = str(Path(__file__).resolve().parents[1] / "data" / "maps" / "mini.toml")
ALL_TOWN_VARIANTS = {"town_extra_turn": True, "town_penalty": True, "town_road_bonus": True}

CONFIGS = [
    ({"expansions": (M,)}, range(0, 4)),
    ({"expansions": (M,), "num_players": 3, "reward": "score_delta"}, range(10, 12)),
    ({"expansions": (M,), "num_players": 4, "reward": "score_diff"}, range(20, 22)),
    ({"expansions": (M,), "num_players": 5, "reward": "score_delta"}, range(30, 32)),
    # every option of the plug-in
    ({"expansions": (M,), "rules": {M: {"start_orientation": "random", **ALL_TOWN_VARIANTS}},
      "reward": "score_delta"}, range(40, 43)),
    ({"expansions": (M,), "num_players": 3, "rules": {M: {"start_orientation": "fixed", "tile_mix": "base_x1",
                                                            "town_penalty": True}}}, range(50, 52)),
    ({"expansions": (M,), "num_players": 4, "rules": {M: {
        "start_squares": "Erfurt,Rostock,Stuttgart", "start_orientation": "random", "tile_mix": "base_x2",
        "large_city_closed_edges": "border", "town_road_bonus": True}}}, range(60, 62)),
    ({"expansions": (M,), "followers": 5, "rules": {M: {"followers": 0, "town_extra_turn": True,
                                                        "town_extra_turn_optional": False}}}, range(70, 72)),
    ({"expansions": (M,), "num_players": 5, "rules": {M: {"followers": 4, "town_extra_turn": True}},
      "reward": "score_delta"}, range(80, 82)),
    # another board of the same format, and a window larger than the board (centred in it)
    ({"expansions": (M,), "rules": {M: {"map_file": MINI, "start_squares": "A,B", **ALL_TOWN_VARIANTS}}},
     range(90, 96)),
    ({"expansions": (M,), "num_players": 3, "rules": {M: {"map_file": MINI, "start_squares": "B,A",
                                                            "start_orientation": "random",
                                                            "large_city_closed_edges": "border"}}},
     range(100, 106)),
    ({"expansions": (M,), "window": (23, 21), "reward": "score_delta"}, range(110, 112)),
    # with the expansions it combines with (the Count and the River II lay their own start: refused)
    ({"expansions": (M, "king_robber")}, range(120, 122)),
    ({"expansions": (M, "shrines"), "num_players": 3}, range(130, 132)),
    ({"expansions": (M, "darmstadt"), "num_players": 4, "reward": "score_delta"}, range(140, 142)),
    ({"expansions": (M, "royal_gateways"), "rules": {M: {"start_orientation": "random"}}}, range(150, 153)),
    ({"expansions": (M, "sagrada_familia"), "num_players": 3}, range(160, 163)),
    ({"expansions": (M, "king_robber", "shrines", "darmstadt"), "num_players": 4}, range(170, 172)),
    ({"expansions": (M, "royal_gateways", "sagrada_familia", "king_robber"), "num_players": 5,
      "rules": {M: {"start_squares": "Rostock,Erfurt,Stuttgart", **ALL_TOWN_VARIANTS}}}, range(180, 182)),
    # a city linked by gates beside a large city's neutral side (closed edges "border"): the reference's
    # physical parts once joined through the neutral edge (found by scripts/fast_differential.py --maps)
    ({"expansions": (M, "darmstadt", "royal_gateways", "sagrada_familia"), "num_players": 4, "reward": "score_delta",
      "rules": {M: {"start_squares": "Rostock,Erfurt,Stuttgart", "large_city_closed_edges": "border"}}}, [100626]),
    ({"expansions": (M, "king_robber", "shrines", "darmstadt", "royal_gateways", "sagrada_familia"),
      "rules": {M: {"map_file": MINI, "start_squares": "A,B", "tile_mix": "base_x2"}}}, range(190, 194)),
]  # fmt: skip


@pytest.mark.parametrize("kw,seeds", CONFIGS, ids=[repr(c[0]) for c in CONFIGS])
def test_map_games_are_identical_step_by_step(batches, kw, seeds):
    opts, fast = batches(kw, 1)
    assert coverage(opts) is None
    for seed in seeds:
        assert compare_game(opts, seed, fast, avoid_pass=0.5) > 0


def test_the_extra_turn_decision_is_played_both_ways(batches):
    """Town variant 1 with the player's choice: random play reaches map_extra_turn and takes and declines
    it (the history rows of both moves turn back into the reference's actions)."""
    opts, fast = batches({"expansions": (M,), "rules": {M: {"town_extra_turn": True}}})
    seen = set()
    for seed in range(200, 230):
        compare_game(opts, seed, fast, avoid_pass=0.5)
        seen |= {type(a).__name__ for a in fast.actions(0)}
        if {"TakeExtraTurn", "Pass"} <= seen and "PlaceFollower" in seen:
            break
    assert {"TakeExtraTurn", "Pass"} <= seen


def test_map_games_step_in_batches_with_auto_reset():
    kw = {
        "expansions": (M, "king_robber"),
        "num_players": 3,
        "rules": {M: {"start_orientation": "random", "town_extra_turn": True}},
    }
    assert compare_batch(EnvOptions.from_kwargs(**kw), 7, 3, 350, threads=2) >= 3


def test_map_records_replay_in_the_other_engine(batches):
    opts, fast = batches({"expansions": (M,), "rules": {M: {"start_orientation": "random", **ALL_TOWN_VARIANTS}}})
    rng = np.random.default_rng(1)
    fast.reset(0, seed=11)
    while not fast.over(0):
        fast.step_game(0, int(rng.choice(np.flatnonzero(fast.mask(0)))))
    record = fast.record(0)
    game = replay(record)  # the Python engine replays the compiled engine's record
    assert game.scores == fast.scores(0) and game.over
    assert GameConfig.from_dict(record["config"]).expansions == ("base", M)
    fast.replay(0, record)  # and the compiled engine its own
    assert fast.scores(0) == game.scores


def test_the_count_and_the_river_stay_refused_with_the_map():
    for other in ("count", "river2"):
        with pytest.raises(ValueError, match="enable only one of them"):
            EnvOptions.from_kwargs(expansions=(M, other))
