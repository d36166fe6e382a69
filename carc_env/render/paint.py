"""What the picture and the SVG draw alike: the colours, the tile layers, the building glyph, the meeple.

Contract
--------
Both renderers (:mod:`carc_env.render.image`, Pillow pixels; :mod:`carc_env.render.svg`, vector
elements) draw through one small surface, the ``ImageDraw`` methods ``rectangle``,
``rounded_rectangle``, ``polygon``, ``line``, ``ellipse`` and ``text``: Pillow's ``ImageDraw`` is
one, :class:`carc_env.render.svg.SvgDraw` records the same calls as SVG elements.  A *pen* adds
two things to that surface, so that a plug-in's drawing serves both renderers unchanged:

* ``meeple(player, x, y, size, lying=False)``: a follower in the player's colour in the box of
  ``size`` pixels whose top-left corner is (x, y);
* ``group(name, **data)``: a context manager naming what is drawn inside it (an SVG ``<g
  class=name data-KEY=VALUE>``; nothing in a picture), so a page or a test can find a plug-in's marks.

:func:`paint_tile` draws one tile geometry in the square ``(0, 0)..(s, s)``; ``width(frac)`` turns a
line width given as a fraction of the tile into the renderer's units (whole pixels in the picture,
exact in the SVG).  Everything here is derived from the tile data (:mod:`carc_env.render.geometry`).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .expansions import building_style, tag_style
from .geometry import BUILDING_SIZE, CORNERS, INTERIOR_W, RIVER_W, ROAD_EDGE_W, ROAD_W, WALL_W, Point, TileGeometry

Colour = tuple[int, int, int]

FIELD_COLOUR: Colour = (112, 168, 70)
CITY_COLOUR: Colour = (212, 164, 104)
WALL_COLOUR: Colour = (120, 78, 40)
ROAD_COLOUR: Colour = (243, 237, 220)
ROAD_EDGE_COLOUR: Colour = (150, 138, 112)
JUNCTION_COLOUR: Colour = (96, 84, 70)
RIVER_COLOUR: Colour = (58, 128, 220)
INTERIOR_COLOUR: Colour = (128, 128, 128)
PENNANT_COLOUR: Colour = (38, 70, 170)
PENNANT_EDGE: Colour = (246, 246, 246)
BACKGROUND: Colour = (30, 34, 42)
EMPTY_COLOUR: Colour = (44, 50, 60)
GRID_COLOUR: Colour = (36, 41, 50)
TEXT_COLOUR: Colour = (228, 230, 235)
DIM_TEXT: Colour = (150, 156, 168)
LAST_COLOUR: Colour = (255, 255, 255)
LEGAL_COLOUR: Colour = (255, 214, 40)
WALLS_COLOUR: Colour = (236, 226, 204)  # building walls
DOOR_COLOUR: Colour = (70, 50, 40)
GUEST_RING_COLOUR: Colour = (255, 200, 36)  # gold ring round a follower with no segment under it
BUILDING_OUTLINE: Colour = (60, 44, 36)

PLAYER_COLOURS: tuple[Colour, ...] = (
    (222, 36, 36),  # red
    (36, 98, 232),  # blue
    (250, 206, 20),  # yellow
    (152, 64, 206),  # purple
    (24, 24, 24),  # black
)
BUILDING_ROOFS: dict[str, Colour] = {"cloister": (186, 52, 40)}
"""Roofs of the core's building kinds; a plug-in's drawing gives its own kinds' (``building_styles``)."""

MEEPLE: list[Point] = [
    (0.33, 0.34), (0.10, 0.42), (0.02, 0.52), (0.06, 0.60), (0.28, 0.58), (0.14, 0.98),
    (0.42, 0.98), (0.50, 0.82), (0.58, 0.98), (0.86, 0.98), (0.72, 0.58), (0.94, 0.60),
    (0.98, 0.52), (0.90, 0.42), (0.67, 0.34),
]  # fmt: skip
"""The meeple's body outline in a unit square (the head is a circle of radius 0.15 at (0.5, 0.2))."""
MEEPLE_PAD = 0.08
"""The margin a meeple keeps inside its box, as a fraction of the box (room for its outline)."""

Width = Callable[[float], float]


def player_colour(p: int) -> Colour:
    """Colour of player ``p`` (cycled past the fifth player)."""
    return PLAYER_COLOURS[p % len(PLAYER_COLOURS)]


def meeple_edge(c: Colour) -> Colour:
    """The outline that contrasts with a meeple of colour ``c``."""
    return (235, 235, 235) if sum(c) < 200 else (16, 16, 16)


def name_colour(name: str) -> Colour:
    """A stable colour derived from a name (building kinds and tags no plug-in styles)."""
    h = zlib.crc32(name.encode())
    return (60 + h % 160, 60 + (h >> 8) % 160, 60 + (h >> 16) % 160)


def building_roof(kind: str) -> Colour:
    return building_style(kind).roof or BUILDING_ROOFS.get(kind) or name_colour(kind)


@contextlib.contextmanager
def no_group(name: str) -> Iterator[None]:
    """``group`` for pens that draw pixels: names nothing."""
    yield


