"""The base game as an expansion: the worked example of the hook protocol.

The base game's scoring (roads, cities, cloisters, fields) is the core's.
What the base set adds is data and setup:

* ``tile_files``: the 72 tiles (``data/tiles/base.toml``, ``BA-A`` .. ``BA-X``);
* ``setup``: the start tile ``BA-D`` at (0, 0), unrotated (city north, road
  west-east), unless another enabled expansion lays its own start layout
  (``REPLACES_START``: the River, the Count, a map).

Everything else is the default of each hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.expansion import Expansion, register

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game


@register
class BaseGame(Expansion):
    KEY = "base"
    tile_files = ("base.toml",)

    def setup(self, game: Game) -> None:
        if any(e.REPLACES_START for e in game.rules.expansions):
            return
        game.place_fixed(game.rules.start_tiles[self.KEY], 0, 0, 0)
