"""Heretics and Shrines in the compiled engine (:mod:`carc_env.fast`): its kernels.

Shrines are buildings the engine scores like cloisters.  Kernels (as :mod:`.rules`):

* ``placement_veto``: a tile with a building of one side (shrine, or
  cloister-like) may not go next to two buildings of the other side, nor, with
  ``strict_pairing``, next to one of the other side that already has a
  neighbour of its own side;
* ``on_scored``: a building completed and scored during the game wins its
  challenges: each adjacent building of the other side that is not completed
  (nor being completed this turn) loses its followers without points.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.tiles import BUILDING, NEIGHBOURS8
from ...fast.kernels import G_NCOMP, G_NF, G_NPL, N_DONE, N_OCC, N_PL, remove_followers
from ...fast.seam import B_LS, B_TILE, inline_kernel, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_GOFF, P_O_COMP, P_O_FMASK, TC_BSEG
from .rules import Shrines

OWN = ("strict",)
(STRICT,) = own_positions(OWN)
C_SIDE = 0  # its tile column: the side of the tile's building (1 shrine, -1 cloister-like, 0 none)
SCANNED, NB, LIST = 0, 1, 2  # its integers: placements listed, buildings listed, then (x, y, side) each
BUILDINGS_CAP = 48
NX = np.array([d[0] for d in NEIGHBOURS8], dtype=np.int64)
NY = np.array([d[1] for d in NEIGHBOURS8], dtype=np.int64)


@kernel
def side_at(T, S, g, pb, x, y):
    """Side of the building on the tile at (x, y): 1 shrine, -1 cloister-like, 0 none (or no tile)."""
    off = T.P[P_GOFF]
    k = S.grid[g, y + off, x + off]
    if k < 0:
        return 0
    return T.tile[S.pl[g, k, 2], T.P[pb + B_TILE] + C_SIDE]


@inline_kernel
def placement_veto(T, S, g, pb, t):
    """Inlined into the composed hook: a tile without a building calls nothing."""
    side = T.tile[t, T.P[pb + B_TILE] + C_SIDE]
    if side != 0:
        building_veto(T, S, g, pb, t, side)


@kernel
def building_veto(T, S, g, pb, t, side):
    """Clear the frontier slots where a tile with a building of ``side`` may not go.

    Walks the buildings of the other side (this plug-in's list of the board's buildings, brought up to
    date first: placements are only ever appended) and marks the empty cells around each, instead of
    looking at the 8 neighbours of every frontier slot: a slot next to two of them, or (strict pairing) next
    to one that already has a neighbour of its own side, loses every rotation.  Bit 4 of a slot's rotation
    mask counts the first rival while the walk runs."""
    ls = S.ls
    o = T.P[pb + B_LS]
    col = T.P[pb + B_TILE] + C_SIDE
    npl = S.gi[g, G_NPL]
    for k in range(ls[g, o + SCANNED], npl):
        sd = T.tile[S.pl[g, k, 2], col]
        if sd != 0:
            nb = ls[g, o + NB]
            if nb >= BUILDINGS_CAP:  # more buildings than the list holds: look around every slot instead
                ls[g, o + SCANNED] = npl
                slot_veto(T, S, g, pb, side)
                return
            e = o + LIST + 3 * nb
            ls[g, e] = S.pl[g, k, 0]
            ls[g, e + 1] = S.pl[g, k, 1]
            ls[g, e + 2] = sd
            ls[g, o + NB] = nb + 1
    ls[g, o + SCANNED] = npl
    if ls[g, o + NB] >= BUILDINGS_CAP:
        slot_veto(T, S, g, pb, side)
        return
    strict = T.P[pb + STRICT]
    ofm = T.P[P_O_FMASK]
    off = T.P[P_GOFF]
    marked = False
    for i in range(ls[g, o + NB]):
        e = o + LIST + 3 * i
        if ls[g, e + 2] != -side:
            continue
        bx = ls[g, e]
        by = ls[g, e + 1]
        paired = False
        if strict:
            for q in range(8):
                if side_at(T, S, g, pb, bx + NX[q], by + NY[q]) == side:
                    paired = True
        for j in range(8):
            v = S.grid[g, by + NY[j] + off, bx + NX[j] + off]
            if v > -2:
                continue
            a = ofm + (-2 - v)
            m = ls[g, a]
            if m == 0:
                continue
            if paired or m & 16:
                ls[g, a] = 0
            else:
                ls[g, a] = m | 16
                marked = True
    if marked:
        for slot in range(S.gi[g, G_NF]):
            ls[g, ofm + slot] &= 15


@kernel
def slot_veto(T, S, g, pb, side):
    """:func:`building_veto` looking at the 8 neighbours of every frontier slot."""
    strict = T.P[pb + STRICT]
    ofm = T.P[P_O_FMASK]
    for slot in range(S.gi[g, G_NF]):
        if S.ls[g, ofm + slot] == 0:
            continue
        x = S.fr[g, slot, 0]
        y = S.fr[g, slot, 1]
        rivals = 0
        paired = False
        for j in range(8):
            ox = x + NX[j]
            oy = y + NY[j]
            if side_at(T, S, g, pb, ox, oy) != -side:
                continue
            rivals += 1
            if strict:
                for q in range(8):
                    if side_at(T, S, g, pb, ox + NX[q], oy + NY[q]) == side:
                        paired = True
        if rivals >= 2 or paired:
            S.ls[g, ofm + slot] = 0


@inline_kernel
def on_scored(T, S, g, pb, root, kind, final):
    """Inlined into the composed hook: only a building scored during the game challenges."""
    if not final and kind == BUILDING:
        challenge(T, S, g, pb, root)


@kernel
def challenge(T, S, g, pb, root):
    k = S.nd[g, root, N_PL]
    x = S.pl[g, k, 0]
    y = S.pl[g, k, 1]
    side = side_at(T, S, g, pb, x, y)
    if side == 0:
        return
    off = T.P[P_GOFF]
    oc = T.P[P_O_COMP]
    for j in range(8):
        cx = x + NX[j]
        cy = y + NY[j]
        if side_at(T, S, g, pb, cx, cy) != -side:
            continue
        nk = S.grid[g, cy + off, cx + off]
        rival = S.pl[g, nk, 4] + T.tile[S.pl[g, nk, 2], TC_BSEG]  # a building is its own root
        if S.nd[g, rival, N_DONE]:
            continue
        completing = False
        for i in range(S.gi[g, G_NCOMP]):
            if S.ls[g, oc + i] == rival:
                completing = True
        if completing or S.nd[g, rival, N_OCC] == 0:
            continue
        remove_followers(T, S, g, rival)


def _exp(rules: Any) -> Shrines:
    return next(e for e in rules.expansions if isinstance(e, Shrines))


def tile_columns(rules: Any) -> np.ndarray:
    cols = np.zeros((len(rules.tiles), 1), dtype=np.int16)
    cols[:, C_SIDE] = _exp(rules).tile_sides(rules)
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    return {"strict": 1 if exp.options.strict_pairing else 0}


SUPPORT = FastSupport(
    hooks=frozenset({"placement_veto", "on_scored"}),
    options=frozenset({"sixth_tile", "strict_pairing", "churches_are_cloisters"}),
    params=params,
    kernels={"placement_veto": placement_veto, "on_scored": on_scored},
    own=OWN,
    slots=LIST + 3 * BUILDINGS_CAP,
    tile_columns=tile_columns,
)
