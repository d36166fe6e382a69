"""Integer tables for the compiled engine, exported from the Python rule set.

Contract
--------
:func:`build_layout` turns validated environment options into a
:class:`Layout`: the tile tables (edge codes, rotated segment maps,
half-edges, the compatibility table), the observation layout (static channel
table, channel and global-feature positions) and the scalar parameters the
kernels read.  Everything is *derived* from the Python reference: tile
geometry from :class:`~carc_env.core.config.RuleSet` (so the TOML tile data
stays the single source), channel and feature positions by name from
:class:`~carc_env.encoding.ObservationEncoder` and range sizes from
:class:`~carc_env.encoding.ActionCodec`.  Nothing here is written twice.

:func:`coverage` says whether the compiled engine covers a configuration (and
why not, in words, when it does not).  Each enabled plug-in must have a
``fast`` part (:mod:`carc_env.fast.support`) listing the hooks and options
the kernels reproduce and giving the kernel parameters; a configuration whose
expansions override any other hook, declare another decision phase or take
other options runs on the Python engine.
"""

from __future__ import annotations

import inspect
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.config import N_PATTERNS, RuleSet
from ..core.expansion import Expansion, overrides
from ..core.registry import part
from ..core.tiles import BUILDING, CITY, FIELD, RIVER, ROAD
from ..encoding import ActionCodec, ObservationEncoder
from .config import EngineConfig, engine_config
from .printed import conn_slots, layout_block
from .rng import WORDS as RNG_WORDS
from .seam import B_AWARD, B_LS, B_OWN, B_TILE, HOOKS, MAX_PLUGINS, award_codes, order_problem, plugin_index
from .seam import support as _support
from .support import PARAMETERS, FastSupport

# ---------------------------------------------------------------- coverage

_CONFIG_TIME = ("check_config", "claims", "new_state")
_SEARCH_TIME = ("order_unseen",)  # Game.redeal's, in Python; the kernels take the reshuffled stack as it is
_HOOKS = tuple(
    name for name, value in vars(Expansion).items()
    if inspect.isfunction(value) and not name.startswith("_") and name not in _CONFIG_TIME + _SEARCH_TIME
)  # fmt: skip
"""The hooks that change what happens in a game: every public method of
:class:`~carc_env.core.expansion.Expansion` but the config-time ones, so that a
hook the core gains later (``placement_links``, ``score_override``,
``defers_scoring``...) keeps a plug-in overriding it on the Python engine
until its fast part lists it."""


def coverage(options: Any) -> str | None:
    """None if the compiled engine covers this configuration, else the reason (for logs and ``engine_reason``).

    ``options``: an :class:`~carc_env.fast.config.EngineConfig`, or validated env options (their
    ``engine_config()``).
    """
    cfg = engine_config(options)
    reason = rules_coverage(cfg.rules)
    if reason is None and cfg.action_features:
        reason = features_coverage(cfg.rules)
    return reason


FEATURE_HOOKS = (
    "placement_links", "blocks_completion", "building_target", "field_cities", "extra_completions",
    "extra_completed",
)  # fmt: skip
"""Hooks that may change what the one-ply scan or a feature's value is (:mod:`carc_env.core.lookahead`,
``Game.feature_value``): a plug-in overriding one keeps the compiled action features and greedy
(:mod:`carc_env.fast.features`) on the Python engine unless its fast part lists the hook in
``FastSupport.features``, i.e. the compiled features reproduce it (its kernels reach the scan or the
value: ``placement_links``, ``field_cities``; or the hook reaches the features only through the one-ply
play-out, which runs the engine's kernels), proven by the features differential.  The other hooks need no
entry: what a placement may be (``placement_veto``) is in the mask the features read, and what its turn
scores (``score_items``, ``on_completed``, ``on_scored``, automatic ``stages``...) is played out by the
engine's own kernels, which call the plug-ins' compiled hooks; a decision phase is passed in the play-out
through the plug-in's ``decision_pass`` kernel."""


