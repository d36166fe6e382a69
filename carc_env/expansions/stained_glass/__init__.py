"""Stained Glass (plug-in ``stained_glass``, fan expansion by Trebuchet): glass tokens, thieves, windows.

Parts: :mod:`.tokens` (the token data, the window shapes and their
arithmetic), :mod:`.rules` (options, state, hooks, decision stages, actions
and events), :mod:`.actions` (the fixed action ranges of its three phases),
:mod:`.observe` (the ``windows`` tensor, the thieves' board channels and its
global features), :mod:`.draw` (each player's windows beside the board, the
thieves).  Token data: ``carc_env/data/tokens/stained_glass.toml``; rules:
``docs/rules/stained_glass.md``.
"""

from ...core.expansion import register
from .rules import (
    KEY,
    STEAL_PHASE,
    THIEF_PHASE,
    WINDOW_PHASE,
    GlassState,
    PlaceThief,
    ScoreWindow,
    StainedGlass,
    StainedGlassOptions,
    Steal,
    ThiefPlaced,
    TokenDrawn,
    TokenStolen,
    WindowScored,
    bag_tokens,
    thieves,
    token_set,
    tokens_held,
)
from .tokens import Shape, TokenDataError, TokenSet, best_windows, load_token_set

Options = StainedGlassOptions
register(StainedGlass, package=__name__)

TOKEN_KINDS = token_set().kinds
"""The 12 token kinds in token order (``G1a`` .. ``G4c``)."""
SHAPES = token_set().shapes
"""The 10 legal windows in shape order (``W1`` .. ``W1+W2+W3+W4``)."""
TOTAL_TOKENS = token_set().total
"""Tokens in the game (24)."""

__all__ = [
    "KEY", "Options", "SHAPES", "STEAL_PHASE", "Shape", "StainedGlass", "StainedGlassOptions", "Steal",
    "GlassState", "PlaceThief", "ScoreWindow", "THIEF_PHASE", "TOKEN_KINDS", "TOTAL_TOKENS", "ThiefPlaced",
    "TokenDataError", "TokenDrawn", "TokenSet", "TokenStolen", "WINDOW_PHASE", "WindowScored", "bag_tokens",
    "best_windows", "load_token_set", "thieves", "token_set", "tokens_held",
]  # fmt: skip
