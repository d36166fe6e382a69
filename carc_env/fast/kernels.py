"""Numba kernels of the compiled engine: the rules of :mod:`carc_env.core.game` over arrays.

Contract
--------
Every function here works on game ``g`` of a batch: the state is a
:data:`State` of arrays with a leading game axis, the rules' constants a
:class:`~carc_env.fast.tables.Tables` built from the Python rule set.  The
kernels reproduce the reference engine step for step, including the parts no
rule fixes but the observations show: frontier slots are appended and
swap-removed in the same order (the window's re-centring looks at the first
legal placement), union-find roots are chosen by the same rule (the larger
tile set wins), completions are detected and scored in the same order, and
floating-point features are computed with the same operations in the same
precision.  ``tests/fast/test_fast_differential.py`` checks all of it against the
reference, observation bytes included.

Plug-ins: the engine calls the enabled plug-ins' kernels at the compiled hooks
of :data:`carc_env.fast.seam.HOOKS`, through ``H``, the composed module
(:func:`carc_env.fast.seam.engine` sets it); nothing here names a plug-in.
A plug-in's decision stages run as the engine's phase ``PH_PLUG``: after the
follower decision :func:`advance` walks the core's stage anchors (``A_*``) in
turn order, asking the plug-ins for a decision at each (``decision_open``),
and a decision applied resumes the walk where it stopped (:func:`apply_decision`).
Followers on a feature without a segment (the core's guests) are kept here
(:func:`add_guest`): majorities, ``remove_followers`` and the observation count them.

Entry points (all ``nogil``; the batch wrapper runs them on several threads
over disjoint game ranges; called from Python through the composed module,
which caches them on disk):

* :func:`reset_range`: start games from their prepared draw orders;
* :func:`step_one` / :func:`step_range`: decode and apply one flat action per
  game, run the automatic stages up to the next decision, compute rewards;
  ``step_range`` optionally starts the next game of a finished one at once
  (``auto_reset``) and writes the acting seat's observation;
* :func:`observe_range` / :func:`masks_range`: observations and masks;
* :func:`play_random`: whole games with uniformly random legal decisions and
  no observations (the "engine alone" benchmark).

State layout
------------
``gi[g, G_*]``: per-game integers (counters, phase, players, bounds, window);
``grid[g, y + off, x + off]``: -1 empty, ``k >= 0`` placement ``k``, ``<= -2``
frontier slot ``-(v + 2)``; ``pl[g, k]``: placement ``k`` as (x, y, tile,
rotation, first node); ``fr[g, slot]``: frontier cell (x, y, pattern);
``nd[g, node, N_*]``: union-find node data; ``ls[g]``: the per-game lists
(legal rotations per frontier slot, followers on the board, spots, scores,
supplies, the draw order, the history, the score log, ...) at the offsets
``T.P[P_O_*]``, then the enabled plug-ins' integers.  Few arrays on purpose: a kernel call from Python unboxes
each one, and the kernels run without reference counting (``_nrt=False``:
they never allocate), which would otherwise cost more than the rules.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..core.config import PATTERN_BITS
from .atomic import take_chunk
from .printed import (
    ANY_CODE,
    CL_PLAYABLE,
    CL_VOID,
    LB_NPIECES,
    LB_O_CONN,
    LB_OX,
    LB_OY,
    LB_PIECES,
    NEUTRAL_CODE,
    PIECE_W,
    building_target,
    cell_class,
    cell_group,
    cell_row,
    is_square,
)
from .rng import WORDS as RNG_WORDS
from .seam import inline_kernel, kernel
from .tables import (
    ENT_CAP,
    F_INV_FOLLOWERS,
    F_REWARD_SCALE,
    FCITY_CAP,
    HIST_W,
    LINK_CAP,
    LOG_W,
    P_CH_BNB,
    P_CH_FKIND,
    P_CH_FOLLOWERS,
    P_CH_FRONTIER,
    P_CH_LAST,
    P_CH_LEGAL,
    P_CH_OPEN,
    P_CH_SIZE,
    P_COLS,
    P_FOL_START,
    P_FOLLOWERS,
    P_G_BAG,
    P_G_CLIPPED,
    P_G_DECIDING,
    P_G_DRAWN,
    P_G_LEAD,
    P_G_LEGAL,
    P_G_PHASE,
    P_G_PLACED,
    P_G_PLACED_ROT,
    P_G_PROGRESS,
    P_G_REMAINING,
    P_G_SCORE,
    P_G_SUPPLY,
    P_G_TURN,
    P_GOFF,
    P_HCAP,
    P_LAY,
    P_LCAP,
    P_LS_LEN,
    P_MAXSEG,
    P_NDRAWS,
    P_NPLAYERS,
    P_NS,
    P_NT,
    P_NTYPES,
    P_O_BAG,
    P_O_BEFORE,
    P_O_CNT,
    P_O_COMP,
    P_O_FL,
    P_O_FMASK,
    P_O_GUEST,
    P_O_HIST,
    P_O_LINKS,
    P_O_LOG,
    P_O_MARK,
    P_O_NEXTBAG,
    P_O_NEXTRNG,
    P_O_PEND,
    P_O_REM,
    P_O_RNG,
    P_O_SCORES,
    P_O_SPOTS,
    P_O_SUPPLY,
    P_PH_FOLLOWER,
    P_PH_OVER,
    P_PH_TILE,
    P_PLUG_LS,
    P_REWARD,
    P_ROWS,
    P_START_PLUG,
    P_START_R,
    P_START_T,
    P_START_X,
    P_START_Y,
    P_TILE_N,
    P_TILE_ONCE,
    P_TOTAL,
    TC_BSEG,
    TC_CE,
    TC_EC,
    TC_ENT_BITS,
    TC_ENT_CH,
    TC_ENT_N,
    TC_ENT_SEG,
    TC_FCITY,
    TC_HA,
    TC_NSEG,
    TC_OPEN0,
    TC_OS_N,
    TC_OS_SEG,
    TC_OS_SIDE,
    TC_PEN0,
    TC_SKIND,
)

State = namedtuple("State", "gi grid pl fr nd ls")
"""Mutable per-game arrays, leading axis = game (layout in the module docstring)."""

# ---- gi: per-game integers
(G_NPL, G_NNODES, G_NF, G_NFL, G_BAG_I, G_BAG_N, G_TURNP, G_PLAYER, G_PHASE, G_CUR, G_TURN, G_NSPOTS,
 G_NPEND, G_NCOMP, G_MINX, G_MAXX, G_MINY, G_MAXY, G_X0, G_Y0, G_INSIDE, G_OUTSIDE, G_NLEGAL, G_NHIST,
 G_NLOG, G_STEPS, G_STAMP, G_NEXTBAG_N, G_DISCARDS, G_ERR, G_ENDING,
 G_DPLUG, G_DPHASE, G_ANCHOR, G_NGUEST, G_DROPPED, G_LEN) = range(37)  # fmt: skip
# G_DPLUG: the plug-in whose decision is open (phase PH_PLUG), G_DPHASE: its phase's position in the
# encoder's phases, G_ANCHOR: where in the turn it opened (A_*); G_NGUEST: guests (followers on a
# feature without a segment, pairs (node, owner) at T.P[P_O_GUEST]); G_DROPPED: legal moves of the open
# plug-in decision its action range cannot express (the last mask written)
# ---- nd: per-node fields
(N_PARENT, N_KIND, N_PL, N_OPEN, N_PEN, N_TCOUNT, N_NCOUNT, N_NEXT, N_DONE, N_OCC, N_OWNER, N_NB, N_SCRATCH,
 N_BITS, N_LEN) = range(15)  # fmt: skip
# N_TCOUNT: distinct tiles of a city/road root; N_NCOUNT: its segments; N_NEXT: circular list of a
# feature's members; N_OCC: followers on a root; N_OWNER: the follower's owner on a node (-1);
# N_NB: filled neighbours of a building; N_SCRATCH: stamps; N_BITS: owners on a root (observations).
# ---- phases
PH_TILE, PH_FOLLOWER, PH_OVER, PH_PLUG = 0, 1, 2, 3  # PH_PLUG: a plug-in's decision (G_DPLUG)
# ---- anchors of plug-in decisions (the core's stage anchors, carc_env.core.stages.ANCHORS, in turn order)
A_AFTER_FOLLOWER, A_BEFORE_SCORE, A_AFTER_SCORE, A_END_TURN, A_BEFORE_FINAL = range(5)
# ---- hist rows: (kind, a, b, c)
H_TILE, H_FOLLOWER, H_PASS, H_PLUG = 0, 1, 2, 3  # H_PLUG + i: a decision of plug-in i (its own a, b, c)
# ---- log rows: (what, final, a, b, value, players bitmask); what = feature kind, or a plug-in's award code
# ---- error codes in gi[G_ERR]
ERR_NONE, ERR_ILLEGAL, ERR_OVER = 0, 1, 2

CITY, ROAD, FIELD, BUILDING, RIVER = 0, 1, 2, 3, 4
DX = np.array([0, 1, 0, -1], dtype=np.int64)
DY = np.array([-1, 0, 1, 0], dtype=np.int64)
N8X = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)
N8Y = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
PB = PATTERN_BITS
EMPTY = -1

# Everything here is compiled into the composed module's entry points (seam.kernel: no NRT, no CPython
# wrapper, not cached alone, since the kernels it calls depend on the composed plug-ins); tiny helpers
# are inlined by LLVM wherever they are called (seam.inline_kernel: typed once, not once per call site).

H: Any = None
"""The composed module: the compiled hooks (``H.after_placement(T, S, g, ...)``...) calling the enabled
plug-ins' kernels.  :func:`carc_env.fast.seam.engine` sets it before anything here compiles."""


