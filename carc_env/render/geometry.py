"""Tile drawing geometry derived from the tile data (never per-tile art).

Every shape is computed from a :class:`~carc_env.core.tiles.TileType`'s
segments in a given rotation, in normalised tile coordinates: ``(0, 0)`` is
the north-west corner, ``(1, 1)`` the south-east one, y grows to the south.

* a city is one polygon per city segment: the tile perimeter along its sides,
  closed by inward curves over the sides it does not own (one side: a cap,
  two adjacent sides: a corner, two opposite sides: a band, three: all but a
  cap, four: the whole tile); the curves are the city walls;
* a road or river is one polyline per side it touches, from the side's middle
  to the tile centre, so a two-sided road runs through the centre;
* buildings (cloister, shrine, church, any kind a tile file declares) sit in
  the centre (several are spread along the horizontal midline);
* follower anchors (where a follower stands) come from a small label raster
  of those shapes: fields are grown from their half-edges over the free area
  and a field follower lies on the deepest point of its field; a city
  follower stands on the deepest point of its city, a road follower on its
  road's first arm (or the centre of a two-sided road), a building follower
  beside the building's door.

:func:`tile_geometry` caches the result per tile type and rotation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

from ..core.tiles import BUILDING, CITY, FIELD, RIVER, ROAD, TileType

Point = tuple[float, float]

CORNERS: tuple[Point, ...] = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))  # NW NE SE SW
MIDS: tuple[Point, ...] = ((0.5, 0.0), (1.0, 0.5), (0.5, 1.0), (0.0, 0.5))  # N E S W
INWARD: tuple[Point, ...] = ((0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0))
CENTRE: Point = (0.5, 0.5)

ROAD_W = 0.09  # road width (fraction of a tile)
ROAD_EDGE_W = 0.025  # darker verge on each side of a road
RIVER_W = 0.16
WALL_W = 0.035
BUILDING_SIZE = 0.36
INTERIOR_W = 0.10  # band drawn along a '-' side
_RASTER = 48  # label raster resolution for anchors
_BEZIER_STEPS = 16


def rotate_side(side: int, r: int) -> int:
    return (side + r) % 4


def rotate_half(h: int, r: int) -> int:
    return 2 * ((h // 2 + r) % 4) + (h % 2)


def _bezier(a: Point, c: Point, b: Point, steps: int = _BEZIER_STEPS) -> list[Point]:
    out = []
    for i in range(steps + 1):
        t = i / steps
        u = 1 - t
        out.append((u * u * a[0] + 2 * u * t * c[0] + t * t * b[0], u * u * a[1] + 2 * u * t * c[1] + t * t * b[1]))
    return out


def _add(p: Point, q: Point, k: float = 1.0) -> Point:
    return (p[0] + k * q[0], p[1] + k * q[1])


def _gap_control(gap: list[int]) -> Point:
    """Control point of the wall curve spanning the non-city sides ``gap`` (clockwise)."""
    n = len(gap)
    if n == 1:  # the field is a cap on that side
        return _add(MIDS[gap[0]], INWARD[gap[0]], 0.6)
    if n == 2:  # a corner city: bulge towards the city corner, clear of the centre
        k = CORNERS[(gap[0] + 1) % 4]
        o = CORNERS[(gap[0] + 3) % 4]
        return (k[0] + 0.7 * (o[0] - k[0]), k[1] + 0.7 * (o[1] - k[1]))
    mid = gap[1]  # n == 3: the city is a cap on the remaining side
    return _add(MIDS[mid], INWARD[mid], 0.4)


def city_outline(sides: tuple[int, ...]) -> tuple[list[Point], list[list[Point]]]:
    """Polygon of a city owning ``sides`` (rotated) and its wall curves."""
    owned = set(sides)
    if len(owned) == 4:
        return list(CORNERS), []
    if not owned:  # a city with no edge (an inner city): a square in the centre
        lo, hi = 0.32, 0.68
        pts = [(lo, lo), (hi, lo), (hi, hi), (lo, hi)]
        return pts, [pts + [pts[0]]]
    start = next(s for s in range(4) if s in owned and (s - 1) % 4 not in owned)
    poly: list[Point] = []
    walls: list[list[Point]] = []
    s = start
    while True:
        while s % 4 in owned:
            poly.append(CORNERS[s % 4])
            s += 1
        gap = []
        while s % 4 not in owned:
            gap.append(s % 4)
            s += 1
        a = CORNERS[gap[0]]
        b = CORNERS[s % 4]
        curve = _bezier(a, _gap_control(gap), b)
        walls.append(curve)
        poly.extend(curve[:-1])
        if s % 4 == start:
            break
    return poly, walls


def _causeway(north_south: bool) -> tuple[list[Point], list[list[Point]]]:
    a, b = 0.33, 0.67
    if north_south:
        return [(a, 0.0), (b, 0.0), (b, 1.0), (a, 1.0)], [[(a, 0.0), (a, 1.0)], [(b, 0.0), (b, 1.0)]]
    return [(0.0, a), (1.0, a), (1.0, b), (0.0, b)], [[(0.0, a), (1.0, a)], [(0.0, b), (1.0, b)]]


def _components(mask: np.ndarray) -> list[np.ndarray]:
    """4-connected components of a boolean mask, largest first."""
    seen = np.zeros(mask.shape, dtype=bool)
    h, w = mask.shape
    comps = []
    for y0, x0 in zip(*np.nonzero(mask), strict=True):
        if seen[y0, x0]:
            continue
        comp = np.zeros(mask.shape, dtype=bool)
        stack = [(int(y0), int(x0))]
        seen[y0, x0] = True
        while stack:
            y, x = stack.pop()
            comp[y, x] = True
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        comps.append(comp)
    return sorted(comps, key=lambda c: -int(c.sum()))


@dataclass
class TileGeometry:
    """Shapes of one tile type in one rotation (normalised coordinates)."""

    tile: TileType
    rotation: int
    edge_letters: str  # N E S W after rotation
    cities: list[tuple[int, list[Point], list[list[Point]]]] = field(default_factory=list)
    roads: list[tuple[int, list[list[Point]]]] = field(default_factory=list)
    rivers: list[tuple[int, list[list[Point]], bool]] = field(default_factory=list)  # pond at the centre?
    junction: bool = False
    interior_sides: list[int] = field(default_factory=list)
    buildings: list[tuple[int, str, Point]] = field(default_factory=list)
    pennants: list[tuple[int, int, Point]] = field(default_factory=list)  # segment, count, position
    tags: list[tuple[int, str, Point]] = field(default_factory=list)
    anchors: dict[int, Point] = field(default_factory=dict)  # segment -> follower position
    lying: set[int] = field(default_factory=set)  # segments whose follower lies down (fields)
    centre_city: bool = False  # a city covers the tile centre


def _build(tile: TileType, r: int) -> TileGeometry:
    letters = "".join(tile.edges[(s - r) % 4] for s in range(4))
    g = TileGeometry(tile, r, letters)
    segs = tile.segments
    n_build = sum(1 for s in segs if s.kind == BUILDING)
    centre_taken = False
    b_i = 0
    for i, seg in enumerate(segs):
        sides = tuple(rotate_side(e, r) for e in seg.edges)
        if seg.kind == CITY:
            if set(sides) in ({0, 2}, {1, 3}) and centre_taken:
                # a second city across one that already covers the centre: a straight causeway over it
                poly, walls = _causeway(sides[0] % 2 == 0)
            else:
                poly, walls = city_outline(sides)
            centre_taken |= len(set(sides)) >= 3 or set(sides) in ({0, 2}, {1, 3})
            g.cities.append((i, poly, walls))
        elif seg.kind == ROAD:
            if len(sides) == 2:
                g.roads.append((i, [[MIDS[sides[0]], CENTRE, MIDS[sides[1]]]]))
            else:
                g.roads.append((i, [[MIDS[s], CENTRE] for s in sides]))
            if len(sides) == 1:
                g.junction = True
        elif seg.kind == RIVER:
            g.rivers.append((i, [[MIDS[s], CENTRE] for s in sides], len(sides) == 1))
        elif seg.kind == BUILDING:
            x = 0.5 if n_build == 1 else 0.2 + 0.6 * b_i / (n_build - 1)
            g.buildings.append((i, seg.building, (x, 0.5)))
            b_i += 1
    if g.buildings:
        g.junction = False
    g.interior_sides = [s for s in range(4) if letters[s] == "-"]
    _anchors(g)
    return g


def label_raster(g: TileGeometry, size: int = _RASTER) -> np.ndarray:
    """uint8 raster: 0 free (field), segment index + 1 for cities/roads/buildings, 255 barriers."""
    im = Image.new("L", (size, size), 0)
    d = ImageDraw.Draw(im)

    def sc(pts: list[Point]) -> list[tuple[float, float]]:
        return [(x * size, y * size) for x, y in pts]

    for s in g.interior_sides:
        a, b = CORNERS[s], CORNERS[(s + 1) % 4]
        d.line(sc([a, b]), fill=255, width=max(1, round(2 * INTERIOR_W * size)))
    for _, lines, pond in g.rivers:
        for ln in lines:
            d.line(sc(ln), fill=255, width=max(1, round(RIVER_W * size)))
        if pond:
            _circle(d, CENTRE, 0.14, size, 255)
    for i, lines in g.roads:
        for ln in lines:
            d.line(sc(ln), fill=i + 1, width=max(1, round((ROAD_W + 2 * ROAD_EDGE_W) * size)))
    for i, poly, _ in g.cities:
        d.polygon(sc(poly), fill=i + 1)
    for i, _, (x, y) in g.buildings:
        h = BUILDING_SIZE / 2
        d.rectangle([(x - h) * size, (y - h) * size, (x + h) * size, (y + h) * size], fill=i + 1)
    return np.asarray(im, dtype=np.uint8).copy()


def _circle(d: ImageDraw.ImageDraw, c: Point, rad: float, size: int, fill: int) -> None:
    d.ellipse([(c[0] - rad) * size, (c[1] - rad) * size, (c[0] + rad) * size, (c[1] + rad) * size], fill=fill)


def _depth(mask: np.ndarray) -> np.ndarray:
    """Chessboard distance of every True pixel to the nearest False pixel or the border."""
    d = np.zeros(mask.shape, dtype=np.int32)
    cur = mask.copy()
    while cur.any():
        d += cur
        p = np.pad(cur, 1, constant_values=False)
        nxt = cur.copy()
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                nxt &= p[dy : dy + cur.shape[0], dx : dx + cur.shape[1]]
        cur = nxt
    return d


def _deepest(mask: np.ndarray, avoid: Point | None = None, min_gap: float = 0.0) -> Point | None:
    if not mask.any():
        return None
    size = mask.shape[0]
    d = _depth(mask).astype(np.float64)
    ys, xs = np.nonzero(mask)
    cy, cx = ys.mean(), xs.mean()
    score = d * 1000.0 - np.hypot(*np.meshgrid(np.arange(size) - cx, np.arange(size) - cy, indexing="xy"))
    score[~mask] = -np.inf
    if avoid is not None:
        gy, gx = np.mgrid[0:size, 0:size]
        far = np.hypot((gx + 0.5) / size - avoid[0], (gy + 0.5) / size - avoid[1]) >= min_gap
        if (far & mask).any():
            score[~far] = -np.inf
    y, x = np.unravel_index(int(np.argmax(score)), score.shape)
    return ((x + 0.5) / size, (y + 0.5) / size)


def _half_seed(h: int, size: int) -> list[tuple[int, int]]:
    """Candidate raster pixels (row, col) just inside half-edge ``h`` (rotated)."""
    s, k = h // 2, h % 2
    a, b = CORNERS[s], CORNERS[(s + 1) % 4]
    out = []
    for t in (0.25, 0.15, 0.35, 0.08, 0.42):
        tt = 0.5 * k + t
        px = a[0] + tt * (b[0] - a[0])
        py = a[1] + tt * (b[1] - a[1])
        for inset in (0.5, 1.5, 2.5, 3.5):
            x = px * size + INWARD[s][0] * inset
            y = py * size + INWARD[s][1] * inset
            out.append((min(size - 1, max(0, int(y))), min(size - 1, max(0, int(x)))))
    return out


def _anchors(g: TileGeometry) -> None:
    size = _RASTER
    lab = label_raster(g, size)
    tile, r = g.tile, g.rotation
    c = size // 2
    g.centre_city = any(lab[c, c] == i + 1 for i, _, _ in g.cities)
    # Fields: grow labels from the half-edges over the free pixels (nearest seed wins).
    grown = np.zeros((size, size), dtype=np.int32)
    free = lab == 0
    fields = [(i, s) for i, s in enumerate(tile.segments) if s.kind == FIELD]
    for i, seg in fields:
        for h in seg.halves:
            for y, x in _half_seed(rotate_half(h, r), size):
                if free[y, x] and grown[y, x] == 0:
                    grown[y, x] = i + 1
                    break
    while True:
        todo = free & (grown == 0)
        if not todo.any():
            break
        changed = False
        p = np.pad(grown, 1)
        for dy, dx in ((0, 1), (2, 1), (1, 0), (1, 2)):
            nb = p[dy : dy + size, dx : dx + size]
            take = todo & (nb > 0) & (grown == 0)
            if take.any():
                grown[take] = nb[take]
                changed = True
        if not changed:
            break
    enclosed = [i for i, seg in fields if not seg.halves]
    if enclosed:  # fields touching no edge take the free areas no edge field reached, largest first
        for i, comp in zip(enclosed, _components(free & (grown == 0)), strict=False):
            grown[comp] = i + 1
    for i, seg in fields:
        pos = _deepest(grown == i + 1)
        if pos is None:  # the field has no free pixel: lie on its first half-edge
            if seg.halves:
                y, x = _half_seed(rotate_half(seg.halves[0], r), size)[0]
                pos = ((x + 0.5) / size, (y + 0.5) / size)
            else:
                pos = (0.2, 0.2)
        g.anchors[i] = pos
        g.lying.add(i)
    for i, poly, _ in g.cities:
        seg = tile.segments[i]
        pos = _deepest(lab == i + 1) or _poly_mean(poly)
        g.anchors[i] = pos
        if seg.pennants:
            ppos = _deepest(lab == i + 1, avoid=pos, min_gap=0.24) or pos
            if ppos == pos:
                ppos = (min(0.85, pos[0] + 0.18), max(0.15, pos[1] - 0.12))
            g.pennants.append((i, seg.pennants, ppos))
    for i, lines in g.roads:
        if len(lines[0]) == 3 and not g.buildings and lab[c, c] == i + 1:
            g.anchors[i] = CENTRE
        else:
            ex, ey = lines[0][0]
            g.anchors[i] = (ex + 0.55 * (0.5 - ex), ey + 0.55 * (0.5 - ey))
    for i, _, (bx, by) in g.buildings:
        g.anchors[i] = (bx + 0.18, by + 0.1)  # beside the building's door, so the building stays visible
    for i, _, _ in g.rivers:
        g.anchors[i] = CENTRE
    for i, seg in enumerate(tile.segments):
        if seg.tags and seg.kind != FIELD:
            ax, ay = g.anchors.get(i, CENTRE)
            for j, tag in enumerate(sorted(seg.tags)):
                g.tags.append((i, tag, (min(0.9, max(0.1, ax + 0.2 + 0.12 * j)), min(0.9, max(0.1, ay)))))


def _poly_mean(poly: list[Point]) -> Point:
    return (sum(p[0] for p in poly) / len(poly), sum(p[1] for p in poly) / len(poly))


_CACHE: dict[tuple[int, int], TileGeometry] = {}


def tile_geometry(tile: TileType, rotation: int) -> TileGeometry:
    """The (cached) geometry of ``tile`` turned ``rotation`` quarter turns clockwise."""
    key = (id(tile), rotation)
    g = _CACHE.get(key)
    if g is None or g.tile is not tile:
        g = _build(tile, rotation)
        _CACHE[key] = g
    return g
