"""The Count of Carcassonne in the compiled engine (:mod:`carc_env.fast`): its kernels.

As :mod:`.rules`, over the engine's arrays:

* the start layout: the engine lays ``CO1`` (engine parameters ``start_*``),
  ``setup`` the other eleven tiles of the block, in the reference's order;
* ``field_cities`` / ``extra_completed``: a field touching the City of
  Carcassonne counts one more completed city, and the City counts as a
  completed city for the King;
* ``after_placement``: the scores before the turn's scoring (the deployment's trigger);
* its four decision phases through the engine's plug-in decisions
  (``decision_open`` / ``decision_mask`` / ``decision_apply`` /
  ``decision_random``; ``decision_pass`` passes them in the one-ply play-out
  of the action features and greedy): ``count_leave`` at ``A_BEFORE_SCORE``
  (several seats in turn, several moves each), ``count_deploy`` then ``count_move`` at
  ``A_AFTER_SCORE``, ``count_final`` at ``A_BEFORE_FINAL`` (round-robin until
  everyone passed); the action ranges and their canonical indices are
  :mod:`.actions`'s; moved followers are the engine's guests
  (``kernels.add_guest``);
* ``observe``: :mod:`.observe`'s globals (the Count's quarter, the quarters'
  followers) and channels (guests per relative seat, the completing features).

History rows (``kernels.H_PLUG`` + the plug-in's position): ``a = 64 * code +
segment`` (code 0 pass, 1 deploy, 2 move, 3 send), ``b, c`` the send's cell or
the quarter in ``b``; :func:`history_action` turns them back into the
reference's actions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.actions import IllegalActionError, Pass
from ...core.tiles import BUILDING, CITY, FIELD, RIVER, ROAD
from ...fast.kernels import (
    A_AFTER_SCORE,
    A_BEFORE_FINAL,
    A_BEFORE_SCORE,
    G_DPHASE,
    G_DPLUG,
    G_NCOMP,
    G_NGUEST,
    G_NNODES,
    G_NPL,
    G_PLAYER,
    G_STAMP,
    G_TURNP,
    G_X0,
    G_Y0,
    H_PLUG,
    N_DONE,
    N_KIND,
    N_OCC,
    N_PARENT,
    N_PL,
    N_SCRATCH,
    add_guest,
    find,
    hist_row,
    mark_tiles,
    put_tile,
    tagged_segment,
)
from ...fast.seam import B_LS, B_TILE, inline_kernel, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import (
    F_INV_FOLLOWERS,
    P_COLS,
    P_GOFF,
    P_NPLAYERS,
    P_NTYPES,
    P_O_COMP,
    P_O_GUEST,
    P_O_SCORES,
    P_O_SUPPLY,
    P_ROWS,
    TC_BSEG,
    TC_CE,
    TC_NSEG,
    TC_SKIND,
)
from .actions import CountFinalCodec, max_buildings
from .rules import (
    BLOCK_X,
    BLOCK_Y,
    CATHEDRAL,
    CATHEDRAL_BUILDINGS,
    CITY_TAG,
    MARKET,
    QUARTER_OF_KIND,
    CountDeploy,
    CountMove,
    CountSend,
)

OWN = (
    "leave_start", "deploy_start", "move_start", "final_start",
    "ph_leave", "ph_deploy", "ph_move", "ph_final",
    "only_occupied", "market_only", "active_last",
    "g_count", "ch_guests", "ch_completing",
)  # fmt: skip
(LEAVE_START, DEPLOY_START, MOVE_START, FINAL_START, PH_LEAVE, PH_DEPLOY, PH_MOVE, PH_FINAL, ONLY_OCC, MARKET_ONLY,
 ACTIVE_LAST, G_COUNT, CH_GUESTS, CH_COMPLETING) = own_positions(OWN)  # fmt: skip
# its per-game integers
(CUR, COUNT, MAY_MOVE, HAVE_BEFORE, LAST_ACTIVE, LEAVE_ON, LEAVE_I, FINAL_ON, FINAL_CUR, FINAL_PASSED, BEFORE,
 Q) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18)  # fmt: skip
SLOTS = Q + 4 * 8  # quarters[q][p] at Q + 8 * q + p
SUB_LEAVE, SUB_DEPLOY, SUB_MOVE, SUB_FINAL = 1, 2, 3, 4
CODE_PASS, CODE_DEPLOY, CODE_MOVE, CODE_SEND = range(4)
NSLOT = 4 + 1 + 8  # count_final slots of a cell (one building per tile: coverage refuses more)
LEAVE_N = 4 + 9 + 1
# its tile columns
C_CITYF, C_BQ, C_BLOCK, C_SEGAT = 0, 1, 2, 3  # C_SEGAT + NSLOT * r + slot: segment at a count_final slot (-1)
QUARTER_BY_KIND = np.array(  # a node kind's quarter, -1: none (a building: its tile says)
    [QUARTER_OF_KIND.get(k, -1) for k in range(max(CITY, ROAD, FIELD, BUILDING, RIVER) + 1)], dtype=np.int64
)
N8X = np.array([-1, 0, 1, -1, 0, 1, -1, 0, 1], dtype=np.int64)  # the count_leave cells, 3 * (dy + 1) + (dx + 1)
N8Y = np.array([-1, -1, -1, 0, 0, 0, 1, 1, 1], dtype=np.int64)


# ---------------------------------------------------------------- setup and scoring
@kernel
def setup(T, S, g, pb):
    # the engine laid CO1 (the start tile); the other eleven in the reference's order
    c = T.P[pb + B_TILE] + C_BLOCK
    for k in range(1, 12):
        for t in range(T.P[P_NTYPES]):
            if T.tile[t, c] == k + 1:
                put_tile(T, S, g, t, BLOCK_X + k % 4, BLOCK_Y + k // 4, 0)


@kernel
def field_cities(T, S, g, pb, root):
    return 1 if tagged_segment(T, S, g, root, T.P[pb + B_TILE] + C_CITYF) else 0


@kernel
def extra_completed(T, S, g, pb, kind):
    return 1 if kind == CITY else 0


@kernel
def after_placement(T, S, g, pb, t, x, y, r):
    o = T.P[pb + B_LS]
    osc = T.P[P_O_SCORES]
    for p in range(T.P[P_NPLAYERS]):
        S.ls[g, o + BEFORE + p] = S.ls[g, osc + p]
    S.ls[g, o + HAVE_BEFORE] = 1


# ---------------------------------------------------------------- targets
@kernel
def quarter_of(T, S, g, pb, root):
    """The quarter whose followers may go to feature ``root``, -1: none (CountOfCarcassonne.quarter_of)."""
    kind = S.nd[g, root, N_KIND]
    if kind == BUILDING:
        k = S.nd[g, root, N_PL]
        return CATHEDRAL if T.tile[S.pl[g, k, 2], T.P[pb + B_TILE] + C_BQ] else -1
    return QUARTER_BY_KIND[kind]


@kernel
def any_in_quarters(T, S, g, pb):
    o = T.P[pb + B_LS] + Q
    for q in range(4):
        for p in range(T.P[P_NPLAYERS]):
            if S.ls[g, o + 8 * q + p]:
                return True
    return False


@kernel
def leave_quarter(T, S, g, pb, root):
    """The quarter of ``root`` if it may receive a follower in ``count_leave`` (else -1)."""
    q = quarter_of(T, S, g, pb, root)
    if q < 0 or q == MARKET:
        return -1
    if T.P[pb + ONLY_OCC] and S.nd[g, root, N_OCC] == 0:
        return -1
    return q


@kernel
def final_quarter(T, S, g, pb, root):
    """The quarter of root ``root`` if it may receive a follower in ``count_final`` (else -1)."""
    nd = S.nd
    if nd[g, root, N_DONE]:
        return -1
    if T.P[pb + ONLY_OCC] and nd[g, root, N_OCC] == 0:
        return -1
    q = quarter_of(T, S, g, pb, root)
    if T.P[pb + MARKET_ONLY] and q != MARKET:
        return -1
    return q


@kernel
def may_send(T, S, g, pb, q, p):
    """Whether seat p may move a follower out of quarter q (not the Count's)."""
    o = T.P[pb + B_LS]
    return q >= 0 and q != S.ls[g, o + COUNT] and S.ls[g, o + Q + 8 * q + p] > 0


@kernel
def leave_has_send(T, S, g, pb, p):
    oc = T.P[P_O_COMP]
    for j in range(S.gi[g, G_NCOMP]):
        root = find(S.nd, g, S.ls[g, oc + j])
        if may_send(T, S, g, pb, leave_quarter(T, S, g, pb, root), p):
            return True
    return False


@kernel
def final_has_send(T, S, g, pb, p):
    nd = S.nd
    for i in range(S.gi[g, G_NNODES]):
        if nd[g, i, N_PARENT] == i and may_send(T, S, g, pb, final_quarter(T, S, g, pb, i), p):
            return True
    return False


@kernel
def send(T, S, g, pb, root, q, x, y, seg):
    """Seat G_PLAYER moves a follower from quarter q onto ``root`` (a guest); logged as (x, y, seg)."""
    p = S.gi[g, G_PLAYER]
    S.ls[g, T.P[pb + B_LS] + Q + 8 * q + p] -= 1
    add_guest(T, S, g, root, p)
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], 64 * CODE_SEND + seg, x, y)


