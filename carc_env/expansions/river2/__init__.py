"""The River II (plug-in ``river2``): a river of 12 tiles laid before every other tile.

Parts: :mod:`.rules` (options, state, hooks), :mod:`.observe` (the open river
ends and the river tiles left), :mod:`.draw` (the river's progress in the
status lines).  Tiles: ``carc_env/data/tiles/river2.toml``; rules:
``docs/rules/river2.md``.
"""

from ...core.expansion import register
from .rules import KEY, River2, RiverEnd, RiverOptions, RiverState, river_tiles

Options = RiverOptions
register(River2, package=__name__)

__all__ = ["KEY", "Options", "River2", "RiverEnd", "RiverOptions", "RiverState", "river_tiles"]
