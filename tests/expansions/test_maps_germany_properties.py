"""Property tests: random whole games on the map of Germany, alone and with every expansion it plays with.

Every game is checked at every decision against brute-force references built
from the data alone (tests/_maps.py): tiles only on printed squares, legal
placements, features (printed pieces included) by flood fill, open edges
(borders and neutral printed edges close), completion, buildings counting
only squares, the tile and coat-of-arms lines of every score, followers conserved.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _helpers import play_random_game
from _maps import MapBruteFeatures, brute_legal_placements, printed_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carc_env.core import FeatureScored, Game, GameConfig
from carc_env.core.tiles import BUILDING, CITY, FIELD, ROAD
from carc_env.expansions.maps_germany.mapfile import load_map_file

GERMANY = load_map_file("germany")
OTHERS = ("king_robber", "shrines", "darmstadt", "sagrada_familia", "stained_glass", "royal_gateways")
LINKS = ("royal_gateways",)  # links cities beyond the flood fill of the board: left out where that is compared
VETOES = ("shrines", "sagrada_familia")  # remove placements the board allows
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def configs(draw, links: bool = True) -> GameConfig:
    others = tuple(k for k in OTHERS if (links or k not in LINKS) and draw(st.booleans()))
    opts: dict[str, Any] = {
        "start_squares": draw(st.sampled_from(["Rostock,Stuttgart", "Erfurt,Rostock,Stuttgart", "Stuttgart,Erfurt"])),
        "start_orientation": draw(st.sampled_from(["fixed", "random"])),
        "tile_mix": draw(st.sampled_from(["base_x1.5", "base_x1"])),
        "large_city_closed_edges": draw(st.sampled_from(["field", "border"])),
        "town_extra_turn": draw(st.booleans()),
        "town_extra_turn_optional": draw(st.booleans()),
        "town_penalty": draw(st.booleans()),
        "town_road_bonus": draw(st.booleans()),
    }
    return GameConfig(draw(st.integers(2, 5)), ("base", "maps_germany", *others), {"maps_germany": opts})


def coats_of(brute: MapBruteFeatures, feature: frozenset[int]) -> int:
    """Coats of arms printed on the squares and cells abroad whose city or road is in the feature."""
    coats = {}
    for city in GERMANY.large_cities:
        coats.update(zip(city.cells, city.coats_of_arms, strict=True))
    for a in GERMANY.abroad:
        coats[a.cell] = a.coats_of_arms
    n = 0
    for q in feature:
        x, y, tile, r, i = brute.node_info[q]
        if tile.id.startswith("MAP-") and tile.segments[i].kind in (CITY, ROAD):
            n += coats.get((x, y), 0)
    return n


def run(config: GameConfig, seed: int, action_seed: int, check) -> Game:
    """A random game (``_helpers.play_random_game``), ``check(game, previous, events)`` at every
    decision (``previous`` and ``events`` None) and after every action."""
    return play_random_game(config, seed, action_seed, before=lambda g: check(g, None, None),
                            after=lambda prev, g, _a, ev: check(g, prev, ev), keep_previous=True)  # fmt: skip


@SETTINGS
@given(configs(), seeds, seeds)
def test_tiles_go_only_on_printed_squares_and_legal_placements_equal_brute_force(config, seed, action_seed):
    n_printed = printed_count(GERMANY)
    vetoes = any(k in config.expansions for k in VETOES)

    def check(g: Game, prev, ev) -> None:
        if prev is None and g.phase == "tile":
            tile = g.rules.tiles[g.current_tile]
            offered = {tuple(int(v) for v in row) for row in g.legal_tile_placements()}
            brute = brute_legal_placements(g, GERMANY, tile)
            assert offered <= brute if vetoes else offered == brute, tile.id
        for x, y, *_ in g.placements[n_printed:]:
            assert (x, y) in GERMANY.squares
        assert len({(x, y) for x, y, *_ in g.placements}) == len(g.placements)

    g = run(config, seed, action_seed, check)
    playable = len(GERMANY.squares) - sum(len(c.cells) for c in GERMANY.large_cities)
    assert len(g.placements) - n_printed <= playable


@SETTINGS
@given(configs(links=False), seeds, seeds)
def test_features_equal_flood_fill_with_printed_pieces_and_borders(config, seed, action_seed):
    def check(g: Game, prev, ev) -> None:
        if prev is None or (len(g.placements) == len(prev.placements) and not g.over):
            return
        brute = MapBruteFeatures(g, GERMANY)
        groups: dict[int, set[int]] = {}
        for q in range(len(g.parent)):
            groups.setdefault(g.find(q), set()).add(q)
        assert {frozenset(v) for v in groups.values()} == brute.features()
        for feat in brute.features():
            kind = brute.kind(feat)
            root = g.find(next(iter(feat)))
            if kind in (CITY, ROAD):
                assert len(g.tiles[root]) == brute.tile_count(feat)
                assert g.open[root] == brute.open_edges(feat), (kind, sorted(brute.node_info[q][:2] for q in feat))
                if g.phase != "follower":
                    assert g.is_completed(root) == (brute.open_edges(feat) == 0)
            elif kind == FIELD:
                cities = {frozenset(groups[g.find(c)]) for c in g.adjacent_cities.get(root, ())}
                assert cities == brute.bordered_cities(feat)
            elif kind == BUILDING:
                (node,) = feat
                x, y = brute.node_info[node][:2]
                filled, squares = brute.building_around(x, y)
                assert g.building_neighbours[node] == filled and g.building_target(x, y) == squares
                if g.phase != "follower":
                    assert g.is_completed(node) == (filled == squares)
        # every score line for tiles and coats of arms, against the flood fill
        for e in ev:
            if not isinstance(e, FeatureScored) or e.kind not in ("city", "road"):
                continue
            feat = brute.feature_of[e.node]
            per = 1 if e.final or e.kind == "road" else 2
            items = {i.kind: i.points for i in e.items}
            if "sagrada_familia" in items:  # exception 1: the city its own tile closes scores 0 (test_sagrada_familia)
                assert e.value == 0 and set(items) == {"sagrada_familia"}
                continue
            assert items["tiles"] == per * brute.tile_count(feat)
            coats = coats_of(brute, feat)
            assert items.get("coats_of_arms", 0) == (1 if e.final else 2) * coats

    run(config, seed, action_seed, check)


@SETTINGS
@given(configs(), seeds, seeds)
def test_followers_are_conserved_and_never_on_printed_pieces(config, seed, action_seed):
    n_printed = printed_count(GERMANY)
    want = Game(config, seed=0).rules.followers

    def check(g: Game, prev, ev) -> None:
        assert want == 9 and g.followers_conserved()
        assert all(0 <= s <= want for s in g.supply)
        for node in g.followers:
            assert g.node_tile[node] >= n_printed

    g = run(config, seed, action_seed, check)
    assert g.followers == {} and all(s == want for s in g.supply[: g.num_players])


@SETTINGS
@given(configs(links=False), seeds, seeds)
def test_the_one_ply_scan_is_exact_at_the_border(config, seed, action_seed):
    """``Game.scan_placement``'s open edges after a placement equal the engine's after placing it (a
    side facing no square or a neutral printed edge closes), and it completes exactly when something
    completes; the filled squares around count only squares."""
    rng = np.random.default_rng(action_seed)

    def check(g: Game, prev, ev) -> None:
        if prev is not None or g.phase != "tile":
            return
        legal = g.legal_tile_placements()
        for x, y, r in legal[rng.permutation(len(legal))[:6]].tolist():
            scan = g.scan_placement(g.current_tile, x, y, r)
            after = g.clone()
            after.put_tile(g.current_tile, x, y, r)  # the board change alone, no turn
            base = after.placements[-1][4]
            tile = g.rules.tiles[g.current_tile]
            roots = {after.find(base + i) for i, s in enumerate(tile.segments) if s.kind in (CITY, ROAD)}
            assert sorted(j.open_after for j in scan.joined) == sorted(after.open[q] for q in roots)
            filled, _ = MapBruteFeatures(after, GERMANY).building_around(x, y)
            assert scan.around == filled
            closes = any(after.open[q] == 0 for q in roots) or any(
                after.building_neighbours[n] >= after.building_target(*after.placements[after.node_tile[n]][:2])
                for n in after._pending_buildings
            )
            if closes:
                assert scan.completes

    run(config, seed, action_seed, check)
