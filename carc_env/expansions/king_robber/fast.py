"""King & Robber Baron in the compiled engine (:mod:`carc_env.fast`): its kernels.

* ``setup``: nobody holds the King or the Robber Baron (holders -1);
* ``on_completed``: a feature a plug-in leaves out (``uncounted_completion``: the city the Sagrada
  Familia tile closed) moves nothing; else the largest feature of the completed one's kind among the turn's completions
  (distinct tiles) against the record; strictly larger gives the figure to the turn's player (as
  :meth:`.rules.KingRobber.on_completed`);
* ``final_scoring``: the holders score 1 point per completed city / road that counts (awards
  ``king``, ``robber``), those the plug-ins add (compiled hook ``extra_completed``) included;
* ``observe``: the global features of this plug-in's observe part (holders per relative seat,
  then the two records x 0.1).
"""

from __future__ import annotations

from typing import Any

from ...core.tiles import CITY, ROAD
from ...fast import kernels as K
from ...fast.kernels import G_NCOMP, G_NNODES, G_TURNP, N_DONE, N_KIND, N_TCOUNT, counts_as_completed, find, log_row
from ...fast.seam import B_AWARD, B_LS, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import P_NPLAYERS, P_O_COMP, P_O_SCORES

OWN = ("g_king",)
(G_KING,) = own_positions(OWN)  # position of the first of its global features
KING, KING_SIZE, ROBBER, ROBBER_SIZE = range(4)  # its per-game integers
AWARD_KING, AWARD_ROBBER = 0, 1


@kernel
def setup(T, S, g, pb):
    o = T.P[pb + B_LS]
    S.ls[g, o + KING] = -1
    S.ls[g, o + ROBBER] = -1


@kernel
def on_completed(T, S, g, pb, root, kind):
    if (kind != CITY and kind != ROAD) or not counts_as_completed(T, S, g, root):
        return
    nd = S.nd
    size = nd[g, root, N_TCOUNT]
    oc = T.P[P_O_COMP]
    for i in range(S.gi[g, G_NCOMP]):
        r = S.ls[g, oc + i]
        if nd[g, r, N_KIND] == kind:
            rr = find(nd, g, r)
            if nd[g, rr, N_TCOUNT] > size and counts_as_completed(T, S, g, rr):
                size = nd[g, rr, N_TCOUNT]
    o = T.P[pb + B_LS] + (KING if kind == CITY else ROBBER)
    if size <= S.ls[g, o + 1]:  # the record (KING_SIZE / ROBBER_SIZE follow the holders)
        return
    S.ls[g, o + 1] = size
    S.ls[g, o] = S.gi[g, G_TURNP]


@kernel
def final_scoring(T, S, g, pb):
    nd = S.nd
    nn = S.gi[g, G_NNODES]
    osc = T.P[P_O_SCORES]
    for kind in (CITY, ROAD):
        holder = S.ls[g, T.P[pb + B_LS] + (KING if kind == CITY else ROBBER)]
        if holder < 0:
            continue
        cnt = 0
        for i in range(nn):
            if nd[g, i, N_DONE] and nd[g, i, N_KIND] == kind and counts_as_completed(T, S, g, i):
                cnt += 1
        cnt += K.H.extra_completed(T, S, g, kind)  # Game.count_completed: the plug-ins' extra_completed
        S.ls[g, osc + holder] += cnt
        award = T.P[pb + B_AWARD] + (AWARD_KING if kind == CITY else AWARD_ROBBER)
        log_row(T, S, g, award, 1, cnt, 0, cnt, 1 << holder)


@kernel
def observe(T, S, g, pb, seat, board, glob):
    n = T.P[P_NPLAYERS]
    o = T.P[pb + B_LS]
    gk = T.P[pb + G_KING]
    if S.ls[g, o + KING] >= 0:
        glob[gk + (S.ls[g, o + KING] - seat) % n] = 1.0
    if S.ls[g, o + ROBBER] >= 0:
        glob[gk + n + (S.ls[g, o + ROBBER] - seat) % n] = 1.0
    glob[gk + 2 * n] = S.ls[g, o + KING_SIZE] * 0.1
    glob[gk + 2 * n + 1] = S.ls[g, o + ROBBER_SIZE] * 0.1


def positions(encoder: Any) -> dict[str, int]:
    return {"g_king": list(encoder.global_names).index("king_p0")}


SUPPORT = FastSupport(
    hooks=frozenset({"on_completed", "final_scoring"}),
    positions=positions,
    kernels={"setup": setup, "on_completed": on_completed, "final_scoring": final_scoring, "observe": observe},
    own=OWN,
    slots=4,
    awards=("king", "robber"),
)
