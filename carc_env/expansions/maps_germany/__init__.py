"""Carcassonne Maps - Germany (plug-in ``maps_germany``): the game on a printed board of Germany.

Parts: :mod:`.rules` (options, state, hooks, the extra-turn decision), :mod:`.mapfile`
(the board file format and the printed geometry derived from it), :mod:`.actions`
(the action range of ``map_extra_turn``), :mod:`.observe` (the map's board channels),
:mod:`.draw` (the map on the text board and the picture), :mod:`.heuristics` (the
greedy baseline's choice of the extra turn).
Board: ``carc_env/data/maps/germany.toml`` (an approximation of the printed
board); how the core plays on any printed board: :mod:`carc_env.core.layout`;
rules: ``docs/rules/maps_germany.md``.
"""

from ...core.expansion import register
from .mapfile import MapData, MapDataError, load_map_file
from .rules import EXTRA_TURN_PHASE, KEY, ExtraTurnDeclined, MapsGermany, MapsGermanyOptions, MapsState, TakeExtraTurn

Options = MapsGermanyOptions
register(MapsGermany, package=__name__)

__all__ = ["EXTRA_TURN_PHASE", "ExtraTurnDeclined", "KEY", "MapData", "MapDataError", "MapsGermany", "MapsGermanyOptions", "MapsState", "Options",
           "TakeExtraTurn", "load_map_file"]  # fmt: skip
