"""King & Robber Baron: one rule per scenario (docs/rules/king_robber.md).

Forced draw orders, scripted moves, exact expected points computed by hand.
Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from _expansion_games import SETTINGS, configs, play_random, seeds
from _helpers import play
from hypothesis import given

from carc_env.core import (
    FeatureCompleted,
    FeatureScored,
    FigureMoved,
    Game,
    GameConfig,
    PointsAwarded,
    ScoreItem,
)
from carc_env.core.expansion import _REGISTRY, Expansion, register
from carc_env.core.tiles import CITY, FIELD, ROAD, load_tile_file, tile_file_path

KR = ("base", "king_robber")


def game(order: list[str], expansions: tuple[str, ...] = KR) -> Game:
    return Game(GameConfig(2, expansions), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


# ----------------------------------------------------------------- tile data
def test_tile_file_has_the_five_land_tiles():
    tf = load_tile_file(tile_file_path("king_robber.toml"))
    assert [(t.id, t.count) for t in tf.tiles] == [
        ("KR-cloister-city", 1),
        ("KR-road-city", 1),
        ("KR-city-2roads", 1),
        ("KR-bigcity-2gates", 1),
        ("KR-crossing-cities", 1),
    ]
    g = Game(GameConfig(2, KR), seed=0)
    assert g.bag_size + 1 == 71 + 5  # the drawn tile is not in the bag


def test_crossing_cities_tile_has_two_enclosed_fields_each_bordering_both_cities():
    tf = load_tile_file(tile_file_path("king_robber.toml"))
    tile = next(t for t in tf.tiles if t.id == "KR-crossing-cities")
    cities = [i for i, s in enumerate(tile.segments) if s.kind == CITY]
    fields = [s for s in tile.segments if s.kind == FIELD]
    assert len(cities) == 2 and len(fields) == 2
    for f in fields:
        assert f.halves == () and sorted(f.cities) == cities


# --------------------------------------------------------------------- King
# T1 P0 closes the start city (2 tiles); T2 P1 opens a city at (1,-1); T3 P0
# extends the road; T4 P1 closes the (1,-1)/(1,-2) city (2 tiles, equal);
# T5-T7 build a band city west of (0,-1); T8 P1 closes it (3 tiles, larger).
KING_ORDER = ["BA-E", "BA-E", "BA-U", "BA-E", "BA-E", "BA-U", "BA-G", "BA-E"]
KING_MOVES = [
    "tile 0,-1 r2",
    "pass",  # T1 P0: closes the start city
    "tile 1,-1 r0",
    "pass",  # T2 P1: city cap facing north
    "tile 1,0 r0",
    "pass",  # T3 P0
    "tile 1,-2 r2",
    "pass",  # T4 P1: closes a 2-tile city
    "tile -1,-1 r3",
    "pass",  # T5 P0: cap facing west
    "tile 2,0 r0",
    "pass",  # T6 P1
    "tile -2,-1 r0",
    "pass",  # T7 P0: band west-east
    "tile -3,-1 r1",
    "pass",  # T8 P1: closes a 3-tile city
]


def test_first_completed_city_takes_the_king_even_unoccupied():
    g = game(KING_ORDER)
    ev = play(g, KING_MOVES[:2])
    assert [(e.kind, e.size, e.occupied) for e in of(ev, FeatureCompleted)] == [("city", 2, False)]
    assert of(ev, FeatureScored) == []
    assert of(ev, FigureMoved) == [FigureMoved("king", 0, -1, "completed a city of 2 tiles")]
    st = g.ext["king_robber"]
    assert (st.king, st.king_size, st.robber, st.robber_size) == (0, 2, -1, 0)


def test_a_city_of_equal_size_does_not_take_the_king():
    g = game(KING_ORDER)
    play(g, KING_MOVES[:6])
    ev = play(g, KING_MOVES[6:8])  # T4: P1 closes another 2-tile city
    assert [(e.kind, e.size) for e in of(ev, FeatureCompleted)] == [("city", 2)]
    assert of(ev, FigureMoved) == []
    assert (g.ext["king_robber"].king, g.ext["king_robber"].king_size) == (0, 2)


def test_a_strictly_larger_city_takes_the_king():
    g = game(KING_ORDER)
    play(g, KING_MOVES[:14])
    ev = play(g, KING_MOVES[14:16])  # T8: P1 closes a 3-tile city
    assert [(e.kind, e.size) for e in of(ev, FeatureCompleted)] == [("city", 3)]
    assert of(ev, FigureMoved) == [FigureMoved("king", 1, 0, "completed a city of 3 tiles")]
    assert (g.ext["king_robber"].king, g.ext["king_robber"].king_size) == (1, 3)


def test_king_scores_one_point_per_completed_city_at_game_end():
    # Three completed cities (2 + 2 + 3 tiles), nobody else scores: P1 holds the King.
    g = game(KING_ORDER)
    ev = play(g, KING_MOVES)
    assert g.over
    (award,) = of(ev, PointsAwarded)
    assert award == PointsAwarded(1, 3, (ScoreItem("king", "3 completed cities x 1", 3),), True)
    assert g.scores == [0, 3]


def test_the_king_goes_to_the_player_completing_the_city_not_its_occupant():
    # T2 P1 extends the start city north with a band (BA-G r1) and takes it;
    # T3 P0 closes it: P1 scores 3 x 2 = 6, P0 takes the King.
    g = game(["BA-U", "BA-G", "BA-E"])
    play(g, ["tile 1,0 r0", "pass", "tile 0,-1 r1", "follower c1"])
    ev = play(g, ["tile 0,-2 r2", "pass"])
    (s,) = of(ev, FeatureScored)
    assert s.points == (0, 6)
    assert of(ev, FigureMoved) == [FigureMoved("king", 0, -1, "completed a city of 3 tiles")]
    (award,) = of(ev, PointsAwarded)  # game over: 1 completed city
    assert award == PointsAwarded(0, 1, (ScoreItem("king", "1 completed city x 1", 1),), True)
    assert g.scores == [1, 6]


def test_several_cities_completed_by_one_tile_compare_the_largest():
    # North of the start: a column of cities; BA-H (caps N and S) at (0,-2) closes
    # the start city (0,0),(0,-1),(0,-2) = 3 tiles and the city (0,-2)..(0,-5) = 4
    # tiles at once.  Pennants (BA-F) do not count for the size.
    order = ["BA-F", "BA-U", "BA-B", "BA-B", "BA-B", "BA-F", "BA-G", "BA-E", "BA-H"]
    g = game(order)
    play(
        g,
        [
            "tile 0,-1 r1",
            "pass",  # P0: band N-S (pennant)
            "tile 1,0 r0",
            "pass",  # P1
            "tile 1,-1 r0",
            "pass",  # P0: cloisters as fillers
            "tile 1,-2 r0",
            "pass",  # P1
            "tile 1,-3 r0",
            "pass",  # P0
            "tile 0,-3 r1",
            "pass",  # P1: band N-S (pennant)
            "tile 0,-4 r1",
            "pass",  # P0: band N-S
            "tile 0,-5 r2",
            "pass",  # P1: cap facing south
        ],
    )
    assert g.ext["king_robber"].king == -1
    # P0: BA-H turned r2 closes both; its first city (c1, now facing south) is the smaller
    ev = play(g, ["tile 0,-2 r2", "pass"])
    assert sorted(e.size for e in of(ev, FeatureCompleted) if e.kind == "city") == [3, 4]
    assert of(ev, FigureMoved) == [FigureMoved("king", 0, -1, "completed a city of 4 tiles")]
    assert (g.ext["king_robber"].king, g.ext["king_robber"].king_size) == (0, 4)


# ------------------------------------------------------------------- Robber
# T1 P0 ends the start road at a junction (1,0); T2 P1 closes it at (-1,0):
# 3 tiles.  T3-T5 run a road south from the junction: (1,1), (1,2), closed by
# P0's junction at (1,3): 4 tiles.
ROBBER_ORDER = ["BA-W", "BA-W", "BA-U", "BA-U", "BA-W"]
ROBBER_MOVES = [
    "tile 1,0 r0",
    "pass",  # T1 P0: junction
    "tile -1,0 r0",
    "pass",  # T2 P1: junction, closes (-1,0)-(1,0)
    "tile 1,1 r1",
    "pass",  # T3 P0: straight N-S
    "tile 1,2 r1",
    "pass",  # T4 P1
    "tile 1,3 r2",
    "pass",  # T5 P0: junction, closes (1,0)-(1,3)
]


def test_first_completed_road_takes_the_robber_baron():
    g = game(ROBBER_ORDER)
    play(g, ROBBER_MOVES[:2])
    ev = play(g, ROBBER_MOVES[2:4])
    assert [(e.kind, e.size, e.occupied) for e in of(ev, FeatureCompleted)] == [("road", 3, False)]
    assert of(ev, FigureMoved) == [FigureMoved("robber", 1, -1, "completed a road of 3 tiles")]
    st = g.ext["king_robber"]
    assert (st.robber, st.robber_size, st.king) == (1, 3, -1)


def test_a_strictly_longer_road_takes_the_robber_baron_and_scores_one_per_completed_road():
    g = game(ROBBER_ORDER)
    play(g, ROBBER_MOVES[:8])
    ev = play(g, ROBBER_MOVES[8:])
    assert [(e.kind, e.size) for e in of(ev, FeatureCompleted)] == [("road", 4)]
    assert of(ev, FigureMoved) == [FigureMoved("robber", 0, 1, "completed a road of 4 tiles")]
    # Game over: two completed roads; the open roads east of (1,0) and round (1,3) do not count.
    (award,) = of(ev, PointsAwarded)
    assert award == PointsAwarded(0, 2, (ScoreItem("robber", "2 completed roads x 1", 2),), True)
    assert g.scores == [2, 0]


def test_road_ending_at_a_city_gate_of_a_kr_tile_is_completed():
    # KR-road-city at (1,0): its west road ends at the city gate.  P0 puts a
    # thief on it; P1 closes the west end: 3 tiles for P0, the Robber for P1.
    g = game(["KR-road-city", "BA-W"])
    play(g, ["tile 1,0 r0", "follower r1"])
    ev = play(g, ["tile -1,0 r0", "pass"])
    (s,) = [e for e in of(ev, FeatureScored) if not e.final]
    assert s.items == (ScoreItem("tiles", "3 road tiles x 1", 3),)
    assert s.points == (3, 0)
    assert of(ev, FigureMoved) == [FigureMoved("robber", 1, -1, "completed a road of 3 tiles")]
    assert g.scores == [3, 1]


# ------------------------------------------------------- the crossing tile (O5)
def test_crossing_cities_tile_holds_two_separate_cities():
    # KR-crossing-cities at (0,-1): its N-S city joins the start city; BA-E at
    # (0,-2) closes it (3 tiles) while the W-E city stays open.
    g = game(["KR-crossing-cities", "BA-E"])
    play(g, ["tile 0,-1 r0", "follower c1"])
    ev = play(g, ["tile 0,-2 r2", "pass"])
    (done,) = [e for e in of(ev, FeatureCompleted)]
    assert (done.kind, done.size, done.occupied) == ("city", 3, False)
    west_east = g.find(g.node_of(0, -1, "c1"))
    assert not g.is_completed(west_east) and g.open[west_east] == 2
    # Game over: the knight on the open W-E city scores 1 tile x 1.
    (final,) = [e for e in of(ev, FeatureScored) if e.final]
    assert final.items == (ScoreItem("tiles", "1 city tile x 1", 1),)
    assert g.scores == [1, 1]  # P1: the King, 1 completed city


def test_crossing_cities_enclosed_field_scores_its_completed_bordering_cities():
    # O5 (JCZ data): a farmer on an enclosed field of the crossing tile borders
    # both of its cities; only the completed N-S city counts: 3 points.
    g = game(["KR-crossing-cities", "BA-E"])
    play(g, ["tile 0,-1 r0", "follower f1"])
    ev = play(g, ["tile 0,-2 r2", "pass"])
    (farm,) = [e for e in of(ev, FeatureScored) if e.kind == "field"]
    assert farm.final and farm.items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert farm.points == (3, 0)
    assert g.scores == [3, 1]


# --------------------------------------------- other expansions' completed cities
@pytest.fixture
def one_more_city():
    """A throw-away expansion counting one completed city outside the union-find."""

    @register
    class OneMoreCity(Expansion):
        KEY = "test_one_more_city"

        def extra_completed(self, game, kind):
            return 1 if kind == CITY else 0

    yield OneMoreCity.KEY
    _REGISTRY.pop(OneMoreCity.KEY)


def test_king_counts_completed_cities_other_expansions_add(one_more_city):
    # As the City of Carcassonne would: 1 completed city on the board + 1 added.
    g = Game(GameConfig(2, (*KR, one_more_city)), seed=0, draw_order=["BA-E"])
    ev = play(g, ["tile 0,-1 r2", "pass"])
    (award,) = of(ev, PointsAwarded)
    assert award.items == (ScoreItem("king", "2 completed cities x 1", 2),)
    assert g.count_completed(CITY) == 2 and g.count_completed(ROAD) == 0


# ------------------------------------------------------------- properties
@SETTINGS
@given(configs(must="king_robber"), seeds, seeds)
def test_random_games_keep_the_king_and_robber_records(config, seed, action_seed):
    g, events = play_random(config, seed, action_seed)
    st = g.ext["king_robber"]
    for kind, holder, size, figure in (
        ("city", st.king, st.king_size, "king"),
        ("road", st.robber, st.robber_size, "robber"),
    ):
        sizes = [e.size for e in events if isinstance(e, FeatureCompleted) and e.kind == kind]
        assert size == max(sizes, default=0)
        moves = [e for e in events if isinstance(e, FigureMoved) and e.figure == figure]
        assert holder == (moves[-1].player if moves else -1)
        assert all(a.player != b.player for a, b in pairwise(moves))
        awards = [e for e in events if isinstance(e, PointsAwarded) and e.items[0].kind == figure]
        if holder < 0:
            assert awards == []
        else:
            (award,) = awards
            assert award.player == holder and award.points == len(sizes)
