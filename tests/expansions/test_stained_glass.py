"""Stained Glass: one rule per scenario (docs/rules/stained_glass.md).

Forced tile draw orders, forced token orders (option ``bag_order``: the tokens
drawn first, in order), tokens handed out at the start (option
``start_tokens``), scripted moves, exact points and ``ScoreItem`` breakdowns.

Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.  ``BA-A`` (cloister,
road printed south) at ``1,0 r1`` has its road facing west, joined to the start
tile's road: a road that ends at the cloister.

Token kinds are ``G1a G1b G1c`` (basic window W1) .. ``G4a G4b G4c`` (W4);
every kind has 2 copies, 24 tokens in all.
"""

from __future__ import annotations

import itertools

import pytest
from _helpers import play
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carc_env.core import (
    FeatureScored,
    FollowerPlaced,
    Game,
    GameConfig,
    IllegalActionError,
    PointsAwarded,
    ScoreItem,
    TileDiscarded,
    TileDrawn,
)
from carc_env.core.expansion import ConfigError
from carc_env.core.record import replay, to_record
from carc_env.expansions.stained_glass import (
    SHAPES,
    TOKEN_KINDS,
    TOTAL_TOKENS,
    Steal,
    ThiefPlaced,
    TokenDrawn,
    TokenStolen,
    WindowScored,
    bag_tokens,
    load_token_set,
    thieves,
    tokens_held,
)

SG = ("base", "stained_glass")
ROW_OF_CLOISTERS = ["BA-B", "BA-U", "BA-B", "BA-U", "BA-A", "BA-U", "BA-B", "BA-U", "BA-A", "BA-U", "BA-B", "BA-U"]


def game(
    order: list[str],
    bag: str = "",
    start: str = "",
    options: dict | None = None,
    extra: tuple[str, ...] = (),
    others: dict | None = None,
    n: int = 2,
) -> Game:
    opts = dict(options or {})
    if bag:
        opts["bag_order"] = bag
    if start:
        opts["start_tokens"] = start
    config_options = {"stained_glass": opts, **(others or {})}
    return Game(GameConfig(n, (*SG[:1], *extra, "stained_glass"), config_options), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def window_item(shape: str, points: int) -> ScoreItem:
    tokens = 3 * (shape.count("+") + 1)
    return ScoreItem("window", f"window {shape} ({tokens} tokens)", points)


def texts(g: Game) -> list[str]:
    return sorted(g.action_text(a) for a in g.legal_actions())


# ------------------------------------------------------------------ data
def test_token_set_is_data_twelve_kinds_in_four_basic_windows_two_copies_each():
    ts = load_token_set()
    assert [w.id for w in ts.windows] == ["W1", "W2", "W3", "W4"]
    assert [w.tokens for w in ts.windows] == [
        ("G1a", "G1b", "G1c"),
        ("G2a", "G2b", "G2c"),
        ("G3a", "G3b", "G3c"),
        ("G4a", "G4b", "G4c"),
    ]
    assert ts.copies == 2
    assert TOKEN_KINDS == tuple(k for w in ts.windows for k in w.tokens)
    assert TOTAL_TOKENS == 24


def test_the_only_windows_are_runs_of_neighbouring_basic_windows():
    assert [s.name for s in SHAPES] == [
        "W1",
        "W2",
        "W3",
        "W4",
        "W1+W2",
        "W2+W3",
        "W3+W4",
        "W1+W2+W3",
        "W2+W3+W4",
        "W1+W2+W3+W4",
    ]
    assert all(len(s.tokens) == 3 * len(s.windows) for s in SHAPES)


def test_the_bag_starts_with_all_24_tokens_apart_from_the_land_tiles():
    g = game(["BA-U"])
    assert sorted(bag_tokens(g)) == sorted(TOKEN_KINDS * 2)
    assert tokens_held(g, 0) == [] and tokens_held(g, 1) == []
    assert g.bag_size == 0  # the land tiles' bag knows nothing of the tokens


def test_tokens_are_drawn_at_random_by_the_games_own_generator():
    # the bag holds 2 copies of each kind; a draw takes bag position rng.integers(24), kinds in token order
    g = game(["BA-U", "BA-A", "BA-U"])
    g.apply("tile 1,0 r0")
    expected = TOKEN_KINDS[int(g.clone().rng.integers(24)) // 2]
    g.apply("pass")  # P1 draws the cloister tile BA-A and a token with it
    assert tokens_held(g, 1) == [expected]
    drawn = set()
    for seed in range(8):
        h = Game(GameConfig(2, SG), seed=seed, draw_order=["BA-A", "BA-U"])  # P0 draws BA-A at setup
        drawn |= set(tokens_held(h, 0))
    assert len(drawn) > 1


def test_the_token_bag_leaves_the_land_tiles_deal_unchanged():
    assert Game(GameConfig(2, SG), seed=11).draw_order == Game(GameConfig(2, ("base",)), seed=11).draw_order


def test_bag_order_forces_the_first_draws():
    g = game(["BA-U", "BA-U"], bag="G3c G1a")
    assert bag_tokens(g)[:2] == ["G3c", "G1a"]


def test_start_tokens_are_taken_from_the_bag():
    g = game(["BA-U"], start="G1a G1a G2b; G4c")
    assert tokens_held(g, 0) == ["G1a", "G1a", "G2b"]
    assert tokens_held(g, 1) == ["G4c"]
    assert len(bag_tokens(g)) == 20


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("bag_order", "G1a G9z", "G9z"),
        ("bag_order", "G1a G1a G1a", "G1a"),
        ("start_tokens", "G1a; G1a G1a", "G1a"),
        ("start_tokens", "G1a; ; G2a", "players"),
        ("window_points", "6,18,36", "4"),
        ("window_points", "6,18,-1,60", "-1"),
        ("final_windows", "all", "final_windows"),
        ("steal_kind", "any", "steal_kind"),
    ],
)
def test_bad_options_raise_a_config_error_naming_the_problem(option, value, needle):
    with pytest.raises(ConfigError, match=needle):
        Game(GameConfig(2, SG, {"stained_glass": {option: value}}), seed=0)


