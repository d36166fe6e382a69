"""The board as SVG (the env's ``svg`` render mode, notebooks and the play page), drawn from the tile data.

Contract
--------
``render_svg(game, tile_px=64, highlight_legal=False, view=None, panel=True, marks=()) -> str`` is a
standalone SVG document with the look of :func:`~carc_env.render.render_image`: the placed tiles,
one empty ring of cells around them (on a printed board, the whole board), the followers in the
player colours, the last placed tile outlined, absolute coordinates on the axes, and (``panel``) a
side panel with the turn, phase, drawn tile, scores and followers, and the expansions' status lines.

* Tiles are drawn by the picture's own painter (:func:`carc_env.render.paint.paint_tile`: the same
  polygons, roads, rivers, walls, pennants, buildings and tags, from :mod:`carc_env.render.geometry`)
  on :class:`SvgDraw`, a pen that records Pillow's ``ImageDraw`` calls as SVG elements.  A building
  kind's ``decorate`` and a tag's picture come from the plug-ins' drawing parts
  (:mod:`carc_env.render.expansions`) and draw on it the same way.
* What plug-ins draw over the board (``Drawing.draw_image``: the City of Carcassonne's quarters and
  the Count, the map's sea, towns and large cities, linked gates, thieves' rings, the Sagrada
  Familia's frame) is drawn by the plug-in itself with ``canvas.pen`` above the tiles and below the
  followers (the same order as the picture): vector elements in one ``<g class="plugin"
  data-plugin=KEY>`` per plug-in, with the plug-in's named groups inside (``count-quarter``,
  ``map-town``, ``glass-thief`` ...); the side panel's plug-in blocks (Stained Glass's windows) in a
  ``<g class="panel-block">``.  Only a user's plug-in that draws on ``canvas.img`` (``vector`` not
  set) is embedded as a picture.  So the SVG shows what the picture shows, and this module names no
  expansion.
* ``highlight_legal`` tints the cells where the drawn tile fits.  Every cell of the board is a
  ``<rect class="cell">`` with ``data-x``/``data-y`` (absolute coordinates); a legal one also has the
  class ``legal`` and ``data-rots`` (its legal rotations, e.g. ``"0,2"``), so a page can make them
  clickable.  Followers are ``<g class="follower" data-player=...>``.
* ``marks``: extra labels drawn over cells, ``(x, y, text, opacity)`` (the play page's policy
  inspector writes the top placements' probabilities there).

Coordinates: the board's cell ``(x, y)`` has its top-left corner at SVG point
``(left + (x - x0) * tile_px, top + (y - y0) * tile_px)``; :func:`svg_layout` returns those numbers.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from PIL import Image

from ..core.tiles import TileType
from .expansions import Canvas, drawings, guests, panel_blocks, status_lines
from .geometry import TileGeometry, tile_geometry
from .image import ImagePen
from .paint import (
    BACKGROUND,
    DIM_TEXT,
    EMPTY_COLOUR,
    FIELD_COLOUR,
    GRID_COLOUR,
    GUEST_RING_COLOUR,
    LAST_COLOUR,
    LEGAL_COLOUR,
    MEEPLE,
    MEEPLE_PAD,
    TEXT_COLOUR,
    meeple_edge,
    paint_tile,
    player_colour,
)


def colour(c: Any) -> str:
    """An SVG colour from a Pillow colour (RGB or RGBA tuple, or None for none)."""
    if c is None:
        return "none"
    if isinstance(c, str):
        return c
    return f"rgb({int(c[0])},{int(c[1])},{int(c[2])})"


def _opacity(c: Any, attr: str) -> str:
    if isinstance(c, tuple) and len(c) == 4 and c[3] < 255:
        return f' {attr}-opacity="{c[3] / 255:.3f}"'
    return ""


def _n(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def _pts(pts: Iterable[Sequence[float]]) -> str:
    return " ".join(f"{_n(x)},{_n(y)}" for x, y in pts)


def _flat(xy: Any) -> list[tuple[float, float]]:
    """Pillow's coordinate forms (``[(x, y), ...]`` or ``[x0, y0, x1, y1, ...]``) as a list of points."""
    xy = list(xy)
    if xy and not isinstance(xy[0], (tuple, list)):
        return [(float(xy[i]), float(xy[i + 1])) for i in range(0, len(xy), 2)]
    return [(float(p[0]), float(p[1])) for p in xy]


