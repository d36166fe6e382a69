"""Scoring scenarios: one rule per test, a forced draw order, scripted moves and
the exact score breakdown, computed by hand from the rules
(../shared/rules/official-expansions.md section 1, docs/rules/base.md).

Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.
"""

from __future__ import annotations

import pytest
from _helpers import brute_legal_placements, new_game, play, scored

from carc_env.core import (
    FeatureCompleted,
    FollowerPlaced,
    GameOver,
    IllegalActionError,
    PlaceTile,
    ScoreItem,
    TileDiscarded,
    TileDrawn,
    TilePlaced,
)


def road(n: int) -> tuple[ScoreItem, ...]:
    return (ScoreItem("tiles", f"{n} road tile{'s' * (n != 1)} x 1", n),)


# --------------------------------------------------------------------- roads
def test_completed_road_scores_one_per_tile():
    # Start road W-E; extend east with BA-U, close both ends with BA-W junctions.
    g = new_game(["BA-U", "BA-W", "BA-W"])
    ev = play(g, ["tile 1,0 r0", "follower r1", "tile 2,0 r0", "pass"])
    assert scored(ev) == []  # west end still open
    ev = play(g, ["tile -1,0 r0", "pass"])
    (s,) = scored(ev)
    assert s.kind == "road" and not s.final
    assert s.items == road(4)
    assert s.value == 4
    assert s.points == (4, 0)
    assert s.winners == (0,)
    assert sorted(s.tiles) == [(-1, 0), (0, 0), (1, 0), (2, 0)]
    assert g.scores == [4, 0]


def test_road_closed_as_a_loop_is_complete():
    # Four curves (BA-V) south of the start tile close a ring road:
    # (0,1) E-S r3, (1,1) S-W r0, (1,2) W-N r1, (0,2) N-E r2.
    g = new_game(["BA-V"] * 4)
    ev = play(g, ["tile 0,1 r3", "follower r1", "tile 1,1 r0", "pass", "tile 1,2 r1", "pass"])
    assert scored(ev) == []
    ev = play(g, ["tile 0,2 r2", "pass"])
    completed = [e for e in ev if isinstance(e, FeatureCompleted)]
    assert [(c.kind, c.size) for c in completed] == [("road", 4)]
    (s,) = scored(ev)
    assert s.kind == "road"
    assert s.items == road(4)
    assert s.points == (4, 0)
    assert g.scores == [4, 0]
    assert g.supply == [7, 7]


def test_follower_on_the_feature_its_own_tile_completes_scores_immediately():
    # BA-W at (1,0) closes the east end; player 1's BA-W at (-1,0) closes the
    # west end and player 1 puts a follower on that very road.
    g = new_game(["BA-W", "BA-W", "BA-U"])
    play(g, ["tile 1,0 r0", "pass", "tile -1,0 r0"])
    assert g.phase == "follower"
    ev = g.apply("follower r1")
    assert isinstance(ev[0], FollowerPlaced) and ev[0].player == 1 and ev[0].kind == "road"
    (s,) = scored(ev)
    assert s.items == road(3)
    assert s.points == (0, 3)
    assert s.returned == (0, 1)
    assert g.scores == [0, 3]
    assert g.supply == [7, 7]
    assert g.followers == {}


# --------------------------------------------------------------------- cities
def test_completed_small_city_scores_four():
    # Player 1 opens a city at (1,1) (BA-E turned south) and takes it; player 0
    # closes it with BA-E at (1,2): 2 tiles x 2 = 4 for player 1.
    g = new_game(["BA-U", "BA-E", "BA-E"])
    play(g, ["tile 1,0 r0", "pass", "tile 1,1 r2", "follower c1"])
    ev = play(g, ["tile 1,2 r0", "pass"])
    (s,) = scored(ev)
    assert s.kind == "city"
    assert s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),)
    assert s.points == (0, 4)
    assert sorted(s.tiles) == [(1, 1), (1, 2)]
    assert g.scores == [0, 4]


