"""Carcassonne Maps - Germany in the compiled engine (:mod:`carc_env.fast`): its kernels and tables.

The printed board itself (squares, void, printed pieces and their groups, the
large cities joining the play area when reached, borders and neutral edges
closing features, buildings completed by the squares around them) is the
core's :class:`~carc_env.core.layout.BoardLayout`, which this plug-in's
``board_layout`` builds from the map file; the engine plays on any layout
(:mod:`carc_env.fast.printed`: its arrays, ``put_tile``'s rules).  So another
map file of the same format runs compiled too.  This part adds, as
:mod:`.rules` does:

* ``setup``: the start tile (engine parameter ``start_by_plugin``) on the first
  start square, turned as ``start_orientation`` says (``rotation``: the
  rotations that fit the printed features next to the square, then the most
  playable, the lowest, or the game's random draw); ``setup_from_bag``: the
  next tiles of the draw order on the other start squares (a tile fitting in
  no rotation is set aside), announced (``placement_links``,
  ``after_setup_placement``) like the reference's ``place_fixed(...,
  announce=True)``;
* ``score_items``: +2 per coat of arms printed on a feature completed during
  the game, +1 at the end; the town road bonus (variant 3);
* ``after_placement``: a tile on a town costs 2 points (variant 2, award
  ``town``) and owes an extra turn (variant 1, once per turn); ``extra_turn``
  gives it; with ``town_extra_turn_optional`` the phase ``map_extra_turn``
  asks first (``decision_*`` at ``A_END_TURN``; history rows ``a`` 0
  ``extra_turn``, 1 ``pass``);
* ``observe``: :mod:`.observe`'s six board channels (the window does not move
  on a printed board: the planes are a table per window cell, the large
  cities turning 2 once connected).

``start_orientation="random"``: the reference draws one number per start
square from the game's generator before the shuffle; ``setup_draws`` draws
them the same way and hands the kernels, per square, ``int(d * n)`` for the
1-4 rotations that may fit (2 bits each).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.actions import IllegalActionError, Pass
from ...core.config import PATTERN_BITS
from ...core.tiles import CITY, ROAD
from ...fast import kernels as K
from ...fast.kernels import (
    A_END_TURN,
    DX,
    DY,
    G_BAG_I,
    G_BAG_N,
    G_DPHASE,
    G_DPLUG,
    G_NPL,
    G_PLAYER,
    G_TURNP,
    H_PLUG,
    N_KIND,
    N_NEXT,
    N_PL,
    find,
    hist_row,
    log_row,
    mark_closed,
    placement_links,
    put_tile,
    union,
)
from ...fast.printed import (
    ANY_CODE,
    CL_PLAYABLE,
    CL_VOID,
    LB_H,
    LB_NPIECES,
    LB_O_CONN,
    LB_W,
    LB_X0,
    LB_Y0,
    NEUTRAL_CODE,
    cell_class,
    cell_row,
)
from ...fast.seam import B_AWARD, B_LS, B_OWN, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import (
    P_COLS,
    P_GOFF,
    P_LAY,
    P_O_BAG,
    P_O_LINKS,
    P_O_NEXTBAG,
    P_O_REM,
    P_O_SCORES,
    P_START_T,
    TC_CE,
    TC_EC,
    TC_NSEG,
    TC_SKIND,
)
from .observe import CHANNELS, Observation
from .rules import EXTRA_TURN_PHASE, KEY, ORIENTATIONS, TakeExtraTurn

OWN = (
    "n_starts", "orient", "draw0", "penalty", "extra", "ask", "road_bonus", "ph_extra", "extra_start", "ch_map",
    "n_coats", "t_towns", "n_towns", "t_starts", "t_planes", "t_town_at", "t_coats_of",
)  # fmt: skip
(N_STARTS, ORIENT, DRAW0, PENALTY, EXTRA, ASK, ROAD_BONUS, PH_EXTRA, EXTRA_START, CH_MAP, N_COATS, T_TOWNS, N_TOWNS,
 T_STARTS, T_PLANES, T_TOWN_AT, T_COATS_OF) = own_positions(OWN)  # fmt: skip
TABLE = B_OWN + len(OWN)  # its table (T.P[pb + TABLE + i]): see table()
OPEN, FIXED, RANDOM = (ORIENTATIONS.index(o) for o in ("open", "fixed", "random"))
DUE, IN_EXTRA, ASKED = 0, 1, 2  # its per-game integers: the extra turn is owed, being played, asked this turn
TAKE, DECLINE = 0, 1  # map_extra_turn's entries and history rows
PATTERN_MASK = (1 << PATTERN_BITS) - 1
AWARD_TOWN = 0


# ---------------------------------------------------------------- setup
@kernel
def fitting(T, S, g, t, x, y):
    """Bitmask of the rotations in which tile ``t`` fits square (x, y) at setup: the printed features
    around it and the tiles next to it (Board.fitting_rotations)."""
    lay = T.P[P_LAY]
    off = T.P[P_GOFF]
    c = cell_row(T, lay, x, y)
    pat = T.P[c + 1] if c >= 0 else 0
    printed = T.P[lay + LB_NPIECES]
    fits = 0
    for r in range(4):
        ok = True
        for s in range(4):
            q = (pat >> (PATTERN_BITS * s)) & PATTERN_MASK
            nk = S.grid[g, y + DY[s] + off, x + DX[s] + off]
            if nk >= 0:
                code = T.tile[S.pl[g, nk, 2], TC_EC + 4 * S.pl[g, nk, 3] + ((s + 2) & 3)]
                q = ANY_CODE if code == NEUTRAL_CODE and nk < printed else code
            if q != 0 and q != ANY_CODE and q != T.tile[t, TC_EC + 4 * r + s]:
                ok = False
                break
        if ok:
            fits |= 1 << r
    return fits


@kernel
def openness(T, S, g, t, x, y, r):
    """MapsGermany.openness: 8 * (cities and roads with a side facing an empty square) - (their sides
    facing the border), a key whose order is the reference's tuple order."""
    lay = T.P[P_LAY]
    off = T.P[P_GOFF]
    feats = 0
    border = 0
    for s in range(4):
        i = T.tile[t, TC_CE + 4 * r + s]
        if i < 0:
            continue
        kind = T.tile[t, TC_SKIND + i]
        if kind != CITY and kind != ROAD:
            continue
        nx = x + DX[s]
        ny = y + DY[s]
        cls = cell_class(T, lay, nx, ny)
        if cls == CL_PLAYABLE:
            if S.grid[g, ny + off, nx + off] < 0:
                feats |= 1 << i
        elif cls == CL_VOID:
            border += 1
    n = 0
    while feats:
        n += feats & 1
        feats >>= 1
    return 8 * n - border


