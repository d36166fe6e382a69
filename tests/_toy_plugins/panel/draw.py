"""The test plug-in's drawing: a 40 x 30 block of one colour in the side panel."""

from __future__ import annotations

from PIL import ImageDraw

from carc_env.render.expansions import Drawing as BaseDrawing
from carc_env.render.expansions import PanelBlock

COLOUR = (1, 254, 3)


class Drawing(BaseDrawing):
    def panel_block(self, game, font_px: int) -> PanelBlock:
        def draw(img, x: int, y: int) -> None:
            ImageDraw.Draw(img).rectangle([x, y, x + 39, y + 29], fill=COLOUR)

        return PanelBlock(40, 30, draw)