# ---------------------------------------------------------------- count_leave indices
@kernel
def leave_index(T, S, g, pb, root):
    """The canonical count_leave index of root (sides of the placed tile, then its 3 x 3 buildings), -1: none."""
    k = S.gi[g, G_NPL] - 1
    t = S.pl[g, k, 2]
    r = S.pl[g, k, 3]
    base = S.pl[g, k, 4]
    for s in range(4):
        c = T.tile[t, TC_CE + 4 * r + s]
        if c >= 0:
            kind = T.tile[t, TC_SKIND + c]
            if (kind == CITY or kind == ROAD) and find(S.nd, g, base + c) == root:
                return s
    if S.nd[g, root, N_KIND] != BUILDING:
        return -1
    bk = S.nd[g, root, N_PL]
    dx = S.pl[g, bk, 0] - S.pl[g, k, 0]
    dy = S.pl[g, bk, 1] - S.pl[g, k, 1]
    if abs(dx) <= 1 and abs(dy) <= 1:
        return 4 + 3 * (dy + 1) + (dx + 1)
    return -1


@kernel
def leave_decode(T, S, g, pb, local):
    """(root, x, y, segment) that count_leave index ``local`` names, root -1 if none."""
    k = S.gi[g, G_NPL] - 1
    x = S.pl[g, k, 0]
    y = S.pl[g, k, 1]
    t = S.pl[g, k, 2]
    if local < 4:
        c = T.tile[t, TC_CE + 4 * S.pl[g, k, 3] + local]
        if c < 0:
            return -1, 0, 0, 0
        kind = T.tile[t, TC_SKIND + c]
        if kind != CITY and kind != ROAD:
            return -1, 0, 0, 0
        return find(S.nd, g, S.pl[g, k, 4] + c), x, y, c
    cell = local - 4
    bx = x + N8X[cell]
    by = y + N8Y[cell]
    off = T.P[P_GOFF]
    bk = S.grid[g, by + off, bx + off]
    if bk < 0:
        return -1, 0, 0, 0
    b = T.tile[S.pl[g, bk, 2], TC_BSEG]
    if b < 0:
        return -1, 0, 0, 0
    return find(S.nd, g, S.pl[g, bk, 4] + b), bx, by, b


