"""Rendering: a plain-text board (``ansi``) and a picture (``rgb_array``), PNG/GIF export.

* :func:`render_text` - text board with coordinates, header and legend
  (see :mod:`carc_env.render.text`);
* :func:`render_image` - ``(H, W, 3)`` uint8 picture drawn from the tile data
  (see :mod:`carc_env.render.image`);
* :func:`render_svg` - the same board as an SVG document, for notebooks and
  the play page (see :mod:`carc_env.render.svg`);
* :func:`save_png`, :func:`save_gif`, :func:`frames_from_record` - export and
  replay of JSON game records (see :mod:`carc_env.render.export`).

Only the core and the plug-in registry are imported (plus numpy and
Pillow): what is drawn of an expansion comes from its plug-in's ``draw`` part
(a :class:`Drawing`, see :mod:`carc_env.render.expansions`).
"""

from .expansions import BuildingStyle, Canvas, Drawing, StatusLine, TagStyle
from .export import frames_from_record, save_gif, save_png
from .image import PLAYER_COLOURS, board_view, cell_box, player_colour, render_image, tile_image
from .svg import render_svg, tile_document
from .text import render_text

__all__ = [
    "render_text",
    "render_image",
    "render_svg",
    "tile_document",
    "save_png",
    "save_gif",
    "frames_from_record",
    "PLAYER_COLOURS",
    "player_colour",
    "board_view",
    "cell_box",
    "tile_image",
    "BuildingStyle",
    "Canvas",
    "Drawing",
    "StatusLine",
    "TagStyle",
]
