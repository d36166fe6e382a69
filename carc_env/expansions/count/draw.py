"""How the Count of Carcassonne is drawn (the plug-in's drawing part).

* Status lines (text header and picture panel): the Count's quarter, the
  followers in each quarter, and the followers sent from the quarters onto
  features (only during the Count's phases)::

      Count on the market
        castle: P0 x1, P2 x2
        market (Count): -
        blacksmith: -
        cathedral: P1 x3
      Sent from the quarters: P2 on the city at (2,1)

* Text board: the quarters inside the City of Carcassonne (the 4 x 3 block),
  one line each: the quarter's name, ``C`` where the Count stands, then one
  digit per follower in it (the player's number)::

      + castle       022         +
      . market     C             .
      + blacksmith               +
      + cathedral    111         +

* Picture: a walled city over the block's inside with its four quarters
  (castle, market / blacksmith, cathedral), a meeple per player in each
  quarter (with the number when more than one), the Count as a gold crown in
  his quarter, which is framed in gold.  Followers sent from a quarter stand
  on their feature's top-left tile outside the block (``covered_cells``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.actions import Pass
from ...core.tiles import KIND_NAMES
from ...render.expansions import Canvas, Choice, Decision, StatusLine, guests, icon, segment_point
from ...render.expansions import Drawing as BaseDrawing
from ...render.geometry import INTERIOR_W
from ...render.image import FIELD_COLOUR, GUEST_RING_COLOUR, font, text_width
from ...render.text import CELL_H, CELL_W
from .rules import BLOCK_X, BLOCK_Y, KEY, QUARTERS, CountDeploy, CountMove, CountSend, CountState

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

BLOCK_W, BLOCK_H = 4, 3
QUARTER_W = 24  # characters of a quarter's line inside the City of Carcassonne
QUARTER_DIGITS = QUARTER_W - 13
CITADEL_COLOUR = (204, 178, 136)  # the City of Carcassonne's quarters
CITADEL_WALL = (104, 74, 46)
COUNT_COLOUR = GUEST_RING_COLOUR  # the Count's crown and his quarter's frame, gold like a sent follower's ring


@dataclass(frozen=True)
class CountBlock:
    """The City of Carcassonne: cells ``x0..x0+3``, ``y0..y0+2``; followers per quarter and player."""

    x0: int
    y0: int
    quarters: tuple[tuple[int, ...], ...]  # quarters[q][p]
    count: int  # the Count's quarter

    names = QUARTERS


def count_block(game: Game) -> CountBlock:
    st: CountState = game.ext[KEY]
    return CountBlock(BLOCK_X, BLOCK_Y, tuple(tuple(q) for q in st.quarters), int(st.count))


def quarter_text(block: CountBlock, q: int) -> str:
    """``"P0 x1, P2 x2"`` (or ``"-"``) for quarter ``q``."""
    parts = [f"P{p} x{k}" for p, k in enumerate(block.quarters[q]) if k]
    return ", ".join(parts) or "-"


class Drawing(BaseDrawing):
    """The quarters, the Count and the followers sent from the quarters."""

    vector = True

    def status_lines(self, game: Game) -> list[StatusLine]:
        block = count_block(game)
        out = [StatusLine(f"Count on the {QUARTERS[block.count]}")]
        for q, name in enumerate(QUARTERS):
            mark = " (Count)" if q == block.count else ""
            out.append(StatusLine(f"  {name}{mark}: {quarter_text(block, q)}"))
        sent = guests(game)
        text = ", ".join(f"P{g.player} on the {g.kind} at ({g.x},{g.y})" for g in sent)
        out.append(StatusLine(f"Sent from the quarters: {text or '-'}"))
        return out

    def covered_cells(self, game: Game) -> set[tuple[int, int]]:
        return {(BLOCK_X + i, BLOCK_Y + j) for i in range(BLOCK_W) for j in range(BLOCK_H)}

    def draw_text(self, game: Game, blocks: dict[tuple[int, int], list[list[str]]]) -> None:
        """Write the quarters inside the block (rows 3..6, columns 2..25 of its characters).

        Those characters only ever hold the block's inside (its fields, roads and followers lie on
        the outer rows and columns).
        """
        block = count_block(game)
        for q, name in enumerate(block.names):
            digits = "".join(str(p) * k for p, k in enumerate(block.quarters[q]))
            if len(digits) > QUARTER_DIGITS:
                digits = digits[: QUARTER_DIGITS - 1] + "+"
            text = f"{name:<10} {'C' if q == block.count else ' '} {digits}".ljust(QUARTER_W)
            row = 3 + q
            for j, ch in enumerate(text):
                col = 2 + j
                cell = blocks.get((block.x0 + col // CELL_W, block.y0 + row // CELL_H))
                if cell is not None:
                    cell[row % CELL_H][col % CELL_W] = ch

    def draw_image(self, game: Game, canvas: Canvas) -> None:
        _draw_city_of_carcassonne(count_block(game), canvas)

    def decision(self, game: Game, where: Canvas) -> Decision | None:
        phase = game.phase
        if phase not in PROMPTS:
            return None
        block = count_block(game)
        boxes = quarter_boxes(block, where)
        p = game.player
        out = []
        for a in game.legal_actions():
            text = game.action_text(a)
            if type(a) is CountDeploy:
                q = QUARTERS[a.quarter]
                out.append(Choice(text, f"into the {q}", f"Put a follower from your supply into the {q}: "
                                  f"{QUARTER_USE[a.quarter]}", _quarter_icon(a.quarter, p, False), boxes[a.quarter]))  # fmt: skip
            elif type(a) is CountMove:
                q = QUARTERS[a.quarter]
                who = quarter_text(block, a.quarter)
                out.append(Choice(text, f"Count to the {q}", f"Move the Count to the {q} (followers there: {who}): "
                                  "nobody can leave the quarter he stands on", _quarter_icon(a.quarter, None, True),
                                  boxes[a.quarter]))  # fmt: skip
            elif type(a) is CountSend:
                out.append(_send_choice(game, where, a, text))
            elif type(a) is Pass:
                out.append(Choice(text, PASS_LABELS[phase], PASS_TIPS[phase], passes=True))
        return Decision(phase, PROMPTS[phase], tuple(out))


PROMPTS = {
    "count_deploy": "An opponent scored and you did not: you may put a follower into a quarter of Carcassonne "
    "(click a quarter).",
    "count_move": "You may move the Count to another quarter (click it): nobody can leave his quarter.",
    "count_leave": "Features were completed: you may send followers from the quarters onto them (click a gold mark).",
    "count_final": "Before the final scoring: you may send followers from the quarters onto unfinished features "
    "(click a gold mark); a pass is for good.",
}
PASS_LABELS = {"count_deploy": "Keep your follower", "count_move": "Leave the Count", "count_leave": "Send no more",
               "count_final": "Send no more"}  # fmt: skip
PASS_TIPS = {
    "count_deploy": "Put no follower into Carcassonne this turn",
    "count_move": "The Count stays where he is",
    "count_leave": "Your followers stay in the quarters (the next player may still send theirs)",
    "count_final": "Your followers stay in the quarters for good",
}
QUARTER_USE = (
    "from there it can later be sent onto a city being scored",
    "from there it can be sent onto a field at the end of the game",
    "from there it can later be sent onto a road being scored",
    "from there it can later be sent onto a cloister (or shrine, church) being scored",
)


def _quarter_icon(q: int, player: int | None, count: bool) -> str:
    """A quarter as a control's picture: its plot, a follower of ``player`` or the Count's crown."""

    def paint(d: Any) -> None:
        d.rectangle([1, 1, 31, 31], fill=CITADEL_COLOUR, outline=COUNT_COLOUR if count else CITADEL_WALL, width=2)
        d.text((3, 2), QUARTERS[q][:2], fill=(50, 36, 24), font=font(11))
        if count:
            _crown(d, 19, 21, 16)
        elif player is not None:
            d.meeple(player, 12, 10, 19)

    return icon(paint)


def _send_choice(game: Game, where: Canvas, a: CountSend, text: str) -> Choice:
    """A move out of a quarter: the feature's spot on its tile, clickable."""
    k = game.board[(a.x, a.y)]
    _, _, t, _, base = game.placements[k]
    seg = game.rules.tiles[t].segment_index(a.segment)
    root = game.find(base + seg)
    segment = game.rules.tiles[t].segments[seg]
    kind = segment.building or KIND_NAMES[segment.kind]
    q = game.rules.by_key[KEY].quarter_of(game, root)
    src = f"the {QUARTERS[q]}" if q is not None else "a quarter"
    owners = sorted({*(game.followers[n] for n in game.occupants.get(root, ())), *game.guests.get(root, ())})
    held = ", ".join(f"P{o}" for o in owners) if owners else "nobody yet"
    return Choice(text, f"{kind} {a.segment} at ({a.x},{a.y})",
                  f"Send a follower from {src} onto the {kind} at ({a.x},{a.y}) (held by {held}): it scores with "
                  "the feature and comes back to your supply", _quarter_icon(q if q is not None else 0, game.player, False),
                  point=segment_point(game, where, a.x, a.y, seg), group=f"from {src}")  # fmt: skip