# ---------------------------------------------------------------- count_final indices
@kernel
def final_scan(T, S, g, pb, p, mask, want):
    """Walk the window's cells (rows, then columns, then slots), the order of the canonical count_final
    index (:class:`.actions.CountFinalCodec`).  With ``want`` < 0: set the index of every feature seat p
    may move to in ``mask`` and return the legal moves without one; else return the canonical index of
    root ``want`` (-1: none) and leave ``mask`` alone."""
    nd = S.nd
    stamp = S.gi[g, G_STAMP] + 2
    S.gi[g, G_STAMP] = stamp
    legal = 0
    if want < 0:
        for i in range(S.gi[g, G_NNODES]):
            if nd[g, i, N_PARENT] == i and may_send(T, S, g, pb, final_quarter(T, S, g, pb, i), p):
                nd[g, i, N_SCRATCH] = stamp - 1
                legal += 1
    else:
        nd[g, want, N_SCRATCH] = stamp - 1
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    rc = rows * cols
    x0 = S.gi[g, G_X0]
    y0 = S.gi[g, G_Y0]
    off = T.P[P_GOFF]
    w = S.grid.shape[1]
    start = T.P[pb + FINAL_START]
    col0 = T.P[pb + B_TILE] + C_SEGAT
    found = 0
    for row in range(rows):
        gy = y0 + row + off
        if gy < 0 or gy >= w:
            continue
        for col in range(cols):
            gx = x0 + col + off
            if gx < 0 or gx >= w:
                continue
            k = S.grid[g, gy, gx]
            if k < 0:
                continue
            t = S.pl[g, k, 2]
            r = S.pl[g, k, 3]
            base = S.pl[g, k, 4]
            for slot in range(NSLOT):
                seg = T.tile[t, col0 + NSLOT * r + slot]
                if seg < 0:
                    continue
                rt = find(nd, g, base + seg)
                if nd[g, rt, N_SCRATCH] == stamp - 1:
                    nd[g, rt, N_SCRATCH] = stamp
                    local = slot * rc + row * cols + col
                    if want >= 0:
                        return local
                    mask[start + local] = 1
                    found += 1
    if want >= 0:
        return -1
    return legal - found


