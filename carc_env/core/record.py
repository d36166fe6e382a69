"""JSON game records that replay exactly.

A record holds the configuration, the seed, the full draw order and every
action in text notation, plus the scores reached.  :func:`replay` rebuilds
the game action by action and checks that it ends with the recorded scores,
so a record is also a bug report: a replay that disagrees raises
:class:`RecordError` naming the first action that failed.  A replay rebuilds
the identical state, the game's random generator included: when the seed
itself deals the recorded draw order the game is rebuilt from the seed alone
(as it was played); only a game played with a forced order is rebuilt with it.

Every malformed input is a :class:`RecordError` (a ``ValueError``) that names
the problem: a file that is missing, a directory, not UTF-8 or not JSON; a
record that is not an object, of another format or version; a field of the
wrong type (``actions`` must be a list of strings, ``scores`` a list of
integers or absent, ``seed`` None or a non-negative integer, ``draw_order`` a
list of tile ids); an action that does not replay; final scores that differ.
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
from .state import RECORD

FORMAT = "carc_env-game-record"
VERSION = 1


class RecordError(ValueError):
    """A game record is malformed or does not replay; the message says where."""


def to_record(game: Game) -> dict[str, Any]:
    """The JSON-serialisable record of a game so far: the state record's :data:`~carc_env.core.state.RECORD`
    fields (``history`` as ``actions`` in text notation), from which :func:`replay` rebuilds every other
    field of :data:`~carc_env.core.state.STATE`."""
    fields = {
        "config": game.config.to_dict(),
        "seed": game.seed,
        "draw_order": list(game.draw_order),
        "history": game.history_texts(),
        "scores": list(game.scores),
        "over": game.over,
    }
    if tuple(fields) != RECORD:  # pragma: no cover - the two lists are kept together
        raise RecordError(f"to_record keeps {tuple(fields)}, the state record says {RECORD}")
    actions = fields.pop("history")
    return {"format": FORMAT, "version": VERSION, "config": fields["config"], "seed": fields["seed"],
            "draw_order": fields["draw_order"], "actions": actions, "scores": fields["scores"],
            "over": fields["over"]}  # fmt: skip


def save_record(game: Game, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_record(game), indent=1) + "\n")


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file (JSON); :class:`RecordError` if it cannot be read or parsed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record file") from None
    except IsADirectoryError:
        raise RecordError(f"{path}: is a directory, not a record file") from None
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"{path}: not a text (UTF-8) file, so not a JSON record ({exc.reason} at byte {exc.start})"
        ) from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return data


def check_record(record: Any) -> tuple[list[str], list[int] | None]:
    """The record's ``actions`` and ``scores`` (None if absent) after checking its format, version, keys
    and field types; :class:`RecordError` naming the problem otherwise.  (The config, seed and draw
    order are checked when the game is built from them.)"""
    if not isinstance(record, Mapping):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a carc_env game record (format {record.get('format')!r}, expected {FORMAT!r})")
    if record.get("version") != VERSION:
        raise RecordError(f"record version {record.get('version')!r} is not supported (expected {VERSION})")
    for key in ("config", "seed", "draw_order", "actions"):
        if key not in record:
            raise RecordError(f"record has no {key!r}")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise RecordError(f"record 'actions' must be a list of action texts (str), got {_short(actions)}")
    scores = record.get("scores")
    if "scores" in record and (
        not isinstance(scores, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in scores)
    ):
        raise RecordError(f"record 'scores' must be a list of integers (or absent), got {_short(scores)}")
    if not isinstance(record["config"], Mapping):
        raise RecordError(f"record 'config' must be an object, got {_short(record['config'])}")
    return actions, scores


def replay(record: Mapping[str, Any], upto: int | None = None) -> Game:
    """Rebuild a game from its record (all actions, or the first ``upto``)."""
    actions, scores = check_record(record)
    if upto is not None:
        if isinstance(upto, bool) or not isinstance(upto, int) or upto < 0:
            raise RecordError(f"upto must be None or a non-negative integer, got {upto!r}")
        actions = actions[:upto]
    try:
        config = GameConfig.from_dict(record["config"])
        game = Game(config, seed=record["seed"])
        if game.draw_order != record["draw_order"]:  # a game played with a forced draw order
            game = Game(config, seed=record["seed"], draw_order=record["draw_order"])
    except (ConfigError, TypeError) as exc:
        raise RecordError(f"record config, seed or draw order is invalid: {exc}") from None
    for i, text in enumerate(actions):
        try:
            game.apply(text)
        except IllegalActionError as exc:
            raise RecordError(f"action {i} ({text!r}) does not replay: {exc}") from None
    if upto is None and scores is not None and scores != game.scores:
        raise RecordError(f"replay ends with scores {game.scores}, the record says {scores}")
    return game


def _short(value: Any) -> str:
    text = repr(value)
    return f"{text[:80]}... ({type(value).__name__})" if len(text) > 80 else f"{text} ({type(value).__name__})"
