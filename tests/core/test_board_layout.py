"""The core's board layout (carc_env.core.layout) and its hooks, through a small test-only plug-in.

The test board (x east, y south)::

      x  0   1   2   3
    y-1  R                  R: a road printed abroad (void cell), facing (0,0)
    y 0  .   .   .   N      N: a printed square with four neutral edges (group 1)
    y 1  S   .   .   C      C: a printed city square, its city facing west (group 0)
    y 2  .   .   .   .      S: the start tile BA-D (unrotated: city north, road west-east)

Every other cell is void.  Hooks: ``board_layout`` and ``followers_per_player``
(single answer), ``tile_counts`` (pipeline), ``setup_from_bag`` (each).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from _helpers import play, scored

from carc_env.core import ConfigError, Game, GameConfig, IllegalActionError, ScoreItem
from carc_env.core.config import N_PATTERNS, PATTERN_BITS, ruleset
from carc_env.core.expansion import Expansion, register, unregister
from carc_env.core.layout import ANY_EDGE, BoardLayout, PrintedPiece
from carc_env.core.tiles import EDGE_CODES, TileType, parse_tile_data

PRINTED = parse_tile_data(
    {
        "set": "test-board",
        "tile": [
            {"id": "T-CAP", "count": 0, "edges": "CFFF", "features": [{"id": "c1", "kind": "city", "edges": ["N"]}],
             "fields": [{"halves": ["EL", "ER", "SL", "SR", "WL", "WR"], "cities": ["c1"]}]},
            {"id": "T-ROAD", "count": 0, "edges": "R---", "features": [{"id": "r1", "kind": "road", "edges": ["N"]}],
             "fields": [{"halves": ["NL"]}, {"halves": ["NR"]}]},
            {"id": "T-BLANK", "count": 0, "edges": "----"},
        ],
    },
    "test board",
).tiles  # fmt: skip
SQUARES = frozenset((x, y) for x in range(4) for y in range(3))
LAYOUT = BoardLayout(
    SQUARES,
    (
        PrintedPiece("T-CAP", 3, 1, 3, square=True, group=0, name="C"),
        PrintedPiece("T-BLANK", 3, 0, 0, square=True, group=1, name="N"),
        PrintedPiece("T-ROAD", 0, -1, 2, square=False, name="R"),
    ),
    PRINTED,
    name="test",
)


class Board(Expansion):
    KEY = "test_board"
    REQUIRES = ("base",)
    REPLACES_START = True

    def board_layout(self) -> BoardLayout:
        return LAYOUT

    def setup(self, game: Game) -> None:
        game.place_fixed("BA-D", 0, 1, 0)


class OtherBoard(Expansion):
    KEY = "test_other_board"
    REQUIRES = ("base",)

    def board_layout(self) -> BoardLayout:
        return LAYOUT


class FromBag(Expansion):
    """Lays the first tile of the bag on (1, 2), unrotated if it fits, announced."""

    KEY = "test_from_bag"
    REQUIRES = ("test_board",)

    def setup_from_bag(self, game: Game) -> None:
        tid = game.take_from_bag()
        fits = game.fitting_rotations(tid, 1, 2)
        game.place_fixed(tid, 1, 2, fits[0], from_bag=False, announce=True)


class Recorder(Expansion):
    """Records the tiles laid at setup by no player, and those placed in play."""

    KEY = "test_recorder"
    REQUIRES = ("base",)

    def new_state(self) -> list:
        return []

    def after_setup_placement(self, game: Game, x: int, y: int) -> None:
        game.ext[self.KEY].append(("setup", x, y, game.rules.tiles[game.placements[-1][2]].id))

    def after_placement(self, game: Game, x: int, y: int) -> None:
        game.ext[self.KEY].append(("play", x, y, game.rules.tiles[game.placements[-1][2]].id))


class Double(Expansion):
    KEY = "test_double"
    REQUIRES = ("base",)

    def tile_counts(self, tiles: tuple[TileType, ...], counts: dict[str, int]) -> dict[str, int]:
        return {k: 2 * v for k, v in counts.items()}


class PlusOneCloister(Expansion):
    KEY = "test_plus_cloister"
    REQUIRES = ("base",)

    def tile_counts(self, tiles: tuple[TileType, ...], counts: dict[str, int]) -> dict[str, int]:
        counts["BA-B"] += 1
        return counts


class Nine(Expansion):
    KEY = "test_nine"
    REQUIRES = ("base",)

    def followers_per_player(self, configured: int) -> int | None:
        return 9


class Eight(Expansion):
    KEY = "test_eight"
    REQUIRES = ("base",)

    def followers_per_player(self, configured: int) -> int | None:
        return 8


@contextmanager
def registered(*classes: type[Expansion]) -> Iterator[None]:
    for c in classes:
        register(c)
    try:
        yield
    finally:
        for c in classes:
            unregister(c.KEY)


@pytest.fixture(autouse=True)
def _plugins():
    with registered(Board, OtherBoard, FromBag, Recorder, Double, PlusOneCloister, Nine, Eight):
        yield


def board(order: list[str], *more: str, n: int = 2) -> Game:
    return Game(GameConfig(n, ("base", "test_board", *more)), seed=0, draw_order=order)


def cells(g: Game) -> set[tuple[int, int]]:
    return {(int(x), int(y)) for x, y, _ in g.legal_tile_placements()}


# ------------------------------------------------------------------------------ the board
def test_printed_pieces_are_laid_first_and_the_start_tile_after_them():
    g = board(["BA-U"])
    assert [g.describe_cell(x, y) for x, y, *_ in g.placements] == [
        "(3,1) T-CAP r3", "(3,0) T-BLANK r0", "(0,-1) T-ROAD r2", "(0,1) BA-D r0",
    ]  # fmt: skip
    assert g.layout is LAYOUT and g.rules.layout is LAYOUT
    assert [t.id for t in g.rules.tiles[-3:]] == ["T-CAP", "T-ROAD", "T-BLANK"]  # appended, count 0
    assert g.connected_groups == set()


def test_only_squares_take_tiles_and_void_cells_never_join_the_frontier():
    g = board(["BA-U", "BA-U"])
    fx, fy, _ = g.frontier()
    assert set(zip(fx.tolist(), fy.tolist(), strict=True)) == {(0, 0), (1, 1), (0, 2)}  # not (-1,1)
    assert cells(g) == {(1, 1), (0, 2)}  # (0,0) needs a road north (printed abroad) and a city south
    with pytest.raises(IllegalActionError, match="touches no placed tile"):
        g.apply("tile -1,1 r0")


def test_a_border_closes_the_road_that_runs_into_it():
    """BA-D's road: west into the void (closed at once), east into (1,1)."""
    g = board(["BA-U"])
    road = g.find(g.node_of(0, 1, "r1"))
    assert g.open[road] == 1


