"""One-ply analysis of a tile placement, shared by the greedy baseline and the placement features.

What a placement would join and complete is the core's
(:meth:`carc_env.core.Game.scan_placement`, :mod:`carc_env.core.lookahead`;
re-exported here as :func:`scan_placement`).  On top of it:
``immediate_points`` (what a follower on a node would score at once),
``one_ply_gain`` (plays a placement out on a clone and returns own minus
best-opponent points, counting the best follower that would score at once;
with the last tile, the play-out runs through the final scoring) and
``leads``.  None of them changes ``game``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import Pass, PlaceTile
from ..core.lookahead import Joined, Scan, scan_placement
from ..core.tiles import BUILDING, CITY, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game


def immediate_points(g: Game, node: int) -> int:
    """Points a follower on ``node`` would score at once (0 if its feature is not complete)."""
    root = g.find(node)
    kind = g.kind[root]
    if kind in (CITY, ROAD):
        if g.open[root] == 0 and root not in g.completed:
            return sum(item.points for item in g.feature_value(root, final=False))
        return 0
    if kind == BUILDING and root not in g.completed and g.building_complete(root):
        return 1 + g.building_neighbours[root]
    return 0


def one_ply_gain(game: Game, act: PlaceTile, me: int) -> float:
    """Own immediate points minus the best opponent's, with the best follower that scores at once."""
    g = game.clone()
    before = g.scores[:]
    g.apply(act)
    bonus = 0.0
    if g.phase == "follower" and g.player == me:
        for spot in g.legal_follower_spots():
            pts = immediate_points(g, g.placements[-1][4] + spot)
            if pts > bonus:
                bonus = float(pts)
        g.apply(Pass())
    n = g.num_players
    gains = [g.scores[p] - before[p] for p in range(n)]
    best_other = max(gains[p] for p in range(n) if p != me)
    return gains[me] + bonus - best_other


def leads(counts: dict[int, int], player: int) -> bool:
    """``player`` has the most followers (possibly shared) on a feature with these follower counts."""
    return bool(counts) and counts.get(player, 0) == max(counts.values())


__all__ = ["Joined", "Scan", "immediate_points", "leads", "one_ply_gain", "scan_placement"]
