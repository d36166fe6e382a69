"""How the map of Germany is drawn (the plug-in's drawing part).

Status line (always one): the map's name, whether it is an approximation, and how many of
its large cities are connected, e.g. ``Map: germany (approximation), 2/6 large cities connected``.

Text board: cells off the board are drawn as water (``~ ~ ~``) or foreign land (``: : :``),
so the outline of the country shows; a feature printed abroad shows its country's name on
its top row; a large city its name across the top row of its block and ``*`` per coat of
arms on each square; an empty town square ``T`` and its name, a start square ``S`` in its
top-left corner (the ``?`` of a legal cell is drawn over them by the renderer).

Picture: water and foreign land coloured around the squares, a thick line along the border,
a dark margin round the start squares, a town dot and the name on town squares, a wall round
each large city with its name over the block and a small shield per coat of arms, the
country's name on each feature abroad.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import ImageDraw

from ...core.tiles import DX, DY
from ...render.expansions import Canvas, StatusLine
from ...render.expansions import Drawing as BaseDrawing
from ...render.image import font, text_width
from .rules import KEY, MapsGermany

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

WATER = (96, 146, 196)
ABROAD = (170, 165, 150)
BORDER = (30, 30, 30)
START_MARGIN = (40, 40, 40)
LABEL = (255, 255, 255)
SHIELD = (200, 40, 40)
TOWN_DOT = (250, 250, 250)
TOWN_RING = (180, 40, 40)
WALL = (120, 70, 30)

SEA_TEXT = ["~ ~ ~ ~", " ~ ~ ~ ", "~ ~ ~ ~"]
ABROAD_TEXT = [": : : :", " : : : ", ": : : :"]


def _outline(d: ImageDraw.ImageDraw, canvas: Canvas, cells, inside, colour, width: int) -> None:
    """Draw each side of each cell in ``cells`` that faces no cell of ``inside``."""
    tp = canvas.tile_px
    for x, y in cells:
        left, top = canvas.cell_origin(x, y)
        ends = (
            ((left, top), (left + tp, top)),
            ((left + tp, top), (left + tp, top + tp)),
            ((left, top + tp), (left + tp, top + tp)),
            ((left, top), (left, top + tp)),
        )
        for s in range(4):
            if (x + DX[s], y + DY[s]) not in inside:
                d.line(ends[s], fill=colour, width=width)


class Drawing(BaseDrawing):
    """The printed board under the tiles."""

    def __init__(self, rules: RuleSet) -> None:
        super().__init__(rules)
        exp: MapsGermany = rules.by_key[KEY]
        self.exp = exp
        self.map = exp.map
        self.layout = exp.layout
        self.town_names = {t.cell: t.name for t in self.map.towns}
        self.start_cells = {s.cell for s in self.map.starts}
        self.abroad_names = {a.cell: a.name for a in self.map.abroad}
        self.coats = {(p.x, p.y): c for p, c in zip(self.layout.pieces, exp.coats, strict=True) if c}
        self.city_of = {cell: c.name for c in self.map.large_cities for cell in c.cells}

    # ------------------------------------------------------------------ status
    def status_lines(self, game: Game) -> list[StatusLine]:
        m = self.map
        note = " (approximation)" if m.layout_status != "printed" else ""
        n, total = len(game.connected_groups), len(m.large_cities)
        return [StatusLine(f"Map: {m.name}{note}, {n}/{total} large cities connected")]

    # -------------------------------------------------------------------- text
    def draw_text(self, game: Game, blocks: dict[tuple[int, int], list[list[str]]]) -> None:
        x0, x1, y0, y1 = self.layout.bounds
        squares = self.map.squares
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                c = (x, y)
                if c in squares or c in blocks:
                    continue
                rows = SEA_TEXT if c in self.map.sea else ABROAD_TEXT
                blocks[c] = [list(r) for r in rows]
        for c, name in self.abroad_names.items():
            if c in blocks:
                blocks[c][0] = list(name[:7].upper().center(7, ":"))
        for city in self.map.large_cities:  # the name across the top row of the block
            top = min(y for _, y in city.cells)
            row = sorted(c for c in city.cells if c[1] == top)
            text = city.name.upper()[: 7 * len(row)].center(7 * len(row), "#")
            for i, c in enumerate(row):
                if c in blocks:
                    blocks[c][0] = list(text[7 * i : 7 * i + 7])
        for c, n in self.coats.items():
            b = blocks.get(c)
            if b is not None and c in self.city_of:
                stars = "*" * min(n, 5)
                mid = b[1]
                start = (7 - len(stars)) // 2
                mid[start : start + len(stars)] = list(stars)
        for c, name in self.town_names.items():
            if c not in game.board:
                blocks[c] = [list("T      "), list("       "), list(name[:7].ljust(7))]
        for c in self.start_cells:
            b = blocks.get(c)
            if b is not None:
                b[0][0] = "S"

    # ------------------------------------------------------------------- image
    def draw_image(self, game: Game, canvas: Canvas) -> None:
        img, tp = canvas.img, canvas.tile_px
        d = ImageDraw.Draw(img, "RGBA")
        squares = self.map.squares
        small = font(max(9, tp // 5))
        # water and foreign land round the board
        for y in range(canvas.y0, canvas.y1 + 1):
            for x in range(canvas.x0, canvas.x1 + 1):
                c = (x, y)
                if c in squares:
                    continue
                left, top = canvas.cell_origin(x, y)
                colour = WATER if c in self.map.sea else ABROAD
                if c in game.board:  # a feature printed abroad: tint the tile, name the country
                    d.rectangle([left, top, left + tp - 1, top + tp - 1], fill=(*colour, 110))
                    name = self.abroad_names.get(c, "")
                    tw = text_width(small, name)
                    d.text((left + (tp - tw) / 2, top + 1), name, fill=LABEL, font=small)
                else:
                    d.rectangle([left, top, left + tp - 1, top + tp - 1], fill=colour)
        # the border: every side of a square that faces no square
        lw = max(2, tp // 16)
        visible = [(x, y) for x, y in squares if canvas.x0 <= x <= canvas.x1 and canvas.y0 <= y <= canvas.y1]
        _outline(d, canvas, visible, squares, BORDER, lw)
        # start squares: a darker margin
        for x, y in self.start_cells:
            left, top = canvas.cell_origin(x, y)
            d.rectangle([left, top, left + tp - 1, top + tp - 1], outline=START_MARGIN, width=max(2, tp // 10))
        # towns: a town dot (as on a road map) and the name while the square is empty
        for (x, y), name in self.town_names.items():
            if (x, y) in game.board:
                continue
            left, top = canvas.cell_origin(x, y)
            r = max(3, tp // 9)
            cx, cy = left + tp / 2, top + tp * 0.4
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=TOWN_DOT, outline=TOWN_RING, width=max(1, r // 2))
            tw = text_width(small, name)
            d.text((left + (tp - tw) / 2, top + tp - small.size - 3), name, fill=LABEL, font=small)
        # large cities: a shield per coat of arms, the name over the block
        for (x, y), n in self.coats.items():
            if (x, y) not in self.city_of:
                continue
            left, top = canvas.cell_origin(x, y)
            for i in range(n):
                cx, cy = left + tp * (0.78 - 0.16 * i), top + tp * 0.16
                w = tp * 0.07
                d.polygon([(cx - w, cy - w), (cx + w, cy - w), (cx + w, cy + w * 0.4), (cx, cy + w * 1.4),
                           (cx - w, cy + w * 0.4)], fill=SHIELD, outline=(255, 255, 255))  # fmt: skip
        wall = max(2, tp // 12)
        for city in self.map.large_cities:  # a wall round the block
            cells = set(city.cells)
            _outline(d, canvas, cells, cells, WALL, wall)
        big = font(max(10, tp // 4))
        for city in self.map.large_cities:
            xs = [c[0] for c in city.cells]
            ys = [c[1] for c in city.cells]
            left, top = canvas.cell_origin(min(xs), min(ys))
            right, bottom = canvas.cell_origin(max(xs) + 1, max(ys) + 1)
            tw = text_width(big, city.name)
            cx, cy = (left + right) / 2 - tw / 2, (top + bottom) / 2 - big.size / 2
            d.rectangle([cx - 3, cy - 1, cx + tw + 3, cy + big.size + 3], fill=(0, 0, 0, 150))
            d.text((cx, cy), city.name, fill=LABEL, font=big)
