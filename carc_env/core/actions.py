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

Actions are frozen dataclasses; ``Game.apply`` checks every field against its
annotation (``int`` fields take Python or numpy integers, never bools, floats or
strings) before anything changes, and raises :class:`ActionTypeError` naming
the field, the value and its type otherwise.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .tiles import TileType


class IllegalActionError(ValueError):
    """An action was not legal in the current state; the message says why."""


class ActionTypeError(IllegalActionError, TypeError):
    """An action (or a field of one) has the wrong type: a float, a string or a bool where an integer
    is needed, or something that is not an action at all.  Both an :class:`IllegalActionError` (a
    ``ValueError``) and a ``TypeError``, so either ``except`` catches it."""


def as_index(value: Any, what: str = "an action") -> int:
    """``value`` as a Python int if it is an integer (``int``, numpy integer, integer 0-d array or
    tensor); raise :class:`ActionTypeError` naming ``what``, the value and its type otherwise.

    Bools are refused although Python counts them as integers: ``True`` as an action index is
    always a mistake.  Floats are refused even when integral: truncating ``2916.7`` would play
    another action than the one meant.
    """
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):
        raise ActionTypeError(f"{what} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ActionTypeError(f"{what} must be an integer, got {value!r} of type {type(value).__name__}") from None


_FIELD_CHECKS: dict[type, tuple[tuple[str, str], ...]] = {}


def _field_checks(cls: type) -> tuple[tuple[str, str], ...]:
    checks = _FIELD_CHECKS.get(cls)
    if checks is None:
        checks = tuple(
            (f.name, f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""))
            for f in dataclasses.fields(cls)
        )
        _FIELD_CHECKS[cls] = checks
    return checks


def checked_action(action: Any) -> Action:
    """``action`` with every field checked against its annotation; numpy integers become ints.

    Raises :class:`ActionTypeError` for anything that is not an :class:`Action` or has a field of
    the wrong type.  Returns the same object when nothing needed converting.
    """
    if not isinstance(action, Action):
        raise ActionTypeError(
            f"an action must be an Action (PlaceTile, PlaceFollower, Pass, an expansion's action) or its text, "
            f"got {action!r} of type {type(action).__name__}"
        )
    fixed: dict[str, Any] | None = None
    cls = type(action)
    for name, kind in _field_checks(cls):
        v = getattr(action, name)
        if kind == "int":
            if type(v) is not int:
                iv = as_index(v, f"{cls.__name__}.{name}")
                fixed = fixed or {}
                fixed[name] = iv
        elif kind == "str":
            if not isinstance(v, str):
                raise ActionTypeError(f"{cls.__name__}.{name} must be a string, got {v!r} of type {type(v).__name__}")
        elif kind == "bool":
            if not isinstance(v, bool):
                raise ActionTypeError(f"{cls.__name__}.{name} must be a bool, got {v!r} of type {type(v).__name__}")
    return dataclasses.replace(action, **fixed) if fixed else action


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


def parse_action(
    text: str,
    last_tile: TileType | None,
    parsers: Mapping[str, Callable[[str], Action]] = {},  # noqa: B006
) -> Action:
    """Parse an action's text form; a follower's feature name is resolved against ``last_tile``, the
    tile just placed (None before any).  The one parser of both engines (``Game.parse_action``, the
    compiled engine's records); IllegalActionError names what cannot be parsed."""
    if not isinstance(text, str):
        raise IllegalActionError(f"an action text must be a string, got {text!r}")
    parsed = parse_basic(text, parsers)
    if parsed is None:
        raise IllegalActionError(
            f"cannot parse action {text!r}; expected 'tile X,Y rR', 'follower NAME', 'pass' or an expansion action"
        )
    if not isinstance(parsed, tuple):
        return parsed
    name = parsed[1]
    if last_tile is None:
        raise IllegalActionError(f"{text!r}: no tile has been placed")
    if name.startswith("#") and name[1:].isdigit():
        return PlaceFollower(int(name[1:]))
    try:
        return PlaceFollower(last_tile.segment_index(name))
    except KeyError as exc:
        raise IllegalActionError(f"{text!r}: {exc.args[0]}") from None
