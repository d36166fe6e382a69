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

This module describes the board; playing on it is the board's placement
procedure (:meth:`carc_env.core.board.Board.put_tile`, the same for every
game), which reads the derived tables below.

A layout is immutable and shared by every game of a rule set.  The derived
tables (:attr:`BoardLayout.playable`, :attr:`~BoardLayout.requirement`,
:attr:`~BoardLayout.building_target`, :attr:`~BoardLayout.group_of`,
:attr:`~BoardLayout.bounds`) are computed once in ``__post_init__``.
Inconsistent data raises :class:`LayoutError` naming the cell and the fault.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tiles import DX, DY, EDGE_CODES, NEIGHBOURS8, SIDES, TileType

Cell = tuple[int, int]

ANY_EDGE = 7
"""Frontier requirement code "anything fits" (a neutral printed edge of a connected piece).

Code 0 means "no neighbour" and makes no cell playable on its own; 7 marks a
neighbour that allows every edge.  Tile edge codes are 1..5 (``tiles.EDGE_CODES``),
so base games never produce it."""
NEUTRAL = EDGE_CODES["-"]
"""A printed piece's edge letter ``-`` is neutral (anything fits, closes what faces it)."""


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
        piece_at, group_of, groups = self._index_pieces(types)
        playable = frozenset(c for c in self.squares if c not in piece_at)
        requirement: dict[Cell, tuple[int, int, int, int]] = {}
        target: dict[Cell, int] = {}
        for x, y in playable:
            req = self._printed_requirement(types, piece_at, x, y)
            if any(req):
                requirement[(x, y)] = req
            target[(x, y)] = sum((x + dx, y + dy) in self.squares for dx, dy in NEIGHBOURS8)
        self._check_printed_edges(types, piece_at)
        xs = [c[0] for c in self.squares] + [p.x for p in self.pieces]
        ys = [c[1] for c in self.squares] + [p.y for p in self.pieces]
        object.__setattr__(self, "playable", playable)
        object.__setattr__(self, "piece_at", piece_at)
        object.__setattr__(self, "requirement", requirement)
        object.__setattr__(self, "building_target", target)
        object.__setattr__(self, "group_of", group_of)
        object.__setattr__(self, "groups", {g: tuple(v) for g, v in groups.items()})
        object.__setattr__(self, "bounds", (min(xs), max(xs), min(ys), max(ys)))

    def _index_pieces(
        self, types: dict[str, TileType]
    ) -> tuple[dict[Cell, int], dict[Cell, int], dict[int, list[int]]]:
        """Cell -> piece index, square piece's cell -> group, group -> its pieces; every piece checked."""
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
        return piece_at, group_of, groups

    def _printed_requirement(
        self, types: dict[str, TileType], piece_at: dict[Cell, int], x: int, y: int
    ) -> tuple[int, int, int, int]:
        """The edge codes the printed pieces around square (x, y) require of a tile there (N E S W)."""
        req = [0, 0, 0, 0]
        for s in range(4):
            k = piece_at.get((x + DX[s], y + DY[s]))
            if k is not None:
                p = self.pieces[k]
                code = types[p.tile].edge_codes[p.rotation][(s + 2) % 4]
                req[s] = ANY_EDGE if code == NEUTRAL else code
        return (req[0], req[1], req[2], req[3])

    def _check_printed_edges(self, types: dict[str, TileType], piece_at: dict[Cell, int]) -> None:
        """A printed feature edge must face something it can meet: a playable square, another piece or void."""
        for p in self.pieces:
            t = types[p.tile]
            for s in range(4):
                code = t.edge_codes[p.rotation][s]
                if code == NEUTRAL:
                    continue
                n = (p.x + DX[s], p.y + DY[s])
                k = piece_at.get(n)
                if k is None:
                    continue
                q = self.pieces[k]
                other = types[q.tile].edge_codes[q.rotation][(s + 2) % 4]
                if other != code and other != NEUTRAL:
                    raise LayoutError(
                        f"layout {self.name!r}: printed piece {p.name or p.tile} at {(p.x, p.y)} side {SIDES[s]} "
                        f"does not match printed piece {q.name or q.tile} at {n}"
                    )

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


__all__ = ["ANY_EDGE", "BoardLayout", "Cell", "LayoutError", "NEUTRAL", "PrintedPiece"]
