"""The Carcassonne Maps board file: loading, validation, and the core board layout built from it.

Contract
--------
:func:`load_map_file` parses one TOML map file (format ``carc_env-map``,
version 1; the Germany board is ``carc_env/data/maps/germany.toml``, whose
header documents the format) and returns a :class:`MapData`.  Every fault
(bad TOML, an unknown key, a letter of the grid that no entry explains, a
large city whose open edge faces no playable square, an abroad feature on a
square ...) raises :class:`MapDataError` naming the file, the entry and the
fault.  Nothing in the file is interpreted in Python beyond this format: a
user with the printed board replaces the file, not code.

:meth:`MapData.layout` turns the map into the core's
:class:`~carc_env.core.layout.BoardLayout`: every large-city square and every
feature abroad becomes a printed piece whose tile geometry is derived from the
declaration (this module writes it as tile-file data and has the tile loader
validate it, so printed pieces obey exactly the rules of tiles):

* a large-city square: a city segment on every side that is internal to its
  block or an open edge; each other side is *closed*: a field edge (option
  ``"field"``: the printed grass outside the city wall, a field bordering the
  city; consecutive field sides form one field) or a neutral edge (``"border"``:
  anything may face it, and it closes what faces it);
* a road abroad: a road segment on the side facing the square, ending there,
  with a separate field on each side of it; a city abroad: a city segment on
  that side.  Their other three sides are neutral.

Printed tile types are shared between pieces of the same geometry (ids
``MAP-city-<edges>``, ``MAP-road-abroad``, ``MAP-city-abroad``; ``<edges>``
is the N E S W letters of the type's unrotated form).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.layout import BoardLayout, LayoutError, PrintedPiece
from ...core.tiles import DATA_DIR, DX, DY, SIDES, TileDataError, parse_tile_data, read_toml

FORMAT, VERSION = "carc_env-map", 1
LAYOUT_STATUSES = ("printed", "approximate_geographic", "test")
CLOSED_EDGE_MODES = ("field", "border")
SQUARE_LETTERS = {"#": "square", "S": "start", "T": "town", "L": "large_city"}
VOID_LETTER = "."
SEA_LETTER = "~"
_FILE_KEYS = {"format", "version", "name", "title", "layout_status", "description", "grid", "start", "town",
              "large_city", "abroad"}  # fmt: skip
_START_KEYS = {"name", "cell"}
_TOWN_KEYS = {"name", "cell", "source"}
_CITY_KEYS = {"name", "cells", "open", "coats_of_arms", "source"}
_ABROAD_KEYS = {"name", "kind", "square", "side", "coats_of_arms", "source"}

Cell = tuple[int, int]


class MapDataError(ValueError):
    """A map file is malformed; the message names the file, the entry and the fault."""


@dataclass(frozen=True)
class NamedSquare:
    """A start square or a town square."""

    name: str
    x: int
    y: int
    source: str = "rule text"

    @property
    def cell(self) -> Cell:
        return (self.x, self.y)


@dataclass(frozen=True)
class LargeCity:
    """A printed large city: its squares, its open city edges ``(x, y, side)`` and its coats of arms per square."""

    name: str
    cells: tuple[Cell, ...]
    open: tuple[tuple[int, int, int], ...]
    coats_of_arms: tuple[int, ...]
    source: str = ""


@dataclass(frozen=True)
class Abroad:
    """A road or city printed in a neighbouring country, beyond ``side`` of the square ``square``."""

    name: str
    kind: str  # "road" | "city"
    square: Cell
    side: int
    coats_of_arms: int
    source: str = ""

    @property
    def cell(self) -> Cell:
        """The void cell the printed feature lies on."""
        return (self.square[0] + DX[self.side], self.square[1] + DY[self.side])


@dataclass(frozen=True)
class MapData:
    """One parsed map file.  Coordinates are game coordinates (x east, y south)."""

    name: str
    title: str
    layout_status: str
    description: str
    grid: tuple[str, ...]
    squares: frozenset[Cell]
    sea: frozenset[Cell]
    """Cells drawn as water (no square, like every cell that is not a square; for drawing only)."""
    starts: tuple[NamedSquare, ...]
    towns: tuple[NamedSquare, ...]
    large_cities: tuple[LargeCity, ...]
    abroad: tuple[Abroad, ...]
    source: str

    def start(self, name: str) -> NamedSquare:
        for s in self.starts:
            if s.name.lower() == name.lower():
                return s
        raise KeyError(name)

    @property
    def town_cells(self) -> frozenset[Cell]:
        return frozenset(t.cell for t in self.towns)

    def layout(self, closed_edges: str = "field") -> tuple[BoardLayout, tuple[int, ...]]:
        """The core board layout and the coats of arms of each of its printed pieces (in piece order).

        Pieces: every large city's squares (in file order; group = the city's index), then the
        features abroad.
        """
        if closed_edges not in CLOSED_EDGE_MODES:
            raise MapDataError(f"closed large-city edges must be one of {CLOSED_EDGE_MODES}, got {closed_edges!r}")
        raw_types: dict[str, dict[str, Any]] = {}
        pieces: list[PrintedPiece] = []
        coats: list[int] = []
        for g, city in enumerate(self.large_cities):
            cells = set(city.cells)
            opened = set(city.open)
            for (x, y), c in zip(city.cells, city.coats_of_arms, strict=True):
                letters = []
                for s in range(4):
                    n = (x + DX[s], y + DY[s])
                    if n in cells or (x, y, s) in opened:
                        letters.append("C")
                    else:
                        letters.append("F" if closed_edges == "field" else "-")
                canon, rot = _canonical("".join(letters))
                tid = f"MAP-city-{canon}"
                raw_types.setdefault(tid, _city_square_tile(tid, canon))
                pieces.append(PrintedPiece(tid, x, y, rot, square=True, group=g, name=city.name))
                coats.append(c)
        for a in self.abroad:
            tid = f"MAP-{a.kind}-abroad"
            raw_types.setdefault(tid, _abroad_tile(tid, a.kind))
            x, y = a.cell
            pieces.append(PrintedPiece(tid, x, y, (a.side + 2) % 4, square=False, name=a.name))
            coats.append(a.coats_of_arms)
        try:
            tf = parse_tile_data({"set": f"map:{self.name}", "tile": list(raw_types.values())}, f"map {self.name}")
        except TileDataError as exc:  # pragma: no cover - the generated geometry is valid by construction
            raise MapDataError(f"{self.source}: printed geometry is invalid: {exc}") from None
        try:
            layout = BoardLayout(self.squares, tuple(pieces), tf.tiles, name=self.name)
        except LayoutError as exc:
            raise MapDataError(f"{self.source}: {exc}") from None
        return layout, tuple(coats)


def _canonical(actual: str) -> tuple[str, int]:
    """The smallest unrotated form of ``actual`` and the rotation that turns it into ``actual``."""
    # the printed form turned r quarter turns is `actual`: printed[s] faces (s + r) % 4
    return min(("".join(actual[(s + r) % 4] for s in range(4)), r) for r in range(4))


def _city_square_tile(tid: str, letters: str) -> dict[str, Any]:
    city = [SIDES[s] for s in range(4) if letters[s] == "C"]
    features = [{"id": "c1", "kind": "city", "edges": city}] if city else [{"id": "c1", "kind": "city", "edges": []}]
    fields = []
    seen: set[int] = set()
    for s in range(4):
        if letters[s] != "F" or s in seen:
            continue
        # a run of consecutive field sides (cyclic) is one field: the grass round a corner of the wall
        start = s
        while letters[(start - 1) % 4] == "F" and (start - 1) % 4 != s:
            start = (start - 1) % 4
        run = []
        i = start
        while letters[i] == "F" and i not in run:
            run.append(i)
            i = (i + 1) % 4
        seen.update(run)
        halves = [f"{SIDES[i]}{h}" for i in run for h in "LR"]
        fields.append({"id": f"f{len(fields) + 1}", "halves": halves, "cities": ["c1"]})
    return {"id": tid, "count": 0, "edges": letters, "features": features, "fields": fields}


def _abroad_tile(tid: str, kind: str) -> dict[str, Any]:
    if kind == "road":
        return {
            "id": tid, "count": 0, "edges": "R---",
            "features": [{"id": "r1", "kind": "road", "edges": ["N"]}],
            "fields": [{"id": "f1", "halves": ["NL"]}, {"id": "f2", "halves": ["NR"]}],
        }  # fmt: skip
    return {"id": tid, "count": 0, "edges": "C---", "features": [{"id": "c1", "kind": "city", "edges": ["N"]}]}


# ------------------------------------------------------------------ loading
def map_file_path(name: str) -> Path:
    """Where a map file lives: a bare name (``"germany"`` or ``"germany.toml"``) is looked up in
    ``carc_env/data/maps``; anything with a directory part is a path."""
    p = Path(name)
    if p.parent == Path("."):
        return DATA_DIR / "maps" / (name if name.endswith(".toml") else f"{name}.toml")
    return p


def load_map_file(name: str | Path) -> MapData:
    """Load and validate one map file (see the module docstring)."""
    path = map_file_path(str(name))
    data = read_toml(path, "map file", MapDataError)
    return parse_map_data(data, str(path.name))


def _fail(where: str, msg: str) -> MapDataError:
    return MapDataError(f"{where}: {msg}")


def _keys(where: str, table: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise _fail(where, f"must be a table, got {table!r}")
    unknown = set(table) - allowed
    if unknown:
        raise _fail(where, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    return table


def _str(where: str, table: dict, key: str, default: str | None = None) -> str:
    v = table.get(key, default)
    if not isinstance(v, str) or not v:
        raise _fail(where, f"{key!r} must be a non-empty string, got {v!r}")
    return v


def _cell(where: str, v: Any) -> Cell:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(i, int) and not isinstance(i, bool) for i in v)):
        raise _fail(where, f"a cell must be [x, y] (two integers), got {v!r}")
    return (v[0], v[1])


def _side(where: str, v: Any) -> int:
    if not isinstance(v, str) or v not in SIDES or len(v) != 1:
        raise _fail(where, f"a side must be one of N, E, S, W, got {v!r}")
    return SIDES.index(v)


def _coats(where: str, v: Any, n: int) -> tuple[int, ...]:
    def ok(c: Any) -> bool:
        return isinstance(c, int) and not isinstance(c, bool) and c >= 0

    if ok(v):
        return (v,) * n
    if isinstance(v, list) and len(v) == n and all(ok(c) for c in v):
        return tuple(v)
    raise _fail(where, f"'coats_of_arms' must be a non-negative integer or a list of {n} of them, got {v!r}")


def parse_map_data(data: dict[str, Any], where: str) -> MapData:
    """Validate already-parsed TOML data of one map file."""
    _keys(where, data, _FILE_KEYS)
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise _fail(where, f"not a map file of format {FORMAT!r} version {VERSION} "
                           f"(got {data.get('format')!r} version {data.get('version')!r})")  # fmt: skip
    name = _str(where, data, "name")
    title = _str(where, data, "title", name)
    status = _str(where, data, "layout_status")
    if status not in LAYOUT_STATUSES:
        raise _fail(where, f"layout_status must be one of {LAYOUT_STATUSES}, got {status!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail(where, f"'description' must be a string, got {description!r}")
    grid = data.get("grid")
    if not isinstance(grid, list) or not grid or not all(isinstance(r, str) for r in grid):
        raise _fail(where, "'grid' must be a non-empty list of strings (one per row, north first)")
    letters: dict[Cell, str] = {}
    sea = set()
    for y, row in enumerate(grid):
        for x, ch in enumerate(row):
            if ch == VOID_LETTER:
                continue
            if ch == SEA_LETTER:
                sea.add((x, y))
                continue
            if ch not in SQUARE_LETTERS:
                raise _fail(where, f"grid row {y} column {x}: unknown letter {ch!r}; use {VOID_LETTER!r}, "
                                   f"{SEA_LETTER!r} or one of {sorted(SQUARE_LETTERS)}")  # fmt: skip
            letters[(x, y)] = SQUARE_LETTERS[ch]
    squares = frozenset(letters)
    if not squares:
        raise _fail(where, "the grid has no square")

    claimed: dict[Cell, str] = {}

    def claim(w: str, cell: Cell, kind: str, what: str) -> None:
        if letters.get(cell) != kind:
            got = letters.get(cell, "no square")
            raise _fail(w, f"cell {list(cell)} is {got!r} in the grid, expected {kind!r}")
        if cell in claimed:
            raise _fail(w, f"cell {list(cell)} already belongs to {claimed[cell]}")
        claimed[cell] = what

    starts = []
    for i, raw in enumerate(data.get("start", [])):
        w = f"{where}: [[start]] #{i + 1}"
        _keys(w, raw, _START_KEYS)
        s = NamedSquare(_str(w, raw, "name"), *_cell(w, raw.get("cell")))
        claim(w, s.cell, "start", f"start square {s.name}")
        starts.append(s)
    towns = []
    for i, raw in enumerate(data.get("town", [])):
        w = f"{where}: [[town]] #{i + 1}"
        _keys(w, raw, _TOWN_KEYS)
        t = NamedSquare(_str(w, raw, "name"), *_cell(w, raw.get("cell")), _str(w, raw, "source", "rule text"))
        claim(w, t.cell, "town", f"town {t.name}")
        towns.append(t)
    cities = []
    for i, raw in enumerate(data.get("large_city", [])):
        w = f"{where}: [[large_city]] #{i + 1}"
        _keys(w, raw, _CITY_KEYS)
        cname = _str(w, raw, "name")
        w = f"{where}: large city {cname}"
        cells_raw = raw.get("cells")
        if not isinstance(cells_raw, list) or not cells_raw:
            raise _fail(w, f"'cells' must be a non-empty list of [x, y], got {cells_raw!r}")
        cells = tuple(_cell(w, c) for c in cells_raw)
        for c in cells:
            claim(w, c, "large_city", f"large city {cname}")
        cellset = set(cells)
        # a block must be orthogonally connected (one city)
        seen, stack = {cells[0]}, [cells[0]]
        while stack:
            cx, cy = stack.pop()
            for s in range(4):
                n = (cx + DX[s], cy + DY[s])
                if n in cellset and n not in seen:
                    seen.add(n)
                    stack.append(n)
        if seen != cellset:
            raise _fail(w, f"its squares are not orthogonally connected: {sorted(cellset - seen)} are cut off")
        opened = []
        for o in raw.get("open", []):
            if not (isinstance(o, list) and len(o) == 3):
                raise _fail(w, f"an open edge must be [x, y, side], got {o!r}")
            c = _cell(w, o[:2])
            s = _side(w, o[2])
            n = (c[0] + DX[s], c[1] + DY[s])
            if c not in cellset:
                raise _fail(w, f"open edge {o!r}: {list(c)} is not one of its squares")
            if n in cellset:
                raise _fail(w, f"open edge {o!r} is inside the city")
            if letters.get(n) not in ("square", "start", "town"):
                raise _fail(w, f"open edge {o!r} faces {list(n)}, which is not a playable square")
            opened.append((c[0], c[1], s))
        if len(set(opened)) != len(opened):
            raise _fail(w, "an open edge is listed twice")
        cities.append(LargeCity(cname, cells, tuple(opened), _coats(w, raw.get("coats_of_arms", 1), len(cells)),
                                raw.get("source", "")))  # fmt: skip
    abroad = []
    used: dict[Cell, str] = {}
    for i, raw in enumerate(data.get("abroad", [])):
        w = f"{where}: [[abroad]] #{i + 1}"
        _keys(w, raw, _ABROAD_KEYS)
        aname = _str(w, raw, "name")
        w = f"{where}: abroad feature {aname}"
        kind = _str(w, raw, "kind")
        if kind not in ("road", "city"):
            raise _fail(w, f"'kind' must be 'road' or 'city', got {kind!r}")
        sq = _cell(w, raw.get("square"))
        if letters.get(sq) not in ("square", "start", "town"):
            raise _fail(w, f"'square' {list(sq)} is not a playable square of the grid")
        coats = raw.get("coats_of_arms", 0)
        if not isinstance(coats, int) or isinstance(coats, bool) or coats < 0:
            raise _fail(w, f"'coats_of_arms' must be a non-negative integer, got {coats!r}")
        a = Abroad(aname, kind, sq, _side(w, raw.get("side")), coats, raw.get("source", ""))
        if a.cell in squares:
            raise _fail(w, f"side {SIDES[a.side]} of {list(sq)} faces the square {list(a.cell)}, not abroad")
        if a.cell in used:
            raise _fail(w, f"cell {list(a.cell)} already holds the abroad feature {used[a.cell]}")
        for s in range(4):
            n = (a.cell[0] + DX[s], a.cell[1] + DY[s])
            if letters.get(n) == "large_city":
                raise _fail(w, f"its cell {list(a.cell)} touches the large-city square {list(n)}")
        used[a.cell] = aname
        abroad.append(a)
    for cell, kind in letters.items():
        if kind != "square" and cell not in claimed:
            raise _fail(where, f"grid cell {list(cell)} is marked {kind!r} but no entry names it")
    for a in abroad:
        if a.cell in sea:
            raise _fail(where, f"abroad feature {a.name}: its cell {list(a.cell)} is sea in the grid")
    return MapData(name, title, status, description, tuple(grid), squares, frozenset(sea), tuple(starts),
                   tuple(towns), tuple(cities), tuple(abroad), where)  # fmt: skip


__all__ = [
    "Abroad", "CLOSED_EDGE_MODES", "LargeCity", "MapData", "MapDataError", "NamedSquare", "load_map_file",
    "map_file_path", "parse_map_data",
]  # fmt: skip
