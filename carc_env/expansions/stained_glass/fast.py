"""Stained Glass in the compiled engine (:mod:`carc_env.fast`): its kernels.

As :mod:`.rules`, over the engine's arrays:

* the token bag: the ``bag_order`` tokens first (parameters), then a pool kept
  as the reference's list (a draw pops a uniformly random position, scored
  windows append their kinds), drawn from with the game's own generator
  (:mod:`carc_env.fast.rng`: the reference's ``game.rng`` continued exactly,
  so both engines draw the same tokens); ``setup`` hands out ``start_tokens``;
* token draws: ``after_draw`` (option ``token_on="draw"``: every drawn cloister-like or
  cathedral tile, discarded ones included) or ``after_placement`` (``"place"``),
  and ``on_completed`` (a completed cloister-like building, a completed city
  holding a cathedral segment);
* its three decision phases through the engine's plug-in decisions:
  ``glass_thief`` then ``glass_steal`` at ``A_AFTER_FOLLOWER``, ``glass_window``
  at ``A_END_TURN`` (the action ranges and indices of :mod:`.actions`); a thief
  is an ordinary road follower, remembered (node, owner) for the ``thieves_p*``
  channels until its road is scored (``on_scored``);
* ``final_scoring``: each player's best combination of complete windows (the
  reference's :func:`.tokens.best_windows`, tabulated per finished copies of
  each basic window when the configuration is built: parameters ``best_*``),
  plus loose tokens;
* ``observe`` / ``observe_windows``: :mod:`.observe`'s thieves channels, its two
  global features and the ``windows`` tensor.
* the greedy baseline's :mod:`.heuristics`, compiled: ``asset_value`` (the best
  windows per finished copies with loose tokens worth 0, tabulated as the
  parameters ``asset_*``) and ``greedy_decision`` in its three phases; and
  ``decision_pass``, which passes them in the one-ply play-out of the action
  features and greedy.

The kernels know the shape of the shipped token set (12 kinds in 4 basic
windows of 3, 2 copies each; the windows: runs of neighbouring basic windows);
:func:`params` checks the data against it.

History rows (``kernels.H_PLUG`` + the plug-in's position): ``a = 64 * code +
arg`` with code 0 pass, 1 thief (arg: the road's segment, ``b, c`` the tile's
cell), 2 steal (arg: the kind, 12 for a random one; ``b`` the victim), 3
window (arg: the shape).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.actions import IllegalActionError, Pass
from ...core.tiles import BUILDING, CITY, ROAD
from ...fast.features import copy_game
from ...fast.kernels import (
    A_AFTER_FOLLOWER,
    A_END_TURN,
    G_BAG_I,
    G_BAG_N,
    G_DPHASE,
    G_DPLUG,
    G_NFL,
    G_NPL,
    G_PLAYER,
    G_TURNP,
    G_X0,
    G_Y0,
    H_PLUG,
    N_NEXT,
    N_OCC,
    N_OWNER,
    N_PL,
    apply_decision,
    find,
    hist_row,
    log_row,
)
from ...fast.rng import integers
from ...fast.seam import B_AWARD, B_LS, B_TILE, inline_kernel, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_COLS, P_NPLAYERS, P_O_FL, P_O_RNG, P_O_SCORES, P_O_SUPPLY, P_ROWS, TC_CE, TC_NSEG
from .heuristics import KEPT, LATE, TOKEN_VALUE
from .rules import CATHEDRAL_TAG, KEY, PlaceThief, ScoreWindow, Steal, token_set
from .tokens import best_windows

# The token set the kernels are written for (checked against the data by params()).
NK = 12  # token kinds
NW = 4  # basic windows, 3 kinds each, in token order
KPW = 3
COPIES = 2
NSHAPE = NW * (NW + 1) // 2  # runs of neighbouring basic windows: 10
TOTAL = NK * COPIES
MAX_STEALS = 4  # the glass_steals_left feature's scale (observe.MAX_STEALS)
MAXP = 8  # seats the per-game integers hold
BASE3 = COPIES + 1
NAVAIL = BASE3**NW  # finished copies of each basic window, 0..COPIES each
SHAPE_SIZE = np.array([s for s in range(1, NW + 1) for _ in range(NW - s + 1)], dtype=np.int64)
SHAPE_FIRST = np.array([f for s in range(1, NW + 1) for f in range(NW - s + 1)], dtype=np.int64)

OWN = (
    "thief_start", "steal_start", "window_start", "ph_thief", "ph_steal", "ph_window",
    "token_on_place", "need_monk", "protect", "from_self", "steal_random", "final_none", "loose",
    *(f"points_{i}" for i in range(NW)),
    "forced_n", *(f"forced_{i}" for i in range(TOTAL)),
    *(f"start_{k}" for k in range(NK)),
    *(f"best_{i}" for i in range(NAVAIL)),
    *(f"asset_{i}" for i in range(NAVAIL)),
    "ch_thieves", "g_bag", "g_steals", "w_col",
)  # fmt: skip
_POS = dict(zip(OWN, own_positions(OWN), strict=True))
(THIEF_START, STEAL_START, WINDOW_START, PH_THIEF, PH_STEAL, PH_WINDOW, TOKEN_ON_PLACE, NEED_MONK, PROTECT, FROM_SELF,
 STEAL_RANDOM, FINAL_NONE, LOOSE) = (_POS[n] for n in OWN[:13])  # fmt: skip
POINTS0 = _POS["points_0"]
FORCED_N = _POS["forced_n"]
FORCED0 = _POS["forced_0"]
START0 = _POS["start_0"]
BEST0 = _POS["best_0"]
ASSET0 = _POS["asset_0"]  # the heuristics' best windows (loose tokens worth 0): used | shape0 << 5 | points << 9
CH_THIEVES, G_BAG, G_STEALS, W_COL = _POS["ch_thieves"], _POS["g_bag"], _POS["g_steals"], _POS["w_col"]

# per-game integers
CUR, STEALS, DONE, NPOOL, FI, NTHIEF = range(6)
POOL = 8  # the pool, in the reference's list order
HELD = POOL + TOTAL  # HELD + NK * p + k: copies of kind k seat p holds
THIEF_CAP = 32  # thieves on the board at once (the built-in tiles allow 11)
THIEVES = HELD + NK * MAXP  # (node, owner) pairs
SLOTS = THIEVES + 2 * THIEF_CAP
SUB_THIEF, SUB_STEAL, SUB_WINDOW = 1, 2, 3
DONE_THIEF, DONE_STEAL, DONE_WINDOW = 1, 2, 4
CODE_PASS, CODE_THIEF, CODE_STEAL, CODE_WINDOW = range(4)
THIEF_PASS = 4
# tile columns
C_TOKEN, C_BSEG, C_ROADS, C_DEAD, C_CATH = range(5)
AWARD_WINDOW, AWARD_LOOSE = 0, 1


# ---------------------------------------------------------------- tokens
@kernel
def draw_token(T, S, g, pb, p):
    """StainedGlass.draw_token: the next bag_order token, else a uniformly random one of the pool."""
    ls = S.ls
    o = T.P[pb + B_LS]
    fi = ls[g, o + FI]
    if fi < T.P[pb + FORCED_N]:
        k = T.P[pb + FORCED0 + fi]
        ls[g, o + FI] = fi + 1
    else:
        n = ls[g, o + NPOOL]
        if n == 0:
            return
        i = integers(ls, g, T.P[P_O_RNG], n)
        k = ls[g, o + POOL + i]
        for j in range(i, n - 1):
            ls[g, o + POOL + j] = ls[g, o + POOL + j + 1]
        ls[g, o + NPOOL] = n - 1
    ls[g, o + HELD + NK * p + k] += 1


@kernel
def setup(T, S, g, pb):
    ls = S.ls
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    np_ = 0
    for k in range(NK):
        left = COPIES
        packed = T.P[pb + START0 + k]
        for p in range(n):
            c = (packed >> (2 * p)) & 3
            ls[g, o + HELD + NK * p + k] = c
            left -= c
        for i in range(T.P[pb + FORCED_N]):
            if T.P[pb + FORCED0 + i] == k:
                left -= 1
        for _ in range(left):
            ls[g, o + POOL + np_] = k
            np_ += 1
    ls[g, o + NPOOL] = np_


# The hooks the engine calls every turn are tiny guards inlined where it calls them (a call into a plug-in
# kernel costs tens of nanoseconds); the work is in kernels called only when there is some.
@inline_kernel
def after_draw(T, S, g, pb, t):
    if not T.P[pb + TOKEN_ON_PLACE] and T.tile[t, T.P[pb + B_TILE] + C_TOKEN]:
        draw_token(T, S, g, pb, S.gi[g, G_TURNP])


@inline_kernel
def after_placement(T, S, g, pb, t, x, y, r):
    S.ls[g, T.P[pb + B_LS] + DONE] = 0  # a new turn's stages
    if T.P[pb + TOKEN_ON_PLACE] and T.tile[t, T.P[pb + B_TILE] + C_TOKEN]:
        draw_token(T, S, g, pb, S.gi[g, G_PLAYER])


@kernel
def on_completed(T, S, g, pb, root, kind):
    nd = S.nd
    c = T.P[pb + B_TILE]
    if kind == BUILDING:
        k = nd[g, root, N_PL]
        if root - S.pl[g, k, 4] == T.tile[S.pl[g, k, 2], c + C_BSEG]:
            draw_token(T, S, g, pb, S.gi[g, G_TURNP])
    elif kind == CITY:
        x = root
        while True:
            k = nd[g, x, N_PL]
            if (T.tile[S.pl[g, k, 2], c + C_CATH] >> (x - S.pl[g, k, 4])) & 1:
                draw_token(T, S, g, pb, S.gi[g, G_TURNP])
                return
            x = nd[g, x, N_NEXT]
            if x == root:
                break


@inline_kernel
def on_scored(T, S, g, pb, root, kind, final):
    if kind == ROAD and S.ls[g, T.P[pb + B_LS] + NTHIEF]:
        forget_thieves(T, S, g, pb)


@kernel
def forget_thieves(T, S, g, pb):
    """Thieves whose road was scored (their owner no longer on their node) leave the list."""
    ls = S.ls
    o = T.P[pb + B_LS]
    j = 0
    for i in range(ls[g, o + NTHIEF]):
        node = ls[g, o + THIEVES + 2 * i]
        owner = ls[g, o + THIEVES + 2 * i + 1]
        if S.nd[g, node, N_OWNER] == owner:
            ls[g, o + THIEVES + 2 * j] = node
            ls[g, o + THIEVES + 2 * j + 1] = owner
            j += 1
    ls[g, o + NTHIEF] = j


# ---------------------------------------------------------------- windows
@kernel
def basic_done(T, S, g, pb, p, w):
    """Finished copies of basic window w held by seat p (the fewest copies of its kinds)."""
    o = T.P[pb + B_LS] + HELD + NK * p + KPW * w
    m = S.ls[g, o]
    for j in range(1, KPW):
        m = min(m, S.ls[g, o + j])
    return m


@kernel
def shape_copies(T, S, g, pb, p, i):
    """Disjoint copies of shape i seat p's tokens complete."""
    f = SHAPE_FIRST[i]
    m = basic_done(T, S, g, pb, p, f)
    for w in range(f + 1, f + SHAPE_SIZE[i]):
        m = min(m, basic_done(T, S, g, pb, p, w))
    return m


