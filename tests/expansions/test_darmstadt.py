"""Darmstadt promo: one rule per scenario (docs/rules/darmstadt.md).

Forced draw orders, scripted moves, exact expected points computed by hand.
Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.

Church scenarios put DA-st-mary at (0,1) turned r1 (fields N and E, one road
S-W passing the church) and surround it:

    y\\x   -1        0            1
    0     U r0     start        U r0
    1     U r0     CHURCH r1    V r3
    2     V r0     V r2         V r1

(U r0: road W-E; V r0: road S-W, r1: W-N, r2: N-E, r3: E-S.)  The church
completes with the last of its 8 neighbours; all roads stay open.
"""

from __future__ import annotations

import pytest
from _expansion_games import SETTINGS, configs, play_random, seeds
from _helpers import play
from hypothesis import given

from carc_env.core import (
    FeatureCompleted,
    FeatureScored,
    Game,
    GameConfig,
    PointsAwarded,
    ScoreItem,
)
from carc_env.core.tiles import BUILDING, CITY, load_tile_file, tile_file_path

DA = ("base", "darmstadt")
DARMSTADTIUM = ScoreItem("darmstadtium", "Darmstadtium +3 to the majority", 3)


def game(order: list[str], options: dict | None = None) -> Game:
    return Game(GameConfig(2, DA, {"darmstadt": options} if options else {}), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def church_bonus(x: int, y: int) -> tuple[ScoreItem, ...]:
    return (ScoreItem("church_bonus", f"church at ({x},{y}): most followers nearby +3", 3),)


# ----------------------------------------------------------------- tile data
def test_tile_file_has_the_three_tiles():
    tf = load_tile_file(tile_file_path("darmstadt.toml"))
    assert [(t.id, t.count) for t in tf.tiles] == [("DA-darmstadtium", 1), ("DA-st-louis", 1), ("DA-st-mary", 1)]
    assert tf.buildings == ("church",)
    (city,) = tf.tiles[0].segments
    assert city.kind == CITY and "darmstadtium" in city.tags and city.edges == (0, 1, 2, 3)
    for t in tf.tiles[1:]:
        assert [s.building for s in t.segments if s.kind == BUILDING] == ["church"]


@pytest.mark.parametrize(("remove", "tiles", "plain_cloisters"), [(True, 71 + 3 - 2, 2), (False, 71 + 3, 4)])
def test_two_base_cloisters_leave_the_stack_by_default(remove, tiles, plain_cloisters):
    g = Game(GameConfig(2, DA, {"darmstadt": {"remove_base_cloisters": remove}}), seed=5)
    counts = g.remaining_counts()
    counts[g.current_tile] += 1
    assert counts.sum() == tiles
    assert counts[g.rules.tile_index["BA-B"]] == plain_cloisters
    assert counts[g.rules.tile_index["BA-A"]] == 2


# -------------------------------------------------------------- Darmstadtium
def test_completed_city_with_the_darmstadtium_gives_its_majority_three_more():
    # DA-darmstadtium at (0,-1) (P0's knight) extends the start city; three caps
    # close it: 5 tiles x 2 + 3 = 13.
    g = game(["DA-darmstadtium", "BA-E", "BA-E", "BA-E"])
    play(g, ["tile 0,-1 r0", "follower c1", "tile 0,-2 r2", "pass", "tile 1,-1 r3", "pass"])
    ev = play(g, ["tile -1,-1 r1", "pass"])
    (s,) = of(ev, FeatureScored)
    assert s.items == (ScoreItem("tiles", "5 city tiles x 2", 10), DARMSTADTIUM)
    assert (s.value, s.points) == (13, (13, 0))
    assert g.scores == [13, 0]


def test_darmstadtium_bonus_goes_to_each_tied_majority_player():
    # P1's knight in a cap at (1,-1), P0's in a cap at (-1,-1); the Darmstadtium
    # at (0,-1) joins both to the start city, a cap at (0,-2) closes it:
    # 5 tiles x 2 + 3 = 13 for each.
    g = game(["BA-U", "BA-E", "BA-U", "BA-U", "BA-E", "DA-darmstadtium", "BA-E"])
    play(
        g,
        [
            "tile 1,0 r0",
            "pass",
            "tile 1,-1 r3",
            "follower c1",  # P1: cap facing west
            "tile -1,0 r0",
            "pass",
            "tile 2,0 r0",
            "pass",
            "tile -1,-1 r1",
            "follower c1",  # P0: cap facing east
            "tile 0,-1 r0",  # P1: the Darmstadtium joins them (no free feature: no follower decision)
        ],
    )
    ev = play(g, ["tile 0,-2 r2", "pass"])
    (s,) = of(ev, FeatureScored)
    assert s.items == (ScoreItem("tiles", "5 city tiles x 2", 10), DARMSTADTIUM)
    assert s.points == (13, 13) and s.winners == (0, 1)


def test_no_darmstadtium_bonus_for_an_incomplete_city_at_game_end():
    g = game(["DA-darmstadtium"])
    ev = play(g, ["tile 0,-1 r0", "follower c1"])
    (s,) = of(ev, FeatureScored)
    assert s.final and s.items == (ScoreItem("tiles", "2 city tiles x 1", 2),)
    assert g.scores == [2, 0]


# ------------------------------------------------------------------ churches
CHURCH_ORDER = ["DA-st-mary", "BA-U", "BA-U", "BA-U", "BA-V", "BA-V", "BA-V", "BA-V"]


def church_game(monk: bool, farmer: bool = False, far: bool = False, options: dict | None = None) -> tuple[Game, list]:
    """The layout above: P0's church (monk or not); P1 thieves on (1,0) and (-1,1);
    P0 a farmer on (-1,0) if ``farmer``; if ``far``, P1 extends the start road to
    (2,0) and P0 puts a knight on a cap at (2,-1), two cells from the church;
    P1 completes the church with (1,2)."""
    order = CHURCH_ORDER[:3] + ["BA-U", "BA-E"] + CHURCH_ORDER[3:] if far else CHURCH_ORDER
    g = game(order, options)
    ev = play(
        g,
        [
            "tile 0,1 r1",
            "follower m" if monk else "pass",  # P0: the church
            "tile 1,0 r0",
            "follower r1",  # P1: thief on the start road
            "tile -1,0 r0",
            "follower f1" if farmer else "pass",  # P0: farmer on the north field
            *(["tile 2,0 r0", "pass", "tile 2,-1 r0", "follower c1"] if far else []),
            "tile -1,1 r0",
            "follower r1",  # P1: thief on the church's road
            "tile 1,1 r3",
            "pass",
            "tile -1,2 r0",
            "pass",
            "tile 0,2 r2",
            "pass",
            "tile 1,2 r1",
            "pass",  # P1: completes the church
        ],
    )
    return g, ev


def test_church_is_scored_like_a_cloister():
    g, ev = church_game(monk=True)
    (s,) = [e for e in of(ev, FeatureScored) if not e.final]
    assert (s.kind, s.items, s.points) == ("church", (ScoreItem("church", "church 1 + 8 neighbours", 9),), (9, 0))


def test_church_bonus_goes_to_the_most_followers_on_the_church_and_its_neighbours():
    # P0: the monk (1); P1: two thieves on (1,0) and (-1,1) (2): P1 +3.
    g, ev = church_game(monk=True)
    (bonus,) = of(ev, PointsAwarded)[:1]
    assert bonus == PointsAwarded(1, 3, church_bonus(0, 1), False)
    assert ev.index(bonus) > ev.index(next(e for e in ev if isinstance(e, FeatureScored) and e.kind == "church"))
    # game end: the thieves' open roads: the start road (-1,0)..(1,0) 3 tiles, the
    # church road (-1,1),(0,1),(0,2),(1,2),(1,1) 5 tiles ((-1,2)'s road is another).
    assert g.scores == [9, 3 + 3 + 5]


def test_church_bonus_ties_pay_every_tied_player():
    # P0's farmer on (-1,0) (any feature counts): 2 against 2, both +3.
    g, ev = church_game(monk=True, farmer=True)
    assert [e for e in of(ev, PointsAwarded) if not e.final] == [
        PointsAwarded(0, 3, church_bonus(0, 1), False),
        PointsAwarded(1, 3, church_bonus(0, 1), False),
    ]


def test_followers_beyond_the_eight_neighbours_do_not_count_for_the_church_bonus():
    # P0's knight at (2,-1) is outside the 3 x 3 square: still 1 against 2, P1 +3.
    g, ev = church_game(monk=True, far=True)
    assert [e for e in of(ev, PointsAwarded) if not e.final] == [PointsAwarded(1, 3, church_bonus(0, 1), False)]


@pytest.mark.parametrize("unoccupied", [True, False])
def test_church_bonus_for_an_unoccupied_church(unoccupied):
    # Default (JCZ): the bonus is paid when an unoccupied church is completed too.
    g, ev = church_game(monk=False, options={"church_bonus_unoccupied": unoccupied})
    (done,) = [e for e in of(ev, FeatureCompleted) if e.kind == "church"]
    assert not done.occupied
    bonuses = [e for e in of(ev, PointsAwarded) if not e.final]
    assert bonuses == ([PointsAwarded(1, 3, church_bonus(0, 1), False)] if unoccupied else [])


def test_church_bonus_counts_followers_scored_on_the_same_turn():
    # The church road ends at a junction (-1,1) and at a cloister (1,1): P1's
    # (1,2) completes it (P1's thief: 5 tiles) together with the church.  The
    # thief still counts for the bonus (JCZ returns followers after all the
    # turn's scoring): P0 2 (monks on the church and (1,1)), P1 2 (thieves on the
    # church road and the start road): both +3.
    g = game(["DA-st-mary", "BA-W", "BA-U", "BA-U", "BA-A", "BA-V", "BA-V", "BA-V"])
    play(
        g,
        [
            "tile 0,1 r1",
            "follower m",  # P0: church, road S-W
            "tile -1,1 r0",
            "follower r1",  # P1: junction, thief on the church road
            "tile 1,0 r0",
            "pass",
            "tile -1,0 r0",
            "follower r1",  # P1: thief on the start road
            "tile 1,1 r0",
            "follower m",  # P0: cloister, its road ends there
            "tile -1,2 r1",
            "pass",
            "tile 0,2 r2",
            "pass",
        ],
    )
    ev = play(g, ["tile 1,2 r1", "pass"])  # P1
    assert [(s.kind, s.points) for s in of(ev, FeatureScored) if not s.final] == [("road", (0, 5)), ("church", (9, 0))]
    assert [e for e in of(ev, PointsAwarded) if not e.final] == [
        PointsAwarded(0, 3, church_bonus(0, 1), False),
        PointsAwarded(1, 3, church_bonus(0, 1), False),
    ]


def test_no_church_bonus_at_game_end():
    g = game(["DA-st-mary"])
    ev = play(g, ["tile 0,1 r1", "follower m"])
    (s,) = of(ev, FeatureScored)
    assert s.final and s.items == (ScoreItem("church", "church 1 + 1 neighbour", 2),)
    assert of(ev, PointsAwarded) == []
    assert g.scores == [2, 0]


# ------------------------------------------------------------- properties
@SETTINGS
@given(configs(must="darmstadt"), seeds, seeds)
def test_random_games_pay_darmstadt_bonuses_only_during_the_game(config, seed, action_seed):
    g, events = play_random(config, seed, action_seed)
    for e in events:
        if isinstance(e, FeatureScored) and any(i.kind == "darmstadtium" for i in e.items):
            assert e.kind == "city" and not e.final
        if isinstance(e, PointsAwarded) and e.items[0].kind == "church_bonus":
            assert not e.final and e.points == 3
    assert g.ext["darmstadt"].pending == {}
