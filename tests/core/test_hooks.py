"""Every hook of the plug-in protocol and its composition rule, through small test-only expansions.

The built-in expansions exercise most hooks; the ones no built-in uses yet
(``blocks_completion``, ``extra_completions``, ``building_target``,
``check_config``, ``Game.link_features``, ``Game.add_follower``) and every
composition rule (all, any, pipeline, union, sum, single answer, stage order)
are checked here with exact scores on the base tiles.  Board reminders: the
start tile BA-D is at (0,0) unrotated (city north, road west-east, field
south); BA-E is a city cap (r2: the city faces south), BA-U a straight road
(r0: west-east), BA-B a cloister, BA-D a city with a road below it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest
from _helpers import play

from carc_env.core import (
    ConfigError,
    FeatureCompleted,
    FeatureScored,
    Game,
    GameConfig,
    IllegalActionError,
    PointsAwarded,
    ScoreItem,
)
from carc_env.core.config import ruleset
from carc_env.core.events import Event
from carc_env.core.expansion import Expansion, plugins, register, unregister
from carc_env.core.stages import Stage
from carc_env.core.tiles import CITY, ROAD


@contextmanager
def registered(*classes: type[Expansion]) -> Iterator[None]:
    """Register test-only expansions for the duration of a test."""
    for c in classes:
        register(c)
    try:
        yield
    finally:
        for c in classes:
            unregister(c.KEY)


def game(keys: tuple[str, ...], order: list[str], n: int = 2, **options) -> Game:
    return Game(GameConfig(n, ("base", *keys), options), seed=0, draw_order=order)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


# --------------------------------------------------------------- blocks_completion (any)
class SlowCities(Expansion):
    """A city of fewer than 3 tiles does not complete."""

    KEY = "test_slow_cities"
    REQUIRES = ("base",)

    def blocks_completion(self, game: Game, root: int) -> bool:
        return game.kind[root] == CITY and len(game.tiles[root]) < 3


class NeverBlocks(Expansion):
    KEY = "test_never_blocks"
    REQUIRES = ("base",)

    def blocks_completion(self, game: Game, root: int) -> bool:
        return False


@pytest.mark.parametrize("keys", [("test_slow_cities",), ("test_slow_cities", "test_never_blocks")])
def test_blocks_completion_any_expansion_blocks(keys):
    with registered(SlowCities, NeverBlocks):
        g = game(keys, ["BA-E"])
        ev = play(g, ["tile 0,-1 r2", "follower c1"])  # closes the 2-tile start city: blocked
        assert not of(ev, FeatureCompleted)
        (s,) = of(ev, FeatureScored)  # the last tile: scored at the end as an incomplete city
        assert (s.final, s.items, s.points) == (True, (ScoreItem("tiles", "2 city tiles x 1", 2),), (2, 0))


def test_without_the_block_the_city_completes():
    with registered(NeverBlocks):
        ev = play(game(("test_never_blocks",), ["BA-E"]), ["tile 0,-1 r2", "follower c1"])
        (s,) = of(ev, FeatureScored)
        assert (s.final, s.value) == (False, 4)


# ------------------------------------------------------------- extra_completions (union)
class LongRoadsComplete(Expansion):
    """A road of 3 tiles or more through the placed tile completes at once."""

    KEY = "test_long_roads"
    REQUIRES = ("base",)

    def extra_completions(self, game: Game) -> list[int]:
        _, _, t, _, base = game.placements[-1]
        segs = game.rules.tiles[t].segments
        roots = {game.find(base + i) for i, s in enumerate(segs) if s.kind == ROAD}
        return [r for r in sorted(roots) if len(game.tiles[r]) >= 3]


class LongRoadsTwice(LongRoadsComplete):
    KEY = "test_long_roads_twice"


@pytest.mark.parametrize("keys", [("test_long_roads",), ("test_long_roads", "test_long_roads_twice")])
def test_extra_completions_are_united_and_scored_once(keys):
    with registered(LongRoadsComplete, LongRoadsTwice):
        g = game(keys, ["BA-U", "BA-U", "BA-U"])
        ev = play(g, ["tile 1,0 r0", "follower r1"])  # 2 tiles: open
        assert not of(ev, FeatureCompleted)
        ev = play(g, ["tile -1,0 r0"])  # P1: 3 tiles, completed by the rule (P1 has no free road)
        ev += play(g, ["pass"]) if g.phase == "follower" else []
        (c,) = of(ev, FeatureCompleted)
        (s,) = of(ev, FeatureScored)
        assert (c.kind, c.size) == ("road", 3)
        assert (s.final, s.items, s.points, s.returned) == (
            False, (ScoreItem("tiles", "3 road tiles x 1", 3),), (3, 0), (1, 0)
        )  # fmt: skip


# ------------------------------------------------------------ building_target (single)
@dataclass(frozen=True)
class SmallCloisterOptions:
    target: int = 3
    active: bool = True


class SmallCloisters(Expansion):
    """A building completes with ``target`` neighbours (when ``active``)."""

    KEY = "test_small_cloisters"
    REQUIRES = ("base",)
    Options = SmallCloisterOptions

    def claims(self, hook: str) -> bool:
        return self.options.active if hook == "building_target" else super().claims(hook)

    def building_target(self, game: Game, x: int, y: int) -> int | None:
        return self.options.target


class OtherTarget(SmallCloisters):
    KEY = "test_other_target"


CLOISTER_ORDER = ["BA-B", "BA-U", "BA-U", "BA-U"]


def test_building_target_completes_a_cloister_early():
    with registered(SmallCloisters):
        g = game(("test_small_cloisters",), CLOISTER_ORDER)
        play(g, ["tile 0,1 r0", "follower m", "tile 1,0 r0", "pass"])  # 2 neighbours
        ev = play(g, ["tile -1,0 r0", "pass"])  # the 3rd neighbour
        (s,) = of(ev, FeatureScored)
        assert (s.kind, s.items, s.points) == (
            "cloister",
            (ScoreItem("cloister", "cloister 1 + 3 neighbours", 4),),
            (4, 0),
        )
        assert g.building_complete(g.node_of(0, 1, "m"))


def test_building_target_unclaimed_keeps_eight():
    with registered(SmallCloisters):
        g = game(("test_small_cloisters",), CLOISTER_ORDER, test_small_cloisters={"active": False})
        ev = play(g, ["tile 0,1 r0", "follower m", "tile 1,0 r0", "pass", "tile -1,0 r0", "pass"])
        assert not of(ev, FeatureCompleted)
        assert not g.building_complete(g.node_of(0, 1, "m"))


def test_two_claims_of_a_single_answer_hook_are_refused_naming_both():
    with registered(SmallCloisters, OtherTarget):
        with pytest.raises(
            ConfigError, match="'test_other_target' and 'test_small_cloisters' both answer 'building_target'"
        ):
            ruleset(GameConfig(2, ("base", "test_small_cloisters", "test_other_target")))
        # an expansion that does not claim it under its options does not conflict
        cfg = GameConfig(
            2, ("base", "test_small_cloisters", "test_other_target"), {"test_other_target": {"active": False}}
        )
        assert len(ruleset(cfg).h_building_target) == 1


# -------------------------------------------------------------- feature_size (single)
class DoubleRoads(Expansion):
    KEY = "test_double_roads"
    REQUIRES = ("base",)

    def feature_size(self, game: Game, root: int) -> int | None:
        return 2 * len(game.tiles[root]) if game.kind[root] == ROAD else None


def test_feature_size_claimed_by_a_plug_in_and_by_the_base_option():
    with registered(DoubleRoads):
        g = game(("test_double_roads",), ["BA-U"])
        (s,) = of(play(g, ["tile 1,0 r0", "follower r1"]), FeatureScored)  # the last tile: final scoring
        assert s.items == (ScoreItem("tiles", "4 road tiles x 1", 4),)
        # the base game claims feature_size only when count_tile_once is False
        with pytest.raises(ConfigError, match="'base' and 'test_double_roads' both answer 'feature_size'"):
            ruleset(GameConfig(2, ("base", "test_double_roads"), {"base": {"count_tile_once": False}}))


# --------------------------------------------------------------- next_player (single)
class SameAgain(Expansion):
    KEY = "test_same_again"
    REQUIRES = ("base",)

    def next_player(self, game: Game, default: int) -> int | None:
        return game.turn_player


def test_next_player_single_answer():
    with registered(SameAgain):
        g = game(("test_same_again",), ["BA-U", "BA-U", "BA-U"])
        play(g, ["tile 1,0 r0", "pass"])
        assert g.turn_player == 0 and g.player == 0
        with pytest.raises(ConfigError, match="'river2' and 'test_same_again' both answer 'next_player'"):
            ruleset(GameConfig(2, ("base", "river2", "test_same_again")))
        # the River claims it only with the lake's extra turn
        ruleset(GameConfig(2, ("base", "river2", "test_same_again"), {"river2": {"lake_extra_turn": False}}))


# ------------------------------------------------------------------ check_config (all)
class NoRiver(Expansion):
    KEY = "test_no_river"
    REQUIRES = ("base",)

    def check_config(self, keys: tuple[str, ...]) -> None:
        if "river2" in keys:
            raise ConfigError("test_no_river cannot be played with the river; remove one of them")


def test_check_config_refuses_a_combination():
    with registered(NoRiver):
        ruleset(GameConfig(2, ("base", "test_no_river")))
        with pytest.raises(ConfigError, match="cannot be played with the river"):
            ruleset(GameConfig(2, ("base", "test_no_river", "river2")))


# ------------------------------------------------------ after_placement + link_features
class Twins(Expansion):
    """A city tile placed at (1,0) links its city with the start tile's (like two royal gates)."""

    KEY = "test_twins"
    REQUIRES = ("base",)

    def after_placement(self, game: Game, x: int, y: int) -> None:
        if (x, y) == (1, 0):
            game.link_features(game.node_of(0, 0, "c1"), game.node_of(1, 0, "c1"))