@kernel
def any_complete(T, S, g, pb, p):
    for w in range(NW):
        if basic_done(T, S, g, pb, p, w):
            return True
    return False


@kernel
def take_window(T, S, g, pb, p, i):
    """One copy of each kind of shape i goes from seat p back into the bag; returns its points."""
    ls = S.ls
    o = T.P[pb + B_LS]
    n = ls[g, o + NPOOL]
    for k in range(KPW * SHAPE_FIRST[i], KPW * (SHAPE_FIRST[i] + SHAPE_SIZE[i])):
        ls[g, o + HELD + NK * p + k] -= 1
        ls[g, o + POOL + n] = k
        n += 1
    ls[g, o + NPOOL] = n
    return T.P[pb + POINTS0 + SHAPE_SIZE[i] - 1]


@kernel
def award(T, S, g, pb, p, which, points, final):
    S.ls[g, T.P[P_O_SCORES] + p] += points
    log_row(T, S, g, T.P[pb + B_AWARD] + which, final, points, 0, points, 1 << p)


@kernel
def final_scoring(T, S, g, pb):
    if T.P[pb + FINAL_NONE]:
        return
    ls = S.ls
    o = T.P[pb + B_LS]
    loose = T.P[pb + LOOSE]
    for p in range(T.P[P_NPLAYERS]):
        held = 0
        for k in range(NK):
            held += ls[g, o + HELD + NK * p + k]
        if held == 0:
            continue
        code = 0
        mul = 1
        for w in range(NW):
            code += mul * basic_done(T, S, g, pb, p, w)
            mul *= BASE3
        packed = T.P[pb + BEST0 + code]
        total = 0
        nshapes = packed & 15
        for j in range(nshapes):
            total += take_window(T, S, g, pb, p, (packed >> (4 + 4 * j)) & 15)
        left = 0
        for k in range(NK):
            left += ls[g, o + HELD + NK * p + k]
        total += loose * left
        if (nshapes or (loose and left)) and total:
            award(T, S, g, pb, p, AWARD_WINDOW if nshapes else AWARD_LOOSE, total, 1)