# ------------------------------------------------------- getting tokens (§1.3)
PLACE = {"token_on": "place"}
"""The reading before issue 23: a cloister tile gives its token when it is placed, not when drawn."""


def test_drawing_a_cloister_tile_gives_a_token_at_once():
    # Rule (seed 001, "Place a tile"): "After drawing any cloister tile ... a stained glass tile must be
    # taken ... by the player who drew" it: P0's pass ends the turn, P1 draws BA-A and the token with it.
    g = game(["BA-U", "BA-A", "BA-U"], bag="G2b G1a")
    ev = play(g, ["tile 1,0 r0", "pass"])
    assert [type(e).__name__ for e in ev if isinstance(e, (TileDrawn, TokenDrawn))] == ["TileDrawn", "TokenDrawn"]
    assert of(ev, TokenDrawn) == [TokenDrawn(1, "G2b", "drew the cloister tile BA-A")]
    assert tokens_held(g, 1) == ["G2b"] and g.phase == "tile" and g.player == 1
    ev = g.apply("tile 2,0 r1")  # placing it gives nothing more
    assert of(ev, TokenDrawn) == []
    assert bag_tokens(g)[0] == "G1a" and len(bag_tokens(g)) == 23


def test_a_drawn_cloister_tile_that_fits_nowhere_still_gives_its_token():
    # BA-W (F R R R) south of the start tile leaves no free side a field edge can face, so the
    # cloister BA-B (F F F F) drawn next fits nowhere: it is discarded, but it was drawn.
    g = game(["BA-W", "BA-B", "BA-U", "BA-U"], bag="G4c G1a")
    ev = play(g, ["tile 0,1 r0", "pass"])
    assert [e.tile for e in of(ev, TileDiscarded)] == ["BA-B"]
    assert of(ev, TokenDrawn) == [TokenDrawn(1, "G4c", "drew the cloister tile BA-B")]
    assert tokens_held(g, 1) == ["G4c"] and g.tile_id == "BA-U"
    h = game(["BA-W", "BA-B", "BA-U", "BA-U"], bag="G4c G1a", options=PLACE)
    ev = play(h, ["tile 0,1 r0", "pass"])
    assert [e.tile for e in of(ev, TileDiscarded)] == ["BA-B"] and of(ev, TokenDrawn) == []
    assert tokens_held(h, 1) == []


def test_draw_a_token_when_placing_a_cloister_tile_with_token_on_place():
    g = game(["BA-A", "BA-U", "BA-U"], bag="G2b G1a", options=PLACE)
    assert tokens_held(g, 0) == []  # drawn at setup, nothing yet
    ev = g.apply("tile 1,0 r1")
    assert of(ev, TokenDrawn) == [TokenDrawn(0, "G2b", "placed the cloister tile BA-A at (1,0)")]
    assert tokens_held(g, 0) == ["G2b"]
    assert bag_tokens(g)[0] == "G1a" and len(bag_tokens(g)) == 23


def test_no_token_for_a_tile_without_a_cloister():
    g = game(["BA-U", "BA-U"], bag="G2b")
    ev = play(g, ["tile 1,0 r0", "pass"])
    assert of(ev, TokenDrawn) == []
    assert tokens_held(g, 0) == []


def test_a_plain_cloister_tile_draws_too():
    g = game(["BA-B", "BA-U"], bag="G4a")  # P0 draws BA-B when the game starts
    assert tokens_held(g, 0) == ["G4a"] and len(bag_tokens(g)) == 23


@pytest.mark.parametrize(("churches", "expected"), [(True, ["G1a"]), (False, [])])
def test_darmstadt_churches_count_as_cloisters_by_default(churches, expected):
    g = game(["DA-st-louis", "BA-U"], bag="G1a", extra=("darmstadt",), options={"churches_are_cloisters": churches})
    g.apply("tile 1,0 r0")
    assert tokens_held(g, 0) == expected


@pytest.mark.parametrize(("shrines", "expected"), [(False, []), (True, ["G1a"])])
def test_shrines_do_not_count_as_cloisters_by_default(shrines, expected):
    g = game(["CU-shrine", "BA-U"], bag="G1a", extra=("shrines",), options={"shrines_are_cloisters": shrines})
    g.apply("tile 0,1 r0")
    assert tokens_held(g, 0) == expected


# The cloister BA-B at (0,1) and its 8 neighbours (filled in this order):
#   (-1,0) U r0, (1,0) U r0, (-1,1) V r0, (1,1) V r3, (-1,2) V r2, (0,2) V r0, (1,2) V r2.
COMPLETE_CLOISTER_ORDER = ["BA-B", "BA-U", "BA-U", "BA-V", "BA-V", "BA-V", "BA-V", "BA-V", "BA-U"]
COMPLETE_CLOISTER_MOVES = [
    "tile 0,1 r0",
    "follower m",  # P0: cloister and monk (draws G1a)
    "tile -1,0 r0",
    "pass",  # P1
    "tile 1,0 r0",
    "pass",  # P0
    "tile -1,1 r0",
    "pass",  # P1
    "tile 1,1 r3",
    "pass",  # P0
    "tile -1,2 r2",
    "pass",  # P1
    "tile 0,2 r0",
    "pass",  # P0
]


