"""The River II: one scenario per rule (docs/rules/river2.md), then property tests.

Board reminders: the spring R2-spring is the start tile at (0, 0) unrotated, its
river flowing east into (1, 0); x grows east, y south; ``rR`` turns a tile R
quarter turns clockwise (printed side s faces (s + R) % 4).  ``draw_order`` is
the stack after the spring.  Turns: 0 straight, 1 right, 3 left (see
carc_env/expansions/river2.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import brute_legal_placements, new_game, play, scored
from hypothesis import given, settings
from hypothesis import strategies as st

from carc_env.core import (
    ConfigError,
    Expansion,
    FeatureScored,
    Game,
    GameConfig,
    IllegalActionError,
    ScoreItem,
    TileDiscarded,
    TilePlaced,
)
from carc_env.core.expansion import _REGISTRY, register
from carc_env.core.record import replay, to_record
from carc_env.core.tiles import RIVER

RIVER_IDS = {
    "R2-spring",
    "R2-fork",
    "R2-end-city",
    "R2-lake-volcano",
    "R2-city-bridge",
    "R2-cloister",
    "R2-road-bridge-inn",
    "R2-city-road",
    "R2-curve",
    "R2-curve-city",
    "R2-curve-pigs",
    "R2-curve-road",
}
SIDES = "NESW"
DX, DY = (0, 1, 0, -1), (-1, 0, 1, 0)


def river_game(order: list[str], n: int = 2, **options) -> Game:
    return new_game(order, num_players=n, expansions=("base", "river2"), options={"river2": options} if options else {})


def seeded(seed: int, n: int = 2, expansions=("base", "river2"), **options) -> Game:
    opts = {"river2": options} if options else {}
    return Game(GameConfig(n, expansions, opts), seed=seed)


def legal(g: Game) -> set[tuple[int, int, int]]:
    return {(int(x), int(y), int(r)) for x, y, r in g.legal_tile_placements()}


# ------------------------------------------------------------------- setup
def test_spring_is_the_start_tile():
    g = seeded(1)
    assert g.describe_cell(0, 0) == "(0,0) R2-spring r0"
    assert len(g.board) == 1
    # every base start tile stays in the main stack (O7 default): 71 + 1 base tiles, 11 river tiles
    counts = dict(zip([t.id for t in g.rules.tiles], g.remaining_counts().tolist(), strict=True))
    assert counts["BA-D"] == 4
    assert g.bag_size + 1 == 72 + 11
    assert g.tile_id == "R2-fork"


def test_bag_order_fork_first_then_river_then_lake_then_normal():
    for seed in range(5):
        g = seeded(seed)
        order = g.draw_order
        assert order[0] == "R2-fork"
        assert set(order[1:10]) == RIVER_IDS - {"R2-spring", "R2-fork", "R2-lake-volcano"}
        assert order[10] == "R2-lake-volcano"
        assert not any(t.startswith("R2-") for t in order[11:])
        assert len(order) == 11 + 72
    # the middle river tiles and the normal tiles are shuffled
    assert len({tuple(seeded(s).draw_order[1:10]) for s in range(5)}) > 1
    assert len({tuple(seeded(s).draw_order[11:20]) for s in range(5)}) > 1


def test_o11_default_end_city_is_shuffled_among_the_river_tiles():
    positions = {seeded(s).draw_order.index("R2-end-city") for s in range(30)}
    assert positions <= set(range(1, 10)) and len(positions) > 3


def test_o11_option_end_city_last_puts_it_before_the_lake():
    for seed in range(5):
        order = seeded(seed, end_city_last=True).draw_order
        assert order[0] == "R2-fork" and order[9] == "R2-end-city" and order[10] == "R2-lake-volcano"


def test_o7_option_start_tile_after_river():
    for seed in range(5):
        order = seeded(seed, start_tile="after_river").draw_order
        assert order[10] == "R2-lake-volcano" and order[11] == "BA-D"
        assert order.count("BA-D") == 4


def test_bad_river_option_is_refused():
    with pytest.raises(ConfigError, match="start_tile"):
        seeded(0, start_tile="in_river")


# ------------------------------------------------------------ placement
def test_river_tile_must_extend_the_river():
    # The fork fits only where a river edge of it meets the spring's open end at (1,0):
    # r0 (W in, N+E out), r2 (W in, E+S out), r3 (W in, S+N out).  Elsewhere its field
    # edge could match the spring's fields, but it would not continue the river.
    g = river_game(["R2-fork", "BA-B"])
    assert legal(g) == {(1, 0, 0), (1, 0, 2), (1, 0, 3)}
    fork = g.rules.tiles[g.rules.tile_index["R2-fork"]]
    assert (0, -1, 0) in brute_legal_placements(g, fork)  # edge-compatible, but not a continuation
    # issue 23: the error says the river's rule refuses it, not that the edges do not fit
    with pytest.raises(
        IllegalActionError,
        match=r"in rotation 0: its edges \w{4} \(N E S W\) fit, but expansion "
        r"'river2' forbids it: every river tile is placed before any other tile, and a river tile "
        r"continues the river",
    ):
        g.apply("tile 0,-1 r0")


def test_no_immediate_u_turn():
    # Fork at (1,0) r0: its north branch turned left.  A curve at (1,-1) turning left
    # again (r0: S in, W out) would send the river back west beside the spring: vetoed.
    # Turning right (r3: S in, E out) is fine; on the east branch (straight) both turns are.
    g = river_game(["R2-fork", "R2-curve", "BA-B"])
    play(g, ["tile 1,0 r0", "pass"])
    assert g.ext["river2"].ends == [(1, -1, 2, 3), (2, 0, 3, 0)]
    assert legal(g) == {(1, -1, 3), (2, 0, 0), (2, 0, 1)}
    with pytest.raises(IllegalActionError, match=r"\(1,-1\) in rotation 0"):
        g.apply("tile 1,-1 r0")


def test_immediate_u_turn_to_the_right_is_vetoed():
    # The curve at (1,0) turns right (east -> south); the pig curve at (1,1) may not turn
    # right again (r0: N in, W out) but may turn left (r1: N in, E out).
    g = river_game(["R2-curve", "R2-curve-pigs", "BA-B"])
    play(g, ["tile 1,0 r0", "pass"])
    assert g.ext["river2"].ends == [(1, 1, 0, 1)]
    assert legal(g) == {(1, 1, 1)}


def test_same_turn_after_a_straight_tile_is_allowed():
    # right (1,0), straight (1,1), right again (1,2): not an immediate U-turn (HiG).
    g = river_game(["R2-curve", "R2-cloister", "R2-curve-pigs", "BA-B"])
    play(g, ["tile 1,0 r0", "pass", "tile 1,1 r1", "pass"])
    assert g.ext["river2"].ends == [(1, 2, 0, 0)]
    assert (1, 2, 0) in legal(g)
    play(g, ["tile 1,2 r0", "pass"])
    assert g.ext["river2"].ends == [(0, 2, 1, 1)]


def test_branches_never_join_and_an_unplaceable_river_tile_is_removed():
    # Fork at (1,0); north branch turns right at (1,-1) towards (2,-1); east branch turns
    # left at (2,0) towards (2,-1).  A tile in (2,-1) would join the two branches, and both
    # open ends point there, so R2-curve-road fits nowhere: it is removed, BA-B is drawn.
    g = river_game(["R2-fork", "R2-curve", "R2-curve-pigs", "R2-curve-road", "BA-B"])
    play(g, ["tile 1,0 r0", "pass", "tile 1,-1 r3", "pass", "tile 2,0 r0"])
    assert sorted(g.ext["river2"].ends) == [(2, -1, 2, 3), (2, -1, 3, 1)]
    ev = g.apply("pass")
    assert [e.tile for e in ev if isinstance(e, TileDiscarded)] == ["R2-curve-road"]
    assert g.tile_id == "BA-B"


def test_joining_placement_is_vetoed_even_when_edges_match():
    g = river_game(["R2-fork", "R2-curve", "R2-curve-pigs", "R2-curve-road", "BA-B"])
    play(g, ["tile 1,0 r0", "pass", "tile 1,-1 r3", "pass", "tile 2,0 r0"])
    road = g.rules.tiles[g.rules.tile_index["R2-curve-road"]]
    assert (2, -1, 0) in brute_legal_placements(g, road)  # W and S river edges both match


def test_non_river_tile_cannot_be_placed_while_river_tiles_remain():
    g = river_game(["R2-fork", "BA-B", "R2-curve", "BA-U"])
    ev = g.apply("tile 1,0 r0")
    ev += g.apply("pass")
    assert [e.tile for e in ev if isinstance(e, TileDiscarded)] == ["BA-B"]
    assert g.tile_id == "R2-curve"
    play(g, ["tile 2,0 r0", "pass"])
    assert g.tile_id == "BA-U" and len(legal(g)) > 0  # the river is done: normal tiles go anywhere


def test_no_follower_on_the_river():
    g = river_game(["R2-cloister", "BA-B"])
    g.apply("tile 1,0 r0")
    tile = g.rules.tiles[g.rules.tile_index["R2-cloister"]]
    assert sorted(tile.segments[i].name for i in g.legal_follower_spots()) == ["f1", "f2", "m"]
    with pytest.raises(IllegalActionError, match="w1"):
        g.apply("follower w1")


def test_river_tiles_score_normally():
    # The river flows into a city (R2-end-city at (1,0)); BA-E at (2,0) r3 closes it.
    g = river_game(["R2-end-city", "BA-E"])
    play(g, ["tile 1,0 r0", "follower c1"])
    ev = play(g, ["tile 2,0 r3", "pass"])
    (s,) = scored(ev)
    assert s.kind == "city" and s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),)
    assert s.points == (4, 0)


def test_fields_split_by_the_river_and_wrapping_round_the_spring():
    # Fork r0 at (1,0): its NE corner field (between the north and east branches) is on its
    # own; its NW corner and south fields both touch the spring, whose field wraps round
    # the water, so they are one field.
    g = river_game(["R2-fork", "BA-B"])
    g.apply("tile 1,0 r0")
    f = {name: g.find(g.node_of(1, 0, name)) for name in ("f1", "f2", "f3")}
    spring = g.find(g.node_of(0, 0, "f1"))
    assert f["f1"] == f["f3"] == spring
    assert f["f2"] != spring


def test_city_bridge_is_one_city_with_a_field_under_it_on_each_bank():
    g = river_game(["R2-city-bridge", "BA-B"])
    g.apply("tile 1,0 r1")  # river W-E, city N-S across it
    c = g.find(g.node_of(1, 0, "c1"))
    assert g.open[c] == 2 and len(g.tiles[c]) == 1
    north, south = g.find(g.node_of(1, 0, "f2")), g.find(g.node_of(1, 0, "f1"))
    assert north == south == g.find(g.node_of(0, 0, "f1"))  # both banks meet round the spring


def test_farmer_scores_a_completed_city_across_the_river():
    # P0 farms the end-city's north bank; P1 closes the city.  At the end the field (both
    # banks, joined round the spring) borders one completed city: 3 points.
    g = river_game(["R2-end-city", "BA-E"])
    play(g, ["tile 1,0 r0", "follower f1"])
    ev = play(g, ["tile 2,0 r3", "pass"])
    assert g.over
    (s,) = scored(ev)
    assert s.kind == "field" and s.final
    assert s.items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert g.scores == [3, 0]


def test_lake_gives_no_follower_and_an_extra_turn():
    # P0 places the lake: no follower decision, then P0 plays again (O10: a full turn,
    # follower allowed on the second tile).
    g = river_game(["R2-lake-volcano", "BA-U", "BA-U"])
    g.apply("tile 1,0 r0")
    assert g.phase == "tile" and g.player == 0 and g.tile_id == "BA-U"
    g.apply("tile 0,1 r0")
    assert g.phase == "follower" and g.player == 0
    g.apply("follower r1")
    assert g.player == 1 and g.turn_player == 1


def test_o10_option_without_the_lake_turn():
    g = river_game(["R2-lake-volcano", "BA-U"], lake_extra_turn=False)
    g.apply("tile 1,0 r0")
    assert g.phase == "follower"
    g.apply("follower f1")
    assert g.player == 1


# --------------------------------------------------- combination with the Count
def test_o6_river_with_count_spring_east_of_the_block():
    g = Game(GameConfig(2, ("base", "river2", "count")), seed=3)
    assert g.describe_cell(2, -1) == "(2,-1) R2-spring r0"
    assert g.describe_cell(1, -1) == "(1,-1) CO4 r0"
    assert len(g.board) == 13
    assert g.tile_id == "R2-fork"
    assert {(x, y) for x, y, _ in legal(g)} == {(3, -1)}


def test_two_start_layouts_without_a_combined_setup_are_refused():
    @register
    class OtherStart(Expansion):
        KEY = "test_other_start"
        REPLACES_START = True

    try:
        with pytest.raises(ConfigError, match="start layout"):
            Game(GameConfig(2, ("base", "river2", "test_other_start")))
    finally:
        _REGISTRY.pop("test_other_start")


# ------------------------------------------------------------------ properties
def check_river(g: Game) -> None:
    """River continuity, no join and no immediate U-turn, from the final board alone."""
    rivers: dict[tuple[int, int], list[int]] = {}
    order: list[tuple[int, int]] = []
    for x, y, t, r, _ in g.placements:
        tile = g.rules.tiles[t]
        if any(s.kind == RIVER for s in tile.segments):
            rivers[(x, y)] = [s for s in range(4) if tile.edges[(s - r) % 4] == "I"]
            order.append((x, y))
    if not rivers:
        return
    # river tiles are all placed before any other tile (after the setup tiles)
    kinds = ["I" in g.rules.tiles[t].edges for _, _, t, _, _ in g.placements]
    first_plain = next((i for i, k in enumerate(kinds) if not k and i >= len(g._start_tiles_used)), len(kinds))
    assert all(not k for k in kinds[first_plain:])
    # adjacency graph of river edges
    links = 0
    for (x, y), sides in rivers.items():
        for s in sides:
            nb = (x + DX[s], y + DY[s])
            if nb in g.board:
                assert nb in rivers and (s + 2) % 4 in rivers[nb], f"river edge at {(x, y)} {SIDES[s]} meets no river"
                links += 1
    assert links // 2 == len(rivers) - 1, "the river is not one tree (joined branches or a gap)"
    # walk from the spring; each tile after the first was placed touching its parent
    spring = order[0]
    stack = [(spring, None, 0)]
    seen = {spring}
    while stack:
        cell, entry, before = stack.pop()
        x, y = cell
        for s in rivers[cell]:
            if s == entry:
                continue
            turn = 0 if entry is None else (s - (entry + 2)) % 4
            if entry is not None and turn and turn == before:
                raise AssertionError(f"immediate U-turn at {cell}")
            nb = (x + DX[s], y + DY[s])
            if nb in rivers and nb not in seen:
                seen.add(nb)
                stack.append((nb, (s + 2) % 4, turn))
    assert seen == set(rivers)


def random_playout(g: Game, seed: int) -> Game:
    rng = np.random.default_rng(seed)
    while not g.over:
        acts = g.legal_actions()
        assert acts, f"phase {g.phase} offers no action"
        g.apply(acts[int(rng.integers(len(acts)))])
        assert g.followers_conserved()
    return g


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_random_river_games(seed, players):
    g = random_playout(Game(GameConfig(players, ("base", "river2")), seed=seed), seed)
    check_river(g)
    assert replay(to_record(g)).scores == g.scores


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_random_river_and_count_games(seed, players):
    g = random_playout(Game(GameConfig(players, ("base", "river2", "count")), seed=seed), seed)
    check_river(g)
    assert replay(to_record(g)).scores == g.scores


def test_events_name_placed_river_tiles():
    g = river_game(["R2-fork", "BA-B"])
    ev = g.apply("tile 1,0 r2")
    assert ev[0] == TilePlaced(0, "R2-fork", 1, 0, 2)
    assert not [e for e in ev if isinstance(e, FeatureScored)]