# ============================================================== union-find
@kernel
def find(nd, g, x):
    """Root of node x, with path halving (as the reference's Game.find; roots never change by it)."""
    while nd[g, x, N_PARENT] != x:
        p = nd[g, nd[g, x, N_PARENT], N_PARENT]
        nd[g, x, N_PARENT] = p
        x = p
    return x


@kernel
def union(T, S, g, a, b):
    """The reference's Game.union (carc_env.core.features): the root with more distinct tiles (cities, roads) stays root."""
    nd, ls = S.nd, S.ls
    a = find(nd, g, a)
    b = find(nd, g, b)
    if a == b:
        return a
    k = nd[g, a, N_KIND]
    if k == CITY or k == ROAD:
        if nd[g, a, N_TCOUNT] < nd[g, b, N_TCOUNT]:
            a, b = b, a
        # distinct tiles of the union: a's tiles marked, b's unmarked tiles counted
        stamp = S.gi[g, G_STAMP] + 1
        S.gi[g, G_STAMP] = stamp
        om = T.P[P_O_MARK]
        cnt = nd[g, a, N_TCOUNT]
        x = a
        while True:
            ls[g, om + nd[g, x, N_PL]] = stamp
            x = nd[g, x, N_NEXT]
            if x == a:
                break
        x = b
        while True:
            t = nd[g, x, N_PL]
            if ls[g, om + t] != stamp:
                ls[g, om + t] = stamp
                cnt += 1
            x = nd[g, x, N_NEXT]
            if x == b:
                break
        nd[g, a, N_TCOUNT] = cnt
        nd[g, a, N_OPEN] += nd[g, b, N_OPEN]
        nd[g, a, N_PEN] += nd[g, b, N_PEN]
    nd[g, b, N_PARENT] = a
    nd[g, a, N_OCC] += nd[g, b, N_OCC]
    nd[g, b, N_OCC] = 0
    nd[g, a, N_NCOUNT] += nd[g, b, N_NCOUNT]
    na = nd[g, a, N_NEXT]  # splice the circular member lists
    nd[g, a, N_NEXT] = nd[g, b, N_NEXT]
    nd[g, b, N_NEXT] = na
    return a


@inline_kernel
def add_link(T, S, g, seg, node):
    """A ``placement_links`` kernel's answer: segment ``seg`` of the tile being placed joins node's feature."""
    o = T.P[P_O_LINKS]
    n = S.ls[g, o]
    if n < LINK_CAP:
        S.ls[g, o + 1 + 2 * n] = seg
        S.ls[g, o + 2 + 2 * n] = node
        S.ls[g, o] = n + 1


@kernel
def placement_links(T, S, g, t, x, y, r):
    """The links placing tile ``t`` at (x, y) in rotation r would make (``S.ls[g, T.P[P_O_LINKS]]``: their
    count, then (segment, node) pairs); returns the count."""
    S.ls[g, T.P[P_O_LINKS]] = 0
    H.placement_links(T, S, g, t, x, y, r)
    return S.ls[g, T.P[P_O_LINKS]]


@inline_kernel
def counts_as_completed(T, S, g, root):
    """Whether rules that count or compare completed features count ``root`` (Game.counts_as_completed)."""
    return not H.uncounted_completion(T, S, g, root)


# ============================================================== board
@inline_kernel
def frontier_require(T, S, g, x, y, side, code):
    off = T.P[P_GOFF]
    v = S.grid[g, y + off, x + off]
    if v == EMPTY:
        slot = S.gi[g, G_NF]
        S.fr[g, slot, 0] = x
        S.fr[g, slot, 1] = y
        pat = code << (PB * side)
        lay = T.P[P_LAY]
        if lay:  # a printed board: what the printed pieces around the cell require
            c = cell_row(T, lay, x, y)
            if c >= 0:
                pat |= T.P[c + 1]
        S.fr[g, slot, 2] = pat
        S.grid[g, y + off, x + off] = -2 - slot
        S.gi[g, G_NF] = slot + 1
    else:
        S.fr[g, -2 - v, 2] |= code << (PB * side)


@kernel
def put_tile(T, S, g, t, x, y, r):
    """The reference's Game.put_tile (carc_env.core.board): nodes, unions with the neighbours, frontier, buildings."""
    place(T, S, g, t, x, y, r, 0)  # an integer, not a boolean constant: one compilation for both callers


@kernel
def place(T, S, g, t, x, y, r, printed):
    """:func:`put_tile`; ``printed`` (1, else 0): a printed piece of the board laid at setup (it makes no
    cell playable and connects nothing; an integer, where a boolean constant would compile this kernel once
    per value, for one branch).  On a printed board (``T.P[P_LAY]``, :mod:`carc_env.fast.printed`) only
    playable squares join the frontier, a side facing void or a neutral printed edge closes the city or
    road running into it, a tile next to a printed group (a large city) connects it, and buildings count
    only squares, up to the squares around them."""
    gi, nd, ls, tile = S.gi, S.nd, S.ls, T.tile
    off = T.P[P_GOFF]
    lay = T.P[P_LAY]
    k = gi[g, G_NPL]
    base = gi[g, G_NNODES]
    n = tile[t, TC_NSEG]
    for i in range(n):
        node = base + i
        kind = tile[t, TC_SKIND + i]
        nd[g, node, N_PARENT] = node
        nd[g, node, N_KIND] = kind
        nd[g, node, N_PL] = k
        nd[g, node, N_OPEN] = tile[t, TC_OPEN0 + i]
        nd[g, node, N_PEN] = tile[t, TC_PEN0 + i]
        nd[g, node, N_TCOUNT] = 1 if (kind == CITY or kind == ROAD) else 0
        nd[g, node, N_NCOUNT] = 1
        nd[g, node, N_NEXT] = node
        nd[g, node, N_DONE] = 0
        nd[g, node, N_OCC] = 0
        nd[g, node, N_OWNER] = -1
        nd[g, node, N_NB] = 0
        nd[g, node, N_SCRATCH] = 0
        nd[g, node, N_BITS] = 0
    gi[g, G_NNODES] = base + n
    S.pl[g, k, 0] = x
    S.pl[g, k, 1] = y
    S.pl[g, k, 2] = t
    S.pl[g, k, 3] = r
    S.pl[g, k, 4] = base
    gi[g, G_NPL] = k + 1
    v = S.grid[g, y + off, x + off]
    slot = -2 - v if v <= -2 else -1
    S.grid[g, y + off, x + off] = k
    if k == 0 and lay:  # a printed board's bounds start at its first piece
        gi[g, G_MINX] = x
        gi[g, G_MAXX] = x
        gi[g, G_MINY] = y
        gi[g, G_MAXY] = y
    elif x < gi[g, G_MINX]:
        gi[g, G_MINX] = x
    elif x > gi[g, G_MAXX]:
        gi[g, G_MAXX] = x
    if y < gi[g, G_MINY]:
        gi[g, G_MINY] = y
    elif y > gi[g, G_MAXY]:
        gi[g, G_MAXY] = y
    for s in range(4):
        nx = x + DX[s]
        ny = y + DY[s]
        o = (s + 2) & 3
        nk = S.grid[g, ny + off, nx + off]
        if nk < 0:
            if lay == 0:
                frontier_require(T, S, g, nx, ny, o, np.int64(tile[t, TC_EC + 4 * r + s]))
            else:
                cls = cell_class(T, lay, nx, ny)
                if cls == CL_PLAYABLE:
                    if not printed:
                        frontier_require(T, S, g, nx, ny, o, np.int64(tile[t, TC_EC + 4 * r + s]))
                elif cls == CL_VOID:  # a border (sea, clouds) closes what runs into it
                    c = tile[t, TC_CE + 4 * r + s]
                    if c >= 0 and tile[t, TC_SKIND + c] != RIVER:
                        nd[g, find(nd, g, base + c), N_OPEN] -= 1
            continue
        nt = S.pl[g, nk, 2]
        nr = S.pl[g, nk, 3]
        nbase = S.pl[g, nk, 4]
        c = tile[t, TC_CE + 4 * r + s]
        if c >= 0 and tile[t, TC_SKIND + c] != RIVER:
            nc = tile[nt, TC_CE + 4 * nr + o]
            if nc >= 0:
                root = union(T, S, g, base + c, nbase + nc)
                nd[g, root, N_OPEN] -= 2
            else:  # a neutral printed edge closes it
                nd[g, find(nd, g, base + c), N_OPEN] -= 1
        hl = tile[t, TC_HA + 8 * r + 2 * s]
        if hl >= 0:
            nh = tile[nt, TC_HA + 8 * nr + 2 * o + 1]
            if nh >= 0:
                union(T, S, g, base + hl, nbase + nh)
        hr = tile[t, TC_HA + 8 * r + 2 * s + 1]
        if hr >= 0:
            nh = tile[nt, TC_HA + 8 * nr + 2 * o]
            if nh >= 0:
                union(T, S, g, base + hr, nbase + nh)
    if slot >= 0:  # the reference's _frontier_remove: the last slot moves into the freed one
        last = gi[g, G_NF] - 1
        if slot != last:
            lx = S.fr[g, last, 0]
            ly = S.fr[g, last, 1]
            S.fr[g, slot, 0] = lx
            S.fr[g, slot, 1] = ly
            S.fr[g, slot, 2] = S.fr[g, last, 2]
            S.grid[g, ly + off, lx + off] = -2 - slot
        gi[g, G_NF] = last
    # buildings: neighbours of placed buildings, then the placed tile's own (on a printed board: squares only)
    if lay == 0 or is_square(T, lay, x, y):
        op = T.P[P_O_PEND]
        for j in range(8):
            nk = S.grid[g, y + N8Y[j] + off, x + N8X[j] + off]
            if nk >= 0:
                b = tile[S.pl[g, nk, 2], TC_BSEG]
                if b >= 0:
                    node = S.pl[g, nk, 4] + b
                    nd[g, node, N_NB] += 1
                    if nd[g, node, N_NB] == building_target(T, lay, x + N8X[j], y + N8Y[j]):
                        ls[g, op + gi[g, G_NPEND]] = node
                        gi[g, G_NPEND] += 1
        b = tile[t, TC_BSEG]
        if b >= 0:
            cnt = 0
            for j in range(8):
                if S.grid[g, y + N8Y[j] + off, x + N8X[j] + off] >= 0 and (
                    lay == 0 or is_square(T, lay, x + N8X[j], y + N8Y[j])
                ):
                    cnt += 1
            node = base + b
            nd[g, node, N_NB] = cnt
            if cnt >= building_target(T, lay, x, y):
                ls[g, op + gi[g, G_NPEND]] = node
                gi[g, G_NPEND] += 1
    if lay and not printed:  # printed groups the tile touches join the play area, in side order
        for s in range(4):
            grp = cell_group(T, lay, x + DX[s], y + DY[s])
            if grp >= 0 and S.ls[g, T.P[lay + LB_O_CONN] + grp] == 0:
                connect_group(T, S, g, lay, grp)