def test_the_player_completing_a_cloister_draws_a_token_whoever_owns_it():
    g = game(COMPLETE_CLOISTER_ORDER, bag="G1a G2a G3a")
    play(g, COMPLETE_CLOISTER_MOVES)
    assert tokens_held(g, 0) == ["G1a"] and tokens_held(g, 1) == []
    ev = play(g, ["tile 1,2 r2", "pass"])  # P1 completes P0's cloister
    (sc,) = of(ev, FeatureScored)
    assert sc.kind == "cloister" and sc.points == (9, 0)  # the points go to the monk's owner
    assert of(ev, TokenDrawn) == [TokenDrawn(1, "G2a", "completed the cloister at (0,1)")]
    assert tokens_held(g, 0) == ["G1a"] and tokens_held(g, 1) == ["G2a"]


def test_completing_an_unoccupied_cloister_draws_a_token_too():
    moves = [m if m != "follower m" else "pass" for m in COMPLETE_CLOISTER_MOVES]
    g = game(COMPLETE_CLOISTER_ORDER, bag="G1a G2a G3a")
    play(g, moves)
    ev = play(g, ["tile 1,2 r2", "pass"])
    assert of(ev, FeatureScored) == []
    assert of(ev, TokenDrawn) == [TokenDrawn(1, "G2a", "completed the cloister at (0,1)")]


def test_a_cloister_tile_that_completes_itself_draws_two_tokens():
    # the 8 neighbours of (0,1) first, the cloister last (placed by P0 on turn 8)
    order = ["BA-U", "BA-U", "BA-V", "BA-V", "BA-V", "BA-V", "BA-V", "BA-U", "BA-B", "BA-U"]
    moves = [
        "tile -1,0 r0",
        "pass",
        "tile 1,0 r0",
        "pass",
        "tile -1,1 r0",
        "pass",
        "tile 1,1 r3",
        "pass",
        "tile -1,2 r2",
        "pass",
        "tile 0,2 r0",
        "pass",
        "tile 1,2 r2",
        "pass",
        "tile 2,0 r0",
        "pass",
    ]
    g = game(order, bag="G1a G2a G3a")
    ev = play(g, moves)
    assert g.player == 0
    assert of(ev, TokenDrawn) == [TokenDrawn(0, "G1a", "drew the cloister tile BA-B")]
    ev = play(g, ["tile 0,1 r0", "pass"])
    assert of(ev, TokenDrawn) == [TokenDrawn(0, "G2a", "completed the cloister at (0,1)")]
    assert tokens_held(g, 0) == ["G1a", "G2a"]
    h = game(order, bag="G1a G2a G3a", options=PLACE)
    play(h, moves)
    ev = play(h, ["tile 0,1 r0", "pass"])
    assert of(ev, TokenDrawn) == [
        TokenDrawn(0, "G1a", "placed the cloister tile BA-B at (0,1)"),
        TokenDrawn(0, "G2a", "completed the cloister at (0,1)"),
    ]


def test_no_token_when_the_bag_is_empty_until_scored_tokens_return():
    all_tokens = " ".join(TOKEN_KINDS)
    g = game(["BA-B", "BA-B", "BA-U"], start=f"{all_tokens}; {all_tokens}")
    assert bag_tokens(g) == []
    assert of(g.events, TokenDrawn) == []  # P0 drew a cloister tile at setup: the bag is empty
    ev = g.apply("tile 0,1 r0")
    assert of(ev, TokenDrawn) == []
    assert len(tokens_held(g, 0)) == 12
    g.apply("pass")  # no monk
    assert g.phase == "glass_window" and g.player == 0
    ev = g.apply("window W1")  # three tokens go back into the bag
    assert sorted(bag_tokens(g)) == ["G1a", "G1b", "G1c"]
    ev = g.apply("pass")  # keep building the rest; P1 draws a cloister tile, which now draws one of them
    (drawn,) = of(ev, TokenDrawn)
    assert drawn.player == 1 and drawn.token in ("G1a", "G1b", "G1c")
    assert len(tokens_held(g, 1)) == 13 and len(bag_tokens(g)) == 2


CATHEDRAL_TILES = """
set = "test_cathedrals"
tags = ["cathedral"]

[[tile]]
id = "TC-cathedral-cap"
count = 1
edges = "CFFF"
features = [ { id = "c1", kind = "city", edges = ["N"], tags = ["cathedral"] } ]
fields = [ { halves = ["EL", "ER", "SL", "SR", "WL", "WR"], cities = ["c1"] } ]
"""


def test_placing_a_cathedral_tile_and_completing_its_city_draw_a_token_each(tmp_path):
    # No built-in tile holds a cathedral: a test-only plug-in adds a city cap tagged "cathedral".
    from carc_env.core.expansion import Expansion, register, unregister

    path = tmp_path / "cathedrals.toml"
    path.write_text(CATHEDRAL_TILES)

    class Cathedrals(Expansion):
        KEY = "test_cathedrals"
        REQUIRES = ("base",)
        tile_files = (str(path),)

    register(Cathedrals)
    try:
        g = Game(
            GameConfig(2, ("base", "test_cathedrals", "stained_glass"), {"stained_glass": {"bag_order": "G3b G2a"}}),
            seed=0,
            draw_order=["BA-U", "TC-cathedral-cap", "BA-E", "BA-U"],
        )
        ev = play(g, ["tile 1,0 r0", "pass"])  # P0; P1 draws the cathedral tile
        assert of(ev, TokenDrawn) == [TokenDrawn(1, "G3b", "drew the cathedral tile TC-cathedral-cap")]
        ev = g.apply("tile 0,-1 r2")  # P1 places it: it closes the start tile's city
        assert of(ev, TokenDrawn) == []
        ev = g.apply("pass")
        (done,) = [e for e in ev if type(e).__name__ == "FeatureCompleted"]
        assert done.kind == "city" and not done.occupied
        assert of(ev, TokenDrawn) == [TokenDrawn(1, "G2a", "completed the city with the cathedral at (0,-1)")]
        assert g.phase == "tile"  # a cathedral tile has no cloister: no thief
        plain = game(["BA-E", "BA-U"], bag="G3b")
        ev = play(plain, ["tile 0,-1 r2", "pass"])  # a city without a cathedral: no token
        assert [e.kind for e in ev if type(e).__name__ == "FeatureCompleted"] == ["city"]
        assert of(ev, TokenDrawn) == []
    finally:
        unregister("test_cathedrals")