def test_linked_cities_are_one_feature():
    with registered(Twins):
        g = game(("test_twins",), ["BA-D", "BA-E", "BA-E"])
        play(g, ["tile 1,0 r0", "follower c1"])  # P0: a knight on the linked city
        start_city = g.find(g.node_of(0, 0, "c1"))
        assert start_city == g.find(g.node_of(1, 0, "c1")) and g.open[start_city] == 2
        ev = play(g, ["tile 0,-1 r2"])  # P1 closes the start part, which the other part keeps open
        assert not of(ev, FeatureCompleted)
        city = g.rules.tiles[g.current_tile if g.current_tile >= 0 else g.placements[-1][2]].segment_index("c1")
        assert city not in g.legal_follower_spots()  # the linked city is occupied: no knight for P1
        play(g, ["pass"])
        ev = play(g, ["tile 1,-1 r2", "pass"])  # P0 closes the other part: the linked city completes
        (c,) = of(ev, FeatureCompleted)
        (s,) = of(ev, FeatureScored)
        assert (c.kind, c.size) == ("city", 4)
        assert (s.items, s.points, s.tiles) == (
            (ScoreItem("tiles", "4 city tiles x 2", 8),), (8, 0), ((0, -1), (0, 0), (1, -1), (1, 0))
        )  # fmt: skip


