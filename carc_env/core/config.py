"""Game configuration and the immutable rule set built from it.

``GameConfig`` is what a user writes (players, expansion keys, rule options);
``RuleSet`` is what the engine runs on: the enabled expansions with their
options, in expansion order, the tile types in a fixed order, the placement
compatibility table, the hooks (composed as :mod:`carc_env.core.expansion`
documents) and the turn's stages.  A ``RuleSet`` is built once per
configuration and shared by every game (and clone) of that configuration;
:meth:`RuleSet.cache` keeps tables derived from it.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .expansion import (
    SINGLE_ANSWER_HOOKS,
    ConfigError,
    Expansion,
    generation,
    load_builtins,
    load_entry_points,
    overrides,
    registry,
)
from .layout import ANY_EDGE, BoardLayout
from .tiles import BUILDING, CITY, FIELD, RIVER, ROAD, TileDataError, TileType, load_tile_file, tile_file_path

MIN_PLAYERS, MAX_PLAYERS = 2, 5
PATTERN_BITS = 3
N_PATTERNS = 1 << (4 * PATTERN_BITS)
DEFAULT_EXPANSIONS = ("base",)
"""The expansions of the default configuration (the base game)."""


def with_default_expansions(keys: tuple[str, ...]) -> tuple[str, ...]:
    """``keys`` with the default configuration's expansions added in front where missing."""
    return (*(k for k in DEFAULT_EXPANSIONS if k not in keys), *keys)


@dataclass(frozen=True)
class GameConfig:
    """What game to play.

    ``expansions``: keys of enabled expansions; every other expansion requires ``"base"``.
    ``options``: per-expansion rule options, e.g. ``{"shrines": {"sixth_tile": True}}``.
    ``followers``: followers per player (7 in the base game).
    """

    num_players: int = 2
    expansions: tuple[str, ...] = DEFAULT_EXPANSIONS
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    followers: int = 7

    def __post_init__(self) -> None:
        exps = self.expansions
        if isinstance(exps, str):
            raise ConfigError(f"expansions must be a tuple of keys, got the string {exps!r}; write ({exps!r},)")
        if not isinstance(exps, (tuple, list)) or not all(isinstance(k, str) for k in exps):
            raise ConfigError(f"expansions must be a tuple of expansion keys (str), e.g. ('base',), got {exps!r}")
        object.__setattr__(self, "expansions", tuple(exps))
        opts = self.options
        if not isinstance(opts, Mapping) or not all(isinstance(v, Mapping) for v in opts.values()):
            raise ConfigError(
                f"options must map expansion keys to option dicts, e.g. {{'shrines': {{'sixth_tile': True}}}}, got {opts!r}"
            )
        object.__setattr__(self, "options", {k: dict(v) for k, v in opts.items()})

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_players": self.num_players,
            "expansions": list(self.expansions),
            "options": {k: dict(v) for k, v in self.options.items()},
            "followers": self.followers,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameConfig:
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"a game config must be a mapping of {[f.name for f in dataclasses.fields(cls)]}, got {data!r}"
            )
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown game config key(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(data))

    def key(self) -> str:
        import json

        return json.dumps(self.to_dict(), sort_keys=True)


def _build_options(cls: type[Expansion], given: Mapping[str, Any]) -> Any:
    opt_cls = cls.Options
    names = {f.name: f for f in dataclasses.fields(opt_cls)}
    unknown = set(given) - set(names)
    if unknown:
        raise ConfigError(
            f"unknown option(s) {sorted(unknown)} for expansion {cls.KEY!r}; known: {sorted(names) or 'none'}"
        )
    default = opt_cls()
    for k, v in given.items():
        want = type(getattr(default, k))
        if want is bool and not isinstance(v, bool) or want is not bool and not isinstance(v, want):
            raise ConfigError(f"option {cls.KEY}.{k} must be of type {want.__name__}, got {v!r}")
    opts = opt_cls(**given)
    check = getattr(opts, "validate", None)
    if check is not None:
        check()
    return opts