def test_closing_the_start_city_with_a_knight_on_it_scores_four():
    g = new_game(["BA-E", "BA-U"])
    ev = play(g, ["tile 0,-1 r2", "follower c1"])
    (s,) = scored(ev)
    assert s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),)
    assert s.points == (4, 0)


def test_city_with_pennants_scores_two_per_pennant():
    # City: start (0,0) + BA-F r1 (N-S band, pennant) at (0,-1) + BA-M r2
    # (corner S+E, pennant) at (0,-2) + BA-E r3 (cap facing W) at (1,-2).
    # 4 tiles x 2 + 2 pennants x 2 = 12.
    g = new_game(["BA-F", "BA-M", "BA-E"])
    ev = play(g, ["tile 0,-1 r1", "follower c1", "tile 0,-2 r2", "pass"])
    assert scored(ev) == []
    ev = play(g, ["tile 1,-2 r3", "pass"])
    (s,) = scored(ev)
    assert s.kind == "city"
    assert s.items == (
        ScoreItem("tiles", "4 city tiles x 2", 8),
        ScoreItem("pennants", "2 pennants x 2", 4),
    )
    assert s.value == 12
    assert s.points == (12, 0)
    assert g.scores == [12, 0]


# ------------------------------------------------------------------ cloisters
CLOISTER_RING = [
    "tile 1,0 r0",
    "pass",  # BA-U
    "tile -1,0 r0",
    "pass",  # BA-U
    "tile 1,1 r3",
    "pass",  # BA-V
    "tile -1,1 r0",
    "pass",  # BA-V
    "tile 0,2 r0",
    "pass",  # BA-U
    "tile 1,2 r1",
    "pass",  # BA-V
]


def test_completed_cloister_scores_nine():
    # Cloister BA-B at (0,1), then its 8 neighbours are filled.
    order = ["BA-B", "BA-U", "BA-U", "BA-V", "BA-V", "BA-U", "BA-V", "BA-V", "BA-X"]
    g = new_game(order)
    ev = play(g, ["tile 0,1 r0", "follower m", *CLOISTER_RING])
    assert scored(ev) == []
    ev = play(g, ["tile -1,2 r2", "pass"])
    (s,) = scored(ev)
    assert s.kind == "cloister" and not s.final
    assert s.items == (ScoreItem("cloister", "cloister 1 + 8 neighbours", 9),)
    assert s.points == (9, 0)
    assert g.scores == [9, 0]
    assert g.supply == [7, 7]


def test_cloister_placed_into_a_full_ring_completes_and_scores_at_once():
    # The 8 neighbours of (0,1) are laid first; the cloister goes in last,
    # by player 1 with a follower, and scores 9 in the same turn.
    order = ["BA-U", "BA-U", "BA-V", "BA-V", "BA-V", "BA-V", "BA-U", "BA-B"]
    g = new_game(order)
    ring = [
        "tile 1,0 r0",
        "tile -1,0 r0",
        "tile 1,1 r3",
        "tile -1,1 r0",
        "tile 1,2 r1",
        "tile -1,2 r2",
        "tile 0,2 r0",
    ]
    for m in ring:
        g.apply(m)
        g.apply("pass")
    assert g.player == 1
    g.apply("tile 0,1 r0")
    ev = g.apply("follower m")
    (s,) = [e for e in scored(ev) if not e.final]
    assert s.kind == "cloister"
    assert s.items == (ScoreItem("cloister", "cloister 1 + 8 neighbours", 9),)
    assert s.points == (0, 9)
    assert g.scores == [0, 9]


