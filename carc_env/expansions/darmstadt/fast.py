"""Darmstadt in the compiled engine (:mod:`carc_env.fast`): its kernels.

The stack is built in Python by this plug-in's own ``build_bag`` (two base
cloisters out); churches are buildings the engine scores like cloisters.
Kernels (as :mod:`.rules`):

* ``score_items``: a city holding the Darmstadtium, scored during the game, is
  worth 3 more points to each majority player;
* the church bonus: ``score_begin`` counts, for each church this turn
  completes, the followers on the church tile and its 8 neighbours per player
  (before any follower is returned); ``on_completed`` drops an unoccupied
  church when ``church_bonus_unoccupied`` is off; ``score_end`` pays +3 to each
  player with the most (award ``church_bonus``), in completion order.

Followers without a segment (the engine's guests: the Count's followers sent
from a quarter) count for a church's vicinity as :meth:`.rules.Darmstadt._guests_nearby`
says (option ``church_bonus_guests``: on the church itself, or on a feature
with a tile in the vicinity).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.tiles import BUILDING, CITY
from ...fast.kernels import (
    G_NCOMP,
    G_NFL,
    G_NGUEST,
    N_KIND,
    N_NEXT,
    N_OCC,
    N_OWNER,
    N_PL,
    find,
    log_row,
    tagged_segment,
)
from ...fast.seam import B_AWARD, B_LS, B_TILE, inline_kernel, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_NPLAYERS, P_O_CNT, P_O_COMP, P_O_FL, P_O_GUEST, P_O_SCORES
from .rules import BONUS, CHURCH, REMOVED_CLOISTER, REMOVED_COUNT, TAG

OWN = ("bonus_unoccupied", "guests_vicinity")
UNOCCUPIED, GUESTS_VICINITY = own_positions(OWN)
NPEND, PEND = 0, 1  # its integers: pending church bonuses, then (church node, players bitmask) each
PEND_CAP = 8  # churches one tile can complete: itself and its neighbours
C_CHURCH, C_TAGGED = 0, 1  # its tile columns: the church segment (-1); bitmask of Darmstadtium city segments


@kernel
def score_items(T, S, g, pb, root, final):
    if final or S.nd[g, root, N_KIND] != CITY:
        return 0
    return BONUS if tagged_segment(T, S, g, root, T.P[pb + B_TILE] + C_TAGGED) else 0


@kernel
def _church_at(T, S, g, pb, root):
    """Whether building node ``root`` is a church."""
    k = S.nd[g, root, N_PL]
    return T.tile[S.pl[g, k, 2], T.P[pb + B_TILE] + C_CHURCH] == root - S.pl[g, k, 4]


@kernel
def _guest_nearby(T, S, g, pb, feature, church, x, y):
    """Darmstadt._guests_nearby: a guest on ``feature`` stands in the vicinity of the church at (x, y)."""
    if feature == church:
        return True
    if not T.P[pb + GUESTS_VICINITY]:
        return False
    nd = S.nd
    m = feature
    while True:
        k = nd[g, m, N_PL]
        if abs(S.pl[g, k, 0] - x) <= 1 and abs(S.pl[g, k, 1] - y) <= 1:
            return True
        m = nd[g, m, N_NEXT]
        if m == feature:
            break
    return False


@inline_kernel
def score_begin(T, S, g, pb):
    """Inlined into the composed hook: the body below only when this turn completes a building."""
    oc = T.P[P_O_COMP]
    for j in range(S.gi[g, G_NCOMP]):
        if S.nd[g, S.ls[g, oc + j], N_KIND] == BUILDING:
            church_counts(T, S, g, pb)
            return


@kernel
def church_counts(T, S, g, pb):
    ls, nd = S.ls, S.nd
    o = T.P[pb + B_LS]
    n = T.P[P_NPLAYERS]
    oc = T.P[P_O_COMP]
    cnt = T.P[P_O_CNT]
    ofl = T.P[P_O_FL]
    for j in range(S.gi[g, G_NCOMP]):
        root = ls[g, oc + j]
        if nd[g, root, N_KIND] != BUILDING or not _church_at(T, S, g, pb, root):
            continue
        k = nd[g, root, N_PL]
        x = S.pl[g, k, 0]
        y = S.pl[g, k, 1]
        for p in range(n):
            ls[g, cnt + p] = 0
        for i in range(S.gi[g, G_NFL]):
            node = ls[g, ofl + i]
            fk = nd[g, node, N_PL]
            if abs(S.pl[g, fk, 0] - x) <= 1 and abs(S.pl[g, fk, 1] - y) <= 1:
                ls[g, cnt + nd[g, node, N_OWNER]] += 1
        og = T.P[P_O_GUEST]
        for i in range(S.gi[g, G_NGUEST]):
            if _guest_nearby(T, S, g, pb, find(nd, g, ls[g, og + 2 * i]), root, x, y):
                ls[g, cnt + ls[g, og + 2 * i + 1]] += 1
        best = 0
        for p in range(n):
            best = max(best, ls[g, cnt + p])
        if best and ls[g, o + NPEND] < PEND_CAP:
            players = 0
            for p in range(n):
                if ls[g, cnt + p] == best:
                    players |= 1 << p
            e = o + PEND + 2 * ls[g, o + NPEND]
            ls[g, e] = root
            ls[g, e + 1] = players
            ls[g, o + NPEND] += 1


@kernel
def on_completed(T, S, g, pb, root, kind):
    if T.P[pb + UNOCCUPIED] or kind != BUILDING or S.nd[g, root, N_OCC] > 0:
        return
    ls = S.ls
    o = T.P[pb + B_LS]
    j = 0
    for i in range(ls[g, o + NPEND]):  # drop the unoccupied church, keep the order of the others
        if ls[g, o + PEND + 2 * i] != root:
            ls[g, o + PEND + 2 * j] = ls[g, o + PEND + 2 * i]
            ls[g, o + PEND + 2 * j + 1] = ls[g, o + PEND + 2 * i + 1]
            j += 1
    ls[g, o + NPEND] = j


@kernel
def score_end(T, S, g, pb):
    ls = S.ls
    o = T.P[pb + B_LS]
    osc = T.P[P_O_SCORES]
    award = T.P[pb + B_AWARD]
    for i in range(ls[g, o + NPEND]):
        players = ls[g, o + PEND + 2 * i + 1]
        for p in range(T.P[P_NPLAYERS]):
            if (players >> p) & 1:
                ls[g, osc + p] += BONUS
                log_row(T, S, g, award, 0, BONUS, 0, BONUS, 1 << p)
    ls[g, o + NPEND] = 0


def tile_columns(rules: Any) -> np.ndarray:
    cols = np.zeros((len(rules.tiles), 2), dtype=np.int16)
    cols[:, C_CHURCH] = -1
    for t, tile in enumerate(rules.tiles):
        for i, s in enumerate(tile.segments):
            if s.kind == BUILDING and s.building == CHURCH:
                cols[t, C_CHURCH] = i
            if s.kind == CITY and TAG in s.tags:
                cols[t, C_TAGGED] |= 1 << i
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    return {
        "bonus_unoccupied": 1 if exp.options.church_bonus_unoccupied else 0,
        "guests_vicinity": 1 if exp.options.church_bonus_guests == "vicinity" else 0,
    }


def build_bags(rules: Any, exp: Any, bags: np.ndarray) -> np.ndarray:
    """:meth:`.rules.Darmstadt.build_bag` on every row of ``bags``: the first two base cloisters leave."""
    if not exp.options.remove_base_cloisters:
        return bags
    hit = bags == rules.tile_index[REMOVED_CLOISTER]
    out = hit & (np.cumsum(hit, axis=1) <= REMOVED_COUNT)
    return bags[~out].reshape(len(bags), -1)  # every row holds the same tiles: as many leave from each


SUPPORT = FastSupport(
    hooks=frozenset({"build_bag", "score_items", "stages", "on_completed"}),
    options=frozenset({"remove_base_cloisters", "church_bonus_unoccupied", "church_bonus_guests"}),
    params=params,
    kernels={
        "score_items": score_items,
        "score_begin": score_begin,
        "on_completed": on_completed,
        "score_end": score_end,
    },
    own=OWN,
    slots=PEND + 2 * PEND_CAP,
    tile_columns=tile_columns,
    awards=("church_bonus",),
    build_bags=build_bags,
)
