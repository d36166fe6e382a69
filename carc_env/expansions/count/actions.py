"""Fixed action layouts of the Count of Carcassonne's decision phases (the plug-in's codec part).

:data:`PHASE_CODECS` maps each phase to its codec; the action codec
(:mod:`carc_env.encoding.actions`) finds it through the plug-in registry.  The
ranges follow the tile and follower ranges in the order of ``rules.phases``
(``count_leave``, ``count_deploy``, ``count_move``, ``count_final``).  Rules
and action texts: ``docs/rules/count.md`` and :mod:`carc_env.expansions.count.rules`.

Layouts
-------
Quarters are indexed 0 castle, 1 market, 2 blacksmith, 3 cathedral (the
order of the ``count_in_*`` / ``quarter_*`` global features).  ``B`` is the
largest number of buildings on one tile of the rule set (1 for every built-in
tile), ``S = 4 + B + 8`` the number of *slots* of a cell.

``count_deploy`` (5 entries)
    ``q`` (0..3): ``count_deploy QUARTER``, a follower from the supply into
    quarter ``q``; 4: ``pass``.
``count_move`` (5 entries)
    ``q`` (0..3): ``count_move QUARTER``, the Count to quarter ``q`` (his own
    quarter is masked out); 4: ``pass``.
``count_leave`` (``4 + 9 * B + 1`` entries; 14 with the built-in tiles)
    Relative to the tile just placed (which completed the features; the
    observation marks it in ``last_placed``):

    * ``s`` (0..3): the city or road leaving side ``s`` (N, E, S, W) of the
      placed tile, in its placed rotation (the ``mine_{S}`` / ``others_{S}``
      planes of the observation use the same sides);
    * ``4 + (3 * (dy + 1) + (dx + 1)) * B + k``: the ``k``-th building on the
      tile at offset ``(dx, dy)`` (each -1..1; y south) from the placed tile,
      ``(0, 0)`` being the placed tile itself (a tile completes the buildings
      of its 3 x 3 neighbourhood);
    * last: ``pass``.

``count_final`` (``S * rows * cols + 1`` entries; 9,478 with the default
27 x 27 window)
    Over the observation window, like the tile range:
    ``index = slot * rows * cols + row * cols + col`` (a ``(S, rows, cols)``
    convolutional head flattens onto it); the cell is the absolute
    ``(x0 + col, y0 + row)`` of the current window.  Slots of the tile on that
    cell, in its placed rotation:

    * ``0..3``: the city or road leaving side N, E, S, W;
    * ``4 .. 4 + B - 1``: its buildings, in tile-data order;
    * ``4 + B + h``: the field touching half-edge ``h`` (NL, NR, EL, ER, SL,
      SR, WL, WR; ``docs/rules/notation.md``);
    * last entry of the range: ``pass``.

One index per move
------------------
A feature spans several tiles and sides, so several (cell, slot) pairs name
it.  The mask enables exactly one per legal move, the *canonical* one:

* ``count_leave``: the lowest side of the placed tile the city or road leaves
  through (a building has a single slot);
* ``count_final``: the feature's top-most tile inside the window (smallest
  row), then the left-most (smallest column), then the lowest slot on it.
  The rule depends only on the board, so a policy can learn it.

:meth:`PhaseCodec.decode` raises :class:`IllegalActionError` for a
non-canonical alias (naming the canonical index) and for a cell or slot
without a feature; :meth:`PhaseCodec.encode` accepts a ``count_send`` that
names any tile and segment of the feature, as the core does.  A legal move
whose feature has no tile inside the window (``count_final``) or no slot
(``count_leave``; only possible with an expansion completing features away
from the placed tile) cannot be chosen this step and is counted in
``StateView.dropped`` (the env reports ``info["actions_out_of_range"]``);
``pass`` is always legal in these phases, so the mask is never empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.actions import Action, IllegalActionError, Pass
from ...core.tiles import BUILDING, CITY, FIELD, ROAD, SIDES
from ...encoding.actions import PhaseCodec, StateView
from .rules import QUARTERS, CountDeploy, CountMove, CountSend

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

PASS_QUARTER = len(QUARTERS)
_OFFSETS = tuple((dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1))  # 3 * (dy + 1) + (dx + 1)
_NO_SLOT = np.iinfo(np.int32).max


def max_buildings(rules: RuleSet) -> int:
    """The largest number of buildings on one tile (at least 1, so the layout never shrinks to nothing)."""
    return max([1, *(sum(1 for s in t.segments if s.kind == BUILDING) for t in rules.tiles)])


class QuarterPhaseCodec(PhaseCodec):
    """5 entries: the four quarters (castle, market, blacksmith, cathedral), then ``pass``."""

    action_type: type = Action

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.size = PASS_QUARTER + 1

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        cls = self.action_type
        for a in game.legal_actions():
            if type(a) is cls:
                out[a.quarter] = 1
            elif type(a) is Pass:
                out[PASS_QUARTER] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        return Pass() if local == PASS_QUARTER else self.action_type(local)

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return PASS_QUARTER
        if type(action) is self.action_type and isinstance(action.quarter, int) and 0 <= action.quarter < 4:
            return action.quarter
        raise IllegalActionError(f"the {self.phase} phase needs {self.phase} QUARTER or pass, got {action.to_text()!r}")


class CountDeployCodec(QuarterPhaseCodec):
    phase = "count_deploy"
    action_type = CountDeploy


class CountMoveCodec(QuarterPhaseCodec):
    phase = "count_move"
    action_type = CountMove


class _SendCodec(PhaseCodec):
    """Shared by the two ``count_send`` phases: targets of the legal moves, resolved once per state."""

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.B = max_buildings(rules)
        self.tiles = rules.tiles
        # per tile type: its building segments, in tile-data order
        self.buildings = [[i for i, s in enumerate(t.segments) if s.kind == BUILDING] for t in rules.tiles]

    def _targets(self, game: Game, view: StateView) -> tuple[dict[int, int], int]:
        """(root -> canonical local index, legal moves without an index) for the current state."""
        cached = view.extra.get(self.phase)
        if cached is None:
            roots = []
            for a in game.legal_actions():
                if type(a) is CountSend:
                    roots.append(self._root_of(game, a))
            index = self._canonical(game, view, roots)
            cached = view.extra[self.phase] = (index, sum(1 for r in roots if r not in index))
        return cached

    def _root_of(self, game: Game, a: CountSend) -> int:
        k = game.board.get((a.x, a.y))
        if k is None:
            raise IllegalActionError(f"{a.to_text()!r}: no tile at ({a.x},{a.y})")
        _, _, t, _, base = game.placements[k]
        try:
            seg = self.tiles[t].segment_index(a.segment)
        except KeyError as exc:
            raise IllegalActionError(f"{a.to_text()!r}: {exc.args[0]}") from None
        return game.find(base + seg)

    def _canonical(self, game: Game, view: StateView, roots: list[int]) -> dict[int, int]:
        raise NotImplementedError

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        index, dropped = self._targets(game, view)
        for local in index.values():
            out[local] = 1
        out[self.size - 1] = 1  # pass is always legal here
        view.dropped += dropped

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return self.size - 1
        if type(action) is not CountSend:
            raise IllegalActionError(f"the {self.phase} phase needs count_send X,Y SEGMENT or pass, got {action!r}")
        root = self._root_of(game, action)
        index, _ = self._targets(game, view)
        local = index.get(root)
        if local is None:
            local = self._canonical(game, view, [root]).get(root)
        if local is None:
            raise IllegalActionError(
                f"{action.to_text()!r}: the {self.phase} range has no index for that feature "
                f"(outside the observation window, or not reachable from the placed tile)"
            )
        return local

    def _checked(self, game: Game, view: StateView, local: int, action: CountSend) -> CountSend:
        """``action`` if ``local`` is its feature's canonical index; else IllegalActionError."""
        root = self._root_of(game, action)
        canon = self._canonical(game, view, [root]).get(root)
        if canon is not None and canon != local:
            raise IllegalActionError(
                f"{self.phase} index {local} names the same feature as index {canon} ({action.to_text()!r}); "
                f"only the canonical index {canon} is used (see carc_env.expansions.count.actions)"
            )
        return action


