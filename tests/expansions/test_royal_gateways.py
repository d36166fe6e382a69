"""The Royal Gateways: one rule per scenario (docs/rules/royal_gateways.md).

Forced draw orders, scripted moves, exact expected points computed by hand.
Board reminders: the start tile BA-D is at (0, 0) unrotated (city north, road
west-east, field south); x grows east, y south; ``rR`` turns a tile R quarter
turns clockwise, so the printed side s faces (s + R) % 4.

The gate tiles are placeholders (``data/tiles/royal_gateways.toml``):
``RG-king-1`` / ``RG-queen-1`` are city caps (C F F F), ``RG-king-2`` /
``RG-queen-2`` a city cap over a road W-E (C R F R, like BA-D); the city of each
carries the gate.  So a cap turned r faces its city to side r: r1 east, r2
south, r3 west.

Most scenarios build two cities:

* A, north of the start: ``BA-R`` at (0,-1) r2 joins the start city and leaves
  it open west (-1,-1) and east (1,-1); a gate cap at (1,-1) r3 closes the
  east edge;
* B, south of the start: ``BA-E`` at (0,1) r2, a cap open to the south (0,2);
  ``RG-king-2`` at (0,2) r0 closes it.
"""

from __future__ import annotations

import tomllib

import pytest
from _expansion_games import SETTINGS, play_random, seeds
from _helpers import engine_partition, play
from _linked import GATE_TAGS, LinkedFeatures, configs_with, gate_waits
from hypothesis import given

from carc_env.core import (
    FeatureCompleted,
    FeatureScored,
    FigureMoved,
    FollowerPlaced,
    Game,
    GameConfig,
    IllegalActionError,
    PointsAwarded,
    ScoreItem,
)
from carc_env.core.tiles import CITY, FIELD, RIVER, ROAD, load_tile_file, tile_file_path
from carc_env.expansions.count import CASTLE, MARKET, CountSend, FollowerFromQuarter

RG = ("base", "royal_gateways")


