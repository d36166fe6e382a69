"""Darmstadt's board channel (the plug-in's encoder part).

Static board channel:

* ``darmstadtium``: 1 on the tile whose city holds the Darmstadtium (+3 to the
  majority when that city is completed during the game).

Churches are a building kind: they appear in the core's ``building_church``
channel (with ``complete_building`` and ``follower_on_building``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObservationExtension
from .rules import TAG

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet


class Observation(ObservationExtension):
    """The tile holding the Darmstadtium."""

    static_channels = ("darmstadtium",)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        pass

    def static_table(self, rules: RuleSet) -> np.ndarray:
        return self.tagged_city_table(rules, TAG)
