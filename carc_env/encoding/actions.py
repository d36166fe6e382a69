"""The flat ``Discrete(N)`` action codec.

Contract
--------
Every decision of every phase is one integer in ``range(codec.n)``.  Each
decision phase owns one contiguous range, in this order:

1. ``"tile"``: ``4 * rows * cols`` entries over the observation window;
   ``index = rotation * (rows * cols) + row * cols + col``, so a fully
   convolutional policy head of shape ``(4, rows, cols)`` flattens onto it.
   Row ``row`` and column ``col`` are the absolute cell
   ``(x, y) = (x0 + col, y0 + row)`` where ``(x0, y0)`` is the window origin
   of the current state (:meth:`ActionCodec.view`).
2. ``"follower"``: ``rules.max_segments + 1`` entries; entry ``i`` puts a
   follower on segment ``i`` of the tile just placed (local index in the tile
   data), the last entry is ``pass``.
3. then one range per extra phase an expansion declares, in the order of
   ``rules.phases``.  A phase's codec comes from the ``PHASE_CODECS`` of the
   ``actions`` part of the plug-in that owns the phase (``rules.phase_owner``),
   found through the plug-in registry (:func:`carc_env.core.registry.part`); the
   codec never checks expansion names.  A phase without one gets the generic
   :class:`EnumeratedPhaseCodec`, with a warning.

The mask (``int8``, length ``n``, read-only) enables exactly the legal actions
of the deciding player in the current phase; it is never all zero while the
game is running.  :meth:`ActionCodec.action_to_text` / :meth:`ActionCodec.action_from_text`
convert to and from the core's text notation with absolute coordinates
(``tile 1,-2 r3``, ``follower c1``, ``pass``).

The window
----------
The window (``rows x cols`` cells) is centred on the played area: the bounding
box of the placed tiles grown by one cell on every side (the frontier), so
every frontier cell is inside as long as the board is at most ``cols - 2``
tiles wide and ``rows - 2`` tall.  If a legal placement of the drawn tile
still falls outside, the window is re-centred on the legal placements; what
remains outside is counted in ``StateView.outside`` (the environments report
it as ``info["placements_outside_window"]``), never dropped silently.  The
window is a pure function of the state, so the observation and the decoding of
an action always agree.

On a printed board (a rule set with a ``layout``, e.g. Maps - Germany) the
window does not move: by default it is the board's extent (every square and
every cell of a feature printed abroad: :func:`default_window`), at a fixed
origin, so each square keeps its row and column for the whole game and no
placement is ever outside.  A larger window centres the board in it; a smaller
one is refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.actions import Action, IllegalActionError, Pass, PlaceFollower, PlaceTile, as_index
from ..core.registry import part

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.game import Game

DEFAULT_WINDOW = (27, 27)
"""Default window (rows, cols), sized with ``scripts/measure_window.py``: over 10,000 random
2-player base games the final board was at most 21 x 21 tiles and the legal placements of a
drawn tile spanned at most 23 cells (p99.9: 22); over 1,000 greedy-vs-greedy games at most
19 x 19 and 21.  27 x 27 leaves two spare cells on each side beyond the largest span seen."""

GAME_OVER = "game_over"


class PhaseCodec:
    """The action range of one decision phase.

    Subclass it for an expansion's phase and list its factory
    ``factory(rules, rows, cols) -> PhaseCodec`` in ``PHASE_CODECS`` (phase name ->
    factory) of the plug-in's ``actions`` module.  ``start`` is set by :class:`ActionCodec`.
    """

    phase: str = ""
    size: int = 0
    start: int = 0

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        """Set ``out[i] = 1`` (``out`` is this phase's slice, zero on entry) for every legal local index."""
        raise NotImplementedError

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        """The core action of local index ``local`` (legality is checked by the core)."""
        raise NotImplementedError

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        """Local index of ``action``; raise IllegalActionError if this range cannot express it."""
        raise NotImplementedError


PhaseCodecFactory = Callable[["RuleSet", int, int], PhaseCodec]


def phase_codec_factory(rules: RuleSet, phase: str) -> PhaseCodecFactory | None:
    """The codec factory of a decision phase: the core's for ``tile`` and ``follower``, else the
    ``PHASE_CODECS`` entry of the ``actions`` part of the plug-in that owns the phase (None: none)."""
    core = CORE_PHASE_CODECS.get(phase)
    if core is not None:
        return core
    owner = getattr(rules, "phase_owner", {}).get(phase)
    module = part(owner, "actions") if owner is not None else None
    return getattr(module, "PHASE_CODECS", {}).get(phase) if module is not None else None


class TilePhaseCodec(PhaseCodec):
    """``4 * rows * cols`` placements over the window; ``rot * rows * cols + row * cols + col``."""

    phase = "tile"

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.size = 4 * rows * cols

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        out[view.tile_index] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        rc = self.rows * self.cols
        rot, rem = divmod(local, rc)
        row, col = divmod(rem, self.cols)
        return PlaceTile(view.x0 + col, view.y0 + row, rot)

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is not PlaceTile:
            raise IllegalActionError(f"the tile phase needs a tile placement, got {action.to_text()!r}")
        col, row = action.x - view.x0, action.y - view.y0
        if not (0 <= col < self.cols and 0 <= row < self.rows) or not 0 <= action.rotation <= 3:
            raise IllegalActionError(
                f"{action.to_text()!r} lies outside the observation window "
                f"x {view.x0}..{view.x0 + self.cols - 1}, y {view.y0}..{view.y0 + self.rows - 1}"
            )
        return action.rotation * self.rows * self.cols + row * self.cols + col


class FollowerPhaseCodec(PhaseCodec):
    """``max_segments + 1`` entries: segment ``i`` of the placed tile, then ``pass``."""

    phase = "follower"

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.max_segments = rules.max_segments
        self.size = rules.max_segments + 1

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        spots = game.legal_follower_spots()
        if spots:
            out[spots] = 1
        out[self.max_segments] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        return Pass() if local == self.max_segments else PlaceFollower(local)

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return self.max_segments
        if type(action) is PlaceFollower and 0 <= action.segment < self.max_segments:
            return action.segment
        raise IllegalActionError(f"the follower phase needs a follower placement or pass, got {action.to_text()!r}")


class EnumeratedPhaseCodec(PhaseCodec):
    """Generic range for a phase without a codec of its own: ``size - 1`` slots for the phase's
    legal actions ranked by their text, then ``pass``.

    Index ``i`` means "the i-th legal action (text order) in this state", which is valid
    but carries little meaning across states: an expansion should register a codec with a
    fixed layout (like the tile and follower ranges) for learning.  Legal actions beyond
    ``size - 1`` cannot be chosen and are counted in ``StateView.dropped``.
    """

    def __init__(self, rules: RuleSet, rows: int, cols: int, phase: str = "", size: int = 128) -> None:
        self.phase = phase
        self.size = size

    def _ranked(self, game: Game, view: StateView) -> tuple[list[Action], bool]:
        cached = view.extra.get(self.phase)
        if cached is None:
            acts = game.legal_actions()
            can_pass = any(type(a) is Pass for a in acts)
            ranked = sorted((a for a in acts if type(a) is not Pass), key=game.action_text)
            cached = view.extra[self.phase] = (ranked, can_pass)
        return cached

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        ranked, can_pass = self._ranked(game, view)
        k = min(len(ranked), self.size - 1)
        out[:k] = 1
        view.dropped += len(ranked) - k
        if can_pass:
            out[self.size - 1] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        if local == self.size - 1:
            return Pass()
        ranked, _ = self._ranked(game, view)
        if local >= len(ranked):
            raise IllegalActionError(f"the {self.phase} phase has only {len(ranked)} legal action(s), got slot {local}")
        return ranked[local]

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return self.size - 1
        ranked, _ = self._ranked(game, view)
        text = game.action_text(action)
        for i, a in enumerate(ranked[: self.size - 1]):
            if game.action_text(a) == text:
                return i
        raise IllegalActionError(f"{text!r} is not a legal {self.phase} action here")


CORE_PHASE_CODECS: dict[str, PhaseCodecFactory] = {"tile": TilePhaseCodec, "follower": FollowerPhaseCodec}
"""The codecs of the core's decision phases."""


class StateView:
    """What the codec derives from one state: window origin, legal placements in it, the mask.

    Built once per state by :meth:`ActionCodec.view` and shared with the
    observation encoder.  ``tile_index`` are the tile-range indices
    (``rotation * rows * cols + row * cols + col``) of the legal placements
    inside the window; ``outside`` counts legal placements outside it;
    ``frontier_cell`` are the ``row * cols + col`` of the frontier cells inside
    the window; ``inside`` is True when the whole played area and its
    frontier lie in the window (the usual case); ``dropped`` counts other
    legal actions a phase codec cannot express (see
    :class:`EnumeratedPhaseCodec`); ``extra`` holds phase codecs' per-state data.
    """

    __slots__ = (
        "game",
        "n_history",
        "phase",
        "player",
        "x0",
        "y0",
        "inside",
        "frontier_cell",
        "tile_index",
        "outside",
        "dropped",
        "extra",
        "mask",
    )

    game: Game
    n_history: int
    phase: str
    player: int
    x0: int
    y0: int
    inside: bool
    frontier_cell: np.ndarray
    tile_index: np.ndarray
    outside: int
    dropped: int
    extra: dict
    mask: np.ndarray

    def legal_placements(self, rows: int, cols: int) -> np.ndarray:
        """The in-window legal placements as rows (x, y, rotation)."""
        rot, rem = np.divmod(self.tile_index, rows * cols)
        row, col = np.divmod(rem, cols)
        return np.stack([col + self.x0, row + self.y0, rot], axis=1)


@dataclass(frozen=True)
class PhaseRange:
    phase: str
    start: int
    size: int

    @property
    def stop(self) -> int:
        return self.start + self.size


_EMPTY = np.zeros(0, dtype=np.int64)
# _ROT_BITS[m, r]: rotation r is set in the 4-bit rotation mask m
_ROT_BITS = ((np.arange(16)[:, None] >> np.arange(4)[None, :]) & 1).astype(bool)


def default_window(rules: RuleSet) -> tuple[int, int]:
    """The window a rule set's environments use unless told otherwise: :data:`DEFAULT_WINDOW`, or
    on a printed board its extent ``(height, width)`` (Germany: 19 x 15)."""
    layout = getattr(rules, "layout", None)
    if layout is None:
        return DEFAULT_WINDOW
    return (layout.height, layout.width)


def window_origin(bounds: list[int], rows: int, cols: int) -> tuple[int, int]:
    """Origin (x0, y0) of the window centred on the bounding box grown by one cell."""
    minx, maxx, miny, maxy = bounds
    x0 = minx - 1 - (cols - (maxx - minx + 3)) // 2
    y0 = miny - 1 - (rows - (maxy - miny + 3)) // 2
    return x0, y0


class ActionCodec:
    """Flat action space of one rule set and window size.  See the module docstring."""

    def __init__(self, rules: RuleSet, window: tuple[int, int] | None = None, strict: bool = False) -> None:
        rows, cols = default_window(rules) if window is None else window
        self.rules = rules
        self.rows, self.cols = int(rows), int(cols)
        self.origin: tuple[int, int] | None = None
        """The fixed window origin on a printed board (the board centred in the window), else None."""
        layout = getattr(rules, "layout", None)
        if layout is not None:
            if self.rows < layout.height or self.cols < layout.width:
                raise ValueError(
                    f"window {self.rows} x {self.cols} is smaller than the printed board "
                    f"{layout.name!r} ({layout.height} x {layout.width}); leave the window out to fit it"
                )
            x0, _, y0, _ = layout.bounds
            self.origin = (x0 - (self.cols - layout.width) // 2, y0 - (self.rows - layout.height) // 2)
        phases = list(rules.phases)
        for need in ("tile", "follower"):
            if need not in phases:  # pragma: no cover - the core always has both
                raise ValueError(f"rule set has no {need!r} phase: {phases}")
        order = ["tile", "follower"] + [p for p in phases if p not in ("tile", "follower")]
        self.codecs: dict[str, PhaseCodec] = {}
        self.ranges: dict[str, PhaseRange] = {}
        start = 0
        for phase in order:
            factory = phase_codec_factory(rules, phase)
            if factory is not None:
                codec = factory(rules, self.rows, self.cols)
            elif strict:
                raise ValueError(
                    f"decision phase {phase!r} has no action codec; give its plug-in an actions module "
                    f"with PHASE_CODECS = {{{phase!r}: factory}} (see carc_env.expansions)"
                )
            else:
                warnings.warn(
                    f"decision phase {phase!r} has no registered action codec; using the generic "
                    f"EnumeratedPhaseCodec (index = rank of the action's text among the legal actions). "
                    f"Give its plug-in an actions module with PHASE_CODECS = {{{phase!r}: factory}} "
                    "for a fixed layout (see carc_env.expansions)",
                    stacklevel=2,
                )
                codec = EnumeratedPhaseCodec(rules, self.rows, self.cols, phase)
            codec.start = start
            self.codecs[phase] = codec
            self.ranges[phase] = PhaseRange(phase, start, codec.size)
            start += codec.size
        self.n = start
        self.tile_range = self.ranges["tile"]
        self.follower_range = self.ranges["follower"]
        self._view: StateView | None = None

    # ------------------------------------------------------------------ state view
    def view(self, game: Game) -> StateView:
        """The (cached) window, legal placements and mask of ``game``'s current state."""
        v = self._view
        if v is not None and v.game is game and v.n_history == len(game.history):
            return v
        v = StateView()
        v.game = game
        v.n_history = len(game.history)
        v.phase = game.phase
        v.player = game.player
        rows, cols = self.rows, self.cols
        b = game.bounds
        if self.origin is None:
            x0, y0 = window_origin(b, rows, cols)
            inside = b[1] - b[0] + 3 <= cols and b[3] - b[2] + 3 <= rows
        else:  # a printed board: every cell a tile can take is in the fixed window
            (x0, y0), inside = self.origin, True
        fx, fy, fmask = game.frontier()
        v.outside = 0
        rc = rows * cols
        if inside:
            fcell = (fy - y0) * cols + (fx - x0)
            v.frontier_cell = fcell
            if game.phase == "tile":
                ci, ri = np.nonzero(_ROT_BITS[fmask])
                v.tile_index = ri * rc + fcell[ci]
            else:
                v.tile_index = _EMPTY
        else:
            if game.phase == "tile":
                ci, ri = np.nonzero(_ROT_BITS[fmask])
                lx, ly = fx[ci], fy[ci]
                ok = (lx >= x0) & (lx < x0 + cols) & (ly >= y0) & (ly < y0 + rows)
                if not ok.all():
                    x0, y0, ok = self._recentre(lx, ly, x0, y0, ok)
                v.outside = int(len(ok) - np.count_nonzero(ok))
                ci, ri = ci[ok], ri[ok]
                v.tile_index = ri * rc + (fy[ci] - y0) * cols + (fx[ci] - x0)
            else:
                v.tile_index = _EMPTY
            ok = (fx >= x0) & (fx < x0 + cols) & (fy >= y0) & (fy < y0 + rows)
            v.frontier_cell = (fy[ok] - y0) * cols + (fx[ok] - x0)
        v.inside = inside
        v.x0, v.y0 = int(x0), int(y0)
        v.dropped = 0
        v.extra = {}
        mask = np.zeros(self.n, dtype=np.int8)
        if not game.over:
            pc = self.codecs.get(game.phase)
            if pc is None:
                raise ValueError(f"phase {game.phase!r} has no action codec")
            pc.fill_mask(game, v, mask[pc.start : pc.start + pc.size])
        mask.flags.writeable = False  # handed out as obs["action_mask"]; the env validates against it
        v.mask = mask
        self._view = v
        return v

    def _recentre(
        self, lx: np.ndarray, ly: np.ndarray, x0: int, y0: int, inside: np.ndarray
    ) -> tuple[int, int, np.ndarray]:
        rows, cols = self.rows, self.cols
        best = (x0, y0, inside)
        bx = int(lx.min()) - (cols - (int(lx.max()) - int(lx.min()) + 1)) // 2
        by = int(ly.min()) - (rows - (int(ly.max()) - int(ly.min()) + 1)) // 2
        cand = [(bx, by), (int(lx[0]) - cols // 2, int(ly[0]) - rows // 2)]
        for cx, cy in cand:
            ins = (lx >= cx) & (lx < cx + cols) & (ly >= cy) & (ly < cy + rows)
            if np.count_nonzero(ins) > np.count_nonzero(best[2]):
                best = (cx, cy, ins)
        return best

    def window(self, game: Game) -> tuple[int, int]:
        """Absolute (x0, y0) of the window's row 0, column 0 in the current state."""
        v = self.view(game)
        return v.x0, v.y0

    def mask(self, game: Game) -> np.ndarray:
        """The int8 legal-action mask of the deciding player (shared and read-only)."""
        return self.view(game).mask

    # ------------------------------------------------------------------ conversion
    def phase_of(self, index: int) -> str:
        """Name of the phase whose range holds ``index``."""
        for r in self.ranges.values():
            if r.start <= index < r.stop:
                return r.phase
        raise IllegalActionError(f"action {index!r} is outside 0..{self.n - 1}")

    def decode(self, game: Game, index: int) -> Action:
        """The core action of flat ``index`` in the current state.

        Raises IllegalActionError if ``index`` is out of range or belongs to
        another phase's range; legality within the phase is the core's to check.
        """
        index = as_index(index, "an action")
        if not 0 <= index < self.n:
            raise IllegalActionError(f"action {index} is outside 0..{self.n - 1}")
        phase = game.phase
        pc = self.codecs.get(phase)
        if pc is None:
            raise IllegalActionError(f"no action is expected in phase {phase!r}")
        local = index - pc.start
        if not 0 <= local < pc.size:
            raise IllegalActionError(
                f"action {index} belongs to the {self.phase_of(index)!r} range, but the phase is {phase!r} "
                f"(its range is {pc.start}..{pc.start + pc.size - 1})"
            )
        return pc.decode(game, self.view(game), local)

    def encode(self, game: Game, action: Action) -> int:
        """Flat index of a core action in the current state (the current phase's range)."""
        pc = self.codecs.get(game.phase)
        if pc is None:
            raise IllegalActionError(f"no action is expected in phase {game.phase!r}")
        return pc.start + pc.encode(game, self.view(game), action)

    def action_to_text(self, game: Game, index: int) -> str:
        """Text notation (absolute coordinates) of flat action ``index`` in the current state."""
        return game.action_text(self.decode(game, index))

    def action_from_text(self, game: Game, text: str) -> int:
        """Flat index of an action given in text notation, in the current state."""
        return self.encode(game, game.parse_action(text))


__all__ = [
    "ActionCodec",
    "DEFAULT_WINDOW",
    "default_window",
    "EnumeratedPhaseCodec",
    "FollowerPhaseCodec",
    "PhaseCodec",
    "PhaseRange",
    "StateView",
    "TilePhaseCodec",
    "CORE_PHASE_CODECS",
    "phase_codec_factory",
    "window_origin",
]
