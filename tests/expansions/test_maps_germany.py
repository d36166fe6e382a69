"""Carcassonne Maps - Germany: one scenario per rule and per default (docs/rules/maps_germany.md).

The board is carc_env/data/maps/germany.toml (an approximation of the printed
board; coordinates are its columns x and rows y).  The scenarios were worked
out with the start-square tiles turned by ``start_orientation="fixed"`` (the
default before issue 23), and the helpers :func:`germany` and :func:`mini` pin
it, so that they keep testing the rule each is named after; the default
``"open"`` has its own tests (``test_start_orientation_*``).  Reminders of that
data: Rostock (8,2) holds the start tile BA-D unrotated (its city faces
the Baltic at (8,1), its road runs west-east); the first tile of a forced
draw order goes on Stuttgart (4,14).  Berlin is the block (10..11, 5..6) with
open city edges west of (10,5) and south of (11,6); Hamburg (5..6, 3..4).
Denmark's road (2 coats of arms) lies at (4,-1) beyond the north side of
(4,0); France's city (2 coats) at (1,14), west of (2,14); Switzerland's road
(1 coat) at (2,17), south of (2,16).  ``rR`` turns a tile R quarter turns
clockwise (printed side s faces (s + R) % 4).  Players alternate P0, P1.

A few situations the Germany data has no place for use tests/data/maps/mini.toml.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _helpers import play, scored

from carc_env.core import (
    ConfigError,
    Game,
    GameConfig,
    IllegalActionError,
    PointsAwarded,
    ScoreItem,
)
from carc_env.core.config import ruleset
from carc_env.core.record import replay, to_record
from carc_env.core.tiles import CITY, ROAD
from carc_env.expansions.maps_germany.mapfile import load_map_file

MAP = ("base", "maps_germany")
MINI = str(Path(__file__).parents[1] / "data" / "maps" / "mini.toml")
GERMANY = load_map_file("germany")


def germany(order: list[str], n: int = 2, seed: int = 0, expansions=MAP, **opts) -> Game:
    opts.setdefault("start_orientation", "fixed")  # the turn the scenarios were worked out with
    return Game(GameConfig(n, expansions, {"maps_germany": opts}), seed=seed, draw_order=order)


def mini(order: list[str], **opts) -> Game:
    return germany(order, map_file=MINI, start_squares="A,B", **opts)


def legal(g: Game) -> set[tuple[int, int, int]]:
    return {tuple(int(v) for v in row) for row in g.legal_tile_placements()}


def rotations_at(g: Game, x: int, y: int) -> set[int]:
    return {r for (cx, cy, r) in legal(g) if (cx, cy) == (x, y)}


def cell(g: Game, x: int, y: int) -> str:
    return g.describe_cell(x, y)


# moves that lead from Rostock to the places of the worked examples
TO_BERLIN = ["tile 8,3 r0", "pass", "tile 8,4 r0", "pass", "tile 8,5 r0", "pass"]  # three BA-B southwards
TO_DENMARK = ["tile 7,2 r3", "pass", "tile 6,2 r0", "pass", "tile 5,2 r0", "pass"]  # BA-V, BA-B, BA-B westwards


# ------------------------------------------------------------------------------ worked examples
def test_example1_completed_large_city_berlin_scores_20():
    """Rule text, Scoring, Example 1: 6 tiles (4 printed squares + 2 placed) x 2 + 4 coats of arms x 2."""
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    play(g, TO_BERLIN)
    play(g, ["tile 9,5 r1", "follower c1"])  # P1 connects Berlin at its west edge
    ev = play(g, ["tile 11,7 r0", "pass"])  # P0 closes its south edge
    (s,) = scored(ev)
    assert s.kind == "city" and not s.final
    assert s.items == (ScoreItem("tiles", "6 city tiles x 2", 12), ScoreItem("coats_of_arms", "4 coats of arms x 2", 8))
    assert s.value == 20 and s.points == (0, 20) and g.scores == [0, 20]
    assert set(s.tiles) == {(10, 5), (11, 5), (10, 6), (11, 6), (9, 5), (11, 7)}


def test_example2_road_ending_in_denmark_scores_8():
    """Example 2: 4 road segments (3 placed + the printed one abroad) + 2 coats of arms x 2."""
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-U"])
    play(g, TO_DENMARK)
    play(g, ["tile 4,2 r1", "follower r1"])  # road north-west: its west end runs into the North Sea
    play(g, ["tile 4,1 r1", "pass"])
    ev = play(g, ["tile 4,0 r1", "pass"])  # the road reaches Denmark's printed road
    (s,) = scored(ev)
    assert s.kind == "road"
    assert s.items == (ScoreItem("tiles", "4 road tiles x 1", 4), ScoreItem("coats_of_arms", "2 coats of arms x 2", 4))
    assert s.points == (0, 8)
    assert set(s.tiles) == {(4, 2), (4, 1), (4, 0), (4, -1)}


def test_example3_city_completed_with_a_printed_city_abroad_scores_10():
    """Example 3: 3 city tiles (2 placed + France's printed city) x 2 + 2 coats of arms x 2."""
    g = germany(["BA-B", "BA-E", "BA-G"])  # BA-B on Stuttgart
    play(g, ["tile 3,14 r3", "follower c1"])  # city facing west
    ev = play(g, ["tile 2,14 r0", "pass"])  # city west-east: joins France
    (s,) = scored(ev)
    assert s.items == (ScoreItem("tiles", "3 city tiles x 2", 6), ScoreItem("coats_of_arms", "2 coats of arms x 2", 4))
    assert s.points == (10, 0)
    assert set(s.tiles) == {(1, 14), (2, 14), (3, 14)}


def test_example4_monastery_at_the_border_scores_5():
    """Example 4: every neighbouring square that exists is filled (4 of them); 1 + 4 neighbours.
    Denmark's printed road (diagonal, at (4,-1)) is not a square and does not count."""
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-U", "BA-B", "BA-B", "BA-B"])
    play(g, TO_DENMARK + ["tile 4,2 r1", "pass", "tile 4,1 r1", "pass", "tile 4,0 r1", "pass"])
    play(g, ["tile 5,1 r0", "pass", "tile 6,1 r0", "pass"])
    ev = play(g, ["tile 5,0 r0", "follower m"])
    (s,) = scored(ev)
    assert s.kind == "cloister"
    assert s.items == (ScoreItem("cloister", "cloister 1 + 4 neighbours", 5),)
    assert s.points == (5, 0)


def test_example5_unfinished_road_abroad_scores_4_at_the_end():
    """Example 5 / final scoring: 3 tiles (2 placed + Switzerland's printed road) + 1 coat of arms x 1."""
    g = germany(["BA-B", "BA-B", "BA-B", "BA-U", "BA-U"])
    play(g, ["tile 3,14 r0", "pass", "tile 3,15 r0", "pass"])
    play(g, ["tile 2,15 r1", "follower r1"])  # road north-south on Freiburg
    ev = play(g, ["tile 2,16 r1", "pass"])  # matches Switzerland; the north end stays open
    assert g.over
    (s,) = scored(ev)
    assert s.final and s.kind == "road"
    assert s.items == (ScoreItem("tiles", "3 road tiles x 1", 3), ScoreItem("coats_of_arms", "1 coat of arms x 1", 1))
    assert s.points == (4, 0)


# ------------------------------------------------------------------------------ placing tiles
def test_tiles_go_only_on_printed_squares():
    g = germany(["BA-U", "BA-U", "BA-U"])
    play(g, ["tile 9,2 r0", "pass"])  # road west-east east of Rostock
    assert (9, 1, 0) in legal(g)  # a square on the Baltic coast
    with pytest.raises(IllegalActionError, match="touches no placed tile"):
        g.apply("tile 10,1 r0")  # sea: not a square
    with pytest.raises(IllegalActionError):
        g.apply("tile 8,1 r0")
    assert all((x, y) in GERMANY.squares for x, y, _ in legal(g))


def test_a_large_city_square_takes_no_tile():
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-C"])
    play(g, TO_BERLIN + ["tile 9,5 r1", "pass"])
    assert not {(x, y) for x, y, _ in legal(g)} & {(10, 5), (11, 5), (10, 6), (11, 6)}
    with pytest.raises(IllegalActionError, match="already taken"):
        g.apply("tile 10,5 r0")
    assert cell(g, 10, 5) == "(10,5) MAP-city-CCCF r1"


def test_a_large_city_joins_the_play_area_when_a_tile_touches_it():
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    play(g, TO_BERLIN[:-1])  # (8,5) placed, BA-E drawn next
    g.apply("pass")
    assert g.tile_id == "BA-E"
    assert not {(x, y) for x, y, _ in legal(g)} & {(11, 7), (10, 7), (10, 4), (12, 6)}  # Berlin not yet connected
    play(g, ["tile 9,5 r1", "pass"])
    assert g.tile_id == "BA-E"
    assert {(11, 7), (10, 7), (10, 4), (11, 4), (12, 6), (9, 6)} <= {(x, y) for x, y, _ in legal(g)}
    assert g.connected_groups == {1}  # Berlin is the second large city of the file


def test_a_tile_next_to_a_large_city_must_match_its_edges():
    """Open city edges need a city edge; the other sides of the block are printed fields (default)."""
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    play(g, TO_BERLIN + ["tile 9,5 r1", "pass"])
    assert rotations_at(g, 11, 7) == {0}  # city north, into Berlin's open edge
    assert rotations_at(g, 10, 7) == {1, 2, 3}  # anything but a city facing Berlin's wall
    with pytest.raises(IllegalActionError, match="do not fit"):
        g.apply("tile 10,7 r0")


def test_a_tile_next_to_a_printed_road_abroad_must_match_it():
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-B"])
    play(g, TO_DENMARK + ["tile 4,2 r1", "pass", "tile 4,1 r1", "pass"])
    assert g.tile_id == "BA-B"
    assert (4, 0) not in {(x, y) for x, y, _ in legal(g)}  # a cloister has no road for Denmark
    g2 = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-U"])
    play(g2, TO_DENMARK + ["tile 4,2 r1", "pass", "tile 4,1 r1", "pass"])
    assert rotations_at(g2, 4, 0) == {1, 3}


def test_anything_may_face_a_neutral_border():
    """Sea and clouds are neutral: a city may face them (and is closed there)."""
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-E"])
    play(g, TO_DENMARK)
    assert rotations_at(g, 4, 2) == {0, 2, 3}  # only the east side (a cloister's field) constrains
    (s,) = scored(play(g, ["tile 4,2 r3", "follower c1"]))  # city west, into the North Sea
    assert s.kind == "city" and s.value == 2 and s.tiles == ((4, 2),)


def test_a_town_is_an_ordinary_square():
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-B"])
    play(g, TO_BERLIN)
    assert (8, 6) in {(x, y) for x, y, _ in legal(g)}  # Magdeburg
    ev = play(g, ["tile 8,6 r0", "pass"])
    assert not [e for e in ev if isinstance(e, PointsAwarded)] and g.scores == [0, 0]
    assert g.turn_player == 0  # no extra turn by default (P1 placed it)


# --------------------------------------------------------------------------------- borders
def test_the_border_closes_a_road():
    """A road between two sea edges is complete at once (Ruegen (9,1): sea west, east, north)."""
    g = germany(["BA-U", "BA-U", "BA-U"])
    play(g, ["tile 9,2 r0", "pass"])
    (s,) = scored(play(g, ["tile 9,1 r0", "follower r1"]))
    assert s.kind == "road" and s.items == (ScoreItem("tiles", "1 road tile x 1", 1),) and s.points == (0, 1)


def test_the_border_closes_a_city():
    g = germany(["BA-U", "BA-U", "BA-E"])
    play(g, ["tile 9,2 r0", "pass"])
    (s,) = scored(play(g, ["tile 9,1 r0", "follower c1"]))
    assert s.kind == "city" and s.items == (ScoreItem("tiles", "1 city tile x 2", 2),)


def test_a_start_tile_city_facing_the_sea_is_complete_from_the_start():
    """Rostock's start tile (unrotated) turns its city to the Baltic: closed at setup, nobody's."""
    g = germany(["BA-U", "BA-U"])
    root = g.find(g.node_of(8, 2, "c1"))
    assert g.is_completed(root) and g.open[root] == 0
    assert g.tiles[root] == {g.board[(8, 2)]} and g.scores == [0, 0] and root not in g.occupants


def test_a_field_is_closed_by_the_border_and_counts_a_completed_large_city():
    """A farmer on the field south of Berlin gets 3 for Berlin at the end; the field does not leak
    into the sea east of (11,7)."""
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    play(g, TO_BERLIN + ["tile 9,5 r1", "pass"])
    ev = play(g, ["tile 11,7 r0", "follower #1"])  # the field of BA-E
    assert g.over
    fields = [s for s in scored(ev) if s.kind == "field"]
    assert len(fields) == 1 and fields[0].final
    assert fields[0].items == (ScoreItem("cities", "1 completed city x 3", 3),) and fields[0].points == (3, 0)


def test_coats_of_arms_give_2_on_completion_and_1_at_the_end():
    """Denmark's road: complete, its 2 coats of arms give 4; unfinished at the end, 2."""
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-U"])
    play(g, TO_DENMARK + ["tile 4,2 r1", "follower r1"])
    (s,) = scored(play(g, ["tile 4,1 r1", "pass", "tile 4,0 r1", "pass"]))
    assert s.items[1] == ScoreItem("coats_of_arms", "2 coats of arms x 2", 4)
    # unfinished: Denmark - (4,0), open to the south, reached from the east
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-B", "BA-B", "BA-U"])
    play(g, TO_DENMARK + ["tile 5,1 r0", "pass", "tile 5,0 r0", "pass"])
    (s,) = scored(play(g, ["tile 4,0 r1", "follower r1"]))
    assert s.final and s.points == (0, 4)
    assert s.items == (ScoreItem("tiles", "2 road tiles x 1", 2), ScoreItem("coats_of_arms", "2 coats of arms x 1", 2))


# -------------------------------------------------------------------------------- buildings
def test_a_monastery_at_the_border_is_incomplete_while_a_square_around_it_is_empty():
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-V", "BA-U", "BA-U", "BA-B", "BA-B", "BA-B"])
    play(g, TO_DENMARK + ["tile 4,2 r1", "pass", "tile 4,1 r1", "pass", "tile 4,0 r1", "pass"])
    play(g, ["tile 5,1 r0", "pass"])
    ev = play(g, ["tile 5,0 r0", "follower m"])  # (6,1) still empty
    assert not [s for s in scored(ev) if not s.final and s.kind == "cloister"]
    assert g.building_target(5, 0) == 4
    (s,) = [s for s in scored(play(g, ["tile 6,1 r0", "pass"])) if s.kind == "cloister"]
    assert s.value == 5 and not s.final


def test_a_monastery_counts_printed_large_city_squares():
    """A cloister at (6,2): 7 squares around it (two of them Hamburg's), the 8th cell is the Baltic."""
    g = germany(["BA-U", "BA-V", "BA-B", "BA-B", "BA-B", "BA-B", "BA-U"])
    play(g, ["tile 7,2 r3", "pass"])
    play(g, ["tile 6,2 r0", "follower m"])
    assert g.building_target(6, 2) == 7
    play(g, ["tile 5,2 r0", "pass", "tile 5,1 r0", "pass", "tile 6,1 r0", "pass"])
    (s,) = [s for s in scored(play(g, ["tile 7,3 r1", "pass"])) if s.kind == "cloister"]
    assert s.items == (ScoreItem("cloister", "cloister 1 + 7 neighbours", 8),) and s.points == (0, 8)


# --------------------------------------------------------------------------- setup and options
def test_setup_start_tile_on_rostock_and_the_first_tile_of_the_bag_on_stuttgart():
    g = germany(["BA-K", "BA-U", "BA-V"])
    n = len(g.layout.pieces)
    assert [g.describe_cell(*p[:2]) for p in g.placements[n:]] == ["(8,2) BA-D r0", "(4,14) BA-K r0"]
    assert g.draw_order == ["BA-K", "BA-U", "BA-V"] and g.bag_size == 1 and g.tile_id == "BA-U"
    assert len(g.placements) == n + 2 == 24 + 9 + 2  # 6 large cities of 4 squares, 9 features abroad


def test_setup_with_three_start_squares():
    g = germany(["BA-K", "BA-X", "BA-V"], start_squares="Erfurt,Rostock,Stuttgart")
    n = len(g.layout.pieces)
    assert [g.describe_cell(*p[:2]) for p in g.placements[n:]] == ["(7,9) BA-D r0", "(8,2) BA-K r0", "(4,14) BA-X r0"]
    assert g.tile_id == "BA-V"


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("Rostock", "2 or 3 different start squares"),
        ("Rostock,Rostock", "2 or 3 different start squares"),
        ("Rostock,Erfurt,Stuttgart,Rostock", "2 or 3 different start squares"),
        ("Rostock,Berlin", "'Berlin' is not a start square of map 'germany'"),
    ],
)
def test_start_squares_must_be_two_or_three_start_squares_of_the_map(value, match):
    with pytest.raises(ConfigError, match=match):
        germany([], start_squares=value)