# ------------------------------------------------- stages + take_follower / add_follower
class Squire(Stage):
    """after_follower, first turn only: a follower from the supply onto the placed tile's road."""

    def enter(self, game: Game) -> bool:
        if game.turn == 0:
            _, _, t, _, base = game.placements[-1]
            road = next(i for i, s in enumerate(game.rules.tiles[t].segments) if s.kind == ROAD)
            game.take_follower(game.turn_player)
            game.add_follower(base + road, game.turn_player)
        return False


class Squires(Expansion):
    KEY = "test_squires"
    REQUIRES = ("base",)

    def stages(self) -> list[tuple[str, Stage]]:
        return [("after_follower", Squire())]


def test_add_follower_takes_it_from_the_supply_and_scoring_returns_it():
    with registered(Squires):
        g = game(("test_squires",), ["BA-U", "BA-U"])
        play(g, ["tile 1,0 r0", "pass"])
        assert g.supply == [6, 7] and g.follower_positions() == [(0, 1, 0, 0)] and g.followers_conserved()
        with pytest.raises(ValueError, match="already holds a follower"):
            g.add_follower(g.node_of(1, 0, "r1"), 1)
        ev = play(g, ["tile -1,0 r0", "pass"])  # the last tile: final scoring returns it
        (s,) = of(ev, FeatureScored)
        assert (s.items, s.points, s.returned) == ((ScoreItem("tiles", "3 road tiles x 1", 3),), (3, 0), (1, 0))
        assert g.supply == [7, 7]