# ---------------------------------------------------------------- thieves and steals
@kernel
def thief_roads(T, S, g, pb):
    """StainedGlass.thief_roads: a bit per segment of the tile just placed a thief may go on now."""
    nd = S.nd
    p = S.gi[g, G_TURNP]
    if S.ls[g, T.P[P_O_SUPPLY] + p] <= 0:
        return 0
    c = T.P[pb + B_TILE]
    k = S.gi[g, G_NPL] - 1
    t = S.pl[g, k, 2]
    base = S.pl[g, k, 4]
    b = T.tile[t, c + C_BSEG]
    if b < 0:
        return 0
    if T.P[pb + NEED_MONK] and nd[g, base + b, N_OWNER] != p:
        return 0
    roads = T.tile[t, c + C_ROADS]
    dead = T.tile[t, c + C_DEAD]
    out = 0
    for i in range(T.tile[t, TC_NSEG]):
        if not (roads >> i) & 1:
            continue
        root = find(nd, g, base + i)
        if nd[g, root, N_OCC] > 0:
            continue
        if (dead >> i) & 1:
            out |= 1 << i
            continue
        x = root  # joined to a road of another tile that ends at its cloister-like building?
        while True:
            kx = nd[g, x, N_PL]
            if kx != k and (T.tile[S.pl[g, kx, 2], c + C_DEAD] >> (x - S.pl[g, kx, 4])) & 1:
                out |= 1 << i
                break
            x = nd[g, x, N_NEXT]
            if x == root:
                break
    return out


@kernel
def lowest_side(T, S, g, seg):
    """The lowest side (placed rotation) segment ``seg`` of the tile just placed leaves through (-1: none)."""
    k = S.gi[g, G_NPL] - 1
    t = S.pl[g, k, 2]
    r = S.pl[g, k, 3]
    for s in range(4):
        if T.tile[t, TC_CE + 4 * r + s] == seg:
            return s
    return -1


@kernel
def place_thief(T, S, g, pb, seg):
    nd, ls = S.nd, S.ls
    o = T.P[pb + B_LS]
    k = S.gi[g, G_NPL] - 1
    node = S.pl[g, k, 4] + seg
    p = S.gi[g, G_PLAYER]
    ls[g, T.P[P_O_SUPPLY] + p] -= 1
    nd[g, node, N_OWNER] = p
    nd[g, find(nd, g, node), N_OCC] += 1
    ls[g, T.P[P_O_FL] + S.gi[g, G_NFL]] = node
    S.gi[g, G_NFL] += 1
    n = ls[g, o + NTHIEF]
    if n < THIEF_CAP:  # params() checks the tiles cannot hold more
        ls[g, o + THIEVES + 2 * n] = node
        ls[g, o + THIEVES + 2 * n + 1] = p
        ls[g, o + NTHIEF] = n + 1
    ls[g, o + STEALS] += 1
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], 64 * CODE_THIEF + seg, S.pl[g, k, 0], S.pl[g, k, 1])


