"""The hooks added for The Royal Gateways and the Sagrada Familia, through test-only plug-ins.

* ``placement_links`` (union): links a placement makes are united right after
  the tile is laid, before ``after_placement``, and ``scan_placement`` /
  ``closes_feature`` count them;
* ``score_override`` (first): replaces a feature's whole value, ``score_items``
  are then not applied; the first plug-in in expansion order wins;
* ``defers_scoring`` (any): a completed feature keeps its followers and is
  scored at the end of the game;
* a ``placement_veto`` may return a reason, which ``TileDiscarded`` carries when
  that veto cleared the drawn tile's last legal placement.

Board reminders: the start tile BA-D is at (0,0) unrotated (city north, road
west-east, field south); BA-E is a city cap (r2: the city faces south).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from _helpers import play

from carc_env.core import (
    FeatureCompleted,
    FeatureScored,
    Game,
    GameConfig,
    ScoreItem,
    TileDiscarded,
)
from carc_env.core.expansion import Expansion, register, unregister
from carc_env.core.tiles import CITY


@contextmanager
def registered(*classes: type[Expansion]) -> Iterator[None]:
    for c in classes:
        register(c)
    try:
        yield
    finally:
        for c in classes:
            unregister(c.KEY)


def game(keys: tuple[str, ...], order: list[str]) -> Game:
    return Game(GameConfig(2, ("base", *keys)), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


# --------------------------------------------------------------- placement_links
class CapsJoinTheStartCity(Expansion):
    """A city cap placed anywhere but on the start city's edge is linked to the start city."""

    KEY = "test_caps_join"
    REQUIRES = ("base",)
    seen_at_after_placement: list[bool] = []

    def placement_links(self, game: Game, tile: int, x: int, y: int, r: int) -> list[tuple[int, int]]:
        start = game.node_of(0, 0, "c1")
        if game.rules.tiles[tile].id != "BA-E" or (x, y) == (0, -1) or game.find(start) in game.completed:
            return []
        return [(0, start)]

    def after_placement(self, game: Game, x: int, y: int) -> None:
        if game.rules.tiles[game.placements[-1][2]].id == "BA-E":
            linked = game.find(game.node_of(x, y, "c1")) == game.find(game.node_of(0, 0, "c1"))
            type(self).seen_at_after_placement.append(linked)


def test_placement_links_are_made_before_after_placement_and_counted_by_closes_feature():
    CapsJoinTheStartCity.seen_at_after_placement = []
    with registered(CapsJoinTheStartCity):
        g = game(("test_caps_join",), ["BA-E", "BA-E"])
        t = g.current_tile
        scan = g.scan_placement(t, 0, 1, 2)  # a cap south of the start, facing south: linked
        assert [(j.kind, j.open_after) for j in scan.joined] == [(CITY, 2)]
        play(g, ["tile 0,1 r2", "follower c1"])  # P0's knight on the linked city
        assert CapsJoinTheStartCity.seen_at_after_placement == [True]
        start = g.node_of(0, 0, "c1")
        assert g.find(start) == g.find(g.node_of(0, 1, "c1")) and g.open[g.find(start)] == 2
        # P1's cap on the start city's edge closes that part only: not closing, not complete
        assert not g.closes_feature(g.current_tile, 0, -1, 2, start)
        play(g, ["tile 0,-1 r2"])
        assert g.legal_follower_spots() == [1]  # the field only: the linked city is occupied
        ev = play(g, ["pass"])
        assert not of(ev, FeatureCompleted)
        (s,) = of(ev, FeatureScored)  # the last tile: scored at the end, one city of 3 tiles
        assert (s.final, s.items, s.points) == (True, (ScoreItem("tiles", "3 city tiles x 1", 3),), (3, 0))


def test_without_placement_links_closes_feature_sees_the_physical_city():
    g = game((), ["BA-E", "BA-E"])
    play(g, ["tile 0,1 r2", "pass"])
    assert g.closes_feature(g.current_tile, 0, -1, 2, g.node_of(0, 0, "c1"))


# --------------------------------------------------------------- score_override
class ZeroCities(Expansion):
    KEY = "test_override_a"
    REQUIRES = ("base",)

    def score_override(self, game: Game, root: int, final: bool) -> list[ScoreItem] | None:
        return [ScoreItem("zero", "cities score nothing", 0)] if game.kind[root] == CITY else None


class TenCities(Expansion):
    KEY = "test_override_b"
    REQUIRES = ("base",)

    def score_override(self, game: Game, root: int, final: bool) -> list[ScoreItem] | None:
        return [ScoreItem("ten", "cities score ten", 10)] if game.kind[root] == CITY else None