def test_a_start_tile_is_turned_to_match_printed_features_next_to_it():
    """Mini map: A has a road abroad to the north, so the start tile BA-D (unrotated: city north)
    turns a quarter (road north-south, city east)."""
    g = mini(["BA-E"])
    assert cell(g, 0, 0) == "(0,0) BA-D r1"
    assert cell(g, 0, 2) == "(0,2) BA-E r3"  # city west, to the city abroad


def test_a_royal_gate_on_a_start_square_is_a_placed_gate():
    """Tiles from the bag on start squares are laid by no player but are placed tiles: The Royal
    Gateways records a gate there (after_setup_placement), so a second gate of its type links."""
    g = germany(["RG-king-1", "BA-U"], expansions=(*MAP, "royal_gateways"))
    gates = g.ext["royal_gateways"].gates["king_gate"]
    assert [g.placements[g.node_tile[n]][:2] for n in gates] == [(4, 14)]


def test_a_tile_from_the_bag_that_fits_no_start_square_rotation_is_set_aside():
    g = mini(["BA-B", "BA-E", "BA-A"])
    assert g.ext["maps_germany"].set_aside == ["BA-B"]
    assert cell(g, 0, 2) == "(0,2) BA-E r3" and g.tile_id == "BA-A" and g.bag_size == 0


