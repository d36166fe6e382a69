"""The example's drawing: a status line (``Tolls banked: P0 1, P1 0``) in the text header and the
picture's panel, and a gold coin beside the road of a toll house in the picture."""

from __future__ import annotations

from carc_env.render import Drawing as BaseDrawing
from carc_env.render import StatusLine, TagStyle

from .rules import KEY, TAG

COIN = (232, 190, 40)


def _coin(draw, centre, size_px: int) -> None:
    cx, cy, r = centre[0] * size_px, centre[1] * size_px, 0.08 * size_px
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=COIN, outline=(90, 70, 10))


class Drawing(BaseDrawing):
    tag_styles = {TAG: TagStyle(_coin)}

    def status_lines(self, game) -> list[StatusLine]:
        banked = game.ext[KEY].banked
        return [StatusLine("Tolls banked: " + ", ".join(f"P{p} {n}" for p, n in enumerate(banked)))]