class TileInfo:
    """Per tile type, the lists the hot path needs (built once per RuleSet)."""

    __slots__ = ("kinds", "open0", "pen0", "scorable", "spots", "fields", "buildings", "n")

    def __init__(self, tile: TileType) -> None:
        segs = tile.segments
        self.n = len(segs)
        self.kinds = [s.kind for s in segs]
        self.open0 = [len(s.edges) if s.kind in (CITY, ROAD) else 0 for s in segs]
        self.pen0 = [s.pennants for s in segs]
        self.scorable = [i for i, s in enumerate(segs) if s.kind in (CITY, ROAD)]
        self.spots = [i for i, s in enumerate(segs) if s.kind != RIVER]
        self.fields = [(i, s.cities) for i, s in enumerate(segs) if s.kind == FIELD and s.cities]
        self.buildings = [i for i, s in enumerate(segs) if s.kind == BUILDING]


def expansion_order(keys: tuple[str, ...], reg: Mapping[str, type[Expansion]]) -> list[str]:
    """Enabled keys with every expansion after those it REQUIRES, otherwise by key.

    The order fixes the order of tile types (so the bag a seed deals) and of every hook, and never
    depends on the order of the keys in the config or on the order plug-ins were registered.
    """
    deps = {k: [r for r in reg[k].REQUIRES if r in keys] for k in keys}
    waiting = {k: len(v) for k, v in deps.items()}
    users: dict[str, list[str]] = {k: [] for k in keys}
    for k, reqs in deps.items():
        for r in reqs:
            users[r].append(k)
    ready = [k for k in keys if not waiting[k]]
    heapq.heapify(ready)
    out = []
    while ready:
        k = heapq.heappop(ready)
        out.append(k)
        for u in users[k]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, u)
    if len(out) != len(keys):
        cyc = sorted(k for k in keys if k not in out)
        raise ConfigError(f"expansions {cyc} require each other in a cycle (REQUIRES)")
    return out


def _check_counts(config: GameConfig) -> None:
    n = config.num_players
    if not isinstance(n, int) or isinstance(n, bool) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ConfigError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, got {n!r}")
    if not isinstance(config.followers, int) or isinstance(config.followers, bool) or config.followers < 1:
        raise ConfigError(f"followers must be a positive integer, got {config.followers!r}")


def _resolve(keys: tuple[str, ...], options: Mapping[str, Any]) -> dict[str, type[Expansion]]:
    """The registry, with every key found (built-ins, then entry points) and REQUIRES / CONFLICTS checked."""
    if len(set(keys)) != len(keys):
        raise ConfigError(f"expansions lists a key twice: {keys}")
    reg = registry()
    if any(k not in reg for k in keys):
        load_builtins()
        reg = registry()
    if any(k not in reg for k in keys):
        load_entry_points([k for k in keys if k not in reg])
        reg = registry()
    for k in keys:
        if k not in reg:
            raise ConfigError(f"unknown expansion {k!r}; known: {sorted(reg)}")
    if not keys:
        raise ConfigError(f"expansions is empty; the base game's key is {DEFAULT_EXPANSIONS[0]!r}")
    for k in options:
        if k not in keys:
            raise ConfigError(f"options given for {k!r}, which is not enabled; enabled: {keys}")
    for k in keys:
        cls = reg[k]
        for req in cls.REQUIRES:
            if req not in keys:
                raise ConfigError(f"expansion {k!r} needs {req!r}; add it to expansions")
        for bad in cls.CONFLICTS:
            if bad in keys:
                raise ConfigError(f"expansion {k!r} cannot be combined with {bad!r}")
    return reg


def _check_start_layouts(expansions: list[Expansion]) -> None:
    starters = [e for e in expansions if e.REPLACES_START]
    for i, a in enumerate(starters):
        for b in starters[i + 1 :]:
            if b.KEY not in a.START_COMBINES and a.KEY not in b.START_COMBINES:
                raise ConfigError(
                    f"expansions {a.KEY!r} and {b.KEY!r} each lay their own start layout and have no"
                    " combined setup; enable only one of them"
                )


def _action_parsers(expansions: list[Expansion]) -> dict[str, Callable[[str], Any]]:
    parsers: dict[str, Callable[[str], Any]] = {}
    owner: dict[str, str] = {}
    for exp in expansions:
        for word, parse in exp.action_parsers.items():
            if word in owner:
                raise ConfigError(f"expansions {owner[word]!r} and {exp.KEY!r} both parse actions starting {word!r}")
            owner[word] = exp.KEY
            parsers[word] = parse
    return parsers


