"""Compiled one-ply action features and the compiled greedy baseline.

Contract
--------
The kernels here read a game of a :class:`~carc_env.fast.kernels.State` and
produce, byte for byte, what the Python reference produces from the same
position:

* :func:`features_range`: the optional action-feature part of the
  observation (:mod:`carc_env.encoding.spec`): per legal in-window placement
  of the drawn tile (ascending action index) its :data:`PLACEMENT_FEATURES`
  row (:func:`carc_env.encoding.placements.placement_features`), and per
  segment of the tile just placed its :data:`SPOT_FEATURES` row
  (:func:`carc_env.encoding.spots.spot_features`);
* :func:`greedy_range`: the decision of :class:`carc_env.policies.GreedyPolicy`
  in each game, given the uniform numbers the Python policy would draw from
  its generator (drawn by the caller with the same calls, so the choices are
  identical: ``tests/fast/test_fast_greedy.py``).

Everything here is a :func:`~carc_env.fast.seam.kernel`: the entry points
(:data:`~carc_env.fast.seam.FEATURE_ENTRY_POINTS`) are called from Python
through the composed module (:func:`carc_env.fast.seam.engine`), compiled and
cached on disk with the engine's, so a change to this file, a kernel or a
plug-in gives a fresh compilation (``tests/fast/test_fast_cache.py``).

Both look one ply ahead the way the reference does
(:func:`carc_env.core.lookahead.scan_placement` for what a placement joins and
closes, :func:`carc_env.encoding.lookahead.one_ply_gain` for what a completing
placement scores, played out on a copy of the game in a scratch state, never
on the game itself).  They reach the plug-ins through the seam
(:mod:`carc_env.fast.seam`), as the reference reaches their hooks: the scan
asks the ``placement_links`` kernels (a royal gate joins its partner's city);
a field's value adds the ``field_cities`` kernels; the play-out runs the
engine's kernels, so the plug-ins' compiled hooks (a bonus, a challenge, a
gate keeping its city open), and passes the turn's plug-in decisions with
their ``decision_pass`` kernels; what a plug-in forbids (a placement veto) is
in the mask the rows follow.  The greedy decides in a plug-in's phase with its
``greedy_decision`` kernel and, where a plug-in values holdings, adds the
change of its ``asset_value`` to a placement's gain (the reference's
``heuristics`` part).  Which configurations this covers, and why not the
others: :func:`carc_env.fast.tables.features_coverage`.

Floating-point values are computed in the reference's precision and order: a
``float32`` column the reference accumulates with ``+=`` is accumulated here
by rounding each addend to ``float32`` first (numpy's rule for a Python float
added to a ``float32`` array), and the greedy's ``float64`` sums follow the
reference's order of the features a placement joins.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .kernels import (
    BUILDING,
    CITY,
    DX,
    DY,
    FIELD,
    G_BAG_I,
    G_BAG_N,
    G_CUR,
    G_NF,
    G_NPL,
    G_NSPOTS,
    G_PHASE,
    G_PLAYER,
    G_STAMP,
    G_TURN,
    G_X0,
    G_Y0,
    N8X,
    N8Y,
    N_DONE,
    N_KIND,
    N_NB,
    N_NCOUNT,
    N_NEXT,
    N_OCC,
    N_OPEN,
    N_OWNER,
    N_PEN,
    N_PL,
    N_TCOUNT,
    PH_FOLLOWER,
    PH_PLUG,
    PH_TILE,
    RIVER,
    ROAD,
    field_city_counts,
    find,
)
from .printed import CL_VOID, building_target, cell_class, is_square
from .seam import engine as E
from .seam import kernel
from .tables import (
    LINK_CAP,
    P_COLS,
    P_FOL_START,
    P_GOFF,
    P_LAY,
    P_MAXSEG,
    P_NPLAYERS,
    P_O_GUEST,
    P_O_HIST,
    P_O_LINKS,
    P_O_MARK,
    P_O_SCORES,
    P_O_SPOTS,
    P_O_SUPPLY,
    P_ROWS,
    P_TILE_N,
    P_TILE_ONCE,
    SEG_CAP,
    TC_BSEG,
    TC_CE,
    TC_NSEG,
    TC_OPEN0,
    TC_PEN0,
    TC_SKIND,
)

N_PLACE = 18  # len(spec.PLACEMENT_FEATURES); checked against the spec by the batch wrapper
N_SPOT = 16  # len(spec.SPOT_FEATURES)
MAX_PLAYERS = 8

# ---- the work array (int64, WORK_LEN per thread): scan results
RCAP = 4 + LINK_CAP  # distinct roots a placement meets: its 4 sides and the links plug-ins declare
W_SEGR = 0  # roots a segment meets: [RCAP * i + j], i < SEG_CAP
W_SEGRN = W_SEGR + RCAP * SEG_CAP  # [i]
W_MATCH = W_SEGRN + SEG_CAP  # matched sides of segment i
W_CLOSED = W_MATCH + SEG_CAP  # sides of segment i a printed board closes (void, or a neutral printed edge)
W_SORDER = W_CLOSED + SEG_CAP  # segments with roots, in first-seen order
W_GSEG = W_SORDER + SEG_CAP  # group k: bitmask of its segments
W_GROOT = W_GSEG + SEG_CAP  # group k: roots [RCAP * k + j]
W_GRN = W_GROOT + RCAP * SEG_CAP
W_TMP = W_GRN + SEG_CAP  # a group's roots while merging (RCAP)
# per group results
W_JKIND = W_TMP + RCAP
W_JROOTS = W_JKIND + SEG_CAP  # number of roots joined
W_JOPEN = W_JROOTS + SEG_CAP
W_JTILES = W_JOPEN + SEG_CAP
W_JPEN = W_JTILES + SEG_CAP
W_JCNT = W_JPEN + SEG_CAP  # followers per player: [MAX_PLAYERS * k + p]
W_BROOT = W_JCNT + MAX_PLAYERS * SEG_CAP  # building roots around: [j], j < 8
WORK_LEN = W_BROOT + 8


@kernel
def copy_game(T, S, g, X, x):
    """Game g of S into slot x of X (the scratch state of a play-out): every row a play-out reads.

    Only the grid rows of the played area +- 4 are copied: a play-out of one placement (and the river veto
    of the next draw, two cells beyond it) reads nothing farther, so stale rows of earlier copies are
    never read; nor are the history and the score log, which the kernels only append to."""
    for i in range(S.gi.shape[1]):
        X.gi[x, i] = S.gi[g, i]
    off = T.P[P_GOFF]
    lo = max(S.gi[g, K.G_MINY] - 4 + off, 0)
    hi = min(S.gi[g, K.G_MAXY] + 5 + off, S.grid.shape[1])
    for yy in range(lo, hi):
        for xx in range(S.grid.shape[2]):
            X.grid[x, yy, xx] = S.grid[g, yy, xx]
    for k in range(S.gi[g, G_NPL] + 1):
        for c in range(S.pl.shape[2]):
            X.pl[x, k, c] = S.pl[g, k, c]
    for k in range(S.gi[g, G_NF] + 1):
        for c in range(S.fr.shape[2]):
            X.fr[x, k, c] = S.fr[g, k, c]
    for k in range(S.gi[g, K.G_NNODES]):
        for c in range(S.nd.shape[2]):
            X.nd[x, k, c] = S.nd[g, k, c]
    # the lists but the history and the score log (contiguous; kernels write them, never read them)
    for i in range(T.P[P_O_HIST]):
        X.ls[x, i] = S.ls[g, i]
    for i in range(T.P[P_O_GUEST], S.ls.shape[1]):
        X.ls[x, i] = S.ls[g, i]


@kernel
def _leads(W, k, seat, n):
    """The reference's ``leads(counts, seat)`` for group k (False without followers)."""
    best = 0
    for p in range(n):
        c = W[W_JCNT + MAX_PLAYERS * k + p]
        if c > best:
            best = c
    return best > 0 and W[W_JCNT + MAX_PLAYERS * k + seat] == best