def test_supply_methods_refuse_what_cannot_be():
    g = Game(GameConfig(2), seed=0)
    with pytest.raises(ValueError, match="already has all 7 followers"):
        g.return_follower(0)
    for _ in range(7):
        g.take_follower(1)
    with pytest.raises(IllegalActionError, match="no follower in supply"):
        g.take_follower(1)
    g.return_follower(1)
    assert g.supply == [7, 1]


# ------------------------------------------------------------------ stage order
LOG: list[str] = []


class Mark(Stage):
    def __init__(self, key: str, before: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> None:
        self.key, self.before, self.after = key, before, after

    def enter(self, game: Game) -> bool:
        LOG.append(self.key)
        return False


def _stage_plugin(key: str, stages: list[tuple[str, Stage]]) -> type[Expansion]:
    return type(key, (Expansion,), {"KEY": key, "REQUIRES": ("base",), "stages": lambda self: list(stages)})


def _order(keys: tuple[str, ...]) -> list[str]:
    return [f"{s.owner}.{s.stage_key()}" for s in ruleset(GameConfig(2, ("base", *keys))).stages if s.owner]


def test_stage_order_is_declared_not_registration_order():
    a = _stage_plugin("test_a", [("end_turn", Mark("one")), ("end_turn", Mark("two", before=("one",)))])
    b = _stage_plugin("test_b", [("end_turn", Mark("x", before=("test_a.two",))), ("after_tile", Mark("y"))])
    orders = []
    for first, second in ((a, b), (b, a)):
        with registered(first, second):
            orders.append(_order(("test_b", "test_a")))
    assert orders[0] == orders[1] == ["test_b.y", "test_b.x", "test_a.two", "test_a.one"]
    with registered(a, b):  # the stages run in that order
        LOG.clear()
        play(game(("test_a", "test_b"), ["BA-U", "BA-U"]), ["tile 1,0 r0", "pass"])
        assert LOG == ["y", "x", "two", "one"]


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        (
            [("end_turn", Mark("one", after=("nope",)))],
            "'test_a.one' is ordered against 'nope', which expansion 'test_a' does not declare",
        ),
        ([("end_turn", Mark("one", after=("no_such_key.x",)))], "no expansion 'no_such_key' is registered"),
        ([("end_turn", Mark("one")), ("after_tile", Mark("two", after=("one",)))], "only stages of one anchor"),
        ([("end_turn", Mark("one", after=("two",))), ("end_turn", Mark("two", after=("one",)))], "form a cycle"),
        ([("end_turn", Mark("one")), ("end_turn", Mark("one"))], "two stages named 'one'"),
        ([("at_lunch", Mark("one"))], "unknown anchor 'at_lunch'"),
    ],
)
def test_bad_stage_declarations_are_config_errors(stages, message):
    with registered(_stage_plugin("test_a", stages)):
        with pytest.raises(ConfigError, match=message):
            ruleset(GameConfig(2, ("base", "test_a")))


def test_ordering_against_a_disabled_expansion_is_ignored():
    a = _stage_plugin("test_a", [("end_turn", Mark("one", after=("test_b.x",)))])
    b = _stage_plugin("test_b", [("end_turn", Mark("x"))])
    with registered(a, b):
        assert _order(("test_a",)) == ["test_a.one"]
        assert _order(("test_a", "test_b")) == ["test_b.x", "test_a.one"]


