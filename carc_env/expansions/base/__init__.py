"""The base game (plug-in ``base``): the 72 tiles and the start tile; all its scoring is the core's.

Parts: :mod:`.rules` only (the core's observation channels and drawing cover
the base game).  Tiles: ``carc_env/data/tiles/base.toml``; rules:
``docs/rules/base.md``.
"""

from ...core.expansion import register
from .rules import KEY, BaseGame, BaseOptions

Options = BaseOptions
register(BaseGame, package=__name__)

__all__ = ["KEY", "BaseGame", "BaseOptions", "Options"]
