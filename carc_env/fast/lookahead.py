"""What a placement would close, without placing it: the compiled ``Game.closes_feature``.

Contract
--------
:func:`closes_feature` answers, for game ``g``, whether placing tile type ``t``
at ``(x, y)`` in rotation ``r`` would leave the city or road of ``root``
without an open edge, exactly as :meth:`carc_env.core.game.Game.closes_feature`
(:mod:`carc_env.core.lookahead`) does on the unbounded table: the tile's
city and road segments are grouped by the features they would join (through
a matching side, or through a link the enabled plug-ins' ``placement_links``
kernels declare), and the group holding ``root`` has
``sum(its segments' edges) + sum(the joined features' open edges) -
2 * (its matched sides) - (its sides a printed board closes)`` open edges afterwards.  The game is not changed
(only path halving in the union-find and the scratch stamps); the placement
need not be legal.  A ``placement_veto`` kernel asks it (the compiled
engine's printed board: :mod:`carc_env.fast.printed`).
"""

from __future__ import annotations

from ..core.tiles import CITY, ROAD
from .kernels import DX, DY, G_STAMP, N_OPEN, N_SCRATCH, find, placement_links
from .printed import CL_VOID, cell_class
from .seam import kernel
from .tables import P_GOFF, P_LAY, P_O_LINKS, TC_CE, TC_NSEG, TC_OPEN0, TC_SKIND


@kernel
def _visit(T, S, g, t, x, y, r, i, nl, stamp, mark):
    """The features segment ``i`` of the placed tile would join: ``mark`` False: 1 if one of them carries
    ``stamp`` (else 0); True: stamp those that do not and return the sum of their open edges."""
    nd, tile = S.nd, T.tile
    off = T.P[P_GOFF]
    out = 0
    for s in range(4):
        if tile[t, TC_CE + 4 * r + s] != i:
            continue
        nk = S.grid[g, y + DY[s] + off, x + DX[s] + off]
        if nk < 0:
            continue
        nt = S.pl[g, nk, 2]
        nc = tile[nt, TC_CE + 4 * S.pl[g, nk, 3] + ((s + 2) & 3)]
        if nc < 0:
            continue
        q = find(nd, g, S.pl[g, nk, 4] + nc)
        if nd[g, q, N_SCRATCH] == stamp:
            if not mark:
                return 1
        elif mark:
            nd[g, q, N_SCRATCH] = stamp
            out += nd[g, q, N_OPEN]
    ol = T.P[P_O_LINKS]
    for j in range(nl):
        if S.ls[g, ol + 1 + 2 * j] != i:
            continue
        q = find(nd, g, S.ls[g, ol + 2 + 2 * j])
        if nd[g, q, N_SCRATCH] == stamp:
            if not mark:
                return 1
        elif mark:
            nd[g, q, N_SCRATCH] = stamp
            out += nd[g, q, N_OPEN]
    return out


@kernel
def _matched(T, S, g, t, x, y, r, i):
    """Sides of segment ``i`` that would meet a neighbour's segment."""
    off = T.P[P_GOFF]
    n = 0
    for s in range(4):
        if T.tile[t, TC_CE + 4 * r + s] != i:
            continue
        nk = S.grid[g, y + DY[s] + off, x + DX[s] + off]
        if nk >= 0 and T.tile[S.pl[g, nk, 2], TC_CE + 4 * S.pl[g, nk, 3] + ((s + 2) & 3)] >= 0:
            n += 1
    return n


@kernel
def _closed(T, S, g, t, x, y, r, i):
    """Sides of segment ``i`` a printed board closes (void, or a neutral printed edge): 0 on the unbounded table."""
    lay = T.P[P_LAY]
    if lay == 0:
        return 0
    off = T.P[P_GOFF]
    n = 0
    for s in range(4):
        if T.tile[t, TC_CE + 4 * r + s] != i:
            continue
        nx = x + DX[s]
        ny = y + DY[s]
        nk = S.grid[g, ny + off, nx + off]
        if nk < 0:
            if cell_class(T, lay, nx, ny) == CL_VOID:
                n += 1
        elif T.tile[S.pl[g, nk, 2], TC_CE + 4 * S.pl[g, nk, 3] + ((s + 2) & 3)] < 0:
            n += 1
    return n


@kernel
def closes_feature(T, S, g, t, x, y, r, root):
    """Whether placing tile ``t`` at (x, y) in rotation r would close the city or road of node ``root``."""
    nd, tile = S.nd, T.tile
    nl = placement_links(T, S, g, t, x, y, r)
    stamp = S.gi[g, G_STAMP] + 1
    S.gi[g, G_STAMP] = stamp
    root = find(nd, g, root)
    nd[g, root, N_SCRATCH] = stamp  # the features the group joins
    open_after = nd[g, root, N_OPEN]
    group = 0  # the tile's segments in the group holding root
    changed = True
    while changed:
        changed = False
        for i in range(tile[t, TC_NSEG]):
            kind = tile[t, TC_SKIND + i]
            if (kind != CITY and kind != ROAD) or (group >> i) & 1:
                continue
            if _visit(T, S, g, t, x, y, r, i, nl, stamp, False):
                group |= 1 << i
                changed = True
                open_after += tile[t, TC_OPEN0 + i] - 2 * _matched(T, S, g, t, x, y, r, i)
                open_after -= _closed(T, S, g, t, x, y, r, i)
                open_after += _visit(T, S, g, t, x, y, r, i, nl, stamp, True)
    return group != 0 and open_after <= 0


__all__ = ["closes_feature"]