def test_a_printed_square_is_connected_when_a_tile_touches_it():
    """T-CAP's city faces west: (2,1) needs a city edge east.  BA-J turned once: city east, road
    west-south.  It closes the two-tile city T-CAP + BA-J and connects T-CAP: (3,2) joins the frontier."""
    g = board(["BA-U", "BA-J", "BA-U"])
    play(g, ["tile 1,1 r0", "pass"])  # road west-east
    assert g.connected_groups == set() and rotations(g, 2, 1) == {1}
    assert (3, 2) not in frontier(g)
    (s,) = [s for s in scored(play(g, ["tile 2,1 r1", "follower c1"])) if s.kind == "city"]
    assert s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),)
    assert g.connected_groups == {0} and (3, 2) in frontier(g)
    assert rotations(g, 3, 2) == {0, 2}  # T-CAP's south side is a printed field


def test_a_neutral_printed_edge_allows_anything_and_closes_it():
    """T-BLANK (3,0) has four neutral edges: a tile at (2,0) may turn anything east, and a city
    turned east is closed there."""
    g = board(["BA-U", "BA-J", "BA-E"])
    play(g, ["tile 1,1 r0", "pass", "tile 2,1 r1", "pass"])
    assert g.layout.requirement[(2, 0)] == (0, ANY_EDGE, 0, 0)
    assert rotations(g, 2, 0) == {0, 1, 3}  # only the south side (BA-J's field) constrains
    (s,) = scored(play(g, ["tile 2,0 r1", "follower c1"]))
    assert s.kind == "city" and s.items == (ScoreItem("tiles", "1 city tile x 2", 2),)
    assert g.connected_groups == {0, 1}


def test_a_printed_road_abroad_must_be_matched_and_is_a_tile_of_its_road():
    g = board(["BA-K"])
    assert rotations(g, 0, 0) == {2}  # road north to the printed road, city south onto BA-D's city
    (s,) = [s for s in scored(play(g, ["tile 0,0 r2", "follower c1"])) if s.kind == "city"]
    assert s.items == (ScoreItem("tiles", "2 city tiles x 2", 4),)
    road = g.find(g.node_of(0, -1, "r1"))
    assert g.tiles[road] == {g.board[(0, -1)], g.board[(0, 0)]} and g.open[road] == 1  # open to the east


def test_a_building_needs_the_squares_around_it_only():
    g = board(["BA-U", "BA-B"])
    assert g.building_target(0, 2) == 3 and g.building_target(1, 1) == 8 and g.building_target(3, 2) == 3
    assert g.building_target(-5, -5) == 8  # off the board: never asked, the default