def _counted(tiles: list[TileType], hooks: list) -> list[TileType]:
    """The tiles with the counts the ``tile_counts`` hooks give (a map's recommended mix)."""
    if not hooks:
        return tiles
    counts = {t.id: t.count for t in tiles}
    for hook in hooks:
        counts = hook(tuple(tiles), dict(counts))
    bad = sorted(k for k, v in counts.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0)
    if set(counts) != {t.id for t in tiles} or bad:
        raise ConfigError(f"tile_counts must give a count >= 0 to every tile id and nothing else (bad: {bad})")
    return [t if counts[t.id] == t.count else dataclasses.replace(t, count=counts[t.id]) for t in tiles]


def _followers(configured: int, hooks: list) -> int:
    followers = configured
    for hook in hooks:
        v = hook(configured)
        if v is not None:
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"followers_per_player gave {v!r}; it must be a positive integer")
            followers = v
    return followers


class RuleSet:
    """Everything derived from a GameConfig that never changes during a game."""

    def __init__(self, config: GameConfig) -> None:
        from .stages import build_stages

        self.config = config
        _check_counts(config)
        reg = _resolve(config.expansions, config.options)
        keys = config.expansions
        self.expansions: list[Expansion] = [
            reg[k](_build_options(reg[k], config.options.get(k, {}))) for k in expansion_order(keys, reg)
        ]
        for exp in self.expansions:
            exp.check_config(keys)
        _check_start_layouts(self.expansions)
        self.by_key = {e.KEY: e for e in self.expansions}
        self.action_parsers: dict[str, Callable[[str], Any]] = _action_parsers(self.expansions)
        # Tiles, in a fixed order: expansion order, then file order.
        tiles: list[TileType] = []
        self.start_tiles: dict[str, str] = {}
        origin: dict[str, str] = {}  # tile id -> where it was defined, for the duplicate-id message
        for exp in self.expansions:
            for fname in exp.tile_files:
                tf = _load(str(fname))
                _claim_ids(origin, tf.tiles, f"tile file {tile_file_path(str(fname))} (expansion {exp.KEY!r})")
                tiles.extend(tf.tiles)
                if tf.start_tile:
                    self.start_tiles[exp.KEY] = tf.start_tile
        hooked = self._hooked
        single = {name: self._claimed(name) for name in SINGLE_ANSWER_HOOKS}
        # Tile counts expansions change (a map's recommended mix), then the printed pieces of a board.
        tiles = _counted(tiles, hooked("tile_counts"))
        self.layout: BoardLayout | None = None
        """The printed board (``core.layout``) the game is played on, or None: an unbounded table."""
        for hook in single["board_layout"]:
            self.layout = hook()
        if self.layout is not None:
            _claim_ids(origin, self.layout.tile_types, "the printed pieces of the board layout")
            tiles.extend(self.layout.tile_types)
        self.followers: int = _followers(config.followers, single["followers_per_player"])
        """Followers per player: ``GameConfig.followers`` unless an expansion sets it (a map's 9)."""
        self.tiles: tuple[TileType, ...] = tuple(tiles)
        self.tile_index = {t.id: i for i, t in enumerate(self.tiles)}
        if len(self.tile_index) != len(self.tiles):
            raise TileDataError("two tile files define the same tile id")
        self.tile_infos: tuple[TileInfo, ...] = tuple(TileInfo(t) for t in self.tiles)
        self.max_segments = max(len(t.segments) for t in self.tiles)
        self.compat = _compat_table(self.tiles)
        self.has_building = np.array([t.has_building() for t in self.tiles], dtype=bool)
        self.building_kinds = sorted({s.building for t in self.tiles for s in t.segments if s.kind == BUILDING})
        self._cache: dict[str, Any] = {}

        self.h_after_draw = hooked("after_draw")
        self.h_veto = hooked("placement_veto")
        self.h_placement_links = hooked("placement_links")
        self.h_after_placement = hooked("after_placement")
        self.h_follower_spots = hooked("follower_spots")
        self.h_blocks = hooked("blocks_completion")
        self.h_extra_completions = hooked("extra_completions")
        self.h_score_items = hooked("score_items")
        self.h_score_override = hooked("score_override")
        self.h_defers_scoring = hooked("defers_scoring")
        self.h_on_completed = hooked("on_completed")
        self.h_on_scored = hooked("on_scored")
        self.h_building_target = single["building_target"]
        self.h_field_cities = hooked("field_cities")
        self.h_feature_size = single["feature_size"]
        self.h_extra_completed = hooked("extra_completed")
        self.h_uncounted = hooked("uncounted_completion")
        self.h_next_player = single["next_player"]
        self.h_followers_held = hooked("followers_held")
        self.h_order_unseen = hooked("order_unseen")
        self.h_final_scoring = hooked("final_scoring")
        self.h_setup_from_bag = hooked("setup_from_bag")
        self.h_after_setup_placement = hooked("after_setup_placement")
        self.stages, self.final_stages = build_stages(self.expansions, reg)
        self.phases = [s.name for s in self.stages + self.final_stages if s.name]
        self.phase_owner: dict[str, str] = {
            s.name: s.owner for s in self.stages + self.final_stages if s.name and s.owner
        }
        """Decision phase -> key of the expansion whose stage it is (the core's ``tile`` and
        ``follower`` phases have none)."""

    # Hooks: only those an expansion overrides are called; single-answer hooks have one claimant.
    def _hooked(self, name: str) -> list:
        return [getattr(e, name) for e in self.expansions if overrides(e, name)]

    def _claimed(self, name: str) -> list:
        who = [e for e in self.expansions if overrides(e, name) and e.claims(name)]
        if len(who) > 1:
            raise ConfigError(
                f"expansions {who[0].KEY!r} and {who[1].KEY!r} both answer {name!r}, which takes one answer; "
                "enable only one of them or change the option that makes one of them answer it"
            )
        return [getattr(e, name) for e in who]

    def cache(self, key: str, factory: Callable[[], Any]) -> Any:
        """A value derived from this rule set, computed by ``factory()`` on first use and kept.

        For tables an expansion, codec or renderer derives from the tiles and options (name keys
        after their owner, e.g. ``"river2.tiles"``).  Values must not change afterwards.
        """
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = factory()
            return value

    def __getstate__(self) -> dict[str, Any]:
        # The cache holds derived values only, some of them not picklable (the greedy look-ahead keeps
        # the plug-ins' heuristics modules there), so a pickled game (a training checkpoint's running
        # games) leaves it out; the copy rebuilds it on first use.
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state