def features_coverage(rules: RuleSet) -> str | None:
    """None if the compiled action features and greedy decisions (:mod:`carc_env.fast.features`) reproduce
    the Python ones for this rule set, else the reason.  They scan placements with the base rules plus the
    links of the enabled plug-ins' ``placement_links`` kernels, value features with the base rules plus
    their ``field_cities`` kernels (every building kind is scored as the core scores a cloister), and play
    a placement's turn out with the engine's kernels, passing the plug-ins' decisions
    (``decision_pass``); the greedy decides uniformly at random in a plug-in's phase, as the Python policy
    does without heuristics; on a printed board the scan counts the sides the board closes and, around a
    building, the squares, up to each building's target.  Refused: a plug-in overriding a :data:`FEATURE_HOOKS`
    hook its fast part's ``features`` does not list, a decision phase without a ``decision_pass``
    kernel, and a plug-in with a ``heuristics`` part its kernels do not reproduce."""
    reason = rules_coverage(rules)
    if reason is not None:
        return reason
    for exp in rules.expansions:
        sup = _support(exp.KEY)
        hooks = [h for h in FEATURE_HOOKS if overrides(exp, h) and h not in sup.features]
        if hooks:
            return f"expansion {exp.KEY!r} overrides {hooks}, which the compiled action features do not model"
        phases = [p for p in sup.phases if p in rules.phases]
        if phases and "decision_pass" not in sup.kernels:
            return (
                f"the decision phase(s) {phases} of {exp.KEY!r}: its fast part has no 'decision_pass' kernel, "
                "which the compiled action features' one-ply play-out needs"
            )
        if part(exp.KEY, "heuristics") is not None and not sup.heuristics:
            return (
                f"expansion {exp.KEY!r} has greedy heuristics (its heuristics part) the compiled greedy does not "
                "reproduce"
            )
    return None


def rules_coverage(rules: RuleSet) -> str | None:
    """None if the compiled engine covers this rule set, else the reason."""
    for exp in rules.expansions:
        sup = _support(exp.KEY)
        if sup is None:
            return f"expansion {exp.KEY!r} has no compiled rules (its plug-in has no fast part)"
        unknown_hooks = set(sup.kernels) - set(HOOKS)
        if unknown_hooks:
            raise ValueError(
                f"plug-in {exp.KEY!r} gives kernels for unknown compiled hooks {sorted(unknown_hooks)}; "
                f"the hooks are {list(HOOKS)}"
            )
        extra = [h for h in _HOOKS if overrides(exp, h) and h not in sup.hooks]
        if extra:
            return f"expansion {exp.KEY!r} overrides hook(s) {extra} the compiled engine does not implement"
        unknown = set(rules.config.options.get(exp.KEY, {})) - sup.options
        if unknown:
            return f"option(s) {sorted(unknown)} of {exp.KEY!r} are not covered by the compiled engine"
    if rules.max_segments > SEG_CAP:
        return f"a tile has {rules.max_segments} segments (the compiled engine handles {SEG_CAP})"
    compiled_phases = {"tile", "follower"}
    for exp in rules.expansions:
        compiled_phases.update(_support(exp.KEY).phases)
    missing = [p for p in rules.phases if p not in compiled_phases]
    if missing:
        return f"decision phase(s) {missing} have no compiled kernels (the enabled plug-ins' fast parts run {sorted(compiled_phases)})"
    late = [e.KEY for e in rules.expansions if e.KEY not in plugin_index()]
    if late:
        return f"expansion(s) {late} were registered after the compiled engine was composed"
    order = order_problem([e.KEY for e in rules.expansions])
    if order is not None:
        return order
    try:
        params = _params(rules)[0]
    except _NotCovered as exc:
        return str(exc)
    for t in rules.tiles:
        if sum(1 for s in t.segments if s.kind == BUILDING) > 1:
            return f"tile {t.id} holds more than one building"
        if any(s.kind == RIVER for s in t.segments) and not params.get("river"):
            return f"tile {t.id} has a river, and no enabled plug-in gives the compiled river rule"
    return None


class _NotCovered(ValueError):
    pass