class CityBonus(Expansion):
    KEY = "test_city_bonus"
    REQUIRES = ("base",)

    def score_items(self, game: Game, root: int, final: bool, items: list[ScoreItem], counts: list[int]) -> None:
        if game.kind[root] == CITY:
            items.append(ScoreItem("bonus", "+5", 5))


@pytest.mark.parametrize(
    ("keys", "items", "points"),
    [
        (("test_city_bonus",), (ScoreItem("tiles", "2 city tiles x 2", 4), ScoreItem("bonus", "+5", 5)), 9),
        (("test_city_bonus", "test_override_b"), (ScoreItem("ten", "cities score ten", 10),), 10),
        (("test_override_b", "test_override_a"), (ScoreItem("zero", "cities score nothing", 0),), 0),
    ],
)
def test_score_override_replaces_the_value_and_the_first_plug_in_wins(keys, items, points):
    with registered(ZeroCities, TenCities, CityBonus):
        ev = play(game(keys, ["BA-E"]), ["tile 0,-1 r2", "follower c1"])
        (s,) = of(ev, FeatureScored)
        assert (s.final, s.items, s.value, s.points, s.returned) == (False, items, points, (points, 0), (1, 0))


# --------------------------------------------------------------- defers_scoring
class CitiesWait(Expansion):
    KEY = "test_cities_wait"
    REQUIRES = ("base",)

    def defers_scoring(self, game: Game, root: int) -> bool:
        return game.kind[root] == CITY


class NeverWaits(Expansion):
    KEY = "test_never_waits"
    REQUIRES = ("base",)

    def defers_scoring(self, game: Game, root: int) -> bool:
        return False


@pytest.mark.parametrize("keys", [("test_cities_wait",), ("test_cities_wait", "test_never_waits")])
def test_defers_scoring_keeps_the_followers_until_the_end(keys):
    with registered(CitiesWait, NeverWaits):
        g = game(keys, ["BA-E", "BA-U"])
        ev = play(g, ["tile 0,-1 r2", "follower c1"])  # P0 closes the start city
        (c,) = of(ev, FeatureCompleted)
        assert (c.kind, c.size, c.occupied) == ("city", 2, True)
        assert not of(ev, FeatureScored) and g.supply == [6, 7] and g.is_completed(g.find(g.node_of(0, 0, "c1")))
        ev = play(g, ["tile 1,0 r0", "pass"])  # the last tile: the completed city is scored at the end
        (s,) = of(ev, FeatureScored)
        assert (s.final, s.items, s.points, s.returned) == (
            True, (ScoreItem("tiles", "2 city tiles x 1", 2),), (2, 0), (1, 0)
        )  # fmt: skip
        assert g.supply == [7, 7] and g.followers_conserved()


def test_without_defers_scoring_a_completed_city_scores_at_once():
    with registered(NeverWaits):
        ev = play(game(("test_never_waits",), ["BA-E", "BA-U"]), ["tile 0,-1 r2", "follower c1"])
        (s,) = of(ev, FeatureScored)
        assert (s.final, s.points) == (False, (4, 0))


# ------------------------------------------------------------ veto reasons
class NoCrowns(Expansion):
    """BA-C (the four-sided city with a pennant) may go nowhere."""

    KEY = "test_no_crowns"
    REQUIRES = ("base",)

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> str | None:
        if game.rules.tiles[tile].id == "BA-C":
            masks[:] = 0
        return "no crowns here"


class Chatty(Expansion):
    """Gives a reason and clears nothing."""

    KEY = "test_chatty"
    REQUIRES = ("base",)

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> str | None:
        return "chatty"


def test_the_veto_that_clears_the_last_placement_names_the_discard_reason():
    with registered(NoCrowns, Chatty):
        g = game(("test_chatty", "test_no_crowns"), ["BA-E", "BA-C", "BA-U"])
        out = play(g, ["tile 0,1 r2", "pass"])  # then BA-C is drawn: it would fit at (0,-1), the veto refuses
        assert of(out, TileDiscarded) == [TileDiscarded(1, "BA-C", "no crowns here")]
        assert g.tile_id == "BA-U"


def test_a_reason_from_a_veto_that_cleared_nothing_is_not_used():
    with registered(Chatty):
        g = game(("test_chatty",), ["BA-E", "BA-C", "BA-U"])
        out = play(g, ["tile 0,-1 r2", "pass"])  # the start city is closed: BA-C fits nowhere
        assert of(out, TileDiscarded) == [TileDiscarded(1, "BA-C", "no legal placement")]
