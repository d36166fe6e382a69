"""The Sagrada Familia's observation channels and global features (the plug-in's encoder part).

Static board channel (from the tile data):

* ``sagrada_familia``: 1 on the Sagrada Familia tile.

Dynamic board channel:

* ``sagrada_city``: 1 on every tile of the Sagrada Familia's city (every part
  of it, when royal gates link it) while its rule is in force: the tile is on
  the board, its city is not completed and the tile did not close it.  By
  default no placement may close that city (the legal-placement channel and
  the action mask leave such placements out); with the variant ``may_close``
  closing it is allowed but the city then scores 0.

Global feature:

* ``sagrada_in_force``: 1 while that is so, 0 before the tile is placed and
  once its city is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObsContext, ObservationExtension, add_cells
from .rules import KEY, TAG, in_force

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


class Observation(ObservationExtension):
    """The Sagrada Familia tile, its city while it may not be closed."""

    static_channels = ("sagrada_familia",)
    dynamic_channels = ("sagrada_city",)
    global_names = ("sagrada_in_force",)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        pass

    def static_table(self, rules: RuleSet) -> np.ndarray:
        return self.tagged_city_table(rules, TAG)

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        if in_force(game):
            root = game.find(game.ext[KEY].node)
            cells = np.array([game.placements[k][:2] for k in game.tiles[root]], dtype=np.intp)
            add_cells(board[0], cells, ctx)

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        out[0] = 1.0 if in_force(game) else 0.0
