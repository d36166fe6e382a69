"""Heretics and Shrines: one rule per scenario (docs/rules/shrines.md).

Forced draw orders, scripted moves, exact expected points computed by hand.
Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.

Most scenarios use one layout south of the start tile: a shrine at (0,1)
(CU-shrine, all fields) next to a cloister at (1,1) (BA-B), surrounded by
straight roads (BA-U r0, field north and south) and curves (BA-V):

    y\\x   -1        0          1         2
    0     U r0     start      U r0      U r0
    1     V r0     SHRINE     CLOISTER  V r3
    2     V r2     U r0       U r0      V r1

The shrine's neighbours are columns -1..1, the cloister's columns 0..2; all
roads stay open.
"""

from __future__ import annotations

import pytest
from _expansion_games import SETTINGS, configs, play_random, seeds
from _helpers import brute_legal_placements
from hypothesis import given

from carc_env.core import (
    ConfigError,
    FeatureCompleted,
    FeatureScored,
    FollowerReturned,
    Game,
    GameConfig,
    IllegalActionError,
    ScoreItem,
)
from carc_env.core.tiles import BUILDING, load_tile_file, tile_file_path

SH = ("base", "shrines")

SHRINE = "CU-shrine"
CLOISTER = "BA-B"
# Placements by cell (tile, action) of the layout above, the two buildings excepted.
CELL = {
    (1, 0): ("BA-U", "tile 1,0 r0"),
    (2, 0): ("BA-U", "tile 2,0 r0"),
    (-1, 0): ("BA-U", "tile -1,0 r0"),
    (-1, 1): ("BA-V", "tile -1,1 r0"),
    (2, 1): ("BA-V", "tile 2,1 r3"),
    (-1, 2): ("BA-V", "tile -1,2 r2"),
    (0, 2): ("BA-U", "tile 0,2 r0"),
    (1, 2): ("BA-U", "tile 1,2 r0"),
    (2, 2): ("BA-V", "tile 2,2 r1"),
}


def scripted(
    cells: list[tuple[int, int]],
    heretic: bool = True,
    monk: str | None = "P1",
    expansions: tuple[str, ...] = SH,
    options: dict | None = None,
    cloister: tuple[str, str] = (CLOISTER, "tile 1,1 r0"),
    cell: dict | None = None,
) -> tuple[Game, list]:
    """Shrine at (0,1) by P0, cloister at (1,1) by P1 (or by P0 a turn later when
    ``monk == "P0"``), then the filler ``cells`` in order; returns the game and
    the events of the last move."""
    cell = {**CELL, **(cell or {})}
    cl_tile, cl_move = cloister
    moves = [("tile 0,1 r0", "follower m" if heretic else "pass", SHRINE)]
    if monk == "P0":  # P1 plays a filler between, so that P0 places the cloister
        first, cells = cells[0], cells[1:]
        moves.append((cell[first][1], "pass", cell[first][0]))
        moves.append((cl_move, "follower m", cl_tile))
    else:
        moves.append((cl_move, "follower m" if monk else "pass", cl_tile))
    moves += [(cell[c][1], "pass", cell[c][0]) for c in cells]
    g = Game(GameConfig(2, expansions, options or {}), seed=0, draw_order=[m[2] for m in moves])
    ev: list = []
    for tile_move, follower_move, _ in moves:
        ev = g.apply(tile_move)
        if g.phase == "follower":
            ev += g.apply(follower_move)
        else:
            assert follower_move == "pass", f"no follower decision after {tile_move}"
    return g, ev


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def nine(name: str) -> tuple[ScoreItem, ...]:
    return (ScoreItem(name, f"{name} 1 + 8 neighbours", 9),)


# Neighbours of the cloister only (last one completes it), of the shrine only, of both.
CLOISTER_FIRST = [(1, 0), (2, 0), (2, 1), (1, 2), (0, 2), (2, 2)]
SHRINE_FIRST = [(1, 0), (-1, 0), (-1, 1), (0, 2), (-1, 2), (1, 2)]
BOTH = [(1, 0), (2, 0), (2, 1), (-1, 0), (-1, 1), (-1, 2), (0, 2), (2, 2), (1, 2)]