def _crown(d: Any, cx: float, cy: float, w: float) -> None:
    """The Count: a gold crown ``w`` pixels wide centred on (cx, cy)."""
    h = 0.7 * w
    pts = [(-0.5, 0.5), (-0.5, -0.2), (-0.25, 0.1), (0.0, -0.5), (0.25, 0.1), (0.5, -0.2), (0.5, 0.5)]
    d.polygon(
        [(cx + x * w, cy + y * h) for x, y in pts], fill=COUNT_COLOUR, outline=(60, 40, 10), width=max(1, round(w / 14))
    )


def _draw_city_of_carcassonne(block: CountBlock, canvas: Canvas) -> None:
    """The walled city over the inside of the Count's block: four quarters (castle, market, blacksmith,
    cathedral; 2 x 2), their followers (a meeple per player, with the count when more than one) and the
    Count (a gold crown, his quarter framed in gold)."""
    bx, by = block.x0, block.y0
    if not canvas.shows(bx, by, bx + BLOCK_W - 1, by + BLOCK_H - 1):
        return
    tp = canvas.tile_px
    d = canvas.pen
    inset = 0.42 * tp
    ox, oy = canvas.cell_origin(bx, by)
    left, top = ox + inset, oy + inset
    right, bottom = left + BLOCK_W * tp - 2 * inset, top + BLOCK_H * tp - 2 * inset
    # the tiles' '-' bands between the block's tiles would stick out of the wall into the farms
    band = INTERIOR_W * tp + 1
    rim = tuple(int(c * 0.72) for c in FIELD_COLOUR)
    for i in range(1, BLOCK_W):
        x = ox + i * tp
        for ya, yb in ((oy, top), (bottom, oy + BLOCK_H * tp - 1)):
            d.rectangle([x - band, ya, x + band - 1, yb], fill=FIELD_COLOUR)
            d.line([(x - 1, ya), (x - 1, yb)], fill=rim)
            d.line([(x, ya), (x, yb)], fill=rim)
    for j in range(1, BLOCK_H):
        y = oy + j * tp
        for xa, xb in ((ox, left), (right, ox + BLOCK_W * tp - 1)):
            d.rectangle([xa, y - band, xb, y + band - 1], fill=FIELD_COLOUR)
            d.line([(xa, y - 1), (xb, y - 1)], fill=rim)
            d.line([(xa, y), (xb, y)], fill=rim)
    with d.group("count-city"):
        d.rounded_rectangle([left, top, right, bottom], radius=0.12 * tp, fill=CITADEL_WALL)
    for q, (qx, qy, qw, qh) in enumerate(quarter_boxes(block, canvas)):
        with d.group("count-quarter", quarter=block.names[q], count=int(q == block.count)):
            _draw_quarter(d, block, q, qx, qy, qw, qh, tp)