@kernel
def rotation(T, S, g, pb, t, x, y, i):
    """The rotation of tile ``t`` on start square ``i`` at (x, y) (MapsGermany._rotation), -1: none fits."""
    fits = fitting(T, S, g, t, x, y)
    if fits == 0:
        return -1
    mode = T.P[pb + ORIENT]
    if mode == FIXED:
        for r in range(4):
            if (fits >> r) & 1:
                return r
    if mode == RANDOM:
        n = (fits & 1) + ((fits >> 1) & 1) + ((fits >> 2) & 1) + ((fits >> 3) & 1)
        pick = (S.ls[g, T.P[P_O_NEXTBAG] + T.P[pb + DRAW0] + i] >> (2 * (n - 1))) & 3
        for r in range(4):
            if (fits >> r) & 1:
                if pick == 0:
                    return r
                pick -= 1
    best = -1
    key = 0
    for r in range(4):
        if (fits >> r) & 1:
            k = openness(T, S, g, t, x, y, r)
            if best < 0 or k > key:  # ties keep the lowest rotation
                best = r
                key = k
    return best


@kernel
def lay_fixed(T, S, g, t, x, y, r, announce):
    """Game.place_fixed on a printed board: the links the placement makes (``announce``), the tile, the
    features it closes at once completed, the plug-ins told (``after_setup_placement``)."""
    nl = placement_links(T, S, g, t, x, y, r) if announce else 0
    put_tile(T, S, g, t, x, y, r)
    k = S.gi[g, G_NPL] - 1
    if nl:
        ol = T.P[P_O_LINKS]
        base = S.pl[g, k, 4]
        for i in range(nl):
            union(T, S, g, base + S.ls[g, ol + 1 + 2 * i], S.ls[g, ol + 2 + 2 * i])
    mark_closed(T, S, g, k)
    if announce:
        K.H.after_setup_placement(T, S, g, t, x, y, r)


