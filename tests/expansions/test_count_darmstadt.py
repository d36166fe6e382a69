"""The Count of Carcassonne with Darmstadt: the two rules where their stages meet.

* The Count's deployment trigger is every point scored because of the turn's
  placement (rules reference §3.2(a); seed 004 footnote 27: "triggered
  scoring, received no points"): the Darmstadt church bonus is part of the
  turn's scoring, so it counts for the active player and for the opponents.
* A follower sent from a quarter onto a feature (a guest) stands on that
  feature: one sent from the cathedral onto a church counts for the church's
  +3 majority bonus like the monk beside it (option ``church_bonus_guests``
  for guests on other features of the vicinity).

Layout (the Count's block is x = -2..1, y = -1..1; a church DA-st-mary at
(-1,2), r0: field N, road E-S passing the church, field W)::

    y\\x   -2          -1             0            1
    1     CO9 (city S) CO10          CO11 (road S) CO12
    2     E r0 (cap N)  CHURCH r0     V r1 (N-W)   E r1 (cap E)
    3     E r2 (cap S)  U r1 (N-S)    E r1 (cap E) E r3 (cap W)

The church road runs from CO11 through (0,2), the church and (-1,3), open to
the south.  The last tile, a city cap at (0,3), is the church's 8th neighbour
and closes the 2-tile city it forms with the cap at (1,3), two cells from the
church (outside its vicinity).  A filler BA-U at (-3,-1) extends CO1's road.
"""

from __future__ import annotations

import pytest
from _helpers import play

from carc_env.core import (
    ConfigError,
    FeatureScored,
    Game,
    GameConfig,
    PointsAwarded,
    ScoreItem,
)
from carc_env.expansions.count import CASTLE, CATHEDRAL, MARKET, CountSend, FollowerFromQuarter

CD = ("base", "count", "darmstadt")
CHURCH = (-1, 2)
CITY_2 = (ScoreItem("tiles", "2 city tiles x 2", 4),)
CHURCH_9 = (ScoreItem("church", "church 1 + 8 neighbours", 9),)
BONUS = (ScoreItem("church_bonus", "church at (-1,2): most followers nearby +3", 3),)


def game(order: list[str], quarters: tuple[tuple[int, int], ...] = (), **darmstadt) -> Game:
    """A 2-player Count + Darmstadt game; ``quarters``: (quarter, player) followers put there from the
    supply beforehand (as earlier deployments would have), with the Count on the market."""
    g = Game(GameConfig(2, CD, {"darmstadt": darmstadt} if darmstadt else {}), seed=0, draw_order=order)
    for q, p in quarters:
        g.take_follower(p)
        g.ext["count"].quarters[q][p] += 1
    g.ext["count"].count = MARKET
    assert g.followers_conserved()
    return g


ORDER = ["DA-st-mary", "BA-V", "BA-U", "BA-E", "BA-E", "BA-E", "BA-E", "BA-U", "BA-E", "BA-U", "BA-U"]


def moves(church: str = "pass", road_p1: str = "pass", road_p0: str = "pass", knight_p1: str = "pass") -> list[str]:
    """The layout up to the last tile (P0 to play it); followers on the church (P0), on the church road
    at (0,2) (P1) or at (-1,3) (P0), on the cap at (1,3) (P1)."""
    return [
        "tile -1,2 r0", church,  # P0: the church
        "tile 0,2 r1", road_p1,  # P1: the road from CO11 to the church
        "tile -1,3 r1", road_p0,  # P0: the church road continues south
        "tile 1,2 r1", "pass",  # P1
        "tile -2,2 r0", "pass",  # P0: closes CO9's city (unoccupied)
        "tile 1,3 r3", knight_p1,  # P1: a cap facing west
        "tile -2,3 r2", "pass",  # P0
        "tile -3,-1 r0", "pass",  # P1: filler
    ]  # fmt: skip


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def test_count_trigger_counts_the_church_bonus_of_the_active_player():
    # P0's last tile closes P1's city (P1: 4) and completes the unoccupied church; P0's road follower
    # at (-1,3) is the only one near it: P0 +3.  P0 scored too, so no deployment into Carcassonne.
    g = game(ORDER)
    play(g, moves(road_p0="follower r1", knight_p1="follower c1"))
    ev = play(g, ["tile 0,3 r1", "pass"])
    (city,) = of(ev, FeatureScored)
    assert (city.kind, city.items, city.points) == ("city", CITY_2, (0, 4))
    assert [(a.player, a.items) for a in of(ev, PointsAwarded)] == [(0, BONUS)]
    assert g.scores == [3, 4]
    assert g.phase == "tile" and g.player == 1  # no count_deploy for P0