# ------------------------------------------------------ thieves (§1.4)
def thief_phase_texts(g: Game) -> list[str]:
    return texts(g) if g.phase == "glass_thief" else []


@pytest.mark.parametrize(
    ("extra", "others", "options", "tile", "move", "expected"),
    [
        # one road ends at the cloister
        ((), {}, {}, "BA-A", "tile 1,0 r1", ["pass", "thief r1"]),
        # no road: no thief
        ((), {}, {}, "BA-B", "tile 0,1 r0", []),
        # four roads end at the church of St. Louis
        (
            ("darmstadt",),
            {},
            {},
            "DA-st-louis",
            "tile 1,0 r0",
            ["pass", "thief r1", "thief r2", "thief r3", "thief r4"],
        ),
        # the road passes St. Mary's church: no thief
        (("darmstadt",), {}, {}, "DA-st-mary", "tile 1,0 r1", []),
        # two roads end at the shrine (when shrines count as cloisters)
        (
            ("shrines",),
            {},
            {"shrines_are_cloisters": True},
            "CU-shrine-2roads",
            "tile 1,0 r1",
            ["pass", "thief r1", "thief r2"],
        ),
        # shrines do not count by default
        (("shrines",), {}, {}, "CU-shrine-2roads", "tile 1,0 r1", []),
        # a cloister beside a city and no road
        (("king_robber",), {}, {}, "KR-cloister-city", "tile 0,1 r2", []),
    ],
)
def test_thief_count_per_road_layout(extra, others, options, tile, move, expected):
    g = game([tile, "BA-U"], extra=extra, others=others, options=options)
    g.apply(move)
    if g.phase == "follower":
        g.apply("pass")
    assert thief_phase_texts(g) == expected


def test_four_thieves_on_st_louis_then_four_steals():
    g = game(["DA-st-louis", "BA-U"], bag="G4a", start="; G1a G1b G2a G3c", extra=("darmstadt",))
    play(g, ["tile 1,0 r0", "follower m"])
    ev = play(g, ["thief r1", "thief r2", "thief r3", "thief r4"])
    assert of(ev, ThiefPlaced) == [ThiefPlaced(0, 1, 0, s) for s in ("r1", "r2", "r3", "r4")]
    assert [e.kind for e in of(ev, FollowerPlaced)] == ["road"] * 4
    assert g.supply[0] == 7 - 5
    assert g.phase == "glass_steal" and g.player == 0
    assert texts(g) == ["pass", "steal 1 G1a", "steal 1 G1b", "steal 1 G2a", "steal 1 G3c"]
    ev = play(g, ["steal 1 G2a", "steal 1 G1a", "steal 1 G3c", "steal 1 G1b"])
    assert of(ev, TokenStolen) == [TokenStolen(0, 1, k) for k in ("G2a", "G1a", "G3c", "G1b")]
    assert tokens_held(g, 0) == ["G1a", "G1b", "G2a", "G3c", "G4a"]
    assert tokens_held(g, 1) == []
    assert g.followers_conserved()


def test_a_road_with_the_usual_follower_takes_no_thief():
    g = game(["DA-st-louis", "BA-U"], extra=("darmstadt",))
    play(g, ["tile 1,0 r0", "follower r4"])  # the usual follower on the west road
    assert thief_phase_texts(g) == ["pass", "thief r1", "thief r2", "thief r3"]


def test_a_road_already_occupied_elsewhere_takes_no_thief():
    # P0 puts a follower on the start road; P1's cloister road joins it
    g = game(["BA-U", "BA-A", "BA-U"])
    play(g, ["tile -1,0 r0", "follower r1"])
    play(g, ["tile 1,0 r1", "pass"])
    assert g.phase == "tile" and g.player == 0


def test_the_passing_road_exception_a_road_joining_another_cloisters_road():
    # P0: BA-A at (1,0), its road ends at the cloister and joins the start road (no thief).
    # P1: St. Mary at (-1,0): its road passes the church and, through the start road, leads to
    # the unoccupied road ending at P0's cloister: one thief on it.
    g = game(["BA-A", "DA-st-mary", "BA-U"], extra=("darmstadt",))
    play(g, ["tile 1,0 r1", "pass", "pass"])  # no monk, no thief
    play(g, ["tile -1,0 r0", "pass"])
    assert g.player == 1 and thief_phase_texts(g) == ["pass", "thief r1"]
    ev = g.apply("thief r1")
    assert of(ev, ThiefPlaced) == [ThiefPlaced(1, -1, 0, "r1")]


def test_no_passing_road_exception_when_the_other_road_is_occupied():
    g = game(["BA-A", "DA-st-mary", "BA-U"], extra=("darmstadt",))
    play(g, ["tile 1,0 r1", "pass", "thief r1"])  # P0's thief now occupies the road
    play(g, ["tile -1,0 r0", "pass"])
    assert g.phase == "tile" and g.player == 0


def test_no_passing_road_exception_without_a_cloister_at_the_other_end():
    # the start road's east end is a T-junction (BA-W), not a cloister
    g = game(["BA-W", "DA-st-mary", "BA-U"], extra=("darmstadt",))
    play(g, ["tile 1,0 r2", "pass"])
    play(g, ["tile -1,0 r0", "pass"])
    assert g.phase == "tile" and g.player == 0


