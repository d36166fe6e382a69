"""King & Robber Baron (plug-in ``king_robber``): the King and the Robber Baron figures.

Parts: :mod:`.rules` (state, hooks), :mod:`.observe` (who holds each figure
and its record), :mod:`.draw` (the holders in the status lines).  Tiles:
``carc_env/data/tiles/king_robber.toml``; rules: ``docs/rules/king_robber.md``.
"""

from ...core.expansion import register
from .rules import KEY, KingRobber, KingRobberState

register(KingRobber, package=__name__)

__all__ = ["KEY", "KingRobber", "KingRobberState"]