@kernel
def _has_counts(W, k, n):
    for p in range(n):
        if W[W_JCNT + MAX_PLAYERS * k + p]:
            return True
    return False


@kernel
def _add_root(W, i, root, norder):
    """Segment ``i`` of the placed tile joins feature ``root``: note the root once, and the segment in the
    order first met (``norder`` segments so far); return the new count."""
    if W[W_SEGRN + i] == 0:
        W[W_SORDER + norder] = i
        norder += 1
    for j in range(W[W_SEGRN + i]):
        if W[W_SEGR + RCAP * i + j] == root:
            return norder
    W[W_SEGR + RCAP * i + W[W_SEGRN + i]] = root
    W[W_SEGRN + i] += 1
    return norder


@kernel
def scan(T, S, g, t, x, y, r, W):
    """:func:`carc_env.core.lookahead.scan_placement` on game g; the joined features go to ``W``.

    Returns ``(groups, completes, has_building, around, buildings_around)``."""
    gi, nd, tile = S.gi, S.nd, T.tile
    off = T.P[P_GOFF]
    n = T.P[P_NPLAYERS]
    nseg = tile[t, TC_NSEG]
    lay = T.P[P_LAY]
    for i in range(SEG_CAP):
        W[W_SEGRN + i] = 0
        W[W_MATCH + i] = 0
        W[W_CLOSED + i] = 0
    norder = 0
    for s in range(4):
        i = tile[t, TC_CE + 4 * r + s]
        if i < 0:
            continue
        kind = tile[t, TC_SKIND + i]
        if kind != CITY and kind != ROAD:
            continue
        nk = S.grid[g, y + DY[s] + off, x + DX[s] + off]
        if nk < 0:
            if lay and cell_class(T, lay, x + DX[s], y + DY[s]) == CL_VOID:
                W[W_CLOSED + i] += 1
            continue
        nt = S.pl[g, nk, 2]
        nr = S.pl[g, nk, 3]
        nc = tile[nt, TC_CE + 4 * nr + ((s + 2) & 3)]
        if nc < 0:  # a neutral printed edge
            if lay:
                W[W_CLOSED + i] += 1
            continue
        root = find(nd, g, S.pl[g, nk, 4] + nc)
        norder = _add_root(W, i, root, norder)
        W[W_MATCH + i] += 1
    # the features the enabled plug-ins link the placement to (the Royal Gateways' gates): roots like a
    # neighbour's, matching no side; a segment first met here comes after those met through a side
    nl = K.placement_links(T, S, g, t, x, y, r)
    ol = T.P[P_O_LINKS]
    for j in range(nl):
        i = S.ls[g, ol + 1 + 2 * j]
        root = find(nd, g, S.ls[g, ol + 2 + 2 * j])
        norder = _add_root(W, i, root, norder)
    # group the segments that join a common feature (the reference's order: a merged group goes last)
    ng = 0
    for q in range(norder):
        i = W[W_SORDER + q]
        mseg = 1 << i
        # merged roots in W_TMP[0:RCAP)
        mr = 0
        for j in range(W[W_SEGRN + i]):
            W[W_TMP + mr] = W[W_SEGR + RCAP * i + j]
            mr += 1
        keep = 0
        for k in range(ng):
            inter = False
            for a in range(W[W_GRN + k]):
                ra = W[W_GROOT + RCAP * k + a]
                for b in range(mr):
                    if W[W_TMP + b] == ra:
                        inter = True
            if inter:
                mseg |= W[W_GSEG + k]
                for a in range(W[W_GRN + k]):
                    ra = W[W_GROOT + RCAP * k + a]
                    dup = False
                    for b in range(mr):
                        if W[W_TMP + b] == ra:
                            dup = True
                    if not dup:
                        W[W_TMP + mr] = ra
                        mr += 1
            else:  # kept: moves to position keep (keep <= k)
                W[W_GSEG + keep] = W[W_GSEG + k]
                W[W_GRN + keep] = W[W_GRN + k]
                for a in range(W[W_GRN + k]):
                    W[W_GROOT + RCAP * keep + a] = W[W_GROOT + RCAP * k + a]
                keep += 1
        ng = keep
        W[W_GSEG + ng] = mseg
        W[W_GRN + ng] = mr
        for a in range(mr):
            W[W_GROOT + RCAP * ng + a] = W[W_TMP + a]
        ng += 1
    for i in range(nseg):
        kind = tile[t, TC_SKIND + i]
        if (kind == CITY or kind == ROAD) and W[W_SEGRN + i] == 0:
            W[W_GSEG + ng] = 1 << i
            W[W_GRN + ng] = 0
            ng += 1
    completes = False
    om = T.P[P_O_MARK]
    for k in range(ng):
        segs = W[W_GSEG + k]
        first = -1
        op = 0
        pen = 0
        for i in range(nseg):
            if (segs >> i) & 1:
                if first < 0:
                    first = i
                op += tile[t, TC_OPEN0 + i] - 2 * W[W_MATCH + i] - W[W_CLOSED + i]
                pen += tile[t, TC_PEN0 + i]
        for p in range(MAX_PLAYERS):
            W[W_JCNT + MAX_PLAYERS * k + p] = 0
        nr = W[W_GRN + k]
        ntiles = 0
        if nr:
            stamp = gi[g, G_STAMP] + 1
            gi[g, G_STAMP] = stamp
            for a in range(nr):
                q = W[W_GROOT + RCAP * k + a]
                op += nd[g, q, N_OPEN]
                pen += nd[g, q, N_PEN]
                z = q
                while True:
                    pk = nd[g, z, N_PL]
                    if S.ls[g, om + pk] != stamp:
                        S.ls[g, om + pk] = stamp
                        ntiles += 1
                    o = nd[g, z, N_OWNER]
                    if o >= 0:
                        W[W_JCNT + MAX_PLAYERS * k + o] += 1
                    z = nd[g, z, N_NEXT]
                    if z == q:
                        break
        if op <= 0:
            completes = True
        W[W_JKIND + k] = tile[t, TC_SKIND + first]
        W[W_JROOTS + k] = nr
        W[W_JOPEN + k] = max(op, 0)
        W[W_JTILES + k] = 1 + ntiles
        W[W_JPEN + k] = pen
    has_building = tile[t, TC_BSEG] >= 0
    around = 0
    nb = 0
    for j in range(8):
        cx = x + N8X[j]
        cy = y + N8Y[j]
        nk = S.grid[g, cy + off, cx + off]
        if nk >= 0 and (lay == 0 or is_square(T, lay, cx, cy)):  # a printed board counts squares only
            around += 1
            b = tile[S.pl[g, nk, 2], TC_BSEG]
            if b >= 0:
                node = S.pl[g, nk, 4] + b
                root = find(nd, g, node)
                W[W_BROOT + nb] = root
                nb += 1
                if nd[g, root, N_DONE] == 0 and nd[g, node, N_NB] + 1 >= building_target(T, lay, cx, cy):
                    completes = True
    if has_building and around >= building_target(T, lay, x, y):
        completes = True
    _ = n
    return ng, completes, has_building, around, nb