@kernel
def connect_group(T, S, g, lay, grp):
    """The reference's Board._connect_group: printed group ``grp`` (a large city) joins the play area; the
    empty playable squares next to its pieces join the frontier, requiring the pieces' edges."""
    S.ls[g, T.P[lay + LB_O_CONN] + grp] = 1
    off = T.P[P_GOFF]
    o = lay + T.P[lay + LB_PIECES]
    for i in range(T.P[lay + LB_NPIECES]):
        row = o + PIECE_W * i
        if T.P[row + 4] != grp:
            continue
        t = T.P[row]
        px = T.P[row + 1]
        py = T.P[row + 2]
        r = T.P[row + 3]
        for s in range(4):
            nx = px + DX[s]
            ny = py + DY[s]
            if cell_class(T, lay, nx, ny) == CL_PLAYABLE and S.grid[g, ny + off, nx + off] < 0:
                code = np.int64(T.tile[t, TC_EC + 4 * r + s])
                frontier_require(T, S, g, nx, ny, (s + 2) & 3, ANY_CODE if code == NEUTRAL_CODE else code)


@kernel
def mark_closed(T, S, g, k):
    """The reference's Game.mark_closed (setup on a printed board): the cities and roads of placement ``k``
    already closed are completed (nobody can occupy them; nothing is scored)."""
    t = S.pl[g, k, 2]
    base = S.pl[g, k, 4]
    for i in range(T.tile[t, TC_NSEG]):
        kind = T.tile[t, TC_SKIND + i]
        if kind == CITY or kind == ROAD:
            root = find(S.nd, g, base + i)
            if S.nd[g, root, N_OPEN] == 0:
                S.nd[g, root, N_DONE] = 1


@kernel
def lay_printed(T, S, g):
    """The reference's Board.lay_printed: every printed piece of the board, piece ``i`` as placement ``i``."""
    lay = T.P[P_LAY]
    o = lay + T.P[lay + LB_PIECES]
    for i in range(T.P[lay + LB_NPIECES]):
        row = o + PIECE_W * i
        place(T, S, g, T.P[row], T.P[row + 1], T.P[row + 2], T.P[row + 3], 1)
        mark_closed(T, S, g, S.gi[g, G_NPL] - 1)


# ============================================================== scoring
@inline_kernel
def log_row(T, S, g, what, final, a, b, value, players):
    i = S.gi[g, G_NLOG]
    if i < T.P[P_LCAP]:
        o = T.P[P_O_LOG] + LOG_W * i
        S.ls[g, o] = what
        S.ls[g, o + 1] = final
        S.ls[g, o + 2] = a
        S.ls[g, o + 3] = b
        S.ls[g, o + 4] = value
        S.ls[g, o + 5] = players
        S.gi[g, G_NLOG] = i + 1


@inline_kernel
def field_city(T, S, g, x, j):
    """Root of the ``j``-th city that field node ``x`` touches on its tile, -1 past the last."""
    k = S.nd[g, x, N_PL]
    base = S.pl[g, k, 4]
    c = T.tile[S.pl[g, k, 2], TC_FCITY + FCITY_CAP * (x - base) + j]
    return -1 if c < 0 else find(S.nd, g, base + c)


@kernel
def field_city_counts(T, S, g, root):
    """(completed, all) distinct cities the field ``root`` borders (the completed ones are the reference's
    feature_value for fields; the action features read both)."""
    nd = S.nd
    stamp = S.gi[g, G_STAMP] + 1
    S.gi[g, G_STAMP] = stamp
    done = 0
    total = 0
    x = root
    while True:
        for j in range(FCITY_CAP):
            cr = field_city(T, S, g, x, j)
            if cr < 0:
                break
            if nd[g, cr, N_SCRATCH] != stamp:
                nd[g, cr, N_SCRATCH] = stamp
                total += 1
                if nd[g, cr, N_DONE]:
                    done += 1
        x = nd[g, x, N_NEXT]
        if x == root:
            break
    return done, total


@kernel
def field_borders(T, S, g, root, city):
    """Whether the field ``root`` borders the city whose root is ``city``."""
    x = root
    while True:
        for j in range(FCITY_CAP):
            cr = field_city(T, S, g, x, j)
            if cr < 0:
                break
            if cr == city:
                return True
        x = S.nd[g, x, N_NEXT]
        if x == root:
            return False


@kernel
def tagged_segment(T, S, g, root, col):
    """Whether a segment of feature ``root`` has its bit set in the tile column ``col`` (a plug-in's
    bitmask of tagged segments per tile type)."""
    nd = S.nd
    x = root
    while True:
        k = nd[g, x, N_PL]
        if (T.tile[S.pl[g, k, 2], col] >> (x - S.pl[g, k, 4])) & 1:
            return True
        x = nd[g, x, N_NEXT]
        if x == root:
            return False


@kernel
def mark_tiles(T, S, g, root, plane, add):
    """On observation ``plane``, at every window cell holding a tile of feature ``root`` (each tile once):
    1 more (``add``) or 1."""
    nd = S.nd
    stamp = S.gi[g, G_STAMP] + 1
    S.gi[g, G_STAMP] = stamp
    om = T.P[P_O_MARK]
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    x0 = S.gi[g, G_X0]
    y0 = S.gi[g, G_Y0]
    x = root
    while True:
        k = nd[g, x, N_PL]
        if S.ls[g, om + k] != stamp:
            S.ls[g, om + k] = stamp
            col = S.pl[g, k, 0] - x0
            row = S.pl[g, k, 1] - y0
            if 0 <= col < cols and 0 <= row < rows:
                if add:
                    plane[row, col] += 1
                else:
                    plane[row, col] = 1
        x = nd[g, x, N_NEXT]
        if x == root:
            break