def test_start_orientation_open_turns_rostocks_city_and_road_to_the_land():
    """Default ``start_orientation="open"``: among the rotations that fit, the start tile is turned so
    that the most of its cities and roads face an empty square, then the fewest city or road sides
    face the border, then the lowest rotation.  Rostock (8,2) has the Baltic north of it: BA-D
    (C R F R) unrotated closes its city against the sea; r1 and r3 leave city and road open but run
    the road into the sea; r2 turns the field to the sea, city south and road west-east."""
    g = Game(GameConfig(2, MAP), seed=0, draw_order=["BA-E", "BA-E", "BA-U"])
    exp = g.rules.by_key["maps_germany"]
    assert [exp.openness(g, "BA-D", 8, 2, r) for r in range(4)] == [(1, -1), (2, -1), (2, 0), (2, -1)]
    assert cell(g, 8, 2) == "(8,2) BA-D r2"
    assert cell(g, 4, 14) == "(4,14) BA-E r0"  # Stuttgart: squares all round, every rotation ties: r0
    root = g.find(g.node_of(8, 2, "c1"))
    assert not g.is_completed(root) and g.open[root] == 1
    # the city can be played: P0 closes it with a cap north (BA-E r0 at (8,3)) and a knight on it
    (s,) = scored(play(g, ["tile 8,3 r0", "follower c1"]))
    assert s.kind == "city" and s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),) and s.points == (4, 0)
    assert g.scores == [4, 0]