@pytest.mark.parametrize(
    ("need_monk", "follower", "expected"),
    [
        (False, "pass", ["pass", "thief r1"]),
        (True, "pass", []),
        (True, "follower m", ["pass", "thief r1"]),
    ],
)
def test_thieves_need_no_monk_on_the_cloister_by_default(need_monk, follower, expected):
    g = game(["BA-A", "BA-U"], options={"thieves_need_monk": need_monk})
    play(g, ["tile 1,0 r1", follower])
    assert thief_phase_texts(g) == expected


def test_thieves_need_a_follower_in_supply():
    g = Game(GameConfig(2, SG, followers=1), seed=0, draw_order=["BA-A", "BA-U"])
    play(g, ["tile 1,0 r1", "follower m"])  # the only follower
    assert g.phase == "tile" and g.player == 1


def test_a_thief_stays_on_its_road_and_scores_as_a_road_follower():
    # P0's thief on the start road + BA-A's road; P1 closes the west end with a BA-W junction
    g = game(["BA-A", "BA-W", "BA-U"])
    play(g, ["tile 1,0 r1", "pass", "thief r1"])
    assert thieves(g) == [(0, 1, 0, "r1")]
    ev = play(g, ["tile -1,0 r0", "pass"])
    (sc,) = of(ev, FeatureScored)
    assert sc.kind == "road" and sc.points == (3, 0) and sc.returned == (1, 0)
    assert thieves(g) == []


# ------------------------------------------------------ steals (§1.4)
def test_steal_a_token_from_another_player():
    g = game(["BA-A", "BA-U"], bag="G4a", start="; G1a G2b G2b")
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert g.phase == "glass_steal"
    assert texts(g) == ["pass", "steal 1 G1a", "steal 1 G2b"]
    ev = g.apply("steal 1 G2b")
    assert of(ev, TokenStolen) == [TokenStolen(0, 1, "G2b")]
    assert tokens_held(g, 0) == ["G2b", "G4a"] and tokens_held(g, 1) == ["G1a", "G2b"]
    assert g.phase == "tile" and g.player == 1


def test_a_steal_object_with_an_unknown_token_is_an_illegal_action_naming_the_tokens():
    # issue 23: Steal(1, "ZZZ") built in code (not parsed from text) raised a bare ValueError
    from carc_env.encoding.actions import ActionCodec

    g = game(["BA-A", "BA-U"], bag="G4a", start="; G1a G2b G2b")
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    before = tokens_held(g, 1)
    for act in (lambda: g.apply(Steal(1, "ZZZ")), lambda: ActionCodec(g.rules).encode(g, Steal(1, "ZZZ"))):
        with pytest.raises(
            IllegalActionError, match=r"'steal 1 ZZZ': unknown glass token 'ZZZ'; name one of G1a .* G4c"
        ):
            act()
    assert tokens_held(g, 1) == before and g.phase == "glass_steal"


def test_a_steal_may_be_declined():
    g = game(["BA-A", "BA-U"], start="; G1a")
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    ev = g.apply("pass")
    assert of(ev, TokenStolen) == [] and tokens_held(g, 1) == ["G1a"]


def test_a_thief_steals_nothing_when_nobody_else_holds_a_token():
    g = game(["BA-A", "BA-U"], start="G1a")
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert g.phase == "tile" and g.player == 1  # no steal decision


def test_you_cannot_steal_from_yourself_by_default():
    g = game(["BA-A", "BA-U"], bag="G4a", start="G1a; G2a")
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert texts(g) == ["pass", "steal 1 G2a"]
    with pytest.raises(IllegalActionError, match="yourself"):
        g.apply("steal 0 G1a")


def test_stealing_from_yourself_is_allowed_by_option_and_changes_nothing():
    g = game(["BA-A", "BA-U"], bag="G4a", start="G1a; G2a", options={"steal_from_self": True})
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert texts(g) == ["pass", "steal 0 G1a", "steal 0 G4a", "steal 1 G2a"]
    ev = g.apply("steal 0 G1a")
    assert of(ev, TokenStolen) == [TokenStolen(0, 0, "G1a")]
    assert tokens_held(g, 0) == ["G1a", "G4a"] and tokens_held(g, 1) == ["G2a"]


def test_steals_choose_victim_and_kind_among_several_players():
    g = game(["BA-A", "BA-U", "BA-U"], start="; G1a; G3b", n=3)
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert texts(g) == ["pass", "steal 1 G1a", "steal 2 G3b"]
    g.apply("steal 2 G3b")
    assert tokens_held(g, 2) == []


def test_a_random_steal_takes_a_random_token_of_the_chosen_victim():
    g = game(["BA-A", "BA-U"], start="; G1a G1a", options={"steal_kind": "random"})
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert texts(g) == ["pass", "steal 1"]
    ev = g.apply("steal 1")
    assert of(ev, TokenStolen) == [TokenStolen(0, 1, "G1a")]


@pytest.mark.parametrize(
    ("protect", "expected"),
    [
        (False, ["pass", "steal 1 G1a", "steal 1 G1b", "steal 1 G1c", "steal 1 G2a"]),
        (True, ["pass", "steal 1 G2a"]),
    ],
)
def test_tokens_of_finished_windows_can_be_stolen_by_default(protect, expected):
    g = game(["BA-A", "BA-U"], start="; G1a G1b G1c G2a", options={"protect_complete_windows": protect})
    play(g, ["tile 1,0 r1", "follower m", "thief r1"])
    assert texts(g) == expected