def game(order: list[str], expansions: tuple[str, ...] = RG, options: dict | None = None) -> Game:
    return Game(GameConfig(2, expansions, options or {}), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def city_tiles(n: int, per: int = 2) -> ScoreItem:
    return ScoreItem("tiles", f"{n} city tile{'s' * (n != 1)} x {per}", n * per)


def root_of(g: Game, x: int, y: int, name: str = "c1") -> int:
    return g.find(g.node_of(x, y, name))


# ----------------------------------------------------------------- tile data
def test_tile_file_has_two_kings_and_two_queens_gates_tagged_as_placeholders():
    tf = load_tile_file(tile_file_path("royal_gateways.toml"))
    assert [(t.id, t.count, t.edges) for t in tf.tiles] == [
        ("RG-king-1", 1, "CFFF"),
        ("RG-king-2", 1, "CRFR"),
        ("RG-queen-1", 1, "CFFF"),
        ("RG-queen-2", 1, "CRFR"),
    ]
    for t in tf.tiles:
        gates = [(s.kind, sorted(s.tags)) for s in t.segments if s.tags]
        assert gates == [(CITY, ["king_gate" if "king" in t.id else "queen_gate"])]
        # issue 23: "a meeple may not be deployed to the portal itself" - the data has no part of the
        # tile for the portal but the tagged city feature (no other tagged segment, no building, no
        # extra attribute), so the gate's city is what the rule keeps followers off
        assert {s.kind for s in t.segments} <= {CITY, ROAD, FIELD} and not any(s.building for s in t.segments)
    assert {
        k for raw_tile in tomllib.loads(tile_file_path("royal_gateways.toml").read_text())["tile"] for k in raw_tile
    } == {"id", "name", "layout_status", "count", "edges", "features", "fields"}
    with tile_file_path("royal_gateways.toml").open("rb") as fh:
        raw = tomllib.load(fh)
    assert {t["layout_status"] for t in raw["tile"]} == {"placeholder"}
    g = Game(GameConfig(2, RG), seed=0)
    assert g.bag_size + 1 == 71 + 4  # the drawn tile is not in the bag


# ------------------------------------------------------------------- linking
# L1: P0's knight in A, P1's in B; P0 puts the King's Gate RG-king-1 into A,
# P1 closes B with RG-king-2; P0 closes A's west edge with a cap.
L1_ORDER = ["BA-R", "BA-E", "RG-king-1", "RG-king-2", "BA-E"]
L1_MOVES = [
    "tile 0,-1 r2",
    "follower c1",  # P0: A = start city + BA-R, open W and E
    "tile 0,1 r2",
    "follower c1",  # P1: B, open S
    "tile 1,-1 r3",
    "pass",  # P0: King's Gate closes A's east edge; A open W
    "tile 0,2 r0",
    "pass",  # P1: King's Gate closes B: A and B are one city
]


def test_two_gates_of_a_type_in_different_cities_make_them_one_city():
    g = game(L1_ORDER)
    play(g, L1_MOVES[:6])
    assert root_of(g, 0, 0) != root_of(g, 0, 1)  # one King's Gate alone links nothing
    play(g, L1_MOVES[6:])
    assert root_of(g, 0, 0) == root_of(g, 0, 1) == root_of(g, 0, 2) == root_of(g, 1, -1)
    root = root_of(g, 0, 0)
    assert g.open[root] == 1  # A's west edge; B is closed
    assert sorted(g.feature_tiles(root)) == [(0, -1), (0, 0), (0, 1), (0, 2), (1, -1)]


def test_a_linked_city_is_complete_only_when_every_part_is_complete():
    g = game(L1_ORDER)
    play(g, L1_MOVES[:6])
    ev = play(g, L1_MOVES[6:])  # closes B, but A is still open
    assert of(ev, FeatureCompleted) == [] and of(ev, FeatureScored) == []
    assert not g.is_completed(root_of(g, 0, 1))
    assert g.supply == [6, 6]  # both knights stay on the board


def test_a_linked_city_is_scored_once_as_one_city_with_the_tiles_of_every_part():
    g = game(L1_ORDER)
    play(g, L1_MOVES)
    ev = play(g, ["tile -1,-1 r1", "pass"])  # P0 closes A's west edge: the whole city is complete
    (done,) = of(ev, FeatureCompleted)
    assert (done.kind, done.size, done.occupied) == ("city", 6, True)
    (s,) = of(ev, FeatureScored)
    # A: (0,0) (0,-1) (1,-1) (-1,-1); B: (0,1) (0,2): 6 tiles x 2; one knight each: a tie
    assert s.items == (city_tiles(6),)
    assert (s.value, s.points, s.winners, s.returned) == (12, (12, 12), (0, 1), (1, 1))
    assert sorted(s.tiles) == [(-1, -1), (0, -1), (0, 0), (0, 1), (0, 2), (1, -1)]
    assert g.scores == [12, 12]


def test_an_incomplete_linked_city_scores_once_over_all_its_parts_at_game_end():
    g = game(L1_ORDER[:4])
    ev = play(g, L1_MOVES)  # the game ends after B's gate
    (s,) = of(ev, FeatureScored)
    assert s.final and s.kind == "city"
    assert s.items == (city_tiles(5, 1),)  # (0,0) (0,-1) (1,-1) (0,1) (0,2)
    assert s.points == (5, 5) and s.returned == (1, 1)
    assert g.scores == [5, 5]


def test_same_type_gates_in_one_city_have_no_effect():
    # Both King's Gates close A (west and east): A completes at once, like any city.
    g = game(["BA-R", "RG-king-1", "RG-king-2"])
    play(g, ["tile 0,-1 r2", "follower c1", "tile 1,-1 r3", "pass"])
    ev = play(g, ["tile -1,-1 r1", "pass"])  # RG-king-2 turned r1: city E, road N-S
    (s,) = of(ev, FeatureScored)
    assert not s.final and s.items == (city_tiles(4),) and s.points == (8, 0)
    assert g.scores == [8, 0]


# Chain: A gets the King's Gate (east) and the Queen's Gate (west); B is a city
# east of the start road (BA-D r2 at (1,0), city south) closed by RG-king-2;
# C the same west of it (BA-D r2 at (-1,0)) closed by RG-queen-2.
CHAIN_ORDER = ["BA-R", "BA-D", "BA-D", "RG-king-1", "RG-queen-1", "RG-king-2", "RG-queen-2"]
CHAIN_MOVES = [
    "tile 0,-1 r2",
    "follower c1",  # P0: knight in A (open W and E)
    "tile 1,0 r2",
    "follower c1",  # P1: knight in B (open S)
    "tile -1,0 r2",
    "follower c1",  # P0: knight in C (open S)
    "tile 1,-1 r3",
    "pass",  # P1: King's Gate in A; A open W
    "tile -1,-1 r1",
    "pass",  # P0: Queen's Gate in A; A closed, but its gates wait for partners
    "tile 1,1 r0",
    "pass",  # P1: King's Gate closes B: A+B, still waiting for the Queen's partner
]


def test_king_and_queen_gates_chain_three_cities_into_one():
    g = game(CHAIN_ORDER)
    early = play(g, CHAIN_MOVES)
    assert of(early, FeatureCompleted) == [] and of(early, FeatureScored) == []
    assert root_of(g, 0, 0) == root_of(g, 1, 0) != root_of(g, -1, 0)
    ev = play(g, ["tile -1,1 r0", "pass"])  # P0: Queen's Gate closes C and links it
    assert root_of(g, 0, 0) == root_of(g, 1, 0) == root_of(g, -1, 0)
    (done,) = of(ev, FeatureCompleted)
    assert (done.kind, done.size) == ("city", 8)
    (s,) = of(ev, FeatureScored)
    assert s.items == (city_tiles(8),)  # A 4 tiles, B 2, C 2


def test_majority_counts_the_followers_of_every_part():
    # P0 has a knight in A and one in C, P1 one in B: 2 against 1 over the linked city.
    g = game(CHAIN_ORDER)
    play(g, CHAIN_MOVES)
    ev = play(g, ["tile -1,1 r0", "pass"])
    (s,) = of(ev, FeatureScored)
    assert (s.value, s.points, s.winners, s.returned) == (16, (16, 0), (0,), (2, 1))
    assert g.scores == [16, 0]


def test_links_cover_what_the_cities_grow_into():
    # The King's Gate starts a city X south of the start; X grows (P1's knight on a
    # pennant tile) before the partner gate closes the start city and links it; a cap
    # closes X: one city of 5 tiles and a pennant.
    g = game(["RG-king-1", "BA-F", "RG-king-2", "BA-E"])
    play(
        g,
        [
            "tile 0,1 r2",
            "pass",  # P0: King's Gate, city facing S
            "tile 0,2 r1",
            "follower c1",  # P1: BA-F N-S extends X
            "tile 0,-1 r2",
            "pass",  # P0: RG-king-2 closes the start city: linked to X
        ],
    )
    ev = play(g, ["tile 0,3 r0", "pass"])  # P1 closes X
    (s,) = of(ev, FeatureScored)
    assert s.items == (city_tiles(5), ScoreItem("pennants", "1 pennant x 2", 2))
    assert s.points == (0, 12)


# --------------------------------------------------------------- unpaired gate
UNPAIRED = ["BA-R", "RG-king-1", "BA-E"]
UNPAIRED_MOVES = ["tile 0,-1 r2", "follower c1", "tile 1,-1 r3", "pass", "tile -1,-1 r1", "pass"]


def test_a_city_with_an_unpaired_gate_cannot_complete_by_default():
    # A is closed, but the other King's Gate was never placed: A is not complete;
    # at the end it scores as an incomplete city (4 tiles x 1).
    g = game(UNPAIRED)
    ev = play(g, UNPAIRED_MOVES)
    assert of(ev, FeatureCompleted) == []
    (s,) = of(ev, FeatureScored)
    assert s.final and s.items == (city_tiles(4, 1),) and s.points == (4, 0)
    assert g.scores == [4, 0]


def test_unpaired_gate_option_off_lets_the_city_complete():
    g = game(UNPAIRED, options={"royal_gateways": {"unpaired_gate_blocks_completion": False}})
    ev = play(g, UNPAIRED_MOVES)
    (s,) = of(ev, FeatureScored)
    assert not s.final and s.items == (city_tiles(4),) and s.points == (8, 0)
    assert g.scores == [8, 0]


# ------------------------------------------------------------------ followers
def test_no_follower_on_the_gate():
    # RG-king-2 east of the start: its city carries the gate; road and fields are free.
    g = game(["RG-king-2"])
    play(g, ["tile 1,0 r0"])
    tile = g.rules.tiles[g.placements[-1][2]]
    assert sorted(tile.segments[i].name for i in g.legal_follower_spots()) == ["f1", "f2", "r1"]
    with pytest.raises(IllegalActionError):
        g.apply("follower c1")


def test_follower_on_gate_option_allows_a_knight_on_the_gate_city():
    g = game(["RG-king-2"], options={"royal_gateways": {"follower_on_gate": True}})
    play(g, ["tile 1,0 r0"])
    tile = g.rules.tiles[g.placements[-1][2]]
    assert sorted(tile.segments[i].name for i in g.legal_follower_spots()) == ["c1", "f1", "f2", "r1"]
    ev = play(g, ["follower c1"])  # the last tile: the game ends, the knight scores its open city
    assert of(ev, FollowerPlaced) == [FollowerPlaced(0, 1, 0, "c1", "city")]
    assert g.scores == [1, 0]


def test_no_follower_in_any_part_of_a_linked_city_that_holds_one():
    # A holds P0's knight; RG-king-2 west of the start opens a city B to the south
    # and links it to A; BA-G extending B cannot take a knight.
    g = game(["BA-R", "RG-king-1", "RG-king-2", "BA-G"])
    play(
        g,
        [
            "tile 0,-1 r2",
            "follower c1",
            "tile 1,-1 r3",
            "pass",
            "tile -1,0 r2",
            "pass",  # P0: RG-king-2 turned r2: city S, road E-W
            "tile -1,1 r1",  # P1: BA-G N-S extends B
        ],
    )
    tile = g.rules.tiles[g.placements[-1][2]]
    assert sorted(tile.segments[i].name for i in g.legal_follower_spots()) == ["f1", "f2"]
    with pytest.raises(IllegalActionError):
        g.apply("follower c1")


# ------------------------------------------------------------ fields, tiles
# BA-H turned r1 at (0,1): two city caps, east and west, one field between them.
# RG-king-1 closes the east cap, RG-king-2 (turned r1) the west cap: two cities,
# linked into one of 3 tiles (the BA-H tile counts once).
SPLIT_ORDER = ["BA-H", "RG-king-1", "RG-king-2"]


def test_a_field_bordering_two_parts_of_a_linked_city_counts_it_once():
    g = game(SPLIT_ORDER)
    play(g, ["tile 0,1 r1", "follower f1", "tile 1,1 r3", "pass"])
    ev = play(g, ["tile -1,1 r1", "pass"])
    (done,) = [e for e in of(ev, FeatureCompleted) if e.kind == "city"]
    assert (done.size, done.occupied) == (3, False)
    (s,) = of(ev, FeatureScored)  # the farmer, at the end
    assert s.final and s.kind == "field"
    assert s.items == (ScoreItem("cities", "1 completed city x 3", 3),)
    assert g.scores == [3, 0]


def test_a_tile_holding_two_parts_of_a_linked_city_counts_once():
    g = game(SPLIT_ORDER)
    play(g, ["tile 0,1 r1", "follower c1", "tile 1,1 r3", "pass"])
    ev = play(g, ["tile -1,1 r1", "pass"])
    (s,) = of(ev, FeatureScored)
    assert not s.final and s.items == (city_tiles(3),) and s.points == (6, 0)


# ------------------------------------------------------- other expansions
def test_king_and_darmstadtium_react_once_to_the_linked_city():
    # A = start city + the Darmstadtium (P0's knight), open N, E, W; B = P1's cap
    # south, closed by RG-king-2 and linked by it.  Closing B (a part) moves no
    # figure and pays no bonus; P1's cap closing A's last edge completes the whole:
    # the King goes to P1 for a city of 7 tiles, the Darmstadtium pays +3 once.
    g = game(
        ["DA-darmstadtium", "BA-E", "RG-king-1", "RG-king-2", "BA-E", "BA-E"],
        expansions=("base", "royal_gateways", "king_robber", "darmstadt"),
    )
    early = play(
        g,
        [
            "tile 0,-1 r0",
            "follower c1",  # P0: A
            "tile 0,1 r2",
            "follower c1",  # P1: B
            "tile 1,-1 r3",
            "pass",  # P0: King's Gate in A
            "tile 0,2 r0",
            "pass",  # P1: closes B, links it
            "tile -1,-1 r1",
            "pass",  # P0: A open N only
        ],
    )
    assert of(early, FigureMoved) == [] and of(early, FeatureScored) == []
    ev = play(g, ["tile 0,-2 r2", "pass"])  # P1 completes the linked city; the game ends
    assert of(ev, FigureMoved) == [FigureMoved("king", 1, -1, "completed a city of 7 tiles")]
    (s,) = [e for e in of(ev, FeatureScored) if not e.final]
    assert s.items == (city_tiles(7), ScoreItem("darmstadtium", "Darmstadtium +3 to the majority", 3))
    assert s.points == (17, 17)
    # end: the King scores 1 per completed city, and the linked city is one
    assert [e for e in of(ev, PointsAwarded) if e.final] == [
        PointsAwarded(1, 1, (ScoreItem("king", "1 completed city x 1", 1),), True)
    ]
    assert g.scores == [17, 18]


def test_count_castle_followers_join_the_linked_city_once_when_the_whole_completes():
    # Count block: CO12's east city cap (part A) and CO9's south cap (part B).  A: P0's
    # BA-G (2,1) with a knight, closed by P0's King's Gate RG-king-2 (3,1).  B: P1's BA-F
    # (-2,2, a pennant) with a knight, closed by P1's King's Gate RG-king-1 (-2,3), which
    # links them.  P1 has a follower in the castle (the Count on the market).  Closing A
    # (a part) opens no castle window; the whole completing opens one, where the follower
    # joins the city once, named by a segment of either part, and takes the majority.
    g = game(["BA-G", "BA-F", "RG-king-2", "RG-king-1", "BA-B"], expansions=("base", "royal_gateways", "count"))
    count = g.ext["count"]
    g.supply[1] -= 1
    count.quarters[CASTLE][1] += 1
    count.count = MARKET
    play(g, ["tile 2,1 r0", "follower c1", "tile -2,2 r1", "follower c1"])
    ev = play(g, ["tile 3,1 r3", "pass"])  # P0 closes part A: not complete, no window
    assert of(ev, FeatureCompleted) == [] and of(ev, FeatureScored) == []
    assert g.phase == "tile" and g.player == 1
    g.apply("tile -2,3 r0")
    ev = g.apply("pass")  # P1 closes B and links it: the linked city is complete
    assert of(ev, FeatureScored) == []
    # the castle window, before scoring; P0 (first, left of the active player) has nobody
    # in the quarters and is not asked
    assert g.phase == "count_leave" and g.player == 1
    (send,) = [a for a in g.legal_actions() if isinstance(a, CountSend)]  # one city, one target
    assert g.find(g.node_of(send.x, send.y, send.segment)) == root_of(g, 2, 1) == root_of(g, -2, 2)
    ev = g.apply("count_send 3,1 c1")  # named through part A, far from the tile just placed
    assert of(ev, FollowerFromQuarter) == [FollowerFromQuarter(1, "castle", 3, 1, "c1", "city", False)]
    assert [(e.kind, e.size) for e in of(ev, FeatureCompleted)] == [("city", 6)]
    (s,) = of(ev, FeatureScored)  # P1 had no one left in the castle: scoring follows
    assert s.items == (city_tiles(6), ScoreItem("pennants", "1 pennant x 2", 2))
    assert (s.value, s.points, s.winners, s.returned) == (14, (0, 14), (1,), (1, 2))
    assert g.scores == [0, 14]
    assert count.quarters[CASTLE] == [0, 0] and g.supply == [7, 7] and g.followers_conserved()
    assert g.phase == "tile" and g.player == 0  # P1, the active player, scored: no deployment


# ------------------------------------------------------------- properties
def check_linked_cities(g: Game, blocks: bool) -> None:
    """The union-find against the flood fill joined by the gate links (tests/_linked.py)."""
    linked = LinkedFeatures(g, blocks)
    assert engine_partition(g) == linked.partition()
    for group in linked.partition():
        root = g.find(next(iter(group)))
        if g.kind[root] != CITY:
            continue
        assert len(g.tiles[root]) == linked.tile_count(group)
        assert g.open[root] == linked.open_edges(group)
        assert g.pennants[root] == linked.pennants(group)
        if g.is_completed(root):
            assert linked.open_edges(group) == 0
        elif linked.open_edges(group) == 0 and g.phase != "follower" and root not in g.completing:
            # closed but not complete: only a gate waiting for its partner (or the Sagrada
            # Familia's tile closed it while such a gate waits) keeps a closed city open
            assert blocks and gate_waits(g, group), (root, sorted(g.feature_tiles(root)))


def check_follower_spots(g: Game, on_gate: bool) -> None:
    """Offered spots: never a gate (unless allowed), never a feature of an occupied (linked) city."""
    linked = LinkedFeatures(g, g.rules.by_key["royal_gateways"].options.unpaired_gate_blocks_completion)
    occupied = set(g.followers)
    _, _, t, _, base = g.placements[-1]
    tile = g.rules.tiles[t]
    allowed = [
        i
        for i, seg in enumerate(tile.segments)
        if seg.kind != RIVER
        and not (linked.group_of(base + i) & occupied)
        and (on_gate or not any(tag in seg.tags for tag in GATE_TAGS))
    ]
    spots = g.legal_follower_spots()
    assert set(spots) <= set(allowed)
    if "river2" not in g.config.expansions:  # the lake refuses followers by its own rule
        assert sorted(spots) == allowed


@SETTINGS
@given(configs_with("royal_gateways"), seeds, seeds)
def test_random_games_keep_linked_cities_equal_to_the_brute_force_reference(config, seed, action_seed):
    opts = config.options["royal_gateways"]
    blocks, on_gate = opts["unpaired_gate_blocks_completion"], opts["follower_on_gate"]
    seen = [0]

    def before(g: Game) -> None:
        if len(g.placements) != seen[0]:
            seen[0] = len(g.placements)
            check_linked_cities(g, blocks)
        if g.phase == "follower":
            check_follower_spots(g, on_gate)

    g, events = play_random(config, seed, action_seed, before=before)
    check_linked_cities(g, blocks)
    assert g.followers == {} and not g.guests
    # every city scored during the game is scored once, with the tiles of every part
    linked = LinkedFeatures(g, blocks)
    scored_cities = [e for e in events if isinstance(e, FeatureScored) and e.kind == "city" and not e.final]
    assert len({e.node for e in scored_cities}) == len(scored_cities)
    for e in scored_cities:
        assert sorted(e.tiles) == sorted({linked.physical.node_info[n][:2] for n in linked.group_of(e.node)})