class SvgDraw:
    """A pen (:mod:`carc_env.render.paint`) that records the ``ImageDraw`` calls (``rectangle``,
    ``rounded_rectangle``, ``polygon``, ``line``, ``ellipse``, ``text``) and ``meeple`` / ``group`` as SVG
    elements, so one drawing function serves the picture and the SVG."""

    vector = True

    def __init__(self) -> None:
        self.parts: list[str] = []

    def _paint(self, fill: Any, outline: Any, width: float) -> str:
        out = f'fill="{colour(fill)}"' + _opacity(fill, "fill")
        if outline is not None:
            out += f' stroke="{colour(outline)}" stroke-width="{_n(width or 1)}"' + _opacity(outline, "stroke")
        return out

    def rectangle(self, xy: Any, fill: Any = None, outline: Any = None, width: float = 1) -> None:
        (x0, y0), (x1, y1) = _flat(xy)[:2]
        self.parts.append(
            f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" height="{_n(y1 - y0)}" '
            f"{self._paint(fill, outline, width)}/>"
        )

    def rounded_rectangle(
        self, xy: Any, radius: float = 0, fill: Any = None, outline: Any = None, width: float = 1
    ) -> None:
        (x0, y0), (x1, y1) = _flat(xy)[:2]
        self.parts.append(
            f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" height="{_n(y1 - y0)}" rx="{_n(radius)}" '
            f"{self._paint(fill, outline, width)}/>"
        )

    def polygon(self, xy: Any, fill: Any = None, outline: Any = None, width: float = 1) -> None:
        self.parts.append(f'<polygon points="{_pts(_flat(xy))}" {self._paint(fill, outline, width)}/>')

    def line(self, xy: Any, fill: Any = None, width: float = 1, joint: str | None = None) -> None:
        self.parts.append(
            f'<polyline points="{_pts(_flat(xy))}" fill="none" stroke="{colour(fill)}" stroke-width="{_n(width)}" '
            f'stroke-linejoin="round"{_opacity(fill, "stroke")}/>'
        )

    def ellipse(self, xy: Any, fill: Any = None, outline: Any = None, width: float = 1) -> None:
        (x0, y0), (x1, y1) = _flat(xy)[:2]
        self.parts.append(
            f'<ellipse cx="{_n((x0 + x1) / 2)}" cy="{_n((y0 + y1) / 2)}" rx="{_n((x1 - x0) / 2)}" '
            f'ry="{_n((y1 - y0) / 2)}" {self._paint(fill, outline, width)}/>'
        )

    def text(self, xy: Any, text: str, fill: Any = None, font: Any = None, **_: Any) -> None:
        x, y = xy
        size = getattr(font, "size", 11)
        self.parts.append(
            f'<text x="{_n(x)}" y="{_n(y + 0.8 * size)}" font-size="{size}" font-family="sans-serif" '
            f'fill="{colour(fill)}">{escape(str(text))}</text>'
        )

    def meeple(self, player: int, x: float, y: float, size: float, lying: bool = False) -> None:
        """A meeple in the box of ``size`` whose top-left corner is (x, y) (as the picture's sprite)."""
        k = size * (1 - 2 * MEEPLE_PAD)
        self.parts.append(f'<g class="meeple" data-player="{player}" transform="translate({_n(x + size / 2)},'
                          f'{_n(y + size / 2)})">{meeple_svg(player, k, lying)}</g>')  # fmt: skip

    @contextlib.contextmanager
    def group(self, name: str, /, **data: Any) -> Iterator[None]:
        """Wrap what is drawn inside in ``<g class=name data-KEY=VALUE ...>``."""
        attrs = "".join(f' data-{k.replace("_", "-")}="{escape(str(v))}"' for k, v in data.items())
        self.parts.append(f'<g class="{escape(name)}"{attrs}>')
        try:
            yield
        finally:
            self.parts.append("</g>")

    def svg(self) -> str:
        return "".join(self.parts)


# ------------------------------------------------------------------------------------------- tiles
def draw_tile_svg(g: TileGeometry, s: float) -> str:
    """SVG elements drawing one tile geometry in the square ``(0, 0)..(s, s)`` (the picture's layers, in order)."""
    d = SvgDraw()
    d.rectangle([0, 0, s, s], fill=FIELD_COLOUR)
    paint_tile(d, g, s, lambda frac: max(1.0, frac * s))
    d.rectangle([0, 0, s, s], fill=None, outline=(0, 0, 0, 80), width=max(1.0, s / 64))
    return d.svg()


_TILE_CACHE: dict[tuple[int, int, int], tuple[TileType, str]] = {}