def test_keep_building_then_losing_a_token_to_a_thief():
    # P1 holds a finished W1 and keeps building; P0's thief takes G1b; W1 is no longer finished.
    g = game(["BA-U", "BA-U", "BA-A", "BA-U", "BA-U"], start="; G1a G1b G1c")
    play(g, ["tile -1,0 r0", "pass"])  # P0
    play(g, ["tile 0,1 r0", "pass"])  # P1
    assert g.phase == "glass_window" and g.player == 1
    assert texts(g) == ["pass", "window W1"]
    g.apply("pass")  # keep building
    play(g, ["tile 1,0 r1", "follower m", "thief r1", "steal 1 G1b"])  # P0
    assert tokens_held(g, 1) == ["G1a", "G1c"]
    play(g, ["tile 2,0 r1", "pass"])  # P1: the turn ends without a window decision
    assert g.phase == "tile" and g.player == 0


# ------------------------------------------------- window scoring (§1.5-1.8)
@pytest.mark.parametrize(
    ("tokens", "shape", "points"),
    [
        ("G2a G2b G2c", "W2", 6),
        ("G2a G2b G2c G3a G3b G3c", "W2+W3", 18),
        ("G1a G1b G1c G2a G2b G2c G3a G3b G3c", "W1+W2+W3", 36),
        (" ".join(TOKEN_KINDS), "W1+W2+W3+W4", 60),
    ],
)
def test_scoring_a_window_of_each_size(tokens, shape, points):
    g = game(["BA-U", "BA-U"], start=tokens)
    play(g, ["tile 1,0 r0", "pass"])
    assert g.phase == "glass_window" and g.player == 0
    assert f"window {shape}" in texts(g)
    ev = g.apply(f"window {shape}")
    assert of(ev, PointsAwarded) == [PointsAwarded(0, points, (window_item(shape, points),), False)]
    (ws,) = of(ev, WindowScored)
    assert ws.player == 0 and ws.shape == shape and ws.points == points and not ws.final
    assert sorted(ws.tokens) == sorted(tokens.split())
    assert g.scores == [points, 0]
    assert tokens_held(g, 0) == [] and len(bag_tokens(g)) == 24


def test_the_default_table_is_superadditive():
    g = game(["BA-U", "BA-U"], start="G1a G1b G1c G2a G2b G2c")
    play(g, ["tile 1,0 r0", "pass"])
    assert texts(g) == ["pass", "window W1", "window W1+W2", "window W2"]
    play(g, ["window W1", "window W2"])  # two small windows: 6 + 6
    assert g.scores[0] == 12 < 18


def test_window_points_option_replaces_the_table():
    g = game(["BA-U", "BA-U"], start="G1a G1b G1c G2a G2b G2c", options={"window_points": "3,10,20,40"})
    play(g, ["tile 1,0 r0", "pass", "window W1+W2"])
    assert g.scores == [10, 0]


def test_several_windows_in_one_turn_then_keep_building():
    g = game(["BA-U", "BA-U"], start="G1a G1b G1c G3a G3b G3c G4a")
    play(g, ["tile 1,0 r0", "pass"])
    assert texts(g) == ["pass", "window W1", "window W3"]
    g.apply("window W3")
    assert texts(g) == ["pass", "window W1"]
    g.apply("pass")
    assert g.scores == [6, 0] and tokens_held(g, 0) == ["G1a", "G1b", "G1c", "G4a"]
    assert g.phase == "tile" and g.player == 1


def test_illegal_shapes_such_as_w1_plus_w3_are_never_windows():
    g = game(["BA-U", "BA-U"], start="G1a G1b G1c G3a G3b G3c")
    play(g, ["tile 1,0 r0", "pass"])
    assert texts(g) == ["pass", "window W1", "window W3"]
    with pytest.raises(IllegalActionError, match="W1\\+W3"):
        g.apply("window W1+W3")
    with pytest.raises(IllegalActionError, match="not complete"):
        g.apply("window W2")


def test_duplicates_are_never_in_one_window():
    # two copies of G1a and one each of G1b, G1c: one W1 only
    g = game(["BA-U", "BA-U"], start="G1a G1a G1b G1c")
    play(g, ["tile 1,0 r0", "pass"])
    ev = g.apply("window W1")
    (ws,) = of(ev, WindowScored)
    assert sorted(ws.tokens) == ["G1a", "G1b", "G1c"]
    assert tokens_held(g, 0) == ["G1a"]
    assert g.phase == "tile"  # nothing else is complete


def test_two_identical_windows_are_built_side_by_side():
    g = game(["BA-U", "BA-U"], start="G1a G1a G1b G1b G1c G1c")
    play(g, ["tile 1,0 r0", "pass", "window W1"])
    assert texts(g) == ["pass", "window W1"]
    g.apply("window W1")
    assert g.scores == [12, 0] and tokens_held(g, 0) == []


def test_only_the_active_player_scores_windows_at_the_end_of_their_turn():
    g = game(["BA-U", "BA-U", "BA-U"], start="G1a G1b G1c; G2a G2b G2c")
    play(g, ["tile 1,0 r0", "pass"])
    assert g.phase == "glass_window" and g.player == 0 and texts(g) == ["pass", "window W1"]
    g.apply("pass")
    play(g, ["tile 2,0 r0", "pass"])
    assert g.phase == "glass_window" and g.player == 1 and texts(g) == ["pass", "window W2"]


def test_keep_building_a_row_of_six_cloisters_into_a_six_token_window():
    # P0 lays the six base cloister tiles in a row south of P1's road and draws G1a .. G2c.
    moves = []
    for i in range(6):
        moves.append((f"tile {i},1 r0", f"tile {i + 1},0 r0"))
    g = game(ROW_OF_CLOISTERS, bag="G1a G1b G1c G2a G2b G2c")
    for i, (mine, theirs) in enumerate(moves):
        g.apply(mine)
        while g.phase in ("follower", "glass_thief"):
            g.apply("pass")
        if 2 <= i < 5:  # W1 is finished from the third cloister on: keep building
            assert g.phase == "glass_window" and texts(g) == ["pass", "window W1"]
            g.apply("pass")
        if i < 5:
            play(g, [theirs, "pass"])
    assert g.phase == "glass_window"
    assert texts(g) == ["pass", "window W1", "window W1+W2", "window W2"]
    ev = g.apply("window W1+W2")
    assert of(ev, PointsAwarded) == [PointsAwarded(0, 18, (window_item("W1+W2", 18),), False)]


