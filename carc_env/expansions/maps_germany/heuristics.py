"""What the greedy baseline knows about Maps - Germany (the plug-in's heuristics part).

Not rules: a one-ply player's choice, used by :class:`carc_env.policies.GreedyPolicy`.

* :func:`greedy_action` in ``map_extra_turn``: always take the extra turn (one more
  tile to place and a follower decision cost nothing and may score).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.actions import Action
from .rules import EXTRA_TURN_PHASE, TakeExtraTurn

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game


def greedy_action(game: Game) -> Action | None:
    """``extra_turn`` in the ``map_extra_turn`` phase (None in other phases)."""
    return TakeExtraTurn() if game.phase == EXTRA_TURN_PHASE else None
