"""Game configuration and the immutable rule set built from it.

``GameConfig`` is what a user writes (players, expansion keys, rule options);
``RuleSet`` is what the engine runs on: the enabled expansions with their
options, the tile types in a fixed order, the placement compatibility table
and the turn's stages.  A ``RuleSet`` is built once per configuration and
shared by every game (and clone) of that configuration.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .expansion import ConfigError, Expansion, overrides, registry
from .layout import ANY_EDGE, BoardLayout
from .tiles import BUILDING, TileDataError, TileType, load_tile_file, tile_file_path

MIN_PLAYERS, MAX_PLAYERS = 2, 5
PATTERN_BITS = 3
N_PATTERNS = 1 << (4 * PATTERN_BITS)


@dataclass(frozen=True)
class GameConfig:
    """What game to play.

    ``expansions``: keys of enabled expansions; every other expansion requires ``"base"``.
    ``options``: per-expansion rule options, e.g. ``{"shrines": {"sixth_tile": True}}``.
    ``followers``: followers per player (7 in the base game).
    """

    num_players: int = 2
    expansions: tuple[str, ...] = ("base",)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    followers: int = 7

    def __post_init__(self) -> None:
        if isinstance(self.expansions, str):
            raise ConfigError(f"expansions must be a tuple of keys, got the string {self.expansions!r}; write ({self.expansions!r},)")
        object.__setattr__(self, "expansions", tuple(self.expansions))
        object.__setattr__(self, "options", {k: dict(v) for k, v in dict(self.options).items()})

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_players": self.num_players,
            "expansions": list(self.expansions),
            "options": {k: dict(v) for k, v in self.options.items()},
            "followers": self.followers,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown game config key(s) {sorted(unknown)}; known: {sorted(known)}")
        d = dict(data)
        if "expansions" in d:
            d["expansions"] = tuple(d["expansions"])
        return cls(**d)

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


class RuleSet:
    """Everything derived from a GameConfig that never changes during a game."""

    def __init__(self, config: GameConfig) -> None:
        from .stages import build_stages

        self.config = config
        n = config.num_players
        if not isinstance(n, int) or isinstance(n, bool) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ConfigError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, got {n!r}")
        if not isinstance(config.followers, int) or config.followers < 1:
            raise ConfigError(f"followers must be a positive integer, got {config.followers!r}")
        reg = registry()
        keys = config.expansions
        if len(set(keys)) != len(keys):
            raise ConfigError(f"expansions lists a key twice: {keys}")
        for k in keys:
            if k not in reg:
                raise ConfigError(f"unknown expansion {k!r}; known: {sorted(reg)}")
        if not keys:
            raise ConfigError("expansions is empty; the base game's key is 'base'")
        for k in config.options:
            if k not in keys:
                raise ConfigError(f"options given for {k!r}, which is not enabled; enabled: {keys}")
        # Registry order (the order expansions are imported, the base game
        # first), so that a game does not depend on the order of the keys.
        order = [k for k in reg if k in keys]
        self.expansions: list[Expansion] = []
        for k in order:
            cls = reg[k]
            for req in cls.REQUIRES:
                if req not in keys:
                    raise ConfigError(f"expansion {k!r} needs {req!r}; add it to expansions")
            for bad in cls.CONFLICTS:
                if bad in keys:
                    raise ConfigError(f"expansion {k!r} cannot be combined with {bad!r}")
            self.expansions.append(cls(_build_options(cls, config.options.get(k, {}))))
        for exp in self.expansions:
            exp.check_config(keys)
        starters = [e for e in self.expansions if e.REPLACES_START]
        for i, a in enumerate(starters):
            for b in starters[i + 1 :]:
                if b.KEY not in a.START_COMBINES and a.KEY not in b.START_COMBINES:
                    raise ConfigError(
                        f"expansions {a.KEY!r} and {b.KEY!r} each lay their own start layout and have no"
                        " combined setup; enable only one of them"
                    )
        self.by_key = {e.KEY: e for e in self.expansions}

        # Tiles, in a fixed order: expansion order, then file order.
        tiles: list[TileType] = []
        self.start_tiles: dict[str, str] = {}
        for exp in self.expansions:
            for fname in exp.tile_files:
                tf = _load(fname)
                tiles.extend(tf.tiles)
                if tf.start_tile:
                    self.start_tiles[exp.KEY] = tf.start_tile
        # Tile counts an expansion changes (a map's recommended mix), then a board's printed pieces.
        for exp in self.expansions:
            if overrides(exp, "tile_counts"):
                counts = exp.tile_counts(tuple(tiles))
                if counts:
                    ids = {t.id for t in tiles}
                    bad = sorted(set(counts) - ids)
                    if bad:
                        raise ConfigError(f"expansion {exp.KEY!r} sets counts of unknown tile ids {bad}")
                    tiles = [dataclasses.replace(t, count=counts[t.id]) if t.id in counts else t for t in tiles]
        self.layout: BoardLayout | None = None
        """The printed board (``core.layout``) an expansion provides, or None: unbounded."""
        givers = [(e, e.board_layout()) for e in self.expansions if overrides(e, "board_layout")]
        givers = [(e, lay) for e, lay in givers if lay is not None]
        if len(givers) > 1:
            raise ConfigError(
                f"expansions {givers[0][0].KEY!r} and {givers[1][0].KEY!r} each provide a printed board; enable one"
            )
        if givers:
            self.layout = givers[0][1]
            tiles.extend(self.layout.tile_types)
        self.followers = config.followers
        """Followers per player: ``GameConfig.followers`` unless an expansion says otherwise (a map's 9)."""
        setters = [e for e in self.expansions if overrides(e, "followers_per_player")]
        answers = [(e, e.followers_per_player(config.followers)) for e in setters]
        answers = [(e, v) for e, v in answers if v is not None]
        if len(answers) > 1:
            raise ConfigError(
                f"expansions {answers[0][0].KEY!r} and {answers[1][0].KEY!r} both set the followers per player"
            )
        if answers:
            v = answers[0][1]
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"expansion {answers[0][0].KEY!r} sets {v!r} followers per player")
            self.followers = v
        self.tiles: tuple[TileType, ...] = tuple(tiles)
        self.tile_index = {t.id: i for i, t in enumerate(self.tiles)}
        if len(self.tile_index) != len(self.tiles):
            raise TileDataError("two tile files define the same tile id")
        self.max_segments = max(len(t.segments) for t in self.tiles)
        self.compat = _compat_table(self.tiles)
        self.has_building = np.array([t.has_building() for t in self.tiles], dtype=bool)
        self.building_kinds = sorted({s.building for t in self.tiles for s in t.segments if s.kind == BUILDING})

        # Hooks: only those an expansion overrides are called.
        def hooked(name: str) -> list:
            return [getattr(e, name) for e in self.expansions if overrides(e, name)]

        self.h_veto = hooked("placement_veto")
        self.h_after_placement = hooked("after_placement")
        self.h_follower_spots = hooked("follower_spots")
        self.h_blocks = hooked("blocks_completion")
        self.h_extra_completions = hooked("extra_completions")
        self.h_score_items = hooked("score_items")
        self.h_on_completed = hooked("on_completed")
        self.h_on_scored = hooked("on_scored")
        self.h_building_target = hooked("building_target")
        self.h_field_cities = hooked("field_cities")
        self.h_feature_size = hooked("feature_size")
        self.h_extra_completed = hooked("extra_completed")
        self.h_next_player = hooked("next_player")
        self.h_followers_held = hooked("followers_held")
        self.h_setup_from_bag = hooked("setup_from_bag")
        self.stages, self.final_stages = build_stages(self.expansions)
        self.phases = [s.name for s in self.stages + self.final_stages if s.name]


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
def _ruleset_cached(key: str) -> RuleSet:
    import json

    return RuleSet(GameConfig.from_dict(json.loads(key)))


def ruleset(config: GameConfig) -> RuleSet:
    """The shared RuleSet of a configuration (built once, then cached)."""
    try:
        key = config.key()
    except TypeError as exc:
        raise ConfigError(f"game config is not JSON-serialisable: {exc}") from None
    return _ruleset_cached(key)
