"""The map's board channels (the plug-in's encoder part).

Dynamic board channels (the board does not move: with a printed board the
window is the board's extent at a fixed origin, see ``carc_env.encoding.actions``):

* ``map_playable``: 1 on every square a tile may go on (covered or not);
* ``map_void``: 1 on every cell that is not a square of the board (sea, clouds,
  the neighbouring countries, the cells of the features printed abroad);
* ``map_large_city``: 1 on a printed large-city square, 2 once its large city is
  connected (a tile touches it, so the squares next to it take tiles);
* ``map_town``: 1 on a town square, 2 on a start square;
* ``map_border_feature``: 1 on the cell of a road printed abroad, 2 of a city;
* ``map_coats_of_arms``: coats of arms printed on the cell (large-city squares,
  features abroad).

The printed pieces themselves are tiles for the core's channels too (``tile``,
``edge_*``, ``cities`` ...; ``edge_{S}_interior`` marks their neutral sides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...encoding.observation import ObsContext, ObservationExtension
from .rules import KEY, MapsGermany

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

CHANNELS = ("map_playable", "map_void", "map_large_city", "map_town", "map_border_feature", "map_coats_of_arms")
_LARGE_CITY = CHANNELS.index("map_large_city")


class Observation(ObservationExtension):
    """The printed board as planes."""

    dynamic_channels = CHANNELS

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        exp: MapsGermany = rules.by_key[KEY]
        m, layout = exp.map, exp.layout
        x0, x1, y0, y1 = layout.bounds
        self.x0, self.y0 = x0, y0
        h, w = y1 - y0 + 1, x1 - x0 + 1
        planes = np.zeros((len(CHANNELS), h, w), dtype=np.uint8)
        planes[1] = 1
        for x, y in m.squares:
            planes[1, y - y0, x - x0] = 0
        for x, y in layout.playable:
            planes[0, y - y0, x - x0] = 1
        for t in m.towns:
            planes[3, t.y - y0, t.x - x0] = 1
        for s in m.starts:
            planes[3, s.y - y0, s.x - x0] = 2
        for p, coats in zip(layout.pieces, exp.coats, strict=True):
            if p.square:
                planes[2, p.y - y0, p.x - x0] = 1
            else:
                planes[4, p.y - y0, p.x - x0] = 1 if p.tile.startswith("MAP-road") else 2
            planes[5, p.y - y0, p.x - x0] = min(255, coats)
        self.planes = planes
        self.high = [1, 1, 2, 2, 2, max(1, int(planes[5].max()))]
        self.group_cells = {
            g: [(layout.pieces[i].x, layout.pieces[i].y) for i in idx] for g, idx in layout.groups.items()
        }

    def channel_high(self) -> list[int]:
        return list(self.high)

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        h, w = self.planes.shape[1:]
        # overlap of the window and the board's extent, in both coordinate systems
        c0, r0 = max(ctx.x0, self.x0), max(ctx.y0, self.y0)
        c1, r1 = min(ctx.x0 + ctx.cols, self.x0 + w), min(ctx.y0 + ctx.rows, self.y0 + h)
        if c1 > c0 and r1 > r0:
            board[:, r0 - ctx.y0 : r1 - ctx.y0, c0 - ctx.x0 : c1 - ctx.x0] = self.planes[
                :, r0 - self.y0 : r1 - self.y0, c0 - self.x0 : c1 - self.x0
            ]
        # outside the board's extent everything is void
        void = board[1]
        void[: max(0, self.y0 - ctx.y0), :] = 1
        void[max(0, self.y0 + h - ctx.y0) :, :] = 1
        void[:, : max(0, self.x0 - ctx.x0)] = 1
        void[:, max(0, self.x0 + w - ctx.x0) :] = 1
        for g in game.connected_groups:
            for x, y in self.group_cells[g]:
                if 0 <= x - ctx.x0 < ctx.cols and 0 <= y - ctx.y0 < ctx.rows:
                    board[_LARGE_CITY, y - ctx.y0, x - ctx.x0] = 2