@kernel
def feature_points(T, S, g, root, final):
    """Sum of the reference's ``feature_value(root, final)`` for a city, road or building."""
    nd = S.nd
    kind = nd[g, root, N_KIND]
    if kind == CITY:
        a = nd[g, root, N_TCOUNT] if T.P[P_TILE_ONCE] else nd[g, root, N_NCOUNT]
        per = 1 if final else 2
        return a * per + nd[g, root, N_PEN] * per
    if kind == ROAD:
        return nd[g, root, N_TCOUNT] if T.P[P_TILE_ONCE] else nd[g, root, N_NCOUNT]
    if kind == BUILDING:
        return 1 + nd[g, root, N_NB]
    return 0


@kernel
def building_complete(T, S, g, root):
    """Game.building_complete: the building ``root`` has the neighbours its cell needs (8, or on a printed
    board the squares around)."""
    k = S.nd[g, root, N_PL]
    return S.nd[g, root, N_NB] >= building_target(T, T.P[P_LAY], S.pl[g, k, 0], S.pl[g, k, 1])


@kernel
def immediate_points(T, S, g, node):
    """:func:`carc_env.encoding.lookahead.immediate_points`."""
    nd = S.nd
    root = find(nd, g, node)
    kind = nd[g, root, N_KIND]
    if kind == CITY or kind == ROAD:
        if nd[g, root, N_OPEN] == 0 and nd[g, root, N_DONE] == 0:
            return feature_points(T, S, g, root, False)
        return 0
    if kind == BUILDING and nd[g, root, N_DONE] == 0 and building_complete(T, S, g, root):
        return 1 + nd[g, root, N_NB]
    return 0


