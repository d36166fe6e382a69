"""Property tests over random games with random legal actions (2-5 players).

Each property is checked at every decision of whole games (71 tiles) whose
shuffle and action choices come from hypothesis-drawn seeds.  References are
brute force, from the tile data alone (see tests/_helpers.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from _helpers import BruteFeatures, brute_legal_placements, engine_partition, play_random_game
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carc_env.core import FeatureScored, Game, GameConfig, IllegalActionError, PlaceFollower, PlaceTile
from carc_env.core.tiles import BUILDING, CITY, FIELD, RIVER, ROAD

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
players = st.integers(min_value=2, max_value=5)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def run_game(
    num_players: int,
    seed: int,
    action_seed: int,
    before: Callable[[Game], None] | None = None,
    after: Callable[..., None] | None = None,
) -> Game:
    """Play a whole base game with random legal actions (``_helpers.play_random_game``; ``previous``
    in ``after`` is a clone taken before the action)."""
    g = play_random_game(GameConfig(num_players=num_players), seed, action_seed, before, after,
                         keep_previous=after is not None, max_steps=400)  # fmt: skip
    assert len(g.board) <= 72
    return g


# --------------------------------------------------------------- followers
@SETTINGS
@given(players, seeds, seeds)
def test_followers_are_conserved(n, seed, action_seed):
    def after(prev, g, *_):
        assert g.followers_conserved()
        assert all(0 <= s <= 7 for s in g.supply)
        per = [0] * n
        for p in g.followers.values():
            per[p] += 1
        assert [g.supply[p] + per[p] for p in range(n)] == [7] * n
        # every follower sits on an occupant list of its feature's root
        listed = sorted(node for nodes in g.occupants.values() for node in nodes)
        assert listed == sorted(g.followers)
        for root, nodes in g.occupants.items():
            assert all(g.find(node) == root for node in nodes)

    g = run_game(n, seed, action_seed, after=after)
    # at the end every follower has been scored and returned
    assert g.followers == {}
    assert g.supply == [7] * n


# --------------------------------------------------------- union-find
def check_features(g: Game) -> None:
    brute = BruteFeatures(g)
    assert engine_partition(g) == brute.features()
    for feat in brute.features():
        kind = brute.kind(feat)
        root = g.find(next(iter(feat)))
        assert g.kind[root] == kind
        if kind in (CITY, ROAD):
            assert len(g.tiles[root]) == brute.tile_count(feat)
            assert g.open[root] == brute.open_edges(feat)
            # a city or road is completed exactly when no edge is open (the
            # score stage marks it, after the follower decision)
            if g.phase != "follower":
                assert g.is_completed(root) == (brute.open_edges(feat) == 0)
            else:
                assert not g.is_completed(root) or brute.open_edges(feat) == 0
            pennants = 0
            for node in feat:
                x, y, tile, r, i = brute.node_info[node]
                pennants += tile.segments[i].pennants
            assert g.pennants[root] == pennants
        elif kind == FIELD:
            engine_cities = {frozenset(g.feature_nodes(g.find(c))) for c in g.adjacent_cities.get(root, ())}
            assert engine_cities == brute.bordered_cities(feat)
        elif kind == BUILDING:
            (node,) = feat
            x, y = brute.node_info[node][:2]
            around = sum((x + dx, y + dy) in brute.cells for dx in (-1, 0, 1) for dy in (-1, 0, 1)) - 1
            assert g.building_neighbours[node] == around
            if g.phase != "follower":
                assert g.is_completed(node) == (around == 8)


@SETTINGS
@given(players, seeds, seeds)
def test_union_find_features_equal_flood_fill(n, seed, action_seed):
    def after(prev, g, *_):
        if len(g.placements) != len(prev.placements):
            check_features(g)

    g = run_game(n, seed, action_seed, after=after)
    check_features(g)


# ------------------------------------------------------------ placement
@SETTINGS
@given(players, seeds, seeds)
def test_legal_placements_equal_brute_force(n, seed, action_seed):
    rng = np.random.default_rng(action_seed ^ 0x5EED)

    def before(g):
        if g.phase != "tile":
            return
        tile = g.rules.tiles[g.current_tile]
        offered = {tuple(int(v) for v in row) for row in g.legal_tile_placements()}
        brute = brute_legal_placements(g, tile)
        assert offered == brute, f"{tile.id}: engine-only {offered - brute}, brute-only {brute - offered}"
        assert len(offered) == len(set(offered)) == g.count_legal_placements()
        assert {(a.x, a.y, a.rotation) for a in g.legal_actions()} == offered
        # a refused placement on a frontier cell raises and changes nothing
        fx, fy, _ = g.frontier()
        refused = [
            (int(x), int(y), r)
            for x, y in zip(fx, fy, strict=True)
            for r in range(4)
            if (int(x), int(y), r) not in offered
        ]
        if refused:
            x, y, r = refused[rng.integers(len(refused))]
            n_before = len(g.placements)
            with pytest.raises(IllegalActionError):
                g.apply(PlaceTile(x, y, r))
            assert len(g.placements) == n_before and g.phase == "tile"

    run_game(n, seed, action_seed, before=before)


def test_frontier_is_every_empty_cell_next_to_the_board():
    g = Game(GameConfig(num_players=3), seed=7)
    rng = np.random.default_rng(7)
    while not g.over:
        fx, fy, _ = g.frontier()
        cells = set(g.board)
        expect = {(x + dx, y + dy) for x, y in cells for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0))} - cells
        assert set(zip(fx.tolist(), fy.tolist(), strict=True)) == expect
        acts = g.legal_actions()
        g.apply(acts[rng.integers(len(acts))])


# ---------------------------------------------------------------- scores
@SETTINGS
@given(players, seeds, seeds)
def test_scores_never_decrease(n, seed, action_seed):
    def after(prev, g, *_):
        assert all(b >= a for a, b in zip(prev.scores, g.scores, strict=True)), (prev.scores, g.scores)

    run_game(n, seed, action_seed, after=after)


@SETTINGS
@given(players, seeds, seeds)
def test_scored_values_equal_brute_force_values(n, seed, action_seed):
    """Every FeatureScored event against the rules applied to the flood fill:
    road 1/tile; city 2/tile + 2/pennant (1 and 1 at the end); cloister 1 +
    neighbours; field 3 per completed bordering city; the players with most
    followers on the feature get the value.  And no completed road, city or
    cloister keeps a follower once the turn is scored."""

    def after(prev, g, action, events):
        brute = BruteFeatures(g)
        followers = dict(prev.followers)
        if isinstance(action, PlaceFollower):
            base = g.placements[-1][4]
            followers[base + action.segment] = prev.player
        for e in events:
            if not isinstance(e, FeatureScored):
                continue
            feat = brute.feature_of[e.node]
            kind = brute.kind(feat)
            tiles = brute.tile_count(feat)
            if kind == ROAD:
                value = tiles
            elif kind == CITY:
                pennants = sum(brute.node_info[m][2].segments[brute.node_info[m][4]].pennants for m in feat)
                value = (1 if e.final else 2) * (tiles + pennants)
            elif kind == BUILDING:
                x, y = brute.node_info[e.node][:2]
                value = sum((x + dx, y + dy) in brute.cells for dx in (-1, 0, 1) for dy in (-1, 0, 1))
            else:
                value = 3 * sum(1 for c in brute.bordered_cities(feat) if brute.open_edges(c) == 0)
            assert e.value == value == sum(i.points for i in e.items), (e, value)
            counts = [0] * n
            for node in feat:
                if node in followers:
                    counts[followers[node]] += 1
            best = max(counts)
            assert best > 0
            assert e.points == tuple(value if c == best else 0 for c in counts)
            assert e.returned == tuple(counts)
            for node in feat:
                followers.pop(node, None)
        assert followers == g.followers
        if g.phase != "follower":
            for node in g.followers:
                feat = brute.feature_of[node]
                kind = brute.kind(feat)
                if kind in (CITY, ROAD):
                    assert brute.open_edges(feat) > 0
                elif kind == BUILDING:
                    x, y = brute.node_info[node][:2]
                    assert sum((x + dx, y + dy) in brute.cells for dx in (-1, 0, 1) for dy in (-1, 0, 1)) < 9

    g = run_game(n, seed, action_seed, after=after)
    assert g.followers == {}


# ------------------------------------------------------------- followers
@SETTINGS
@given(players, seeds, seeds)
def test_follower_spots_are_exactly_the_unoccupied_features_of_the_tile(n, seed, action_seed):
    def before(g):
        if g.phase != "follower":
            return
        assert g.supply[g.player] > 0
        brute = BruteFeatures(g)
        occupied_nodes = set(g.followers)
        x, y, t, r, base = g.placements[-1]
        tile = g.rules.tiles[t]
        spots = g.legal_follower_spots()
        assert spots, "a follower phase with no spot should have been skipped"
        free = []
        for i, seg in enumerate(tile.segments):
            if seg.kind == RIVER:
                continue
            if not (brute.feature_of[base + i] & occupied_nodes):
                free.append(i)
        assert sorted(spots) == free
        for a in g.legal_actions():
            if isinstance(a, PlaceFollower):
                assert a.segment in free

    def after(prev, g, *_):
        # a skipped follower phase means no supply or no free feature
        if prev.phase == "tile" and g.phase != "follower":
            p = prev.player
            x, y, t, r, base = g.placements[-1]
            if prev.supply[p] > 0:
                brute = BruteFeatures(g)
                occupied = set(prev.followers)
                tile = g.rules.tiles[t]
                assert all(brute.feature_of[base + i] & occupied for i in range(len(tile.segments)))

    run_game(n, seed, action_seed, before=before, after=after)