def test_start_orientation_open_still_matches_printed_features_next_to_the_square():
    """Mini map: A has a road abroad north; of the rotations that fit (r1, r3) r1 turns the city east
    to the town square T1, r3 west to the border: r1 (as ``"fixed"`` there)."""
    g = Game(GameConfig(2, MAP, {"maps_germany": {"map_file": MINI, "start_squares": "A,B"}}), seed=0,
             draw_order=["BA-E"])  # fmt: skip
    assert cell(g, 0, 0) == "(0,0) BA-D r1" and cell(g, 0, 2) == "(0,2) BA-E r3"


def test_bad_start_orientation_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match=r"start_orientation must be one of \('open', 'fixed', 'random'\)"):
        germany([], start_orientation="turned")


def test_random_start_orientation_uses_the_games_generator_and_fits():
    rots = set()
    for seed in range(12):
        g = Game(GameConfig(2, MAP, {"maps_germany": {"start_orientation": "random"}}), seed=seed)
        k = len(g.layout.pieces)
        rots.add(g.placements[k][3])
        again = Game(GameConfig(2, MAP, {"maps_germany": {"start_orientation": "random"}}), seed=seed)
        assert again.placements == g.placements
    assert len(rots) > 1
    g = Game(GameConfig(2, MAP, {"maps_germany": {"start_orientation": "random", "map_file": MINI,
                                                  "start_squares": "A,B"}}), seed=3)  # fmt: skip
    assert g.placements[len(g.layout.pieces)][3] in (1, 3)  # the road must face the road abroad