@kernel
def one_ply_gain(T, S, g, X, x, px, py, pr, me, assets):
    """:func:`carc_env.encoding.lookahead.one_ply_gain`, played out in slot x of X; ``assets``: the change of
    what each seat holds in the plug-ins' state counts too (their ``asset_value`` kernels)."""
    copy_game(T, S, g, X, x)
    n = T.P[P_NPLAYERS]
    osc = T.P[P_O_SCORES]
    turn = S.gi[g, G_TURN]
    K.apply_tile(T, X, x, px, py, pr)
    bonus = 0.0
    if X.gi[x, G_PHASE] == PH_FOLLOWER and X.gi[x, G_PLAYER] == me:
        base = X.pl[x, X.gi[x, G_NPL] - 1, 4]
        osp = T.P[P_O_SPOTS]
        for i in range(X.gi[x, G_NSPOTS]):
            pts = immediate_points(T, X, x, base + X.ls[x, osp + i])
            if pts > bonus:
                bonus = float(pts)
        K.apply_follower(T, X, x, -1)
    # the turn's plug-in decisions are passed while they may be (the scoring they precede is counted)
    while X.gi[x, G_PHASE] == PH_PLUG and X.gi[x, G_TURN] == turn:
        if not K.pass_decision(T, X, x):
            break
    mine = 0.0
    best_other = -1e300
    for p in range(n):
        gp = float(X.ls[x, osc + p] - S.ls[g, osc + p])
        if assets:  # the reference: gains[p] + now[p] - held[p]
            gp = gp + K.H.asset_value(T, X, x, p) - K.H.asset_value(T, S, g, p)
        if p == me:
            mine = gp
        elif gp > best_other:
            best_other = gp
    return mine + bonus - best_other


@kernel
def _f32add(a, b):
    """``a += b`` of a float32 array element and a Python float (numpy: b rounded to float32 first)."""
    return np.float32(np.float64(a) + np.float64(np.float32(b)))