@kernel
def field_cities(T, S, g, root):
    """Completed cities a field borders (the reference's feature_value for fields), the plug-ins' own
    completed cities among them (``H.field_cities``, e.g. a city outside the tiles)."""
    return field_city_counts(T, S, g, root)[0] + H.field_cities(T, S, g, root)


@kernel
def add_guest(T, S, g, root, p):
    """The reference's Game.add_guest: a follower of ``p`` on feature ``root`` without a segment under it
    (the caller took it from where it was).  It occupies the feature (``N_OCC``) and counts for its majority."""
    i = S.gi[g, G_NGUEST]
    o = T.P[P_O_GUEST] + 2 * i
    S.ls[g, o] = root
    S.ls[g, o + 1] = p
    S.gi[g, G_NGUEST] = i + 1
    S.nd[g, find(S.nd, g, root), N_OCC] += 1


@kernel
def remove_followers(T, S, g, root):
    """The reference's Game.remove_followers: the followers on feature ``root`` go back to their supplies."""
    nd, ls = S.nd, S.ls
    osu = T.P[P_O_SUPPLY]
    x = root
    removed = 0
    while True:
        o = nd[g, x, N_OWNER]
        if o >= 0:
            ls[g, osu + o] += 1
            nd[g, x, N_OWNER] = -1
            removed += 1
        x = nd[g, x, N_NEXT]
        if x == root:
            break
    nd[g, root, N_OCC] = 0
    ng = S.gi[g, G_NGUEST]
    if ng:  # the guests on it go back too
        og = T.P[P_O_GUEST]
        j = 0
        for i in range(ng):
            node = ls[g, og + 2 * i]
            owner = ls[g, og + 2 * i + 1]
            if find(nd, g, node) == root:
                ls[g, osu + owner] += 1
            else:
                ls[g, og + 2 * j] = node
                ls[g, og + 2 * j + 1] = owner
                j += 1
        S.gi[g, G_NGUEST] = j
    if removed:
        ofl = T.P[P_O_FL]
        j = 0
        for i in range(S.gi[g, G_NFL]):
            node = ls[g, ofl + i]
            if nd[g, node, N_OWNER] >= 0:
                ls[g, ofl + j] = node
                j += 1
        S.gi[g, G_NFL] = j


@kernel
def score_feature(T, S, g, root):
    """The reference's Game.score_feature: majority, points, followers back to their supply.

    Scored as at the end (cities 1 point a tile) once the game is ending (``gi[G_ENDING]``)."""
    nd, ls = S.nd, S.ls
    final = S.gi[g, G_ENDING] != 0
    n = T.P[P_NPLAYERS]
    oc = T.P[P_O_CNT]
    for p in range(n):
        ls[g, oc + p] = 0
    x = root
    while True:
        o = nd[g, x, N_OWNER]
        if o >= 0:
            ls[g, oc + o] += 1
        x = nd[g, x, N_NEXT]
        if x == root:
            break
    og = T.P[P_O_GUEST]
    for i in range(S.gi[g, G_NGUEST]):
        if find(nd, g, ls[g, og + 2 * i]) == root:
            ls[g, oc + ls[g, og + 2 * i + 1]] += 1
    kind = nd[g, root, N_KIND]
    a = 0
    b = 0
    if kind == CITY:
        a = nd[g, root, N_TCOUNT] if T.P[P_TILE_ONCE] else nd[g, root, N_NCOUNT]
        b = nd[g, root, N_PEN]
        per = 1 if final else 2
        value = a * per + b * per
    elif kind == ROAD:
        a = nd[g, root, N_TCOUNT] if T.P[P_TILE_ONCE] else nd[g, root, N_NCOUNT]
        value = a
    elif kind == BUILDING:
        a = nd[g, root, N_NB]
        value = 1 + a
    else:
        a = field_cities(T, S, g, root)  # the plug-ins' H.field_cities included
        value = 3 * a
    override = H.score_override(T, S, g, root, final)
    if override >= 0:  # a plug-in gives the whole value (no items added; the log shows no counts)
        a = 0
        b = 0
        value = override
    else:
        value += H.score_items(T, S, g, root, final)
    best = 0
    for p in range(n):
        if ls[g, oc + p] > best:
            best = ls[g, oc + p]
    players = 0
    osc = T.P[P_O_SCORES]
    if best > 0:
        for p in range(n):
            if ls[g, oc + p] == best:
                players |= 1 << p
                ls[g, osc + p] += value
    remove_followers(T, S, g, root)
    log_row(T, S, g, kind, 1 if final else 0, a, b, value, players)
    H.on_scored(T, S, g, root, kind, final)


@inline_kernel
def detect_completions(T, S, g):
    """The reference's _detect_completions for the tile just placed: ``G_NCOMP`` roots at ``P_O_COMP``.

    Inlined into :func:`advance`, its only caller, like :func:`next_turn`: every turn runs both, and a call
    passes every array of the tables and the state by value (~110 words pushed), which costs more than
    what they do on most turns."""
    gi, nd, ls, tile = S.gi, S.nd, S.ls, T.tile
    oc = T.P[P_O_COMP]
    k = gi[g, G_NPL] - 1
    t = S.pl[g, k, 2]
    base = S.pl[g, k, 4]
    nc = 0
    for i in range(tile[t, TC_NSEG]):
        kind = tile[t, TC_SKIND + i]
        if kind != CITY and kind != ROAD:
            continue
        root = find(nd, g, base + i)
        if nd[g, root, N_OPEN] == 0 and nd[g, root, N_DONE] == 0:
            dup = False
            for j in range(nc):
                if ls[g, oc + j] == root:
                    dup = True
            if not dup:
                ls[g, oc + nc] = root
                nc += 1
    op = T.P[P_O_PEND]
    for j in range(gi[g, G_NPEND]):
        ls[g, oc + nc] = ls[g, op + j]
        nc += 1
    gi[g, G_NPEND] = 0
    kept = 0  # the reference's blocks_completion: a blocked feature does not complete this turn
    for j in range(nc):
        if not H.blocks_completion(T, S, g, ls[g, oc + j]):
            ls[g, oc + kept] = ls[g, oc + j]
            kept += 1
    nc = kept
    gi[g, G_NCOMP] = nc


@inline_kernel
def score_completions(T, S, g):
    """The reference's _score_completions (the score_begin and score_end anchors around it); inlined into
    :func:`advance`, its only caller, as :func:`detect_completions` is."""
    gi, nd, ls = S.gi, S.nd, S.ls
    oc = T.P[P_O_COMP]
    nc = gi[g, G_NCOMP]
    H.score_begin(T, S, g)
    for j in range(nc):
        root = find(nd, g, ls[g, oc + j])
        nd[g, root, N_DONE] = 1
        H.on_completed(T, S, g, root, nd[g, root, N_KIND])
        if nd[g, root, N_OCC] > 0 and not H.defers_scoring(T, S, g, root):
            score_feature(T, S, g, root)
    H.score_end(T, S, g)
    gi[g, G_NCOMP] = 0


@kernel
def finish(T, S, g):
    """End of game: occupied roads, cities, buildings, then fields (the incomplete ones, and completed ones whose
    scoring a plug-in deferred); then the plug-ins' final scoring."""
    gi, nd = S.gi, S.nd
    gi[g, G_CUR] = -1
    gi[g, G_ENDING] = 1
    nn = gi[g, G_NNODES]
    for kind in (ROAD, CITY, BUILDING, FIELD):
        for i in range(nn):
            if nd[g, i, N_PARENT] == i and nd[g, i, N_OCC] > 0 and nd[g, i, N_KIND] == kind:
                score_feature(T, S, g, i)
    H.final_scoring(T, S, g)
    gi[g, G_PHASE] = PH_OVER


# ============================================================== turn
@kernel
def draw(T, S, g):
    """Draw until a tile fits (discarding the others); an empty bag ends the game."""
    gi, ls = S.gi, S.ls
    nf = gi[g, G_NF]
    ofm = T.P[P_O_FMASK]
    ob = T.P[P_O_BAG]
    orem = T.P[P_O_REM]
    while True:
        if gi[g, G_BAG_I] >= gi[g, G_BAG_N]:
            gi[g, G_CUR] = -1
            final_from(T, S, g, 0)
            return
        t = ls[g, ob + gi[g, G_BAG_I]]
        gi[g, G_BAG_I] += 1
        ls[g, orem + t] -= 1
        H.after_draw(T, S, g, t)
        anyfit = 0
        for slot in range(nf):
            m = T.compat[t, S.fr[g, slot, 2]]
            ls[g, ofm + slot] = m
            anyfit |= m
        if H.placement_veto(T, S, g, t):  # on every drawn tile, as the reference's placement_veto
            anyfit = 0
            for slot in range(nf):
                anyfit |= ls[g, ofm + slot]
        if anyfit:
            gi[g, G_CUR] = t
            gi[g, G_PLAYER] = gi[g, G_TURNP]
            gi[g, G_PHASE] = PH_TILE
            return
        gi[g, G_DISCARDS] += 1