@kernel
def stealable(T, S, g, pb, v, k):
    """Copies of kind k that may be stolen from seat v now."""
    c = S.ls[g, T.P[pb + B_LS] + HELD + NK * v + k]
    if T.P[pb + PROTECT]:
        c = max(0, c - basic_done(T, S, g, pb, v, k // KPW))
    return c


@kernel
def victim_ok(T, S, g, pb, p, v):
    return v != p or T.P[pb + FROM_SELF] != 0


@kernel
def stealable_total(T, S, g, pb, v):
    total = 0
    for k in range(NK):
        total += stealable(T, S, g, pb, v, k)
    return total


@kernel
def any_steal(T, S, g, pb, p):
    for v in range(T.P[P_NPLAYERS]):
        if victim_ok(T, S, g, pb, p, v) and stealable_total(T, S, g, pb, v) > 0:
            return True
    return False


@kernel
def steal(T, S, g, pb, v, k):
    """Seat G_PLAYER takes kind k from seat v (k == NK: a random stealable one, drawn with the game's
    generator); 0 if it is not legal (nothing changed)."""
    ls = S.ls
    o = T.P[pb + B_LS]
    p = S.gi[g, G_PLAYER]
    n = T.P[P_NPLAYERS]
    if v < 0 or v >= n or not victim_ok(T, S, g, pb, p, v):
        return 0
    rnd = T.P[pb + STEAL_RANDOM] != 0
    if rnd != (k == NK) or k < 0 or k > NK:
        return 0
    if k == NK:
        total = stealable_total(T, S, g, pb, v)
        if total == 0:
            return 0
        r = integers(ls, g, T.P[P_O_RNG], total)
        k = 0
        while r >= stealable(T, S, g, pb, v, k):
            r -= stealable(T, S, g, pb, v, k)
            k += 1
        arg = NK
    else:
        if stealable(T, S, g, pb, v, k) == 0:
            return 0
        arg = k
    ls[g, o + HELD + NK * v + k] -= 1
    ls[g, o + HELD + NK * p + k] += 1
    ls[g, o + STEALS] -= 1
    if ls[g, o + STEALS] == 0:
        ls[g, o + DONE] |= DONE_STEAL
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], 64 * CODE_STEAL + arg, v, 0)
    return 1


# ---------------------------------------------------------------- the decision hooks
@inline_kernel
def decision_open(T, S, g, pb, anchor):
    # a thief or a steal after the follower, a window at the end of the turn: nothing between
    if anchor == A_AFTER_FOLLOWER:  # the anchors as constants: open_glass compiles for these two only
        return open_glass(T, S, g, pb, A_AFTER_FOLLOWER)
    if anchor == A_END_TURN:
        return open_glass(T, S, g, pb, A_END_TURN)
    S.ls[g, T.P[pb + B_LS] + CUR] = 0
    return False


@kernel
def open_glass(T, S, g, pb, anchor):
    """:func:`decision_open` at ``A_AFTER_FOLLOWER`` and ``A_END_TURN``."""
    ls = S.ls
    o = T.P[pb + B_LS]
    tp = S.gi[g, G_TURNP]
    ls[g, o + CUR] = 0
    if anchor == A_AFTER_FOLLOWER:
        if not ls[g, o + DONE] & DONE_THIEF:
            if thief_roads(T, S, g, pb):
                S.gi[g, G_PLAYER] = tp
                S.gi[g, G_DPHASE] = T.P[pb + PH_THIEF]
                ls[g, o + CUR] = SUB_THIEF
                return True
            ls[g, o + DONE] |= DONE_THIEF
        if not ls[g, o + DONE] & DONE_STEAL:
            if ls[g, o + STEALS] and any_steal(T, S, g, pb, tp):
                S.gi[g, G_PLAYER] = tp
                S.gi[g, G_DPHASE] = T.P[pb + PH_STEAL]
                ls[g, o + CUR] = SUB_STEAL
                return True
            ls[g, o + STEALS] = 0  # nothing to take: the remaining steals are lost
            ls[g, o + DONE] |= DONE_STEAL
        return False
    if anchor == A_END_TURN:
        if not ls[g, o + DONE] & DONE_WINDOW and any_complete(T, S, g, pb, tp):
            S.gi[g, G_PLAYER] = tp
            S.gi[g, G_DPHASE] = T.P[pb + PH_WINDOW]
            ls[g, o + CUR] = SUB_WINDOW
            return True
        return False
    return False


@kernel
def decision_mask(T, S, g, pb, mask):
    ls = S.ls
    o = T.P[pb + B_LS]
    sub = ls[g, o + CUR]
    p = S.gi[g, G_PLAYER]
    if sub == SUB_THIEF:
        st = T.P[pb + THIEF_START]
        roads = thief_roads(T, S, g, pb)
        for i in range(16):
            if (roads >> i) & 1:
                mask[st + lowest_side(T, S, g, i)] = 1
        mask[st + THIEF_PASS] = 1
    elif sub == SUB_STEAL:
        st = T.P[pb + STEAL_START]
        n = T.P[P_NPLAYERS]
        rnd = T.P[pb + STEAL_RANDOM]
        for v in range(n):
            if not victim_ok(T, S, g, pb, p, v):
                continue
            col = st + ((v - p) % n) * (NK + 1)
            if rnd:
                if stealable_total(T, S, g, pb, v) > 0:
                    mask[col + NK] = 1
            else:
                for k in range(NK):
                    if stealable(T, S, g, pb, v, k):
                        mask[col + k] = 1
        mask[st + n * (NK + 1)] = 1
    elif sub == SUB_WINDOW:
        st = T.P[pb + WINDOW_START]
        for i in range(NSHAPE):
            if shape_copies(T, S, g, pb, p, i):
                mask[st + i] = 1
        mask[st + NSHAPE] = 1
    return 0


