"""Tile data: loading, validation and precomputed rotations.

Contract
--------
Tile geometry lives in TOML files under ``carc_env/data/tiles`` (one per
expansion); no tile geometry is written in Python.  :func:`load_tile_file`
parses one file, validates every tile and raises :class:`TileDataError` naming
the file, the tile id and the fault.  Each :class:`TileType` carries its four
rotations precomputed as plain integer tuples, so nothing rotates at run time.

Conventions (see ``docs/rules/notation.md``):

* sides ``N E S W`` are 0..3; a rotation ``r`` turns the tile ``r`` quarter
  turns clockwise, so the printed side ``s`` ends up facing ``(s + r) % 4``;
* half-edges are indexed ``2 * side + h`` with ``h = 0`` for the left half
  (``NL``) and ``h = 1`` for the right half (``NR``), left/right as seen from
  the tile centre looking out through that side;
* the left half of a side touches the right half of the neighbour's opposite
  side and vice versa.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIDES = "NESW"
DX = (0, 1, 0, -1)
DY = (-1, 0, 1, 0)  # y grows to the south
NEIGHBOURS8 = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))
"""(dx, dy) of the 8 cells around a cell (a building's neighbourhood), row by row."""
HALF_NAMES = ("NL", "NR", "EL", "ER", "SL", "SR", "WL", "WR")
HALF_INDEX = {name: i for i, name in enumerate(HALF_NAMES)}

# Edge letters and their integer codes.  0 is reserved for "no requirement"
# in frontier patterns; codes use 3 bits per side (see core.board).
EDGE_CODES = {"C": 1, "R": 2, "F": 3, "I": 4, "-": 5}
EDGE_LETTERS = {v: k for k, v in EDGE_CODES.items()}

# Feature kinds.  Every building kind (cloister and the cloister-like kinds a
# tile file declares) is scored from its 8 neighbours.
CITY, ROAD, FIELD, BUILDING, RIVER = 0, 1, 2, 3, 4
KIND_NAMES = {CITY: "city", ROAD: "road", FIELD: "field", BUILDING: "building", RIVER: "river"}
EDGE_KIND_LETTER = {"city": "C", "road": "R", "river": "I"}
CORE_BUILDINGS = ("cloister",)

_COPIES = "count"  # the tile attribute "count" (copies in the set); named so as not to read as the Count's key
_TILE_KEYS = {"id", _COPIES, "edges", "features", "fields", "tags", "name", "layout_status"}
_FEATURE_KEYS = {"id", "kind", "edges", "pennants", "tags"}
_FIELD_KEYS = {"id", "halves", "cities", "tags"}
_FILE_KEYS = {"set", "start_tile", "tile", "buildings", "tags", "description"}


class TileDataError(ValueError):
    """A tile file is malformed; the message names the file, tile and fault."""


@dataclass(frozen=True)
class Segment:
    """One feature of a tile: a city, road, river, field or building.

    ``edges`` are printed sides (0..3) for cities/roads/rivers, ``halves`` the
    printed half-edges (0..7) for fields, ``cities`` the local indices of the
    city segments a field borders.
    """

    name: str
    kind: int
    building: str  # building kind ("cloister", "shrine", ...) or ""
    edges: tuple[int, ...]
    halves: tuple[int, ...]
    pennants: int
    cities: tuple[int, ...]
    tags: frozenset[str]

    @property
    def kind_name(self) -> str:
        return self.building or KIND_NAMES[self.kind]


@dataclass(frozen=True)
class TileType:
    """A tile type with its precomputed rotations.

    ``edge_codes[r][side]``: edge code facing ``side`` in rotation ``r``.
    ``center[r][side]``: local index of the city/road/river segment whose edge
    faces ``side`` in rotation ``r`` (-1 if none).
    ``half[r][h]``: local index of the field touching half-edge ``h`` (-1 if none).
    ``distinct_rotations``: bitmask of rotations giving pairwise different
    geometry (the lowest rotation of each symmetry class).
    """

    id: str
    set: str
    count: int
    edges: str
    segments: tuple[Segment, ...]
    tags: frozenset[str]
    edge_codes: tuple[tuple[int, int, int, int], ...]
    center: tuple[tuple[int, int, int, int], ...]
    half: tuple[tuple[int, ...], ...]
    distinct_rotations: int
    source: str

    def segment_index(self, name: str) -> int:
        for i, seg in enumerate(self.segments):
            if seg.name == name:
                return i
        raise KeyError(f"tile {self.id} has no feature {name!r}; it has {[s.name for s in self.segments]}")

    def has_building(self) -> bool:
        return any(s.kind == BUILDING for s in self.segments)

    def has_kind(self, kind: int) -> bool:
        """Whether a segment of the tile is of ``kind`` (``RIVER``: a river tile)."""
        return any(s.kind == kind for s in self.segments)


def _fail(where: str, msg: str) -> TileDataError:
    return TileDataError(f"{where}: {msg}")


def _rotate_side(side: int, r: int) -> int:
    return (side + r) % 4


def _rotate_half(h: int, r: int) -> int:
    return 2 * ((h // 2 + r) % 4) + (h % 2)


def _parse_sides(where: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in SIDES for v in value):
        raise _fail(where, f"'edges' must be a list of sides from N, E, S, W, got {value!r}")
    sides = tuple(SIDES.index(v) for v in value)
    if len(set(sides)) != len(sides):
        raise _fail(where, f"'edges' lists a side twice: {value!r}")
    return sides


def _check_keys(where: str, table: dict, allowed: set[str]) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise _fail(where, f"unknown attribute(s) {sorted(unknown)}; allowed: {sorted(allowed)}")


def _parse_tile(where_file: str, raw: dict, set_name: str, buildings: set[str], tags: set[str]) -> TileType:
    tid = raw.get("id")
    if not isinstance(tid, str) or not tid:
        raise _fail(where_file, f"a tile has no string 'id': {raw!r}")
    where = f"{where_file}: tile {tid}"
    _check_keys(where, raw, _TILE_KEYS)
    count = raw.get(_COPIES)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise _fail(where, f"'count' must be a non-negative integer, got {count!r}")
    edges = raw.get("edges")
    if not isinstance(edges, str) or len(edges) != 4 or any(c not in EDGE_CODES for c in edges):
        raise _fail(where, f"'edges' must be 4 letters from {''.join(EDGE_CODES)} (N E S W), got {edges!r}")
    tile_tags = _parse_tags(where, raw.get("tags", []), tags)
    segments: list[Segment] = []
    names: dict[str, int] = {}
    _parse_features(where, raw, edges, buildings, tags, segments, names)
    _parse_fields(where, raw, edges, tags, segments, names)
    codes, centers, halves_r = _rotations(edges, segments)
    distinct, seen = 0, set()
    for r in range(4):
        key = _geometry_key(segments, codes[r], centers[r], halves_r[r])
        if key not in seen:
            seen.add(key)
            distinct |= 1 << r
    return TileType(
        id=tid,
        set=set_name,
        count=count,
        edges=edges,
        segments=tuple(segments),
        tags=tile_tags,
        edge_codes=tuple(codes),
        center=tuple(centers),
        half=tuple(halves_r),
        distinct_rotations=distinct,
        source=where_file,
    )


def _edge_feature(
    fw: str, f: dict, kind_name: Any, edges: str, side_owner: dict[int, str], buildings: set[str]
) -> tuple[tuple[int, ...], int, str]:
    """(sides, kind, building) of a feature that is not a field; its sides are claimed in ``side_owner``."""
    if kind_name in EDGE_KIND_LETTER:
        sides = _parse_sides(fw, f.get("edges"))
        if not sides and kind_name != "city":
            raise _fail(fw, f"a {kind_name} must touch at least one edge")
        letter = EDGE_KIND_LETTER[kind_name]
        for s in sides:
            if edges[s] != letter:
                raise _fail(fw, f"touches side {SIDES[s]} whose edge is {edges[s]!r}, expected {letter!r}")
            if s in side_owner:
                raise _fail(fw, f"side {SIDES[s]} already belongs to feature {side_owner[s]}")
            side_owner[s] = f.get("id", "")
        return sides, {"city": CITY, "road": ROAD, "river": RIVER}[kind_name], ""
    if kind_name in buildings:
        if "edges" in f:
            raise _fail(fw, f"a {kind_name} has no edges")
        return (), BUILDING, kind_name
    raise _fail(fw, f"unknown kind {kind_name!r}; known: city, road, river, {', '.join(sorted(buildings))}")


def _parse_features(
    where: str,
    raw: dict,
    edges: str,
    buildings: set[str],
    tags: set[str],
    segments: list[Segment],
    names: dict[str, int],
) -> None:
    """The tile's cities, roads, rivers and buildings, appended to ``segments``."""
    side_owner: dict[int, str] = {}
    for f in raw.get("features", []):
        if not isinstance(f, dict):
            raise _fail(where, f"a feature must be a table, got {f!r}")
        _check_keys(where, f, _FEATURE_KEYS)
        name, kind_name = f.get("id"), f.get("kind")
        if not isinstance(name, str) or not name:
            raise _fail(where, f"a feature has no string 'id': {f!r}")
        fw = f"{where}, feature {name}"
        if name in names:
            raise _fail(fw, "duplicate feature id")
        sides, kind, building = _edge_feature(fw, f, kind_name, edges, side_owner, buildings)
        pennants = f.get("pennants", 0)
        if not isinstance(pennants, int) or isinstance(pennants, bool) or pennants < 0:
            raise _fail(fw, f"'pennants' must be a non-negative integer, got {pennants!r}")
        if pennants and kind != CITY:
            raise _fail(fw, "only cities carry pennants")
        names[name] = len(segments)
        segments.append(
            Segment(name, kind, building, sides, (), pennants, (), _parse_tags(fw, f.get("tags", []), tags))
        )
    for s, letter in enumerate(edges):
        if letter in "CRI" and s not in side_owner:
            raise _fail(where, f"side {SIDES[s]} is {letter!r} but no feature touches it")


def _field_halves(fw: str, halves_raw: Any, edges: str, half_owner: dict[int, str], name: str) -> list[int]:
    if not isinstance(halves_raw, list) or not all(isinstance(h, str) for h in halves_raw):
        raise _fail(fw, f"'halves' must be a list of half-edge names, got {halves_raw!r}")
    halves = []
    for h in halves_raw:
        if h not in HALF_INDEX:
            raise _fail(fw, f"unknown half-edge {h!r}; use one of {', '.join(HALF_NAMES)}")
        hi = HALF_INDEX[h]
        if edges[hi // 2] == "C":
            raise _fail(fw, f"half-edge {h} lies on a city edge")
        if hi in half_owner:
            raise _fail(fw, f"half-edge {h} already belongs to field {half_owner[hi]}")
        half_owner[hi] = name
        halves.append(hi)
    return halves


def _parse_fields(
    where: str, raw: dict, edges: str, tags: set[str], segments: list[Segment], names: dict[str, int]
) -> None:
    """The tile's fields (after its other features, whose cities they name), appended to ``segments``."""
    half_owner: dict[int, str] = {}
    for i, fld in enumerate(raw.get("fields", [])):
        if not isinstance(fld, dict):
            raise _fail(where, f"a field must be a table, got {fld!r}")
        _check_keys(where, fld, _FIELD_KEYS)
        name = fld.get("id", f"f{i + 1}")
        fw = f"{where}, field {name}"
        if name in names:
            raise _fail(fw, "duplicate feature id")
        halves = _field_halves(fw, fld.get("halves"), edges, half_owner, name)
        cities = []
        for c in fld.get("cities", []):
            if c not in names or segments[names[c]].kind != CITY:
                raise _fail(fw, f"borders {c!r}, which is not a city feature of this tile")
            cities.append(names[c])
        names[name] = len(segments)
        segments.append(
            Segment(name, FIELD, "", (), tuple(halves), 0, tuple(cities), _parse_tags(fw, fld.get("tags", []), tags))
        )
    for hi, hname in enumerate(HALF_NAMES):
        if edges[hi // 2] in "RFI" and hi not in half_owner:
            raise _fail(where, f"half-edge {hname} (edge {edges[hi // 2]!r}) is covered by no field")


def _rotations(edges: str, segments: list[Segment]) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Edge codes, side -> segment and half-edge -> segment of the four rotations (precomputed once)."""
    base_center = [-1, -1, -1, -1]
    base_half = [-1] * 8
    for idx, seg in enumerate(segments):
        for s in seg.edges:
            base_center[s] = idx
        for h in seg.halves:
            base_half[h] = idx
    codes, centers, halves_r = [], [], []
    for r in range(4):
        code = [0] * 4
        center = [-1] * 4
        half = [-1] * 8
        for s in range(4):
            code[_rotate_side(s, r)] = EDGE_CODES[edges[s]]
            center[_rotate_side(s, r)] = base_center[s]
        for h in range(8):
            half[_rotate_half(h, r)] = base_half[h]
        codes.append(tuple(code))
        centers.append(tuple(center))
        halves_r.append(tuple(half))
    return codes, centers, halves_r


def _geometry_key(segments: list[Segment], codes: tuple, center: tuple, half: tuple) -> tuple:
    """What a rotation looks like, independent of the segments' local indices.

    Segments are renumbered in order of first appearance (sides, then
    half-edges, then edgeless ones), so that e.g. BA-U turned twice (its two
    fields swap indices) gives the same key as BA-U unturned.
    """
    order: dict[int, int] = {}
    for i in (*center, *half, *range(len(segments))):
        if i >= 0 and i not in order:
            order[i] = len(order)
    props = tuple(
        (s.kind, s.building, s.pennants, s.tags, tuple(sorted(order[c] for c in s.cities)))
        for s in (segments[i] for i in sorted(order, key=order.__getitem__))
    )
    return (codes, tuple(order.get(c, -1) for c in center), tuple(order.get(h, -1) for h in half), props)


def _parse_tags(where: str, value: Any, known: set[str]) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise _fail(where, f"'tags' must be a list of strings, got {value!r}")
    unknown = set(value) - known
    if unknown:
        raise _fail(where, f"unknown tag(s) {sorted(unknown)}; declare them in the file's top-level 'tags'")
    return frozenset(value)


@dataclass(frozen=True)
class TileFile:
    """One parsed tile file: its set name, start tile (if any) and tile types."""

    set: str
    start_tile: str | None
    tiles: tuple[TileType, ...]
    buildings: tuple[str, ...]


def parse_tile_data(data: dict, where: str) -> TileFile:
    """Validate already-parsed TOML data of one tile file."""
    _check_keys(where, data, _FILE_KEYS)
    set_name = data.get("set")
    if not isinstance(set_name, str) or not set_name:
        raise _fail(where, "missing string 'set'")
    extra = data.get("buildings", [])
    if not isinstance(extra, list) or not all(isinstance(b, str) for b in extra):
        raise _fail(where, f"'buildings' must be a list of building kinds, got {extra!r}")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _fail(where, f"'tags' must be a list of strings, got {tags!r}")
    buildings = set(CORE_BUILDINGS) | set(extra)
    raw_tiles = data.get("tile", [])
    if not isinstance(raw_tiles, list) or not raw_tiles:
        raise _fail(where, "no [[tile]] entries")
    tiles, ids = [], set()
    for raw in raw_tiles:
        if not isinstance(raw, dict):
            raise _fail(where, f"a [[tile]] entry must be a table, got {raw!r}")
        tile = _parse_tile(where, raw, set_name, buildings, set(tags))
        if tile.id in ids:
            raise _fail(where, f"tile {tile.id}: duplicate tile id")
        ids.add(tile.id)
        tiles.append(tile)
    start = data.get("start_tile")
    if start is not None and start not in ids:
        raise _fail(where, f"start_tile {start!r} is not a tile of this file")
    return TileFile(set_name, start, tuple(tiles), tuple(extra))


def read_toml(path: Path, what: str, error: type[Exception]) -> dict[str, Any]:
    """The TOML table in ``path`` (a ``what``: "tile file", "map file" ...); every way it cannot be read
    raises ``error`` naming the file, the problem and the fix."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found; check the path (a file ending in .toml)") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a {what}; name a .toml file inside it") from None
    except PermissionError:
        raise error(f"{path}: the {what} cannot be read (permission denied); make it readable") from None
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: the {what} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8 TOML"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


def load_tile_file(path: str | Path) -> TileFile:
    """Load and validate one TOML tile file."""
    path = Path(path)
    data = read_toml(path, "tile file", TileDataError)
    return parse_tile_data(data, str(path.name))


DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def tile_file_path(name: str) -> Path:
    return DATA_DIR / "tiles" / name