def tile_svg(tile: TileType, rotation: int, tile_px: int = 64) -> str:
    """SVG elements of ``tile`` turned ``rotation`` quarter turns, in ``(0, 0)..(tile_px, tile_px)`` (cached)."""
    key = (id(tile), rotation, tile_px)
    hit = _TILE_CACHE.get(key)
    if hit is None or hit[0] is not tile:
        hit = (tile, draw_tile_svg(tile_geometry(tile, rotation), tile_px))
        _TILE_CACHE[key] = hit
    return hit[1]


def tile_document(tile: TileType, rotation: int = 0, tile_px: int = 64) -> str:
    """One tile as a standalone SVG document."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{tile_px}" height="{tile_px}" '
            f'viewBox="0 0 {tile_px} {tile_px}">{tile_svg(tile, rotation, tile_px)}</svg>')  # fmt: skip


# ----------------------------------------------------------------------------------------- meeples
@functools.lru_cache(maxsize=64)
def meeple_svg(player: int, size: float, lying: bool = False) -> str:
    """A meeple ``size`` wide centred on (0, 0) in the player's colour, with a contrasting outline."""
    c = player_colour(player)
    edge = colour(meeple_edge(c))
    pts = [((x - 0.5) * size, (y - 0.5) * size) for x, y in MEEPLE]
    rot = ' transform="rotate(90)"' if lying else ""
    return (
        f'<g{rot}><polygon points="{_pts(pts)}" fill="{colour(c)}" stroke="{edge}" stroke-width="{_n(0.07 * size)}" '
        f'stroke-linejoin="round"/><circle cx="0" cy="{_n(-0.3 * size)}" r="{_n(0.15 * size)}" fill="{colour(c)}" '
        f'stroke="{edge}" stroke-width="{_n(0.07 * size)}"/></g>'
    )


def _png_data(img: Image.Image) -> str:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# ------------------------------------------------------------------------------------------- board
def svg_view(game: Any) -> tuple[int, int, int, int]:
    """``(min_x, max_x, min_y, max_y)`` of the cells :func:`render_svg` shows by default: the placed tiles
    and one empty ring (on a printed board, the whole board and one ring)."""
    xs = [p[0] for p in game.placements] or [0]
    ys = [p[1] for p in game.placements] or [0]
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    layout = getattr(game.rules, "layout", None)
    if layout is not None:
        bx0, bx1, by0, by1 = layout.bounds
        x0, x1, y0, y1 = min(x0, bx0 - 1), max(x1, bx1 + 1), min(y0, by0 - 1), max(y1, by1 + 1)
    return x0, x1, y0, y1


@dataclass(frozen=True)
class SvgLayout:
    """Where :func:`render_svg` puts the board: cell (x, y)'s top-left corner is
    ``(left + (x - x0) * tile_px, top + (y - y0) * tile_px)``."""

    x0: int
    x1: int
    y0: int
    y1: int
    tile_px: int
    left: int
    top: int
    width: int
    height: int

    def cell_origin(self, x: int, y: int) -> tuple[int, int]:
        return self.left + (x - self.x0) * self.tile_px, self.top + (y - self.y0) * self.tile_px


def svg_layout(game: Any, tile_px: int = 64, view: tuple[int, int, int, int] | None = None) -> SvgLayout:
    """The board's placement in :func:`render_svg`'s output (without the panel)."""
    x0, x1, y0, y1 = view if view is not None else svg_view(game)
    if x1 < x0 or y1 < y0:
        raise ValueError(f"view must be (min_x, max_x, min_y, max_y) with min <= max, got {view!r}")
    fs = _font_px(tile_px)
    left, top = fs * 3, fs * 2
    return SvgLayout(x0, x1, y0, y1, tile_px, left, top,
                     left + (x1 - x0 + 1) * tile_px + fs, top + (y1 - y0 + 1) * tile_px + fs)  # fmt: skip


def _font_px(tile_px: int) -> int:
    return max(11, min(20, round(8 + tile_px / 8)))