# ------------------------------------------------------- end of the game
def finish(g: Game) -> list:
    events = []
    while not g.over:
        events += g.apply("pass" if g.phase != "tile" else g.action_text(g.legal_actions()[0]))
    return events


def test_finished_windows_score_the_best_combination_at_the_end_of_the_game():
    # W1 once, W2 twice, W3 once: W1+W2+W3 and W2 (36 + 6 = 42) beat W1+W2 and W2+W3 (18 + 18)
    g = game(["BA-U"], start="G1a G1b G1c G2a G2b G2c G2a G2b G2c G3a G3b G3c G4a")
    ev = finish(g)  # P0 keeps building at the end of the only turn
    (pa,) = of(ev, PointsAwarded)
    assert pa == PointsAwarded(0, 42, (window_item("W1+W2+W3", 36), window_item("W2", 6)), True)
    assert [w.shape for w in of(ev, WindowScored)] == ["W1+W2+W3", "W2"]
    assert g.scores == [42, 0]


def test_unfinished_windows_and_loose_tokens_score_nothing_at_the_end_by_default():
    g = game(["BA-U"], start="G1a G1b; G3a")
    ev = finish(g)
    assert of(ev, PointsAwarded) == [] and g.scores == [0, 0]


def test_loose_token_points_option():
    g = game(["BA-U"], start="G1a G1b G1c G2a; G3a", options={"loose_token_points": 1})
    ev = finish(g)
    p0, p1 = of(ev, PointsAwarded)
    assert p0 == PointsAwarded(
        0, 7, (window_item("W1", 6), ScoreItem("loose_tokens", "1 token in no finished window x 1", 1)), True
    )
    assert p1 == PointsAwarded(1, 1, (ScoreItem("loose_tokens", "1 token in no finished window x 1", 1),), True)


def test_final_windows_none_scores_nothing_at_the_end():
    g = game(["BA-U"], start="G1a G1b G1c", options={"final_windows": "none"})
    ev = finish(g)
    assert of(ev, PointsAwarded) == [] and g.scores == [0, 0]


# ------------------------------------------------------- records, clones
def random_game(seed: int, expansions: tuple[str, ...] = SG) -> Game:
    import numpy as np

    g = Game(GameConfig(2, expansions), seed=seed)
    rng = np.random.default_rng(seed)
    while not g.over:
        acts = g.legal_actions()
        g.apply(acts[int(rng.integers(len(acts)))])
    return g


def test_records_of_stained_glass_games_replay_exactly():
    g = random_game(3)
    again = replay(to_record(g))
    assert again.scores == g.scores
    assert [tokens_held(again, p) for p in range(2)] == [tokens_held(g, p) for p in range(2)]
    assert bag_tokens(again) == bag_tokens(g)


def test_a_game_without_a_seed_still_replays():
    import numpy as np

    g = Game(GameConfig(2, SG))
    rng = np.random.default_rng(0)
    while not g.over:
        acts = g.legal_actions()
        g.apply(acts[int(rng.integers(len(acts)))])
    assert replay(to_record(g)).scores == g.scores


def test_a_clone_draws_the_same_tokens_independently():
    g = game(["BA-U", "BA-U", "BA-A", "BA-U"], bag="G2a")
    play(g, ["tile 1,0 r0", "pass", "tile 2,0 r0"])
    c = g.clone()
    c.apply("pass")  # in the clone P0 draws the cloister tile BA-A and the token G2a
    assert tokens_held(c, 0) == ["G2a"] and tokens_held(g, 0) == []
    assert bag_tokens(g)[0] == "G2a" and len(bag_tokens(g)) == 24 and len(bag_tokens(c)) == 23


# ------------------------------------------------------- window arithmetic
def _brute_best(counts: list[int], points: tuple[int, ...], loose: int) -> int:
    """Every multiset of shapes (each used 0..2 times) whose tokens the player holds."""
    import itertools

    ts = load_token_set()
    best = 0
    for mult in itertools.product(range(3), repeat=len(ts.shapes)):
        need = [0] * len(ts.kinds)
        value = 0
        for s, m in zip(ts.shapes, mult, strict=True):
            for k in s.kinds:
                need[k] += m
            value += m * (points[s.size - 1] - loose * len(s.kinds))
        if all(n <= c for n, c in zip(need, counts, strict=True)):
            best = max(best, value)
    return best + loose * sum(counts)


@pytest.mark.parametrize("seed", range(4))
def test_best_combination_equals_brute_force(seed):
    import numpy as np

    from carc_env.expansions.stained_glass.tokens import best_windows

    rng = np.random.default_rng(seed)
    ts = load_token_set()
    counts = [int(c) for c in rng.integers(0, 3, size=12)]
    points = tuple(sorted(int(p) for p in rng.integers(0, 70, size=4)))
    loose = int(rng.integers(0, 3))
    value, shapes = best_windows(ts, counts, points, loose)
    assert value == _brute_best(counts, points, loose)
    used = [0] * 12
    for i in shapes:
        for k in ts.shapes[i].kinds:
            used[k] += 1
    assert all(u <= c for u, c in zip(used, counts, strict=True))


# ------------------------------------------------------- property tests
def _others() -> tuple[str, ...]:
    from _combos import builtin_expansions

    return tuple(e for e in builtin_expansions() if e != "stained_glass")