# -------------------------------------------------------------- expansion order
def test_expansion_order_requires_first_then_key_whatever_the_registration_order():
    z = type("Z", (Expansion,), {"KEY": "test_z", "REQUIRES": ("base",)})
    y = type("Y", (Expansion,), {"KEY": "test_y", "REQUIRES": ("base", "test_z")})
    for classes in ((z, y), (y, z)):
        with registered(*classes):
            rules = ruleset(GameConfig(2, ("test_y", "base", "test_z")))
            assert [e.KEY for e in rules.expansions] == ["base", "test_z", "test_y"]


# ---------------------------------------------------------- placement_veto (all)
class NoEast(Expansion):
    KEY = "test_no_east"
    REQUIRES = ("base",)

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> None:
        xs, _ = game.frontier_cells()
        masks[xs > 0] = 0


class NoClosingTheStartCity(Expansion):
    """No placement may close the start tile's city (what the Sagrada Familia asks of its own)."""

    KEY = "test_no_closing"
    REQUIRES = ("base",)

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> None:
        xs, ys = game.frontier_cells()
        start_city = game.node_of(0, 0, "c1")
        for i in masks.nonzero()[0]:
            for r in range(4):
                if masks[i] >> r & 1 and game.closes_feature(tile, int(xs[i]), int(ys[i]), r, start_city):
                    masks[i] = int(masks[i]) & ~(1 << r)


def _legal(keys: tuple[str, ...], order: list[str]) -> set[tuple[int, int, int]]:
    return {tuple(map(int, p)) for p in game(keys, order).legal_tile_placements()}


def test_placement_vetoes_all_apply_and_closes_feature_tells_a_closing_placement():
    with registered(NoEast, NoClosingTheStartCity):
        plain = _legal((), ["BA-E"])
        assert (0, -1, 2) in plain
        no_close = _legal(("test_no_closing",), ["BA-E"])
        assert no_close == plain - {(0, -1, 2)}  # the only placement that closes the start city
        no_east = _legal(("test_no_east",), ["BA-E"])
        assert no_east == {p for p in plain if p[0] <= 0}
        assert _legal(("test_no_closing", "test_no_east"), ["BA-E"]) == no_close & no_east
        g = game((), ["BA-E"])
        t = g.current_tile
        assert g.closes_feature(t, 0, -1, 2, g.node_of(0, 0, "c1"))
        assert not g.closes_feature(t, 0, -1, 0, g.node_of(0, 0, "c1"))
        scan = g.scan_placement(t, 0, -1, 2)
        assert [(j.kind, j.open_after, j.tiles_after) for j in scan.joined] == [(CITY, 0, 2)] and scan.completes


def test_frontier_cells_are_read_only():
    xs, ys = Game(GameConfig(2), seed=0).frontier_cells()
    with pytest.raises(ValueError):
        xs[0] = 99


# ------------------------------------------------------ sums: field_cities, followers_held
class OneMoreCity(Expansion):
    KEY = "test_one_more_city"
    REQUIRES = ("base",)

    def field_cities(self, game: Game, root: int) -> int:
        return 1

    def followers_held(self, game: Game) -> list[int]:
        return [0] * game.num_players


class TwoMoreCities(OneMoreCity):
    KEY = "test_two_more_cities"

    def field_cities(self, game: Game, root: int) -> int:
        return 2


def test_field_cities_add_up():
    with registered(OneMoreCity, TwoMoreCities):
        g = game(("test_one_more_city", "test_two_more_cities"), ["BA-U"])
        (s,) = of(play(g, ["tile 1,0 r0", "follower f1"]), FeatureScored)  # a farmer, scored at the end
        assert s.kind == "field" and s.items == (ScoreItem("cities", "3 completed cities x 3", 9),)


# ---------------------------------------------------- action_parsers (union), events
class Shout(Event):
    pass


@dataclass
class LoudState:
    shouts: list[str] = field(default_factory=list)


class Loud(Expansion):
    KEY = "test_loud"
    REQUIRES = ("base",)
    action_parsers = {"shout": lambda text: (_ for _ in ()).throw(IllegalActionError("no shouting here"))}

    def new_state(self) -> LoudState:
        return LoudState()

    def after_placement(self, game: Game, x: int, y: int) -> None:
        game.ext[self.KEY].shouts.append(f"{x},{y}")
        game.emit(Shout())
        game.award(game.turn_player, 1, [ScoreItem("shout", "a shout", 1)])