def board_svg(
    game: Any,
    lay: SvgLayout,
    highlight_legal: bool = False,
    marks: Sequence[tuple[int, int, str, float]] = (),
) -> str:
    """The board's SVG elements (no ``<svg>`` wrapper): cells, tiles, plug-in layer, followers, axes, marks."""
    tp = lay.tile_px
    x0, x1, y0, y1 = lay.x0, lay.x1, lay.y0, lay.y1
    out: list[str] = []
    bw, bh = (x1 - x0 + 1) * tp, (y1 - y0 + 1) * tp
    out.append(f'<rect x="{lay.left}" y="{lay.top}" width="{bw}" height="{bh}" fill="{colour(EMPTY_COLOUR)}"/>')
    legal: dict[tuple[int, int], list[int]] = {}
    if highlight_legal and game.phase == "tile" and not game.over:
        fx, fy, masks = game.frontier()
        for x, y, m in zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True):
            if m:
                legal[(x, y)] = [q for q in range(4) if m >> q & 1]
    tiles = game.rules.tiles
    # the tiles, each a <g> translated to its cell
    for x, y, t, r, _ in game.placements:
        if x0 <= x <= x1 and y0 <= y <= y1:
            ox, oy = lay.cell_origin(x, y)
            out.append(f'<g class="tile" data-x="{x}" data-y="{y}" transform="translate({ox},{oy})">'
                       f"{tile_svg(tiles[t], r, tp)}</g>")  # fmt: skip
    out.extend(plugin_marks(game, lay))
    # every cell as a (transparent) target with its coordinates; legal ones tinted
    grid = colour(GRID_COLOUR)
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            ox, oy = lay.cell_origin(x, y)
            rots = legal.get((x, y))
            if rots is None:
                occupied = (x, y) in game.board
                out.append(f'<rect class="cell" data-x="{x}" data-y="{y}" x="{ox}" y="{oy}" width="{tp}" height="{tp}" '
                           f'fill="none" stroke="{grid}" stroke-width="{0 if occupied else 1}"/>')  # fmt: skip
            else:
                out.append(
                    f'<rect class="cell legal" data-x="{x}" data-y="{y}" data-rots="{",".join(map(str, rots))}" '
                    f'x="{ox + 1}" y="{oy + 1}" width="{tp - 2}" height="{tp - 2}" fill="{colour(LEGAL_COLOUR)}" '
                    f'fill-opacity="0.35" stroke="{colour(LEGAL_COLOUR)}" stroke-width="{max(1, tp // 32)}"/>'
                )
    if game.history and game.placements:
        x, y = game.placements[-1][:2]
        if x0 <= x <= x1 and y0 <= y <= y1:
            ox, oy = lay.cell_origin(x, y)
            lw = max(2, tp // 20)
            out.append(f'<rect class="last" x="{ox + lw / 2}" y="{oy + lw / 2}" width="{tp - lw}" height="{tp - lw}" '
                       f'fill="none" stroke="{colour(LAST_COLOUR)}" stroke-width="{lw}"/>')  # fmt: skip
    out.extend(_followers(game, lay))
    fs = _font_px(tp)
    for i in range(x1 - x0 + 1):
        out.append(f'<text x="{lay.left + i * tp + tp / 2}" y="{lay.top - fs // 2}" text-anchor="middle" '
                   f'font-size="{fs}" font-family="sans-serif" fill="{colour(DIM_TEXT)}">{x0 + i}</text>')  # fmt: skip
    for j in range(y1 - y0 + 1):
        out.append(f'<text x="{lay.left - fs // 2}" y="{lay.top + j * tp + tp / 2 + fs / 3}" text-anchor="end" '
                   f'font-size="{fs}" font-family="sans-serif" fill="{colour(DIM_TEXT)}">{y0 + j}</text>')  # fmt: skip
    for x, y, text, alpha in marks:
        if x0 <= x <= x1 and y0 <= y <= y1:
            ox, oy = lay.cell_origin(x, y)
            out.append(
                f'<g class="mark" data-x="{x}" data-y="{y}"><rect x="{ox + 3}" y="{oy + tp * 0.3}" width="{tp - 6}" '
                f'height="{tp * 0.4}" rx="4" fill="rgb(20,20,30)" fill-opacity="{0.35 + 0.5 * alpha:.2f}"/>'
                f'<text x="{ox + tp / 2}" y="{oy + tp / 2 + fs / 3}" text-anchor="middle" font-size="{fs}" '
                f'font-family="sans-serif" font-weight="bold" fill="white">{escape(text)}</text></g>'
            )
    return "".join(out)


def board_canvas(lay: SvgLayout, pen: Any = None, img: Any = None) -> Canvas:
    """A :class:`~carc_env.render.expansions.Canvas` with the board geometry of ``lay``."""
    return Canvas(img, lay.tile_px, lay.left, lay.top, lay.x0, lay.x1, lay.y0, lay.y1, pen=pen)


def plugin_marks(game: Any, lay: SvgLayout) -> list[str]:
    """What the plug-ins draw over the board, above the tiles and below the followers: each vector
    drawing's elements in ``<g class="plugin" data-plugin=KEY>``; a drawing that is not vector draws
    on a transparent picture embedded as an ``<image>``."""
    out = []
    for drawing in drawings(game.rules):
        if drawing.vector:
            pen = SvgDraw()
            drawing.draw_image(game, board_canvas(lay, pen))
            if pen.parts:
                out.append(f'<g class="plugin" data-plugin="{escape(drawing.key)}">{pen.svg()}</g>')
            continue
        layer = Image.new("RGBA", (lay.width, lay.height), (0, 0, 0, 0))
        drawing.draw_image(game, board_canvas(lay, ImagePen(layer), layer))
        if layer.getbbox() is not None:
            out.append(f'<image class="plugin" data-plugin="{escape(drawing.key)}" x="0" y="0" '
                       f'width="{lay.width}" height="{lay.height}" href="{_png_data(layer)}"/>')  # fmt: skip
    return out


def follower_spot_centre(game: Any, lay: SvgLayout, x: int, y: int, segment: int) -> tuple[float, float]:
    """SVG point where a follower on ``segment`` of the tile at (x, y) stands."""
    _, _, t, r, _ = game.placements[game.board[(x, y)]]
    g = tile_geometry(game.rules.tiles[t], r)
    ax, ay = g.anchors.get(segment, (0.5, 0.5))
    ox, oy = lay.cell_origin(x, y)
    return ox + ax * lay.tile_px, oy + ay * lay.tile_px


def _followers(game: Any, lay: SvgLayout) -> list[str]:
    tp = lay.tile_px
    size = max(8.0, 0.36 * tp)
    tiles = game.rules.tiles
    out = []
    for node, p in sorted(game.followers.items()):
        x, y, t, r, base = game.placements[game.node_tile[node]]
        if not (lay.x0 <= x <= lay.x1 and lay.y0 <= y <= lay.y1):
            continue
        g = tile_geometry(tiles[t], r)
        seg = node - base
        lying = seg in g.lying
        cx, cy = follower_spot_centre(game, lay, x, y, seg)
        if not lying:
            cy -= 0.06 * tp
        out.append(f'<g class="follower" data-player="{p}" transform="translate({_n(cx)},{_n(cy)})">'
                   f"{meeple_svg(p, size, lying)}</g>")  # fmt: skip
    for j, gst in enumerate(guests(game)):
        if not (lay.x0 <= gst.x <= lay.x1 and lay.y0 <= gst.y <= lay.y1):
            continue
        cx, cy = follower_spot_centre(game, lay, gst.x, gst.y, gst.segment)
        cx += (0.14 * (j % 3) - 0.14) * tp
        cy -= 0.06 * tp
        out.append(
            f'<g class="follower guest" data-player="{gst.player}" transform="translate({_n(cx)},{_n(cy)})">'
            f'<circle r="{_n(0.62 * size)}" fill="none" stroke="{colour(GUEST_RING_COLOUR)}" '
            f'stroke-width="{max(2, tp // 24)}"/>{meeple_svg(gst.player, size)}</g>'
        )
    return out


# ------------------------------------------------------------------------------------------- panel
def _panel(game: Any, x: int, tp: int) -> tuple[str, int, int]:
    """The side panel's SVG at x offset ``x``: its elements, width and height."""
    fs = _font_px(tp)
    line = fs + fs // 3 + 2
    pad = fs // 2 + 4
    n = game.num_players
    d = SvgDraw()
    rows: list[tuple[str, Any, int | None]] = []
    if game.over:
        best = max(game.scores)
        rows.append(("Game over", TEXT_COLOUR, None))
        rows.append(("Winner: " + ", ".join(f"P{p}" for p in range(n) if game.scores[p] == best), TEXT_COLOUR, None))
    else:
        rows.append((f"Turn {game.turn + 1}", TEXT_COLOUR, None))
        rows.append((f"Phase: {game.phase}", TEXT_COLOUR, None))
        rows.append((f"To move: P{game.player}", TEXT_COLOUR, game.player))
    rows.append((f"Tiles left: {game.bag_size}", TEXT_COLOUR, None))
    rows.append((f"Drawn tile: {game.tile_id or '-'}", TEXT_COLOUR, None))
    width = 260
    y = pad
    body: list[str] = []
    for text, c, who in rows:
        body.append(_text(x + pad + (fs + 4 if who is not None else 0), y, text, c, fs))
        if who is not None:
            d.rectangle([x + pad, y + 2, x + pad + fs - 2, y + fs], fill=player_colour(who), outline=(0, 0, 0))
        y += line
    dp = max(48, tp)
    if game.tile_id:
        tile = game.rules.tiles[game.rules.tile_index[game.tile_id]]
        body.append(f'<g transform="translate({x + pad},{y})">{tile_svg(tile, 0, dp)}</g>')
    else:
        d.rectangle([x + pad, y, x + pad + dp, y + dp], outline=DIM_TEXT)
    y += dp + 10
    for p in range(n):
        body.append(f'<g transform="translate({x + pad + fs / 2},{y + fs / 2})">{meeple_svg(p, fs + 4)}</g>')
        body.append(_text(x + pad + fs + 8, y, f"P{p}: {game.scores[p]} pts, followers {game.supply[p]}/"
                                             f"{game.rules.followers}", TEXT_COLOUR, fs))  # fmt: skip
        y += line
    y += 6
    for s in status_lines(game):
        tx = x + pad
        if s.player is not None:
            d.rectangle([tx, y + 2, tx + fs - 2, y + fs], fill=player_colour(s.player), outline=(0, 0, 0))
            tx += fs + 4
        body.append(_text(tx, y, s.text, TEXT_COLOUR, fs))
        width = max(width, int(len(s.text) * fs * 0.55) + 2 * pad + fs)
        y += line
    for b in panel_blocks(game, fs):
        y += 8
        body.append(panel_block_svg(b, x + pad, y))
        width = max(width, b.width + 2 * pad)
        y += b.height
    bg = f'<rect x="{x}" y="0" width="{width}" height="100%" fill="rgb(40,45,55)"/>'
    return bg + d.svg() + "".join(body), width, y + pad


def panel_block_svg(b: Any, x: float, y: float) -> str:
    """A plug-in's panel block (:class:`~carc_env.render.expansions.PanelBlock`) with its top-left corner
    at (x, y): vector elements, or a picture for a block that is not ``vector``."""
    if b.vector:
        pen = SvgDraw()
        b.draw(pen, x, y)
        return f'<g class="panel-block">{pen.svg()}</g>'
    layer = Image.new("RGBA", (b.width, b.height), (0, 0, 0, 0))
    b.draw(layer, 0, 0)
    return (f'<image class="panel-block" x="{_n(x)}" y="{_n(y)}" width="{b.width}" height="{b.height}" '
            f'href="{_png_data(layer)}"/>')  # fmt: skip


def panel_documents(game: Any, font_px: int = 13) -> list[str]:
    """The plug-ins' panel blocks, each as a standalone SVG document (the play page shows them beside the board)."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{b.width}" height="{b.height}" '
        f'viewBox="0 0 {b.width} {b.height}">{panel_block_svg(b, 0, 0)}</svg>'
        for b in panel_blocks(game, font_px)
    ]


def _text(x: float, y: float, text: str, c: Any, fs: int) -> str:
    return (f'<text x="{_n(x)}" y="{_n(y + 0.8 * fs)}" font-size="{fs}" font-family="sans-serif" '
            f'fill="{colour(c)}">{escape(text)}</text>')  # fmt: skip


def render_svg(
    game: Any,
    tile_px: int = 64,
    highlight_legal: bool = False,
    view: tuple[int, int, int, int] | None = None,
    panel: bool = True,
    marks: Sequence[tuple[int, int, str, float]] = (),
) -> str:
    """The game as a standalone SVG document; see the module docstring."""
    if isinstance(tile_px, bool) or not isinstance(tile_px, int) or tile_px < 8:
        raise ValueError(f"tile_px must be an integer >= 8, got {tile_px!r}")
    lay = svg_layout(game, tile_px, view)
    board = board_svg(game, lay, highlight_legal, marks)
    width, height = lay.width, lay.height
    side = ""
    if panel:
        side, pw, ph = _panel(game, lay.width, tile_px)
        width += pw
        height = max(height, ph)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f'<rect width="100%" height="100%" fill="{colour(BACKGROUND)}"/>{board}{side}</svg>'
    )


__all__ = ["SvgDraw", "SvgLayout", "board_canvas", "board_svg", "draw_tile_svg", "plugin_marks", "follower_spot_centre", "meeple_svg",
           "panel_block_svg", "panel_documents", "render_svg", "svg_layout", "svg_view", "tile_document", "tile_svg"]  # fmt: skip
