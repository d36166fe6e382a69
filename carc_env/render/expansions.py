"""What the renderers draw for plug-ins: the :class:`Drawing` protocol and its look-ups.

Each plug-in may have a ``draw`` part (``<package>/draw.py``) with a class
``Drawing`` (a subclass of the one here, built once per rule set with
``Drawing(rules)``).  Both :func:`~carc_env.render.render_text` and
:func:`~carc_env.render.render_image` draw from it, so the text board and the
picture always say the same:

* ``status_lines(game)``: lines the text header and the picture's side panel
  add (their number must depend only on the configuration, never on the
  state, so every frame of an animation has the same panel);
* ``covered_cells(game)``: cells whose inside the plug-in draws over (the
  City of Carcassonne), where no follower sent onto a feature is drawn;
* ``draw_text(game, blocks)``: change the text board's 3 x 7 character blocks
  (``blocks[(x, y)]``) after the tiles and followers are drawn, or add blocks
  for empty cells (a printed board's sea and towns; the ``?`` of a legal cell
  is still drawn in the middle of such a block);
* ``draw_image(game, canvas)``: draw on the picture after the tiles, before
  the followers (:class:`Canvas`).  A drawing that draws only through
  ``canvas.pen`` (the ``ImageDraw`` methods plus ``meeple`` and ``group``,
  :mod:`carc_env.render.paint`) sets ``vector = True``: the SVG then gets its
  marks as vector elements, each plug-in's in a ``<g class="plugin"
  data-plugin=KEY>``; without it the SVG embeds what it draws on
  ``canvas.img`` as a picture;
* ``panel_block(game, font_px)``: a :class:`PanelBlock` drawn in the
  picture's side panel below the status lines (Stained Glass draws each
  player's windows there); its size must depend only on the configuration and
  the font size, like the number of status lines (a block with ``vector=True``
  draws with a pen, in the picture and the SVG alike);
* ``decision(game, where)``: the controls of the plug-in's own decision
  phases for a page (:class:`Decision`, :class:`Choice`): a prompt, and per
  legal action a label, a tooltip, a picture and where on the board it can be
  clicked (``where`` is a :class:`Canvas` with the board's geometry);
* ``building_styles`` / ``tag_styles``: how the building kinds and feature
  tags its tile data declares look (a letter on the text board; a roof colour
  and decoration, or a tag picture, in the image).  These belong to the tile
  data, so they are looked up over every registered plug-in.

Followers on a feature with no segment under them (the core's *guests*,
e.g. sent from a quarter of Carcassonne) are drawn by the renderers
themselves (:func:`guests`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.expansion import generation
from ..core.registry import all_parts, parts
from ..core.tiles import KIND_NAMES, RIVER

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.game import Game

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class StatusLine:
    """One line of expansion status: its text and, when it is about one player, that player."""

    text: str
    player: int | None = None


@dataclass(frozen=True)
class Guest:
    """A follower of ``player`` on the feature ``root`` (``kind``), drawn on segment ``segment`` of (x, y)."""

    player: int
    root: int
    kind: str
    x: int
    y: int
    segment: int


@dataclass(frozen=True)
class BuildingStyle:
    """How a building kind looks: its letter on the text board, its roof colour in the picture and an
    optional ``decorate(draw, cx, cy, size, outline)`` drawing more over it (pixel centre, glyph size)."""

    letter: str | None = None
    roof: Colour | None = None
    decorate: Callable[..., None] | None = None


@dataclass(frozen=True)
class TagStyle:
    """How a feature tag looks in the picture: ``draw(draw, centre, size_px)`` at the tag's position
    (normalised centre, canvas of ``size_px``).  The text board shows the tag's first letter."""

    draw: Callable[..., None]