def quarter_boxes(block: CountBlock, canvas: Canvas) -> list[tuple[float, float, float, float]]:
    """``(x, y, width, height)`` of each quarter (castle, market, blacksmith, cathedral) on ``canvas``."""
    tp = canvas.tile_px
    inset = 0.42 * tp
    ox, oy = canvas.cell_origin(block.x0, block.y0)
    left, top = ox + inset, oy + inset
    right, bottom = left + BLOCK_W * tp - 2 * inset, top + BLOCK_H * tp - 2 * inset
    wall = max(2, round(0.07 * tp))
    gap = max(1, round(0.04 * tp))
    qw, qh = (right - left - 2 * wall - gap) / 2, (bottom - top - 2 * wall - gap) / 2
    return [(left + wall + (q % 2) * (qw + gap), top + wall + (q // 2) * (qh + gap), qw, qh) for q in range(4)]


def _draw_quarter(d: Any, block: CountBlock, q: int, qx: float, qy: float, qw: float, qh: float, tp: int) -> None:
    """One quarter: its name, its followers (a meeple per player, the number when more than one), the Count."""
    name = block.names[q]
    fsz = max(8, min(18, round(0.19 * tp)))
    f = font(fsz)
    msz = max(8, round(0.3 * tp))
    here = q == block.count
    d.rectangle([qx, qy, qx + qw, qy + qh], fill=CITADEL_COLOUR,
                outline=COUNT_COLOUR if here else None, width=max(1, round(0.04 * tp)) if here else 0)  # fmt: skip
    pad = max(2, round(0.06 * tp))
    y = qy + pad
    if tp >= 24:
        d.text((qx + pad, y - 1), name, fill=(50, 36, 24), font=f)
        y += fsz + 1
    if here:  # bottom right, clear of the quarter's name
        cw = 0.32 * tp
        with d.group("count-figure"):
            _crown(d, qx + qw - pad - cw / 2, qy + qh - pad - 0.35 * cw, cw)
    x = qx + pad
    for p, k in enumerate(block.quarters[q]):
        if not k:
            continue
        label = str(k) if k > 1 else ""
        w = msz + (text_width(f, label) + 2 if label else 0)
        if x + w > qx + qw - pad and x > qx + pad:
            x, y = qx + pad, y + msz
        d.meeple(p, x, y, msz)
        if label:
            d.text((x + msz + 1, y + msz - fsz - 1), label, fill=(30, 22, 14), font=f)
        x += w + 2


__all__ = ["COUNT_COLOUR", "CountBlock", "Drawing", "count_block", "quarter_boxes", "quarter_text"]
