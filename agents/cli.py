"""Command-line validation shared by the scripts (``scripts/*.py``).

Every script checks all its arguments before it starts any work, and a bad one
ends the script with exit status 2 and ONE line on stderr naming the argument,
the value and what is allowed (no traceback, no usage block)::

    bench.py: error: argument --players: 6 is not allowed; it must be an integer from 2 to 5

* :class:`Parser`: an ``argparse.ArgumentParser`` whose errors are that one line;
* argument types for ``type=``: :func:`int_range` (``int_range(1)`` is "an
  integer >= 1"), :data:`positive_float`, :data:`non_negative_float`, :data:`seed`, :data:`players`,
  :func:`expansions` (checked against the registry and the rules' combination
  checks), :data:`player_spec` (``random``, ``greedy``, ``greedy:EPS`` or an
  existing checkpoint file), :data:`existing_file`, :data:`output_file` (its
  folder must exist and be writable);
* :func:`usable_dir` checks an output folder (``--out``) up front;
* :func:`relative_path` and :func:`relative_spec`: a path (or the paths in a
  player spec) relative to the current directory when it lies under it, for the
  files the scripts write (a results file names no folder of one machine);
* :func:`fail` prints the one line and returns 2, for errors found after parsing.

This module imports neither torch nor the environments, so checking the
arguments is instant.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "Parser",
    "existing_file",
    "expansions",
    "fail",
    "int_range",
    "non_negative_float",
    "output_file",
    "player_spec",
    "players",
    "positive_float",
    "seed",
    "usable_dir",
]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``prog: error: ...``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def fail(prog: str, message: str) -> int:
    """Print ``prog: error: message`` on one line to stderr; return the exit status 2."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def _bad(value: Any, allowed: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{value!r} is not allowed; it must be {allowed}")


def int_range(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """``type=`` for an integer in ``lo..hi`` (``hi`` None: no upper bound)."""
    allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise _bad(text, allowed) from None
        if v < lo or (hi is not None and v > hi):
            raise _bad(v, allowed)
        return v

    parse.__name__ = "integer"
    return parse


def _float_type(test: Callable[[float], bool], allowed: str) -> Callable[[str], float]:
    """``type=`` for a finite number that passes ``test`` (``allowed`` says which, e.g. ``"> 0"``)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise _bad(text, f"a number {allowed}") from None
        if not (math.isfinite(v) and test(v)):
            raise _bad(v, f"a finite number {allowed}")
        return v

    parse.__name__ = "number"
    return parse


positive_float = _float_type(lambda v: v > 0, "> 0")
"""``type=`` for a finite number > 0."""

non_negative_float = _float_type(lambda v: v >= 0, ">= 0")
"""``type=`` for a finite number >= 0."""

seed = int_range(0)
"""``type=`` for a seed: an integer >= 0 (the engine's generators take no negative seeds)."""

players = int_range(2, 5)
"""``type=`` for a player count (2 to 5)."""


def expansions(num_players: int = 2) -> Callable[[str], tuple[str, ...]]:
    """``type=`` for a comma-separated list of expansion keys, checked by the rules (known keys,
    requirements, conflicts); ``"base"`` is added when missing."""

    def parse(text: str) -> tuple[str, ...]:
        import carc_env  # noqa: F401  (registers the built-in expansions)
        from carc_env.core import ConfigError, GameConfig
        from carc_env.core.config import ruleset
        from carc_env.core.expansion import registry

        keys = tuple(k.strip() for k in text.split(",") if k.strip())
        if not keys:
            raise _bad(text, f"a comma-separated list of expansion keys from {sorted(registry())}")
        if "base" not in keys:
            keys = ("base", *keys)
        try:
            ruleset(GameConfig(num_players=num_players, expansions=keys))
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: {exc}") from None
        return keys

    parse.__name__ = "expansion list"
    return parse


def player_spec(text: str) -> str:
    """``type=`` for a player: ``random``, ``greedy``, ``greedy:EPS`` (0 <= EPS <= 1) or a checkpoint file."""
    allowed = "'random', 'greedy', 'greedy:EPS' with 0 <= EPS <= 1, or an existing checkpoint file"
    if text in ("random", "greedy"):
        return text
    if text.startswith("greedy:"):
        try:
            eps = float(text.split(":", 1)[1])
        except ValueError:
            raise _bad(text, allowed) from None
        if not 0 <= eps <= 1:
            raise _bad(text, allowed)
        return text
    if not Path(text).is_file():
        raise _bad(text, allowed)
    return text


player_spec.__name__ = "player"


def existing_file(text: str) -> Path:
    """``type=`` for a file that exists (not a folder)."""
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    return p


existing_file.__name__ = "file"


def output_file(text: str) -> Path:
    """``type=`` for a file to write: its folder must exist and be writable, and it must not be a folder."""
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: the folder {str(parent)!r} does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: the folder {str(parent)!r} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not writable")
    return p


output_file.__name__ = "output file"


def usable_dir(path: str | Path) -> str | None:
    """Why ``path`` cannot be an output folder (created if missing), or None if it can."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        return f"--out {str(p)!r} is a file, not a folder"
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--out {str(p)!r} cannot be created: {exc.strerror or exc}"
    if not os.access(p, os.W_OK | os.X_OK):
        return f"--out {str(p)!r} is not writable"
    return None


def relative_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the current directory when it is an absolute path under it (normalised:
    ``/repo/scripts/../tests/x`` from ``/repo`` is ``tests/x``), else as given: what the scripts write
    into their results files, which then name no folder of the machine they ran on."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        rel = os.path.relpath(text, os.getcwd())
    except ValueError:  # (another drive on Windows)
        return text
    return text if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def relative_spec(spec: str) -> str:
    """A player spec with each absolute path in it (``PATH``, ``ppo-mcts:PATH:N``, ...: the parts
    between colons) made :func:`relative_path`; a spec naming no absolute path is returned as is."""
    return ":".join(relative_path(part) if part.startswith(os.sep) else part for part in spec.split(":"))
