"""One-ply analysis of a tile placement, shared by the greedy baseline and the placement features.

What a placement would join and complete is the core's
(:meth:`carc_env.core.Game.scan_placement`, :mod:`carc_env.core.lookahead`;
re-exported here as :func:`scan_placement`).  On top of it:
``immediate_points`` (what a follower on a node would score at once),
``one_ply_gain`` (plays a placement out on a clone and returns own minus
best-opponent points, counting the best follower that would score at once;
with the last tile, the play-out runs through the final scoring; the turn's
other decisions are passed) and ``leads``.  With plug-ins that have a
``heuristics`` part (:mod:`carc_env.core.registry`), ``asset_values`` adds what
each player holds in their state (glass tokens ...) to the points, and
``plugin_action`` asks them for a choice in their own decision phases.  None
of them changes ``game``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import Pass, PlaceTile
from ..core.lookahead import Joined, Scan, scan_placement
from ..core.registry import parts
from ..core.tiles import BUILDING, CITY, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from types import ModuleType

    from ..core.actions import Action
    from ..core.config import RuleSet
    from ..core.game import Game


def _heuristics(rules: RuleSet) -> list[ModuleType]:
    return rules.cache("encoding.heuristics", lambda: [m for _, m in parts(rules, "heuristics")])


def has_assets(rules: RuleSet) -> bool:
    """Whether a plug-in of the rule set values what players hold in its state."""
    return any(hasattr(m, "asset_value") for m in _heuristics(rules))


def asset_values(game: Game) -> list[float]:
    """Per player, the points-equivalent of what they hold in the plug-ins' state (0 without any)."""
    out = [0.0] * game.num_players
    for m in _heuristics(game.rules):
        value = getattr(m, "asset_value", None)
        if value is not None:
            for p in range(game.num_players):
                out[p] += value(game, p)
    return out


def plugin_action(game: Game) -> Action | None:
    """A plug-in's greedy choice in the current decision phase (None: no plug-in offers one)."""
    for m in _heuristics(game.rules):
        choose = getattr(m, "greedy_action", None)
        if choose is not None:
            action = choose(game)
            if action is not None:
                return action
    return None


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


def one_ply_gain(game: Game, act: PlaceTile, me: int, assets: bool = False) -> float:
    """Own immediate points minus the best opponent's, with the best follower that scores at once.

    The rest of the turn is played out by passing every decision that may be passed (expansion
    phases), so the turn's scoring is counted.  ``assets``: count the change of what each player
    holds in the plug-ins' state too (:func:`asset_values`)."""
    g = game.clone()
    before = g.scores[:]
    held = asset_values(g) if assets else None
    turn = g.turn
    g.apply(act)
    bonus = 0.0
    if g.phase == "follower" and g.player == me:
        for spot in g.legal_follower_spots():
            pts = immediate_points(g, g.placements[-1][4] + spot)
            if pts > bonus:
                bonus = float(pts)
        g.apply(Pass())
    while not g.over and g.turn == turn and g.phase != "tile" and Pass() in g.legal_actions():
        g.apply(Pass())
    n = g.num_players
    gains = [float(g.scores[p] - before[p]) for p in range(n)]
    if held is not None:
        now = asset_values(g)
        gains = [gains[p] + now[p] - held[p] for p in range(n)]
    best_other = max(gains[p] for p in range(n) if p != me)
    return gains[me] + bonus - best_other


def leads(counts: dict[int, int], player: int) -> bool:
    """``player`` has the most followers (possibly shared) on a feature with these follower counts."""
    return bool(counts) and counts.get(player, 0) == max(counts.values())


__all__ = [
    "Joined", "Scan", "asset_values", "has_assets", "immediate_points", "leads", "one_ply_gain", "plugin_action",
    "scan_placement",
]  # fmt: skip