# ----------------------------------------------------------------- majorities
# Road A: start + BA-U (1,0) (player 0).  Road B: BA-U (1,1) (player 1).
# Road C: the south road of the BA-W junction at (-1,0).  BA-V (2,0) + BA-V
# (2,1) join A and B; BA-V (-1,1) extends C; BA-U (0,1) joins B and C and
# closes one road of 8 tiles, both ends at the junction (-1,0).
def majority_game(third_follower: bool):
    g = new_game(["BA-U", "BA-U", "BA-W", "BA-V", "BA-V", "BA-V", "BA-U"])
    ev = play(
        g,
        [
            "tile 1,0 r0",
            "follower r1",
            "tile 1,1 r0",
            "follower r1",
            "tile -1,0 r0",
            "follower r2" if third_follower else "pass",
            "tile 2,0 r0",
            "pass",
            "tile 2,1 r1",
            "pass",
            "tile -1,1 r2",
            "pass",
        ],
    )
    assert scored(ev) == []
    ev = play(g, ["tile 0,1 r0", "pass"])
    return g, ev


def test_shared_majority_tied_players_both_score_in_full():
    g, ev = majority_game(third_follower=False)
    (s,) = scored(ev)
    assert s.kind == "road"
    assert s.items == road(8)
    assert s.points == (8, 8)
    assert s.winners == (0, 1)
    assert g.scores == [8, 8]


