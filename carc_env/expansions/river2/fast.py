"""The River II in the compiled engine (:mod:`carc_env.fast`): its kernels.

The spring is the start tile at (0, 0) (engine parameters ``start_*``); with a
start layout it combines with (``River2.START_COMBINES``: the Count's block),
that plug-in lays the start and this one's ``setup`` lays the spring beside
it (own parameters ``spring_*``, after that plug-in's setup as the reference's
expansion order has it); the bag is built in Python by this
plug-in's own ``build_bag``.  Kernels:

* ``setup``: the spring (beside another start layout) and its open ends;
* ``placement_veto``: while river tiles remain, a land tile cannot be placed;
  a river tile must touch the river with exactly one river edge and make no
  immediate U-turn (:meth:`.rules.River2.placement_veto`); the first land tile
  drawn once none remains ends the river;
* ``after_placement``: the open ends, and the lake's extra turn;
* ``no_follower`` / ``extra_turn``: the lake takes no follower and gives its
  player another turn (``lake_extra_turn``);
* ``observe``: this plug-in's observe part (``river_end``, ``river_tiles_left``);
* ``order_unseen``: a search's reshuffle of the tiles left put back in the order everyone knows (the
  compiled tree search's redeal, :mod:`carc_env.fast.tree`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.tiles import EDGE_CODES, RIVER
from ...fast.kernels import DX, DY, G_BAG_I, G_BAG_N, G_CUR, G_NF, G_NPL, G_X0, G_Y0, put_tile
from ...fast.seam import B_LS, B_TILE, inline_kernel, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_COLS, P_GOFF, P_NTYPES, P_O_BAG, P_O_FMASK, P_O_REM, P_ROWS, TC_EC, TC_RIVER
from .rules import END_CITY, FORK, KEY, LAKE, SPRING, river_tile_set

OWN = ("lake_tile", "lake_extra_turn", "river_tiles", "ch_river_end", "g_river_tiles_left", "spring_tile",
       "spring_x", "spring_y", "after_first", "after_second")  # fmt: skip
LAKE_T, LAKE_EXTRA, RIVER_TOTAL, CH_END, G_LEFT, SPRING_T, SPRING_X, SPRING_Y, AFTER1, AFTER2 = own_positions(OWN)
# AFTER1, AFTER2: the start tiles of other plug-ins drawn first after the river (start_tile="after_river";
# -1: none), in the reference's order of moving them
ORDER = 0  # its tile column: the tile type's place in build_bag's order (ORDER_* below)
ORDER_LAND = 1000
DONE, EXTRA, NENDS, ENDS = range(4)  # its per-game integers: ENDS_CAP open ends (x, y, side, turn) from ENDS
ENDS_CAP = 8  # open river ends (the River II has at most 2 at a time)
RIVER_EDGE = EDGE_CODES["I"]


@kernel
def river_left(T, S, g, pb):
    """River tiles still to draw (0 once the river is done): RiverObservation._left."""
    if S.ls[g, T.P[pb + B_LS] + DONE]:
        return 0
    orem = T.P[P_O_REM]
    n = 0
    for t in range(T.P[P_NTYPES]):
        if T.tile[t, TC_RIVER]:
            n += S.ls[g, orem + t]
    return n


@kernel
def setup(T, S, g, pb):
    o = T.P[pb + B_LS]
    k = 0  # the spring: the start tile, or laid here beside another start layout
    if S.pl[g, 0, 2] != T.P[pb + SPRING_T]:
        put_tile(T, S, g, T.P[pb + SPRING_T], T.P[pb + SPRING_X], T.P[pb + SPRING_Y], 0)
        k = S.gi[g, G_NPL] - 1
    x, y, t0, r = S.pl[g, k, 0], S.pl[g, k, 1], S.pl[g, k, 2], S.pl[g, k, 3]
    j = 0
    for s in range(4):
        if T.tile[t0, TC_EC + 4 * r + s] == RIVER_EDGE:
            e = o + ENDS + 4 * j
            S.ls[g, e] = x + DX[s]
            S.ls[g, e + 1] = y + DY[s]
            S.ls[g, e + 2] = (s + 2) % 4
            S.ls[g, e + 3] = 0
            j += 1
    S.ls[g, o + NENDS] = j


@inline_kernel
def placement_veto(T, S, g, pb, t):
    """Inlined into the composed hook: once the river is done a land tile needs nothing, and a call into
    the body below (every array of the tables and the state passed by value) costs more than the check."""
    if T.tile[t, TC_RIVER] or not S.ls[g, T.P[pb + B_LS] + DONE]:
        river_veto(T, S, g, pb, t)


@kernel
def river_veto(T, S, g, pb, t):
    ls, tile = S.ls, T.tile
    o = T.P[pb + B_LS]
    nf = S.gi[g, G_NF]
    ofm = T.P[P_O_FMASK]
    if not tile[t, TC_RIVER]:
        if not ls[g, o + DONE]:
            if river_left(T, S, g, pb):
                for slot in range(nf):  # every river tile is placed before any other tile
                    ls[g, ofm + slot] = 0
                return
            ls[g, o + DONE] = 1
        return
    off = T.P[P_GOFF]
    oe = o + ENDS
    for slot in range(nf):
        m = ls[g, ofm + slot]
        if m == 0:
            continue
        x = S.fr[g, slot, 0]
        y = S.fr[g, slot, 1]
        for r in range(4):
            if not (m >> r) & 1:
                continue
            touching = 0
            entry = -1
            for s in range(4):
                if tile[t, TC_EC + 4 * r + s] == RIVER_EDGE and S.grid[g, y + DY[s] + off, x + DX[s] + off] >= 0:
                    touching += 1
                    entry = s
            ok = touching == 1
            if ok:
                before = 0  # the turn recorded at that open end (the last one listed wins, as in a dict)
                for e in range(ls[g, o + NENDS]):
                    if ls[g, oe + 4 * e] == x and ls[g, oe + 4 * e + 1] == y and ls[g, oe + 4 * e + 2] == entry:
                        before = ls[g, oe + 4 * e + 3]
                for s in range(4):
                    if s != entry and tile[t, TC_EC + 4 * r + s] == RIVER_EDGE:
                        turn = (s - (entry + 2)) % 4
                        if turn and turn == before:
                            ok = False
            if not ok:
                m &= ~(1 << r)
        ls[g, ofm + slot] = m


@inline_kernel
def after_placement(T, S, g, pb, t, x, y, r):
    """Inlined into the composed hook: a land tile changes no open end (no call into the body)."""
    if T.tile[t, TC_RIVER]:
        river_placed(T, S, g, pb, t, x, y, r)


@kernel
def river_placed(T, S, g, pb, t, x, y, r):
    ls, tile = S.ls, T.tile
    o = T.P[pb + B_LS]
    off = T.P[P_GOFF]
    oe = o + ENDS
    entry = -1
    for s in range(4):
        if tile[t, TC_EC + 4 * r + s] == RIVER_EDGE and S.grid[g, y + DY[s] + off, x + DX[s] + off] >= 0:
            entry = s
            break
    j = 0
    for e in range(ls[g, o + NENDS]):
        if not (ls[g, oe + 4 * e] == x and ls[g, oe + 4 * e + 1] == y):
            for q in range(4):
                ls[g, oe + 4 * j + q] = ls[g, oe + 4 * e + q]
            j += 1
    for s in range(4):
        if s != entry and tile[t, TC_EC + 4 * r + s] == RIVER_EDGE and j < ENDS_CAP:
            ls[g, oe + 4 * j] = x + DX[s]
            ls[g, oe + 4 * j + 1] = y + DY[s]
            ls[g, oe + 4 * j + 2] = (s + 2) % 4
            ls[g, oe + 4 * j + 3] = (s - (entry + 2)) % 4
            j += 1
    ls[g, o + NENDS] = j
    if t == T.P[pb + LAKE_T] and T.P[pb + LAKE_EXTRA]:
        ls[g, o + EXTRA] = 1


@kernel
def no_follower(T, S, g, pb):
    return T.P[pb + LAKE_EXTRA] != 0 and S.pl[g, S.gi[g, G_NPL] - 1, 2] == T.P[pb + LAKE_T]


@kernel
def extra_turn(T, S, g, pb):
    o = T.P[pb + B_LS] + EXTRA
    if S.ls[g, o]:
        S.ls[g, o] = 0
        return True
    return False


@kernel
def observe(T, S, g, pb, seat, board, glob):
    ls = S.ls
    o = T.P[pb + B_LS]
    left = river_left(T, S, g, pb)
    cur = S.gi[g, G_CUR]
    if ls[g, o + NENDS] and not ls[g, o + DONE] and ((cur >= 0 and T.tile[cur, TC_RIVER]) or left):
        oe = o + ENDS
        off = T.P[P_GOFF]
        rows = T.P[P_ROWS]
        cols = T.P[P_COLS]
        x0 = S.gi[g, G_X0]
        y0 = S.gi[g, G_Y0]
        for e in range(ls[g, o + NENDS]):
            x = ls[g, oe + 4 * e]
            y = ls[g, oe + 4 * e + 1]
            col = x - x0
            row = y - y0
            if S.grid[g, y + off, x + off] < 0 and 0 <= col < cols and 0 <= row < rows:
                board[T.P[pb + CH_END], row, col] = 1
    glob[T.P[pb + G_LEFT]] = left / T.P[pb + RIVER_TOTAL]


@kernel
def _to_front(S, g, ob, lo, hi, t):
    """Move the first copy of tile type t among the land tiles (from ``lo``) to position ``lo``."""
    for i in range(lo, hi):
        if S.ls[g, ob + i] == t:
            for j in range(i, lo, -1):
                S.ls[g, ob + j] = S.ls[g, ob + j - 1]
            S.ls[g, ob + lo] = t
            return


@kernel
def order_unseen(T, S, g, pb):
    """:meth:`.rules.River2.order_unseen` on the tiles left in game g (a search's redeal shuffled them): a
    stable sort by ``build_bag``'s order (the fork, the other river tiles, the end city and the lake last,
    then the land tiles), then, until the river is done (``start_tile="after_river"``), the start tiles
    the spring replaced in front of the land tiles.  Once the river is done nothing is left to order."""
    if S.ls[g, T.P[pb + B_LS] + DONE]:
        return
    ob = T.P[P_O_BAG]
    lo = S.gi[g, G_BAG_I]
    hi = S.gi[g, G_BAG_N]
    c = T.P[pb + B_TILE] + ORDER
    for i in range(lo + 1, hi):  # insertion sort, stable: few river tiles among the land tiles
        t = S.ls[g, ob + i]
        k = T.tile[t, c]
        j = i - 1
        while j >= lo and T.tile[S.ls[g, ob + j], c] > k:
            S.ls[g, ob + j + 1] = S.ls[g, ob + j]
            j -= 1
        S.ls[g, ob + j + 1] = t
    land = lo
    while land < hi and T.tile[S.ls[g, ob + land], c] < ORDER_LAND:
        land += 1
    for a in (T.P[pb + AFTER1], T.P[pb + AFTER2]):
        if a >= 0:
            _to_front(S, g, ob, land, hi, a)


def _beside(rules: Any, exp: Any) -> tuple[int, int] | None:
    """The spring's cell beside another enabled start layout (River2.setup), None: it is the start tile."""
    cells = [cell for key, cell in exp.START_COMBINES.items() if key in rules.by_key]
    return cells[0] if cells else None