class Louder(Loud):
    KEY = "test_louder"


def test_emit_award_state_and_parsers():
    with registered(Loud, Louder):
        g = game(("test_loud",), ["BA-U", "BA-U"])
        ev = g.apply("tile 1,0 r0")
        assert len(of(ev, Shout)) == 1 and [a.points for a in of(ev, PointsAwarded)] == [1]
        assert g.ext["test_loud"].shouts == ["1,0"] and g.scores == [1, 0]
        c = g.clone()
        c.ext["test_loud"].shouts.append("x")
        assert g.ext["test_loud"].shouts == ["1,0"]  # typed state is copied with the game
        with pytest.raises(IllegalActionError, match="no shouting here"):
            g.parse_action("shout now")
        with pytest.raises(IllegalActionError, match="cannot parse"):
            Game(GameConfig(2), seed=0).parse_action("shout now")  # not enabled: not parsed
        with pytest.raises(ConfigError, match="'test_loud' and 'test_louder' both parse actions starting 'shout'"):
            ruleset(GameConfig(2, ("base", "test_loud", "test_louder")))


# ------------------------------------------------------------------ RuleSet.cache
def test_ruleset_cache_computes_once():
    rules = ruleset(GameConfig(2))
    calls = []
    first = rules.cache("test.table", lambda: calls.append(1) or [1, 2])
    assert rules.cache("test.table", lambda: calls.append(1) or [3]) is first and calls == [1]


# ---------------------------------------------------------------- registry
def test_registry_refuses_a_second_class_under_a_key_and_unknown_keys():
    other = type("Other", (Expansion,), {"KEY": "count"})
    with pytest.raises(ValueError, match="'count' is already registered"):
        register(other)
    with pytest.raises(KeyError, match="no expansion 'test_nobody'"):
        unregister("test_nobody")
    with pytest.raises(ValueError, match="has no KEY"):
        register(type("NoKey", (Expansion,), {}))
    with pytest.raises(ConfigError, match="unknown expansion 'test_nobody'"):
        ruleset(GameConfig(2, ("base", "test_nobody")))


def test_a_plug_in_is_found_through_its_entry_point(tmp_path, monkeypatch):
    dist = tmp_path / "toy_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[carc_env.expansions]\ntest_ep = _toy_plugins.ep_plugin:EntryPointPlugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "test_ep" not in plugins()
    try:
        rules = ruleset(GameConfig(2, ("base", "test_ep")))
        assert [e.KEY for e in rules.expansions] == ["base", "test_ep"]
        assert plugins()["test_ep"].package == "_toy_plugins.ep_plugin"
    finally:
        if "test_ep" in plugins():
            unregister("test_ep")
        sys.modules.pop("_toy_plugins.ep_plugin", None)


def test_a_single_module_plug_in_has_no_parts_and_still_plays_in_the_encoder():
    from carc_env.encoding import ActionCodec, ObservationEncoder
    from carc_env.expansions import part

    with registered(Squires):
        assert plugins()["test_squires"].package == __name__
        assert part("test_squires", "actions") is None and part("test_squires", "draw") is None
        g = game(("test_squires",), ["BA-U", "BA-U"])
        codec = ActionCodec(g.rules)
        obs = ObservationEncoder(g.rules, 2, codec).encode(g, 0)
        assert obs["board"].shape[0] == ObservationEncoder(Game(GameConfig(2)).rules, 2, codec).n_channels
    with pytest.raises(ValueError, match="unknown plug-in part 'rules'"):
        part("count", "rules")


def test_each_expansion_phase_knows_its_plug_in():
    rules = ruleset(GameConfig(2, ("base", "count", "darmstadt")))
    assert rules.phase_owner == dict.fromkeys(("count_leave", "count_deploy", "count_move", "count_final"), "count")
    assert rules.phases[:2] == ["tile", "follower"] and set(rules.phases[2:]) == set(rules.phase_owner)
