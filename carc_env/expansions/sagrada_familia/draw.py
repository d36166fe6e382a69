"""How the Sagrada Familia is drawn (the plug-in's drawing part).

* The tile: ``S`` on its city in the text board (a tag's first letter, as for
  every tag); in the picture the basilica's towers (four sandstone spires).
* Its city, while its rule is in force: in the picture a terracotta frame
  inside every tile of it (every part, when royal gates link it).
* One status line (text header and picture panel)::

    Sagrada Familia: not placed
    Sagrada Familia: city at (0,-1), 4 tiles, 3 open edges: may not be closed
    Sagrada Familia: city at (0,-1), 4 tiles, 3 open edges: scores 0 if closed (variant)
    Sagrada Familia: closed by its own tile: scored 0
    Sagrada Familia: city closed: scores 0 (variant)
    Sagrada Familia: removed (no legal placement)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...render.expansions import Canvas, StatusLine, TagStyle
from ...render.expansions import Drawing as BaseDrawing
from ...render.geometry import Point
from .rules import KEY, TAG, SagradaState, in_force

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

STONE = (214, 186, 140)
FRAME = (190, 90, 50)


def _towers(d: Any, c: Point, s: int) -> None:
    """Four spires, the middle ones taller."""
    cx, cy = c[0] * s, c[1] * s
    w, h = 0.06 * s, 0.3 * s
    outline = (80, 60, 40)
    for i, k in enumerate((0.7, 1.0, 1.0, 0.7)):
        x = cx + (i - 1.5) * w * 1.1
        top = cy - h * k / 2
        d.polygon(
            [
                (x - w / 2, cy + h / 2),
                (x - w / 2, top + 0.25 * h * k),
                (x, top),
                (x + w / 2, top + 0.25 * h * k),
                (x + w / 2, cy + h / 2),
            ],
            fill=STONE,
            outline=outline,
        )


class Drawing(BaseDrawing):
    """The basilica, its city's frame, a status line."""

    vector = True

    tag_styles = {TAG: TagStyle(_towers)}

    def __init__(self, rules) -> None:
        super().__init__(rules)
        self.variant = rules.by_key[KEY].options.may_close
        self.tile = next(i for i, t in enumerate(rules.tiles) if any(TAG in s.tags for s in t.segments))

    def status_lines(self, game: Game) -> list[StatusLine]:
        st: SagradaState = game.ext[KEY]
        if st.node < 0:
            gone = game.remaining_counts()[self.tile] == 0 and game.current_tile != self.tile
            text = "removed (no legal placement)" if gone else "not placed"
        elif st.closed_by_tile:
            text = "closed by its own tile: scored 0"
        elif not in_force(game):
            text = "city closed: scores 0 (variant)"
        else:
            root = game.find(st.node)
            x, y = game.placements[game.node_tile[st.node]][:2]
            n, o = len(game.tiles[root]), game.open[root]
            rule = "scores 0 if closed (variant)" if self.variant else "may not be closed"
            text = f"city at ({x},{y}), {n} tiles, {o} open edge{'s' * (o != 1)}: {rule}"
        return [StatusLine(f"Sagrada Familia: {text}")]

    def draw_image(self, game: Game, canvas: Canvas) -> None:
        if not in_force(game):
            return
        d = canvas.pen
        tp = canvas.tile_px
        inset, width = 0.06 * tp, max(1, round(0.035 * tp))
        for x, y in game.feature_tiles(game.find(game.ext[KEY].node)):
            if not (canvas.x0 <= x <= canvas.x1 and canvas.y0 <= y <= canvas.y1):
                continue
            ox, oy = canvas.cell_origin(x, y)
            with d.group("sagrada-frame", x=x, y=y):
                d.rectangle([ox + inset, oy + inset, ox + tp - inset, oy + tp - inset], outline=FRAME, width=width)
