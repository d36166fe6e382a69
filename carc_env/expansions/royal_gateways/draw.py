"""How The Royal Gateways are drawn (the plug-in's drawing part).

* The gates: ``K`` / ``Q`` on their city in the text board (a tag's first letter,
  as for every tag); in the picture a gold crown (King's Gate) or a silver
  crown with a pearl (Queen's Gate) in the city.
* Links: in the picture a dashed line in the gate's colour from gate to gate
  when a pair of gates links two physical cities.
* Two status lines (text header and picture panel), one per gate type::

    King's Gates: (1,-1) + (0,2), linked
    Queen's Gates: (-1,-1), waiting for the other
    Queen's Gates: none placed
    King's Gates: (1,-1) + (-1,-1), same city
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...render.expansions import Canvas, StatusLine, TagStyle
from ...render.expansions import Drawing as BaseDrawing
from ...render.geometry import Point, tile_geometry
from .rules import GATE_NAMES, GATE_TAGS, KEY, KING, QUEEN, GatewaysState, linked_cities

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KING_COLOUR = (222, 170, 30)
QUEEN_COLOUR = (196, 200, 214)
LINK_COLOURS = {KING: KING_COLOUR, QUEEN: (150, 60, 170)}


def _crown(colour: tuple[int, int, int], pearl: bool):
    def draw(d: Any, c: Point, s: int) -> None:
        w = 0.22 * s
        h = 0.6 * w
        cx, cy = c[0] * s, c[1] * s
        pts = [(-0.5, 0.5), (-0.5, -0.3), (-0.25, 0.05), (0.0, -0.5), (0.25, 0.05), (0.5, -0.3), (0.5, 0.5)]
        d.polygon(
            [(cx + x * w, cy + y * h) for x, y in pts], fill=colour, outline=(50, 40, 20), width=max(1, round(w / 14))
        )
        if pearl:
            r = 0.09 * w
            d.ellipse([cx - r, cy - 0.5 * h - 2 * r, cx + r, cy - 0.5 * h], fill=(250, 250, 255), outline=(50, 40, 20))

    return draw


def _dashed(d: Any, a: Point, b: Point, colour: tuple[int, int, int], width: int, dash: float) -> None:
    (ax, ay), (bx, by) = a, b
    length = max(1.0, ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5)
    steps = max(1, int(length // dash))
    for i in range(0, steps, 2):
        t0, t1 = i / steps, min(1.0, (i + 1) / steps)
        d.line(
            [(ax + (bx - ax) * t0, ay + (by - ay) * t0), (ax + (bx - ax) * t1, ay + (by - ay) * t1)],
            fill=colour,
            width=width,
        )


def _gate_pixel(game: Game, canvas: Canvas, x: int, y: int, tag: str) -> Point:
    """Where the gate ``tag`` of the tile at (x, y) is drawn (its crown), in pixels."""
    _, _, t, r, _ = game.placements[game.board[(x, y)]]
    pos = next((p for _, tg, p in tile_geometry(game.rules.tiles[t], r).tags if tg == tag), (0.5, 0.5))
    ox, oy = canvas.cell_origin(x, y)
    return ox + pos[0] * canvas.tile_px, oy + pos[1] * canvas.tile_px


class Drawing(BaseDrawing):
    """The gates' crowns, the links between the parts of linked cities, one status line per gate type."""

    vector = True

    tag_styles = {KING: TagStyle(_crown(KING_COLOUR, False)), QUEEN: TagStyle(_crown(QUEEN_COLOUR, True))}

    def status_lines(self, game: Game) -> list[StatusLine]:
        st: GatewaysState = game.ext[KEY]
        find = game.find
        out = []
        for tag in GATE_TAGS:
            nodes = st.gates[tag]
            cells = [game.placements[game.node_tile[n]][:2] for n in nodes]
            where = " + ".join(f"({x},{y})" for x, y in cells)
            if not nodes:
                text = "none placed"
            elif len(nodes) == 1:
                text = f"{where}, waiting for the other"
            elif len({find(n) for n in nodes}) > 1:
                text = f"{where}, not linked (a city was complete first)"
            elif any(any(t == tag for t, *_ in c.gates) for c in linked_cities(game) if c.root == find(nodes[0])):
                text = f"{where}, linked"
            else:
                text = f"{where}, same city"
            out.append(StatusLine(f"{GATE_NAMES[tag]}s: {text}"))
        return out

    def draw_image(self, game: Game, canvas: Canvas) -> None:
        cities = linked_cities(game)
        if not cities:
            return
        d = canvas.pen
        tp = canvas.tile_px
        for city in cities:
            for tag in GATE_TAGS:
                ends = [(x, y) for t, x, y, _ in city.gates if t == tag]
                parts = {p for t, _, _, p in city.gates if t == tag}
                if len(ends) < 2 or len(parts) < 2:
                    continue
                pts = [_gate_pixel(game, canvas, x, y, tag) for x, y in ends[:2]]
                with d.group("gate-link", gate=tag):
                    _draw_link(d, pts, tag, tp)


def _draw_link(d: Any, pts: list[Point], tag: str, tp: int) -> None:
    """A dashed line from gate to gate, a ring round each gate."""
    _dashed(d, pts[0], pts[1], LINK_COLOURS[tag], max(2, round(0.05 * tp)), max(4.0, 0.12 * tp))
    r = 0.07 * tp
    for px, py in pts:
        d.ellipse([px - r, py - r, px + r, py + r], outline=LINK_COLOURS[tag], width=max(1, round(0.03 * tp)))
