"""Actions a deciding player can take, and their text notation.

Text notation (absolute board coordinates; the start tile is at (0, 0), x
grows east, y grows south; rotations are quarter turns clockwise):

* ``tile X,Y rR``   place the drawn tile at (X, Y) turned R quarter turns, e.g. ``tile 1,-2 r3``
* ``follower NAME`` put a follower on feature NAME of the tile just placed
  (names from the tile data: ``c1``, ``r2``, ``f1``, ``m``), e.g. ``follower f2``
* ``pass``          decline an optional decision

Expansions add their own action classes; each implements ``to_text``, and
the expansion's ``action_parsers`` (``{first word: parse(text)}``) read them
back, in games where it is enabled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass


class IllegalActionError(ValueError):
    """An action was not legal in the current state; the message says why."""


@dataclass(frozen=True, slots=True)
class Action:
    """Base class of all actions."""

    def to_text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class PlaceTile(Action):
    x: int
    y: int
    rotation: int

    def to_text(self) -> str:
        return f"tile {self.x},{self.y} r{self.rotation}"


@dataclass(frozen=True, slots=True)
class PlaceFollower(Action):
    """Put a follower on segment ``segment`` (local index in the tile data) of the placed tile."""

    segment: int

    def to_text(self) -> str:  # the game renders the segment's name; see Game.action_text
        return f"follower #{self.segment}"


@dataclass(frozen=True, slots=True)
class Pass(Action):
    def to_text(self) -> str:
        return "pass"


_TILE_RE = re.compile(r"^tile\s+(-?\d+)\s*,\s*(-?\d+)\s+r([0-3])$")


def parse_basic(text: str, parsers: Mapping[str, Callable[[str], Action]] = {}) -> Action | tuple[str, str] | None:  # noqa: B006
    """Parse the context-free part of an action text (``parsers``: the enabled expansions').

    Returns an Action, or ``("follower", NAME)`` for a follower placement
    (the name is resolved against the placed tile by the game), or None if the
    keyword is unknown.
    """
    t = " ".join(text.strip().split())
    if t == "pass":
        return Pass()
    m = _TILE_RE.match(t)
    if m:
        return PlaceTile(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if t.startswith("follower "):
        return ("follower", t[len("follower ") :].strip())
    keyword = t.split(" ", 1)[0]
    parse = parsers.get(keyword)
    if parse is not None:
        return parse(t)
    return None
