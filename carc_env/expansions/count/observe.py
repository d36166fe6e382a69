"""The Count of Carcassonne's observation planes and global features (the plug-in's encoder part).

Seats are relative to the observer (``p0`` = me).  Quarters in the order
castle, market, blacksmith, cathedral (the order of the Count's action
ranges).

Global features:

* ``count_in_{quarter}``: one-hot of the quarter the Count stands on;
* ``quarter_{quarter}_p{i}``: followers of seat i in that quarter / followers
  per player.

Dynamic board channels:

* ``guests_p{i}``: followers of seat i that were sent from a quarter onto a
  feature (they stand on no segment), counted on every tile of that feature
  (they are only on the board during ``count_leave`` and ``count_final``,
  until the feature scores);
* ``completing``: 1 on every tile of a feature the placed tile completed and
  that is about to be scored (the targets of ``count_leave``; 0 outside the
  turn's scoring).

The City of Carcassonne's inside shows in the core's ``edge_{S}_interior``
channels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObsContext, ObservationExtension, add_cells, feature_cells
from .rules import KEY, QUARTERS, CountState

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


class Observation(ObservationExtension):
    """Quarters and the Count (globals); followers sent from the quarters and the features they may join."""

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        n = num_players
        self.n = n
        self.followers = max(1, rules.followers)
        self.global_names = (
            *(f"count_in_{q}" for q in QUARTERS),
            *(f"quarter_{q}_p{i}" for q in QUARTERS for i in range(n)),
        )
        self.dynamic_channels = (*(f"guests_p{i}" for i in range(n)), "completing")

    def channel_high(self) -> list[int]:
        return [min(255, self.followers)] * self.n + [1]

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        guests, completing = game.guests, game.completing
        if not guests and not completing:
            return
        find = game.find
        roots = sorted({find(r) for r in guests} | {find(r) for r in completing})
        cells = feature_cells(game, roots)
        for r, owners in guests.items():
            c = cells[find(r)]
            for p in owners:
                add_cells(board[ctx.rel(p)], c, ctx)
        if completing:
            plane = board[self.n]
            for r in {find(r) for r in completing}:
                add_cells(plane, cells[r], ctx)
            np.minimum(plane, 1, out=plane)

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st: CountState = game.ext[KEY]
        if 0 <= st.count < 4:
            out[st.count] = 1.0
        n, inv = self.n, 1.0 / self.followers
        for q, per_player in enumerate(st.quarters):
            for p, k in enumerate(per_player):
                if k:
                    out[4 + q * n + ctx.rel(p)] = k * inv
