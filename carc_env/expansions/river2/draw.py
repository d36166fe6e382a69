"""How The River II is drawn (the plug-in's drawing part): one status line with the river's
progress, e.g. ``River: 7 tiles to place, open ends (3,-1)``, then ``River: complete``; during the
lake's extra turn ``; P1 plays again (lake)`` is added.  The river itself is tile data (``I``
edges), drawn by the renderers like every edge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...render.expansions import Drawing as BaseDrawing
from ...render.expansions import StatusLine
from .rules import KEY, RiverState, river_tiles

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game


class Drawing(BaseDrawing):
    """The river's progress."""

    def status_lines(self, game: Game) -> list[StatusLine]:
        river: RiverState = game.ext[KEY]
        is_river = river_tiles(game.rules)
        left = int(game.remaining_counts()[is_river].sum())
        if game.current_tile >= 0 and is_river[game.current_tile]:
            left += 1
        if left:
            ends = " ".join(f"({x},{y})" for x, y, _, _ in river.ends if (x, y) not in game.board)
            text = f"River: {left} tile{'s' * (left != 1)} to place, open ends {ends or '-'}"
        else:
            text = "River: complete"
        if river.extra_turn:
            text += f"; P{game.turn_player} plays again (lake)"
        return [StatusLine(text)]