def test_majority_only_the_player_with_most_followers_scores():
    g, ev = majority_game(third_follower=True)
    (s,) = scored(ev)
    assert s.items == road(8)
    assert sorted(s.tiles) == [(-1, 0), (-1, 1), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    assert s.points == (8, 0)
    assert s.winners == (0,)
    assert g.scores == [8, 0]


def test_followers_return_to_their_owners_after_scoring():
    g = new_game(["BA-U", "BA-U", "BA-W", "BA-V", "BA-V", "BA-V", "BA-U"])
    play(g, ["tile 1,0 r0", "follower r1", "tile 1,1 r0", "follower r1", "tile -1,0 r0", "follower r2"])
    assert g.supply == [5, 6]
    assert len(g.followers) == 3
    play(g, ["tile 2,0 r0", "pass", "tile 2,1 r1", "pass", "tile -1,1 r2", "pass"])
    assert g.supply == [5, 6]
    ev = play(g, ["tile 0,1 r0", "pass"])
    (s,) = scored(ev)
    assert s.returned == (2, 1)
    assert g.supply == [7, 7]
    assert g.followers == {}
    assert g.followers_conserved()


# --------------------------------------------------------------- end of game
def final_scored(ev):
    return [e for e in scored(ev) if e.final]


def test_end_of_game_incomplete_road_scores_one_per_tile():
    g = new_game(["BA-U"])
    ev = play(g, ["tile 1,0 r0", "follower r1"])
    assert g.phase == "game_over"
    (s,) = final_scored(ev)
    assert s.kind == "road"
    assert s.items == road(2)
    assert s.points == (2, 0)
    assert g.scores == [2, 0]
    assert isinstance(ev[-1], GameOver) and ev[-1].scores == (2, 0) and ev[-1].winners == (0,)


def test_end_of_game_incomplete_city_scores_one_per_tile_and_pennant():
    # Start city + BA-F r1 (pennant) at (0,-1), open to the north.
    g = new_game(["BA-F"])
    ev = play(g, ["tile 0,-1 r1", "follower c1"])
    (s,) = final_scored(ev)
    assert s.kind == "city"
    assert s.items == (
        ScoreItem("tiles", "2 city tiles x 1", 2),
        ScoreItem("pennants", "1 pennant x 1", 1),
    )
    assert s.points == (3, 0)
    assert g.scores == [3, 0]


def test_end_of_game_incomplete_cloister_scores_one_plus_neighbours():
    # Cloister at (0,1); neighbours present at the end: (0,0), (1,0), (1,1).
    g = new_game(["BA-B", "BA-U", "BA-V"])
    ev = play(g, ["tile 0,1 r0", "follower m", "tile 1,0 r0", "pass", "tile 1,1 r3", "pass"])
    (s,) = final_scored(ev)
    assert s.kind == "cloister"
    assert s.items == (ScoreItem("cloister", "cloister 1 + 3 neighbours", 4),)
    assert s.points == (4, 0)
    assert g.scores == [4, 0]


def test_field_scores_three_per_completed_city():
    # BA-E turned south at (0,-1) closes the start city (2 tiles, no knight);
    # the farmer on BA-E's field borders that completed city: 3 points.
    g = new_game(["BA-E"])
    ev = play(g, ["tile 0,-1 r2", "follower f1"])
    assert [e.kind for e in ev if isinstance(e, FeatureCompleted)] == ["city"]
    (s,) = final_scored(ev)
    assert s.kind == "field"
    assert s.items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert s.points == (3, 0)
    assert g.scores == [3, 0]


def test_incomplete_city_gives_farmers_nothing():
    # The farmer's field (north of the road: start f1 + BA-U f1) borders the
    # start city, which is never closed.
    g = new_game(["BA-U"])
    ev = play(g, ["tile 1,0 r0", "follower f1"])
    (s,) = final_scored(ev)
    assert s.kind == "field"
    assert s.items == (ScoreItem("cities", "0 completed cities x 3", 0),)
    assert s.value == 0
    assert s.points == (0, 0)
    assert s.returned == (1, 0)
    assert g.scores == [0, 0]


def test_final_scoring_scores_every_occupied_feature_once():
    # Incomplete road (2 tiles), incomplete city (2 tiles + pennant) and a farmer.
    g = new_game(["BA-U", "BA-F", "BA-U"])
    ev = play(g, ["tile 1,0 r0", "follower r1", "tile 0,-1 r1", "follower c1", "tile -1,0 r0", "follower f2"])
    fs = final_scored(ev)
    assert [(s.kind, s.points) for s in fs] == [("road", (3, 0)), ("city", (0, 3)), ("field", (0, 0))]
    assert g.scores == [3, 3]
    assert isinstance(ev[-1], GameOver) and ev[-1].winners == (0, 1)
    assert g.supply == [7, 7]


# --------------------------------------------------------------- turn flow
def test_tile_without_legal_placement_is_discarded_and_next_drawn():
    # After BA-E closes the start city every frontier edge is road or field,
    # so BA-C (city on all four sides) fits nowhere.
    g = new_game(["BA-E", "BA-C", "BA-U"])
    g.apply("tile 0,-1 r2")
    ba_c = g.rules.tiles[g.rules.tile_index["BA-C"]]
    assert brute_legal_placements(g, ba_c) == set()
    ev = g.apply("pass")
    kinds = [type(e) for e in ev]
    assert kinds == [FeatureCompleted, TileDrawn, TileDiscarded, TileDrawn]
    assert ev[1] == TileDrawn(1, "BA-C")
    assert ev[2].player == 1 and ev[2].tile == "BA-C"
    assert ev[3] == TileDrawn(1, "BA-U")
    assert g.phase == "tile" and g.player == 1 and g.tile_id == "BA-U"
    assert g.bag_size == 0
    assert len(g.board) == 2


def test_discarding_the_last_tile_ends_the_game():
    g = new_game(["BA-E", "BA-C"])
    g.apply("tile 0,-1 r2")
    ev = g.apply("pass")
    assert [type(e) for e in ev] == [FeatureCompleted, TileDrawn, TileDiscarded, GameOver]
    assert g.over and g.phase == "game_over"


def test_game_is_over_after_the_last_tile():
    g = new_game(["BA-U", "BA-V"])
    play(g, ["tile 1,0 r0", "pass"])
    assert g.phase == "tile" and not g.over
    ev = play(g, ["tile 2,0 r0", "pass"])
    assert g.phase == "game_over" and g.over
    assert isinstance(ev[-1], GameOver)
    assert g.legal_actions() == []
    assert g.tile_id is None
    with pytest.raises(IllegalActionError, match="game is over"):
        g.apply(PlaceTile(-1, 0, 0))


def test_game_ends_only_after_the_last_turns_follower_decision():
    g = new_game(["BA-U"])
    ev = g.apply("tile 1,0 r0")
    assert g.phase == "follower" and not g.over
    assert not any(isinstance(e, GameOver) for e in ev)
    ev = g.apply("follower r1")
    assert isinstance(ev[-1], GameOver)
    assert ev[-1].scores == (2, 0) and ev[-1].winners == (0,)


def test_empty_draw_order_ends_the_game_at_once():
    g = new_game([])
    assert g.over and g.phase == "game_over"
    assert g.scores == [0, 0]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_two_to_five_players_with_seven_followers_each_take_turns_in_order(n):
    g = new_game(["BA-U"] * (n + 1), num_players=n)
    assert g.supply == [7] * n
    assert g.scores == [0] * n
    seen = []
    for k in range(n + 1):
        seen.append(g.player)
        ev = play(g, [f"tile {k + 1},0 r0"])
        assert isinstance(ev[0], TilePlaced) and ev[0].player == seen[-1]
        if g.phase == "follower":
            g.apply("pass")
    assert seen == [*range(n), 0]
    assert g.over


def test_running_out_of_followers_skips_the_follower_phase():
    # Player 0 spends all 7 followers on six cloisters and a road; player 1
    # lays a road row and passes.
    order = [
        "BA-B",
        "BA-U",
        "BA-B",
        "BA-U",
        "BA-B",
        "BA-U",
        "BA-B",
        "BA-U",
        "BA-A",
        "BA-U",
        "BA-A",
        "BA-U",
        "BA-U",
        "BA-U",
        "BA-V",
        "BA-V",
    ]
    g = new_game(order)
    moves = [
        "tile 0,1 r0",
        "follower m",
        "tile 1,0 r0",
        "pass",
        "tile 1,1 r0",
        "follower m",
        "tile 2,0 r0",
        "pass",
        "tile 2,1 r0",
        "follower m",
        "tile 3,0 r0",
        "pass",
        "tile 3,1 r0",
        "follower m",
        "tile 4,0 r0",
        "pass",
        "tile 4,1 r0",
        "follower m",
        "tile 5,0 r0",
        "pass",
        "tile 5,1 r0",
        "follower m",
        "tile 6,0 r0",
        "pass",
        "tile -1,0 r0",
        "follower r1",
        "tile 7,0 r0",
        "pass",
    ]
    play(g, moves)
    assert g.supply == [0, 7]
    assert len(g.followers) == 7
    assert g.player == 0 and g.phase == "tile"
    ev = g.apply("tile 8,0 r0")  # BA-V, free road and fields, but no follower in hand
    assert [type(e) for e in ev] == [TilePlaced, TileDrawn]
    assert g.phase == "tile" and g.player == 1
    assert g.legal_follower_spots() == []
    g.apply("tile 8,1 r2")  # player 1 still has followers: decision offered
    assert g.phase == "follower" and g.player == 1


# O12: a road leaving a junction tile and coming back into it passes through that tile twice.
_LOOP = ["BA-W", "BA-V", "BA-V", "BA-V"]
_LOOP_MOVES = ["tile 0,1 r0", "follower r1", "tile 1,1 r0", "pass", "tile 1,2 r1", "pass", "tile 0,2 r2", "pass"]


def _loop_score(options):
    g = new_game(_LOOP, options=options)
    return g, scored(play(g, _LOOP_MOVES))


def test_o12_road_through_one_tile_twice_counts_the_tile_once_by_default():
    g, ev = _loop_score({})
    assert len(ev) == 1 and ev[0].kind == "road" and not ev[0].final
    assert ev[0].items == (ScoreItem("tiles", "4 road tiles x 1", 4),)
    assert ev[0].points == (4, 0)


def test_o12_option_counts_every_pass_through_a_tile():
    g, ev = _loop_score({"base": {"count_tile_once": False}})
    assert ev[0].items == (ScoreItem("tiles", "5 road tiles x 1", 5),)
    assert ev[0].points == (5, 0)
