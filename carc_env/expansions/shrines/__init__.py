"""Heretics and Shrines (plug-in ``shrines``): shrines, their placement rule and challenges.

Parts: :mod:`.rules` (options, hooks), :mod:`.draw` (the shrine's roof).  The
shrine is a building kind, so the core's ``building_shrine`` observation
channel covers it.  Tiles: ``carc_env/data/tiles/shrines.toml`` (and
``shrines_rgg.toml``); rules: ``docs/rules/shrines.md``.
"""

from ...core.expansion import register
from .rules import KEY, ShrineOptions, Shrines

Options = ShrineOptions
register(Shrines, package=__name__)

__all__ = ["KEY", "Options", "ShrineOptions", "Shrines"]