def test_count_trigger_counts_the_church_bonus_of_an_opponent():
    # P1's road follower at (0,2) is the only one near the church P0 completes: P1 +3, P0 nothing,
    # so P0 may deploy a follower into Carcassonne.
    g = game(ORDER)
    play(g, moves(road_p1="follower r1"))
    ev = play(g, ["tile 0,3 r1", "pass"])
    assert not of(ev, FeatureScored)
    assert [(a.player, a.items) for a in of(ev, PointsAwarded)] == [(1, BONUS)]
    assert g.scores == [0, 3]
    assert g.phase == "count_deploy" and g.player == 0
    play(g, ["count_deploy castle", "pass"])
    assert g.ext["count"].quarters[CASTLE] == [1, 0] and g.followers_conserved()


def test_church_bonus_counts_a_follower_sent_from_the_cathedral_onto_the_church():
    # P0's monk on the church; P1 sends a follower from the cathedral onto it when P0 completes it:
    # both share the church (9 each) and, one follower each nearby, the bonus (+3 each).
    g = game(ORDER, quarters=((CATHEDRAL, 1),))
    play(g, moves(church="follower m"))
    play(g, ["tile 0,3 r1", "pass"])
    assert g.phase == "count_leave" and g.player == 1
    assert g.legal_actions() == [CountSend(-1, 2, "m"), *g.legal_actions()[1:]]
    ev = g.apply("count_send -1,2 m")
    (sent,) = of(ev, FollowerFromQuarter)
    assert (sent.player, sent.quarter, sent.kind) == (1, "cathedral", "church")
    (church,) = of(ev, FeatureScored)
    assert (church.items, church.points, church.returned) == (CHURCH_9, (9, 9), (1, 1))
    assert [(a.player, a.items) for a in of(ev, PointsAwarded)] == [(0, BONUS), (1, BONUS)]
    assert g.scores == [12, 12] and g.followers_conserved()


GUEST_ORDER = ["DA-st-mary", "BA-V", "BA-U", "BA-E", "BA-E", "BA-U", "BA-E", "BA-E", "BA-E", "BA-U", "BA-U"]


@pytest.mark.parametrize(("rule", "bonus_to", "scores"), [("vicinity", [0, 1], [7, 7]), ("church", [0], [7, 4])])
def test_church_bonus_guests_option(rule, bonus_to, scores):
    # P0: a road follower at (-1,3) near the unoccupied church and a knight on the cap at (1,3) (not
    # near it).  P0's last tile closes that city and the church; P1 sends a follower from the castle
    # into the city, which has a tile, (0,3), beside the church.  The city is shared (4 each);
    # "vicinity": P1's follower counts near the church too (1 each: +3 each); "church": only P0's.
    g = game(GUEST_ORDER, quarters=((CASTLE, 1),), church_bonus_guests=rule)
    play(
        g,
        [
            "tile -1,2 r0", "pass",  # P0: the church
            "tile 0,2 r1", "pass",  # P1
            "tile -1,3 r1", "follower r1",  # P0: road follower near the church
            "tile 1,2 r1", "pass",  # P1
            "tile -2,2 r0", "pass",  # P0
            "tile -3,-1 r0", "pass",  # P1: filler
            "tile 1,3 r3", "follower c1",  # P0: knight on a cap two cells from the church
            "tile -2,3 r2", "pass",  # P1
            "tile 0,3 r1", "pass",  # P0: closes the city and completes the church
        ],
    )  # fmt: skip
    assert g.phase == "count_leave" and g.player == 1
    ev = g.apply("count_send 0,3 c1")
    (city,) = of(ev, FeatureScored)
    assert (city.items, city.points) == (CITY_2, (4, 4))
    assert [(a.player, a.items) for a in of(ev, PointsAwarded)] == [(p, BONUS) for p in bonus_to]
    assert g.scores == scores


def test_church_bonus_guests_option_is_checked():
    with pytest.raises(ConfigError, match="church_bonus_guests must be one of"):
        Game(GameConfig(2, CD, {"darmstadt": {"church_bonus_guests": "nowhere"}}))


def test_church_bonus_is_paid_before_the_counts_deployment_stage():
    # the declared stage order: the vicinity count after the Count's moves out of the quarters, the
    # payment right after the core's scoring, before the Count's deployment
    keys = [f"{s.owner}.{s.stage_key()}" for s in Game(GameConfig(2, CD)).rules.stages if s.owner]
    assert keys == [
        "count.count_leave",
        "darmstadt.church_count",
        "darmstadt.church_bonus",
        "count.count_deploy",
        "count.count_move",
    ]
