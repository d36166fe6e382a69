"""The board as a picture (the env's ``rgb_array`` mode), drawn from the tile data.

Contract
--------
``render_image(game, tile_px=64, highlight_legal=False) -> np.ndarray`` of
shape ``(H, W, 3)``, dtype ``uint8``.  The board shows the placed tiles
(absolute coordinates on the top and left axes, the start tile at (0, 0)),
one empty ring of cells around them, the followers in player colours and the
last placed tile outlined in white; a side panel on the right shows the turn,
phase, deciding player, the drawn tile (unrotated), the tiles left and each
player's score and followers in supply, then the expansions' status lines
(the same lines as the text header, with a swatch of the player's colour for
a line about one player) and the blocks plug-ins draw there (Stained Glass:
each player's windows).  ``highlight_legal`` tints the cells
where the drawn tile fits (with the legal rotations written in them when the
tiles are large enough).  ``view=(min_x, max_x, min_y, max_y)`` fixes the
shown cells (used for animations, so that every frame has the same size).

Drawing (all derived from the tile data, see :mod:`carc_env.render.geometry`):

* fields green; cities tan polygons with brown walls, one per city segment;
  pennants blue shields; roads light lines with darker verges from each road
  side to the centre (a dot where single-sided roads meet); rivers (``I``
  sides) blue; ``-`` sides a grey band;
* buildings (cloister, and any kind an expansion declares) a small building in
  the centre, the roof colour naming the kind (cloister red; a plug-in's
  drawing gives its kinds' roofs and decorations, e.g. shrine purple, church
  blue with a cross; other kinds a colour derived from the name);
* a feature tag next to its feature: the picture its plug-in's drawing gives
  (the Darmstadtium's element square), else a small diamond;
* then each enabled plug-in's ``draw_image`` (the City of Carcassonne's
  quarters and the Count), in expansion order;
* followers meeples in the player colours (:data:`PLAYER_COLOURS`) standing
  on their city or road or at their building's door, lying on their field;
  followers on a feature with no segment under them (sent from a quarter of
  Carcassonne) stand in a gold ring on the feature's top-left tile outside
  the cells a plug-in draws over.

Tile pictures and meeple sprites are rendered once per tile type, rotation
and size (supersampled, then reduced) and pasted, so a full base-game board
takes a few milliseconds.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from ..core.tiles import TileType
from .expansions import Canvas, drawings, guests, panel_blocks, status_lines
from .geometry import CENTRE, TileGeometry, tile_geometry
from .paint import (  # noqa: F401 - the colours are this module's public names too (plug-ins import them here)
    BACKGROUND,
    BUILDING_ROOFS,
    CITY_COLOUR,
    DIM_TEXT,
    DOOR_COLOUR,
    EMPTY_COLOUR,
    FIELD_COLOUR,
    GRID_COLOUR,
    GUEST_RING_COLOUR,
    INTERIOR_COLOUR,
    JUNCTION_COLOUR,
    LAST_COLOUR,
    LEGAL_COLOUR,
    MEEPLE,
    MEEPLE_PAD,
    PENNANT_COLOUR,
    PENNANT_EDGE,
    PLAYER_COLOURS,
    RIVER_COLOUR,
    ROAD_COLOUR,
    ROAD_EDGE_COLOUR,
    TEXT_COLOUR,
    WALL_COLOUR,
    WALLS_COLOUR,
    Colour,
    building_roof,
    meeple_edge,
    no_group,
    paint_tile,
    player_colour,
)


# --------------------------------------------------------------------- fonts
@functools.lru_cache(maxsize=16)
def font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's built-in default font at ``size`` pixels (no font files needed)."""
    try:
        return ImageFont.load_default(size=size)
    except Exception:  # pragma: no cover - Pillow without FreeType
        return ImageFont.load_default()


def text_width(f: ImageFont.ImageFont | ImageFont.FreeTypeFont, text: str) -> int:
    """Width in pixels of ``text`` in font ``f``."""
    return int(round(f.getlength(text)))


