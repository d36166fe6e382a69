"""The board: placed tiles, the frontier, buildings' neighbours, and the one placement procedure.

Owns (see :data:`carc_env.core.state.STATE`): ``board``, ``placements``,
``bounds``, the frontier (``_fx``, ``_fy``, ``_fpat``, ``_nf``, ``_fslot``),
``buildings``, ``building_neighbours``, ``_pending_buildings``,
``connected_groups``.

:meth:`Board.put_tile` is the only way a tile joins the board, on the
unbounded table and on a printed board alike (:mod:`carc_env.core.layout`
describes the printed board's squares, void cells and printed pieces): it
makes the tile's nodes (:meth:`~carc_env.core.features.Features.add_nodes`),
unites its segments with the neighbours' matching ones, closes what runs into
a border or a neutral printed edge, updates the frontier and counts the
neighbours of buildings.  Rules checks (is the placement legal, what happens
after it) are the turn's (:mod:`carc_env.core.turn`).

The frontier is every empty cell next to the board that may take a tile,
with, per cell, the edge codes its neighbours require (``PATTERN_BITS`` per
side, 0 = no requirement).  The drawn tile's legal rotations in every
frontier cell are one table look-up (``RuleSet.compat``) over these patterns:
:meth:`Board.placement_masks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .config import PATTERN_BITS
from .layout import ANY_EDGE, NEUTRAL, LayoutError
from .tiles import DX, DY, NEIGHBOURS8, RIVER

if TYPE_CHECKING:  # pragma: no cover
    from .config import RuleSet, TileInfo
    from .layout import BoardLayout

_SHIFT = tuple(PATTERN_BITS * s for s in range(4))
_ROT4 = np.arange(4, dtype=np.uint8)
_NO_GROUPS: dict[tuple[int, int], int] = {}  # the unbounded table has no printed groups (never written)


class Board:
    """The board half of :class:`~carc_env.core.Game` (a mixin: the fields live on the game)."""

    rules: RuleSet
    layout: BoardLayout | None
    open: list[int]
    completed: set[int]

    # the features' methods the placement calls (carc_env.core.features)
    if TYPE_CHECKING:  # declarations only: the Game composes the real methods

        def add_nodes(self, info: TileInfo, k: int) -> int: ...
        def union(self, a: int, b: int) -> int: ...
        def find(self, x: int) -> int: ...
        def mark_closed(self, k: int) -> None: ...

    def reset_board(self) -> None:
        """An empty board and frontier."""
        self.board: dict[tuple[int, int], int] = {}
        self.placements: list[tuple[int, int, int, int, int]] = []  # x, y, tile, rotation, node base
        self.bounds = [0, 0, 0, 0]  # min x, max x, min y, max y
        cap = 64
        self._fx = np.zeros(cap, dtype=np.int32)
        self._fy = np.zeros(cap, dtype=np.int32)
        self._fpat = np.zeros(cap, dtype=np.int32)
        self._nf = 0
        self._fslot: dict[tuple[int, int], int] = {}
        self.buildings: dict[tuple[int, int], list[int]] = {}
        self.building_neighbours: dict[int, int] = {}
        self._pending_buildings: list[int] = []
        self.connected_groups: set[int] = set()

    # ------------------------------------------------------------------ placing
    def put_tile(self, t: int, x: int, y: int, r: int, printed: bool = False) -> int:
        """Lay tile type ``t`` at ``(x, y)`` in rotation ``r`` (already checked legal); returns its node base.

        ``printed``: a printed piece of the board laid at setup (it makes no cell playable and
        connects nothing)."""
        info = self.rules.tile_infos[t]
        k = len(self.placements)
        base = self.add_nodes(info, k)
        self.placements.append((x, y, t, r, base))
        self.board[(x, y)] = k
        b = self.bounds
        if k == 0 and self.layout is not None:  # a printed board's bounds start at its first piece
            b[:] = [x, x, y, y]
        elif x < b[0]:
            b[0] = x
        elif x > b[1]:
            b[1] = x
        if y < b[2]:
            b[2] = y
        elif y > b[3]:
            b[3] = y
        connect = self._join_neighbours(t, x, y, r, base, printed)
        self._frontier_remove(x, y)
        self._count_building_neighbours(x, y, base, info)
        for g in connect:
            self._connect_group(g)
        return base

    def _join_neighbours(self, t: int, x: int, y: int, r: int, base: int, printed: bool) -> list[int]:
        """Unite the new tile's segments with its neighbours', close what runs into a border or a
        neutral edge, require its edges of the empty cells around; returns printed groups to connect."""
        rules = self.rules
        tile = rules.tiles[t]
        kinds = rules.tile_infos[t].kinds
        center, half, codes = tile.center[r], tile.half[r], tile.edge_codes[r]
        board, placements, rtiles = self.board, self.placements, rules.tiles
        layout = self.layout
        playable = None if layout is None else layout.playable
        group_of = _NO_GROUPS if layout is None or printed else layout.group_of
        union, open_ = self.union, self.open
        connect: list[int] = []
        for s in range(4):
            nx, ny = x + DX[s], y + DY[s]
            nk = board.get((nx, ny))
            c = center[s]
            if nk is None:
                if playable is None or (nx, ny) in playable:
                    if not printed:
                        self._frontier_require(nx, ny, (s + 2) & 3, codes[s])
                elif c >= 0 and kinds[c] != RIVER and (nx, ny) not in layout.piece_at:  # type: ignore[union-attr]
                    open_[self.find(base + c)] -= 1  # a border edge (sea, clouds) closes what runs into it
                continue  # (a printed piece laid later on that cell joins this side then)
            o = (s + 2) & 3
            _, _, nt, nr, nbase = placements[nk]
            ntile = rtiles[nt]
            if c >= 0 and kinds[c] != RIVER:
                nc = ntile.center[nr][o]
                if nc >= 0:
                    open_[union(base + c, nbase + nc)] -= 2
                else:
                    open_[self.find(base + c)] -= 1  # a neutral printed edge closes it
            hl = half[2 * s]
            if hl >= 0:
                nh = ntile.half[nr][2 * o + 1]
                if nh >= 0:
                    union(base + hl, nbase + nh)
            hr = half[2 * s + 1]
            if hr >= 0:
                nh = ntile.half[nr][2 * o]
                if nh >= 0:
                    union(base + hr, nbase + nh)
            if group_of:
                g = group_of.get((nx, ny))
                if g is not None and g not in self.connected_groups and g not in connect:
                    connect.append(g)
        return connect

    # ------------------------------------------------------------------ the frontier
    def _frontier_require(self, x: int, y: int, side: int, code: int) -> None:
        """Cell (x, y) must show ``code`` on ``side``; a new frontier cell starts with what a printed
        board requires of it."""
        slot = self._fslot.get((x, y))
        if slot is not None:
            self._fpat[slot] |= code << _SHIFT[side]
            return
        slot = self._nf
        if slot == len(self._fx):
            cap = 2 * slot
            self._fx = np.resize(self._fx, cap)
            self._fy = np.resize(self._fy, cap)
            self._fpat = np.resize(self._fpat, cap)
        self._fx[slot] = x
        self._fy[slot] = y
        pat = code << _SHIFT[side]
        if self.layout is not None:
            req = self.layout.requirement.get((x, y))
            if req is not None:
                pat |= req[0] | req[1] << _SHIFT[1] | req[2] << _SHIFT[2] | req[3] << _SHIFT[3]
        self._fpat[slot] = pat
        self._fslot[(x, y)] = slot
        self._nf = slot + 1

    def _frontier_remove(self, x: int, y: int) -> None:
        slot = self._fslot.pop((x, y), None)
        if slot is None:
            return
        last = self._nf - 1
        if slot != last:
            lx, ly = int(self._fx[last]), int(self._fy[last])
            self._fx[slot] = lx
            self._fy[slot] = ly
            self._fpat[slot] = self._fpat[last]
            self._fslot[(lx, ly)] = slot
        self._nf = last

    def _connect_group(self, g: int) -> None:
        """A printed group (a large city) joins the play area: its empty playable neighbours become frontier."""
        layout: BoardLayout = self.layout  # type: ignore[assignment]  # called on printed boards only
        self.connected_groups.add(g)
        board, playable, tiles = self.board, layout.playable, self.rules.tiles
        for i in layout.groups[g]:
            p = layout.pieces[i]
            _, _, t, r, _ = self.placements[board[(p.x, p.y)]]
            codes = tiles[t].edge_codes[r]
            for s in range(4):
                n = (p.x + DX[s], p.y + DY[s])
                if n in playable and n not in board:
                    code = codes[s]
                    self._frontier_require(n[0], n[1], (s + 2) & 3, ANY_EDGE if code == NEUTRAL else code)

    def frontier_slot(self, x: int, y: int) -> int | None:
        """The frontier slot of cell (x, y) (its index in :meth:`placement_masks`), None if not on it."""
        return self._fslot.get((x, y))

    def placement_masks(self, t: int) -> np.ndarray:
        """Per frontier cell, the rotations (bit r) in which tile type ``t`` matches the required edges."""
        return self.rules.compat[t][self._fpat[: self._nf]]

    def frontier_placements(self, masks: np.ndarray) -> np.ndarray:
        """Rows (x, y, rotation) of the frontier cells and rotations set in ``masks``."""
        ci, ri = np.nonzero((masks[:, None] >> _ROT4[None, :]) & 1)
        out = np.empty((len(ci), 3), dtype=np.int32)  # filled column by column (np.stack costs more)
        out[:, 0] = self._fx[ci]
        out[:, 1] = self._fy[ci]
        out[:, 2] = ri
        return out

    def frontier_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the frontier cells' x and y (in the order of the rotation masks that
        ``placement_veto`` hooks receive); valid until the next placement."""
        nf = self._nf
        xs, ys = self._fx[:nf], self._fy[:nf]
        xs.flags.writeable = False
        ys.flags.writeable = False
        return xs, ys

    def frontier_size(self) -> int:
        """Cells on the frontier."""
        return self._nf

    def fitting_rotations(self, tile_id: str, x: int, y: int) -> list[int]:
        """Rotations in which ``tile_id`` fits cell (x, y) during setup: its placed neighbours and, on
        a printed board, the printed features around it (the cell need not touch the play area)."""
        layout = self.layout
        req = [0, 0, 0, 0] if layout is None else list(layout.requirement.get((x, y), (0, 0, 0, 0)))
        printed = 0 if layout is None else len(layout.pieces)  # placements [0, printed) are printed pieces
        tiles = self.rules.tiles
        for s in range(4):
            k = self.board.get((x + DX[s], y + DY[s]))
            if k is not None:
                _, _, nt, nr, _ = self.placements[k]
                code = tiles[nt].edge_codes[nr][(s + 2) % 4]
                req[s] = ANY_EDGE if code == NEUTRAL and k < printed else code
        codes = tiles[self.rules.tile_index[tile_id]].edge_codes
        return [r for r in range(4) if all(q in (0, ANY_EDGE) or q == codes[r][s] for s, q in enumerate(req))]

    # ------------------------------------------------------------------ buildings
    def _count_building_neighbours(self, x: int, y: int, base: int, info: TileInfo) -> None:
        """The new tile fills a neighbour of the buildings around it, and its own buildings count
        theirs; on a printed board only squares count and are counted."""
        squares = None if self.layout is None else self.layout.squares
        if squares is not None and (x, y) not in squares:
            return  # printed abroad: not a square of the board
        board = self.board
        buildings = self.buildings
        bn = self.building_neighbours
        pending = self._pending_buildings
        if buildings:
            for dx, dy in NEIGHBOURS8:
                nodes = buildings.get((x + dx, y + dy))
                if nodes:
                    for node in nodes:
                        bn[node] += 1
                        if bn[node] == self.building_target(x + dx, y + dy):
                            pending.append(node)
        if info.buildings:
            cnt = sum(1 for dx, dy in NEIGHBOURS8 if (x + dx, y + dy) in board
                      and (squares is None or (x + dx, y + dy) in squares))  # fmt: skip
            nodes = [base + i for i in info.buildings]
            buildings[(x, y)] = nodes
            target = self.building_target(x, y)
            for node in nodes:
                bn[node] = cnt
                if cnt >= target:
                    pending.append(node)

    def take_completed_buildings(self) -> list[int]:
        """Building nodes that reached their target since the last call (the scoring collects them)."""
        out = self._pending_buildings
        self._pending_buildings = []
        return out

    def building_target(self, x: int, y: int) -> int:
        """Tiles around the building at ``(x, y)`` that complete it (8 unless an expansion says otherwise)."""
        for hook in self.rules.h_building_target:
            v = hook(self, x, y)  # self is the Game
            if v is not None:
                return v
        if self.layout is not None:  # the squares around it that exist on the board
            return self.layout.building_target.get((x, y), 8)
        return 8

    def building_complete(self, node: int) -> bool:
        """Whether the building with segment ``node`` has every neighbour it needs (completed, or
        completed by the tile just placed and about to be scored)."""
        x, y = self.placements[self.node_tile[node]][:2]  # type: ignore[attr-defined]
        return self.building_neighbours.get(node, 0) >= self.building_target(x, y)

    # ------------------------------------------------------------------ a printed board
    def lay_printed(self, copiers: dict[str, Any], fields: tuple[str, ...]) -> None:
        """Lay every printed piece of the layout (setup, before any expansion's ``setup``); piece ``i``
        is placement ``i``.  The pieces are laid once per rule set; later games copy the resulting
        ``fields`` with ``copiers`` (:data:`carc_env.core.state.BOARD_SETUP`, ``CLONE``)."""
        state = self.rules.cache("core.layout.printed", lambda: self._lay_printed(copiers, fields))
        for name in fields:
            setattr(self, name, copiers[name](state[name]))

    def _lay_printed(self, copiers: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
        layout: BoardLayout = self.layout  # type: ignore[assignment]  # called on printed boards only
        tiles = self.rules.tile_index
        for p in layout.pieces:
            self.put_tile(tiles[p.tile], p.x, p.y, p.rotation, printed=True)
            self.mark_closed(len(self.placements) - 1)
        if self._nf or self._pending_buildings or self.connected_groups:  # pragma: no cover - by construction
            raise LayoutError("laying the printed pieces changed more than the board (frontier, buildings, groups)")
        return {name: copiers[name](getattr(self, name)) for name in fields}

    def describe_cell(self, x: int, y: int) -> str:
        k = self.board.get((x, y))
        if k is None:
            return f"({x},{y}) empty"
        _, _, t, r, _ = self.placements[k]
        return f"({x},{y}) {self.rules.tiles[t].id} r{r}"


__all__ = ["Board"]
