"""Observation extensions of the built-in expansions that keep state off the board.

Registered by expansion key (:func:`register_observation_extension`); the
encoder asks for one per enabled expansion.  Global features added (seats
relative to the observer, ``p0`` = me):

King & Robber Baron (``king_robber``):

* ``king_p{i}`` / ``robber_p{i}``: one-hot of the seat holding the King /
  the Robber Baron (all 0 before the first city / road is completed);
* ``king_record`` / ``robber_record``: tiles of the largest completed city /
  longest completed road x 0.1.

The Count of Carcassonne (``count``):

* ``count_in_{quarter}``: one-hot of the quarter the Count stands on
  (castle, market, blacksmith, cathedral);
* ``quarter_{quarter}_p{i}``: followers of seat i in that quarter / followers
  per player.

Expansions whose state lives on the board (river, shrines, Darmstadt) need
no extension: their tiles show in the edge and building channels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .observation import ObsContext, ObservationExtension, register_observation_extension

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.game import Game

QUARTERS = ("castle", "market", "blacksmith", "cathedral")


class KingRobberObservation(ObservationExtension):
    KEY = "king_robber"

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
        st = game.ext.get(self.KEY)
        if st is None:
            return
        n = self.n
        if st.king >= 0:
            out[ctx.rel(st.king)] = 1.0
        if st.robber >= 0:
            out[n + ctx.rel(st.robber)] = 1.0
        out[2 * n] = st.king_size * 0.1
        out[2 * n + 1] = st.robber_size * 0.1


class CountObservation(ObservationExtension):
    KEY = "count"

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        n = num_players
        self.n = n
        self.followers = max(1, rules.config.followers)
        self.global_names = (
            *(f"count_in_{q}" for q in QUARTERS),
            *(f"quarter_{q}_p{i}" for q in QUARTERS for i in range(n)),
        )

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st = game.ext.get(self.KEY)
        if st is None:
            return
        count = st.get("count", -1)
        if 0 <= count < 4:
            out[count] = 1.0
        n, inv = self.n, 1.0 / self.followers
        for q, per_player in enumerate(st.get("quarters") or ()):
            for p, k in enumerate(per_player):
                if k:
                    out[4 + q * n + ctx.rel(p)] = k * inv


register_observation_extension(KingRobberObservation.KEY, KingRobberObservation)
register_observation_extension(CountObservation.KEY, CountObservation)

__all__ = ["CountObservation", "KingRobberObservation", "QUARTERS"]