def _plays(combo: tuple[str, ...]) -> bool:
    from _combos import _refused

    return not _refused((*combo, "stained_glass"))


SG_COMBOS = [c for r in range(len(_others()) + 1) for c in itertools.combinations(_others(), r) if _plays(c)]


def check_tokens(g: Game) -> None:
    """Tokens conserved (bag + held = 24), at most 2 copies of a kind each, thieves are followers."""
    held = [tokens_held(g, p) for p in range(g.num_players)]
    assert len(bag_tokens(g)) + sum(map(len, held)) == TOTAL_TOKENS
    assert sorted(bag_tokens(g) + [t for h in held for t in h]) == sorted(TOKEN_KINDS * 2)
    for owner, x, y, seg in thieves(g):
        assert g.followers[g.node_of(x, y, seg)] == owner


def check_windows(events: list) -> None:
    """Every scored window holds one copy of each kind of a legal shape: never two copies of a kind."""
    by_name = {s.name: s for s in SHAPES}
    for e in of(events, WindowScored):
        assert len(set(e.tokens)) == len(e.tokens)
        assert set(e.tokens) == set(by_name[e.shape].tokens)


@pytest.mark.parametrize("others", SG_COMBOS, ids=lambda c: "+".join(("stained_glass", *c)))
def test_random_games_conserve_tokens_with_every_combination(others):
    from _expansion_games import play_random

    seed = 7 + 31 * len(others) + sum(map(len, others))
    config = GameConfig(2 + seed % 4, ("base", *others, "stained_glass"))
    g, events = play_random(config, seed=seed, action_seed=seed + 1, before=check_tokens)
    check_tokens(g)
    check_windows(events)
    assert g.over


def test_random_play_reaches_every_stained_glass_decision():
    # the property tests above are not vacuous: random games draw, place thieves, steal and score
    from _expansion_games import play_random

    # (windows are rare in random play: each player starts with two thirds of two basic windows)
    seen: set[type] = set()
    opts = {"stained_glass": {"start_tokens": "G1a G1b G2a G2b; G3a G3b G4a G4b"}}
    for seed in range(12):
        g, events = play_random(
            GameConfig(2, ("base", "darmstadt", "stained_glass"), opts), seed=seed, action_seed=seed
        )
        check_tokens(g)
        check_windows(events)
        seen |= {type(e) for e in events}
    assert {TokenDrawn, ThiefPlaced, TokenStolen, WindowScored} <= seen


@st.composite
def sg_configs(draw) -> GameConfig:
    others = draw(st.sampled_from(SG_COMBOS))
    opts = {
        "churches_are_cloisters": draw(st.booleans()),
        "shrines_are_cloisters": draw(st.booleans()),
        "thieves_need_monk": draw(st.booleans()),
        "protect_complete_windows": draw(st.booleans()),
        "steal_from_self": draw(st.booleans()),
        "steal_kind": draw(st.sampled_from(["choose", "random"])),
        "final_windows": draw(st.sampled_from(["best", "none"])),
        "loose_token_points": draw(st.integers(0, 2)),
        "window_points": draw(st.sampled_from(["6,18,36,60", "3,9,18,30", "0,0,0,0"])),
    }
    return GameConfig(draw(st.integers(2, 5)), ("base", *others, "stained_glass"), {"stained_glass": opts})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sg_configs(), st.integers(0, 2**32 - 1))
def test_random_games_with_random_options_keep_the_token_invariants(config, seed):
    from _expansion_games import play_random

    g, events = play_random(config, seed=seed, action_seed=seed ^ 0x5EED, before=check_tokens)
    check_tokens(g)
    check_windows(events)
    again = replay(to_record(g))
    assert again.scores == g.scores and bag_tokens(again) == bag_tokens(g)


def test_roads_ending_at_a_cloister_like_building_are_the_one_sided_roads_of_its_tile():
    # The data reading of "a road that ends at the cloister" (docs/rules/stained_glass.md), checked
    # against every built-in tile with a building and a road: one-sided roads end at the building,
    # St. Mary's two-sided road passes its church.
    from carc_env.core.tiles import BUILDING, ROAD

    expected = {
        "BA-A": ["r1"], "DA-st-louis": ["r1", "r2", "r3", "r4"], "DA-st-mary": [],
        "CU-shrine-road": ["r1"], "CU-shrine-city-road": ["r1"], "CU-shrine-2roads": ["r1", "r2"],
        "CU-shrine-CRFR": ["r1", "r2"],
    }  # fmt: skip
    options = {"stained_glass": {"shrines_are_cloisters": True}, "shrines": {"sixth_tile": True}}
    g = Game(GameConfig(2, ("base", "darmstadt", "king_robber", "river2", "shrines", "stained_glass"), options), seed=0)
    exp = g.rules.by_key["stained_glass"]
    table = exp.table(g)
    found = {}
    for t, tile in enumerate(g.rules.tiles):
        if any(s.kind == BUILDING for s in tile.segments) and any(s.kind == ROAD for s in tile.segments):
            found[tile.id] = [tile.segments[i].name for i in table.dead_ends[t]]
    assert found == expected


def test_a_token_file_that_is_a_directory_or_not_utf8_is_named_with_the_fix(tmp_path):
    from carc_env.expansions.stained_glass import TokenDataError

    with pytest.raises(TokenDataError, match=r"is a directory, not a token file; name a \.toml file inside it"):
        load_token_set(str(tmp_path))
    latin = tmp_path / "glas.toml"
    latin.write_bytes("kinds = ['Gr\xfcn']\n".encode("latin-1"))
    with pytest.raises(TokenDataError, match=r"glas\.toml: the token file is not UTF-8 text .*; save it as UTF-8 TOML"):
        load_token_set(str(latin))
