"""The River II's board channel and global feature (the plug-in's encoder part).

Dynamic board channel:

* ``river_end``: 1 on the empty cell an open end of the river flows into,
  while river tiles remain to be placed (the drawn one included).

Global feature:

* ``river_tiles_left``: river tiles still in the bag / river tiles in the game.

(The lake's extra turn needs no feature: the lake takes no follower, so no
decision falls between placing it and the extra turn's tile, where
``placed_tile_R2-lake-volcano`` and ``turn_p0`` already say whose turn it is.)
River edges show in the core's ``edge_{S}_river`` channels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObsContext, ObservationExtension
from .rules import KEY, RiverState, river_tiles

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


class Observation(ObservationExtension):
    """Where the river may continue, and how much of it is left."""

    dynamic_channels = ("river_end",)
    global_names = ("river_tiles_left",)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        self.river = river_tiles(rules)
        self.total = max(1, sum(t.count for t, r in zip(rules.tiles, self.river, strict=True) if r))

    def _left(self, game: Game) -> int:
        if game.ext[KEY].river_done:  # set once no river tile is left to draw; the bag only shrinks
            return 0
        return int(game.remaining_counts()[self.river].sum())

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        st: RiverState = game.ext[KEY]
        if not st.ends or st.river_done:
            return
        t = game.current_tile
        if not (t >= 0 and self.river[t]) and not self._left(game):
            return
        board_cells = game.board
        plane = board[0]
        for x, y, _side, _turn in st.ends:
            col, row = x - ctx.x0, y - ctx.y0
            if (x, y) not in board_cells and 0 <= col < ctx.cols and 0 <= row < ctx.rows:
                plane[row, col] = 1

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        out[0] = self._left(game) / self.total