# ----------------------------------------------------------------- tile data
def test_tile_file_has_five_shrines_and_the_option_adds_the_sixth():
    tf = load_tile_file(tile_file_path("shrines.toml"))
    assert [(t.id, t.count) for t in tf.tiles] == [
        ("CU-shrine", 1),
        ("CU-shrine-city", 1),
        ("CU-shrine-road", 1),
        ("CU-shrine-city-road", 1),
        ("CU-shrine-2roads", 1),
    ]
    assert tf.buildings == ("shrine",)
    for t in tf.tiles:
        assert [s.building for s in t.segments if s.kind == BUILDING] == ["shrine"]
    five = Game(GameConfig(2, SH), seed=0)
    six = Game(GameConfig(2, SH, {"shrines": {"sixth_tile": True}}), seed=0)
    assert five.bag_size + 1 == 71 + 5 and six.bag_size + 1 == 71 + 6
    assert "CU-shrine-CRFR" in six.rules.tile_index and "CU-shrine-CRFR" not in five.rules.tile_index


def test_bad_option_is_refused():
    with pytest.raises(ConfigError, match="strict_pairing"):
        Game(GameConfig(2, SH, {"shrines": {"strict_pairing": "yes"}}))


# ------------------------------------------------------------ scored like a cloister
def test_shrine_is_occupied_and_scored_like_a_cloister():
    # Everything round the shrine but (2,*): the shrine completes with (1,2), 9 for P0.
    g, ev = scripted(SHRINE_FIRST, monk=None)
    (s,) = of(ev, FeatureScored)
    assert (s.kind, s.items, s.points) == ("shrine", nine("shrine"), (9, 0))
    assert g.scores == [9, 0]


# --------------------------------------------------------------- placement
def test_a_shrine_may_not_adjoin_two_cloisters():
    # Cloisters at (1,1) and (-1,1); the shrine may not go to (0,1) between them.
    order = ["BA-U", "BA-U", "BA-B", "BA-B", "CU-shrine"]
    for strict in (True, False):
        g = Game(GameConfig(2, SH, {"shrines": {"strict_pairing": strict}}), seed=0, draw_order=order)
        for m in ["tile 1,0 r0", "tile -1,0 r0", "tile 1,1 r0", "tile -1,1 r0"]:
            g.apply(m)
            g.apply("pass")
        legal = {tuple(p) for p in g.legal_tile_placements().tolist()}
        assert (0, 1, 0) not in legal and (0, 1, 0) in brute_legal_placements(g, g.rules.tiles[g.current_tile])
        assert (-2, 1, 0) in legal and (2, 1, 0) in legal  # next to one cloister
        with pytest.raises(IllegalActionError, match="0,1"):
            g.apply("tile 0,1 r0")


def test_a_cloister_may_not_adjoin_two_shrines():
    order = ["BA-U", "BA-U", "CU-shrine", "CU-shrine-road", "BA-B"]
    g = Game(GameConfig(2, SH), seed=0, draw_order=order)
    for m in ["tile 1,0 r0", "tile -1,0 r0", "tile 1,1 r0", "tile -1,1 r0"]:
        g.apply(m)
        g.apply("pass")
    legal = {tuple(p) for p in g.legal_tile_placements().tolist()}
    assert not any((x, y) == (0, 1) for x, y, _ in legal)
    assert (2, 1, 0) in legal


def _rotations_at_0_1_after_pairing(order: list[str], strict: bool) -> set[int]:
    """Place the first three tiles at (1,0), (1,1), (2,1); the legal rotations of the fourth at (0,1)."""
    g = Game(GameConfig(2, SH, {"shrines": {"strict_pairing": strict}}), seed=0, draw_order=order)
    for m in ["tile 1,0 r0", "tile 1,1 r0", "tile 2,1 r0"]:
        g.apply(m)
        g.apply("pass")
    return {r for x, y, r in g.legal_tile_placements().tolist() if (x, y) == (0, 1)}


def test_strict_pairing_forbids_a_second_shrine_next_to_a_paired_cloister():
    # Cloister (1,1) already paired with the shrine (2,1); a second shrine at
    # (0,1) would adjoin only that cloister.  Default (strict, official FAQ):
    # forbidden; strict_pairing=False (rule text only): allowed.
    order = ["BA-U", "BA-B", "CU-shrine", "CU-shrine-road"]
    for strict, allowed in ((True, set()), (False, {0, 1})):
        assert _rotations_at_0_1_after_pairing(order, strict) == allowed


