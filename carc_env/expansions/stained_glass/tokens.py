"""Stained Glass tokens: the token data, the window shapes and window arithmetic.

Contract
--------
Pure functions over token counts; no game state.  Rules: ``docs/rules/stained_glass.md``.

* :func:`load_token_set` reads and validates ``carc_env/data/tokens/stained_glass.toml``
  (raises :class:`TokenDataError` naming the file and the fault).  A :class:`TokenSet`
  holds the basic windows in chain order, the token kinds (a kind's *index* is its
  position in that order: ``G1a`` = 0 .. ``G4c`` = 11), the copies of each kind and the
  legal window :class:`Shape` s: every run of neighbouring basic windows, ordered by size,
  then by first basic window (``W1 W2 W3 W4 W1+W2 W2+W3 W3+W4 W1+W2+W3 W2+W3+W4
  W1+W2+W3+W4``).
* A player's tokens are a count per kind (``counts[k]``, 0..copies).  A shape is complete
  when every kind of it is held at least once (:func:`complete_copies` counts how many
  disjoint copies of the shape could be built).  Scoring a shape takes one copy of each of
  its kinds, so two copies of a kind are never in one window.
* :func:`best_windows` finds the combination of complete shapes worth the most (each token
  in one window at most), exactly, by a memoised search over the copies of each basic
  window a player has finished.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.tiles import read_toml

TOKEN_FILE = Path(__file__).resolve().parents[2] / "data" / "tokens" / "stained_glass.toml"
_FILE_KEYS = {"set", "copies", "window", "description"}
_WINDOW_KEYS = {"id", "tokens"}


class TokenDataError(ValueError):
    """The token file is malformed; the message names the file and the fault."""


@dataclass(frozen=True)
class BasicWindow:
    id: str
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class Shape:
    """A legal window: a run of neighbouring basic windows."""

    name: str  # e.g. "W1+W2"
    windows: tuple[int, ...]  # basic window indices, in chain order
    kinds: tuple[int, ...]  # token kind indices
    tokens: tuple[str, ...]  # token kind ids

    @property
    def size(self) -> int:
        """Number of basic windows (1..4)."""
        return len(self.windows)


@dataclass(frozen=True)
class TokenSet:
    set: str
    copies: int
    windows: tuple[BasicWindow, ...]
    kinds: tuple[str, ...]
    window_of: tuple[int, ...]  # basic window index of each kind
    shapes: tuple[Shape, ...]
    source: str

    @property
    def total(self) -> int:
        """Tokens in the game (24)."""
        return self.copies * len(self.kinds)

    def kind_index(self, token: str) -> int:
        try:
            return self.kinds.index(token)
        except ValueError:
            raise KeyError(f"unknown glass token {token!r}; tokens are {' '.join(self.kinds)}") from None

    def shape_index(self, name: str) -> int:
        for i, s in enumerate(self.shapes):
            if s.name == name:
                return i
        raise KeyError(
            f"{name!r} is not a window; windows are runs of neighbouring basic windows: "
            f"{', '.join(s.name for s in self.shapes)}"
        )


def parse_token_set(data: dict[str, Any], where: str) -> TokenSet:
    """Validate already-parsed TOML data of a token file."""
    unknown = set(data) - _FILE_KEYS
    if unknown:
        raise TokenDataError(f"{where}: unknown attribute(s) {sorted(unknown)}; allowed: {sorted(_FILE_KEYS)}")
    name = data.get("set")
    if not isinstance(name, str) or not name:
        raise TokenDataError(f"{where}: missing string 'set'")
    copies = data.get("copies")
    if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
        raise TokenDataError(f"{where}: 'copies' must be a positive integer, got {copies!r}")
    raw = data.get("window")
    if not isinstance(raw, list) or not raw:
        raise TokenDataError(f"{where}: no [[window]] entries")
    windows: list[BasicWindow] = []
    kinds: list[str] = []
    window_of: list[int] = []
    for w in raw:
        if not isinstance(w, dict):
            raise TokenDataError(f"{where}: a [[window]] entry must be a table, got {w!r}")
        bad = set(w) - _WINDOW_KEYS
        if bad:
            raise TokenDataError(f"{where}: window {w.get('id')!r}: unknown attribute(s) {sorted(bad)}")
        wid = w.get("id")
        if not isinstance(wid, str) or not wid or "+" in wid:
            raise TokenDataError(f"{where}: a window needs a string 'id' without '+', got {wid!r}")
        if any(b.id == wid for b in windows):
            raise TokenDataError(f"{where}: window {wid}: duplicate id")
        toks = w.get("tokens")
        if not isinstance(toks, list) or not toks or not all(isinstance(t, str) and t and " " not in t for t in toks):
            raise TokenDataError(f"{where}: window {wid}: 'tokens' must be a non-empty list of token ids, got {toks!r}")
        for t in toks:
            if t in kinds:
                raise TokenDataError(f"{where}: window {wid}: token {t} belongs to two windows (or is listed twice)")
            kinds.append(t)
            window_of.append(len(windows))
        windows.append(BasicWindow(wid, tuple(toks)))
    shapes: list[Shape] = []
    n = len(windows)
    for size in range(1, n + 1):
        for first in range(n - size + 1):
            run = tuple(range(first, first + size))
            ks = tuple(k for k in range(len(kinds)) if window_of[k] in run)
            shapes.append(Shape("+".join(windows[i].id for i in run), run, ks, tuple(kinds[k] for k in ks)))
    return TokenSet(name, copies, tuple(windows), tuple(kinds), tuple(window_of), tuple(shapes), where)


@functools.cache
def load_token_set(path: str | None = None) -> TokenSet:
    """Load and validate a token file (default: the Stained Glass tokens)."""
    p = Path(path) if path is not None else TOKEN_FILE
    data = read_toml(p, "token file", TokenDataError)
    return parse_token_set(data, p.name)


# ------------------------------------------------------------------ window arithmetic
def complete_copies(counts: Sequence[int], shape: Shape) -> int:
    """How many disjoint copies of ``shape`` the tokens ``counts`` could build."""
    return min(counts[k] for k in shape.kinds)


def basic_copies(ts: TokenSet, counts: Sequence[int]) -> tuple[int, ...]:
    """Finished copies of each basic window (the fewest copies of any of its kinds)."""
    return tuple(min(counts[k] for k in range(len(ts.kinds)) if ts.window_of[k] == w) for w in range(len(ts.windows)))


def complete_shapes(ts: TokenSet, counts: Sequence[int]) -> list[int]:
    """Indices of the shapes complete with ``counts``."""
    return [i for i, s in enumerate(ts.shapes) if complete_copies(counts, s) > 0]


def best_windows(ts: TokenSet, counts: Sequence[int], points: Sequence[int], loose: int = 0) -> tuple[int, list[int]]:
    """The most a player holding ``counts`` can score: ``(points, shape indices)``.

    Each token counts in one window at most; ``points[k - 1]`` is a window of k basic
    windows; tokens in no chosen window are worth ``loose`` each.  Shapes are listed
    largest first, then in shape order.
    """
    value, chosen = _best(ts, basic_copies(ts, counts), tuple(points), loose, len(ts.shapes) - 1)
    return value + loose * sum(counts), sorted(chosen, key=lambda i: (-ts.shapes[i].size, i))


@functools.lru_cache(maxsize=4096)
def _best(
    ts: TokenSet, avail: tuple[int, ...], points: tuple[int, ...], loose: int, top: int
) -> tuple[int, tuple[int, ...]]:
    """Best value of shapes with index <= ``top`` fitting in ``avail`` (finished copies per basic
    window); each shape's value is its points less the loose value of its tokens.  Shapes are
    taken in non-increasing index order, so every multiset is tried once."""
    best: tuple[int, tuple[int, ...]] = (0, ())
    for i in range(top, -1, -1):
        s = ts.shapes[i]
        if any(avail[w] == 0 for w in s.windows):
            continue
        rest = tuple(a - 1 if w in s.windows else a for w, a in enumerate(avail))
        v, more = _best(ts, rest, points, loose, i)
        v += points[s.size - 1] - loose * len(s.kinds)
        if v > best[0]:
            best = (v, (i, *more))
    return best