def params(rules: Any, exp: Any) -> dict[str, int]:
    river_tiles = sum(t.count for t in rules.tiles if any(s.kind == RIVER for s in t.segments))
    spring = rules.tile_index[SPRING]
    beside = _beside(rules, exp)
    if beside is None:
        start = {"start_tile": spring, "start_x": 0, "start_y": 0, "start_r": 0}  # River2.setup
    else:
        start = {}  # the other layout's plug-in lays the start tile
    x, y = beside or (0, 0)
    return {
        **start, "spring_tile": spring, "spring_x": x, "spring_y": y,
        "river": 1,
        "lake_tile": rules.tile_index[LAKE],
        "lake_extra_turn": 1 if exp.options.lake_extra_turn else 0,
        "river_tiles": max(1, river_tiles),
        **_after(rules, exp),
    }  # fmt: skip


def _after(rules: Any, exp: Any) -> dict[str, int]:
    """The start tiles ``order_unseen`` moves in front of the land tiles (``_river_order``), -1 for none."""
    rivers = river_tile_set(rules)
    after = [rules.tile_index[start] for k, start in rules.start_tiles.items() if k != KEY]
    after = [s for s in after if s not in rivers] if exp.options.start_tile == "after_river" else []
    if len(after) > 2:  # pragma: no cover - no built-in plug-in has more start tiles
        raise ValueError(f"the compiled river orders two start tiles after it, this rule set has {len(after)}")
    after += [-1] * (2 - len(after))
    return {"after_first": after[0], "after_second": after[1]}


