"""Starting an environment from a saved position (a JSON game record).

Every environment takes the same reset options for this (the AEC env, the
Gymnasium single-agent env and the vector env)::

    import carc_env
    from carc_env.core import Game, GameConfig
    from carc_env.core.record import to_record

    game = Game(GameConfig(num_players=2), seed=3)
    for _ in range(12):
        game.apply(game.legal_actions()[0])
    rec = to_record(game)                        # or FastBatch.record, or a saved file
    env = carc_env.env()
    env.reset(options={"record": rec})           # the position the record reached
    env.reset(options={"record": rec, "upto": 10})  # the position after its first 10 actions

``options["record"]`` is a record dict (:func:`carc_env.core.record.to_record`'s
format, written by either engine), its JSON text, or the path of a record file
(:func:`carc_env.core.record.save_record`).  ``options["upto"]`` (optional)
keeps only the record's first ``upto`` actions.  The game is rebuilt by
replaying the record on the env's own engine (the compiled one where it runs),
so the position's observation, mask, rewards and everything played from it are
those of the game that was recorded (``tests/env/test_env_start.py``).  A later
reset without a seed continues the record's seed stream, as after
``reset(seed=record["seed"])``.

Errors (a :class:`~carc_env.core.record.RecordError`, a ``ValueError``, naming
the problem; the env is left as it was): a malformed record or file, a record of
another configuration than the env's, an action that does not replay, and a
position where the game is over (there is no decision to start from: pass an
``upto`` before the end).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core import ConfigError, GameConfig
from ..core.record import RecordError, check_record, load_record

START_OPTIONS = ("record", "upto")


def position_record(value: Any, upto: Any = None) -> dict[str, Any]:
    """The record of ``options["record"]`` (a dict, JSON text or a file path) cut to its first ``upto``
    actions; :class:`RecordError` naming what is wrong."""
    if isinstance(value, Path) or (isinstance(value, str) and not value.lstrip().startswith("{")):
        value = load_record(value)
    elif isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RecordError(f"reset option record: not valid JSON ({exc})") from None
    if not isinstance(value, Mapping):
        raise RecordError(
            f"reset option record must be a game record (a dict from carc_env.core.record.to_record, its JSON "
            f"text or a file path), got {type(value).__name__}"
        )
    actions, _ = check_record(value)
    rec = dict(value)
    if upto is not None:
        if isinstance(upto, bool) or not isinstance(upto, int) or not 0 <= upto <= len(actions):
            raise RecordError(
                f"reset option upto must be an integer from 0 to {len(actions)} (the record's actions), got {upto!r}"
            )
        rec["actions"] = actions[:upto]
        rec.pop("scores", None)  # the recorded scores are those of the whole record
        rec.pop("over", None)
    return rec


def start_record(seed: Any, options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The record a reset's ``options`` ask to start from (None if none); a ConfigError for a record
    combined with a seed or a draw order (the record carries both), or ``upto`` without a record."""
    if not options or ("record" not in options and "upto" not in options):
        return None
    if "record" not in options:
        raise ConfigError("reset option upto needs a record: options={'record': rec, 'upto': k}")
    if seed is not None or options.get("draw_order") is not None:
        raise ConfigError(
            "reset option record carries its own seed and draw order: pass it without seed= or draw_order"
        )
    return position_record(options["record"], options.get("upto"))


def check_config(record: Mapping[str, Any], config: GameConfig) -> None:
    """Raise :class:`RecordError` unless the record was played with ``config``."""
    try:
        theirs = GameConfig.from_dict(record["config"])
    except (ValueError, TypeError) as exc:
        raise RecordError(f"record config is invalid: {exc}") from None
    if theirs.key() != config.key():
        raise RecordError(
            f"the record was played with {theirs.to_dict()}, this env plays {config.to_dict()}; "
            "make the env with the record's options"
        )


def game_over_error(n_actions: int) -> RecordError:
    return RecordError(
        f"the recorded game is over after its {n_actions} actions: there is no decision to start from; "
        "start from an earlier position with options={'record': rec, 'upto': k}"
    )


__all__ = ["START_OPTIONS", "check_config", "game_over_error", "position_record", "start_record"]
