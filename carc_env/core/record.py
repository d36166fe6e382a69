"""JSON game records that replay exactly.

A record holds the configuration, the seed, the full draw order and every
action in text notation, plus the scores reached.  :func:`replay` rebuilds
the game action by action and checks that it ends with the recorded scores,
so a record is also a bug report: a replay that disagrees raises
:class:`RecordError` naming the first action that failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .actions import IllegalActionError
from .config import GameConfig
from .expansion import ConfigError
from .game import Game

FORMAT = "carc_env-game-record"
VERSION = 1


class RecordError(ValueError):
    """A game record is malformed or does not replay; the message says where."""


def to_record(game: Game) -> dict[str, Any]:
    """The JSON-serialisable record of a game so far."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": game.config.to_dict(),
        "seed": game.seed,
        "draw_order": list(game.draw_order),
        "actions": game.history_texts(),
        "scores": list(game.scores),
        "over": game.over,
    }


def save_record(game: Game, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_record(game), indent=1) + "\n")


def load_record(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record file") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON ({exc})") from None
    return data


def replay(record: Mapping[str, Any], upto: int | None = None) -> Game:
    """Rebuild a game from its record (all actions, or the first ``upto``)."""
    if not isinstance(record, Mapping):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a carc_env game record (format {record.get('format')!r}, expected {FORMAT!r})")
    if record.get("version") != VERSION:
        raise RecordError(f"record version {record.get('version')!r} is not supported (expected {VERSION})")
    for key in ("config", "seed", "draw_order", "actions"):
        if key not in record:
            raise RecordError(f"record has no {key!r}")
    try:
        game = Game(GameConfig.from_dict(record["config"]), seed=record["seed"], draw_order=record["draw_order"])
    except (ConfigError, TypeError) as exc:
        raise RecordError(f"record config or draw order is invalid: {exc}") from None
    actions = record["actions"]
    if upto is not None:
        actions = actions[:upto]
    for i, text in enumerate(actions):
        try:
            game.apply(text)
        except IllegalActionError as exc:
            raise RecordError(f"action {i} ({text!r}) does not replay: {exc}") from None
    if upto is None and "scores" in record and list(record["scores"]) != game.scores:
        raise RecordError(f"replay ends with scores {game.scores}, the record says {record['scores']}")
    return game