def _params(rules: RuleSet, encoder: Any = None) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The engine parameters the enabled plug-ins' fast parts give (see :mod:`carc_env.fast.support`), and
    each plug-in's own parameters by name; with an encoder, their observation positions too."""
    out: dict[str, int] = {}
    owner: dict[str, str] = {}
    own: dict[str, dict[str, int]] = {}
    for exp in rules.expansions:
        sup = _support(exp.KEY)
        if sup is None:  # pragma: no cover - rules_coverage refused it before
            raise _NotCovered(f"expansion {exp.KEY!r} has no compiled rules")
        given = dict(sup.params(rules, exp))
        if encoder is not None:
            given.update(sup.positions(encoder))
        mine = own[exp.KEY] = {}
        for name, value in given.items():
            if name in sup.own:
                mine[name] = int(value)
                continue
            if name not in PARAMETERS:
                raise ValueError(
                    f"plug-in {exp.KEY!r} gives an unknown compiled-engine parameter {name!r} "
                    f"(engine parameters: {PARAMETERS}; its own: {sup.own})"
                )
            if name in out:
                raise _NotCovered(f"{owner[name]!r} and {exp.KEY!r} both set {name!r} (e.g. two start layouts)")
            out[name] = int(value)
            owner[name] = exp.KEY
        missing = [n for n in sup.own if n not in mine]
        if encoder is not None and missing:
            raise ValueError(
                f"plug-in {exp.KEY!r} declares own parameters {missing} its params / positions do not give"
            )
    if "start_tile" not in out:
        raise _NotCovered("no enabled plug-in lays a start layout the compiled engine knows")
    return out, own


# ------------------------------------------------------------------------ layout

Tables = namedtuple("Tables", "tile compat static inv32 P F")
"""Read-only arrays the kernels take: ``tile`` (int16, one row per tile type, columns ``TC_*``),
``compat`` (``RuleSet.compat``), ``static`` (the encoder's static channel table), ``inv32`` (float32
1 / copies per tile type, as the encoder computes it), ``P`` (int64 parameters ``P_*``), ``F`` (float64
parameters ``F_*``).  Few arrays on purpose: every kernel call passes them all."""

SEG_CAP = 12  # segments per tile type the kernels handle (the covered tile sets have at most 9)
ENT_CAP = 4 + SEG_CAP  # observation entries per (tile, rotation): a city or road once per side
FCITY_CAP = 4  # cities a field segment borders
# Columns of Tables.tile (per tile type): rotated geometry, segment data, observation entries.
TC_EC = 0  # edge code facing side s in rotation r: [4 * r + s]
TC_CE = TC_EC + 16  # city/road/river segment facing side s in rotation r, -1: [4 * r + s]
TC_HA = TC_CE + 16  # field segment touching half-edge h in rotation r, -1: [8 * r + h]
TC_NSEG = TC_HA + 32
TC_SKIND = TC_NSEG + 1  # segment kind: [i]
TC_OPEN0 = TC_SKIND + SEG_CAP  # open edges of a city/road segment: [i]
TC_PEN0 = TC_OPEN0 + SEG_CAP  # pennants: [i]
TC_FCITY = TC_PEN0 + SEG_CAP  # cities a field segment borders, -1 padded: [FCITY_CAP * i + j]
TC_BSEG = TC_FCITY + FCITY_CAP * SEG_CAP  # the building segment, -1
TC_ENT_N = TC_BSEG + 1  # observation entries in rotation r: [r]
TC_ENT_SEG = TC_ENT_N + 4  # [ENT_CAP * r + e]
TC_ENT_CH = TC_ENT_SEG + 4 * ENT_CAP  # channels of entry e (3): [3 * (ENT_CAP * r + e) + j]
TC_ENT_BITS = TC_ENT_CH + 12 * ENT_CAP  # feature-code bits switching each channel on: same index
TC_OS_N = TC_ENT_BITS + 12 * ENT_CAP  # sides with a city/road in rotation r: [r]
TC_OS_SEG = TC_OS_N + 4  # [4 * r + k]
TC_OS_SIDE = TC_OS_SEG + 16  # [4 * r + k]
TC_RIVER = TC_OS_SIDE + 16  # 1 if the tile has a river segment
TC_LEN = TC_RIVER + 1

