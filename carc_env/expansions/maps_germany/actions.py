"""Fixed action layout of Maps - Germany's decision phase (the plug-in's codec part).

Only with town variant 1 and ``town_extra_turn_optional`` (both options on) does the
plug-in add a phase, ``map_extra_turn``, after the tile and follower ranges (and those
of the other plug-ins' phases, in the order of ``rules.phases``).  Rules:
``docs/rules/maps_germany.md``.

Layout
------
``map_extra_turn`` (2 entries)
    0: ``extra_turn``, take the extra turn the covered town gives; 1: ``pass``,
    decline it (the next player's turn follows).

Both are legal whenever the phase is asked, so its mask is never empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.actions import Action, IllegalActionError, Pass
from ...encoding.actions import PhaseCodec, StateView
from .rules import EXTRA_TURN_PHASE, TakeExtraTurn

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

TAKE, DECLINE = 0, 1


class ExtraTurnCodec(PhaseCodec):
    """2 entries: ``extra_turn``, then ``pass``."""

    phase = EXTRA_TURN_PHASE

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.size = 2

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        for a in game.legal_actions():
            out[DECLINE if type(a) is Pass else TAKE] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        return Pass() if local == DECLINE else TakeExtraTurn()

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return DECLINE
        if type(action) is TakeExtraTurn:
            return TAKE
        raise IllegalActionError(f"the {self.phase} phase needs 'extra_turn' or 'pass', got {action.to_text()!r}")


PHASE_CODECS = {EXTRA_TURN_PHASE: ExtraTurnCodec}
"""The codec factory ``factory(rules, rows, cols) -> PhaseCodec`` of Maps - Germany's phase."""

__all__ = ["PHASE_CODECS", "ExtraTurnCodec"]