def test_placing_a_start_tile_off_the_playable_squares_is_refused():
    class Bad(Board):
        KEY = "test_bad_board"

        def setup(self, game: Game) -> None:
            game.place_fixed("BA-D", -1, 1, 0)

    with registered(Bad), pytest.raises(ConfigError, match=r"\(-1,1\), which is not a playable square"):
        Game(GameConfig(2, ("base", "test_bad_board")), seed=0)


def test_two_printed_boards_are_refused():
    with pytest.raises(ConfigError, match="'test_board' and 'test_other_board' both answer 'board_layout'"):
        ruleset(GameConfig(2, ("base", "test_board", "test_other_board")))


def test_setup_from_bag_lays_the_first_tile_of_the_stack_and_the_draw_order_stays_whole():
    g = board(["BA-V", "BA-U", "BA-E"], "test_from_bag")
    assert g.describe_cell(1, 2) == "(1,2) BA-V r0" and g.tile_id == "BA-U"
    assert g.draw_order == ["BA-V", "BA-U", "BA-E"]
    shuffled = Game(GameConfig(2, ("base", "test_board", "test_from_bag")), seed=4)
    assert shuffled.describe_cell(1, 2).split()[1] == shuffled.draw_order[0]


def test_after_setup_placement_is_told_of_announced_setup_tiles_only():
    """The start tile (not announced) is not reported; the tile from the bag (announced) is, as
    the laid tile; placements in play go to after_placement."""
    g = board(["BA-V", "BA-U"], "test_from_bag", "test_recorder")
    assert g.ext["test_recorder"] == [("setup", 1, 2, "BA-V")]
    g.apply("tile 1,1 r0")
    assert g.ext["test_recorder"][-1] == ("play", 1, 1, "BA-U")


# ----------------------------------------------------------------------- config-time hooks
def test_tile_counts_is_a_pipeline():
    one = ruleset(GameConfig(2, ("base", "test_double", "test_plus_cloister")))
    counts = {t.id: t.count for t in one.tiles}
    assert counts["BA-B"] == 2 * 4 + 1 and counts["BA-C"] == 2 and sum(counts.values()) == 145
    assert Game(GameConfig(2, ("base", "test_double")), seed=1).bag_size == 144 - 1 - 1  # start tile, drawn tile


def test_followers_per_player_is_a_single_answer():
    g = Game(GameConfig(2, ("base", "test_nine")), seed=0)
    assert g.rules.followers == 9 and g.supply == [9, 9] and g.followers_conserved()
    with pytest.raises(ConfigError, match="both answer 'followers_per_player'"):
        ruleset(GameConfig(2, ("base", "test_nine", "test_eight")))


# ------------------------------------------------------------------- games without a board
def test_without_a_board_the_compat_table_is_the_one_it_always_was():
    """Code 7 (ANY_EDGE) only widens patterns no unbounded game produces."""
    rules = ruleset(GameConfig())
    assert rules.layout is None and rules.followers == 7
    p = np.arange(N_PATTERNS)
    req = np.stack([(p >> (PATTERN_BITS * s)) & 7 for s in range(4)], axis=1)
    without_any = ~(req == ANY_EDGE).any(axis=1)
    for t, tile in enumerate(rules.tiles):
        old = np.zeros(N_PATTERNS, dtype=np.uint8)
        for r in range(4):
            ok = ((req == 0) | (req == np.array(tile.edge_codes[r])[None, :])).all(axis=1)
            old |= ok.astype(np.uint8) << r
        old[0] = 0
        assert np.array_equal(rules.compat[t][without_any], old[without_any]), tile.id
    assert max(EDGE_CODES.values()) < ANY_EDGE


def frontier(g: Game) -> set[tuple[int, int]]:
    fx, fy, _ = g.frontier()
    return set(zip(fx.tolist(), fy.tolist(), strict=True))


def rotations(g: Game, x: int, y: int) -> set[int]:
    return {int(r) for cx, cy, r in g.legal_tile_placements() if (int(cx), int(cy)) == (x, y)}


def test_the_printed_pieces_are_laid_once_per_rule_set_and_copied_into_each_game():
    a = board(["BA-U", "BA-U"])
    b = board(["BA-U", "BA-U"])
    assert a.placements == b.placements and a.parent == b.parent and a.open == b.open
    for name in ("parent", "open", "placements", "board", "tiles", "completed", "bounds"):
        assert getattr(a, name) is not getattr(b, name), name
    play(a, ["tile 1,1 r0", "pass"])
    fresh = board(["BA-U", "BA-U"])
    assert fresh.placements == b.placements and len(a.placements) == len(fresh.placements) + 1
    assert fresh.tiles == b.tiles and all(b.tiles[k] is not fresh.tiles[k] for k in fresh.tiles)