class CountLeaveCodec(_SendCodec):
    """``count_leave``: sides and the 3 x 3 buildings of the placed tile, then ``pass``."""

    phase = "count_leave"

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        super().__init__(rules, rows, cols)
        self.size = 4 + 9 * self.B + 1

    def _canonical(self, game: Game, view: StateView, roots: list[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        if not game.placements or not roots:
            return out
        x, y, t, r, base = game.placements[-1]
        find, kind = game.find, game.kind
        centre = self.tiles[t].center[r]
        side_root = {}
        for s in range(4):
            c = centre[s]
            if c >= 0 and kind[base + c] in (CITY, ROAD):
                side_root.setdefault(find(base + c), s)  # the lowest side first
        B = self.B
        for root in roots:
            if root in side_root:
                out[root] = side_root[root]
            elif kind[root] == BUILDING:
                bx, by, bt, _, bbase = game.placements[game.node_tile[root]]
                dx, dy = bx - x, by - y
                if abs(dx) <= 1 and abs(dy) <= 1:
                    k = self.buildings[bt].index(root - bbase)
                    if k < B:
                        out[root] = 4 + (3 * (dy + 1) + (dx + 1)) * B + k
        return out

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        if local == self.size - 1:
            return Pass()
        if not game.placements:
            raise IllegalActionError("count_leave: no tile has been placed")
        x, y, t, r, _ = game.placements[-1]
        if local < 4:
            c = self.tiles[t].center[r][local]
            if c < 0 or self.tiles[t].segments[c].kind not in (CITY, ROAD):
                raise IllegalActionError(
                    f"count_leave index {local}: no city or road leaves side {SIDES[local]} of the placed tile"
                )
            return self._checked(game, view, local, CountSend(x, y, self.tiles[t].segments[c].name))
        cell, k = divmod(local - 4, self.B)
        dx, dy = _OFFSETS[cell]
        kk = game.board.get((x + dx, y + dy))
        if kk is None:
            raise IllegalActionError(f"count_leave index {local}: no tile at ({x + dx},{y + dy})")
        bt = game.placements[kk][2]
        if k >= len(self.buildings[bt]):
            raise IllegalActionError(f"count_leave index {local}: no building {k} on the tile at ({x + dx},{y + dy})")
        return CountSend(x + dx, y + dy, self.tiles[bt].segments[self.buildings[bt][k]].name)


class CountFinalCodec(_SendCodec):
    """``count_final``: ``slot * rows * cols + row * cols + col`` over the window, then ``pass``."""

    phase = "count_final"

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        super().__init__(rules, rows, cols)
        B = self.B
        self.n_slots = 4 + B + 8
        self.size = self.n_slots * rows * cols + 1
        nt, ns = len(rules.tiles), max(1, rules.max_segments)
        # slot -> segment (-1: none) and segment -> its lowest slot, per tile type and rotation
        self.seg_at = np.full((nt, 4, self.n_slots), -1, dtype=np.int32)
        self.min_slot = np.full((nt, 4, ns), _NO_SLOT, dtype=np.int32)
        for ti, tile in enumerate(rules.tiles):
            segs = tile.segments
            for r in range(4):
                slots: list[tuple[int, int]] = []
                for s in range(4):
                    c = tile.center[r][s]
                    if c >= 0 and segs[c].kind in (CITY, ROAD):
                        slots.append((s, c))
                for k, i in enumerate(self.buildings[ti][:B]):
                    slots.append((4 + k, i))
                for h in range(8):
                    f = tile.half[r][h]
                    if f >= 0 and segs[f].kind == FIELD:
                        slots.append((4 + B + h, f))
                for slot, i in slots:
                    self.seg_at[ti, r, slot] = i
                    self.min_slot[ti, r, i] = min(self.min_slot[ti, r, i], slot)

    def _canonical(self, game: Game, view: StateView, roots: list[int]) -> dict[int, int]:
        if not roots:
            return {}
        rows, cols = self.rows, self.cols
        pl = np.array([p[:5] for p in game.placements], dtype=np.int64)  # x, y, tile, rotation, base
        node_tile = np.fromiter(game.node_tile, dtype=np.intp, count=len(game.node_tile))
        want = np.fromiter(roots, dtype=np.intp, count=len(roots))
        root = game.root_array()
        nodes = np.flatnonzero(np.isin(root[: len(node_tile)], want))  # nodes on a tile
        k = node_tile[nodes]
        x, y, t, r, base = pl[k].T
        slot = self.min_slot[t, r, nodes - base]
        col, row = x - view.x0, y - view.y0
        ok = (slot != _NO_SLOT) & (col >= 0) & (col < cols) & (row >= 0) & (row < rows)
        if not ok.any():
            return {}
        nodes, slot, cell = nodes[ok], slot[ok], (row * cols + col)[ok]
        key = cell * self.n_slots + slot  # top-most, then left-most cell, then lowest slot
        best: dict[int, int] = {}
        for rt, kv in zip(root[nodes].tolist(), key.tolist(), strict=True):
            if rt not in best or kv < best[rt]:
                best[rt] = kv
        rc = rows * cols
        return {rt: (kv % self.n_slots) * rc + kv // self.n_slots for rt, kv in best.items()}

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        if local == self.size - 1:
            return Pass()
        rc = self.rows * self.cols
        slot, cell = divmod(local, rc)
        row, col = divmod(cell, self.cols)
        x, y = view.x0 + col, view.y0 + row
        k = game.board.get((x, y))
        if k is None:
            raise IllegalActionError(f"count_final index {local}: no tile at ({x},{y})")
        _, _, t, r, _ = game.placements[k]
        seg = int(self.seg_at[t, r, slot])
        if seg < 0:
            raise IllegalActionError(f"count_final index {local}: the tile at ({x},{y}) has no feature at slot {slot}")
        return self._checked(game, view, local, CountSend(x, y, self.tiles[t].segments[seg].name))


PHASE_CODECS = {
    "count_leave": CountLeaveCodec,
    "count_deploy": CountDeployCodec,
    "count_move": CountMoveCodec,
    "count_final": CountFinalCodec,
}
"""The codec factory ``factory(rules, rows, cols) -> PhaseCodec`` of each of the Count's phases."""

__all__ = [
    "PHASE_CODECS",
    "CountDeployCodec",
    "CountFinalCodec",
    "CountLeaveCodec",
    "CountMoveCodec",
    "QuarterPhaseCodec",
    "max_buildings",
]