# --------------------------------------------------------------- tile images
def _supersample(tile_px: int) -> int:
    return max(2, min(8, -(-256 // tile_px)))


def draw_tile(g: TileGeometry, s: int) -> Image.Image:
    """Draw one tile geometry on an ``s`` x ``s`` canvas (no supersampling)."""
    im = Image.new("RGB", (s, s), FIELD_COLOUR)
    paint_tile(ImageDraw.Draw(im), g, s, lambda frac: max(1, round(frac * s)))
    return im


_TILE_CACHE: dict[tuple[int, int, int], tuple[TileType, Image.Image]] = {}


def tile_image(tile: TileType, rotation: int, tile_px: int) -> Image.Image:
    """The picture of ``tile`` in ``rotation`` at ``tile_px`` pixels (cached; do not modify)."""
    key = (id(tile), rotation, tile_px)
    hit = _TILE_CACHE.get(key)
    if hit is not None and hit[0] is tile:
        return hit[1]
    ss = _supersample(tile_px)
    big = draw_tile(tile_geometry(tile, rotation), tile_px * ss)
    im = big.reduce(ss)
    # a darker 1-pixel rim so neighbouring tiles stay distinguishable
    a = np.array(im)
    if tile_px >= 12:
        rim = np.zeros(a.shape[:2], dtype=bool)
        rim[0, :] = rim[-1, :] = rim[:, 0] = rim[:, -1] = True
        a[rim] = (a[rim] * 0.72).astype(np.uint8)
    im = Image.fromarray(a)
    _TILE_CACHE[key] = (tile, im)
    return im


# ------------------------------------------------------------------- meeples
@functools.lru_cache(maxsize=128)
def meeple_sprite(colour: Colour, size: int, lying: bool = False) -> Image.Image:
    """An RGBA meeple ``size`` pixels square in ``colour`` with a contrasting outline."""
    ss = 4
    s = size * ss
    pad = MEEPLE_PAD
    k = 1 - 2 * pad
    mask = Image.new("L", (s, s), 0)
    d = ImageDraw.Draw(mask)
    d.polygon([((pad + x * k) * s, (pad + y * k) * s) for x, y in MEEPLE], fill=255)
    hr = 0.15 * k * s
    hx, hy = 0.5 * s, (pad + 0.2 * k) * s
    d.ellipse([hx - hr, hy - hr, hx + hr, hy + hr], fill=255)
    ow = max(3, round(0.07 * s)) | 1
    outer = mask.filter(ImageFilter.MaxFilter(ow))
    edge = meeple_edge(colour)
    im = Image.new("RGBA", (s, s), edge + (0,))
    im.paste(edge + (255,), (0, 0), outer)
    im.paste(colour + (255,), (0, 0), mask)
    if lying:
        im = im.rotate(90, expand=True)
    im = im.reduce(ss)
    # keep the body's colour exact (reduce can leave interior alpha at 254/255 rounding)
    a = np.array(im)
    full = a[..., 3] >= 250
    a[full, 3] = 255
    return Image.fromarray(a, "RGBA")


class ImagePen:
    """A pen on a picture (:mod:`carc_env.render.paint`): Pillow's ``ImageDraw`` (colours with alpha
    blend), ``meeple`` pastes a sprite, ``group`` names nothing."""

    vector = False

    def __init__(self, img: Image.Image) -> None:
        self.img = img
        self._draw = ImageDraw.Draw(img, "RGBA")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._draw, name)

    def meeple(self, player: int, x: float, y: float, size: float, lying: bool = False) -> None:
        spr = meeple_sprite(player_colour(player), max(4, round(size)), lying)
        self.img.paste(spr, (round(x), round(y)), spr)

    def group(self, name: str, /, **data: Any) -> AbstractContextManager[None]:
        return no_group(name)


# --------------------------------------------------------------------- board
def _view(game) -> tuple[int, int, int, int]:
    xs = [p[0] for p in game.placements] or [0]
    ys = [p[1] for p in game.placements] or [0]
    return min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1


def board_view(game) -> tuple[int, int, int, int]:
    """``(min_x, max_x, min_y, max_y)`` of the cells render_image shows by default."""
    return _view(game)


def _font_px(tile_px: int) -> int:
    return max(11, min(20, round(8 + tile_px / 8)))


def _margins(fs: int, y0: int, y1: int) -> tuple[int, int]:
    """Left and top margins (axis labels) of the board."""
    f = font(fs)
    return max(text_width(f, str(y)) for y in (y0, y1)) + fs, fs + fs // 2 + 4


def cell_box(
    game, x: int, y: int, tile_px: int = 64, view: tuple[int, int, int, int] | None = None
) -> tuple[int, int, int, int]:
    """Pixel box ``(left, top, right, bottom)`` (right/bottom exclusive) of cell (x, y) in render_image's output."""
    x0, _, y0, y1 = view if view is not None else _view(game)
    lm, tm = _margins(_font_px(tile_px), y0, y1)
    left, top = lm + (x - x0) * tile_px, tm + (y - y0) * tile_px
    return left, top, left + tile_px, top + tile_px


def render_image(
    game,
    tile_px: int = 64,
    highlight_legal: bool = False,
    view: tuple[int, int, int, int] | None = None,
    panel: bool = True,
) -> np.ndarray:
    """Draw the game as an ``(H, W, 3)`` uint8 image; see the module docstring."""
    if not isinstance(tile_px, (int, np.integer)) or tile_px < 8:
        raise ValueError(f"tile_px must be an integer >= 8, got {tile_px!r}")
    tp = int(tile_px)
    x0, x1, y0, y1 = view if view is not None else _view(game)
    if x1 < x0 or y1 < y0:
        raise ValueError(f"view must be (min_x, max_x, min_y, max_y) with min <= max, got {view!r}")
    ncols, nrows = x1 - x0 + 1, y1 - y0 + 1
    fs = _font_px(tp)
    f = font(fs)
    lm, tm = _margins(fs, y0, y1)
    bw, bh = ncols * tp, nrows * tp
    gap = max(8, fs)
    pw, ph, panel_draw = _panel(game, tp, fs) if panel else (0, 0, None)
    W = lm + bw + (gap + pw if panel else fs // 2)
    H = max(tm + bh + fs // 2, ph)
    img = Image.new("RGB", (W, H), BACKGROUND)
    d = ImageDraw.Draw(img)

    # empty cells and grid
    d.rectangle([lm, tm, lm + bw - 1, tm + bh - 1], fill=EMPTY_COLOUR)
    for i in range(ncols + 1):
        d.line([(lm + i * tp, tm), (lm + i * tp, tm + bh - 1)], fill=GRID_COLOUR)
    for j in range(nrows + 1):
        d.line([(lm, tm + j * tp), (lm + bw - 1, tm + j * tp)], fill=GRID_COLOUR)

    tiles = game.rules.tiles
    for x, y, t, r, _ in game.placements:
        if x0 <= x <= x1 and y0 <= y <= y1:
            img.paste(tile_image(tiles[t], r, tp), (lm + (x - x0) * tp, tm + (y - y0) * tp))

    if highlight_legal and game.phase == "tile":
        fx, fy, masks = game.frontier()
        small_px = max(9, fs - 2)
        small = font(small_px)
        for x, y, m in zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True):
            if not m or not (x0 <= x <= x1 and y0 <= y <= y1):
                continue
            box = (lm + (x - x0) * tp, tm + (y - y0) * tp, lm + (x - x0 + 1) * tp, tm + (y - y0 + 1) * tp)
            cell = img.crop(box)
            img.paste(Image.blend(cell, Image.new("RGB", cell.size, LEGAL_COLOUR), 0.35), box[:2])
            d.rectangle([box[0] + 1, box[1] + 1, box[2] - 2, box[3] - 2], outline=LEGAL_COLOUR, width=max(1, tp // 32))
            if tp >= 40:
                label = "r" + ",".join(str(q) for q in range(4) if m >> q & 1)
                tw = text_width(small, label)
                d.text(
                    ((box[0] + box[2] - tw) / 2, (box[1] + box[3]) / 2 - small_px / 2),
                    label,
                    fill=(30, 30, 30),
                    font=small,
                )

    if game.history and game.placements:
        x, y = game.placements[-1][:2]
        if x0 <= x <= x1 and y0 <= y <= y1:
            lw = max(2, tp // 20)
            bx, by = lm + (x - x0) * tp, tm + (y - y0) * tp
            d.rectangle([bx, by, bx + tp - 1, by + tp - 1], outline=LAST_COLOUR, width=lw)

    plugins = drawings(game.rules)
    if plugins:
        canvas = Canvas(img, tp, lm, tm, x0, x1, y0, y1, pen=ImagePen(img))
        for drawing in plugins:
            drawing.draw_image(game, canvas)
    _draw_followers(game, img, tp, lm, tm, x0, x1, y0, y1)

    # axes
    for i in range(ncols):
        label = str(x0 + i)
        tw = text_width(f, label)
        d.text((lm + i * tp + (tp - tw) / 2, 2), label, fill=DIM_TEXT, font=f)
    for j in range(nrows):
        label = str(y0 + j)
        tw = text_width(f, label)
        d.text((lm - tw - fs // 2, tm + j * tp + (tp - fs) / 2 - 1), label, fill=DIM_TEXT, font=f)

    if panel_draw is not None:
        panel_draw(img, lm + bw + gap)
    return np.array(img)


def _draw_followers(game, img: Image.Image, tp: int, lm: int, tm: int, x0: int, x1: int, y0: int, y1: int) -> None:
    size = max(8, round(0.36 * tp))
    tiles = game.rules.tiles
    placements = game.placements
    for node, p in sorted(game.followers.items()):
        k = game.node_tile[node]
        x, y, t, r, base = placements[k]
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            continue
        g = tile_geometry(tiles[t], r)
        seg = node - base
        ax, ay = g.anchors.get(seg, CENTRE)
        spr = meeple_sprite(player_colour(p), size, seg in g.lying)
        px = lm + (x - x0) * tp + ax * tp - spr.width / 2
        py = tm + (y - y0) * tp + ay * tp - spr.height / 2
        if seg not in g.lying:
            py -= 0.06 * tp  # stand on the spot rather than hang around it
        img.paste(spr, (round(px), round(py)), spr)
    for j, gst in enumerate(guests(game)):  # followers with no segment of their own
        x, y = gst.x, gst.y
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            continue
        _, _, t, r, _ = placements[game.board[(x, y)]]
        g = tile_geometry(tiles[t], r)
        ax, ay = g.anchors.get(gst.segment, CENTRE)
        spr = meeple_sprite(player_colour(gst.player), size)
        px = lm + (x - x0) * tp + (ax + 0.14 * (j % 3) - 0.14) * tp - spr.width / 2
        py = tm + (y - y0) * tp + ay * tp - spr.height / 2 - 0.06 * tp
        # a gold ring: this follower stands on no segment (e.g. it came from a quarter of Carcassonne)
        rr = 0.62 * spr.width
        cx, cy = px + spr.width / 2, py + spr.height / 2
        ImageDraw.Draw(img).ellipse(
            [cx - rr, cy - rr, cx + rr, cy + rr], outline=GUEST_RING_COLOUR, width=max(2, tp // 24)
        )
        img.paste(spr, (round(px), round(py)), spr)


# --------------------------------------------------------------------- panel
def _panel(game, tp: int, fs: int):
    """Size of the side panel and a function drawing it at x offset ``ox``."""
    f = font(fs)
    big = font(fs + 4)
    pad = fs // 2 + 4
    line = fs + fs // 3 + 2
    dp = max(48, tp)
    n = game.num_players
    if game.over:
        best = max(game.scores)
        win = [p for p in range(n) if game.scores[p] == best]
        title = "Game over"
        status = ["Winner: " + ", ".join(f"P{p}" for p in win)]
    else:
        title = f"Turn {game.turn + 1}"
        status = [f"Phase: {game.phase}", f"To move: P{game.player}"]
    status.append(f"Tiles left: {game.bag_size}")
    drawn = game.tile_id
    rows = [f"P{p}: {game.scores[p]} pts, followers {game.supply[p]}/{game.rules.followers}" for p in range(n)]
    last = ""
    if game.placements and game.history:
        x, y, t, r, _ = game.placements[-1]
        last = f"Last: {game.rules.tiles[t].id} ({x},{y}) r{r}"
    sw = fs + 4  # swatch size
    extra = status_lines(game)
    texts = [(big, title)] + [(f, s) for s in status] + [(f, f"Drawn tile: {drawn or '-'}"), (f, last)]
    texts += [(f, e.text) for e in extra]
    width = max(text_width(ff, s) for ff, s in texts)
    width = max(width, max(text_width(f, s) for s in rows) + sw + 6, dp)
    if any(e.player is not None for e in extra):
        width = max(width, max(text_width(f, e.text) for e in extra) + sw)
    blocks = panel_blocks(game, fs)
    if blocks:
        width = max(width, max(b.width for b in blocks))
    pw = width + 2 * pad
    # the drawn tile's space is always reserved, so the panel's height does not depend on the phase
    # (nor do the expansion lines: their number depends on the configuration only)
    ph = pad + (fs + 10) + line * 3 + line + dp + 8 + 6 + line * n + line + pad
    if extra:
        ph += 8 + line * len(extra)
    ph += sum(8 + b.height for b in blocks)

    def draw(img: Image.Image, ox: int) -> None:
        d = ImageDraw.Draw(img)
        d.rectangle([ox, 0, ox + pw - 1, img.height - 1], fill=(40, 45, 55))
        x, y = ox + pad, pad
        d.text((x, y), title, fill=TEXT_COLOUR, font=big)
        y += fs + 10
        for s in status:
            d.text((x, y), s, fill=TEXT_COLOUR, font=f)
            if s.startswith("To move"):
                cx = x + text_width(f, s) + 6
                d.rectangle([cx, y + 1, cx + fs - 2, y + fs - 1], fill=player_colour(game.player), outline=(0, 0, 0))
            y += line
        d.text((x, y), f"Drawn tile: {drawn or '-'}", fill=TEXT_COLOUR, font=f)
        y += line
        if drawn:
            tile = game.rules.tiles[game.rules.tile_index[drawn]]
            img.paste(tile_image(tile, 0, dp), (x, y))
        else:
            d.rectangle([x, y, x + dp - 1, y + dp - 1], outline=DIM_TEXT)
        y += dp + 8
        y += 6
        for p, s in enumerate(rows):
            spr = meeple_sprite(player_colour(p), sw)
            if not game.over and p == game.player:
                d.rectangle([x - 3, y - 2, x + pw - 2 * pad + 2, y + line - 3], outline=player_colour(p))
            img.paste(spr, (x, y - 2), spr)
            d.text((x + sw + 6, y), s, fill=TEXT_COLOUR, font=f)
            y += line
        if last:
            d.text((x, y + 2), last, fill=DIM_TEXT, font=f)
        y += line + 8
        for e in extra:
            tx = x
            if e.player is not None:
                d.rectangle([x, y + 1, x + fs - 2, y + fs - 1], fill=player_colour(e.player), outline=(0, 0, 0))
                tx = x + sw
            d.text((tx, y), e.text, fill=TEXT_COLOUR, font=f)
            y += line
        for b in blocks:
            y += 8
            b.draw(ImagePen(img) if b.vector else img, x, y)
            y += b.height

    return pw, ph, draw