# Positions in the int64 parameter vector ``Tables.P`` (module constants: the kernels read them as literals).
(P_ROWS, P_COLS, P_NPLAYERS, P_FOLLOWERS, P_MAXSEG, P_TILE_N, P_FOL_START, P_NACT, P_TOTAL, P_START_T,
 P_GOFF, P_W, P_NS, P_NT, P_NN, P_REWARD, P_TILE_ONCE,
 P_CH_COMPLETE, P_CH_COMPLETE_B, P_CH_MINE, P_CH_OTHERS, P_CH_FIELD_MINE, P_CH_FIELD_OTHERS, P_CH_FOLLOWERS,
 P_CH_FKIND, P_CH_LEGAL, P_CH_FRONTIER, P_CH_LAST, P_CH_OPEN, P_CH_SIZE, P_CH_BNB, P_NCH,
 P_G_DRAWN, P_G_PLACED, P_G_PLACED_ROT, P_G_REMAINING, P_G_BAG, P_G_PROGRESS, P_G_SCORE, P_G_LEAD, P_G_SUPPLY,
 P_G_PHASE, P_G_DECIDING, P_G_TURN, P_G_LEGAL, P_G_CLIPPED, P_NGLOB, P_PH_TILE, P_PH_FOLLOWER, P_PH_OVER,
 P_NTYPES, P_FCAP, P_HCAP, P_LCAP, P_START_X, P_START_Y, P_START_R,
 # offsets of the per-game lists in State.ls
 P_O_FMASK, P_O_FL, P_O_SPOTS, P_O_PEND, P_O_COMP, P_O_SCORES, P_O_SUPPLY, P_O_BEFORE, P_O_CNT, P_O_BAG,
 P_O_NEXTBAG, P_O_REM, P_O_MARK, P_O_HIST, P_O_LOG, P_PLUG_LS, P_LS_LEN,
 P_O_GUEST,  # guests: (node, owner) pairs (kernels.add_guest)
 # P_PLUG + i: the parameter block start of composed plug-in i (seam.plugin_index), 0 when it is off
 P_PLUG) = range(76)  # fmt: skip
P_O_LINKS = P_PLUG + MAX_PLUGINS  # offset of the links list in State.ls (after the plug-ins' block table)
# offsets of the game's random generator in State.ls (carc_env.fast.rng: the reference's game.rng after the
# deal) and of the prepared game's, copied at reset as the prepared draw order is
P_O_RNG = P_O_LINKS + 1
P_O_NEXTRNG = P_O_LINKS + 2
# P_LAY: start of the printed board's block in P (carc_env.fast.printed), 0: the unbounded table;
# P_NDRAWS: numbers a plug-in draws before the shuffle (FastSupport.setup_draws), loaded before the draw order;
# P_START_PLUG: 1 when a plug-in's setup kernel lays the start tile (engine parameter start_by_plugin)
P_LAY, P_NDRAWS, P_START_PLUG = P_O_LINKS + 3, P_O_LINKS + 4, P_O_LINKS + 5
P_LEN = P_O_LINKS + 6  # the plug-ins' blocks follow
# Positions in the float64 parameter vector ``Tables.F``.
F_REWARD_SCALE, F_INV_FOLLOWERS, F_LEN = range(3)
HIST_W = 4  # history rows: (kind, a, b, c)
LOG_W = 6  # score-log rows: (what, final, a, b, value, players bitmask)
PEND_CAP = 32
LINK_CAP = 32  # links one placement makes (placement_links): count, then (segment, node) pairs
MAX_PLAYERS_CAP = 8

REWARD_CODES = {"win_loss": 0, "score_diff": 1, "score_delta": 2}


@dataclass
class Layout:
    """The tables of one configuration plus the Python-side objects they came from."""

    options: EngineConfig
    rules: RuleSet
    codec: ActionCodec
    encoder: ObservationEncoder
    tables: Tables
    n_types: int
    total_tiles: int  # tiles in the game, the start tile included
    start_tile: int
    base_bag: np.ndarray  # tile indices in RuleSet order, the start tile's copy removed (before shuffling)
    bag_hooks: list  # expansions' build_bag methods, applied after the shuffle (the reference's order)
    node_cap: int
    grid_w: int
    frontier_cap: int
    hist_cap: int
    log_cap: int
    award_codes: dict[str, int]  # score-log code of each enabled plug-in's award kind (the differential reads it)
    uses_rng: bool = False  # an enabled plug-in's kernels draw from the game's generator (FastSupport.random)
    printed: int = 0  # printed pieces of the board (placements 0..printed-1 of every game; carc_env.fast.printed)
    draw_hooks: list = field(default_factory=list)  # plug-ins' setup_draws(generator) -> ints, before the shuffle

    @property
    def num_players(self) -> int:
        return int(self.options.num_players)