@kernel
def enter_follower(T, S, g):
    """Follower stage: spots of the placed tile; no decision when there is none (or no follower left)."""
    gi, nd, ls, tile = S.gi, S.nd, S.ls, T.tile
    p = gi[g, G_PLAYER]
    ns = 0
    if ls[g, T.P[P_O_SUPPLY] + p] > 0 and not H.no_follower(T, S, g):
        osp = T.P[P_O_SPOTS]
        k = gi[g, G_NPL] - 1
        t = S.pl[g, k, 2]
        base = S.pl[g, k, 4]
        for i in range(tile[t, TC_NSEG]):
            if tile[t, TC_SKIND + i] == RIVER:  # river is never a feature
                continue
            if nd[g, find(nd, g, base + i), N_OCC] == 0 and not H.spot_veto(T, S, g, t, i):
                ls[g, osp + ns] = i
                ns += 1
    gi[g, G_NSPOTS] = ns
    if ns > 0:
        gi[g, G_PHASE] = PH_FOLLOWER
        return True
    return False


# ============================================================== plug-in decisions
@kernel
def open_decision(T, S, g, anchor, first):
    """Ask the enabled plug-ins (from plug-in ``first`` on) for a decision at ``anchor``; True if one opened
    (the plug-in set ``G_PLAYER`` and ``G_DPHASE``)."""
    i = H.decision_open(T, S, g, anchor, first)
    if i < 0:
        return False
    S.gi[g, G_DPLUG] = i
    S.gi[g, G_ANCHOR] = anchor
    S.gi[g, G_PHASE] = PH_PLUG
    return True


@kernel
def final_from(T, S, g, first):
    """The bag is empty: the plug-ins' decisions before final scoring, then final scoring."""
    if not open_decision(T, S, g, A_BEFORE_FINAL, first):
        finish(T, S, g)


@kernel
def advance(T, S, g, anchor, first):
    """Run the rest of the turn from ``anchor`` (plug-ins from ``first`` on) up to the next decision: the
    reference's stages after the follower decision (carc_env.core.stages.build_stages)."""
    if anchor == A_BEFORE_FINAL:
        final_from(T, S, g, first)
        return
    if anchor == A_AFTER_FOLLOWER:
        if open_decision(T, S, g, A_AFTER_FOLLOWER, first):
            return
        detect_completions(T, S, g)
        anchor = A_BEFORE_SCORE
        first = 0
    if anchor == A_BEFORE_SCORE:
        if open_decision(T, S, g, A_BEFORE_SCORE, first):
            return
        score_completions(T, S, g)
        anchor = A_AFTER_SCORE
        first = 0
    if anchor == A_AFTER_SCORE:
        if open_decision(T, S, g, A_AFTER_SCORE, first):
            return
        first = 0
    if open_decision(T, S, g, A_END_TURN, first):
        return
    next_turn(T, S, g)


@kernel
def apply_decision(T, S, g, a):
    """Flat action ``a`` in the open plug-in decision; False (state untouched) if it is not legal."""
    if not H.decision_apply(T, S, g, a):
        return False
    advance(T, S, g, S.gi[g, G_ANCHOR], S.gi[g, G_DPLUG])
    return True


@kernel
def apply_decision_row(T, S, g, a, b, c):
    """The open plug-in decision's move named by its history row (records, play-outs); False if not legal."""
    if not H.decision_apply_row(T, S, g, a, b, c):
        return False
    advance(T, S, g, S.gi[g, G_ANCHOR], S.gi[g, G_DPLUG])
    return True


@kernel
def pass_decision(T, S, g):
    """Pass the open plug-in decision (the reference's ``Pass``) and run on to the next decision; False
    (state untouched) when the decision may not be passed."""
    if not H.decision_pass(T, S, g):
        return False
    advance(T, S, g, S.gi[g, G_ANCHOR], S.gi[g, G_DPLUG])
    return True


@kernel
def end_of_turn(T, S, g):
    """Completions, the plug-ins' decisions around scoring, scoring, next player, next draw."""
    advance(T, S, g, A_AFTER_FOLLOWER, 0)


@inline_kernel
def next_turn(T, S, g):
    """Next player (unless a plug-in gives an extra turn), next draw."""
    gi = S.gi
    if not H.extra_turn(T, S, g):
        gi[g, G_TURNP] = (gi[g, G_TURNP] + 1) % T.P[P_NPLAYERS]
    gi[g, G_PLAYER] = gi[g, G_TURNP]
    gi[g, G_TURN] += 1
    draw(T, S, g)


@inline_kernel
def hist_row(T, S, g, kind, a, b, c):
    i = S.gi[g, G_NHIST]
    if i < T.P[P_HCAP]:
        o = T.P[P_O_HIST] + HIST_W * i
        S.ls[g, o] = kind
        S.ls[g, o + 1] = a
        S.ls[g, o + 2] = b
        S.ls[g, o + 3] = c
    S.gi[g, G_NHIST] = i + 1


@kernel
def apply_tile(T, S, g, x, y, r):
    """PlaceTile(x, y, r) if legal; False (state untouched) otherwise."""
    gi = S.gi
    off = T.P[P_GOFF]
    w = S.grid.shape[1]
    if r < 0 or r > 3 or not (0 <= x + off < w and 0 <= y + off < w):
        return False
    v = S.grid[g, y + off, x + off]
    if v > -2:
        return False
    if not (S.ls[g, T.P[P_O_FMASK] - 2 - v] >> r) & 1:
        return False
    t = gi[g, G_CUR]
    nl = placement_links(T, S, g, t, x, y, r)  # asked before the tile is laid, as the reference does
    put_tile(T, S, g, t, x, y, r)
    if nl:
        ol = T.P[P_O_LINKS]
        base = S.pl[g, gi[g, G_NPL] - 1, 4]
        for i in range(nl):
            union(T, S, g, base + S.ls[g, ol + 1 + 2 * i], S.ls[g, ol + 2 + 2 * i])
    gi[g, G_CUR] = -1
    hist_row(T, S, g, H_TILE, x, y, r)
    H.after_placement(T, S, g, t, x, y, r)
    if not enter_follower(T, S, g):
        end_of_turn(T, S, g)
    return True


@kernel
def apply_follower(T, S, g, seg):
    """PlaceFollower(seg), or Pass when seg < 0; False if the segment is not a legal spot."""
    gi, nd, ls = S.gi, S.nd, S.ls
    if seg >= 0:
        osp = T.P[P_O_SPOTS]
        ok = False
        for i in range(gi[g, G_NSPOTS]):
            if ls[g, osp + i] == seg:
                ok = True
        if not ok:
            return False
        k = gi[g, G_NPL] - 1
        node = S.pl[g, k, 4] + seg
        p = gi[g, G_PLAYER]
        nd[g, node, N_OWNER] = p
        nd[g, find(nd, g, node), N_OCC] += 1
        ls[g, T.P[P_O_SUPPLY] + p] -= 1
        ls[g, T.P[P_O_FL] + gi[g, G_NFL]] = node
        gi[g, G_NFL] += 1
        hist_row(T, S, g, H_FOLLOWER, seg, 0, 0)
    else:
        hist_row(T, S, g, H_PASS, 0, 0, 0)
    gi[g, G_NSPOTS] = 0
    end_of_turn(T, S, g)
    return True