@kernel
def setup(T, S, g, pb):
    tb = pb + TABLE + T.P[pb + T_STARTS]
    x = T.P[tb]
    y = T.P[tb + 1]
    t = T.P[P_START_T]
    r = rotation(T, S, g, pb, t, x, y, 0)
    if r >= 0:  # (the reference refuses a map whose first start square fits the start tile nowhere)
        lay_fixed(T, S, g, t, x, y, r, False)


@kernel
def setup_from_bag(T, S, g, pb):
    gi, ls = S.gi, S.ls
    tb = pb + TABLE + T.P[pb + T_STARTS]
    for i in range(1, T.P[pb + N_STARTS]):
        x = T.P[tb + 2 * i]
        y = T.P[tb + 2 * i + 1]
        while True:
            if gi[g, G_BAG_I] >= gi[g, G_BAG_N]:
                return
            t = ls[g, T.P[P_O_BAG] + gi[g, G_BAG_I]]
            gi[g, G_BAG_I] += 1
            ls[g, T.P[P_O_REM] + t] -= 1
            r = rotation(T, S, g, pb, t, x, y, i)
            if r >= 0:
                lay_fixed(T, S, g, t, x, y, r, True)
                break


# ---------------------------------------------------------------- scoring
@kernel
def covers_root(T, S, g, k, root):
    """Whether placement ``k`` holds a segment of feature ``root``."""
    t = S.pl[g, k, 2]
    base = S.pl[g, k, 4]
    for i in range(T.tile[t, TC_NSEG]):
        if find(S.nd, g, base + i) == root:
            return True
    return False


@kernel
def score_items(T, S, g, pb, root, final):
    kind = S.nd[g, root, N_KIND]
    if kind != CITY and kind != ROAD:
        return 0
    tb = pb + TABLE
    n = 0
    if T.P[pb + N_COATS]:  # the printed pieces in the feature: those whose first segment is one of its nodes
        nd = S.nd
        pieces = T.P[T.P[P_LAY] + LB_NPIECES]
        co = tb + T.P[pb + T_COATS_OF]
        x = root
        while True:
            k = nd[g, x, N_PL]
            if k < pieces and x == S.pl[g, k, 4]:
                n += T.P[co + k]
            x = nd[g, x, N_NEXT]
            if x == root:
                break
    out = n * (1 if final else 2)
    if kind == ROAD and T.P[pb + ROAD_BONUS]:
        off = T.P[P_GOFF]
        tt = tb + T.P[pb + T_TOWNS]
        towns = 0
        for j in range(T.P[pb + N_TOWNS]):
            x = T.P[tt + 2 * j]
            y = T.P[tt + 2 * j + 1]
            if S.grid[g, y + off, x + off] >= 0:
                continue  # covered
            for s in range(4):
                nk = S.grid[g, y + DY[s] + off, x + DX[s] + off]
                if nk >= 0 and covers_root(T, S, g, nk, root):
                    towns += 1
                    break
        out += 2 * towns
    return out