# ---------------------------------------------------------------- the decision hooks
@inline_kernel
def decision_open(T, S, g, pb, anchor):
    """Inlined by LLVM into the composed hook (:func:`~carc_env.fast.seam.inline_kernel`: typed once per
    anchor): the deploy and move checks after scoring (every turn) and the anchors where nothing can open
    answer here, without the call into :func:`count_decision` (a call passes every array of the tables and
    the state by value, which costs more than these checks)."""
    ls = S.ls
    o = T.P[pb + B_LS]
    if anchor == A_AFTER_SCORE:
        return deploy_or_move(T, S, g, pb)
    if anchor == A_BEFORE_SCORE:  # count_leave: a completion while followers wait in the quarters
        if ls[g, o + LEAVE_ON] != 0 or (S.gi[g, G_NCOMP] != 0 and any_in_quarters(T, S, g, pb)):
            return count_decision(T, S, g, pb, A_BEFORE_SCORE)
    elif anchor == A_BEFORE_FINAL:  # the anchors as constants: count_decision compiles for these two only
        return count_decision(T, S, g, pb, A_BEFORE_FINAL)
    ls[g, o + CUR] = 0
    return False


@inline_kernel
def deploy_or_move(T, S, g, pb):
    """The decision after scoring: ``count_deploy`` (DeployStage.enter, once a turn: the player scored
    nothing while another did), else ``count_move``."""
    ls = S.ls
    o = T.P[pb + B_LS]
    tp = S.gi[g, G_TURNP]
    ls[g, o + CUR] = 0
    if ls[g, o + HAVE_BEFORE]:
        ls[g, o + HAVE_BEFORE] = 0
        ls[g, o + LAST_ACTIVE] = tp
        osc = T.P[P_O_SCORES]
        if ls[g, T.P[P_O_SUPPLY] + tp] > 0 and ls[g, osc + tp] == ls[g, o + BEFORE + tp]:
            other = False
            for p in range(T.P[P_NPLAYERS]):
                if p != tp and ls[g, osc + p] - ls[g, o + BEFORE + p] >= 1:
                    other = True
            if other:
                S.gi[g, G_PLAYER] = tp
                S.gi[g, G_DPHASE] = T.P[pb + PH_DEPLOY]
                ls[g, o + CUR] = SUB_DEPLOY
                return True
    if ls[g, o + MAY_MOVE]:
        S.gi[g, G_PLAYER] = tp
        S.gi[g, G_DPHASE] = T.P[pb + PH_MOVE]
        ls[g, o + CUR] = SUB_MOVE
        return True
    return False


@kernel
def count_decision(T, S, g, pb, anchor):
    """The decisions before scoring (``count_leave``) and before final scoring (``count_final``)."""
    ls = S.ls
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    tp = S.gi[g, G_TURNP]
    ls[g, o + CUR] = 0
    if anchor == A_BEFORE_SCORE:
        if not ls[g, o + LEAVE_ON]:
            if S.gi[g, G_NCOMP] == 0 or not any_in_quarters(T, S, g, pb):
                return False
            ls[g, o + LEAVE_ON] = 1
            ls[g, o + LEAVE_I] = 0
        first = tp + 1 if T.P[pb + ACTIVE_LAST] else tp
        while ls[g, o + LEAVE_I] < n:
            p = (first + ls[g, o + LEAVE_I]) % n
            if leave_has_send(T, S, g, pb, p):
                S.gi[g, G_PLAYER] = p
                S.gi[g, G_DPHASE] = T.P[pb + PH_LEAVE]
                ls[g, o + CUR] = SUB_LEAVE
                return True
            ls[g, o + LEAVE_I] += 1
        ls[g, o + LEAVE_ON] = 0
        S.gi[g, G_PLAYER] = tp
        return False
    if anchor == A_BEFORE_FINAL:
        if not ls[g, o + FINAL_ON]:
            if not any_in_quarters(T, S, g, pb):
                return False
            ls[g, o + FINAL_ON] = 1
            ls[g, o + FINAL_PASSED] = 0
            ls[g, o + FINAL_CUR] = (ls[g, o + LAST_ACTIVE] + 1) % n
        for _ in range(n):
            p = ls[g, o + FINAL_CUR]
            if not (ls[g, o + FINAL_PASSED] >> p) & 1:
                if final_has_send(T, S, g, pb, p):
                    S.gi[g, G_PLAYER] = p
                    S.gi[g, G_DPHASE] = T.P[pb + PH_FINAL]
                    ls[g, o + CUR] = SUB_FINAL
                    return True
                ls[g, o + FINAL_PASSED] |= 1 << p
            ls[g, o + FINAL_CUR] = (p + 1) % n
        ls[g, o + FINAL_ON] = 0
        S.gi[g, G_PLAYER] = tp
        return False
    return False