def test_nine_followers_per_player_by_default():
    g = germany(["BA-U"])
    assert g.supply == [9, 9] and g.rules.followers == 9
    assert germany(["BA-U"], followers=8).supply == [8, 8]
    g = Game(GameConfig(2, MAP, {"maps_germany": {"followers": 0}}, followers=6), draw_order=["BA-U"])
    assert g.supply == [6, 6]
    assert Game(GameConfig(2, MAP, followers=9), draw_order=["BA-U"]).supply == [9, 9]
    with pytest.raises(ConfigError, match="GameConfig.followers=5 conflicts with option maps_germany.followers=9"):
        Game(GameConfig(2, MAP, followers=5))


def test_recommended_tile_mix_is_one_and_a_half_base_games_115_tiles():
    def total(**opts) -> int:
        rules = ruleset(GameConfig(2, MAP, {"maps_germany": opts} if opts else {}))
        return sum(t.count for t in rules.tiles)

    assert total() == 115
    assert total(tile_mix="base_x1") == 72 and total(tile_mix="base_x2") == 144
    rules = ruleset(GameConfig(2, MAP))
    counts = {t.id: t.count for t in rules.tiles}
    assert counts["BA-V"] == 14 and counts["BA-C"] == 2 and counts["BA-D"] == 6  # 9 x 1.5, 1 x 1.5, 4 x 1.5
    assert all(counts[t.id] == 0 for t in rules.layout.tile_types)
    with_shrines = ruleset(GameConfig(2, (*MAP, "shrines")))
    assert sum(t.count for t in with_shrines.tiles) == 120  # other expansions' tiles as they are
    g = Game(GameConfig(2, MAP), seed=5)
    assert g.bag_size == 115 - 2 - 1  # the start tile and Stuttgart's tile are on the board, one is drawn
    with pytest.raises(ConfigError, match="tile_mix"):
        germany([], tile_mix="base_x3")


