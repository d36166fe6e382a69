"""Fixed boards: which cells are squares, which hold printed pieces, which sides close features.

Contract
--------
Without a layout the board is unbounded: every empty cell next to a tile may
take one.  A plug-in that plays on a printed board (Carcassonne Maps)
provides a :class:`BoardLayout` through the ``board_layout`` hook; the core then
plays on it as follows.

* **Squares** are the cells of the printed board.  A tile may be placed only
  on an empty *playable* square: a square without a printed piece.
* **Void** is every other cell (sea, clouds, the neighbouring countries).  No
  tile ever goes there.  A side of a square that faces a void cell is a
  *border edge*: any edge of a tile may face it (no requirement), and a city or
  road running into it is closed there, as is a field.
* **Printed pieces** are fixed tiles printed on the board: tile types (count 0,
  never in the bag, appended to the rule set's tiles) that the core lays at
  setup before any expansion's ``setup``.  They have edges and segments like
  any tile: a placed tile next to one must match its edges, and their segments
  join the union-find (a printed large-city square is a city tile of its city;
  a printed road abroad is a road tile of the road it ends).  An edge printed
  ``-`` is *neutral*: anything may face it and it closes what faces it (like a
  border edge).  Followers never go on printed pieces.
* A printed piece with ``square=True`` stands on a square (a large-city
  square): it counts as a filled neighbour of a building and, once *connected*,
  it is part of the play area.  Pieces of one ``group`` are connected together,
  when the first tile is placed orthogonally next to any of them; from then on
  the empty playable squares next to every piece of the group may take tiles
  (before that only their edges constrain).  A piece with ``square=False``
  stands on a void cell (printed abroad): it never makes a square playable and
  never counts for a building.
* A building (cloister and the cloister-like kinds) on a square is complete
  when every neighbouring *square* (of the 8 around it) is filled, by a tile or
  a printed square piece: its target is the number of neighbouring squares, not 8.

A layout is immutable and shared by every game of a rule set.  The derived
tables (:attr:`BoardLayout.playable`, :attr:`~BoardLayout.requirement`,
:attr:`~BoardLayout.building_target`, :attr:`~BoardLayout.group_of`,
:attr:`~BoardLayout.bounds`) are computed once in ``__post_init__``.
Inconsistent data raises :class:`LayoutError` naming the cell and the fault.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .tiles import DX, DY, EDGE_CODES, RIVER, SIDES, TileType

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game

Cell = tuple[int, int]

ANY_EDGE = 7
"""Frontier requirement code "anything fits" (a neutral printed edge of a connected piece).

Code 0 means "no neighbour" and makes no cell playable on its own; 7 marks a
neighbour that allows every edge.  Tile edge codes are 1..5 (``tiles.EDGE_CODES``),
so base games never produce it."""
NEUTRAL = EDGE_CODES["-"]
"""A printed piece's edge letter ``-`` is neutral (anything fits, closes what faces it)."""
_NEIGHBOURS8 = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))


class LayoutError(ValueError):
    """A board layout is inconsistent; the message names the cell and the fault."""


@dataclass(frozen=True)
class PrintedPiece:
    """A tile printed on the board, laid by the core at setup.

    ``tile``: id of its tile type (one of the layout's ``tile_types``);
    ``rotation``: quarter turns clockwise, as for placed tiles; ``square``: it
    stands on a square of the board (True: a large-city square) or on a void
    cell (False: a feature printed abroad); ``group``: pieces connected
    together (a large city's squares; ignored for pieces off the board);
    ``name``: for messages and drawing.
    """

    tile: str
    x: int
    y: int
    rotation: int
    square: bool
    group: int = -1
    name: str = ""