def test_strict_pairing_forbids_a_second_cloister_next_to_a_paired_shrine():
    order = ["BA-U", "CU-shrine", "BA-B", "BA-A"]
    for strict, allowed in ((True, set()), (False, {0, 1})):
        assert _rotations_at_0_1_after_pairing(order, strict) == allowed


# --------------------------------------------------------------- challenges
def test_completed_cloister_wins_the_challenge_and_the_heretic_returns_without_points():
    g, ev = scripted(CLOISTER_FIRST)
    (s,) = of(ev, FeatureScored)
    assert (s.kind, s.items, s.points) == ("cloister", nine("cloister"), (0, 9))
    (lost,) = of(ev, FollowerReturned)
    assert lost == FollowerReturned(
        0, g.node_of(0, 1, "m"), "lost a challenge: the cloister at (1,1) was completed first"
    )
    assert g.followers == {} and g.supply == [7, 7]
    assert g.scores == [0, 9]  # game over: nothing left to score


def test_completed_shrine_wins_the_challenge():
    g, ev = scripted(SHRINE_FIRST)
    (s,) = of(ev, FeatureScored)
    assert (s.kind, s.items, s.points) == ("shrine", nine("shrine"), (9, 0))
    (lost,) = of(ev, FollowerReturned)
    assert (lost.player, lost.node) == (1, g.node_of(1, 1, "m"))
    assert g.scores == [9, 0]


def test_shrine_and_cloister_completed_by_the_same_tile_both_score():
    g, ev = scripted(BOTH)
    assert [(s.kind, s.points) for s in of(ev, FeatureScored)] == [("shrine", (9, 0)), ("cloister", (0, 9))]
    assert of(ev, FollowerReturned) == []
    assert g.scores == [9, 9]


def test_an_unoccupied_completed_cloister_wins_no_challenge():
    # The cloister completes without a monk: nothing is scored, the heretic
    # stays and scores at game end as an incomplete shrine: 1 + 5 neighbours.
    g, ev = scripted(CLOISTER_FIRST, monk=None)
    (done,) = [e for e in of(ev, FeatureCompleted) if e.kind == "cloister"]
    assert not done.occupied
    assert of(ev, FollowerReturned) == []
    (s,) = of(ev, FeatureScored)
    assert (s.kind, s.final, s.items, s.points) == (
        "shrine",
        True,
        (ScoreItem("shrine", "shrine 1 + 5 neighbours", 6),),
        (6, 0),
    )
    assert g.scores == [6, 0]


def test_a_player_may_challenge_their_own_follower():
    # P0 owns both the heretic and the monk; the cloister wins.
    g, ev = scripted(CLOISTER_FIRST, monk="P0")
    (s,) = of(ev, FeatureScored)
    assert (s.kind, s.points) == ("cloister", (9, 0))
    (lost,) = of(ev, FollowerReturned)
    assert lost.player == 0
    assert g.scores == [9, 0] and g.supply == [7, 7]


def test_an_unresolved_challenge_scores_both_buildings_normally_at_game_end():
    # O9: the game ends with the shrine (0,1) and the cloister (1,1) both incomplete:
    # each has 2 neighbours (the start tile and the other building): 3 points each.
    g, ev = scripted([])
    assert [(s.kind, s.final, s.items, s.points) for s in of(ev, FeatureScored)] == [
        ("shrine", True, (ScoreItem("shrine", "shrine 1 + 2 neighbours", 3),), (3, 0)),
        ("cloister", True, (ScoreItem("cloister", "cloister 1 + 2 neighbours", 3),), (0, 3)),
    ]
    assert of(ev, FollowerReturned) == []


# ---------------------------------------------------- churches (with Darmstadt)
# The church DA-st-mary r0 (field N and W, road E-S) replaces the cloister at
# (1,1); a junction BA-W r1 at (1,2) takes the church's south road.
CHURCH = {"cloister": ("DA-st-mary", "tile 1,1 r0"), "cell": {(1, 2): ("BA-W", "tile 1,2 r1")}}