@dataclass
class Canvas:
    """The picture being drawn, for :meth:`Drawing.draw_image`: the image, pixels per tile, the board's
    top-left pixel and the cells shown (``x0..x1``, ``y0..y1``)."""

    img: Any  # PIL.Image.Image, or None when the picture is vector (SVG)
    tile_px: int
    left: int
    top: int
    x0: int
    x1: int
    y0: int
    y1: int
    pen: Any = None  # the renderer's pen (see the module docstring)
    extra: dict = field(default_factory=dict)

    def cell_origin(self, x: int, y: int) -> tuple[int, int]:
        """Pixel of the top-left corner of cell (x, y)."""
        return self.left + (x - self.x0) * self.tile_px, self.top + (y - self.y0) * self.tile_px

    def shows(self, x0: int, y0: int, x1: int, y1: int) -> bool:
        """Whether every cell of the box ``x0..x1``, ``y0..y1`` is shown."""
        return self.x0 <= x0 and x1 <= self.x1 and self.y0 <= y0 and y1 <= self.y1


@dataclass(frozen=True)
class PanelBlock:
    """A block of the picture's side panel: its size in pixels and ``draw(img, x, y)`` drawing it with
    its top-left corner at pixel (x, y).  The size depends only on the configuration and the font size."""

    width: int
    height: int
    draw: Callable[[Any, int, int], None]
    vector: bool = False
    """``draw`` receives a pen (``ImageDraw`` methods) instead of the picture, so the SVG draws it too."""


@dataclass(frozen=True)
class Choice:
    """One legal action of a plug-in's decision phase as a control in a page.

    ``action``: its text notation; ``label``: the control's short text; ``tip``: a tooltip saying
    what it does; ``icon``: SVG elements drawing it in the box ``(0, 0)..(32, 32)`` (a token, a
    window, ...; empty for none); ``area``: a board box ``(x, y, width, height)`` in the canvas's
    units that a click chooses it by (a quarter of Carcassonne); ``point``: a board point that a
    click chooses it by (a road for a thief, a feature to send a follower to); ``group``: controls
    with the same group are shown together under that heading; ``passes``: the control declines
    (the phase's ``pass``)."""

    action: str
    label: str
    tip: str
    icon: str = ""
    area: tuple[float, float, float, float] | None = None
    point: tuple[float, float] | None = None
    group: str = ""
    passes: bool = False


@dataclass(frozen=True)
class Decision:
    """A plug-in's decision phase as controls: the ``prompt`` and the :class:`Choice` of its legal actions."""

    phase: str
    prompt: str
    choices: tuple[Choice, ...]


class Drawing:
    """A plug-in's drawing.  Override what you need (see the module docstring)."""

    building_styles: Mapping[str, BuildingStyle] = {}
    tag_styles: Mapping[str, TagStyle] = {}
    vector: bool = False
    key: str = ""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules

    def status_lines(self, game: Game) -> list[StatusLine]:
        return []

    def covered_cells(self, game: Game) -> set[tuple[int, int]]:
        return set()

    def draw_text(self, game: Game, blocks: dict[tuple[int, int], list[list[str]]]) -> None:
        """Change the text board's character blocks in place."""

    def draw_image(self, game: Game, canvas: Canvas) -> None:
        """Draw on ``canvas.img`` (after the tiles, before the followers)."""

    def panel_block(self, game: Game, font_px: int) -> PanelBlock | None:
        """A block for the picture's side panel (None: nothing)."""
        return None

    def decision(self, game: Game, where: Canvas) -> Decision | None:
        """The controls of ``game``'s current phase when it is one of this plug-in's (None: not one)."""
        return None


def drawings(rules: RuleSet) -> list[Drawing]:
    """The ``Drawing`` of every enabled expansion that has one, in expansion order (built once per rule set)."""

    def build() -> list[Drawing]:
        out = []
        for exp, module in parts(rules, "draw"):
            d = module.Drawing(rules)
            d.key = exp.KEY
            out.append(d)
        return out

    return rules.cache("render.drawings", build)