@kernel
def decision_mask(T, S, g, pb, mask):
    ls = S.ls
    o = T.P[pb + B_LS]
    sub = ls[g, o + CUR]
    p = S.gi[g, G_PLAYER]
    if sub == SUB_DEPLOY:
        st = T.P[pb + DEPLOY_START]
        for q in range(5):
            mask[st + q] = 1
        return 0
    if sub == SUB_MOVE:
        st = T.P[pb + MOVE_START]
        for q in range(5):
            if q != ls[g, o + COUNT]:
                mask[st + q] = 1
        return 0
    if sub == SUB_LEAVE:
        st = T.P[pb + LEAVE_START]
        dropped = 0
        oc = T.P[P_O_COMP]
        stamp = S.gi[g, G_STAMP] + 1
        S.gi[g, G_STAMP] = stamp
        for j in range(S.gi[g, G_NCOMP]):
            root = find(S.nd, g, ls[g, oc + j])
            if S.nd[g, root, N_SCRATCH] == stamp:
                continue
            S.nd[g, root, N_SCRATCH] = stamp
            if may_send(T, S, g, pb, leave_quarter(T, S, g, pb, root), p):
                i = leave_index(T, S, g, pb, root)
                if i < 0:
                    dropped += 1
                else:
                    mask[st + i] = 1
        mask[st + LEAVE_N - 1] = 1
        return dropped
    if sub == SUB_FINAL:
        dropped = final_scan(T, S, g, pb, p, mask, -1)
        mask[T.P[pb + FINAL_START] + NSLOT * T.P[P_ROWS] * T.P[P_COLS]] = 1
        return dropped
    return 0


@kernel
def decision_apply(T, S, g, pb, a):
    ls = S.ls
    o = T.P[pb + B_LS]
    sub = ls[g, o + CUR]
    p = S.gi[g, G_PLAYER]
    kind = H_PLUG + S.gi[g, G_DPLUG]
    if sub == SUB_DEPLOY:
        q = a - T.P[pb + DEPLOY_START]
        if q < 0 or q > 4:
            return 0
        if q == 4:
            hist_row(T, S, g, kind, 64 * CODE_PASS, 0, 0)
        else:
            ls[g, T.P[P_O_SUPPLY] + p] -= 1
            ls[g, o + Q + 8 * q + p] += 1
            ls[g, o + MAY_MOVE] = 1
            hist_row(T, S, g, kind, 64 * CODE_DEPLOY, q, 0)
        return 1
    if sub == SUB_MOVE:
        q = a - T.P[pb + MOVE_START]
        if q < 0 or q > 4 or q == ls[g, o + COUNT]:
            return 0
        if q == 4:
            hist_row(T, S, g, kind, 64 * CODE_PASS, 0, 0)
        else:
            ls[g, o + COUNT] = q
            hist_row(T, S, g, kind, 64 * CODE_MOVE, q, 0)
        ls[g, o + MAY_MOVE] = 0
        return 1
    if sub == SUB_LEAVE:
        local = a - T.P[pb + LEAVE_START]
        if local < 0 or local >= LEAVE_N:
            return 0
        if local == LEAVE_N - 1:
            hist_row(T, S, g, kind, 64 * CODE_PASS, 0, 0)
            ls[g, o + LEAVE_I] += 1
            return 1
        root, x, y, seg = leave_decode(T, S, g, pb, local)
        if root < 0:
            return 0
        q = -1
        oc = T.P[P_O_COMP]
        for j in range(S.gi[g, G_NCOMP]):
            if find(S.nd, g, ls[g, oc + j]) == root:
                q = leave_quarter(T, S, g, pb, root)
        if not may_send(T, S, g, pb, q, p) or leave_index(T, S, g, pb, root) != local:
            return 0
        send(T, S, g, pb, root, q, x, y, seg)
        return 1
    if sub == SUB_FINAL:
        local = a - T.P[pb + FINAL_START]
        rows = T.P[P_ROWS]
        cols = T.P[P_COLS]
        rc = rows * cols
        if local < 0 or local > NSLOT * rc:
            return 0
        n = T.P[P_NPLAYERS]
        if local == NSLOT * rc:
            hist_row(T, S, g, kind, 64 * CODE_PASS, 0, 0)
            ls[g, o + FINAL_PASSED] |= 1 << p
            ls[g, o + FINAL_CUR] = (p + 1) % n
            return 1
        slot = local // rc
        cell = local % rc
        x = S.gi[g, G_X0] + cell % cols
        y = S.gi[g, G_Y0] + cell // cols
        off = T.P[P_GOFF]
        w = S.grid.shape[1]
        if not (0 <= x + off < w and 0 <= y + off < w):
            return 0
        k = S.grid[g, y + off, x + off]
        if k < 0:
            return 0
        seg = T.tile[S.pl[g, k, 2], T.P[pb + B_TILE] + C_SEGAT + NSLOT * S.pl[g, k, 3] + slot]
        if seg < 0:
            return 0
        root = find(S.nd, g, S.pl[g, k, 4] + seg)
        q = final_quarter(T, S, g, pb, root)
        if not may_send(T, S, g, pb, q, p) or final_scan(T, S, g, pb, p, S.gi[g], root) != local:
            return 0
        send(T, S, g, pb, root, q, x, y, seg)
        ls[g, o + FINAL_CUR] = (p + 1) % n
        return 1
    return 0