@kernel
def placement_rows(T, S, g, seat, X, x, W, mask, index, feats):
    """The placement features of game g for ``seat`` into ``index`` (int64 (K,)) and ``feats`` (float32 (K, F)),
    zero-padded; ``mask`` is the game's action mask (tile range read).  Returns the rows written (legal
    in-window placements beyond K are not described and are counted as ``-extra - 1`` when any)."""
    gi, nd = S.gi, S.nd
    cap = index.shape[0]
    index[:] = 0
    feats[:, :] = 0
    if gi[g, G_PHASE] != PH_TILE or gi[g, G_PLAYER] != seat or gi[g, G_CUR] < 0:
        return 0
    t = gi[g, G_CUR]
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    rc = rows * cols
    x0 = gi[g, G_X0]
    y0 = gi[g, G_Y0]
    off = T.P[P_GOFF]
    n = T.P[P_NPLAYERS]
    bag = gi[g, G_BAG_N] - gi[g, G_BAG_I]
    supply = np.float32(S.ls[g, T.P[P_O_SUPPLY] + seat] / 7.0)
    placed = gi[g, G_NPL]
    progress = np.float32(placed / max(1, placed + bag))
    k = 0
    extra = 0
    for a in range(T.P[P_TILE_N]):
        if not mask[a]:
            continue
        if k >= cap:
            extra += 1
            continue
        r = a // rc
        rem = a % rc
        px = x0 + rem % cols
        py = y0 + rem // cols
        row = feats[k]
        index[k] = a
        row[0] = 1.0
        row[16] = supply
        row[17] = progress
        ng, completes, has_b, around, nb = scan(T, S, g, t, px, py, r, W)
        if completes or bag == 0:
            row[1] = one_ply_gain(T, S, g, X, x, px, py, r, seat, False) / 20.0
            row[2] = 1.0
        c = 0
        for s in range(4):
            if S.grid[g, py + DY[s] + off, px + DX[s] + off] >= 0:
                c += 1
        row[3] = c / 4.0
        best_city = 0.0
        best_road = 0.0
        for j in range(ng):
            op = W[W_JOPEN + j]
            if op == 0:
                continue
            tiles = W[W_JTILES + j]
            if not _has_counts(W, j, n):
                if W[W_JROOTS + j]:
                    row[6] = _f32add(row[6], 0.5)
                if W[W_JKIND + j] == CITY:
                    best_city = max(best_city, (2 * tiles + 2 * W[W_JPEN + j]) / 20.0)
                elif W[W_JKIND + j] == ROAD:
                    best_road = max(best_road, tiles / 10.0)
            elif _leads(W, j, seat, n):
                row[4] = _f32add(row[4], 0.5)
                row[7] = _f32add(row[7], op / 8.0)
                row[9] = _f32add(row[9], tiles / 10.0)
            else:
                row[5] = _f32add(row[5], 0.5)
                row[8] = _f32add(row[8], op / 8.0)
                row[10] = _f32add(row[10], tiles / 10.0)
        row[11] = best_city
        row[12] = best_road
        if has_b:
            row[13] = (1 + around) / 9.0
        for j in range(nb):
            root = W[W_BROOT + j]
            if nd[g, root, N_OCC] > 0:
                mine = False
                z = root
                while True:
                    if nd[g, z, N_OWNER] == seat:
                        mine = True
                    z = nd[g, z, N_NEXT]
                    if z == root:
                        break
                if mine:
                    row[14] = _f32add(row[14], 0.25)
                else:
                    row[15] = _f32add(row[15], 0.25)
        k += 1
    return k if extra == 0 else -extra - 1


@kernel
def spot_rows(T, S, g, seat, out):
    """The spot features of game g for ``seat`` into ``out`` (float32 (max_segments, F), zeroed here)."""
    gi, nd, tile = S.gi, S.nd, T.tile
    out[:, :] = 0
    if gi[g, G_PHASE] != PH_FOLLOWER or gi[g, G_NPL] == 0:
        return
    k = gi[g, G_NPL] - 1
    t = S.pl[g, k, 2]
    base = S.pl[g, k, 4]
    acting = gi[g, G_PLAYER] == seat
    osp = T.P[P_O_SPOTS]
    nseg = min(tile[t, TC_NSEG], out.shape[0])
    for i in range(nseg):
        row = out[i]
        row[0] = 1.0
        kind = tile[t, TC_SKIND + i]
        if kind == RIVER or kind > BUILDING:
            continue
        legal = False
        if acting:
            for j in range(gi[g, G_NSPOTS]):
                if S.ls[g, osp + j] == i:
                    legal = True
        row[1] = 1.0 if legal else 0.0
        row[2 + kind] = 1.0
        root = find(nd, g, base + i)
        if kind == CITY or kind == ROAD:
            row[6] = nd[g, root, N_TCOUNT] / 10.0
            row[7] = nd[g, root, N_OPEN] / 4.0
            row[8] = 1.0 if nd[g, root, N_OPEN] == 0 else 0.0
            row[15] = nd[g, root, N_PEN] / 4.0
        elif kind == BUILDING:
            row[6] = nd[g, root, N_NB] / 8.0
            row[8] = 1.0 if (nd[g, root, N_DONE] or building_complete(T, S, g, root)) else 0.0
        if kind != FIELD:
            row[9] = feature_points(T, S, g, root, False) / 20.0
            row[10] = feature_points(T, S, g, root, True) / 20.0
        else:
            done, total = field_city_counts(T, S, g, root)
            row[11] = done / 4.0
            row[12] = total / 4.0
            row[10] = (3 * K.field_cities(T, S, g, root)) / 20.0  # the plug-ins' extra cities too
        mine = 0
        others = 0
        z = root
        while True:
            o = nd[g, z, N_OWNER]
            if o >= 0:
                if o == seat:
                    mine += 1
                else:
                    others += 1
            z = nd[g, z, N_NEXT]
            if z == root:
                break
        row[13] = mine / 4.0
        row[14] = others / 4.0


