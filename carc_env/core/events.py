"""Events returned by :meth:`carc_env.core.game.Game.apply`.

Every state change the rules make is reported as an event.  Scoring events
carry an itemised breakdown (:class:`ScoreItem`), so a reward function, a log
or a test can see exactly why points were given.  Rewards are computed from
events outside the rules (``carc_env.env``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One line of a score breakdown, e.g. ``ScoreItem("tiles", "3 tiles x 2", 6)``."""

    kind: str
    label: str
    points: int


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of all events."""


@dataclass(frozen=True, slots=True)
class TileDrawn(Event):
    player: int
    tile: str


@dataclass(frozen=True, slots=True)
class TileDiscarded(Event):
    """A drawn tile had no legal placement and was removed from the game."""

    player: int
    tile: str
    reason: str


@dataclass(frozen=True, slots=True)
class TilePlaced(Event):
    player: int
    tile: str
    x: int
    y: int
    rotation: int


@dataclass(frozen=True, slots=True)
class FollowerPlaced(Event):
    player: int
    x: int
    y: int
    segment: str
    kind: str


@dataclass(frozen=True, slots=True)
class FeatureScored(Event):
    """A feature was scored.

    ``points[p]`` is what player ``p`` got from it (0 for non-majority
    players).  ``items`` is the breakdown of the feature's value; the majority
    players each receive ``value``.  ``returned[p]`` counts the followers that
    went back to player ``p``'s supply.  ``final`` is True during end-of-game
    scoring.
    """

    kind: str
    final: bool
    value: int
    items: tuple[ScoreItem, ...]
    points: tuple[int, ...]
    winners: tuple[int, ...]
    returned: tuple[int, ...]
    tiles: tuple[tuple[int, int], ...]
    node: int


@dataclass(frozen=True, slots=True)
class FeatureCompleted(Event):
    """A road, city or building was completed (whether or not anyone occupies it)."""

    kind: str
    size: int
    node: int
    occupied: bool


@dataclass(frozen=True, slots=True)
class PointsAwarded(Event):
    """Points not tied to one feature's majority (expansion bonuses, tokens)."""

    player: int
    points: int
    items: tuple[ScoreItem, ...]
    final: bool


@dataclass(frozen=True, slots=True)
class FollowerReturned(Event):
    """A follower went back to its owner without scoring (e.g. lost a challenge)."""

    player: int
    node: int
    reason: str


@dataclass(frozen=True, slots=True)
class FigureMoved(Event):
    """A neutral figure changed hands (the King, the Robber Baron).

    ``player`` is the new holder and ``previous`` the one before (-1 = nobody);
    ``reason`` says why, e.g. ``"completed a city of 5 tiles"``.
    """

    figure: str
    player: int
    previous: int
    reason: str


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    scores: tuple[int, ...]
    winners: tuple[int, ...]