# ---------------------------------------------------------------- the town variants
@kernel
def after_placement(T, S, g, pb, t, x, y, r):
    lay = T.P[P_LAY]
    cx = x - T.P[lay + LB_X0]
    cy = y - T.P[lay + LB_Y0]
    w = T.P[lay + LB_W]
    if not (0 <= cx < w and 0 <= cy < T.P[lay + LB_H]):
        return
    if not T.P[pb + TABLE + T.P[pb + T_TOWN_AT] + cy * w + cx]:
        return
    if T.P[pb + PENALTY]:
        p = S.gi[g, G_TURNP]
        S.ls[g, T.P[P_O_SCORES] + p] -= 2
        log_row(T, S, g, T.P[pb + B_AWARD] + AWARD_TOWN, 0, -2, 0, -2, 1 << p)
    o = T.P[pb + B_LS]
    if T.P[pb + EXTRA] and not S.ls[g, o + IN_EXTRA]:
        S.ls[g, o + DUE] = 1


@kernel
def extra_turn(T, S, g, pb):
    if not T.P[pb + EXTRA]:
        return False
    o = T.P[pb + B_LS]
    if S.ls[g, o + DUE]:
        S.ls[g, o + DUE] = 0
        S.ls[g, o + IN_EXTRA] = 1
        return True
    S.ls[g, o + IN_EXTRA] = 0
    return False


@kernel
def decision_open(T, S, g, pb, anchor):
    if anchor != A_END_TURN or not T.P[pb + ASK]:
        return False
    o = T.P[pb + B_LS]
    if S.ls[g, o + ASKED]:  # asked this turn: the decision is made
        S.ls[g, o + ASKED] = 0
        return False
    if not S.ls[g, o + DUE]:
        return False
    if S.gi[g, G_BAG_N] - S.gi[g, G_BAG_I] == 0:  # no tile left to play: the game ends instead
        S.ls[g, o + DUE] = 0
        return False
    S.gi[g, G_PLAYER] = S.gi[g, G_TURNP]
    S.gi[g, G_DPHASE] = T.P[pb + PH_EXTRA]
    S.ls[g, o + ASKED] = 1
    return True


@kernel
def decision_mask(T, S, g, pb, mask):
    st = T.P[pb + EXTRA_START]
    mask[st + TAKE] = 1
    mask[st + DECLINE] = 1
    return 0


@kernel
def decision_apply(T, S, g, pb, a):
    local = a - T.P[pb + EXTRA_START]
    if local != TAKE and local != DECLINE:
        return 0
    if local == DECLINE:
        S.ls[g, T.P[pb + B_LS] + DUE] = 0
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], local, 0, 0)
    return 1


@kernel
def decision_random(T, S, g, pb):
    return decision_apply(T, S, g, pb, T.P[pb + EXTRA_START] + np.random.randint(0, 2))


@kernel
def decision_apply_row(T, S, g, pb, a, b, c):
    if a != TAKE and a != DECLINE:
        return 0
    return decision_apply(T, S, g, pb, T.P[pb + EXTRA_START] + a)


@kernel
def decision_pass(T, S, g, pb):
    """Decline the extra turn (the phase's pass)."""
    return decision_apply(T, S, g, pb, T.P[pb + EXTRA_START] + DECLINE)


@kernel
def greedy_decision(T, S, g, pb, X, x):
    """heuristics.greedy_action: always take the extra turn."""
    return T.P[pb + EXTRA_START] + TAKE