@pytest.mark.parametrize("churches_are_cloisters", [True, False])
def test_a_church_counts_as_a_cloister_in_challenges(churches_are_cloisters):
    # Default (publisher 3/2015): the completed shrine beats the monk on the
    # adjacent church.  churches_are_cloisters=False: the monk stays.
    g, ev = scripted(
        SHRINE_FIRST,
        expansions=("base", "shrines", "darmstadt"),
        options={"shrines": {"churches_are_cloisters": churches_are_cloisters}},
        **CHURCH,
    )
    (s,) = [e for e in of(ev, FeatureScored) if not e.final]
    assert (s.kind, s.points) == ("shrine", (9, 0))
    if churches_are_cloisters:
        assert [e.player for e in of(ev, FollowerReturned)] == [1]
        assert g.scores == [9, 0]
    else:
        assert of(ev, FollowerReturned) == []
        # game end: the church has 5 neighbours: 6 for P1
        (church,) = [e for e in of(ev, FeatureScored) if e.final]
        assert (church.kind, church.points) == ("church", (0, 6))
        assert g.scores == [9, 6]


@pytest.mark.parametrize("churches_are_cloisters", [True, False])
def test_a_church_counts_as_a_cloister_for_placement(churches_are_cloisters):
    # A cloister at (-1,1) and a church at (1,1): a shrine at (0,1) would adjoin both.
    order = ["BA-U", "BA-U", "BA-B", "DA-st-mary", "CU-shrine"]
    cfg = GameConfig(
        2, ("base", "shrines", "darmstadt"), {"shrines": {"churches_are_cloisters": churches_are_cloisters}}
    )
    g = Game(cfg, seed=0, draw_order=order)
    for m in ["tile 1,0 r0", "tile -1,0 r0", "tile -1,1 r0", "tile 1,1 r0"]:
        g.apply(m)
        g.apply("pass")
    legal = {(x, y) for x, y, _ in g.legal_tile_placements().tolist()}
    assert ((0, 1) in legal) is (not churches_are_cloisters)


# ------------------------------------------------------------- properties
def _sides(game: Game) -> dict[tuple[int, int], int]:
    """Board cell -> 1 shrine, -1 cloister side, from the tile data (brute force)."""
    opts = game.rules.by_key["shrines"].options
    cloisters = {"cloister", "church"} if opts.churches_are_cloisters else {"cloister"}
    out = {}
    for x, y, t, _, _ in game.placements:
        kinds = {s.building for s in game.rules.tiles[t].segments if s.kind == BUILDING}
        if "shrine" in kinds:
            out[(x, y)] = 1
        elif kinds & cloisters:
            out[(x, y)] = -1
    return out


def _opposite(sides: dict, x: int, y: int, side: int) -> int:
    return sum(1 for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx or dy) and sides.get((x + dx, y + dy)) == -side)


def _check_placements(game: Game) -> None:
    """Legal placements = edge-legal placements that keep the shrine adjacency rule."""
    if game.phase != "tile":
        return
    strict = game.rules.by_key["shrines"].options.strict_pairing
    sides = _sides(game)
    if strict:  # the board invariant: every pairing one-to-one
        assert all(_opposite(sides, x, y, s) <= 1 for (x, y), s in sides.items())
    tile = game.rules.tiles[game.current_tile]
    kinds = {s.building for s in tile.segments if s.kind == BUILDING}
    want = set()
    for x, y, r in brute_legal_placements(game, tile):
        after = dict(sides)
        after.update(_sides_of(game, kinds, x, y))
        side = after.get((x, y))
        if side:
            if strict:
                ok = all(_opposite(after, cx, cy, s) <= 1 for (cx, cy), s in after.items())
            else:
                ok = _opposite(after, x, y, side) <= 1
            if not ok:
                continue
        want.add((x, y, r))
    assert {tuple(p) for p in game.legal_tile_placements().tolist()} == want


def _sides_of(game: Game, kinds: set[str], x: int, y: int) -> dict[tuple[int, int], int]:
    opts = game.rules.by_key["shrines"].options
    cloisters = {"cloister", "church"} if opts.churches_are_cloisters else {"cloister"}
    if "shrine" in kinds:
        return {(x, y): 1}
    if kinds & cloisters:
        return {(x, y): -1}
    return {}


@SETTINGS
@given(configs(must="shrines"), seeds, seeds)
def test_random_games_respect_the_shrine_adjacency_rule(config, seed, action_seed):
    play_random(config, seed, action_seed, before=_check_placements)


@SETTINGS
@given(configs(), seeds, seeds)
def test_random_games_with_any_combination_keep_the_invariants(config, seed, action_seed):
    g, events = play_random(config, seed, action_seed)
    assert g.over
    if "shrines" in config.expansions:
        # a challenge is lost only next to a building completed on the same turn
        assert all(e.reason.startswith("lost a challenge") for e in events if isinstance(e, FollowerReturned))