@kernel
def decision_apply_row(T, S, g, pb, a, b, c):
    ls = S.ls
    o = T.P[pb + B_LS]
    sub = ls[g, o + CUR]
    code = a // 64
    seg = a % 64
    if code == CODE_PASS:
        if sub == SUB_DEPLOY:
            return decision_apply(T, S, g, pb, T.P[pb + DEPLOY_START] + 4)
        if sub == SUB_MOVE:
            return decision_apply(T, S, g, pb, T.P[pb + MOVE_START] + 4)
        if sub == SUB_LEAVE:
            return decision_apply(T, S, g, pb, T.P[pb + LEAVE_START] + LEAVE_N - 1)
        return decision_apply(T, S, g, pb, T.P[pb + FINAL_START] + NSLOT * T.P[P_ROWS] * T.P[P_COLS])
    if code == CODE_DEPLOY:
        return decision_apply(T, S, g, pb, T.P[pb + DEPLOY_START] + b) if sub == SUB_DEPLOY and 0 <= b < 4 else 0
    if code == CODE_MOVE:
        return decision_apply(T, S, g, pb, T.P[pb + MOVE_START] + b) if sub == SUB_MOVE and 0 <= b < 4 else 0
    if code != CODE_SEND or (sub != SUB_LEAVE and sub != SUB_FINAL):
        return 0
    off = T.P[P_GOFF]
    w = S.grid.shape[1]
    if not (0 <= b + off < w and 0 <= c + off < w):
        return 0
    k = S.grid[g, c + off, b + off]
    if k < 0 or seg >= T.tile[S.pl[g, k, 2], TC_NSEG]:
        return 0
    root = find(S.nd, g, S.pl[g, k, 4] + seg)
    p = S.gi[g, G_PLAYER]
    if sub == SUB_LEAVE:
        q = -1
        oc = T.P[P_O_COMP]
        for j in range(S.gi[g, G_NCOMP]):
            if find(S.nd, g, ls[g, oc + j]) == root:
                q = leave_quarter(T, S, g, pb, root)
    else:
        q = final_quarter(T, S, g, pb, root)
    if not may_send(T, S, g, pb, q, p):
        return 0
    send(T, S, g, pb, root, q, b, c, seg)
    if sub == SUB_FINAL:
        ls[g, o + FINAL_CUR] = (p + 1) % T.P[P_NPLAYERS]
    return 1


@kernel
def random_candidate(T, S, g, pb, root, q, found, pick):
    """:func:`random_send` meets a move onto ``root`` from quarter ``q``: if seat G_PLAYER may make it, it
    is legal move ``found + 1``, made when that is ``pick``.  Returns the legal moves found so far."""
    if not may_send(T, S, g, pb, q, S.gi[g, G_PLAYER]):
        return found
    if found + 1 == pick:
        k = S.nd[g, root, N_PL]
        send(T, S, g, pb, root, q, S.pl[g, k, 0], S.pl[g, k, 1], root - S.pl[g, k, 4])
    return found + 1


