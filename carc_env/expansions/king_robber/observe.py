"""King & Robber Baron's global features (the plug-in's encoder part).

Seats are relative to the observer (``p0`` = me).

* ``king_p{i}`` / ``robber_p{i}``: one-hot of the seat holding the King /
  the Robber Baron (all 0 before the first city / road is completed);
* ``king_record`` / ``robber_record``: tiles of the largest completed city /
  longest completed road x 0.1 (what a new city / road must beat).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObsContext, ObservationExtension
from .rules import KEY, KingRobberState

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


class Observation(ObservationExtension):
    """Holders of the King and the Robber Baron, and their records."""

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        n = num_players
        self.n = n
        self.global_names = (
            *(f"king_p{i}" for i in range(n)),
            *(f"robber_p{i}" for i in range(n)),
            "king_record",
            "robber_record",
        )

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st: KingRobberState = game.ext[KEY]
        n = self.n
        if st.king >= 0:
            out[ctx.rel(st.king)] = 1.0
        if st.robber >= 0:
            out[n + ctx.rel(st.robber)] = 1.0
        out[2 * n] = st.king_size * 0.1
        out[2 * n + 1] = st.robber_size * 0.1