def _claim_ids(origin: dict[str, str], tiles: tuple[TileType, ...], where: str) -> None:
    """Record where each tile id is defined; a second definition is a TileDataError naming both."""
    for t in tiles:
        first = origin.setdefault(t.id, where)
        if first is not where:
            raise TileDataError(
                f"tile id {t.id!r} is defined twice: in {first} and in {where}; tile ids must be unique "
                "across every enabled expansion, so rename the tile in one of them"
            )


@functools.cache
def _load(fname: str):
    return load_tile_file(tile_file_path(fname))


def _compat_table(tiles: tuple[TileType, ...]) -> np.ndarray:
    """compat[t, pattern] = bitmask of rotations of tile t that fit a frontier pattern.

    A pattern packs, per side, the edge code the neighbour on that side
    requires (0 = no neighbour; ``ANY_EDGE`` = a neighbour that allows every
    edge, a neutral printed edge of a board), 3 bits per side, N in the lowest bits.
    """
    p = np.arange(N_PATTERNS)
    req = np.stack([(p >> (PATTERN_BITS * s)) & 7 for s in range(4)], axis=1)  # (P, 4)
    table = np.zeros((len(tiles), N_PATTERNS), dtype=np.uint8)
    for t, tile in enumerate(tiles):
        for r in range(4):
            codes = np.array(tile.edge_codes[r])
            ok = ((req == 0) | (req == ANY_EDGE) | (req == codes[None, :])).all(axis=1)
            table[t] |= ok.astype(np.uint8) << r
    table[:, 0] = 0  # a cell with no neighbour is never a legal placement
    return table


@functools.lru_cache(maxsize=64)
def _ruleset_cached(key: str, registry_generation: int) -> RuleSet:
    import json

    return RuleSet(GameConfig.from_dict(json.loads(key)))


def ruleset(config: GameConfig) -> RuleSet:
    """The shared RuleSet of a configuration (built once, then cached)."""
    try:
        key = config.key()
    except TypeError as exc:
        raise ConfigError(f"game config is not JSON-serialisable: {exc}") from None
    return _ruleset_cached(key, generation())
