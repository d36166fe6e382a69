"""The Sagrada Familia tile: one rule per scenario (docs/rules/sagrada_familia.md).

Forced draw orders, scripted moves, exact expected points computed by hand.
Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.

The Sagrada Familia tile ``SF-sagrada-familia`` is (probably) a four-sided city.
Most scenarios put it at (0,-1), on the start city, which leaves the city open
north (0,-2), east (1,-1) and west (-1,-1); ``BA-E`` caps close those edges:
at (1,-1) turned r3 (city west), at (-1,-1) r1 (city east), at (0,-2) r2 (city
south).
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from _expansion_games import SETTINGS, play_random, seeds
from _helpers import brute_legal_placements, play
from _linked import Hypothetical, LinkedFeatures, configs_with
from hypothesis import given

from carc_env.core import (
    FeatureCompleted,
    FeatureScored,
    Game,
    GameConfig,
    IllegalActionError,
    ScoreItem,
    TileDiscarded,
    TileDrawn,
)
from carc_env.core.tiles import CITY, load_tile_file, tile_file_path

SF = ("base", "sagrada_familia")
SAGRADA = "SF-sagrada-familia"
CLOSED_BY_SAGRADA = ScoreItem("sagrada_familia", "closed by placing the Sagrada Familia: 0 points", 0)
CLOSED_SAGRADA_CITY = ScoreItem("sagrada_familia", "the Sagrada Familia city was closed: 0 points", 0)
REFUSED_REASON = "every legal placement would close the Sagrada Familia city"


def game(order: list[str], expansions: tuple[str, ...] = SF, options: dict | None = None) -> Game:
    return Game(GameConfig(2, expansions, options or {}), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def city_tiles(n: int, per: int = 2) -> ScoreItem:
    return ScoreItem("tiles", f"{n} city tile{'s' * (n != 1)} x {per}", n * per)


def legal(g: Game) -> set[tuple[int, int, int]]:
    return {tuple(int(v) for v in row) for row in g.legal_tile_placements()}


# ----------------------------------------------------------------- tile data
def test_tile_file_has_one_four_sided_city_tagged_as_probable():
    tf = load_tile_file(tile_file_path("sagrada_familia.toml"))
    ((tile),) = tf.tiles
    assert (tile.id, tile.count, tile.edges) == (SAGRADA, 1, "CCCC")
    ((city),) = tile.segments
    assert city.edges == (0, 1, 2, 3) and city.pennants == 0 and "sagrada_familia" in city.tags
    with tile_file_path("sagrada_familia.toml").open("rb") as fh:
        raw = tomllib.load(fh)
    assert raw["tile"][0]["layout_status"] == "probable"
    g = Game(GameConfig(2, SF), seed=0)
    assert g.bag_size + 1 == 71 + 1


# ------------------------------------------------------------ closing refused
CLOSE_ORDER = [SAGRADA, "BA-E", "BA-E", "BA-E"]
CLOSE_MOVES = ["tile 0,-1 r0", "follower c1", "tile 1,-1 r3", "pass", "tile -1,-1 r1", "pass"]


def test_a_placement_that_would_close_the_sagrada_familia_city_is_refused():
    g = game(CLOSE_ORDER)
    play(g, CLOSE_MOVES)  # the Sagrada Familia city is open north only
    assert g.tile_id == "BA-E"
    offered = legal(g)
    closing = {(0, -2, 2)}  # the only way BA-E fits at (0,-2)
    assert closing <= brute_legal_placements(g, g.rules.tiles[g.current_tile])
    assert offered == brute_legal_placements(g, g.rules.tiles[g.current_tile]) - closing
    # issue 23: the error names the Sagrada Familia rule, not the edges (which fit)
    with pytest.raises(IllegalActionError) as err:
        g.apply("tile 0,-2 r2")
    assert str(err.value) == (
        "cannot place BA-E at (0,-2) in rotation 2: its edges FFCF (N E S W) fit, but expansion "
        "'sagrada_familia' forbids it: this placement would close the Sagrada Familia city, which may never "
        "be completed; no rotation is allowed in this cell (see legal_actions())"
    )
    assert g.phase == "tile" and g.tile_id == "BA-E"


def test_the_sagrada_familia_city_scores_as_an_incomplete_city_at_game_end():
    g = game(CLOSE_ORDER)
    play(g, CLOSE_MOVES)
    ev = play(g, ["tile 0,1 r2", "pass"])  # the last cap goes elsewhere; the game ends
    (s,) = of(ev, FeatureScored)
    assert s.final and s.items == (city_tiles(4, 1),) and s.points == (4, 0)
    assert g.scores == [4, 0]


# ------------------------------------------------------------ forced removal
# The Sagrada Familia city's last open edge faces (0,-2); three more caps face
# that cell from the east, west and north, so the only place a four-sided city
# BA-C fits is (0,-2), where it would close the Sagrada Familia city.
REMOVAL_ORDER = [SAGRADA, "BA-E", "BA-E", "BA-E", "BA-E", "BA-B", "BA-E", "BA-C", "BA-U"]
REMOVAL_MOVES = [
    "tile 0,-1 r0",
    "follower c1",  # P0
    "tile 1,-1 r3",
    "pass",  # P1
    "tile -1,-1 r1",
    "pass",  # P0
    "tile 1,-2 r3",
    "pass",  # P1: a cap facing (0,-2) from the east
    "tile -1,-2 r1",
    "pass",  # P0: from the west
    "tile 1,-3 r0",
    "pass",  # P1: a cloister, so that (0,-3) touches the board
]


def test_a_tile_whose_only_placements_would_close_the_city_is_removed_and_another_drawn():
    g = game(REMOVAL_ORDER)
    play(g, REMOVAL_MOVES)
    ev = play(g, ["tile 0,-3 r2", "pass"])  # P0: a cap facing (0,-2) from the north
    assert [e for e in ev if isinstance(e, (TileDrawn, TileDiscarded))] == [
        TileDrawn(1, "BA-C"),
        TileDiscarded(1, "BA-C", REFUSED_REASON),
        TileDrawn(1, "BA-U"),
    ]
    assert g.tile_id == "BA-U" and g.player == 1
    # without the Sagrada Familia rule BA-C would fit only there
    bac = g.rules.tiles[g.rules.tile_index["BA-C"]]
    assert brute_legal_placements(g, bac) == {(0, -2, r) for r in range(4)}
    assert g.remaining_counts()[g.rules.tile_index["BA-C"]] == 0  # out of the game


def test_the_sagrada_familia_tile_with_no_legal_placement_leaves_the_game():
    # A cap closes the start city first: no cell takes a four-sided city.
    g = game(["BA-E", SAGRADA, "BA-E"])
    ev = play(g, ["tile 0,-1 r2", "pass"])
    assert [e for e in ev if isinstance(e, (TileDrawn, TileDiscarded))] == [
        TileDrawn(1, SAGRADA),
        TileDiscarded(1, SAGRADA, "no legal placement"),
        TileDrawn(1, "BA-E"),
    ]
    assert g.tile_id == "BA-E"


# ------------------------------------------------------------- exception 1
EXCEPTION_ORDER = ["BA-U", "BA-U", "BA-E", "BA-E", "BA-B", "BA-E", SAGRADA]
EXCEPTION_MOVES = [
    "tile 1,0 r0",
    "pass",  # P0
    "tile -1,0 r0",
    "pass",  # P1
    "tile 1,-1 r3",
    "follower c1",  # P0: cap facing west
    "tile -1,-1 r1",
    "follower c1",  # P1: cap facing east
    "tile 1,-2 r0",
    "pass",  # P0: a cloister, so that (0,-2) touches the board
    "tile 0,-2 r2",
    "pass",  # P1: cap facing south
]


def test_a_city_closed_by_the_sagrada_familia_tile_scores_zero_and_its_followers_return():
    # Caps face (0,-1) from the east (P0's knight), west (P1's knight) and north;
    # the Sagrada Familia at (0,-1) joins them to the start city and closes it:
    # 5 tiles, which would be 10 points, score 0; both knights go home.
    g = game(EXCEPTION_ORDER)
    play(g, EXCEPTION_MOVES)
    ev = play(g, ["tile 0,-1 r0"])  # P0; the city is occupied: no follower decision
    (done,) = of(ev, FeatureCompleted)
    assert (done.kind, done.size, done.occupied) == ("city", 5, True)
    (s,) = [e for e in of(ev, FeatureScored) if not e.final]
    assert s.items == (CLOSED_BY_SAGRADA,)
    assert (s.value, s.points, s.returned) == (0, (0, 0), (1, 1))
    assert g.scores == [0, 0] and g.supply == [7, 7]


# Exception 1 and the rest of the game (issue 23): "that city will score 0 points" read for the
# King, the farmers and a knight put on it.  Each reading is an option; each is tested both ways.
def exception_game(options: dict, extra: tuple[str, ...] = (), first: str = "pass", caps: str = "follower c1") -> Game:
    moves = [
        first if m == "pass" and i == 1 else caps if m == "follower c1" else m for i, m in enumerate(EXCEPTION_MOVES)
    ]
    g = game(EXCEPTION_ORDER, expansions=(*SF, *extra), options={"sagrada_familia": options})
    play(g, moves)
    return g


@pytest.mark.parametrize("counts", [False, True])
def test_exception_1_the_closed_city_gives_farmers_nothing_by_default(counts):
    # P0's farmer on the north field of BA-U (1,0): with the start tile's, the caps' and the cloister's
    # fields it is one field, bordering one city only, the Sagrada Familia city the tile closes.
    # Default: "that city will score 0 points", for the farmers too: 0 completed cities, 0 points.
    # exception_city_counts_for_farmers=True: it is a completed city: 1 x 3 = 3 for P0.
    g = exception_game({"exception_city_counts_for_farmers": counts}, first="follower f1")
    ev = play(g, ["tile 0,-1 r0"])  # P0: the last tile; the game ends
    assert g.over
    (farm,) = [e for e in of(ev, FeatureScored) if e.kind == "field"]
    n = int(counts)
    assert farm.items == (ScoreItem("cities", f"{n} completed cit{'y' if n == 1 else 'ies'} x 3", 3 * n),)
    assert farm.points == (3 * n, 0) and g.scores == [3 * n, 0]


@pytest.mark.parametrize("counts", [False, True])
def test_exception_1_the_closed_city_does_not_count_for_the_king_by_default(counts):
    # With King & Robber Baron: the Sagrada Familia tile closes the first city of the game (5 tiles).
    # Default: it scores 0 for the King too: nobody takes him, no King's point at the end.
    # exception_city_counts_for_king=True: P0, who placed the tile, takes the King (a city of 5
    # tiles) and scores 1 completed city x 1 at the end.
    from carc_env.core.events import FigureMoved

    g = exception_game({"exception_city_counts_for_king": counts}, extra=("king_robber",))
    ev = play(g, ["tile 0,-1 r0"])
    assert g.over
    moved = of(ev, FigureMoved)
    king = [e for e in ev if type(e).__name__ == "PointsAwarded" and e.items and e.items[0].kind == "king"]
    if counts:
        assert [(m.player, m.previous) for m in moved] == [(0, -1)] and g.ext["king_robber"].king == 0
        assert [(k.player, k.points, k.items) for k in king] == [
            (0, 1, (ScoreItem("king", "1 completed city x 1", 1),))
        ]
        assert g.scores == [1, 0]
    else:
        assert moved == [] and king == [] and g.ext["king_robber"].king == -1
        assert g.count_completed(CITY) == 0 and g.scores == [0, 0]


@pytest.mark.parametrize("allowed", [True, False])
def test_exception_1_a_knight_on_the_city_the_tile_closes_comes_straight_back(allowed):
    # The caps carry no knight this time: the city the Sagrada Familia tile closes is free.
    # Default (the base rule: any free feature of the placed tile): P0 may put a knight on it; it
    # returns at once with 0 points.  exception_knight_allowed=False: no spot, no follower decision.
    g = exception_game({"exception_knight_allowed": allowed}, caps="pass")
    ev = play(g, ["tile 0,-1 r0"])
    if allowed:
        assert g.phase == "follower" and [g.action_text(a) for a in g.legal_actions()] == ["follower c1", "pass"]
        ev = play(g, ["follower c1"])
        (s,) = [e for e in of(ev, FeatureScored) if not e.final]
        assert s.items == (CLOSED_BY_SAGRADA,) and (s.value, s.points, s.returned) == (0, (0, 0), (1, 0))
    else:
        assert g.over and [type(e).__name__ for e in ev].count("FollowerPlaced") == 0
        assert of(ev, FeatureScored) == []  # nobody on the city: nothing to score
    assert g.scores == [0, 0] and g.supply == [7, 7]


# ---------------------------------------------------------------- variant
def test_variant_the_city_may_close_scores_zero_and_its_followers_stay_until_the_end():
    g = game(CLOSE_ORDER + ["BA-U"], options={"sagrada_familia": {"may_close": True}})
    play(g, CLOSE_MOVES)
    assert (0, -2, 2) in legal(g)
    ev = play(g, ["tile 0,-2 r2", "pass"])  # P1 closes the Sagrada Familia city
    (done,) = of(ev, FeatureCompleted)
    assert (done.kind, done.size, done.occupied) == ("city", 5, True)
    assert of(ev, FeatureScored) == []
    assert g.supply == [6, 7]  # P0's knight is stuck
    ev = play(g, ["tile 1,0 r0", "pass"])  # P0: the last tile; the game ends
    (s,) = of(ev, FeatureScored)
    assert s.final and s.items == (CLOSED_SAGRADA_CITY,)
    assert (s.value, s.points, s.returned) == (0, (0, 0), (1, 0))
    assert g.scores == [0, 0] and g.supply == [7, 7]


@pytest.mark.parametrize("returns", [True, False])
def test_variant_exception_1_returns_the_followers_at_once_by_default(returns):
    # The exception-1 layout with the variant: the Sagrada Familia tile closes the city;
    # by default its knights go home at once, with the option off they stay until the end.
    g = game(
        EXCEPTION_ORDER + ["BA-U"],
        options={"sagrada_familia": {"may_close": True, "exception_returns_followers": returns}},
    )
    play(g, EXCEPTION_MOVES)
    ev = play(g, ["tile 0,-1 r0"])
    assert [(e.final, e.items, e.returned) for e in of(ev, FeatureScored)] == (
        [(False, (CLOSED_BY_SAGRADA,), (1, 1))] if returns else []
    )
    assert g.supply == ([7, 7] if returns else [6, 6])
    ev = play(g, ["tile 2,0 r0", "pass"])  # the last tile
    assert [(e.final, e.items, e.returned) for e in of(ev, FeatureScored) if e.kind == "city"] == (
        [] if returns else [(True, (CLOSED_BY_SAGRADA,), (1, 1))]
    )
    assert g.scores == [0, 0] and g.supply == [7, 7]


# ---------------------------------------------------------- linked cities
def test_in_a_linked_city_only_closing_the_whole_is_refused():
    # The Sagrada Familia city A (P0's knight) gets the King's Gate east; RG-king-2
    # south of the start opens a part B (south) and links it.  Closing A's last
    # edge is legal (B is open); closing B would complete the whole: refused.
    g = game([SAGRADA, "RG-king-1", "RG-king-2", "BA-E", "BA-E", "BA-E"], expansions=(*SF, "royal_gateways"))
    play(
        g,
        [
            "tile 0,-1 r0",
            "follower c1",  # P0
            "tile 1,-1 r3",
            "pass",  # P1: King's Gate closes A's east edge
            "tile 0,1 r2",
            "pass",  # P0: RG-king-2 turned r2: city S, road E-W
            "tile -1,-1 r1",
            "pass",  # P1
        ],
    )
    assert (0, -2, 2) in legal(g)
    ev = play(g, ["tile 0,-2 r2", "pass"])  # P0 closes A: B is still open
    assert of(ev, FeatureCompleted) == []
    assert (0, 2, 0) not in legal(g)
    with pytest.raises(IllegalActionError):
        g.apply("tile 0,2 r0")
    ev = play(g, ["tile 2,-1 r0", "pass"])  # P1 puts the cap elsewhere; the game ends
    (s,) = [e for e in of(ev, FeatureScored) if e.kind == "city"]
    # (0,0) (0,-1) (1,-1) (-1,-1) (0,-2) (0,1), incomplete
    assert s.final and s.items == (city_tiles(6, 1),) and s.points == (6, 0)


def test_a_gate_closing_the_sagrada_familia_part_is_legal_when_it_links_an_open_city():
    # A (the Sagrada Familia city) is open north only; the King's Gate cap starts a
    # city B south of the start.  RG-king-2 at (0,-2) closes A but links it to B,
    # so the city stays open: legal.
    g = game([SAGRADA, "BA-E", "BA-E", "RG-king-1", "RG-king-2"], expansions=(*SF, "royal_gateways"))
    play(g, [*CLOSE_MOVES, "tile 0,1 r2", "pass"])
    assert g.tile_id == "RG-king-2" and (0, -2, 2) in legal(g)
    ev = play(g, ["tile 0,-2 r2", "pass"])  # the last tile; the game ends
    assert of(ev, FeatureCompleted) == []
    (s,) = [e for e in of(ev, FeatureScored) if e.kind == "city"]
    assert s.final and s.items == (city_tiles(6, 1),) and s.points == (6, 0)


# ------------------------------------------------------------- properties
def sagrada_node(g: Game) -> int:
    """Node of the Sagrada Familia tile's city, from the tile data; -1 if it is not on the board."""
    for _, _, t, _, base in g.placements:
        for i, seg in enumerate(g.rules.tiles[t].segments):
            if "sagrada_familia" in seg.tags:
                return base + i
    return -1