@kernel
def features_range(T, S, X, W, games, seats, masks, index, feats, spots, counts):
    """Action features of ``games[j]`` for ``seats[j]`` into row j of the outputs (``masks[j]``: its mask
    for that seat); ``counts[j]``: placement rows written (``-extra - 1`` when some did not fit)."""
    for j in range(len(games)):
        g = games[j]
        counts[j] = placement_rows(T, S, g, seats[j], X, 0, W, masks[j], index[j], feats[j])
        spot_rows(T, S, g, seats[j], spots[j])


# ============================================================== greedy
@kernel
def holdings_anyway(T, S, g, X, x, W, mask):
    """GreedyPolicy._holdings_anyway: the change of holdings (own less the best opponent's) the first legal
    placement completing nothing brings, what every placement of the tile brings (0.0 if each completes)."""
    gi = S.gi
    t = gi[g, G_CUR]
    me = gi[g, G_PLAYER]
    cols = T.P[P_COLS]
    rc = T.P[P_ROWS] * cols
    for a in range(T.P[P_TILE_N]):
        if not mask[a]:
            continue
        r = a // rc
        rem = a % rc
        px = gi[g, G_X0] + rem % cols
        py = gi[g, G_Y0] + rem // cols
        completes = scan(T, S, g, t, px, py, r, W)[1]
        if not completes:
            return one_ply_gain(T, S, g, X, x, px, py, r, me, True) - one_ply_gain(T, S, g, X, x, px, py, r, me, False)
    return 0.0


@kernel
def greedy_tile(T, S, g, X, x, W, mask, noise, assets):
    """GreedyPolicy._tile: the legal placement with the best one-ply value plus ``noise[j]`` (j-th legal);
    ``assets``: the value counts the change of the plug-ins' holdings, less what every placement of the
    tile brings (:func:`holdings_anyway`)."""
    gi = S.gi
    me = gi[g, G_PLAYER]
    t = gi[g, G_CUR]
    n = T.P[P_NPLAYERS]
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    rc = rows * cols
    x0 = gi[g, G_X0]
    y0 = gi[g, G_Y0]
    bag = gi[g, G_BAG_N] - gi[g, G_BAG_I]
    best_v = -1e18
    best = -1
    j = 0
    anyway = 0.0
    have_anyway = False
    for a in range(T.P[P_TILE_N]):
        if not mask[a]:
            continue
        if best < 0:
            best = a
        r = a // rc
        rem = a % rc
        px = x0 + rem % cols
        py = y0 + rem // cols
        ng, completes, _hb, _ar, _nb = scan(T, S, g, t, px, py, r, W)
        s = 0.0  # (before a play-out: holdings_anyway scans other placements into W)
        for k in range(ng):
            if _has_counts(W, k, n):
                s += 0.2 if _leads(W, k, me, n) else -0.2
        v = 0.0
        if completes or bag == 0:
            v = one_ply_gain(T, S, g, X, x, px, py, r, me, assets)
            if assets:
                if not have_anyway:
                    anyway = holdings_anyway(T, S, g, X, x, W, mask)
                    have_anyway = True
                v -= anyway
        v += s
        v += noise[j]
        if v > best_v:
            best_v = v
            best = a
        j += 1
    return best


@kernel
def spot_value(T, S, g, node, progress):
    """GreedyPolicy._spot_value."""
    nd = S.nd
    root = find(nd, g, node)
    kind = nd[g, root, N_KIND]
    if kind == CITY:
        return 2.0 * nd[g, root, N_TCOUNT] + 2.0 * nd[g, root, N_PEN] - 0.5 * nd[g, root, N_OPEN] + 1.0
    if kind == ROAD:
        return float(nd[g, root, N_TCOUNT]) + 0.5
    if kind == BUILDING:
        return 1.0 + nd[g, root, N_NB]
    if kind == FIELD:
        if progress < 0.6:
            return -1.0
        done, _total = field_city_counts(T, S, g, root)
        return 3.0 * done * (0.5 + progress)
    return 0.0