@kernel
def apply_pass(T, S, g, pb, sub):
    ls = S.ls
    o = T.P[pb + B_LS]
    if sub == SUB_THIEF:
        ls[g, o + DONE] |= DONE_THIEF
    elif sub == SUB_STEAL:
        ls[g, o + STEALS] -= 1
        if ls[g, o + STEALS] == 0:
            ls[g, o + DONE] |= DONE_STEAL
    else:
        ls[g, o + DONE] |= DONE_WINDOW
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], 64 * CODE_PASS, 0, 0)
    return 1


@kernel
def apply_thief(T, S, g, pb, seg):
    if seg < 0 or seg >= 16 or not (thief_roads(T, S, g, pb) >> seg) & 1:
        return 0
    place_thief(T, S, g, pb, seg)
    return 1


@kernel
def apply_window(T, S, g, pb, i):
    p = S.gi[g, G_PLAYER]
    if i < 0 or i >= NSHAPE or shape_copies(T, S, g, pb, p, i) == 0:
        return 0
    award(T, S, g, pb, p, AWARD_WINDOW, take_window(T, S, g, pb, p, i), 0)
    hist_row(T, S, g, H_PLUG + S.gi[g, G_DPLUG], 64 * CODE_WINDOW + i, 0, 0)
    return 1