@kernel
def random_send(T, S, g, pb, final, pick):
    """The ``pick``-th legal move of seat G_PLAYER (0: count them, returns how many), named by the root's segment."""
    nd = S.nd
    found = 0
    if final:
        for i in range(S.gi[g, G_NNODES]):
            if nd[g, i, N_PARENT] == i:
                found = random_candidate(T, S, g, pb, i, final_quarter(T, S, g, pb, i), found, pick)
                if pick and found == pick:
                    return found
        return found
    oc = T.P[P_O_COMP]
    stamp = S.gi[g, G_STAMP] + 1
    S.gi[g, G_STAMP] = stamp
    for j in range(S.gi[g, G_NCOMP]):
        root = find(nd, g, S.ls[g, oc + j])
        if nd[g, root, N_SCRATCH] == stamp:
            continue
        nd[g, root, N_SCRATCH] = stamp
        found = random_candidate(T, S, g, pb, root, leave_quarter(T, S, g, pb, root), found, pick)
        if pick and found == pick:
            return found
    return found


@kernel
def decision_random(T, S, g, pb):
    ls = S.ls
    o = T.P[pb + B_LS]
    sub = ls[g, o + CUR]
    if sub == SUB_DEPLOY:
        return decision_apply(T, S, g, pb, T.P[pb + DEPLOY_START] + np.random.randint(0, 5))
    if sub == SUB_MOVE:
        q = np.random.randint(0, 4)  # the three other quarters and pass
        if q >= ls[g, o + COUNT]:
            q += 1
        return decision_apply(T, S, g, pb, T.P[pb + MOVE_START] + q)
    final = sub == SUB_FINAL
    n = random_send(T, S, g, pb, final, 0)
    pick = np.random.randint(0, n + 1)
    if pick < n:
        random_send(T, S, g, pb, final, pick + 1)
        if final:
            ls[g, o + FINAL_CUR] = (S.gi[g, G_PLAYER] + 1) % T.P[P_NPLAYERS]
        return 1
    if final:
        return decision_apply(T, S, g, pb, T.P[pb + FINAL_START] + NSLOT * T.P[P_ROWS] * T.P[P_COLS])
    return decision_apply(T, S, g, pb, T.P[pb + LEAVE_START] + LEAVE_N - 1)


@kernel
def decision_pass(T, S, g, pb):
    """Pass in the open decision (every phase of the Count may be passed)."""
    return decision_apply_row(T, S, g, pb, 64 * CODE_PASS, 0, 0)


# ---------------------------------------------------------------- observation
@kernel
def observe(T, S, g, pb, seat, board, glob):
    ls = S.ls
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    gc = T.P[pb + G_COUNT]
    c = ls[g, o + COUNT]
    if 0 <= c < 4:
        glob[gc + c] = 1.0
    inv = T.F[F_INV_FOLLOWERS]
    for q in range(4):
        for p in range(n):
            k = ls[g, o + Q + 8 * q + p]
            if k:
                glob[gc + 4 + q * n + (p - seat) % n] = k * inv
    og = T.P[P_O_GUEST]
    chg = T.P[pb + CH_GUESTS]
    for i in range(S.gi[g, G_NGUEST]):
        root = find(S.nd, g, ls[g, og + 2 * i])
        mark_tiles(T, S, g, root, board[chg + (ls[g, og + 2 * i + 1] - seat) % n], True)
    oc = T.P[P_O_COMP]
    for j in range(S.gi[g, G_NCOMP]):
        mark_tiles(T, S, g, find(S.nd, g, ls[g, oc + j]), board[T.P[pb + CH_COMPLETING]], False)


# ---------------------------------------------------------------- Python side
def tile_columns(rules: Any) -> np.ndarray:
    cols = np.zeros((len(rules.tiles), C_SEGAT + 4 * NSLOT), dtype=np.int16)
    seg_at = CountFinalCodec(rules, 1, 1).seg_at
    if seg_at.shape[2] != NSLOT:  # pragma: no cover - coverage refuses tiles with several buildings
        raise RuntimeError(f"count_final has {seg_at.shape[2]} slots per cell, the kernels {NSLOT}")
    for t, tile in enumerate(rules.tiles):
        if tile.id.startswith("CO") and tile.id[2:].isdigit():
            cols[t, C_BLOCK] = int(tile.id[2:])
            for i, seg in enumerate(tile.segments):
                if CITY_TAG in seg.tags:
                    cols[t, C_CITYF] |= 1 << i
        if any(s.kind == BUILDING and s.building in CATHEDRAL_BUILDINGS for s in tile.segments):
            cols[t, C_BQ] = 1
        cols[t, C_SEGAT:] = seg_at[t].reshape(-1)
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    phases = ["tile", "follower"] + [p for p in rules.phases if p not in ("tile", "follower")]
    return {
        "start_tile": rules.tile_index["CO1"], "start_x": BLOCK_X, "start_y": BLOCK_Y, "start_r": 0,
        "only_occupied": 1 if exp.options.only_occupied else 0,
        "market_only": 1 if exp.options.final_scoring == "market_only" else 0,
        "active_last": 1 if exp.options.leave_order == "active_last" else 0,
        "ph_leave": phases.index("count_leave"), "ph_deploy": phases.index("count_deploy"),
        "ph_move": phases.index("count_move"), "ph_final": phases.index("count_final"),
    }  # fmt: skip


