"""How Darmstadt's pieces are drawn (the plug-in's drawing part).

* The church building kind: ``h`` on the text board (``c`` is the
  cloister's), a blue roof with a cross in the picture.
* The Darmstadtium tag: ``D`` on its city in the text board (the tag's first
  letter, as for every tag); in the picture a white periodic-table square
  marked ``Ds`` in its city.
"""

from __future__ import annotations

from typing import Any

from ...render.expansions import BuildingStyle, TagStyle
from ...render.expansions import Drawing as BaseDrawing
from ...render.geometry import Point
from ...render.image import font, text_width
from .rules import CHURCH, TAG

ELEMENT_COLOUR = (236, 240, 248)  # the Darmstadtium's element square
CHURCH_ROOF = (40, 84, 178)


def _cross(d: Any, cx: float, cy: float, g: float, outline: tuple[int, int, int]) -> None:
    """A cross on the roof top of a building glyph ``g`` pixels wide centred on (cx, cy)."""
    t = max(1, round(0.05 * g))
    d.rectangle([cx - t / 2, cy - 0.62 * g, cx + t / 2, cy - 0.40 * g], fill=outline)
    d.rectangle([cx - 0.08 * g, cy - 0.56 * g, cx + 0.08 * g, cy - 0.56 * g + t], fill=outline)


def _element(d: Any, c: Point, s: int, symbol: str = "Ds", size: float = 0.26) -> None:
    """A periodic-table square with ``symbol`` (the Darmstadtium, element Ds), centred on ``c``."""
    k = size * s
    cx, cy = min(1 - size / 2 - 0.04, max(size / 2 + 0.04, c[0])) * s, min(1 - size / 2 - 0.04, c[1]) * s
    box = [cx - k / 2, cy - k / 2, cx + k / 2, cy + k / 2]
    d.rectangle(box, fill=ELEMENT_COLOUR, outline=(30, 30, 40), width=max(1, round(0.015 * s)))
    f = font(max(6, round(0.55 * k)))
    tw = text_width(f, symbol)
    d.text((cx - tw / 2, cy - 0.62 * f.size), symbol, fill=(30, 30, 40), font=f)


class Drawing(BaseDrawing):
    """The church and the Darmstadtium."""

    building_styles = {CHURCH: BuildingStyle(letter="h", roof=CHURCH_ROOF, decorate=_cross)}
    tag_styles = {TAG: TagStyle(_element)}


__all__ = ["CHURCH_ROOF", "Drawing", "ELEMENT_COLOUR"]
