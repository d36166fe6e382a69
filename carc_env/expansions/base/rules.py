"""The base game's rules as a plug-in: the worked example of the hook protocol.

The base game's scoring (roads, cities, cloisters, fields) is the core's.
What the base set adds is data and setup:

* ``tile_files``: the 72 tiles (``data/tiles/base.toml``, ``BA-A`` .. ``BA-X``);
* ``setup``: the start tile ``BA-D`` at (0, 0), unrotated (city north, road
  west-east), unless another enabled expansion lays its own start layout
  (``REPLACES_START``: the River, the Count, a map).

One rule variant is an option (``BaseOptions``): ``count_tile_once`` (open
question O12), through the ``feature_size`` hook, which the base game claims
only when the option is False (so another plug-in may answer it otherwise).
Everything else is the default of each hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.expansion import Expansion

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "base"


@dataclass(frozen=True)
class BaseOptions:
    count_tile_once: bool = True
    """O12: a city or road passing through one tile twice (two segments of that
    tile) counts the tile once (JCZ counts distinct positions).  False counts
    every segment, i.e. the tile twice."""


class BaseGame(Expansion):
    KEY = KEY
    Options = BaseOptions
    tile_files = ("base.toml",)

    def claims(self, hook: str) -> bool:
        if hook == "feature_size":
            return not self.options.count_tile_once
        return super().claims(hook)

    def feature_size(self, game: Game, root: int) -> int | None:
        return len(game.feature_nodes(root))

    def setup(self, game: Game) -> None:
        if any(e.REPLACES_START for e in game.rules.expansions):
            return
        game.place_fixed(game.rules.start_tiles[self.KEY], 0, 0, 0)
