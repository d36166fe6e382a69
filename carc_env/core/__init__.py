"""The pure rules core: stdlib + numpy only (no gymnasium, pettingzoo or torch).

Public names: :class:`Game`, :class:`GameConfig`, the actions and events, and
:func:`carc_env.core.record.to_record` / ``replay`` for JSON game records.
"""

from .actions import Action, ActionTypeError, IllegalActionError, Pass, PlaceFollower, PlaceTile, as_index
from .config import GameConfig, RuleSet, ruleset
from .events import (
    Event,
    FeatureCompleted,
    FeatureScored,
    FigureMoved,
    FollowerPlaced,
    FollowerReturned,
    GameOver,
    PointsAwarded,
    ScoreItem,
    TileDiscarded,
    TileDrawn,
    TilePlaced,
)
from .expansion import ConfigError, Expansion, register, unregister
from .game import GAME_OVER, Game, new_game
from .tiles import TileDataError

__all__ = [
    "Action",
    "ActionTypeError",
    "IllegalActionError",
    "as_index",
    "Pass",
    "PlaceFollower",
    "PlaceTile",
    "GameConfig",
    "RuleSet",
    "ruleset",
    "Event",
    "FeatureCompleted",
    "FeatureScored",
    "FigureMoved",
    "FollowerPlaced",
    "FollowerReturned",
    "GameOver",
    "PointsAwarded",
    "ScoreItem",
    "TileDiscarded",
    "TileDrawn",
    "TilePlaced",
    "ConfigError",
    "Expansion",
    "register",
    "unregister",
    "GAME_OVER",
    "Game",
    "new_game",
    "TileDataError",
]
