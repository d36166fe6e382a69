"""How Heretics and Shrines is drawn (the plug-in's drawing part): the shrine building kind shows as
``s`` on the text board (its first letter) and with a purple roof in the picture."""

from __future__ import annotations

from ...render.expansions import BuildingStyle
from ...render.expansions import Drawing as BaseDrawing

SHRINE_ROOF = (118, 44, 140)


class Drawing(BaseDrawing):
    """The shrine's roof colour."""

    building_styles = {"shrine": BuildingStyle(roof=SHRINE_ROOF)}


__all__ = ["Drawing", "SHRINE_ROOF"]
