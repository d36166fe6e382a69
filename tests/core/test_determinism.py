"""Determinism, records, cloning, illegal actions and bad configurations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import engine_partition, new_game, play

from carc_env.core import (
    ConfigError,
    Game,
    GameConfig,
    IllegalActionError,
    Pass,
    PlaceFollower,
    PlaceTile,
)
from carc_env.core.record import RecordError, replay, to_record


def random_play(game: Game, action_seed: int, max_actions: int | None = None) -> list[tuple]:
    """Play random legal actions; return a trace of what was seen at each decision."""
    rng = np.random.default_rng(action_seed)
    trace = []
    k = 0
    while not game.over and (max_actions is None or k < max_actions):
        acts = game.legal_actions()
        trace.append((game.phase, game.player, game.tile_id, tuple(acts), tuple(game.scores)))
        a = acts[rng.integers(len(acts))]
        if game.phase == "follower" and rng.random() < 0.5:
            a = Pass()
        game.apply(a)
        k += 1
    trace.append((game.phase, tuple(game.scores)))
    return trace


def snapshot(g: Game) -> dict:
    """Everything observable about a game, in comparable form."""
    fx, fy, masks = g.frontier()
    return {
        "phase": g.phase,
        "player": g.player,
        "turn_player": g.turn_player,
        "turn": g.turn,
        "over": g.over,
        "tile": g.tile_id,
        "bag": g.bag_size,
        "remaining": g.remaining_counts().tolist(),
        "scores": list(g.scores),
        "supply": list(g.supply),
        "followers": dict(g.followers),
        "board": dict(g.board),
        "placements": list(g.placements),
        "history": g.history_texts(),
        "partition": engine_partition(g),
        "open": {r: g.open[r] for r in range(len(g.parent)) if g.find(r) == r},
        "completed": set(g.completed),
        "occupants": {k: sorted(v) for k, v in g.occupants.items()},
        "frontier": sorted(zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True)),
        "legal": sorted(map(tuple, g.legal_tile_placements().tolist())),
        "spots": g.legal_follower_spots(),
    }


# ------------------------------------------------------------- seeds
@pytest.mark.parametrize("n", [2, 4])
def test_same_seed_gives_the_same_game(n):
    a, b = Game(GameConfig(num_players=n), seed=123), Game(GameConfig(num_players=n), seed=123)
    assert a.draw_order == b.draw_order
    assert len(a.draw_order) == 71
    ta, tb = random_play(a, 9), random_play(b, 9)
    assert ta == tb
    assert a.scores == b.scores
    assert a.history_texts() == b.history_texts()
    assert snapshot(a) == snapshot(b)


def test_different_seeds_give_different_draw_orders():
    orders = {tuple(Game(GameConfig(), seed=s).draw_order) for s in range(5)}
    assert len(orders) == 5
    # always the 71 tiles left after the start tile
    for order in orders:
        assert sorted(order) == sorted(Game(GameConfig(), seed=0).draw_order)


def test_draw_order_contains_every_tile_but_the_start_tile():
    g = Game(GameConfig(), seed=5)
    counts = {}
    for tid in g.draw_order:
        counts[tid] = counts.get(tid, 0) + 1
    assert counts["BA-D"] == 3
    assert counts["BA-V"] == 9
    assert sum(counts.values()) == 71
    assert g.tile_id == g.draw_order[0]


def test_forced_draw_order_is_used_as_given():
    order = ["BA-X", "BA-V", "BA-B"]
    g = new_game(order, seed=999)
    assert g.draw_order == order
    assert g.tile_id == "BA-X"


@pytest.mark.parametrize("expansions", [("base",), ("base", "river2", "darmstadt")])
def test_the_generator_is_in_the_same_state_after_setup_with_or_without_a_forced_draw_order(expansions):
    # A record replays with its draw order forced: plug-ins that draw from game.rng during play
    # (the Stained Glass token bag) must then draw the same numbers as the recorded game did.
    natural = Game(GameConfig(2, expansions), seed=5)
    forced = Game(GameConfig(2, expansions), seed=5, draw_order=natural.draw_order)
    assert forced.draw_order == natural.draw_order
    assert forced.rng.integers(1 << 62, size=4).tolist() == natural.rng.integers(1 << 62, size=4).tolist()
    short = Game(GameConfig(2, expansions), seed=5, draw_order=natural.draw_order[:3])
    assert short.rng.integers(1 << 62) == Game(GameConfig(2, expansions), seed=5).rng.integers(1 << 62)


def test_a_game_without_a_seed_draws_one_and_keeps_it():
    a, b = Game(GameConfig()), Game(GameConfig())
    assert isinstance(a.seed, int) and a.seed >= 0 and a.seed != b.seed
    assert Game(GameConfig(), seed=a.seed).draw_order == a.draw_order


# ------------------------------------------------------------ records
def test_record_round_trip_replays_to_the_same_game():
    g = Game(GameConfig(num_players=3), seed=42)
    random_play(g, 4)
    assert g.over
    text = json.dumps(to_record(g))
    rec = json.loads(text)
    assert rec["scores"] == g.scores
    r = replay(rec)
    assert r.over
    assert r.scores == g.scores
    assert r.history_texts() == g.history_texts()
    assert r.draw_order == g.draw_order
    assert r.board == g.board and r.placements == g.placements


def test_partial_record_replays_to_the_same_state():
    g = Game(GameConfig(num_players=2), seed=8)
    random_play(g, 8, max_actions=25)
    r = replay(json.loads(json.dumps(to_record(g))))
    assert snapshot(r) == snapshot(g)


def test_record_texts_name_follower_features():
    g = new_game(["BA-U", "BA-E"])
    play(g, ["tile 1,0 r0", "follower r1", "tile 0,-1 r2", "follower f1"])
    assert to_record(g)["actions"] == ["tile 1,0 r0", "follower r1", "tile 0,-1 r2", "follower f1"]


def test_tampered_record_action_raises_naming_the_action():
    g = Game(GameConfig(), seed=3)
    random_play(g, 3, max_actions=20)
    rec = json.loads(json.dumps(to_record(g)))
    i = next(k for k, a in enumerate(rec["actions"]) if a.startswith("tile") and k > 4)
    rec["actions"][i] = "tile 40,40 r0"
    with pytest.raises(RecordError, match=rf"action {i} \('tile 40,40 r0'\) does not replay: .*touches no placed tile"):
        replay(rec)


def test_tampered_record_scores_raise():
    g = Game(GameConfig(), seed=3)
    random_play(g, 3)
    rec = to_record(g)
    rec["scores"] = [s + 1 for s in rec["scores"]]
    with pytest.raises(RecordError, match="replay ends with scores"):
        replay(rec)


def test_tampered_record_draw_order_raises():
    rec = to_record(new_game(["BA-U"]))
    rec["draw_order"] = ["BA-Q", "BA-Q"]
    with pytest.raises(RecordError, match="more copies of BA-Q"):
        replay(rec)
    with pytest.raises(RecordError, match="not a carc_env game record"):
        replay({"format": "something else"})


# -------------------------------------------------------------- clone
def test_clone_is_independent_both_ways():
    g = Game(GameConfig(num_players=3), seed=11)
    random_play(g, 11, max_actions=40)
    while g.phase != "tile":
        g.apply(Pass())
    before = snapshot(g)
    c = g.clone()
    assert snapshot(c) == before
    random_play(c, 1)  # play the clone to the end
    assert c.over
    assert snapshot(g) == before
    clone_after = snapshot(c)
    random_play(g, 2, max_actions=30)  # now mutate the original
    assert snapshot(c) == clone_after
    assert snapshot(g) != before


def test_clone_continues_exactly_like_the_original():
    g = Game(GameConfig(num_players=2), seed=17)
    random_play(g, 5, max_actions=30)
    c = g.clone()
    assert random_play(g, 77) == random_play(c, 77)
    assert g.scores == c.scores


# ------------------------------------------------------- illegal actions
def assert_illegal(g: Game, action, *fragments: str) -> None:
    before = snapshot(g)
    with pytest.raises(IllegalActionError) as exc:
        g.apply(action)
    msg = str(exc.value)
    for f in fragments:
        assert f in msg, msg
    assert snapshot(g) == before


def test_placing_on_an_occupied_cell_is_illegal():
    g = new_game(["BA-E", "BA-U"])
    assert_illegal(g, "tile 0,0 r0", "cannot place BA-E at (0,0)", "already taken")
    assert_illegal(g, PlaceTile(0, 0, 2), "already taken")


def test_placing_on_a_non_adjacent_cell_is_illegal():
    g = new_game(["BA-E", "BA-U"])
    assert_illegal(g, "tile 3,3 r0", "cannot place BA-E at (3,3)", "touches no placed tile")
    assert_illegal(g, "tile 1,-1 r0", "touches no placed tile")  # corner contact only


def test_placing_in_a_wrong_rotation_is_illegal():
    g = new_game(["BA-E", "BA-U"])
    assert_illegal(g, "tile 0,-1 r0", "cannot place BA-E at (0,-1) in rotation 0", "rotations that fit: [2]")
    assert_illegal(g, "tile 1,0 r0", "no rotation fits this cell")
    assert_illegal(g, PlaceTile(0, -1, 4), "rotation must be 0..3")


def test_follower_on_an_occupied_feature_is_illegal():
    g = new_game(["BA-U", "BA-U", "BA-V"])
    play(g, ["tile 1,0 r0", "follower r1", "tile 2,0 r0"])
    assert g.phase == "follower"
    r1 = g.rules.tiles[g.rules.tile_index["BA-U"]].segment_index("r1")
    assert r1 not in g.legal_follower_spots()
    assert_illegal(g, "follower r1", "cannot put a follower on r1 of BA-U", "free features are ['f1', 'f2']")
    assert_illegal(g, PlaceFollower(r1), "cannot put a follower on r1")
    assert_illegal(g, "follower c1", "tile BA-U has no feature 'c1'")
    assert_illegal(g, PlaceTile(3, 0, 0), "the follower phase needs PlaceFollower or Pass")


def test_follower_in_the_tile_phase_is_illegal():
    g = new_game(["BA-U", "BA-U"])
    assert_illegal(g, PlaceFollower(0), "the tile phase needs a PlaceTile action")
    assert_illegal(g, "follower r1", "the tile phase needs a PlaceTile action")
    assert_illegal(g, Pass(), "the tile phase needs a PlaceTile action")


def test_unparsable_action_text_is_illegal():
    g = new_game(["BA-U"])
    assert_illegal(g, "jump 1,2", "cannot parse action 'jump 1,2'")
    assert_illegal(g, "tile 1,0 r7", "cannot parse")


def test_action_after_game_over_is_illegal():
    g = new_game(["BA-U"])
    play(g, ["tile 1,0 r0", "pass"])
    assert g.over
    assert_illegal(g, Pass(), "the game is over")
    assert_illegal(g, PlaceTile(-1, 0, 0), "the game is over")


# --------------------------------------------------------- bad configs
@pytest.mark.parametrize("n", [1, 6, 0])
def test_bad_player_count_is_a_config_error(n):
    with pytest.raises(ConfigError, match=rf"num_players must be an integer from 2 to 5, got {n}"):
        Game(GameConfig(num_players=n))


def test_unknown_expansion_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown expansion 'bogus'"):
        Game(GameConfig(expansions=("base", "bogus")))
    with pytest.raises(ConfigError, match="must be a tuple of keys"):
        GameConfig(expansions="base")


def test_unknown_option_is_a_config_error():
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['speed'\] for expansion 'base'"):
        Game(GameConfig(options={"base": {"speed": 3}}))
    with pytest.raises(ConfigError, match="not enabled"):
        Game(GameConfig(options={"river": {}}))


def test_bad_draw_order_tile_id_is_a_config_error():
    with pytest.raises(ConfigError, match=r"draw_order\[1\]: unknown tile id 'BA-Z'"):
        new_game(["BA-U", "BA-Z"])
    with pytest.raises(ConfigError, match="not a string"):
        Game(GameConfig(), draw_order="BA-U")


def test_too_many_copies_of_a_tile_is_a_config_error():
    with pytest.raises(ConfigError, match=r"draw_order\[1\]: more copies of BA-X than the game has \(1"):
        new_game(["BA-X", "BA-X"])
    # the start tile is one of the four BA-D: only three are left to draw
    new_game(["BA-D"] * 3)
    with pytest.raises(ConfigError, match=r"draw_order\[3\]: more copies of BA-D"):
        new_game(["BA-D"] * 4)