@dataclass(frozen=True)
class BoardLayout:
    """A printed board.  See the module docstring for how the core plays on it."""

    squares: frozenset[Cell]
    pieces: tuple[PrintedPiece, ...]
    tile_types: tuple[TileType, ...]
    name: str = ""
    # derived in __post_init__
    playable: frozenset[Cell] = field(init=False, repr=False, compare=False)
    piece_at: dict[Cell, int] = field(init=False, repr=False, compare=False)
    requirement: dict[Cell, tuple[int, int, int, int]] = field(init=False, repr=False, compare=False)
    building_target: dict[Cell, int] = field(init=False, repr=False, compare=False)
    group_of: dict[Cell, int] = field(init=False, repr=False, compare=False)
    groups: dict[int, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    bounds: tuple[int, int, int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        types = {t.id: t for t in self.tile_types}
        if len(types) != len(self.tile_types):
            raise LayoutError(f"layout {self.name!r}: two printed tile types share an id")
        for t in self.tile_types:
            if t.count != 0:
                raise LayoutError(f"layout {self.name!r}: printed tile type {t.id} must have count 0, has {t.count}")
        if not self.squares:
            raise LayoutError(f"layout {self.name!r} has no square")
        piece_at: dict[Cell, int] = {}
        group_of: dict[Cell, int] = {}
        groups: dict[int, list[int]] = {}
        for i, p in enumerate(self.pieces):
            cell = (p.x, p.y)
            where = f"layout {self.name!r}, printed piece {p.name or p.tile} at {cell}"
            if p.tile not in types:
                raise LayoutError(f"{where}: unknown printed tile type {p.tile!r}")
            if not isinstance(p.rotation, int) or not 0 <= p.rotation <= 3:
                raise LayoutError(f"{where}: rotation must be 0..3, got {p.rotation!r}")
            if cell in piece_at:
                raise LayoutError(f"{where}: the cell already holds {self.pieces[piece_at[cell]].name!r}")
            if p.square != (cell in self.squares):
                what = "is not a square" if p.square else "is a square"
                raise LayoutError(f"{where}: square={p.square} but the cell {what}")
            piece_at[cell] = i
            if p.square:
                group_of[cell] = p.group
                groups.setdefault(p.group, []).append(i)
        playable = frozenset(c for c in self.squares if c not in piece_at)
        requirement: dict[Cell, tuple[int, int, int, int]] = {}
        target: dict[Cell, int] = {}
        for x, y in playable:
            req = [0, 0, 0, 0]
            for s in range(4):
                n = (x + DX[s], y + DY[s])
                k = piece_at.get(n)
                if k is not None:
                    p = self.pieces[k]
                    code = types[p.tile].edge_codes[p.rotation][(s + 2) % 4]
                    req[s] = ANY_EDGE if code == NEUTRAL else code
            if any(req):
                requirement[(x, y)] = (req[0], req[1], req[2], req[3])
            target[(x, y)] = sum((x + dx, y + dy) in self.squares for dx, dy in _NEIGHBOURS8)
        # a printed feature edge must face something it can meet: a playable square, another piece or void
        for p in self.pieces:
            t = types[p.tile]
            for s in range(4):
                code = t.edge_codes[p.rotation][s]
                if code == NEUTRAL:
                    continue
                n = (p.x + DX[s], p.y + DY[s])
                k = piece_at.get(n)
                if k is not None:
                    q = self.pieces[k]
                    other = types[q.tile].edge_codes[q.rotation][(s + 2) % 4]
                    if other != code and other != NEUTRAL:
                        raise LayoutError(
                            f"layout {self.name!r}: printed piece {p.name or p.tile} at {(p.x, p.y)} side {SIDES[s]} "
                            f"does not match printed piece {q.name or q.tile} at {n}"
                        )
        xs = [c[0] for c in self.squares] + [p.x for p in self.pieces]
        ys = [c[1] for c in self.squares] + [p.y for p in self.pieces]
        object.__setattr__(self, "playable", playable)
        object.__setattr__(self, "piece_at", piece_at)
        object.__setattr__(self, "requirement", requirement)
        object.__setattr__(self, "building_target", target)
        object.__setattr__(self, "group_of", group_of)
        object.__setattr__(self, "groups", {g: tuple(v) for g, v in groups.items()})
        object.__setattr__(self, "bounds", (min(xs), max(xs), min(ys), max(ys)))

    @property
    def width(self) -> int:
        """Columns spanned by the squares and the printed pieces."""
        return self.bounds[1] - self.bounds[0] + 1

    @property
    def height(self) -> int:
        """Rows spanned by the squares and the printed pieces."""
        return self.bounds[3] - self.bounds[2] + 1

    def is_void(self, x: int, y: int) -> bool:
        """True for a cell that is not a square of the board (a printed abroad piece's cell included)."""
        return (x, y) not in self.squares


# ---------------------------------------------------------------------------------------------
# Playing on a layout.  Game calls these only when its rule set has a layout, so games without
# one run exactly the code they always ran.
_SHIFT = (0, 3, 6, 9)  # core.config.PATTERN_BITS == 3 (checked there)


_PRINTED_STATE = (
    "parent", "kind", "node_tile", "open", "pennants", "completed", "tiles", "adjacent_cities", "placements",
    "board", "bounds", "buildings", "building_neighbours",
)  # fmt: skip
"""The game attributes laying the printed pieces changes (it makes no frontier cell and no follower)."""


def lay_printed(game: Game) -> None:
    """Lay every printed piece (setup, before any expansion's ``setup``); piece ``i`` is placement ``i``.

    The pieces are laid once per rule set; later games copy the resulting state (``Game.CLONE``'s
    copy of each attribute), which is what laying them again would give."""
    copiers = type(game).CLONE
    state = game.rules.cache("core.layout.printed", lambda: _lay(game))
    for name in _PRINTED_STATE:
        setattr(game, name, copiers[name](state[name]))


def _lay(game: Game) -> dict:
    tiles = game.rules.tile_index
    for p in game.layout.pieces:
        put_tile(game, tiles[p.tile], p.x, p.y, p.rotation, printed=True)
        mark_closed(game)
    if game._nf or game._pending_buildings or game.connected_groups:  # pragma: no cover - by construction
        raise LayoutError("laying the printed pieces changed more than the board (frontier, buildings, groups)")
    copiers = type(game).CLONE
    return {name: copiers[name](getattr(game, name)) for name in _PRINTED_STATE}


def put_tile(game: Game, t: int, x: int, y: int, r: int, printed: bool = False) -> None:
    """``Game._put_tile`` on a layout: border and neutral edges close, void cells never join the
    frontier, printed square pieces join the play area when a tile is placed next to them.

    ``printed``: a printed piece laid at setup (it makes no cell playable and connects nothing).
    """
    layout = game.layout
    rules = game.rules
    tile = rules.tiles[t]
    info = game._infos[t]
    k = len(game.placements)
    base = len(game.parent)
    n = info.n
    game.parent.extend(range(base, base + n))
    game.kind.extend(info.kinds)
    game.node_tile.extend([k] * n)
    game.open.extend(info.open0)
    game.pennants.extend(info.pen0)
    for i in info.scorable:
        game.tiles[base + i] = {k}
    for i, cities in info.fields:
        game.adjacent_cities[base + i] = {base + c for c in cities}
    game.placements.append((x, y, t, r, base))
    board = game.board
    board[(x, y)] = k
    b = game.bounds
    if k == 0:
        b[:] = [x, x, y, y]
    else:
        b[0], b[1], b[2], b[3] = min(b[0], x), max(b[1], x), min(b[2], y), max(b[3], y)

    center, half, codes = tile.center[r], tile.half[r], tile.edge_codes[r]
    placements, rtiles = game.placements, rules.tiles
    playable, piece_at, group_of = layout.playable, layout.piece_at, layout.group_of
    open_, find = game.open, game.find
    connect: list[int] = []
    for s in range(4):
        nx, ny = x + DX[s], y + DY[s]
        ncell = (nx, ny)
        nk = board.get(ncell)
        o = (s + 2) & 3
        c = center[s]
        joins = c >= 0 and info.kinds[c] != RIVER
        if nk is None:
            if ncell in playable:
                if not printed:
                    require(game, nx, ny, o, codes[s])
            elif ncell not in piece_at and joins:
                open_[find(base + c)] -= 1  # a border edge (sea, clouds) closes what runs into it
            continue  # (a printed piece laid later on that cell joins this side then)
        _, _, nt, nr, nbase = placements[nk]
        ntile = rtiles[nt]
        if joins:
            nc = ntile.center[nr][o]
            if nc >= 0:
                root = game._union(base + c, nbase + nc)
                open_[root] -= 2
            else:
                open_[find(base + c)] -= 1  # a neutral printed edge closes it
        hl = half[2 * s]
        if hl >= 0:
            nh = ntile.half[nr][2 * o + 1]
            if nh >= 0:
                game._union(base + hl, nbase + nh)
        hr = half[2 * s + 1]
        if hr >= 0:
            nh = ntile.half[nr][2 * o]
            if nh >= 0:
                game._union(base + hr, nbase + nh)
        if not printed:
            g = group_of.get(ncell)
            if g is not None and g not in game.connected_groups and g not in connect:
                connect.append(g)
    game._frontier_remove(x, y)
    _count_buildings(game, x, y, base, info)
    for g in connect:
        connect_group(game, g)


def require(game: Game, x: int, y: int, side: int, code: int) -> None:
    """``Game._frontier_require`` on a layout: a new frontier cell starts with its printed requirements."""
    slot = game._fslot.get((x, y))
    if slot is None:
        req = game.layout.requirement.get((x, y))
        pat = 0
        if req is not None:
            pat = req[0] | req[1] << 3 | req[2] << 6 | req[3] << 9
        game._frontier_require(x, y, side, code)
        game._fpat[game._fslot[(x, y)]] |= pat
    else:
        game._fpat[slot] |= code << _SHIFT[side]


def connect_group(game: Game, g: int) -> None:
    """A printed group (a large city) joins the play area: its empty playable neighbours become frontier."""
    layout = game.layout
    game.connected_groups.add(g)
    board, playable, tiles = game.board, layout.playable, game.rules.tiles
    for i in layout.groups[g]:
        p = layout.pieces[i]
        _, _, t, r, _ = game.placements[board[(p.x, p.y)]]
        codes = tiles[t].edge_codes[r]
        for s in range(4):
            n = (p.x + DX[s], p.y + DY[s])
            if n in playable and n not in board:
                code = codes[s]
                require(game, n[0], n[1], (s + 2) & 3, ANY_EDGE if code == NEUTRAL else code)


def _count_buildings(game: Game, x: int, y: int, base: int, info) -> None:
    """``Game._count_building_neighbours`` on a layout: only squares count, and only squares are counted."""
    squares = game.layout.squares
    if (x, y) not in squares:
        return  # printed abroad: not a square of the board
    board = game.board
    buildings = game.buildings
    bn = game.building_neighbours
    pending = game._pending_buildings
    if buildings:
        for dx, dy in _NEIGHBOURS8:
            nodes = buildings.get((x + dx, y + dy))
            if nodes:
                for node in nodes:
                    bn[node] += 1
                    if bn[node] == game.building_target(x + dx, y + dy):
                        pending.append(node)
    if info.buildings:
        cnt = 0
        for dx, dy in _NEIGHBOURS8:
            c = (x + dx, y + dy)
            if c in board and c in squares:
                cnt += 1
        nodes = [base + i for i in info.buildings]
        buildings[(x, y)] = nodes
        target = game.building_target(x, y)
        for node in nodes:
            bn[node] = cnt
            if cnt >= target:
                pending.append(node)


def mark_closed(game: Game) -> None:
    """Mark the cities and roads of the last placement that are already closed as completed
    (setup only: a start tile facing the sea; nobody can occupy them, so nothing is scored)."""
    _, _, t, _, base = game.placements[-1]
    for i in game._infos[t].scorable:
        root = game.find(base + i)
        if game.open[root] == 0:
            game.completed.add(root)


def fitting_rotations(game: Game, t: int, x: int, y: int) -> list[int]:
    """Rotations of tile type ``t`` whose edges fit cell (x, y): placed neighbours and printed
    requirements (setup: the cell need not touch the play area).  Works without a layout too."""
    layout = game.layout
    req = [0, 0, 0, 0] if layout is None else list(layout.requirement.get((x, y), (0, 0, 0, 0)))
    printed = 0 if layout is None else len(layout.pieces)  # placements [0, printed) are printed pieces
    for s in range(4):
        k = game.board.get((x + DX[s], y + DY[s]))
        if k is not None:
            _, _, nt, nr, _ = game.placements[k]
            code = game.rules.tiles[nt].edge_codes[nr][(s + 2) % 4]
            req[s] = ANY_EDGE if code == NEUTRAL and k < printed else code
    codes = game.rules.tiles[t].edge_codes
    return [r for r in range(4) if all(q in (0, ANY_EDGE) or q == codes[r][s] for s, q in enumerate(req))]


__all__ = [
    "ANY_EDGE", "BoardLayout", "Cell", "LayoutError", "NEUTRAL", "PrintedPiece", "connect_group", "fitting_rotations",
    "lay_printed", "mark_closed", "put_tile", "require",
]  # fmt: skip