def positions(encoder: Any) -> dict[str, int]:
    codecs = encoder.codec.codecs
    if max_buildings(encoder.rules) != 1:  # pragma: no cover - coverage refuses tiles with several buildings
        raise RuntimeError("the Count's compiled ranges assume one building per tile")
    return {
        "leave_start": codecs["count_leave"].start, "deploy_start": codecs["count_deploy"].start,
        "move_start": codecs["count_move"].start, "final_start": codecs["count_final"].start,
        "g_count": list(encoder.global_names).index("count_in_castle"),
        "ch_guests": list(encoder.channel_names).index("guests_p0"),
        "ch_completing": list(encoder.channel_names).index("completing"),
    }  # fmt: skip


def setup_tiles(rules: Any, exp: Any) -> list[int]:
    """The block's tiles the setup kernel lays besides the start tile (out of the bag)."""
    return [rules.tile_index[f"CO{k}"] for k in range(2, 13)]


def history_rows(rules: Any, exp: Any) -> int:
    """Rows its decisions log per tile, at most: a deployment or its pass, a Count move or its pass, a
    count_leave pass per seat, and a follower leaving a quarter (each one was deployed on some turn); the
    final round's passes and moves fit in the same bound."""
    return 3 + rules.config.num_players


def history_row(rules: Any, action: Any, tile_at: Any) -> tuple[int, int, int]:
    """The history row naming ``action`` (the inverse of :func:`history_action`)."""
    t = type(action)
    if t is Pass:
        return 64 * CODE_PASS, 0, 0
    if t is CountDeploy or t is CountMove:
        if not 0 <= action.quarter < 4:
            raise IllegalActionError(f"quarter must be 0..3, got {action.quarter!r}")
        return 64 * (CODE_DEPLOY if t is CountDeploy else CODE_MOVE), action.quarter, 0
    if t is CountSend:
        k = tile_at(action.x, action.y)
        if k < 0:
            raise IllegalActionError(f"{action.to_text()!r}: no tile at ({action.x},{action.y})")
        try:
            seg = rules.tiles[k].segment_index(action.segment)
        except KeyError as exc:
            raise IllegalActionError(f"{action.to_text()!r}: {exc.args[0]}") from None
        return 64 * CODE_SEND + seg, action.x, action.y
    raise IllegalActionError(f"the Count's phases take count_deploy, count_move, count_send or pass, got {action!r}")


def history_action(rules: Any, a: int, b: int, c: int, tile_at: Any) -> Any:
    """The reference's action of one of this plug-in's history rows (``tile_at(x, y)``: the tile type there)."""
    code, seg = divmod(a, 64)
    if code == CODE_DEPLOY:
        return CountDeploy(b)
    if code == CODE_MOVE:
        return CountMove(b)
    if code == CODE_SEND:
        return CountSend(b, c, rules.tiles[tile_at(b, c)].segments[seg].name)
    return Pass()


SUPPORT = FastSupport(
    hooks=frozenset({"setup", "after_placement", "stages", "field_cities", "extra_completed", "followers_held"}),
    options=frozenset({"only_occupied", "final_scoring", "leave_order"}),
    params=params,
    positions=positions,
    kernels={
        "setup": setup,
        "after_placement": after_placement,
        "field_cities": field_cities,
        "extra_completed": extra_completed,
        "decision_open": decision_open,
        "decision_mask": decision_mask,
        "decision_apply": decision_apply,
        "decision_random": decision_random,
        "decision_apply_row": decision_apply_row,
        "decision_pass": decision_pass,
        "observe": observe,
    },
    own=OWN,
    slots=SLOTS,
    tile_columns=tile_columns,
    phases=("count_leave", "count_deploy", "count_move", "count_final"),
    setup_tiles=setup_tiles,
    history_action=history_action,
    history_row=history_row,
    # a field's extra city is in the spot features' field value (the engine's field_cities); the King's
    # extra completed city reaches the features only through the one-ply play-out
    features=frozenset({"field_cities", "extra_completed"}),
    history_rows=history_rows,
)