@kernel
def apply_index(T, S, g, a):
    """Decode flat action ``a`` with the current window and apply it; False if it is not legal."""
    gi = S.gi
    ph = gi[g, G_PHASE]
    if ph == PH_TILE:
        if a < 0 or a >= T.P[P_TILE_N]:
            return False
        cols = T.P[P_COLS]
        rc = T.P[P_ROWS] * cols
        rem = a % rc
        return apply_tile(T, S, g, gi[g, G_X0] + rem % cols, gi[g, G_Y0] + rem // cols, a // rc)
    if ph == PH_FOLLOWER:
        local = a - T.P[P_FOL_START]
        ms = T.P[P_MAXSEG]
        if local < 0 or local > ms:
            return False
        return apply_follower(T, S, g, local if local < ms else local - ms - 1)  # -1: pass
    if ph == PH_PLUG:
        return apply_decision(T, S, g, a)
    return False


# ============================================================== setup
@kernel
def reset_game(T, S, g, bag_n):
    """Start game g with the first ``bag_n`` tiles of its prepared draw order: the reference's Game.__init__."""
    gi, ls = S.gi, S.ls
    off = T.P[P_GOFF]
    for k in range(gi[g, G_NPL]):
        S.grid[g, S.pl[g, k, 1] + off, S.pl[g, k, 0] + off] = EMPTY
    for s in range(gi[g, G_NF]):
        S.grid[g, S.fr[g, s, 1] + off, S.fr[g, s, 0] + off] = EMPTY
    for i in range(G_LEN):
        gi[g, i] = 0  # G_STAMP too: stamps restart each game, with clean marks (nodes get theirs in put_tile)
    om = T.P[P_O_MARK]
    for i in range(T.P[P_NT] + 1):
        ls[g, om + i] = 0
    for i in range(T.P[P_PLUG_LS], T.P[P_LS_LEN]):
        ls[g, i] = 0  # the plug-ins' integers
    gi[g, G_CUR] = -1
    n = T.P[P_NPLAYERS]
    for p in range(n):
        ls[g, T.P[P_O_SCORES] + p] = 0
        ls[g, T.P[P_O_SUPPLY] + p] = T.P[P_FOLLOWERS]
    orem = T.P[P_O_REM]
    for t in range(T.P[P_NTYPES]):
        ls[g, orem + t] = 0
    ob = T.P[P_O_BAG]
    onb = T.P[P_O_NEXTBAG] + T.P[P_NDRAWS]  # the plug-ins' setup draws come first (FastSupport.setup_draws)
    bag_n -= T.P[P_NDRAWS]
    for i in range(bag_n):
        t = ls[g, onb + i]
        ls[g, ob + i] = t
        ls[g, orem + t] += 1
    gi[g, G_BAG_N] = bag_n
    orng = T.P[P_O_RNG]
    onr = T.P[P_O_NEXTRNG]
    for i in range(RNG_WORDS):  # the game's generator after the deal, prepared with the draw order
        ls[g, orng + i] = ls[g, onr + i]
    lay = T.P[P_LAY]
    if lay:  # a printed board: its pieces first (the reference's Board.lay_printed)
        lay_printed(T, S, g)
    if not T.P[P_START_PLUG]:  # else a plug-in's setup kernel lays it
        t0, x, y, r = T.P[P_START_T], T.P[P_START_X], T.P[P_START_Y], T.P[P_START_R]
        put_tile(T, S, g, t0, x, y, r)
        if lay:
            mark_closed(T, S, g, gi[g, G_NPL] - 1)
    H.setup(T, S, g)
    H.setup_from_bag(T, S, g)
    draw(T, S, g)
    compute_view(T, S, g)


# ============================================================== window (the codec's StateView)
@kernel
def compute_view(T, S, g):
    """Window origin, in-window legal placements and the count outside: ActionCodec.view."""
    gi, ls = S.gi, S.ls
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    minx = gi[g, G_MINX]
    maxx = gi[g, G_MAXX]
    miny = gi[g, G_MINY]
    maxy = gi[g, G_MAXY]
    x0 = minx - 1 - (cols - (maxx - minx + 3)) // 2
    y0 = miny - 1 - (rows - (maxy - miny + 3)) // 2
    inside = (maxx - minx + 3 <= cols) and (maxy - miny + 3 <= rows)
    lay = T.P[P_LAY]
    if lay:  # a printed board: the window does not move, every square is inside
        x0 = T.P[lay + LB_OX]
        y0 = T.P[lay + LB_OY]
        inside = True
    outside = 0
    nlegal = 0
    nf = gi[g, G_NF]
    ofm = T.P[P_O_FMASK]
    if gi[g, G_PHASE] == PH_TILE:
        total = 0
        ok = 0
        first = -1
        lminx = 1 << 30
        lmaxx = -(1 << 30)
        lminy = 1 << 30
        lmaxy = -(1 << 30)
        for slot in range(nf):
            m = ls[g, ofm + slot]
            if m == 0:
                continue
            fx = S.fr[g, slot, 0]
            fy = S.fr[g, slot, 1]
            if first < 0:
                first = slot
            c = (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1)
            total += c
            if x0 <= fx < x0 + cols and y0 <= fy < y0 + rows:
                ok += c
            lminx = min(lminx, fx)
            lmaxx = max(lmaxx, fx)
            lminy = min(lminy, fy)
            lmaxy = max(lmaxy, fy)
        if not inside and ok < total:
            # ActionCodec._recentre: the legal placements' bounding box, then the first one
            best = ok
            for cand in range(2):
                if cand == 0:
                    cx = lminx - (cols - (lmaxx - lminx + 1)) // 2
                    cy = lminy - (rows - (lmaxy - lminy + 1)) // 2
                else:
                    cx = S.fr[g, first, 0] - cols // 2
                    cy = S.fr[g, first, 1] - rows // 2
                c = 0
                for slot in range(nf):
                    m = ls[g, ofm + slot]
                    fx = S.fr[g, slot, 0]
                    fy = S.fr[g, slot, 1]
                    if m and cx <= fx < cx + cols and cy <= fy < cy + rows:
                        c += (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1)
                if c > best:
                    best = c
                    x0 = cx
                    y0 = cy
            ok = best
        outside = total - ok
        nlegal = ok
    gi[g, G_X0] = x0
    gi[g, G_Y0] = y0
    gi[g, G_INSIDE] = 1 if inside else 0
    gi[g, G_OUTSIDE] = outside
    gi[g, G_NLEGAL] = nlegal


# ============================================================== observation
@kernel
def write_mask(T, S, g, mask):
    """The acting seat's action mask (``mask`` zeroed by the caller)."""
    gi, ls = S.gi, S.ls
    ph = gi[g, G_PHASE]
    if ph == PH_TILE:
        rows = T.P[P_ROWS]
        cols = T.P[P_COLS]
        rc = rows * cols
        x0 = gi[g, G_X0]
        y0 = gi[g, G_Y0]
        ofm = T.P[P_O_FMASK]
        for slot in range(gi[g, G_NF]):
            m = ls[g, ofm + slot]
            if m == 0:
                continue
            col = S.fr[g, slot, 0] - x0
            row = S.fr[g, slot, 1] - y0
            if 0 <= col < cols and 0 <= row < rows:
                for r in range(4):
                    if (m >> r) & 1:
                        mask[r * rc + row * cols + col] = 1
    elif ph == PH_FOLLOWER:
        fs = T.P[P_FOL_START]
        osp = T.P[P_O_SPOTS]
        for i in range(gi[g, G_NSPOTS]):
            mask[fs + ls[g, osp + i]] = 1
        mask[fs + T.P[P_MAXSEG]] = 1
    elif ph == PH_PLUG:
        gi[g, G_DROPPED] = H.decision_mask(T, S, g, mask)


@kernel
def write_obs(T, S, g, seat, board, glob, windows, mask):
    """ObservationEncoder.encode for absolute ``seat`` into the given (one game's) arrays."""
    gi, nd, ls, tile, P = S.gi, S.nd, S.ls, T.tile, T.P
    rows = P[P_ROWS]
    cols = P[P_COLS]
    n = P[P_NPLAYERS]
    x0 = gi[g, G_X0]
    y0 = gi[g, G_Y0]
    ph = gi[g, G_PHASE]
    board[:] = 0
    glob[:] = 0
    windows[:] = 0
    mask[:] = 0
    ns = P[P_NS]
    ofl = P[P_O_FL]
    nfl = gi[g, G_NFL]
    # who holds each feature: bit p on the root when a follower of seat p is on it
    og = P[P_O_GUEST]
    ngu = gi[g, G_NGUEST]
    for i in range(nfl):
        nd[g, find(nd, g, ls[g, ofl + i]), N_BITS] = 0
    for i in range(ngu):
        nd[g, find(nd, g, ls[g, og + 2 * i]), N_BITS] = 0
    for i in range(nfl):
        node = ls[g, ofl + i]
        nd[g, find(nd, g, node), N_BITS] |= 1 << nd[g, node, N_OWNER]
    for i in range(ngu):  # followers on a feature but on no segment
        nd[g, find(nd, g, ls[g, og + 2 * i]), N_BITS] |= 1 << ls[g, og + 2 * i + 1]
    me_bit = 1 << seat
    npl = gi[g, G_NPL]
    ch_open = P[P_CH_OPEN]
    ch_size = P[P_CH_SIZE]
    ch_bnb = P[P_CH_BNB]
    for k in range(npl):
        col = S.pl[g, k, 0] - x0
        row = S.pl[g, k, 1] - y0
        if not (0 <= col < cols and 0 <= row < rows):
            continue
        t = S.pl[g, k, 2]
        r = S.pl[g, k, 3]
        base = S.pl[g, k, 4]
        for c in range(ns):
            board[c, row, col] = T.static[t, r, c]
        for e in range(tile[t, TC_ENT_N + r]):
            rt = find(nd, g, base + tile[t, TC_ENT_SEG + ENT_CAP * r + e])
            code = 1 if nd[g, rt, N_DONE] else 0
            if nd[g, rt, N_OCC] > 0:
                bits = nd[g, rt, N_BITS]
                if bits & me_bit:
                    code |= 2
                if bits & ~me_bit:
                    code |= 4
            if code:
                q = TC_ENT_CH + 3 * (ENT_CAP * r + e)
                for j in range(3):
                    if code & tile[t, q + TC_ENT_BITS - TC_ENT_CH + j]:
                        board[tile[t, q + j], row, col] = 1
        for e in range(tile[t, TC_OS_N + r]):
            rt = find(nd, g, base + tile[t, TC_OS_SEG + 4 * r + e])
            side = tile[t, TC_OS_SIDE + 4 * r + e]
            board[ch_open + side, row, col] = min(nd[g, rt, N_OPEN], 3)
            board[ch_size + side, row, col] = min(nd[g, rt, N_TCOUNT], 15)
        b = tile[t, TC_BSEG]
        if b >= 0:
            node = base + b
            if nd[g, node, N_DONE] == 0:
                board[ch_bnb, row, col] = min(nd[g, node, N_NB], 8)
    # followers per relative seat and per segment kind
    chf = P[P_CH_FOLLOWERS]
    chk = P[P_CH_FKIND]
    for i in range(nfl):
        node = ls[g, ofl + i]
        kind = nd[g, node, N_KIND]
        if kind < 0 or kind > BUILDING:
            continue
        k = nd[g, node, N_PL]
        col = S.pl[g, k, 0] - x0
        row = S.pl[g, k, 1] - y0
        if 0 <= col < cols and 0 <= row < rows:
            board[chf + (nd[g, node, N_OWNER] - seat) % n, row, col] += 1
            board[chk + kind, row, col] += 1
    # legal placements, frontier, last placed tile
    chl = P[P_CH_LEGAL]
    chfr = P[P_CH_FRONTIER]
    ofm = P[P_O_FMASK]
    for slot in range(gi[g, G_NF]):
        col = S.fr[g, slot, 0] - x0
        row = S.fr[g, slot, 1] - y0
        if 0 <= col < cols and 0 <= row < rows:
            board[chfr, row, col] = 1
            if ph == PH_TILE:
                m = ls[g, ofm + slot]
                for r in range(4):
                    if (m >> r) & 1:
                        board[chl + r, row, col] = 1
    lt = -1
    lr = 0
    if npl > 0:
        k = npl - 1
        lt = S.pl[g, k, 2]
        lr = S.pl[g, k, 3]
        col = S.pl[g, k, 0] - x0
        row = S.pl[g, k, 1] - y0
        if 0 <= col < cols and 0 <= row < rows:
            board[P[P_CH_LAST], row, col] = 1
    # globals
    cur = gi[g, G_CUR]
    if ph == PH_TILE and cur >= 0:
        glob[P[P_G_DRAWN] + cur] = 1.0
    if lt >= 0:
        glob[P[P_G_PLACED] + lt] = 1.0
        glob[P[P_G_PLACED_ROT] + lr] = 1.0
    bag_size = gi[g, G_BAG_N] - gi[g, G_BAG_I]
    if bag_size:
        gr = P[P_G_REMAINING]
        orem = P[P_O_REM]
        for t in range(P[P_NTYPES]):
            glob[gr + t] = np.float32(np.float64(ls[g, orem + t]) * np.float64(T.inv32[t]))
    total = P[P_TOTAL]
    glob[P[P_G_BAG]] = bag_size / total
    printed = P[P[P_LAY] + LB_NPIECES] if P[P_LAY] else 0  # printed pieces are no tiles of the game
    glob[P[P_G_PROGRESS]] = (npl - printed) / total
    gs = P[P_G_SCORE]
    gf = P[P_G_SUPPLY]
    osc = P[P_O_SCORES]
    osu = P[P_O_SUPPLY]
    fl = T.F[F_INV_FOLLOWERS]
    best_other = 0
    for i in range(n):
        s = (seat + i) % n
        glob[gs + i] = ls[g, osc + s] * 0.01
        glob[gf + i] = ls[g, osu + s] * fl
        if i == 1 or (i > 1 and ls[g, osc + s] > best_other):
            best_other = ls[g, osc + s]
    glob[P[P_G_LEAD]] = (ls[g, osc + seat] - best_other) * 0.01
    if ph == PH_TILE:
        glob[P[P_G_PHASE] + P[P_PH_TILE]] = 1.0
    elif ph == PH_FOLLOWER:
        glob[P[P_G_PHASE] + P[P_PH_FOLLOWER]] = 1.0
    elif ph == PH_PLUG:
        glob[P[P_G_PHASE] + gi[g, G_DPHASE]] = 1.0
    else:
        glob[P[P_G_PHASE] + P[P_PH_OVER]] = 1.0
    if ph != PH_OVER:
        glob[P[P_G_DECIDING] + (gi[g, G_PLAYER] - seat) % n] = 1.0
        glob[P[P_G_TURN] + (gi[g, G_TURNP] - seat) % n] = 1.0
    glob[P[P_G_LEGAL]] = gi[g, G_NLEGAL] * 0.01
    glob[P[P_G_CLIPPED]] = 1.0 if gi[g, G_OUTSIDE] else 0.0
    H.observe(T, S, g, seat, board, glob)
    H.observe_windows(T, S, g, seat, windows)
    if seat == gi[g, G_PLAYER] and ph != PH_OVER:
        write_mask(T, S, g, mask)


# ============================================================== rewards
@kernel
def write_rewards(T, S, g, out):
    """Match.rewards: the reward of every seat for the step just applied (``before`` = scores before it)."""
    n = T.P[P_NPLAYERS]
    mode = T.P[P_REWARD]
    scale = T.F[F_REWARD_SCALE]
    ls = S.ls
    osc = T.P[P_O_SCORES]
    ob = T.P[P_O_BEFORE]
    for i in range(n):
        out[i] = 0.0
    if mode == 2:
        total = 0
        for i in range(n):
            total += ls[g, osc + i] - ls[g, ob + i]
        if total:
            for i in range(n):
                gain = ls[g, osc + i] - ls[g, ob + i]
                out[i] = (gain - (total - gain) / (n - 1)) * scale
    if S.gi[g, G_PHASE] == PH_OVER:
        best = ls[g, osc]
        for i in range(n):
            best = max(best, ls[g, osc + i])
        if mode == 0:
            nw = 0
            for i in range(n):
                if ls[g, osc + i] == best:
                    nw += 1
            win = 1.0 if nw == 1 else 0.0
            for i in range(n):
                out[i] = win if ls[g, osc + i] == best else -1.0
        elif mode == 1:
            for i in range(n):
                bo = -(1 << 62)
                for j in range(n):
                    if j != i and ls[g, osc + j] > bo:
                        bo = ls[g, osc + j]
                out[i] = (ls[g, osc + i] - bo) * scale


# ============================================================== entry points
@kernel
def reset_range(T, S, games, bag_ns):
    """Start game ``games[j]`` from its prepared draw order of ``bag_ns[j]`` tiles."""
    for j in range(len(games)):
        reset_game(T, S, games[j], bag_ns[j])


@kernel
def step_game(T, S, g, kind, a, b, c, rewards):
    """One decision in game g: ``kind`` -1 flat action ``a`` (decoded with the current window), 0 PlaceTile(a,
    b, c) in absolute coordinates, 1 PlaceFollower(a), 2 Pass, 3 the open plug-in decision's move named by
    its history row ``(a, b, c)``.  Rewards of every seat into ``rewards``."""
    gi = S.gi
    gi[g, G_ERR] = ERR_NONE
    if gi[g, G_PHASE] == PH_OVER:
        gi[g, G_ERR] = ERR_OVER
        return False
    osc = T.P[P_O_SCORES]
    ob = T.P[P_O_BEFORE]
    for p in range(T.P[P_NPLAYERS]):
        S.ls[g, ob + p] = S.ls[g, osc + p]
    if kind < 0:
        ok = apply_index(T, S, g, a)
    elif kind == 0:
        ok = gi[g, G_PHASE] == PH_TILE and apply_tile(T, S, g, a, b, c)
    elif kind == 1:
        ok = gi[g, G_PHASE] == PH_FOLLOWER and a >= 0 and apply_follower(T, S, g, a)
    elif kind == 2:
        ok = gi[g, G_PHASE] == PH_FOLLOWER and apply_follower(T, S, g, -1)  # pass
    else:
        ok = gi[g, G_PHASE] == PH_PLUG and apply_decision_row(T, S, g, a, b, c)
    if not ok:
        gi[g, G_ERR] = ERR_ILLEGAL
        return False
    gi[g, G_STEPS] += 1
    write_rewards(T, S, g, rewards)
    compute_view(T, S, g)
    return True


@kernel
def step_one(T, S, g, kind, a, b, c, rewards):
    """:func:`step_game` from Python (one game: the AEC env, records)."""
    return step_game(T, S, g, kind, a, b, c, rewards)


@kernel
def step_range(
    T, S, lo, hi, actions, auto_reset, rewards, dones, final, eplen, observe, board, glob, windows, mask, seats
):
    """Vector-env step of games lo..hi-1 (see the module docstring).  Returns the number of illegal actions."""
    gi = S.gi
    n = T.P[P_NPLAYERS]
    osc = T.P[P_O_SCORES]
    bad = 0
    for g in range(lo, hi):
        dones[g] = False
        if not step_game(T, S, g, -1, actions[g], 0, 0, rewards[g]):
            bad += 1
            continue
        if gi[g, G_PHASE] == PH_OVER:
            dones[g] = True
            for p in range(n):
                final[g, p] = S.ls[g, osc + p]
            eplen[g] = gi[g, G_STEPS]
            if auto_reset:
                reset_game(T, S, g, gi[g, G_NEXTBAG_N])
        seats[g] = gi[g, G_PLAYER]
        if observe:
            write_obs(T, S, g, gi[g, G_PLAYER], board[g], glob[g], windows[g], mask[g])
    return bad


@kernel
def step_chunks(
    T,
    S,
    ctl,
    chunk,
    me,
    n,
    actions,
    auto_reset,
    rewards,
    dones,
    final,
    eplen,
    observe,
    board,
    glob,
    windows,
    mask,
    seats,
):
    """:func:`step_range` over chunks of ``chunk`` games taken with :func:`~carc_env.fast.atomic.take_chunk`
    (thread ``me`` of ``n``: its own games first, then the others' that are left) until every game is
    stepped: each thread of a threaded step makes one call of this, so no thread goes back to Python (and
    the GIL) between chunks, a game stays with its thread from step to step while both keep up, and a
    thread the OS deschedules leaves its chunks to the others.  Returns the number of illegal actions in
    the chunks this call stepped."""
    G = len(actions)
    bad = 0
    k = 0
    while True:
        lo, hi, k = take_chunk(ctl, me, n, G, chunk, k)
        if lo >= hi:
            return bad
        bad += step_range(
            T, S, lo, hi, actions, auto_reset, rewards, dones, final, eplen, observe, board, glob, windows, mask, seats
        )


@kernel
def observe_range(T, S, games, seats, board, glob, windows, mask):
    """Observation of game ``games[j]`` for absolute seat ``seats[j]`` into row j of the outputs."""
    for j in range(len(games)):
        write_obs(T, S, games[j], seats[j], board[j], glob[j], windows[j], mask[j])


@kernel
def masks_range(T, S, games, mask):
    """The acting seat's mask of ``games[j]`` into row j (zeroed here)."""
    for j in range(len(games)):
        mask[j, :] = 0
        g = games[j]
        if S.gi[g, G_PHASE] != PH_OVER:
            write_mask(T, S, g, mask[j])


@kernel
def random_decision(T, S, g):
    """Make one uniformly random legal decision in game g and return the number of legal placements
    (a tile decision: uniform over every legal (cell, rotation) pair) or -1 (a follower decision:
    uniform over the spots and pass): the decision rule of :func:`play_random` and :func:`play_out`."""
    ls = S.ls
    if S.gi[g, G_PHASE] == PH_TILE:
        ofm = T.P[P_O_FMASK]
        total = 0
        for slot in range(S.gi[g, G_NF]):
            m = ls[g, ofm + slot]
            total += (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1)
        pick = np.random.randint(0, total)
        for slot in range(S.gi[g, G_NF]):
            m = ls[g, ofm + slot]
            for r in range(4):
                if (m >> r) & 1:
                    if pick == 0:
                        apply_tile(T, S, g, S.fr[g, slot, 0], S.fr[g, slot, 1], r)
                        return total
                    pick -= 1
        return total
    if S.gi[g, G_PHASE] == PH_PLUG:
        H.decision_random(T, S, g)
        advance(T, S, g, S.gi[g, G_ANCHOR], S.gi[g, G_DPLUG])
        return -1
    osp = T.P[P_O_SPOTS]
    ns = S.gi[g, G_NSPOTS]
    c = np.random.randint(0, ns + 1)
    apply_follower(T, S, g, ls[g, osp + c] if c < ns else c - ns - 1)
    return -1


@kernel
def play_random(T, S, g, bags, words, seed, stats):
    """Play one game per row of ``bags`` (draw orders) in slot g, uniformly random legal decisions.

    Mirrors ``scripts/bench.py``'s reference loop: a tile decision picks uniformly among all legal
    (cell, rotation) pairs, a follower decision among the spots and pass.  ``stats`` accumulates:
    [games, tile decisions, legal placements summed, max legal placements, points scored].
    ``words``: no rows, or one per game, its generator after the deal (:mod:`carc_env.fast.rng`); then
    game ``j``'s decisions are seeded ``seed + j`` (else all games share one stream seeded ``seed``).
    """
    np.random.seed(seed)
    n = T.P[P_NPLAYERS]
    ls = S.ls
    onb = T.P[P_O_NEXTBAG]
    onr = T.P[P_O_NEXTRNG]
    for j in range(bags.shape[0]):
        for i in range(bags.shape[1]):
            ls[g, onb + i] = bags[j, i]
        if words.shape[0]:
            for i in range(RNG_WORDS):
                ls[g, onr + i] = words[j, i]
            np.random.seed(seed + j)
        reset_game(T, S, g, bags.shape[1])
        while S.gi[g, G_PHASE] != PH_OVER:
            total = random_decision(T, S, g)
            if total >= 0:
                stats[1] += 1
                stats[2] += total
                if total > stats[3]:
                    stats[3] = total
        stats[0] += 1
        for p in range(n):
            stats[4] += ls[g, T.P[P_O_SCORES] + p]


@kernel
def play_out(T, S, g, seed, stop, farmers, place):
    """Play game g from its current state to the end with uniformly random legal decisions.

    The decisions of :func:`play_random` (:func:`random_decision`), which are the Python play-out's
    (``carc_env.search.rollout.random_action``), from any state: the leaf of a tree search.  ``stop`` >= 0
    cuts the play-out short: at the first tile decision with at most ``stop`` tiles left to draw, the game
    ends there as if the bag were empty (:func:`end_here`); -1 plays to the real end.  ``farmers`` 0: a
    follower decision is uniform over the spots not on a field and pass (:func:`follower_off_fields`).
    ``place`` < 1: a follower decision passes 1 - ``place`` of the time, else is made as above."""
    np.random.seed(seed)
    play_on(T, S, g, stop, farmers, place)


@kernel
def play_on(T, S, g, stop, farmers, place):
    """:func:`play_out` drawing on from the kernels' random stream as it stands (no seed): the play-outs
    of the compiled tree search (:mod:`carc_env.fast.tree`), many to one seed."""
    gi = S.gi
    while gi[g, G_PHASE] != PH_OVER:
        if stop >= 0 and gi[g, G_PHASE] == PH_TILE and gi[g, G_BAG_N] - gi[g, G_BAG_I] <= stop:
            end_here(T, S, g)
        elif place < 1.0 and gi[g, G_PHASE] == PH_FOLLOWER and np.random.random() >= place:
            apply_follower(T, S, g, -1)  # pass, 1 - place of the time
        elif farmers == 0 and gi[g, G_PHASE] == PH_FOLLOWER:
            follower_off_fields(T, S, g)
        else:
            random_decision(T, S, g)


@kernel
def follower_off_fields(T, S, g):
    """A follower decision uniform over the legal spots whose feature is not a field, and pass."""
    osp = T.P[P_O_SPOTS]
    ns = S.gi[g, G_NSPOTS]
    base = S.pl[g, S.gi[g, G_NPL] - 1, 4]
    m = 0
    for i in range(ns):
        if S.nd[g, base + S.ls[g, osp + i], N_KIND] != FIELD:
            m += 1
    c = np.random.randint(0, m + 1)
    for i in range(ns):
        seg = S.ls[g, osp + i]
        if S.nd[g, base + seg, N_KIND] != FIELD:
            if c == 0:
                apply_follower(T, S, g, seg)
                return
            c -= 1
    apply_follower(T, S, g, -1)


@kernel
def end_here(T, S, g):
    """End game g at its tile decision as if the bag were empty: the drawn tile and the tiles left are not
    played, and the final stages run (the plug-ins' decisions before final scoring, then final scoring):
    ``Game.end_here``, for a search's cut-short play-outs."""
    S.gi[g, G_BAG_I] = S.gi[g, G_BAG_N]
    S.gi[g, G_CUR] = -1
    final_from(T, S, g, 0)
