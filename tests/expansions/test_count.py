"""The Count of Carcassonne: one scenario per rule (docs/rules/count.md), then property tests.

Board reminders: the City of Carcassonne is the block CO1..CO12 at x=-2..1, y=-1..1
(rows y=-1: CO1..CO4, y=0: CO5..CO8, y=1: CO9..CO12).  Outer edges: roads leave
CO1 west (-3,-1), CO4 north (1,-2) and CO11 south (0,2); open city caps on CO9
south (-2,2) and CO12 east (2,1); every other outer edge is field.  x grows east,
y south; ``rR`` turns a tile R quarter turns clockwise.

Some scenarios start with followers already in the quarters, as an earlier
deployment would have left them (``in_quarter``: taken from the supply, so
followers stay conserved); the deployment itself has its own scripted scenario.
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import new_game, play, scored
from hypothesis import given, settings
from hypothesis import strategies as st

from carc_env.core import ConfigError, Game, GameConfig, IllegalActionError, Pass, ScoreItem
from carc_env.core.record import replay, to_record
from carc_env.core.tiles import CITY, ROAD
from carc_env.expansions.count import (
    BLACKSMITH,
    CASTLE,
    CATHEDRAL,
    MARKET,
    CountDeploy,
    CountMove,
    CountMoved,
    CountSend,
    FollowerFromQuarter,
    FollowerToQuarter,
)

FIELD_C = "count_send -1,2 f1"  # farm C, named by its root segment (final_setup's board)
CITY_CO9 = "count_send -2,2 c1"  # the city from CO9 south, likewise
BLOCK = {f"CO{k + 1}": (-2 + k % 4, -1 + k // 4) for k in range(12)}


def count_game(order: list[str], n: int = 2, expansions=("base", "count"), **options) -> Game:
    return new_game(order, num_players=n, expansions=expansions, options={"count": options} if options else {})


def in_quarter(g: Game, quarter: int, player: int, k: int = 1) -> None:
    g.supply[player] -= k
    g.ext["count"].quarters[quarter][player] += k
    assert g.followers_conserved()


def city(n: int, per: int = 2) -> tuple[ScoreItem, ...]:
    return (ScoreItem("tiles", f"{n} city tile{'s' * (n != 1)} x {per}", n * per),)


# ------------------------------------------------------------------- setup
def test_block_is_the_start_layout():
    g = Game(GameConfig(2, ("base", "count")), seed=0)
    for tid, (x, y) in BLOCK.items():
        assert g.describe_cell(x, y) == f"({x},{y}) {tid} r0"
    assert len(g.board) == 12
    counts = dict(zip([t.id for t in g.rules.tiles], g.remaining_counts().tolist(), strict=True))
    assert counts["BA-D"] == 4 and not any(counts[t] for t in BLOCK)  # no normal start tile is used
    st_ = g.ext["count"]
    assert st_.count == CASTLE and st_.quarters == [[0, 0]] * 4
    # perimeter: 14 outer edges, 3 roads, 2 cities, 9 fields; every '-' edge faces another CO tile
    outer = {}
    for tid, (x, y) in BLOCK.items():
        tile = g.rules.tiles[g.rules.tile_index[tid]]
        for side, (dx, dy) in enumerate(((0, -1), (1, 0), (0, 1), (-1, 0))):
            if (x + dx, y + dy) not in g.board:
                outer[(tid, "NESW"[side])] = tile.edges[side]
            elif tile.edges[side] != "-":
                raise AssertionError(f"{tid} side {side} is inside the block but not interior")
    assert len(outer) == 14 and sorted(outer.values()) == sorted("RRRCC" + "F" * 9)
    assert {k for k, v in outer.items() if v in "RC"} == {
        ("CO1", "W"),
        ("CO4", "N"),
        ("CO11", "S"),
        ("CO9", "S"),
        ("CO12", "E"),
    }
    fx, fy, _ = g.frontier()
    assert len(fx) == 14


def test_block_has_three_farms():
    g = Game(GameConfig(2, ("base", "count")), seed=0)
    farms = {g.find(n) for n in g.ext["count"].city_fields}
    assert len(farms) == 3
    a = g.find(g.node_of(-1, -1, "f1"))
    b = g.find(g.node_of(1, 0, "f1"))
    c = g.find(g.node_of(-1, 1, "f1"))
    assert {a, b, c} == farms
    assert g.find(g.node_of(1, -1, "f1")) == a and g.find(g.node_of(1, -1, "f2")) == b
    assert g.find(g.node_of(0, 1, "f1")) == b and g.find(g.node_of(0, 1, "f2")) == c
    assert g.find(g.node_of(-2, -1, "f1")) == a and g.find(g.node_of(-2, -1, "f2")) == c


def test_city_of_carcassonne_counts_as_a_completed_city_for_fields():
    # P0 farms farm A through BA-B north of CO2; at the end it borders only the City of
    # Carcassonne: 1 completed city x 3.
    g = count_game(["BA-B"])
    ev = play(g, ["tile -1,-2 r0", "follower f1"])
    assert g.over
    (s,) = scored(ev)
    assert s.kind == "field" and s.final
    assert s.items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert g.scores == [3, 0]


def test_city_of_carcassonne_counts_for_the_king():
    # P0 closes the city cap of CO12 with BA-E: 4 points and the King; at the end the King
    # counts 2 completed cities (that one and the City of Carcassonne).
    g = count_game(["BA-E"], expansions=("base", "count", "king_robber"))
    assert g.count_completed(CITY) == 1 and g.count_completed(ROAD) == 0
    play(g, ["tile 2,1 r3", "follower c1"])
    assert g.over
    assert g.count_completed(CITY) == 2
    assert g.scores == [4 + 2, 0]


# ------------------------------------------------------- (a) deploying
def test_deploy_when_an_opponent_scored_and_you_did_not():
    # P1's road from CO4 north is completed by P0's cloister tile: P1 4 points, P0 0.
    # P0 may then put a follower into any quarter and move the Count.
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-B"])
    play(g, ["tile 1,-2 r1", "pass", "tile 1,-3 r1", "follower r1", "tile 1,-4 r0"])
    ev = g.apply("pass")
    (s,) = scored(ev)
    assert s.kind == "road" and s.points == (0, 4)
    assert g.phase == "count_deploy" and g.player == 0
    assert g.legal_actions() == [CountDeploy(0), CountDeploy(1), CountDeploy(2), CountDeploy(3), Pass()]
    ev = g.apply("count_deploy castle")  # even the Count's own quarter
    assert ev == [FollowerToQuarter(0, "castle")]
    assert g.phase == "count_move" and g.player == 0
    assert g.legal_actions() == [CountMove(1), CountMove(2), CountMove(3), Pass()]
    with pytest.raises(IllegalActionError, match="another quarter"):
        g.apply("count_move castle")
    ev = g.apply("count_move blacksmith")
    assert ev[0] == CountMoved("castle", "blacksmith")
    assert g.phase == "tile" and g.player == 1
    assert g.ext["count"].quarters[CASTLE] == [1, 0] and g.ext["count"].count == BLACKSMITH
    assert g.supply == [6, 7] and g.followers_conserved()


def test_deploy_then_pass_keeps_the_count():
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-B"])
    play(g, ["tile 1,-2 r1", "pass", "tile 1,-3 r1", "follower r1", "tile 1,-4 r0", "pass"])
    play(g, ["count_deploy market", "pass"])
    assert g.ext["count"].count == CASTLE and g.ext["count"].quarters[MARKET] == [1, 0]


def test_no_deploy_when_you_scored_too():
    # Same road, but the follower on it is P0's: P0 scores, so no deployment.
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-B"])
    play(g, ["tile 1,-2 r1", "follower r1", "tile 1,-3 r1", "pass", "tile 1,-4 r0"])
    g.apply("pass")
    assert g.scores == [4, 0]  # P0 alone: nobody else scored
    assert g.phase == "tile" and g.player == 1


def test_no_deploy_when_no_opponent_scored():
    g = count_game(["BA-U", "BA-A", "BA-B"])
    play(g, ["tile 1,-2 r1", "pass", "tile 1,-3 r0", "pass"])  # P1 completes an unoccupied road
    assert g.phase == "tile" and g.player == 0 and g.scores == [0, 0]


def test_deploy_only_with_a_follower_in_supply():
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-B"])
    play(g, ["tile 1,-2 r1", "pass", "tile 1,-3 r1", "follower r1", "tile 1,-4 r0"])
    g.supply[0] = 0
    g.ext["count"].quarters[MARKET][0] = 7  # keep the followers conserved
    g.apply("pass")
    assert g.phase == "tile" and g.player == 1


# --------------------------------------------- (b) leaving during the game
def steal_setup(n: int = 3, **options) -> Game:
    # P0 closes the CO12 city cap with BA-E (2,1) r3 and a knight: a completed 2-tile city.
    g = count_game(["BA-E", "BA-B", "BA-B"], n=n, **options)
    g.ext["count"].count = MARKET
    in_quarter(g, CASTLE, 1, 2)
    in_quarter(g, CASTLE, 2, 1)
    in_quarter(g, CASTLE, 0, 1)
    return g


def test_leave_castle_into_a_completed_city_steals_the_majority():
    g = steal_setup()
    g.apply("tile 2,1 r3")
    ev = g.apply("follower c1")
    assert not scored(ev)
    assert g.phase == "count_leave" and g.player == 1  # left of the active player first (O1)
    target = CountSend(2, 1, "c1")  # named by the feature's root segment (here on BA-E)
    assert g.legal_actions() == [target, Pass()]
    ev = g.apply("count_send 1,1 c1")  # any segment of the feature names it (CO12's city cap)
    assert ev == [FollowerFromQuarter(1, "castle", 1, 1, "c1", "city", False)]
    assert g.player == 1  # may move several
    g.apply(target)
    assert g.player == 2  # P1 has no more in the castle
    g.apply("pass")
    assert g.player == 0  # the active player decides last
    ev = g.apply("pass")
    (s,) = scored(ev)
    assert s.items == city(2) and s.points == (0, 4, 0) and s.winners == (1,)
    assert s.returned == (1, 2, 0)  # moved followers go back to the supply after scoring
    # P0 scored nothing and an opponent did: P0 may deploy
    assert g.phase == "count_deploy" and g.player == 0
    assert g.supply == [6, 7, 6] and g.followers_conserved()


def test_o1_option_active_player_first():
    g = steal_setup(leave_order="active_first")
    play(g, ["tile 2,1 r3", "follower c1"])
    assert g.phase == "count_leave" and g.player == 0
    g.apply("count_send 2,1 c1")
    assert g.player == 1
    play(g, ["pass"])
    assert g.player == 2
    ev = g.apply("pass")
    (s,) = scored(ev)
    assert s.points == (4, 0, 0)  # P0 2 followers vs nobody else


def test_count_blocks_his_quarter():
    g = steal_setup()
    g.ext["count"].count = CASTLE
    play(g, ["tile 2,1 r3"])
    ev = g.apply("follower c1")  # nobody may leave the castle: scored at once
    (s,) = scored(ev)
    assert s.points == (4, 0, 0)
    assert g.phase == "tile" and g.player == 1


def test_illegal_sends_are_refused_and_change_nothing():
    g = steal_setup()
    play(g, ["tile 2,1 r3", "follower c1"])
    before = (g.ext["count"].quarters, g.guests)
    with pytest.raises(IllegalActionError, match="cannot receive"):
        g.apply("count_send -1,-1 f1")
    with pytest.raises(IllegalActionError, match="no tile"):
        g.apply("count_send 5,5 c1")
    with pytest.raises(IllegalActionError):
        g.apply("count_deploy castle")
    with pytest.raises(IllegalActionError, match="quarter"):
        g.apply("count_deploy palace")
    assert (g.ext["count"].quarters, g.guests) == before and g.player == 1


def test_o2_only_occupied_features_receive_followers():
    # P0 closes the CO12 city cap without a knight: it is only completed, nobody moves in.
    g = steal_setup()
    play(g, ["tile 2,1 r3"])
    ev = g.apply("pass")
    assert not scored(ev) and g.phase == "tile"


def test_o2_option_unoccupied_features_receive_followers():
    g = steal_setup(only_occupied=False)
    play(g, ["tile 2,1 r3", "pass"])
    assert g.phase == "count_leave" and g.player == 1
    ev = play(g, ["count_send 2,1 c1", "pass", "pass", "pass"])
    (s,) = scored(ev)
    assert s.points == (0, 4, 0)


def test_blacksmith_to_a_completed_road():
    # P0's road from CO4 north is completed by P1's BA-A (road ends at its cloister).
    # P0 (left of P1) holds nothing, so P1 decides: in from the blacksmith, a tie, both
    # score 3 (CO4, BA-U, BA-A).  P1's cathedral follower has no completed cloister to go to.
    g = count_game(["BA-U", "BA-A", "BA-B"])
    in_quarter(g, BLACKSMITH, 1)
    in_quarter(g, CATHEDRAL, 1)
    play(g, ["tile 1,-2 r1", "follower r1", "tile 1,-3 r0"])
    g.apply("pass")
    assert g.phase == "count_leave" and g.player == 1
    assert g.legal_actions() == [CountSend(1, -2, "r1"), Pass()]
    ev = g.apply("count_send 1,-3 r1")  # any segment of the road names it; P1 has no more to move
    (s,) = scored(ev)
    assert s.kind == "road" and s.value == 3 and s.points == (3, 3) and s.returned == (1, 1)
    assert g.phase == "tile" and g.player == 0  # P1 scored: no deployment
    assert g.ext["count"].quarters[CATHEDRAL] == [0, 1]


def test_cathedral_to_a_completed_cloister():
    # P0 puts a monk on BA-B at (2,0) east of CO8; five more tiles surround it; P1's BA-E
    # at (2,1) completes it (and the unoccupied CO12 city).  P1 moves in from the
    # cathedral: tie, both 9.
    g = count_game(["BA-B", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    in_quarter(g, CATHEDRAL, 1)
    in_quarter(g, CASTLE, 1)  # the completed city is unoccupied (O2): no move into it
    g.ext["count"].count = MARKET
    play(g, ["tile 2,0 r0", "follower m", "tile 2,-1 r0", "pass", "tile 3,-1 r0", "pass", "tile 3,0 r0", "pass"])
    play(g, ["tile 3,1 r2", "pass", "tile 2,1 r3", "pass"])
    assert g.phase == "count_leave" and g.player == 1
    assert g.legal_actions() == [CountSend(2, 0, "m"), Pass()]
    ev = g.apply("count_send 2,0 m")  # P1 has no more to move: scoring follows
    (s,) = scored(ev)
    assert s.kind == "cloister" and s.value == 9 and s.points == (9, 9)


# ------------------------------------------------------------ (c) end of game
def final_setup(**options) -> Game:
    # P0: BA-N (-2,2) r0, knight on the city it extends from CO9 (incomplete, 2 tiles).
    # P1: BA-B (-1,2), farmer on farm C (borders the incomplete city and Carcassonne).
    g = count_game(["BA-N", "BA-B"], **options)
    g.ext["count"].count = CATHEDRAL
    in_quarter(g, MARKET, 1)
    in_quarter(g, CASTLE, 1)
    play(g, ["tile -2,2 r0", "follower c1", "tile -1,2 r0", "follower f1"])
    return g


def test_o3_final_moves_from_any_quarter():
    g = final_setup()
    assert g.phase == "count_final" and g.player == 1  # P0 (left of P1) holds nothing
    assert sorted(a.to_text() for a in g.legal_actions()) == ["count_send -1,2 f1", "count_send -2,2 c1", "pass"]
    g.apply("count_send -2,2 c1")
    assert g.phase == "count_final" and g.player == 1
    ev = g.apply("count_send -1,2 f1")
    assert g.over
    by_kind = {s.kind: s for s in scored(ev)}
    assert by_kind["city"].items == city(2, per=1) and by_kind["city"].points == (2, 2)
    assert by_kind["field"].items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert by_kind["field"].points == (0, 3)
    assert g.scores == [2, 5]
    assert g.followers_conserved()


def test_o3_option_market_only():
    g = final_setup(final_scoring="market_only")
    assert [a.to_text() for a in g.legal_actions()] == [FIELD_C, "pass"]
    g.apply(FIELD_C)
    assert g.over and g.scores == [2, 3]
    # (d) the follower left in the castle scores nothing and is still held there
    assert g.ext["count"].quarters[CASTLE] == [0, 1] and g.followers_conserved()


def test_final_pass_is_for_good():
    g = final_setup()
    assert g.player == 1
    g.apply("pass")
    assert g.over and g.scores == [2, 3]


def test_final_round_robin_one_follower_at_a_time():
    # P0 and P1 both wait in the market, P1 also in the castle.  Starting left of the last
    # active player (P1): P0 moves, P1 moves, P0 has nothing left, P1 moves again.
    g = count_game(["BA-N", "BA-B"])
    g.ext["count"].count = CATHEDRAL
    in_quarter(g, MARKET, 0)
    in_quarter(g, MARKET, 1)
    in_quarter(g, CASTLE, 1)
    play(g, ["tile -2,2 r0", "follower c1", "tile -1,2 r0", "follower f1"])
    assert g.phase == "count_final" and g.player == 0
    g.apply(FIELD_C)
    assert g.player == 1
    g.apply(CITY_CO9)
    assert g.player == 1
    ev = g.apply(FIELD_C)
    assert g.over
    by_kind = {s.kind: s for s in scored(ev)}
    assert by_kind["city"].points == (2, 2)
    assert by_kind["field"].points == (0, 3) and by_kind["field"].returned == (1, 2)
    assert g.scores == [2, 5]


def test_count_blocks_his_quarter_at_the_end():
    g = count_game(["BA-N", "BA-B"])
    g.ext["count"].count = MARKET
    in_quarter(g, MARKET, 1)
    play(g, ["tile -2,2 r0", "follower c1", "tile -1,2 r0", "follower f1"])
    assert g.over and g.scores == [2, 3]


# --------------------------------------------------------------- records
def test_count_actions_replay_from_a_record():
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-E", "BA-B"])
    play(g, ["tile 1,-2 r1", "pass", "tile 1,-3 r1", "follower r1", "tile 1,-4 r0", "pass"])
    play(g, ["count_deploy castle", "count_move market"])  # P0 now waits in the castle
    play(g, ["tile 2,1 r3", "follower c1"])  # P1 completes the CO12 city cap with a knight
    assert g.phase == "count_leave" and g.player == 0
    play(g, ["count_send 1,1 c1"])
    rec = to_record(g)
    assert rec["actions"][-5:] == [
        "count_deploy castle",
        "count_move market",
        "tile 2,1 r3",
        "follower c1",
        "count_send 1,1 c1",
    ]
    again = replay(rec)
    assert again.scores == g.scores and again.ext["count"] == g.ext["count"]


def test_bad_count_options_are_refused():
    with pytest.raises(ConfigError, match="final_scoring"):
        count_game([], final_scoring="c3")
    with pytest.raises(ConfigError, match="leave_order"):
        count_game([], leave_order="random")


# ------------------------------------------------------------------ properties
def random_playout(g: Game, seed: int) -> tuple[Game, set[str]]:
    rng = np.random.default_rng(seed)
    phases = set()
    while not g.over:
        acts = g.legal_actions()
        assert acts, f"phase {g.phase} offers no action"
        phases.add(g.phase)
        g.apply(acts[int(rng.integers(len(acts)))])
        assert g.followers_conserved(), g.phase
        assert not g.guests or g.phase in ("count_leave", "count_final")
    return g, phases


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_random_count_games(seed, players):
    g, _ = random_playout(Game(GameConfig(players, ("base", "count")), seed=seed), seed)
    assert sum(g.supply) + sum(map(sum, g.ext["count"].quarters)) + len(g.followers) == players * 7
    assert replay(to_record(g)).scores == g.scores


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_random_count_river_and_other_expansions(seed, players):
    exps = ("base", "river2", "count", "king_robber", "shrines", "darmstadt")
    g, _ = random_playout(Game(GameConfig(players, exps), seed=seed), seed)
    assert replay(to_record(g)).scores == g.scores


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_random_count_games_with_every_option_flipped(seed, players):
    opts = {"count": {"only_occupied": False, "final_scoring": "market_only", "leave_order": "active_first"}}
    g, _ = random_playout(Game(GameConfig(players, ("base", "count"), opts), seed=seed), seed)
    assert replay(to_record(g)).scores == g.scores


def test_random_games_reach_every_count_phase():
    seen: set[str] = set()
    for seed in range(60):
        _, phases = random_playout(Game(GameConfig(2 + seed % 4, ("base", "count")), seed=seed), seed)
        seen |= phases
    assert {"count_leave", "count_deploy", "count_move", "count_final"} <= seen


def test_followers_left_in_quarters_score_nothing():
    g = count_game(["BA-B"])
    in_quarter(g, CASTLE, 0, 3)  # the Count sits on the castle: they cannot leave
    play(g, ["tile -1,-2 r0", "pass"])
    assert g.over and g.scores == [0, 0]
    assert g.ext["count"].quarters[CASTLE] == [3, 0] and g.followers_conserved()
