"""How the map of Germany is drawn (the plug-in's drawing part).

Status line (always one): the map's name, whether it is an approximation, and how many of
its large cities are connected, e.g. ``Map: germany (approximation), 2/6 large cities connected``.

Text board: cells off the board are drawn as water (``~ ~ ~``) or foreign land (``: : :``),
so the outline of the country shows; a feature printed abroad shows its country's whole name
on the rows that do not lead into Germany (a name longer than a cell is split over two rows
with a hyphen: ``NETHER-`` / ``LANDS``) and ``*`` per coat of arms in a corner away from
Germany; a large city its name across the top row of its block and ``*`` per coat of arms on
each square; an empty town square ``T`` and its name, a start square ``S`` in its top-left
corner (the ``?`` of a legal cell is drawn over them by the renderer).

Picture: water and foreign land coloured around the squares, a thick line along the border,
a dark margin round the start squares, on empty town squares a small town (two houses with
slate roofs, unlike a cloister's single red-roofed building) and the name, a wall round each
large city with a gate (a gap between two towers) at each open city edge, its name along the
top of the block and a small shield per coat of arms at the bottom of each square (so the name
never covers one), the country's name at the top of each feature abroad and its shields at the
bottom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.actions import Pass
from ...core.tiles import DX, DY
from ...render.expansions import Canvas, Choice, Decision, StatusLine, icon
from ...render.expansions import Drawing as BaseDrawing
from ...render.image import font, text_width
from .rules import EXTRA_TURN_PHASE, KEY, MapsGermany, TakeExtraTurn

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

WATER = (96, 146, 196)
ABROAD = (170, 165, 150)
BORDER = (30, 30, 30)
START_MARGIN = (40, 40, 40)
LABEL = (255, 255, 255)
SHIELD = (200, 40, 40)
TOWN_WALLS = (246, 238, 214)
TOWN_ROOF = (104, 128, 190)
TOWN_EDGE = (25, 25, 30)
WALL = (120, 70, 30)
GATE = (250, 220, 120)

SEA_TEXT = ["~ ~ ~ ~", " ~ ~ ~ ", "~ ~ ~ ~"]
ABROAD_TEXT = [": : : :", " : : : ", ": : : :"]


def _side_ends(canvas: Canvas, x: int, y: int, s: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two pixel ends of side ``s`` of cell (x, y)."""
    tp = canvas.tile_px
    left, top = canvas.cell_origin(x, y)
    return (
        ((left, top), (left + tp, top)),
        ((left + tp, top), (left + tp, top + tp)),
        ((left, top + tp), (left + tp, top + tp)),
        ((left, top), (left, top + tp)),
    )[s]