@kernel
def greedy_follower(T, S, g, noise, reserve):
    """GreedyPolicy._follower: ``noise[i]`` for the i-th spot (segment order)."""
    gi = S.gi
    fs = T.P[P_FOL_START]
    pass_index = fs + T.P[P_MAXSEG]
    ns = gi[g, G_NSPOTS]
    if ns == 0:
        return pass_index
    me = gi[g, G_PLAYER]
    k = gi[g, G_NPL] - 1
    base = S.pl[g, k, 4]
    supply = S.ls[g, T.P[P_O_SUPPLY] + me]
    placed = gi[g, G_NPL]
    progress = placed / max(1, placed + gi[g, G_BAG_N] - gi[g, G_BAG_I])
    osp = T.P[P_O_SPOTS]
    best_v = -1e18
    best = pass_index
    for i in range(ns):
        spot = S.ls[g, osp + i]
        node = base + spot
        now = immediate_points(T, S, g, node)
        if now:
            v = 100.0 + now
        else:
            v = spot_value(T, S, g, node, progress)
        v += noise[i]
        if v > best_v:
            best_v = v
            best = fs + spot
    need = 2.0 if supply > reserve else 6.0
    if best_v < need:
        return pass_index
    return best


@kernel
def greedy_range(T, S, X, W, games, picks, noise, noise_at, reserves, assets, mask, out):
    """Greedy decisions of ``games[j]`` (the deciding seat, keeping ``reserves[j]`` followers back for strong
    spots) into ``out[j]``.

    ``picks[j] >= 0``: the epsilon branch, the ``picks[j]``-th legal action; else the greedy choice with the
    uniform numbers ``noise[noise_at[j]:]`` (one per legal placement, or per follower spot).  In a plug-in's
    decision the plug-in's ``greedy_decision`` kernel chooses; where it has none (or its choice is not
    legal) ``out[j]`` is -1 and the caller picks uniformly, as the Python policy does.  ``assets``: the
    configuration's plug-ins value holdings (``asset_value``; the reference's ``has_assets``).  ``mask``: a
    scratch int8 row of the action space."""
    for j in range(len(games)):
        g = games[j]
        mask[:] = 0
        K.write_mask(T, S, g, mask)
        if picks[j] >= 0:
            c = 0
            for a in range(mask.shape[0]):
                if mask[a]:
                    if c == picks[j]:
                        out[j] = a
                        break
                    c += 1
            continue
        ph = S.gi[g, G_PHASE]
        if ph == PH_TILE:
            out[j] = greedy_tile(T, S, g, X, 0, W, mask, noise[noise_at[j] :], assets)
        elif ph != PH_FOLLOWER:  # a plug-in's decision: its heuristics' choice if legal
            a = K.H.greedy_decision(T, S, g, X, 0)
            out[j] = a if 0 <= a < mask.shape[0] and mask[a] else -1
        else:
            out[j] = greedy_follower(T, S, g, noise[noise_at[j] :], reserves[j])


@kernel
def greedy_play_out(T, S, X, W, g, seed, epsilon, reserve, assets, mask, noise, rewards):
    """Play game g to its end with epsilon-greedy decisions, seeded ``seed``: the leaf value of a tree search
    with greedy play-outs on the compiled engine (:class:`carc_env.fast.playout.GreedyPlayout`).

    Each decision is, with probability ``epsilon``, a uniformly random legal one
    (:func:`~carc_env.fast.kernels.random_decision`, as the random play-out decides), else
    :class:`~carc_env.policies.GreedyPolicy`'s choice (:func:`greedy_range`'s rule: :func:`greedy_tile` over
    the placements inside the observation window, :func:`greedy_follower`, a plug-in's ``greedy_decision``)
    with its tie-breaking noise (uniform in [0, 0.001) per legal placement or spot) drawn here from the
    kernel's own stream.  Where the greedy has no legal choice (a plug-in's decision without a heuristic, a
    tile whose legal placements all lie outside the window) the decision is random."""
    np.random.seed(seed)
    gi = S.gi
    stale = True  # the window and legal counts: step_game sets them, a random decision does not
    while gi[g, G_PHASE] != K.PH_OVER:
        ph = gi[g, G_PHASE]
        if epsilon > 0.0 and np.random.random() < epsilon:
            K.random_decision(T, S, g)
            stale = True
            continue
        if stale:
            K.compute_view(T, S, g)
        mask[:] = 0
        K.write_mask(T, S, g, mask)
        if ph == PH_TILE:
            for i in range(gi[g, K.G_NLEGAL]):
                noise[i] = np.random.random() * 1e-3
            a = greedy_tile(T, S, g, X, 0, W, mask, noise, assets)
        elif ph == PH_FOLLOWER:
            for i in range(gi[g, G_NSPOTS]):
                noise[i] = np.random.random() * 1e-3
            a = greedy_follower(T, S, g, noise, reserve)
        else:
            a = K.H.greedy_decision(T, S, g, X, 0)
            if a >= mask.shape[0] or (a >= 0 and not mask[a]):
                a = -1
        if a >= 0 and K.step_game(T, S, g, -1, a, 0, 0, rewards):
            stale = False
        else:
            K.random_decision(T, S, g)
            stale = True