@kernel
def decision_apply(T, S, g, pb, a):
    o = T.P[pb + B_LS]
    sub = S.ls[g, o + CUR]
    if sub == SUB_THIEF:
        local = a - T.P[pb + THIEF_START]
        if local == THIEF_PASS:
            return apply_pass(T, S, g, pb, sub)
        if local < 0 or local > 3:
            return 0
        k = S.gi[g, G_NPL] - 1
        seg = T.tile[S.pl[g, k, 2], TC_CE + 4 * S.pl[g, k, 3] + local]
        if seg < 0 or lowest_side(T, S, g, seg) != local:
            return 0
        return apply_thief(T, S, g, pb, seg)
    if sub == SUB_STEAL:
        n = T.P[P_NPLAYERS]
        local = a - T.P[pb + STEAL_START]
        if local == n * (NK + 1):
            return apply_pass(T, S, g, pb, sub)
        if local < 0 or local > n * (NK + 1):
            return 0
        return steal(T, S, g, pb, (S.gi[g, G_PLAYER] + local // (NK + 1)) % n, local % (NK + 1))
    if sub == SUB_WINDOW:
        local = a - T.P[pb + WINDOW_START]
        if local == NSHAPE:
            return apply_pass(T, S, g, pb, sub)
        return apply_window(T, S, g, pb, local)
    return 0


@kernel
def decision_apply_row(T, S, g, pb, a, b, c):
    o = T.P[pb + B_LS]
    sub = S.ls[g, o + CUR]
    code = a // 64
    arg = a % 64
    if code == CODE_PASS:
        return apply_pass(T, S, g, pb, sub) if sub != 0 else 0
    if code == CODE_THIEF and sub == SUB_THIEF:
        k = S.gi[g, G_NPL] - 1
        if b != S.pl[g, k, 0] or c != S.pl[g, k, 1]:
            return 0
        return apply_thief(T, S, g, pb, arg)
    if code == CODE_STEAL and sub == SUB_STEAL:
        return steal(T, S, g, pb, b, arg)
    if code == CODE_WINDOW and sub == SUB_WINDOW:
        return apply_window(T, S, g, pb, arg)
    return 0


@kernel
def decision_pass(T, S, g, pb):
    """Pass in the open decision (every phase of Stained Glass may be passed)."""
    return decision_apply_row(T, S, g, pb, 64 * CODE_PASS, 0, 0)


@kernel
def decision_random(T, S, g, pb):
    o = T.P[pb + B_LS]
    sub = S.ls[g, o + CUR]
    p = S.gi[g, G_PLAYER]
    if sub == SUB_THIEF:
        roads = thief_roads(T, S, g, pb)
        n = 0
        for i in range(16):
            n += (roads >> i) & 1
        pick = np.random.randint(0, n + 1)
        for i in range(16):
            if (roads >> i) & 1:
                if pick == 0:
                    return apply_thief(T, S, g, pb, i)
                pick -= 1
        return apply_pass(T, S, g, pb, sub)
    if sub == SUB_STEAL:
        n = T.P[P_NPLAYERS]
        rnd = T.P[pb + STEAL_RANDOM]
        count = 0
        for v in range(n):
            if victim_ok(T, S, g, pb, p, v):
                if rnd:
                    count += 1 if stealable_total(T, S, g, pb, v) > 0 else 0
                else:
                    for k in range(NK):
                        count += 1 if stealable(T, S, g, pb, v, k) > 0 else 0
        pick = np.random.randint(0, count + 1)
        for v in range(n):
            if victim_ok(T, S, g, pb, p, v):
                if rnd:
                    if stealable_total(T, S, g, pb, v) > 0:
                        if pick == 0:
                            return steal(T, S, g, pb, v, NK)
                        pick -= 1
                else:
                    for k in range(NK):
                        if stealable(T, S, g, pb, v, k) > 0:
                            if pick == 0:
                                return steal(T, S, g, pb, v, k)
                            pick -= 1
        return apply_pass(T, S, g, pb, sub)
    if sub == SUB_WINDOW:
        count = 0
        for i in range(NSHAPE):
            count += 1 if shape_copies(T, S, g, pb, p, i) > 0 else 0
        pick = np.random.randint(0, count + 1)
        for i in range(NSHAPE):
            if shape_copies(T, S, g, pb, p, i) > 0:
                if pick == 0:
                    return apply_window(T, S, g, pb, i)
                pick -= 1
        return apply_pass(T, S, g, pb, sub)
    return 0


# ---------------------------------------------------------------- the greedy's heuristics (.heuristics)
@kernel
def avail_code(T, S, g, pb, p):
    """Seat p's finished copies of each basic window, as an index of the ``best_*`` / ``asset_*`` tables."""
    code = 0
    mul = 1
    for w in range(NW):
        code += mul * basic_done(T, S, g, pb, p, w)
        mul *= BASE3
    return code


@kernel
def asset_value(T, S, g, pb, p):
    """heuristics.asset_value: seat p's unscored tokens in points (the best windows at KEPT, every other
    token at TOKEN_VALUE)."""
    o = T.P[pb + B_LS] + HELD + NK * p
    n = 0
    for k in range(NK):
        n += S.ls[g, o + k]
    if n == 0:
        return 0.0
    packed = T.P[pb + ASSET0 + avail_code(T, S, g, pb, p)]
    return KEPT * (packed >> 9) + TOKEN_VALUE * (n - (packed & 31))


@kernel
def steal_gain(T, S, g, pb, X, x, p, v, a, before_p, before_v):
    """heuristics._steal's gain of seat p making the steal of flat action ``a`` from seat v: what it adds to
    p's holdings plus what it takes from v's, once the game has run on to its next decision (the reference
    applies the steal to a clone: the rest of the turn, the next draw and its token included).  Played out
    in slot x of the scratch state X; the game is not changed."""
    copy_game(T, S, g, X, x)
    apply_decision(T, X, x, a)
    return asset_value(T, X, x, pb, p) - before_p + before_v - asset_value(T, X, x, pb, v)


@kernel
def greedy_steal(T, S, g, pb, X, x, p):
    """heuristics._steal: the steal worth the most (gain, then the victim's score), the first on ties; pass
    when there is none."""
    n = T.P[P_NPLAYERS]
    st = T.P[pb + STEAL_START]
    before_p = asset_value(T, S, g, pb, p)
    osc = T.P[P_O_SCORES]
    rnd = T.P[pb + STEAL_RANDOM]
    best = -1
    best_gain = 0.0
    best_score = 0.0
    for v in range(n):
        if v == p:  # never from oneself (the reference skips it even where the rules allow it)
            continue
        before_v = asset_value(T, S, g, pb, v)
        for k in range(NK + 1):
            if rnd:
                if k < NK or stealable_total(T, S, g, pb, v) == 0:
                    continue
            elif k == NK or stealable(T, S, g, pb, v, k) == 0:
                continue
            a = st + ((v - p) % n) * (NK + 1) + k
            gain = steal_gain(T, S, g, pb, X, x, p, v, a, before_p, before_v)
            score = float(S.ls[g, osc + v])
            if best < 0 or gain > best_gain or (gain == best_gain and score > best_score):
                best = a
                best_gain = gain
                best_score = score
    return best if best >= 0 else st + n * (NK + 1)


@kernel
def greedy_window(T, S, g, pb, p):
    """heuristics._window: keep building while one more token finishes a bigger window, tokens are left in
    the bag and more than LATE of the land tiles; else score the first window of the best combination."""
    ls = S.ls
    o = T.P[pb + B_LS]
    st = T.P[pb + WINDOW_START]
    shape0 = (T.P[pb + ASSET0 + avail_code(T, S, g, pb, p)] >> 5) & 15
    if shape0 == 15:
        return st + NSHAPE
    bag = S.gi[g, G_BAG_N] - S.gi[g, G_BAG_I]
    tiles_left = bag / max(1, bag + S.gi[g, G_NPL])
    if (ls[g, o + FI] < T.P[pb + FORCED_N] or ls[g, o + NPOOL] > 0) and tiles_left > LATE:
        first = SHAPE_FIRST[shape0]
        for w in (first - 1, first + SHAPE_SIZE[shape0]):
            if 0 <= w < NW and basic_done(T, S, g, pb, p, w) == 0:
                have = 0
                for k in range(KPW * w, KPW * w + KPW):
                    if ls[g, o + HELD + NK * p + k]:
                        have += 1
                if have == KPW - 1:
                    return st + NSHAPE
    return st + shape0


@kernel
def greedy_decision(T, S, g, pb, X, x):
    """heuristics.greedy_action in the open decision, as a flat action (a steal is valued in slot x of the
    scratch state X)."""
    sub = S.ls[g, T.P[pb + B_LS] + CUR]
    p = S.gi[g, G_PLAYER]
    if sub == SUB_THIEF:
        st = T.P[pb + THIEF_START]
        roads = thief_roads(T, S, g, pb)
        if roads and S.ls[g, T.P[P_O_SUPPLY] + p] > 1:
            for v in range(T.P[P_NPLAYERS]):
                if v != p and stealable_total(T, S, g, pb, v) > 0:
                    for i in range(16):  # the first road (segment order), named by its lowest side
                        if (roads >> i) & 1:
                            return st + lowest_side(T, S, g, i)
        return st + THIEF_PASS
    if sub == SUB_STEAL:
        return greedy_steal(T, S, g, pb, X, x, p)
    if sub == SUB_WINDOW:
        return greedy_window(T, S, g, pb, p)
    return -1


# ---------------------------------------------------------------- observation
@kernel
def observe(T, S, g, pb, seat, board, glob):
    ls = S.ls
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    left = T.P[pb + FORCED_N] - ls[g, o + FI] + ls[g, o + NPOOL]
    glob[T.P[pb + G_BAG]] = np.float64(left) / TOTAL
    glob[T.P[pb + G_STEALS]] = np.float64(ls[g, o + STEALS]) / MAX_STEALS
    ch = T.P[pb + CH_THIEVES]
    rows = T.P[P_ROWS]
    cols = T.P[P_COLS]
    x0 = S.gi[g, G_X0]
    y0 = S.gi[g, G_Y0]
    for i in range(ls[g, o + NTHIEF]):
        node = ls[g, o + THIEVES + 2 * i]
        owner = ls[g, o + THIEVES + 2 * i + 1]
        if S.nd[g, node, N_OWNER] != owner:
            continue
        k = S.nd[g, node, N_PL]
        col = S.pl[g, k, 0] - x0
        row = S.pl[g, k, 1] - y0
        if 0 <= col < cols and 0 <= row < rows:
            board[ch + (owner - seat) % n, row, col] += 1


@kernel
def observe_windows(T, S, g, pb, seat, windows):
    ls = S.ls
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    wc = T.P[pb + W_COL]
    for i in range(n):
        s = (seat + i) % n
        for k in range(NK):
            windows[i, wc + k] = ls[g, o + HELD + NK * s + k]
        for j in range(NSHAPE):
            windows[i, wc + NK + j] = shape_copies(T, S, g, pb, s, j)


# ---------------------------------------------------------------- Python side
def _expansion(rules: Any) -> Any:
    return next(e for e in rules.expansions if e.KEY == KEY)


def _check_token_set() -> None:
    ts = token_set()
    shapes = [(s.size, s.windows[0]) for s in ts.shapes]
    expected = list(zip(SHAPE_SIZE.tolist(), SHAPE_FIRST.tolist(), strict=True))
    grouped = all(ts.window_of[k] == k // KPW for k in range(len(ts.kinds)))
    if len(ts.kinds) != NK or len(ts.windows) != NW or ts.copies != COPIES or not grouped or shapes != expected:
        raise RuntimeError(
            f"the compiled Stained Glass kernels are written for {NK} token kinds in {NW} basic windows of {KPW}, "
            f"{COPIES} copies each; the token data ({ts.source}) differs: update "
            "carc_env/expansions/stained_glass/fast.py"
        )


def tile_columns(rules: Any) -> np.ndarray:
    exp = _expansion(rules)
    cols = np.zeros((len(rules.tiles), 5), dtype=np.int16)
    cols[:, C_BSEG] = -1
    for t, tile in enumerate(rules.tiles):
        segs = tile.segments
        b = [i for i, s in enumerate(segs) if s.kind == BUILDING and s.building in exp.cloister_kinds]
        cath = [i for i, s in enumerate(segs) if s.kind == CITY and CATHEDRAL_TAG in s.tags]
        if b:
            cols[t, C_BSEG] = b[0]
            for i, s in enumerate(segs):
                if s.kind == ROAD:
                    cols[t, C_ROADS] |= 1 << i
                    if len(s.edges) == 1:
                        cols[t, C_DEAD] |= 1 << i
        for i in cath:
            cols[t, C_CATH] |= 1 << i
        cols[t, C_TOKEN] = 1 if (b or cath) else 0
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    _check_token_set()
    ts = token_set()
    opts = exp.options
    n = rules.config.num_players
    if n > MAXP:  # pragma: no cover - the engine holds at most 8 seats
        raise RuntimeError(f"the compiled Stained Glass holds {MAXP} players")
    thief_roads_max = sum(
        t.count * sum(1 for s in t.segments if s.kind == ROAD)
        for t in rules.tiles
        if any(s.kind == BUILDING and s.building in exp.cloister_kinds for s in t.segments)
    )
    if thief_roads_max > THIEF_CAP:  # pragma: no cover - the built-in tiles have 11
        raise RuntimeError(f"the tiles allow {thief_roads_max} thieves, the compiled Stained Glass holds {THIEF_CAP}")
    out: dict[str, int] = {
        "token_on_place": 1 if opts.token_on == "place" else 0,
        "need_monk": 1 if opts.thieves_need_monk else 0,
        "protect": 1 if opts.protect_complete_windows else 0,
        "from_self": 1 if opts.steal_from_self else 0,
        "steal_random": 1 if opts.steal_kind == "random" else 0,
        "final_none": 1 if opts.final_windows == "none" else 0,
        "loose": int(opts.loose_token_points),
    }
    points = exp.points
    for i in range(NW):
        out[f"points_{i}"] = int(points[i])
    forced = [ts.kind_index(tok) for tok in opts.bag_order.replace(",", " ").split()]
    out["forced_n"] = len(forced)
    for i in range(TOTAL):
        out[f"forced_{i}"] = forced[i] if i < len(forced) else 0
    start = [0] * NK
    groups = opts.start_tokens.split(";") if opts.start_tokens.strip() else []
    for p, group in enumerate(groups):
        for tok in group.replace(",", " ").split():
            start[ts.kind_index(tok)] += 1 << (2 * p)
    for k in range(NK):
        out[f"start_{k}"] = start[k]
    loose = int(opts.loose_token_points)
    for code in range(NAVAIL):
        avail = [(code // BASE3**w) % BASE3 for w in range(NW)]
        counts = [avail[k // KPW] for k in range(NK)]
        shapes = best_windows(ts, counts, points, loose)[1]
        packed = len(shapes)
        for j, i in enumerate(shapes):
            packed |= i << (4 + 4 * j)
        out[f"best_{code}"] = packed
        # the greedy's heuristics (heuristics.asset_value, _window): the best windows with loose tokens worth 0
        pts, chosen = best_windows(ts, counts, points)
        used = sum(len(ts.shapes[i].kinds) for i in chosen)
        out[f"asset_{code}"] = used | ((chosen[0] if chosen else 15) << 5) | (pts << 9)
    return out


def positions(encoder: Any) -> dict[str, int]:
    codecs = encoder.codec.codecs
    phases = list(encoder.phases)
    gnames = list(encoder.global_names)
    return {
        "thief_start": codecs["glass_thief"].start, "steal_start": codecs["glass_steal"].start,
        "window_start": codecs["glass_window"].start,
        "ph_thief": phases.index("glass_thief"), "ph_steal": phases.index("glass_steal"),
        "ph_window": phases.index("glass_window"),
        "ch_thieves": list(encoder.channel_names).index("thieves_p0"),
        "g_bag": gnames.index("glass_bag"), "g_steals": gnames.index("glass_steals_left"),
        "w_col": list(encoder.window_names).index(f"token_{token_set().kinds[0]}"),
    }  # fmt: skip


def history_row(rules: Any, action: Any, tile_at: Any) -> tuple[int, int, int]:
    """The history row naming ``action`` (the inverse of :func:`history_action`); ``tile_at.last`` is the
    cell of the tile just placed."""
    t = type(action)
    if t is Pass:
        return 64 * CODE_PASS, 0, 0
    if t is PlaceThief:
        x, y = tile_at.last
        k = tile_at(x, y)
        try:
            seg = rules.tiles[k].segment_index(action.segment)
        except KeyError as exc:
            raise IllegalActionError(f"{action.to_text()!r}: {exc.args[0]}") from None
        return 64 * CODE_THIEF + seg, x, y
    if t is Steal:
        kinds = token_set().kinds
        if action.token is not None and action.token not in kinds:
            raise IllegalActionError(f"{action.to_text()!r}: unknown glass token {action.token!r}")
        if not isinstance(action.victim, int) or isinstance(action.victim, bool):
            raise IllegalActionError(f"{action.to_text()!r}: the victim must be a player number")
        kind = NK if action.token is None else kinds.index(action.token)
        return 64 * CODE_STEAL + kind, action.victim, 0
    if t is ScoreWindow:
        try:
            return 64 * CODE_WINDOW + token_set().shape_index(action.shape), 0, 0
        except KeyError as exc:
            raise IllegalActionError(exc.args[0]) from None
    raise IllegalActionError(f"Stained Glass's phases take thief, steal, window or pass, got {action!r}")


def history_action(rules: Any, a: int, b: int, c: int, tile_at: Any) -> Any:
    """The reference's action of one of this plug-in's history rows."""
    code, arg = divmod(a, 64)
    if code == CODE_THIEF:
        return PlaceThief(rules.tiles[tile_at(b, c)].segments[arg].name)
    if code == CODE_STEAL:
        return Steal(b, None if arg == NK else token_set().kinds[arg])
    if code == CODE_WINDOW:
        return ScoreWindow(token_set().shapes[arg].name)
    return Pass()


SUPPORT = FastSupport(
    hooks=frozenset({"setup", "after_draw", "after_placement", "on_completed", "on_scored", "final_scoring", "stages"}),
    options=frozenset(
        {
            "token_on",
            "churches_are_cloisters",
            "shrines_are_cloisters",
            "thieves_need_monk",
            "protect_complete_windows",
            "steal_from_self",
            "steal_kind",
            "window_points",
            "final_windows",
            "loose_token_points",
            "bag_order",
            "start_tokens",
        }
    ),  # fmt: skip
    params=params,
    positions=positions,
    kernels={
        "setup": setup,
        "after_draw": after_draw,
        "after_placement": after_placement,
        "on_completed": on_completed,
        "on_scored": on_scored,
        "final_scoring": final_scoring,
        "decision_open": decision_open,
        "decision_mask": decision_mask,
        "decision_apply": decision_apply,
        "decision_random": decision_random,
        "decision_apply_row": decision_apply_row,
        "decision_pass": decision_pass,
        "greedy_decision": greedy_decision,
        "asset_value": asset_value,
        "observe": observe,
        "observe_windows": observe_windows,
    },
    own=OWN,
    slots=SLOTS,
    tile_columns=tile_columns,
    awards=("window", "loose_tokens"),
    phases=("glass_thief", "glass_steal", "glass_window"),
    history_action=history_action,
    history_row=history_row,
    random=True,
    heuristics=True,  # greedy_decision and asset_value: its heuristics part
    # per tile, at most: a thief on each road of a cloister tile and the pass (5), a steal per thief (4),
    # the window phase's pass and a scored window (every 3 tokens; a tile brings at most 2)
    history_rows=lambda rules, exp: 11,
)