def _channel(names: list[str], name: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise ValueError(f"observation channel {name!r} not found; the encoder's layout changed") from None


def _expect(ok: bool, what: str) -> None:
    """A consistency check between the kernels and the Python layers they mirror (a real check, so that it
    holds under ``python -O``): a failure is a bug of this package, never of the caller's input."""
    if not ok:
        raise RuntimeError(f"carc_env.fast cannot build its tables: {what}")


def _expect_channel(names: list[str], index: int, name: str) -> None:
    got = names[index] if 0 <= index < len(names) else None
    _expect(got == name, f"observation channel {index} is {got!r}, expected {name!r}; the encoder's layout changed")


def build_layout(options: Any) -> Layout:
    """Tables of a configuration (an EngineConfig or env options; the caller checks :func:`coverage` first)."""
    options = engine_config(options)
    rules = options.rules
    n = int(options.num_players)
    codec = ActionCodec(rules, options.window)
    encoder = ObservationEncoder(rules, n, codec, options.followers)
    tiles = rules.tiles
    nt = len(tiles)
    S = rules.max_segments
    if S > SEG_CAP or n > MAX_PLAYERS_CAP:
        raise ValueError(
            f"the compiled engine handles at most {SEG_CAP} segments per tile and {MAX_PLAYERS_CAP} players"
        )
    names = list(encoder.channel_names)
    sides = "NESW"
    ch_complete = _channel(names, "complete_N")
    ch_mine = _channel(names, "mine_N")
    ch_others = _channel(names, "others_N")
    for s in range(4):
        _expect_channel(names, ch_complete + s, f"complete_{sides[s]}")
        _expect_channel(names, ch_mine + s, f"mine_{sides[s]}")
        _expect_channel(names, ch_others + s, f"others_{sides[s]}")
    ch_cb = _channel(names, "complete_building")
    ch_fm = _channel(names, "field_mine")
    ch_fo = _channel(names, "field_others")

    tile = np.full((nt, TC_LEN), 0, dtype=np.int16)
    for ti, t in enumerate(tiles):
        row = tile[ti]
        row[TC_NSEG] = len(t.segments)
        row[TC_SKIND : TC_SKIND + SEG_CAP] = -1
        row[TC_FCITY : TC_FCITY + FCITY_CAP * SEG_CAP] = -1
        row[TC_BSEG] = -1
        for r in range(4):
            row[TC_EC + 4 * r : TC_EC + 4 * r + 4] = t.edge_codes[r]
            row[TC_CE + 4 * r : TC_CE + 4 * r + 4] = t.center[r]
            row[TC_HA + 8 * r : TC_HA + 8 * r + 8] = t.half[r]
        for i, seg in enumerate(t.segments):
            row[TC_SKIND + i] = seg.kind
            row[TC_OPEN0 + i] = len(seg.edges) if seg.kind in (CITY, ROAD) else 0
            row[TC_PEN0 + i] = seg.pennants
            if seg.kind == FIELD:
                if len(seg.cities) > FCITY_CAP:
                    raise ValueError(f"tile {t.id}: a field borders more than {FCITY_CAP} cities")
                row[TC_FCITY + FCITY_CAP * i : TC_FCITY + FCITY_CAP * i + len(seg.cities)] = seg.cities
            if seg.kind == BUILDING:
                row[TC_BSEG] = i
        # Observation entries, as the encoder defines them: a city or road once per side it leaves
        # through (complete/mine/others of that side), a field (field_mine/field_others), a building
        # (complete_building).  Channel positions are looked up by name.
        for r in range(4):
            ents = []
            for i, seg in enumerate(t.segments):
                if seg.kind in (CITY, ROAD):
                    for side in range(4):
                        if t.center[r][side] == i:
                            ents.append((i, (ch_complete + side, ch_mine + side, ch_others + side), (1, 2, 4)))
                elif seg.kind == FIELD:
                    ents.append((i, (0, ch_fm, ch_fo), (0, 2, 4)))
                elif seg.kind == BUILDING:
                    ents.append((i, (ch_cb, 0, 0), (1, 0, 0)))
            row[TC_ENT_N + r] = len(ents)
            for e, (i, ch, bits) in enumerate(ents):
                row[TC_ENT_SEG + ENT_CAP * r + e] = i
                for j in range(3):
                    row[TC_ENT_CH + 3 * (ENT_CAP * r + e) + j] = ch[j]
                    row[TC_ENT_BITS + 3 * (ENT_CAP * r + e) + j] = bits[j]
            k = 0
            for d in range(4):
                c = t.center[r][d]
                if c >= 0 and t.segments[c].kind in (CITY, ROAD):
                    row[TC_OS_SEG + 4 * r + k] = c
                    row[TC_OS_SIDE + 4 * r + k] = d
                    k += 1
            row[TC_OS_N + r] = k
        row[TC_RIVER] = 1 if any(seg.kind == RIVER for seg in t.segments) else 0

    counts = np.array([t.count for t in tiles], dtype=np.int64)
    inv32 = np.where(counts > 0, 1.0 / np.maximum(counts, 1), 0.0).astype(np.float32)
    total = int(counts.sum())
    params, own = _params(rules, encoder)
    start_t = params["start_tile"]
    bag: list[int] = []
    for ti, t in enumerate(tiles):
        bag.extend([ti] * t.count)
    bag.remove(start_t)
    for exp in rules.expansions:
        for t in _support(exp.KEY).setup_tiles(rules, exp):
            bag.remove(t)  # laid at setup by a plug-in's kernel, out of the bag as place_fixed takes it
    layout = rules.layout
    printed = 0 if layout is None else len(layout.pieces)
    node_cap = int(sum(t.count * len(t.segments) for t in tiles)) + 1
    goff = total + 2
    grid_w = 2 * total + 5
    if layout is not None:  # the printed pieces' nodes, and a grid holding the board with a margin of 2
        node_cap += sum(len(tiles[rules.tile_index[p.tile]].segments) for p in layout.pieces)
        x0, x1, y0, y1 = layout.bounds
        goff = max(goff, 2 - x0, 2 - y0)
        grid_w = max(grid_w, goff + max(x1, y1) + 3)
    fcap = 4 * total + 8
    # history rows: a tile and a follower decision per tile, and what the plug-ins' decisions may add
    extra = sum(int(_support(e.KEY).history_rows(rules, e)) for e in rules.expansions)
    hcap = (2 + extra) * total + 8
    lcap = node_cap + 8

    gnames = list(encoder.global_names)
    phases = list(encoder.phases)
    P = np.zeros(P_LEN, dtype=np.int64)
    P[P_ROWS], P[P_COLS] = codec.rows, codec.cols
    P[P_NPLAYERS] = n
    P[P_FOLLOWERS] = options.followers
    P[P_MAXSEG] = S
    P[P_TILE_N] = codec.tile_range.size
    P[P_FOL_START] = codec.follower_range.start
    _expect(
        codec.follower_range.size == S + 1 and codec.tile_range.start == 0,
        f"the codec's layout changed: follower range {codec.follower_range.size} (expected {S + 1}), "
        f"tile range from {codec.tile_range.start} (expected 0)",
    )
    P[P_NACT] = codec.n
    P[P_TOTAL] = max(1, total)
    P[P_START_T] = start_t
    P[P_GOFF] = goff
    P[P_W] = grid_w
    P[P_NS] = encoder.n_static
    P[P_NT] = total + printed  # placements a game can make (the marks per placement)
    P[P_NN] = node_cap
    P[P_REWARD] = REWARD_CODES[options.reward]
    P[P_TILE_ONCE] = params.get("count_tile_once", 1)
    P[P_CH_COMPLETE] = ch_complete
    P[P_CH_COMPLETE_B] = ch_cb
    P[P_CH_MINE] = ch_mine
    P[P_CH_OTHERS] = ch_others
    P[P_CH_FIELD_MINE] = ch_fm
    P[P_CH_FIELD_OTHERS] = ch_fo
    P[P_CH_FOLLOWERS] = _channel(names, "followers_p0")
    P[P_CH_FKIND] = _channel(names, "follower_on_city")
    P[P_CH_LEGAL] = _channel(names, "legal_r0")
    P[P_CH_FRONTIER] = _channel(names, "frontier")
    P[P_CH_LAST] = _channel(names, "last_placed")
    P[P_CH_OPEN] = _channel(names, "open_N")
    P[P_CH_SIZE] = _channel(names, "size_N")
    P[P_CH_BNB] = _channel(names, "building_neighbours")
    P[P_NCH] = encoder.n_channels
    for i in range(n):
        _expect_channel(names, P[P_CH_FOLLOWERS] + i, f"followers_p{i}")
    for k, kind in enumerate(("city", "road", "field", "building")):
        _expect_channel(names, P[P_CH_FKIND] + k, f"follower_on_{kind}")
    for s in range(4):
        _expect_channel(names, P[P_CH_LEGAL] + s, f"legal_r{s}")
        _expect_channel(names, P[P_CH_OPEN] + s, f"open_{sides[s]}")
        _expect_channel(names, P[P_CH_SIZE] + s, f"size_{sides[s]}")
    P[P_G_DRAWN] = gnames.index(f"drawn_tile_{tiles[0].id}")
    P[P_G_PLACED] = gnames.index(f"placed_tile_{tiles[0].id}")
    P[P_G_PLACED_ROT] = gnames.index("placed_rotation_0")
    P[P_G_REMAINING] = gnames.index(f"remaining_{tiles[0].id}")
    P[P_G_BAG] = gnames.index("bag_fraction")
    P[P_G_PROGRESS] = gnames.index("turn_progress")
    P[P_G_SCORE] = gnames.index("score_p0")
    P[P_G_LEAD] = gnames.index("score_lead")
    P[P_G_SUPPLY] = gnames.index("followers_in_hand_p0")
    P[P_G_PHASE] = gnames.index(f"phase_{phases[0]}")
    P[P_G_DECIDING] = gnames.index("deciding_p0")
    P[P_G_TURN] = gnames.index("turn_p0")
    P[P_G_LEGAL] = gnames.index("legal_placements")
    P[P_G_CLIPPED] = gnames.index("window_clipped")
    P[P_NGLOB] = encoder.n_globals
    P[P_PH_TILE] = phases.index("tile")
    P[P_PH_FOLLOWER] = phases.index("follower")
    P[P_PH_OVER] = phases.index("game_over")
    P[P_NTYPES] = nt
    P[P_FCAP], P[P_HCAP], P[P_LCAP] = fcap, hcap, lcap
    P[P_START_X], P[P_START_Y], P[P_START_R] = params["start_x"], params["start_y"], params["start_r"]
    draw_hooks = []
    for exp in rules.expansions:
        hook = _support(exp.KEY).setup_draws
        if hook is not None:
            draw_hooks.append(lambda rng, hook=hook, exp=exp: hook(rules, exp, rng))
    ndraws = P[P_NDRAWS] = sum(len(h(np.random.default_rng(0))) for h in draw_hooks)
    # the per-game lists, one after the other in State.ls
    off = 0
    for pos, size in (
        (P_O_FMASK, fcap),
        (P_O_FL, total + 1),
        (P_O_SPOTS, SEG_CAP + 1),
        (P_O_PEND, PEND_CAP),
        (P_O_COMP, 2 * SEG_CAP + PEND_CAP + 8),
        (P_O_SCORES, MAX_PLAYERS_CAP),
        (P_O_SUPPLY, MAX_PLAYERS_CAP),
        (P_O_BEFORE, MAX_PLAYERS_CAP),
        (P_O_CNT, MAX_PLAYERS_CAP),
        (P_O_BAG, total),
        (P_O_NEXTBAG, total + ndraws),
        (P_O_REM, nt),
        (P_O_MARK, total + printed + 1),
        (P_O_HIST, HIST_W * hcap),
        (P_O_LOG, LOG_W * lcap),
        (P_O_GUEST, 2 * (MAX_PLAYERS_CAP * options.followers + 1)),
        (P_O_LINKS, 1 + 2 * LINK_CAP),
        (P_O_RNG, RNG_WORDS),
        (P_O_NEXTRNG, RNG_WORDS),
    ):
        P[pos] = off
        off += size
    # the enabled plug-ins: a parameter block each (after P_LEN), their integers after the engine's lists,
    # their tile columns after the engine's (see carc_env.fast.seam)
    P[P_PLUG_LS] = off  # zeroed when a game starts: the printed groups' connected flags, the plug-ins' integers
    o_conn = off
    if layout is not None:
        off += conn_slots(rules)
    blocks = []
    columns = []
    pb = P_LEN
    codes = award_codes()
    tc = TC_LEN
    for exp in rules.expansions:
        sup = _support(exp.KEY)
        cols = np.asarray(sup.tile_columns(rules), dtype=np.int16)
        _expect(cols.ndim == 2 and cols.shape[0] == nt, f"plug-in {exp.KEY!r}: tile_columns has shape {cols.shape}")
        block = np.zeros(B_OWN + len(sup.own), dtype=np.int64)
        if sup.table is not None:  # its own table follows its own parameters (T.P[pb + B_OWN + len(own) + i])
            block = np.concatenate([block, np.asarray(sup.table(encoder), dtype=np.int64).reshape(-1)])
        block[B_LS] = off
        block[B_TILE] = tc
        block[B_AWARD] = codes[(exp.KEY, sup.awards[0])] if sup.awards else -1
        for i, name in enumerate(sup.own):
            block[B_OWN + i] = own[exp.KEY][name]
        P[P_PLUG + plugin_index()[exp.KEY]] = pb
        blocks.append(block)
        columns.append(cols)
        pb += len(block)
        off += sup.slots
        tc += cols.shape[1]
    P[P_LS_LEN] = off
    if layout is not None:  # the printed board's block (carc_env.fast.printed) after the plug-ins'
        P[P_LAY] = pb
        blocks.append(layout_block(rules, codec.origin, o_conn))
    P[P_START_PLUG] = params.get("start_by_plugin", 0)
    P = np.concatenate([P, *blocks]) if blocks else P
    tile = np.concatenate([tile, *columns], axis=1) if columns else tile
    F = np.zeros(F_LEN, dtype=np.float64)
    F[F_REWARD_SCALE] = float(options.reward_scale)
    F[F_INV_FOLLOWERS] = 1.0 / options.followers
    _expect(
        encoder.static_table.shape == (nt, 4, encoder.n_static),
        f"the encoder's static table has shape {encoder.static_table.shape}, expected {(nt, 4, encoder.n_static)}",
    )
    _expect(
        rules.compat.shape[1] == N_PATTERNS,
        f"the compatibility table has {rules.compat.shape[1]} patterns, the kernels {N_PATTERNS}",
    )
    # The kernels leave the windows tensor zero unless an enabled plug-in writes it (compiled hook observe_windows).
    _expect(
        not encoder.window_names or any("observe_windows" in _support(e.KEY).kernels for e in rules.expansions),
        f"windows columns {encoder.window_names} are not computed by the kernels",
    )
    tables = Tables(
        tile=tile,
        compat=np.ascontiguousarray(rules.compat),
        static=np.ascontiguousarray(encoder.static_table),
        inv32=inv32,
        P=P,
        F=F,
    )
    return Layout(
        options=options,
        rules=rules,
        codec=codec,
        encoder=encoder,
        tables=tables,
        n_types=nt,
        total_tiles=total,
        start_tile=start_t,
        base_bag=np.array(bag, dtype=np.int64),
        node_cap=node_cap,
        bag_hooks=[e.build_bag for e in rules.expansions if overrides(e, "build_bag")],
        grid_w=grid_w,
        frontier_cap=fcap,
        hist_cap=hcap,
        log_cap=lcap,
        award_codes={kind: c for (key, kind), c in codes.items() if key in {e.KEY for e in rules.expansions}},
        uses_rng=any(_support(e.KEY).random for e in rules.expansions),
        printed=printed,
        draw_hooks=draw_hooks,
    )


__all__ = ["FastSupport", "Layout", "Tables", "build_layout", "coverage", "rules_coverage"]
