"""The Sagrada Familia in the compiled engine (:mod:`carc_env.fast`): its kernels.

As :mod:`.rules` (every option of it):

* ``setup`` / ``after_placement``: the node of the tile's city (-1 before it
  is placed) and whether the tile itself closed it (exception 1);
* ``placement_veto``: while the city is in force (and ``may_close`` is off),
  a placement that would leave it (every linked part included) without an
  open edge is cleared, asking the engine's
  :func:`carc_env.fast.lookahead.closes_feature` (which counts the links a
  placement makes); only when every open edge faces one empty cell can a
  placement close it.  A tile left with no legal placement is discarded by
  the engine's draw, as by the reference's;
* ``score_override``: that city scores 0 when the tile closed it, or once it
  is completed (the variant); ``defers_scoring``: the variant keeps its
  followers until the end (unless the tile closed it and
  ``exception_returns_followers``);
* exception 1's city for other rules: ``uncounted_completion`` (the King,
  unless ``exception_city_counts_for_king``), ``field_cities`` (-1 for a field
  bordering it, unless ``exception_city_counts_for_farmers``), ``spot_veto``
  (no knight on it, only with ``exception_knight_allowed`` off);
* ``observe``: this plug-in's observe part (``sagrada_city``, ``sagrada_in_force``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.tiles import CITY
from ...fast.kernels import G_NF, G_NPL, N_DONE, N_NCOUNT, N_NEXT, N_OPEN, N_PL, field_borders, find, mark_tiles
from ...fast.lookahead import closes_feature
from ...fast.printed import CL_PLAYABLE, cell_class
from ...fast.seam import B_LS, B_TILE, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_GOFF, P_LAY, P_O_FMASK, TC_CE
from .rules import TAG

OWN = ("may_close", "returns", "for_king", "for_farmers", "knight", "ch_city", "g_in_force")
MAY_CLOSE, RETURNS, FOR_KING, FOR_FARMERS, KNIGHT, CH_CITY, G_IN_FORCE = own_positions(OWN)
# its integers: the city's node (-1), exception 1 happened; then what placement_veto last found of the city's
# open edges (the empty cells they face: 0, 1 or 2 for more, and the one cell), for its root and segment count
NODE, CLOSED, SEEN_ROOT, SEEN_NC, SEEN_CELLS, SEEN_X, SEEN_Y = range(7)
C_SEG = 0  # its tile column: the tile's Sagrada Familia city segment, -1


@kernel
def setup(T, S, g, pb):
    S.ls[g, T.P[pb + B_LS] + NODE] = -1
    S.ls[g, T.P[pb + B_LS] + SEEN_ROOT] = -1


@kernel
def in_force(T, S, g, pb):
    """The tile is on the board, its city is not completed and the tile did not close it."""
    o = T.P[pb + B_LS]
    node = S.ls[g, o + NODE]
    return node >= 0 and not S.ls[g, o + CLOSED] and not S.nd[g, find(S.nd, g, node), N_DONE]


@kernel
def open_cells(T, S, g, root):
    """The empty cells the open edges of city ``root`` face: (0, 1 or 2 for two or more, x, y of the one)."""
    nd = S.nd
    off = T.P[P_GOFF]
    cx = 0
    cy = 0
    cells = 0
    x = root
    while True:
        k = nd[g, x, N_PL]
        t2 = S.pl[g, k, 2]
        r2 = S.pl[g, k, 3]
        seg = x - S.pl[g, k, 4]
        for s in range(4):
            if T.tile[t2, TC_CE + 4 * r2 + s] != seg:
                continue
            ex = S.pl[g, k, 0] + (1 if s == 1 else -1 if s == 3 else 0)
            ey = S.pl[g, k, 1] + (1 if s == 2 else -1 if s == 0 else 0)
            if S.grid[g, ey + off, ex + off] >= 0:
                continue
            if T.P[P_LAY] and cell_class(T, T.P[P_LAY], ex, ey) != CL_PLAYABLE:
                continue  # on a printed board an edge facing the sea or abroad is closed
            if cells == 0:
                cx = ex
                cy = ey
                cells = 1
            elif ex != cx or ey != cy:
                return 2, 0, 0  # two cells: no placement closes it
        x = nd[g, x, N_NEXT]
        if x == root:
            break
    return cells, cx, cy


@kernel
def placement_veto(T, S, g, pb, t):
    if T.P[pb + MAY_CLOSE] or not in_force(T, S, g, pb):
        return
    nd = S.nd
    root = find(nd, g, S.ls[g, T.P[pb + B_LS] + NODE])
    # one tile fills one cell and links only add open edges: only when every open edge of the city
    # faces the same empty cell can a placement close it (rules.SagradaFamilia.placement_veto)
    if nd[g, root, N_OPEN] > 4:
        return
    o = T.P[pb + B_LS]
    off = T.P[P_GOFF]
    if S.ls[g, o + SEEN_ROOT] == root and S.ls[g, o + SEEN_NC] == nd[g, root, N_NCOUNT]:
        # the city gained no segment since: its open edges and the cells they face are the same (a tile
        # filling such a cell, or a border closing an edge, joins a segment to it)
        cells = S.ls[g, o + SEEN_CELLS]
        cx = S.ls[g, o + SEEN_X]
        cy = S.ls[g, o + SEEN_Y]
    else:
        cells, cx, cy = open_cells(T, S, g, root)
        S.ls[g, o + SEEN_ROOT] = root
        S.ls[g, o + SEEN_NC] = nd[g, root, N_NCOUNT]
        S.ls[g, o + SEEN_CELLS] = cells
        S.ls[g, o + SEEN_X] = cx
        S.ls[g, o + SEEN_Y] = cy
    if cells != 1:
        return
    v = S.grid[g, cy + off, cx + off]
    if v > -2:
        return
    slot = -2 - v
    if slot >= S.gi[g, G_NF]:
        return
    o = T.P[P_O_FMASK] + slot
    bits = S.ls[g, o]
    for r in range(4):
        if (bits >> r) & 1 and closes_feature(T, S, g, t, cx, cy, r, root):
            bits &= ~(1 << r)
    S.ls[g, o] = bits


@kernel
def after_placement(T, S, g, pb, t, x, y, r):
    seg = T.tile[t, T.P[pb + B_TILE] + C_SEG]
    if seg < 0:
        return
    o = T.P[pb + B_LS]
    node = S.pl[g, S.gi[g, G_NPL] - 1, 4] + seg
    S.ls[g, o + NODE] = node
    if S.nd[g, find(S.nd, g, node), N_OPEN] == 0:
        S.ls[g, o + CLOSED] = 1


@kernel
def spot_veto(T, S, g, pb, t, seg):
    if T.P[pb + KNIGHT]:
        return False
    o = T.P[pb + B_LS]
    node = S.ls[g, o + NODE]
    k = S.gi[g, G_NPL] - 1
    if not S.ls[g, o + CLOSED] or S.nd[g, node, N_PL] != k:
        return False  # only the Sagrada Familia tile that just closed its own city
    return find(S.nd, g, S.pl[g, k, 4] + seg) == find(S.nd, g, node)


@kernel
def uncounted_completion(T, S, g, pb, root):
    if T.P[pb + FOR_KING]:
        return False
    o = T.P[pb + B_LS]
    return S.ls[g, o + CLOSED] != 0 and find(S.nd, g, S.ls[g, o + NODE]) == root


@kernel
def field_cities(T, S, g, pb, root):
    if T.P[pb + FOR_FARMERS]:
        return 0
    o = T.P[pb + B_LS]
    if not S.ls[g, o + CLOSED]:
        return 0
    city = find(S.nd, g, S.ls[g, o + NODE])
    if not S.nd[g, city, N_DONE]:
        return 0
    return -1 if field_borders(T, S, g, root, city) else 0


@kernel
def score_override(T, S, g, pb, root, final):
    o = T.P[pb + B_LS]
    node = S.ls[g, o + NODE]
    if node < 0 or find(S.nd, g, node) != root:
        return -1
    if S.ls[g, o + CLOSED] or S.nd[g, root, N_DONE]:
        return 0
    return -1


@kernel
def defers_scoring(T, S, g, pb, root):
    o = T.P[pb + B_LS]
    node = S.ls[g, o + NODE]
    if not T.P[pb + MAY_CLOSE] or node < 0 or find(S.nd, g, node) != root:
        return False
    return not (S.ls[g, o + CLOSED] and T.P[pb + RETURNS])


@kernel
def observe(T, S, g, pb, seat, board, glob):
    if not in_force(T, S, g, pb):
        return
    glob[T.P[pb + G_IN_FORCE]] = 1.0
    mark_tiles(T, S, g, find(S.nd, g, S.ls[g, T.P[pb + B_LS] + NODE]), board[T.P[pb + CH_CITY]], False)


def tile_columns(rules: Any) -> np.ndarray:
    cols = np.full((len(rules.tiles), 1), -1, dtype=np.int16)
    for t, tile in enumerate(rules.tiles):
        segs = [i for i, s in enumerate(tile.segments) if s.kind == CITY and TAG in s.tags]
        if segs:
            cols[t, C_SEG] = segs[0]
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    o = exp.options
    return {
        "may_close": int(o.may_close),
        "returns": int(o.exception_returns_followers),
        "for_king": int(o.exception_city_counts_for_king),
        "for_farmers": int(o.exception_city_counts_for_farmers),
        "knight": int(o.exception_knight_allowed),
    }


def positions(encoder: Any) -> dict[str, int]:
    return {
        "ch_city": list(encoder.channel_names).index("sagrada_city"),
        "g_in_force": list(encoder.global_names).index("sagrada_in_force"),
    }


SUPPORT = FastSupport(
    hooks=frozenset(
        {
            "placement_veto",
            "after_placement",
            "after_setup_placement",
            "follower_spots",
            "score_override",
            "defers_scoring",
            "field_cities",
            "uncounted_completion",
        }
    ),  # fmt: skip
    options=frozenset(
        {
            "may_close",
            "exception_returns_followers",
            "exception_city_counts_for_king",
            "exception_city_counts_for_farmers",
            "exception_knight_allowed",
        }
    ),  # fmt: skip
    params=params,
    positions=positions,
    kernels={
        "setup": setup,
        "placement_veto": placement_veto,
        "after_placement": after_placement,
        "after_setup_placement": after_placement,  # laid at setup (a map's start square): its city is in force
        "spot_veto": spot_veto,
        "uncounted_completion": uncounted_completion,
        "field_cities": field_cities,
        "score_override": score_override,
        "defers_scoring": defers_scoring,
        "observe": observe,
    },
    own=OWN,
    slots=7,
    tile_columns=tile_columns,
    features=frozenset({"field_cities"}),  # the exception city in a field's value (the engine's field_cities)
)