def closing_by_brute_force(g: Game, linked: LinkedFeatures, blocks: bool, node: int) -> set[tuple[int, int, int]]:
    """Placements of the drawn tile (legal by the edges) that would leave the Sagrada Familia's
    (linked) city without an open edge: each one on a cell an open edge of that city faces (only
    those can take an open edge away) is laid on a copy of the placement list and flood-filled."""
    tile = g.rules.tiles[g.current_tile]
    cells = linked.open_cells(linked.group_of(node))
    out = set()
    for x, y, r in brute_legal_placements(g, tile):
        if (x, y) not in cells:
            continue
        after = LinkedFeatures(Hypothetical(g, g.current_tile, x, y, r), blocks)
        if after.open_edges(after.group_of(node)) == 0:
            out.add((x, y, r))
    return out


def closed_by_its_tile(g: Game, blocks: bool, node: int) -> bool:
    k = g.node_tile[node]
    at = LinkedFeatures(g, blocks, upto=k + 1)
    return at.open_edges(at.group_of(node)) == 0


@SETTINGS
@given(configs_with("sagrada_familia"), seeds, seeds)
def test_random_games_never_close_the_sagrada_familia_city_and_offer_every_other_placement(config, seed, action_seed):
    may_close = config.options["sagrada_familia"]["may_close"]
    blocks = config.options.get("royal_gateways", {}).get("unpaired_gate_blocks_completion", True)
    other_vetoes = {"river2", "shrines"} & set(config.expansions)
    memo: dict[str, Any] = {"placed": -1, "exception": None}

    def before(g: Game) -> None:
        node = sagrada_node(g)
        if node < 0:
            return
        if memo["exception"] is None:
            memo["exception"] = closed_by_its_tile(g, blocks, node)
        if memo["exception"]:
            return
        if memo["placed"] != len(g.placements):
            memo["placed"], memo["linked"] = len(g.placements), LinkedFeatures(g, blocks)
        linked = memo["linked"]
        if not may_close:
            assert linked.open_edges(linked.group_of(node)) > 0  # never closed
        if g.phase != "tile":
            return
        offered = {tuple(int(v) for v in row) for row in g.legal_tile_placements()}
        closing = set() if may_close else closing_by_brute_force(g, linked, blocks, node)
        assert not offered & closing
        if not other_vetoes:
            assert offered == brute_legal_placements(g, g.rules.tiles[g.current_tile]) - closing

    g, events = play_random(config, seed, action_seed, before=before)
    assert g.followers == {} and not g.guests
    for e in events:
        if isinstance(e, TileDiscarded) and e.reason == REFUSED_REASON:
            assert not may_close
