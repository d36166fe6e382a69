"""The Count of Carcassonne (plug-in ``count``): the City of Carcassonne, its quarters and the Count.

Parts: :mod:`.rules` (options, state, hooks, decision stages, actions and
events), :mod:`.actions` (the fixed action ranges of its four phases),
:mod:`.observe` (its board channels and global features), :mod:`.draw` (the
quarters and the Count on the text board and the picture).  Tiles:
``carc_env/data/tiles/count.toml``; rules: ``docs/rules/count.md``.
"""

from ...core.expansion import register
from .rules import (
    BLACKSMITH,
    BLOCK_X,
    BLOCK_Y,
    CASTLE,
    CATHEDRAL,
    KEY,
    MARKET,
    QUARTERS,
    CountDeploy,
    CountMove,
    CountMoved,
    CountOfCarcassonne,
    CountOptions,
    CountSend,
    CountState,
    FollowerFromQuarter,
    FollowerToQuarter,
)

Options = CountOptions
register(CountOfCarcassonne, package=__name__)

__all__ = [
    "BLACKSMITH", "BLOCK_X", "BLOCK_Y", "CASTLE", "CATHEDRAL", "KEY", "MARKET", "QUARTERS", "CountDeploy",
    "CountMove", "CountMoved", "CountOfCarcassonne", "CountOptions", "CountSend", "CountState",
    "FollowerFromQuarter", "FollowerToQuarter", "Options",
]  # fmt: skip