# ---------------------------------------------------------------- observation
@kernel
def observe(T, S, g, pb, seat, board, glob):
    tp = pb + TABLE + T.P[pb + T_PLANES]
    cols = T.P[P_COLS]
    ch = T.P[pb + CH_MAP]
    oc = T.P[T.P[P_LAY] + LB_O_CONN]
    for cell in range(T.P[tp - 1]):
        v = T.P[tp + cell]
        if v == 0:
            continue
        row = cell // cols
        col = cell % cols
        board[ch, row, col] = v & 1
        board[ch + 1, row, col] = (v >> 1) & 1
        large = (v >> 2) & 3
        grp = (v >> 16) - 1
        if grp >= 0 and S.ls[g, oc + grp]:
            large = 2
        board[ch + 2, row, col] = large
        board[ch + 3, row, col] = (v >> 4) & 3
        board[ch + 4, row, col] = (v >> 6) & 3
        board[ch + 5, row, col] = (v >> 8) & 255


# ---------------------------------------------------------------- Python side
def _exp(rules: Any) -> Any:
    return rules.by_key[KEY]


def _draw_offset(rules: Any) -> int:
    """Numbers the plug-ins before this one draw at setup (their setup draws come first)."""
    from ...fast.seam import support

    n = 0
    for e in rules.expansions:
        if e.KEY == KEY:
            return n
        sup = support(e.KEY)
        if sup is not None and sup.setup_draws is not None:
            n += len(sup.setup_draws(rules, e, np.random.default_rng(0)))
    return n  # pragma: no cover - this plug-in is enabled


def params(rules: Any, exp: Any) -> dict[str, int]:
    o = exp.options
    first = exp.starts[0]
    coats = [c for c in exp.coats if c]
    towns = sorted(exp.towns)
    return {
        "start_tile": rules.tile_index[rules.start_tiles[exp.REQUIRES[0]]],
        "start_x": first.x, "start_y": first.y, "start_r": 0, "start_by_plugin": 1,
        "n_starts": len(exp.starts), "orient": ORIENTATIONS.index(o.start_orientation), "draw0": _draw_offset(rules),
        "penalty": int(o.town_penalty), "extra": int(o.town_extra_turn),
        "ask": int(o.town_extra_turn and o.town_extra_turn_optional), "road_bonus": int(o.town_road_bonus),
        "n_coats": len(coats), "t_towns": 0, "n_towns": len(towns), "t_starts": 2 * len(towns),
        "t_town_at": 2 * len(towns) + 2 * len(exp.starts),
        "t_coats_of": 2 * len(towns) + 2 * len(exp.starts) + _extent_cells(rules),
        "t_planes": 2 * len(towns) + 2 * len(exp.starts) + _extent_cells(rules) + len(exp.coats) + 1,
    }  # fmt: skip


def positions(encoder: Any) -> dict[str, int]:
    phases = list(encoder.rules.phases)
    ask = EXTRA_TURN_PHASE in phases
    return {
        "ph_extra": phases.index(EXTRA_TURN_PHASE) if ask else -1,
        "extra_start": encoder.codec.codecs[EXTRA_TURN_PHASE].start if ask else 0,
        "ch_map": list(encoder.channel_names).index(CHANNELS[0]),
    }


class _Board:
    connected_groups: frozenset[int] = frozenset()


class _Window:
    """What the observe part reads of its context: the window."""

    def __init__(self, x0: int, y0: int, rows: int, cols: int) -> None:
        self.x0, self.y0, self.rows, self.cols = x0, y0, rows, cols


def planes(encoder: Any) -> np.ndarray:
    """Per window cell (rows, then columns), the map's six channels as the observe part fills them on a
    board with no connected large city, packed (1 + 1 + 2 + 2 + 2 + 8 bits), with its group + 1 << 16."""
    rules = encoder.rules
    obs = Observation(rules, encoder.num_players)
    rows, cols = encoder.rows, encoder.cols
    x0, y0 = encoder.codec.origin
    board = np.zeros((len(CHANNELS), rows, cols), dtype=np.uint8)
    obs.fill_dynamic(_Board(), _Window(x0, y0, rows, cols), board)  # type: ignore[arg-type]
    b = board.astype(np.int64)
    packed = b[0] | b[1] << 1 | b[2] << 2 | b[3] << 4 | b[4] << 6 | b[5] << 8
    for g, cells in obs.group_cells.items():
        for x, y in cells:
            if 0 <= x - x0 < cols and 0 <= y - y0 < rows:
                packed[y - y0, x - x0] |= (g + 1) << 16
    return packed.reshape(-1)