def _outline(d: Any, canvas: Canvas, cells, inside, colour, width: int, gates=frozenset()) -> None:
    """Draw each side of each cell in ``cells`` that faces no cell of ``inside``; a side in ``gates``
    (``(x, y, side)``) gets a gate: the wall stops short of its middle third, with a tower each side."""
    for x, y in cells:
        for s in range(4):
            if (x + DX[s], y + DY[s]) in inside:
                continue
            (ax, ay), (bx, by) = _side_ends(canvas, x, y, s)
            if (x, y, s) not in gates:
                d.line(((ax, ay), (bx, by)), fill=colour, width=width)
                continue
            p = (ax + (bx - ax) / 3, ay + (by - ay) / 3)
            q = (ax + 2 * (bx - ax) / 3, ay + 2 * (by - ay) / 3)
            d.line(((ax, ay), p), fill=colour, width=width)
            d.line((q, (bx, by)), fill=colour, width=width)
            d.line((p, q), fill=GATE, width=max(1, width // 2))  # the open gateway
            t = width * 0.9
            for cx, cy in (p, q):
                d.rectangle([cx - t, cy - t, cx + t, cy + t], fill=colour, outline=(40, 20, 5))


def _shield(d: Any, cx: float, cy: float, w: float) -> None:
    """A coat of arms: a small red shield centred on (cx, cy), ``2 w`` wide."""
    d.polygon([(cx - w, cy - w), (cx + w, cy - w), (cx + w, cy + w * 0.4), (cx, cy + w * 1.4), (cx - w, cy + w * 0.4)],
              fill=SHIELD, outline=(255, 255, 255))  # fmt: skip


def _shields(d: Any, left: int, top: int, tp: int, n: int) -> None:
    """``n`` shields in a row along the bottom of the square at (left, top), centred."""
    w = tp * 0.07
    step = tp * 0.18
    x0 = left + tp / 2 - step * (n - 1) / 2
    for i in range(n):
        _shield(d, x0 + step * i, top + tp * 0.8, w)


def _town(d: Any, left: int, top: int, tp: int) -> None:
    """A small town (the printed map's house symbol): two gabled houses side by side with slate-blue
    roofs, unlike a cloister (one building with a red roof, on a tile)."""
    ow = max(1, tp // 40)
    for dx, h in ((-0.15, 0.2), (0.13, 0.28)):
        cx, base = left + tp * (0.5 + dx), top + tp * 0.58
        w = tp * 0.13
        eaves = base - h * tp
        d.rectangle([cx - w, eaves, cx + w, base], fill=TOWN_WALLS, outline=TOWN_EDGE, width=ow)
        d.polygon([(cx - w * 1.25, eaves), (cx, eaves - tp * 0.13), (cx + w * 1.25, eaves)],
                  fill=TOWN_ROOF, outline=TOWN_EDGE)  # fmt: skip
        d.rectangle([cx - w * 0.3, base - tp * 0.07, cx + w * 0.3, base], fill=TOWN_EDGE)


def _fitting_font(text: str, width: float, size: int, smallest: int = 6):
    """The font of ``size`` points, or the largest smaller one down to ``smallest`` in which ``text``
    fits ``width`` pixels (a label is shrunk, never cut)."""
    f = font(size)
    while size > smallest and text_width(f, text) > width:
        size -= 1
        f = font(size)
    return f


def _name_lines(name: str, width: int = 7) -> list[str]:
    """``name`` in at most two lines of ``width`` characters; a long name is split between two
    consonants where it can be (``NETHER-`` / ``LANDS``), with a hyphen, never cut short."""
    if len(name) <= width:
        return [name]
    lo, hi = max(1, len(name) - width), width - 1  # first part k letters + "-", second part len - k
    if lo > hi:  # longer than two lines: the second line takes what fits
        return [name[: width - 1] + "-", name[width - 1 : 2 * width - 1]]
    vowels = set("AEIOUYÄÖÜaeiouyäöü")

    def both_consonants(k: int) -> bool:
        return name[k - 1] not in vowels and name[k] not in vowels

    ks = [k for k in range(hi, lo - 1, -1) if both_consonants(k)] or [max(lo, min(hi, (len(name) + 1) // 2))]
    k = ks[0]
    return [name[:k] + "-", name[k:]]


def _write(row: list[str], text: str) -> None:
    """Write ``text`` centred over the characters of ``row`` (a text-board row of one cell)."""
    start = (len(row) - len(text)) // 2
    row[start : start + len(text)] = list(text)


class Drawing(BaseDrawing):
    """The printed board under the tiles."""

    vector = True

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
        for a in self.map.abroad:
            b = blocks.get(a.cell)
            if b is None:
                continue
            home = (a.side + 2) % 4  # the side of the piece that faces Germany
            lines = _name_lines(a.name.upper())
            # the name on rows that do not lead into Germany; the shields in a corner away from it
            rows = {0: (2, (1, 2)), 2: (0, (0, 1))}.get(home, (0, (0, 2)))
            for r, text in zip((rows[0],) if len(lines) == 1 else rows[1], lines, strict=True):
                _write(b[r], text)
            stars = list("*" * min(a.coats_of_arms, 3))
            if stars:
                row = b[{0: 0, 2: 2}.get(home, 1)]
                if home == 3:  # Germany west of the piece: the east end of the row
                    row[len(row) - len(stars) :] = stars
                else:
                    row[: len(stars)] = stars
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
                lines = _name_lines(name)
                rows = ["T      ", *(n.ljust(7) for n in lines)] + ["       "] * (2 - len(lines))
                blocks[c] = [list(r) for r in (rows if len(lines) == 2 else [rows[0], rows[2], rows[1]])]
        for c in self.start_cells:
            b = blocks.get(c)
            if b is not None:
                b[0][0] = "S"

    # --------------------------------------------------------------- decision
    def decision(self, game: Game, where: Canvas) -> Decision | None:
        if game.phase != EXTRA_TURN_PHASE:
            return None
        x, y = game.placements[-1][:2]
        name = self.town_names.get((x, y))
        town = f"the town {name}" if name else "a town"
        left, top = where.cell_origin(x, y)
        box = (float(left), float(top), float(where.tile_px), float(where.tile_px))
        tp = 32

        def town_icon(d: Any) -> None:
            d.rectangle([0, 0, tp, tp], fill=(112, 168, 70))
            _town(d, 0, 0, tp)

        out = []
        for a in game.legal_actions():
            text = game.action_text(a)
            if type(a) is TakeExtraTurn:
                out.append(Choice(text, "Take the extra turn", f"You covered {town} at ({x},{y}): play one more "
                                  "turn now (no further extra turn within it)", icon(town_icon), box))  # fmt: skip
            elif type(a) is Pass:
                out.append(Choice(text, "Decline", "No extra turn: the next player's turn follows", passes=True))
        return Decision(EXTRA_TURN_PHASE, f"You covered {town}: take an extra turn now? (town variant 1)", tuple(out))

    # ------------------------------------------------------------------- image
    def draw_image(self, game: Game, canvas: Canvas) -> None:
        tp = canvas.tile_px
        d = canvas.pen
        squares = self.map.squares
        small = font(max(9, tp // 5))
        coats = self.coats
        # water and foreign land round the board
        for y in range(canvas.y0, canvas.y1 + 1):
            for x in range(canvas.x0, canvas.x1 + 1):
                c = (x, y)
                if c in squares:
                    continue
                left, top = canvas.cell_origin(x, y)
                colour = WATER if c in self.map.sea else ABROAD
                if c in game.board:  # a feature printed abroad: tint the tile, name the country, its shields
                    with d.group("map-abroad", x=x, y=y):
                        d.rectangle([left, top, left + tp - 1, top + tp - 1], fill=(*colour, 110))
                        name = self.abroad_names.get(c, "")
                        f = _fitting_font(name, tp - 4, small.size)
                        tw = text_width(f, name)
                        d.text((left + (tp - tw) / 2, top + 1), name, fill=LABEL, font=f)
                        if coats.get(c):
                            _shields(d, left, top, tp, coats[c])
                else:
                    with d.group("map-sea" if c in self.map.sea else "map-foreign", x=x, y=y):
                        d.rectangle([left, top, left + tp - 1, top + tp - 1], fill=colour)
        # the border: every side of a square that faces no square
        lw = max(2, tp // 16)
        visible = [(x, y) for x, y in squares if canvas.x0 <= x <= canvas.x1 and canvas.y0 <= y <= canvas.y1]
        with d.group("map-border"):
            _outline(d, canvas, visible, squares, BORDER, lw)
        # start squares: a darker margin
        for x, y in self.start_cells:
            left, top = canvas.cell_origin(x, y)
            with d.group("map-start", x=x, y=y):
                d.rectangle([left, top, left + tp - 1, top + tp - 1], outline=START_MARGIN, width=max(2, tp // 10))
        # towns: a small town (the printed map's houses) and the name while the square is empty
        for (x, y), name in self.town_names.items():
            if (x, y) in game.board:
                continue
            left, top = canvas.cell_origin(x, y)
            with d.group("map-town", x=x, y=y, name=name):
                _town(d, left, top, tp)
                f = _fitting_font(name, tp - 4, small.size)
                tw = text_width(f, name)
                d.text((left + (tp - tw) / 2, top + tp - f.size - 3), name, fill=LABEL, font=f)
        # large cities: shields along the bottom of each square, a wall with gates, the name on top
        for (x, y), n in coats.items():
            if (x, y) in self.city_of:
                left, top = canvas.cell_origin(x, y)
                with d.group("map-coats", x=x, y=y, n=n):
                    _shields(d, left, top, tp, n)
        wall = max(2, tp // 12)
        for city in self.map.large_cities:  # a wall round the block, a gate at each open city edge
            cells = set(city.cells)
            with d.group("map-city-wall", name=city.name):
                _outline(d, canvas, cells, cells, WALL, wall, gates=frozenset(city.open))
        big = font(max(10, tp // 4))
        for city in self.map.large_cities:
            xs = [c[0] for c in city.cells]
            ys = [c[1] for c in city.cells]
            left, top = canvas.cell_origin(min(xs), min(ys))
            right, _ = canvas.cell_origin(max(xs) + 1, max(ys) + 1)
            tw = text_width(big, city.name)
            cx, cy = (left + right) / 2 - tw / 2, top + wall + 2  # along the top: clear of the shields
            with d.group("map-city-name", name=city.name):
                d.rectangle([cx - 3, cy - 1, cx + tw + 3, cy + big.size + 3], fill=(0, 0, 0, 150))
                d.text((cx, cy), city.name, fill=LABEL, font=big)