def tile_columns(rules: Any, exp: Any = None) -> np.ndarray:
    """Per tile type its place in ``build_bag``'s order (``ORDER``): the keys of :func:`build_bags`."""
    return _order_keys(rules, exp)[:, None].astype(np.int16)


def _order_keys(rules: Any, exp: Any) -> np.ndarray:
    rivers = river_tile_set(rules)
    ids = [t.id for t in rules.tiles]
    end_city_last = exp.options.end_city_last if exp is not None else rules.by_key[KEY].options.end_city_last
    last_ids = (END_CITY, LAKE) if end_city_last else (LAKE,)
    key = np.full(len(ids), ORDER_LAND, dtype=np.int64)  # land tiles
    for t in rivers:
        key[t] = 1  # river tiles between the fork and the last ones
    for t, i in enumerate(ids):
        if i == FORK:
            key[t] = 0
        elif i in last_ids:
            key[t] = 2 + last_ids.index(i)
    return key


def positions(encoder: Any) -> dict[str, int]:
    return {
        "ch_river_end": list(encoder.channel_names).index("river_end"),
        "g_river_tiles_left": list(encoder.global_names).index("river_tiles_left"),
    }


def setup_tiles(rules: Any, exp: Any) -> list[int]:
    return [] if _beside(rules, exp) is None else [rules.tile_index[SPRING]]