@functools.lru_cache(maxsize=8)
def _styles(gen: int) -> tuple[dict[str, BuildingStyle], dict[str, TagStyle]]:
    buildings: dict[str, BuildingStyle] = {}
    tags: dict[str, TagStyle] = {}
    for _, module in all_parts("draw"):
        buildings.update(module.Drawing.building_styles)
        tags.update(module.Drawing.tag_styles)
    return buildings, tags


def building_style(kind: str) -> BuildingStyle:
    """The style of a building kind (a default one if no plug-in declares it)."""
    return _styles(generation())[0].get(kind) or BuildingStyle()


def tag_style(tag: str) -> TagStyle | None:
    """The picture of a feature tag, if a plug-in declares one."""
    return _styles(generation())[1].get(tag)


def status_lines(game: Game) -> list[StatusLine]:
    """Expansion status for the text header and the side panel, in expansion order."""
    out: list[StatusLine] = []
    for d in drawings(game.rules):
        out.extend(d.status_lines(game))
    return out


def panel_blocks(game: Game, font_px: int) -> list[PanelBlock]:
    """The side-panel blocks of the enabled plug-ins, in expansion order."""
    out = []
    for d in drawings(game.rules):
        block = d.panel_block(game, font_px)
        if block is not None:
            out.append(block)
    return out


def icon(paint: Callable[[Any], None]) -> str:
    """SVG elements of what ``paint(pen)`` draws in the box ``(0, 0)..(32, 32)``: a control's picture
    (:attr:`Choice.icon`), drawn with the same pen methods as the board."""
    from .svg import SvgDraw  # the SVG renderer imports this module

    pen = SvgDraw()
    paint(pen)
    return pen.svg()


def segment_point(game: Game, where: Canvas, x: int, y: int, segment: int) -> tuple[float, float]:
    """Where a follower on ``segment`` of the tile at (x, y) stands, on ``where`` (a board point)."""
    from .geometry import CENTRE, tile_geometry

    _, _, t, r, _ = game.placements[game.board[(x, y)]]
    ax, ay = tile_geometry(game.rules.tiles[t], r).anchors.get(segment, CENTRE)
    ox, oy = where.cell_origin(x, y)
    return ox + ax * where.tile_px, oy + ay * where.tile_px


def decision(game: Game, where: Canvas) -> Decision | None:
    """The controls of ``game``'s current phase from the plug-in that owns it (None: no plug-in does)."""
    for d in drawings(game.rules):
        out = d.decision(game, where)
        if out is not None:
            return out
    return None


def covered_cells(game: Game) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for d in drawings(game.rules):
        out |= d.covered_cells(game)
    return out


def guests(game: Game) -> list[Guest]:
    """Followers on a feature with no segment under them, each drawn on the feature's top-left tile
    outside the cells a plug-in draws over (its top-left tile if it has no other)."""
    if not game.guests:
        return []
    find = game.find
    covered = covered_cells(game)
    roots = sorted({find(r) for r in game.guests})
    out: list[Guest] = []
    for r in roots:
        owners = [p for k, v in game.guests.items() if find(k) == r for p in v]
        x, y = min(game.feature_tiles(r), key=lambda c: (c in covered, c[1], c[0]))
        _, _, t, _, base = game.placements[game.board[(x, y)]]
        segs = game.rules.tiles[t].segments
        seg = next(i for i in range(len(segs)) if segs[i].kind != RIVER and find(base + i) == r)
        kind = segs[seg].building or KIND_NAMES[segs[seg].kind]
        out.extend(Guest(p, r, kind, x, y, seg) for p in sorted(owners))
    return out


__all__ = [
    "BuildingStyle", "Canvas", "Choice", "Decision", "Drawing", "Guest", "PanelBlock", "StatusLine", "TagStyle", "building_style",
    "covered_cells", "decision", "drawings", "icon", "segment_point", "guests", "panel_blocks", "status_lines", "tag_style",
]  # fmt: skip
