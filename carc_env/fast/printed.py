"""A printed board (:mod:`carc_env.core.layout`) in the compiled engine: its arrays and cell look-ups.

Contract
--------
A rule set with a ``layout`` (a plug-in's ``board_layout``, e.g. Carcassonne
Maps) plays on a printed board.  :func:`layout_block` turns the
:class:`~carc_env.core.layout.BoardLayout` into an int64 block that
:func:`carc_env.fast.tables.build_layout` appends to the parameter vector
``T.P``; ``T.P[P_LAY]`` is its start (0: the unbounded table, and the kernels
skip everything here).  The block (positions ``LB_*`` from its start):

* the board's extent (``LB_X0``, ``LB_Y0``, ``LB_W``, ``LB_H``: every square and
  every printed piece) and the window's fixed origin (``LB_OX``, ``LB_OY``:
  :class:`~carc_env.encoding.ActionCodec` centres the board in the window);
* ``LB_NPIECES`` printed pieces, rows of ``PIECE_W`` (tile type, x, y,
  rotation, group) from ``T.P[block + T.P[block + LB_PIECES]]``: piece ``i`` is
  placement ``i`` of every game (the kernels lay them first, :func:`carc_env.fast.kernels.lay_printed`);
* ``LB_NGROUPS`` groups (large cities), whose "connected" flags are per-game
  integers ``S.ls[g, T.P[block + LB_O_CONN] + group]``;
* per cell of the extent, a row of ``CELL_W``: class (``CL_*``) ``| (group + 1) << 2``,
  the edge pattern the printed pieces around it require of a tile there
  (``BoardLayout.requirement``, packed as the frontier's patterns), and the
  target of a building on it (``BoardLayout.building_target``; 8 elsewhere).

Every cell outside the extent is void.  The inline look-ups below are what
``put_tile``, the frontier, the window and the plug-ins' kernels ask.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.config import PATTERN_BITS
from ..core.layout import ANY_EDGE, NEUTRAL
from .seam import inline_kernel

(LB_X0, LB_Y0, LB_W, LB_H, LB_OX, LB_OY, LB_NPIECES, LB_NGROUPS, LB_O_CONN, LB_PIECES, LB_CELLS,
 LB_LEN) = range(12)  # fmt: skip
PIECE_W = 5  # tile type, x, y, rotation, group (-1)
CELL_W = 3  # class | (group + 1) << 2, required pattern, building target
CL_VOID, CL_PLAYABLE, CL_SQUARE_PIECE, CL_VOID_PIECE = range(4)
"""Cell classes: void (sea, clouds, abroad), a playable square (no printed piece), a square holding a
printed piece (a large-city square), a void cell holding a printed piece (a feature abroad)."""
NEUTRAL_CODE = NEUTRAL
ANY_CODE = ANY_EDGE


def layout_block(rules: Any, origin: tuple[int, int], o_conn: int) -> np.ndarray:
    """The block of ``rules.layout`` (see the module docstring); ``origin``: the window's fixed origin,
    ``o_conn``: the offset in ``S.ls`` of the groups' connected flags."""
    layout = rules.layout
    x0, x1, y0, y1 = layout.bounds
    w, h = x1 - x0 + 1, y1 - y0 + 1
    pieces = layout.pieces
    groups = sorted(layout.groups)
    if groups and groups[0] < 0:
        raise ValueError(f"printed board {layout.name!r}: group numbers must be non-negative, got {groups[0]}")
    ngroups = (groups[-1] + 1) if groups else 0
    head = np.zeros(LB_LEN, dtype=np.int64)
    head[LB_X0], head[LB_Y0], head[LB_W], head[LB_H] = x0, y0, w, h
    head[LB_OX], head[LB_OY] = origin
    head[LB_NPIECES] = len(pieces)
    head[LB_NGROUPS] = ngroups
    head[LB_O_CONN] = o_conn
    head[LB_PIECES] = LB_LEN
    head[LB_CELLS] = LB_LEN + PIECE_W * len(pieces)
    rows = np.zeros((len(pieces), PIECE_W), dtype=np.int64)
    for i, p in enumerate(pieces):
        g = layout.group_of.get((p.x, p.y), -1) if p.square else -1
        rows[i] = (rules.tile_index[p.tile], p.x, p.y, p.rotation, g)
    cells = np.zeros((h, w, CELL_W), dtype=np.int64)
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            c = (x, y)
            if c in layout.piece_at:
                cls = CL_SQUARE_PIECE if c in layout.squares else CL_VOID_PIECE
            else:
                cls = CL_PLAYABLE if c in layout.playable else CL_VOID
            req = layout.requirement.get(c, (0, 0, 0, 0))
            pat = 0
            for s in range(4):
                pat |= req[s] << (PATTERN_BITS * s)
            cells[y - y0, x - x0] = (cls | (layout.group_of.get(c, -1) + 1) << 2, pat, layout.building_target.get(c, 8))
    return np.concatenate([head, rows.reshape(-1), cells.reshape(-1)])


def conn_slots(rules: Any) -> int:
    """Per-game integers the printed board needs (its groups' connected flags)."""
    layout = rules.layout
    if layout is None or not layout.groups:
        return 0
    return max(layout.groups) + 1


@inline_kernel
def cell_row(T, lay, x, y):
    """Position in ``T.P`` of cell (x, y)'s row (``lay``: the block's start), -1 outside the extent."""
    cx = x - T.P[lay + LB_X0]
    cy = y - T.P[lay + LB_Y0]
    w = T.P[lay + LB_W]
    if 0 <= cx < w and 0 <= cy < T.P[lay + LB_H]:
        return lay + T.P[lay + LB_CELLS] + CELL_W * (cy * w + cx)
    return -1


@inline_kernel
def cell_class(T, lay, x, y):
    c = cell_row(T, lay, x, y)
    return CL_VOID if c < 0 else T.P[c] & 3


@inline_kernel
def cell_group(T, lay, x, y):
    """The printed group of the square (x, y) (a large city's square), -1: none."""
    c = cell_row(T, lay, x, y)
    return -1 if c < 0 else (T.P[c] >> 2) - 1


@inline_kernel
def is_square(T, lay, x, y):
    cls = cell_class(T, lay, x, y)
    return cls == CL_PLAYABLE or cls == CL_SQUARE_PIECE


@inline_kernel
def building_target(T, lay, x, y):
    """Filled neighbours that complete a building at (x, y): 8, or on a printed board the squares around."""
    if lay == 0:
        return 8
    c = cell_row(T, lay, x, y)
    return 8 if c < 0 else T.P[c + 2]


__all__ = [
    "ANY_CODE", "CELL_W", "CL_PLAYABLE", "CL_SQUARE_PIECE", "CL_VOID", "CL_VOID_PIECE", "LB_CELLS", "LB_H",
    "LB_NGROUPS", "LB_NPIECES", "LB_O_CONN", "LB_OX", "LB_OY", "LB_PIECES", "LB_W", "LB_X0", "LB_Y0",
    "NEUTRAL_CODE", "PIECE_W", "building_target", "cell_class", "cell_group", "cell_row", "conn_slots",
    "is_square", "layout_block",
]  # fmt: skip