@kernel
def legal_counts(T, S, games, mask, out):
    """Legal actions of the deciding seat of ``games[j]`` (tile: in-window placements; follower: spots +
    pass; a plug-in's decision: the entries of its mask; 0 once over), and in ``out[j, 1]`` the follower
    spots (0 outside that phase).  ``mask``: a scratch int8 row of the action space."""
    for j in range(len(games)):
        g = games[j]
        ph = S.gi[g, G_PHASE]
        out[j, 1] = 0
        if ph == PH_TILE:
            out[j, 0] = S.gi[g, K.G_NLEGAL]
        elif ph == PH_FOLLOWER:
            out[j, 0] = S.gi[g, G_NSPOTS] + 1
            out[j, 1] = S.gi[g, G_NSPOTS]
        elif ph == PH_PLUG:
            mask[:] = 0
            K.write_mask(T, S, g, mask)
            c = 0
            for a in range(mask.shape[0]):
                if mask[a]:
                    c += 1
            out[j, 0] = c
        else:
            out[j, 0] = 0


# ============================================================== Python face
class FeatureKernels:
    """The scratch state and work arrays the kernels above need for one :class:`~carc_env.fast.engine.FastBatch`.

    ``features(games, seats, masks, rows)``: the action-feature arrays (``place_index`` int64 (G, rows),
    ``place_features`` float32 (G, rows, N_PLACE), ``spots`` float32 (G, max_segments, N_SPOT)) and the
    placement rows written per game (negative: ``-extra - 1``, some legal placements did not fit).
    ``greedy(games, picks, noise, noise_at, reserves)``: greedy decisions (see :func:`greedy_range`)."""

    def __init__(self, batch: object) -> None:
        from .engine import alloc_state

        self.batch = batch
        self.X = alloc_state(batch.layout, 1)
        self.W = np.zeros(WORK_LEN, dtype=np.int64)
        self.mask = np.zeros(batch.codec.n, dtype=np.int8)
        self.max_segments = int(batch.tables.P[P_MAXSEG])
        from ..encoding.lookahead import has_assets

        self.assets = has_assets(batch.layout.rules)  # GreedyPolicy's: a plug-in values holdings

    def features(
        self, games: np.ndarray, seats: np.ndarray, masks: np.ndarray, rows: int
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        b = self.batch
        n = len(games)
        out = {
            "place_index": np.zeros((n, rows), dtype=np.int64),
            "place_features": np.zeros((n, rows, N_PLACE), dtype=np.float32),
            "spots": np.zeros((n, self.max_segments, N_SPOT), dtype=np.float32),
        }
        counts = np.zeros(n, dtype=np.int64)
        E().features_range(
            b.tables,
            b.state,
            self.X,
            self.W,
            np.asarray(games, dtype=np.int64),
            np.asarray(seats, dtype=np.int64),
            masks,
            out["place_index"],
            out["place_features"],
            out["spots"],
            counts,
        )
        return out, counts

    def greedy(
        self, games: np.ndarray, picks: np.ndarray, noise: np.ndarray, noise_at: np.ndarray, reserves: np.ndarray
    ) -> np.ndarray:
        b = self.batch
        out = np.zeros(len(games), dtype=np.int64)
        E().greedy_range(
            b.tables,
            b.state,
            self.X,
            self.W,
            np.asarray(games, dtype=np.int64),
            picks,
            noise,
            noise_at,
            reserves,
            self.assets,
            self.mask,
            out,
        )
        return out

    def legal_counts(self, games: np.ndarray) -> np.ndarray:
        out = np.zeros((len(games), 2), dtype=np.int64)
        E().legal_counts(self.batch.tables, self.batch.state, np.asarray(games, dtype=np.int64), self.mask, out)
        return out


def kernels_of(batch: object) -> FeatureKernels:
    """The batch's :class:`FeatureKernels` (built on first use, not pickled with the batch)."""
    fk = getattr(batch, "_feature_kernels", None)
    if fk is None or fk.batch is not batch:
        fk = FeatureKernels(batch)
        batch._feature_kernels = fk
    return fk


@kernel
def step_games(T, S, games, actions, rewards):
    """One flat action in each of ``games[j]`` (no auto-reset, no observation); returns the index j of the
    first illegal action (its game unchanged, the ones before it stepped), or -1."""
    for j in range(len(games)):
        if not K.step_game(T, S, games[j], -1, actions[j], 0, 0, rewards[j]):
            return j
    return -1