def build_bags(rules: Any, exp: Any, bags: np.ndarray) -> np.ndarray:
    """:meth:`.rules.River2.build_bag` on every row of ``bags``: a stable sort by a key per tile type (the
    fork, the other river tiles, the end city and the lake last, then the land tiles), the start tile the
    spring replaced moved to the front of the land tiles (``start_tile="after_river"``)."""
    rivers = river_tile_set(rules)
    keys = _order_keys(rules, exp)[bags]
    if exp.options.start_tile == "after_river":
        front = 999
        for k, start in rules.start_tiles.items():
            s = rules.tile_index[start]
            if k == KEY or s in rivers:
                continue
            hit = bags == s
            rows = np.flatnonzero(hit.any(axis=1))
            keys[rows, hit[rows].argmax(axis=1)] = front  # the first copy, in front of the land tiles
            front -= 1  # a later start tile goes in front of an earlier one (list.insert(0, ...))
    return np.take_along_axis(bags, np.argsort(keys, axis=1, kind="stable"), axis=1)


SUPPORT = FastSupport(
    hooks=frozenset(
        {"setup", "build_bag", "order_unseen", "placement_veto", "after_placement", "follower_spots", "next_player"}
    ),
    options=frozenset({"end_city_last", "start_tile", "lake_extra_turn"}),
    params=params,
    positions=positions,
    kernels={
        "setup": setup,
        "placement_veto": placement_veto,
        "after_placement": after_placement,
        "no_follower": no_follower,
        "extra_turn": extra_turn,
        "observe": observe,
        "order_unseen": order_unseen,
    },  # fmt: skip
    own=OWN,
    tile_columns=tile_columns,
    slots=ENDS + 4 * ENDS_CAP,
    setup_tiles=setup_tiles,
    build_bags=build_bags,
)
