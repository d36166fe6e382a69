"""Carcassonne Maps - Germany (``maps_germany``): the game on a printed board of Germany.

The rules are in :mod:`.rules`, the board file format in :mod:`.mapfile`; the
board itself is data (``carc_env/data/maps/germany.toml``).
"""

from ...core.expansion import register
from .rules import KEY, MapsGermany, MapsGermanyOptions, MapsState

register(MapsGermany)

__all__ = ["KEY", "MapsGermany", "MapsGermanyOptions", "MapsState"]