@pytest.mark.parametrize("other", ["count", "river2"])
def test_expansions_with_their_own_start_layout_are_refused(other):
    with pytest.raises(ConfigError, match=f"'maps_germany'.*'{other}'|'{other}'.*'maps_germany'"):
        ruleset(GameConfig(2, ("base", "maps_germany", other)))


def test_the_map_file_is_an_option_and_bad_files_fail_at_configuration(tmp_path):
    assert GERMANY.layout_status == "approximate_geographic"
    assert "approximation" in GERMANY.description.lower()
    with pytest.raises(ConfigError, match="maps_germany.map_file: .*not found"):
        germany([], map_file=str(tmp_path / "nope.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text(Path(MINI).read_text().replace('grid = ["STT#"', 'grid = ["STX#"'))
    with pytest.raises(ConfigError, match="unknown letter 'X'"):
        germany([], map_file=str(bad), start_squares="A,B")


def test_large_city_closed_edges_may_be_neutral_borders():
    """Option large_city_closed_edges="border": anything may face a closed side of the block, and a
    city facing it is closed there."""
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"], large_city_closed_edges="border")
    play(g, TO_BERLIN + ["tile 9,5 r1", "pass"])
    assert rotations_at(g, 10, 7) == {0, 1, 2, 3}
    (s,) = scored(play(g, ["tile 10,7 r0", "follower c1"]))  # its city faces Berlin's closed side
    assert s.kind == "city" and s.value == 2 and s.tiles == ((10, 7),)


# ------------------------------------------------------------------------------ town variants
def test_town_variant_extra_turn_is_the_players_decision_and_comes_once_per_turn():
    """Variant 1 ("if you cover a town with a tile, you *may* immediately take another turn"; only once
    per turn).  Mini map: P0 covers T1 and is asked; P0 takes the extra turn, covers T2 in it, and
    is not asked again."""
    g = mini(["BA-E", "BA-N", "BA-B", "BA-U"], town_extra_turn=True)
    play(g, ["tile 1,0 r3", "pass"])
    assert g.phase == "map_extra_turn" and g.player == 0 and g.turn_player == 0
    assert sorted(g.action_text(a) for a in g.legal_actions()) == ["extra_turn", "pass"]
    play(g, ["extra_turn"])
    assert g.phase == "tile" and g.turn_player == 0 and g.player == 0 and g.tile_id == "BA-B"
    play(g, ["tile 2,0 r0", "pass"])  # T2 covered in the extra turn: no second one, no decision
    assert g.phase == "tile" and g.turn_player == 1 and g.player == 1 and g.tile_id == "BA-U"
    assert g.scores == [0, 0]


def test_town_variant_extra_turn_may_be_declined():
    """P0 covers T1 with the city cap BA-N and declines: P1 plays next (event ExtraTurnDeclined); the
    cap's city against L's open edge closes nothing, so no points change hands."""
    from carc_env.expansions.maps_germany import ExtraTurnDeclined

    g = mini(["BA-E", "BA-N", "BA-B", "BA-U"], town_extra_turn=True)
    play(g, ["tile 1,0 r3", "pass"])
    ev = play(g, ["pass"])
    assert [e for e in ev if isinstance(e, ExtraTurnDeclined)] == [ExtraTurnDeclined(0)]
    assert g.phase == "tile" and g.turn_player == 1 and g.player == 1 and g.tile_id == "BA-B"
    play(g, ["tile 2,0 r0", "pass"])  # P1 covers T2: P1 is asked now
    assert g.phase == "map_extra_turn" and g.player == 1
    assert g.scores == [0, 0]


def test_town_variant_extra_turn_always_taken_with_the_option_off():
    """town_extra_turn_optional=False (the engine before issue 23): no decision, the extra turn follows."""
    g = mini(["BA-E", "BA-N", "BA-B", "BA-U"], town_extra_turn=True, town_extra_turn_optional=False)
    assert "map_extra_turn" not in g.rules.phases
    play(g, ["tile 1,0 r3", "pass"])
    assert g.phase == "tile" and g.turn_player == 0 and g.player == 0 and g.tile_id == "BA-B"
    play(g, ["tile 2,0 r0", "pass"])
    assert g.turn_player == 1 and g.player == 1


def test_town_variant_no_extra_turn_decision_when_no_tile_is_left():
    """Covering a town with the last tile: the game ends, nothing to decide."""
    g = mini(["BA-E", "BA-N"], town_extra_turn=True)
    play(g, ["tile 1,0 r3", "pass"])
    assert g.over and g.phase != "map_extra_turn"


def test_town_variant_penalty_costs_2_points():
    g = mini(["BA-E", "BA-N", "BA-B"], town_penalty=True)
    ev = g.apply("tile 1,0 r3")
    (pa,) = [e for e in ev if isinstance(e, PointsAwarded)]
    assert pa == PointsAwarded(0, -2, (ScoreItem("town", "tile on the town T1", -2),), False)
    assert g.scores == [-2, 0]


def test_town_variant_road_bonus_2_per_uncovered_town_next_to_the_road():
    """Mini map: the road abroad - A - (0,1) runs next to the uncovered town T1: +2."""
    g = mini(["BA-E", "BA-A"], town_road_bonus=True)
    (s,) = scored(play(g, ["tile 0,1 r2", "follower r1"]))
    assert s.items == (ScoreItem("tiles", "3 road tiles x 1", 3), ScoreItem("coats_of_arms", "1 coat of arms x 2", 2),
                       ScoreItem("towns", "1 uncovered town x 2", 2))  # fmt: skip
    g = mini(["BA-E", "BA-A"])
    (s,) = scored(play(g, ["tile 0,1 r2", "follower r1"]))
    assert s.value == 5  # off by default


# ------------------------------------------------------------------------------------- core
def test_games_without_a_map_are_unchanged():
    rules = ruleset(GameConfig())
    assert rules.layout is None and rules.followers == 7 and [t.count for t in rules.tiles][:4] == [2, 4, 1, 4]
    g = Game(GameConfig(), seed=3)
    assert g.layout is None and g.placements == [(0, 0, rules.tile_index["BA-D"], 0, 0)]


def test_a_recorded_map_game_replays():
    g = Game(GameConfig(3, (*MAP, "shrines"), {"maps_germany": {"start_orientation": "random"}}), seed=11)
    rng = np.random.default_rng(2)
    while not g.over:
        acts = g.legal_actions()
        g.apply(acts[rng.integers(len(acts))])
    again = replay(json.loads(json.dumps(to_record(g))))
    assert again.scores == g.scores and again.placements == g.placements


def test_coats_of_arms_count_only_printed_features_of_the_scored_feature():
    g = germany(["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    play(g, TO_BERLIN + ["tile 9,5 r1", "pass"])
    exp = g.rules.by_key["maps_germany"]
    berlin = g.find(g.node_of(10, 5, "c1"))
    assert g.kind[berlin] == CITY and exp.coats_of_arms(g, berlin) == 4
    denmark = g.find(g.node_of(4, -1, "r1"))
    assert g.kind[denmark] == ROAD and exp.coats_of_arms(g, denmark) == 2
    assert exp.coats_of_arms(g, g.find(g.node_of(8, 2, "r1"))) == 0