def _extent_cells(rules: Any) -> int:
    x0, x1, y0, y1 = rules.layout.bounds
    return (x1 - x0 + 1) * (y1 - y0 + 1)


def table(encoder: Any) -> np.ndarray:
    """The town squares, the start squares, per cell
    of the board's extent (rows, then columns) 1 on a town, per printed piece its coats of arms, the number
    of window cells, then their packed planes (:func:`planes`)."""
    rules = encoder.rules
    exp = _exp(rules)
    out: list[int] = []
    for x, y in sorted(exp.towns):
        out += [x, y]
    for s in exp.starts:
        out += [s.x, s.y]
    p = planes(encoder)
    x0, x1, y0, y1 = rules.layout.bounds
    town_at = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.int64)
    for x, y in exp.towns:
        town_at[y - y0, x - x0] = 1
    coats_of = np.array(list(exp.coats), dtype=np.int64)
    return np.concatenate(
        [np.array(out, dtype=np.int64), town_at.reshape(-1), coats_of, np.array([len(p)], dtype=np.int64), p]
    )


def setup_draws(rules: Any, exp: Any, rng: Any) -> list[int]:
    """The numbers MapsGermany.setup draws (``start_orientation="random"``: one per start square, before
    the shuffle), as ``int(d * n)`` for n = 1..4 fitting rotations, 2 bits each."""
    if exp.options.start_orientation != "random":
        return []
    out = []
    for _ in exp.starts:
        d = float(rng.random())
        out.append(sum(int(d * n) << (2 * (n - 1)) for n in range(1, 5)))
    return out


def history_row(rules: Any, action: Any, tile_at: Any) -> tuple[int, int, int]:
    if type(action) is Pass:
        return DECLINE, 0, 0
    if type(action) is TakeExtraTurn:
        return TAKE, 0, 0
    raise IllegalActionError(f"the {EXTRA_TURN_PHASE} phase needs 'extra_turn' or 'pass', got {action!r}")


def history_action(rules: Any, a: int, b: int, c: int, tile_at: Any) -> Any:
    return TakeExtraTurn() if a == TAKE else Pass()


SUPPORT = FastSupport(
    hooks=frozenset(
        {
            "board_layout",
            "setup",
            "setup_from_bag",
            "tile_counts",
            "followers_per_player",
            "score_items",
            "after_placement",
            "next_player",
            "stages",
        }
    ),  # fmt: skip
    options=frozenset(
        {
            "map_file",
            "start_squares",
            "start_orientation",
            "followers",
            "tile_mix",
            "large_city_closed_edges",
            "town_extra_turn",
            "town_extra_turn_optional",
            "town_penalty",
            "town_road_bonus",
        }
    ),  # fmt: skip
    params=params,
    positions=positions,
    kernels={
        "setup": setup,
        "setup_from_bag": setup_from_bag,
        "score_items": score_items,
        "after_placement": after_placement,
        "extra_turn": extra_turn,
        "decision_open": decision_open,
        "decision_mask": decision_mask,
        "decision_apply": decision_apply,
        "decision_random": decision_random,
        "decision_apply_row": decision_apply_row,
        "decision_pass": decision_pass,
        "greedy_decision": greedy_decision,
        "observe": observe,
    },
    own=OWN,
    slots=3,
    awards=("town",),
    phases=(EXTRA_TURN_PHASE,),
    history_rows=lambda rules, exp: 1,  # the extra-turn decision, once per tile at most
    heuristics=True,  # greedy_decision: its heuristics part (take the extra turn)
    table=table,
    setup_draws=setup_draws,
    history_action=history_action,
    history_row=history_row,
)