def paint_building(d: Any, kind: str, c: Point, size: float, s: float, width: Width) -> None:
    """A small building glyph centred on ``c`` (normalised), ``size`` wide, on a tile of ``s`` units."""
    cx, cy, g = c[0] * s, c[1] * s, size * s
    ow = width(0.012)
    d.rectangle(
        [cx - 0.32 * g, cy - 0.06 * g, cx + 0.32 * g, cy + 0.42 * g],
        fill=WALLS_COLOUR,
        outline=BUILDING_OUTLINE,
        width=ow,
    )
    d.polygon(
        [(cx - 0.46 * g, cy - 0.04 * g), (cx, cy - 0.42 * g), (cx + 0.46 * g, cy - 0.04 * g)],
        fill=building_roof(kind),
        outline=BUILDING_OUTLINE,
        width=ow,
    )
    d.rectangle([cx - 0.08 * g, cy + 0.16 * g, cx + 0.08 * g, cy + 0.42 * g], fill=DOOR_COLOUR)
    decorate = building_style(kind).decorate
    if decorate is not None:  # e.g. the church's cross
        decorate(d, cx, cy, g, BUILDING_OUTLINE)


def paint_pennant(d: Any, c: Point, s: float, width: Width, size: float = 0.15) -> None:
    """A pennant (blue shield) centred on ``c``."""
    cx, cy, k = c[0] * s, c[1] * s, size * s
    pts = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.08), (0.0, 0.58), (-0.5, 0.08)]
    d.polygon([(cx + x * k, cy + y * k) for x, y in pts], fill=PENNANT_COLOUR, outline=PENNANT_EDGE, width=width(0.018))
    d.line([(cx, cy - 0.36 * k), (cx, cy + 0.36 * k)], fill=PENNANT_EDGE, width=width(0.012))


def paint_tag(d: Any, tag: str, pos: Point, s: float) -> None:
    """A feature tag: its plug-in's picture, else a small diamond in a colour derived from its name."""
    style = tag_style(tag)
    if style is not None:
        style.draw(d, pos, s)
        return
    cx, cy, k = pos[0] * s, pos[1] * s, 0.07 * s
    d.polygon([(cx, cy - k), (cx + k, cy), (cx, cy + k), (cx - k, cy)], fill=name_colour(tag), outline=(20, 20, 20))


def paint_tile(d: Any, g: TileGeometry, s: float, width: Width) -> None:
    """The layers of one tile over its field colour (the caller fills the square): grey ``-`` bands,
    rivers, roads, cities and walls, pennants, buildings, tags."""

    def sc(pts: Sequence[Point]) -> list[tuple[float, float]]:
        return [(x * s, y * s) for x, y in pts]

    for side in g.interior_sides:
        d.line(sc([CORNERS[side], CORNERS[(side + 1) % 4]]), fill=INTERIOR_COLOUR, width=width(2 * INTERIOR_W))
    for _, lines, pond in g.rivers:
        for ln in lines:
            d.line(sc(ln), fill=RIVER_COLOUR, width=width(RIVER_W), joint="curve")
        if pond:
            r = 0.15 * s
            d.ellipse([s / 2 - r, s / 2 - r, s / 2 + r, s / 2 + r], fill=RIVER_COLOUR)
    if g.rivers:  # round the river's bend at the centre
        r = RIVER_W * s / 2
        d.ellipse([s / 2 - r, s / 2 - r, s / 2 + r, s / 2 + r], fill=RIVER_COLOUR)
    for _, lines in g.roads:
        for ln in lines:
            d.line(sc(ln), fill=ROAD_EDGE_COLOUR, width=width(ROAD_W + 2 * ROAD_EDGE_W), joint="curve")
    for _, lines in g.roads:
        for ln in lines:
            d.line(sc(ln), fill=ROAD_COLOUR, width=width(ROAD_W), joint="curve")
    if g.junction:
        r = 0.085 * s
        d.ellipse([s / 2 - r, s / 2 - r, s / 2 + r, s / 2 + r], fill=JUNCTION_COLOUR, outline=ROAD_EDGE_COLOUR)
    for _, poly, _ in g.cities:
        d.polygon(sc(poly), fill=CITY_COLOUR)
    for _, _, walls in g.cities:
        for wall in walls:
            d.line(sc(wall), fill=WALL_COLOUR, width=width(WALL_W), joint="curve")
    for _, count, pos in g.pennants:
        for j in range(count):
            paint_pennant(d, (pos[0] + 0.09 * j, pos[1]), s, width)
    for _, kind, pos in g.buildings:
        paint_building(d, kind, pos, BUILDING_SIZE * (0.75 if len(g.buildings) > 2 else 1.0), s, width)
    for _, tag, pos in g.tags:
        paint_tag(d, tag, pos, s)


__all__ = [
    "BACKGROUND", "BUILDING_OUTLINE", "BUILDING_ROOFS", "CITY_COLOUR", "DIM_TEXT", "DOOR_COLOUR", "EMPTY_COLOUR",
    "FIELD_COLOUR", "GRID_COLOUR", "GUEST_RING_COLOUR", "INTERIOR_COLOUR", "JUNCTION_COLOUR", "LAST_COLOUR",
    "LEGAL_COLOUR", "MEEPLE", "MEEPLE_PAD", "PENNANT_COLOUR", "PENNANT_EDGE", "PLAYER_COLOURS", "RIVER_COLOUR",
    "ROAD_COLOUR", "ROAD_EDGE_COLOUR", "TEXT_COLOUR", "WALLS_COLOUR", "WALL_COLOUR", "building_roof", "meeple_edge",
    "name_colour", "no_group", "paint_building", "paint_pennant", "paint_tag", "paint_tile", "player_colour",
]  # fmt: skip
