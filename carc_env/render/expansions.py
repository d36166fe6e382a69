"""What the renderers show of the built-in expansions' state (``game.ext``), as plain data.

Both :func:`~carc_env.render.render_text` and
:func:`~carc_env.render.render_image` draw from these functions, so the text
board and the picture always say the same.  Each returns nothing for an
expansion the game does not use.

* :func:`status_lines`: the lines the text header and the picture's side
  panel add: King & Robber Baron holders (with their records), the Count's
  quarter and the followers in each quarter, followers sent from the quarters
  onto features (only during the Count's phases), the river's progress.  The
  number of lines depends only on the configuration, never on the state, so
  every frame of an animation has the same panel.
* :func:`count_block`: where the City of Carcassonne lies and what is in its
  quarters, for drawing them on the block.
* :func:`guests`: followers standing on a feature without a segment (sent
  from a quarter), with a tile and segment of the feature to draw them on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.tiles import KIND_NAMES, RIVER
from ..expansions.count import BLOCK_X, BLOCK_Y, QUARTERS

COUNT, KING_ROBBER, RIVER2 = "count", "king_robber", "river2"
BLOCK_W, BLOCK_H = 4, 3


@dataclass(frozen=True)
class StatusLine:
    """One line of expansion status: its text and, when it is about one player, that player."""

    text: str
    player: int | None = None


@dataclass(frozen=True)
class CountBlock:
    """The City of Carcassonne: cells ``x0..x0+3``, ``y0..y0+2``; followers per quarter and player."""

    x0: int
    y0: int
    quarters: tuple[tuple[int, ...], ...]  # quarters[q][p]
    count: int  # the Count's quarter

    names = QUARTERS


@dataclass(frozen=True)
class Guest:
    """A follower of ``player`` on the feature ``root`` (``kind``), drawn on segment ``segment`` of (x, y)."""

    player: int
    root: int
    kind: str
    x: int
    y: int
    segment: int


def _who(p: int) -> str:
    return f"P{p}" if p >= 0 else "nobody yet"


def count_block(game) -> CountBlock | None:
    st = game.ext.get(COUNT)
    if not st or not st.get("quarters"):
        return None
    return CountBlock(BLOCK_X, BLOCK_Y, tuple(tuple(q) for q in st["quarters"]), int(st["count"]))


def quarter_text(block: CountBlock, q: int) -> str:
    """``"P0 x1, P2 x2"`` (or ``"-"``) for quarter ``q``."""
    parts = [f"P{p} x{k}" for p, k in enumerate(block.quarters[q]) if k]
    return ", ".join(parts) or "-"


def guests(game) -> list[Guest]:
    """Followers sent from the quarters onto features, each drawn on the feature's top-left tile
    outside the City of Carcassonne (its top-left tile if it has no other)."""
    if not game.guests:
        return []
    find = game.find
    roots = sorted({find(r) for r in game.guests})
    out = []
    for r in roots:
        owners = [p for k, v in game.guests.items() if find(k) == r for p in v]
        x, y = min(game.feature_tiles(r), key=lambda c: (_in_block(*c), c[1], c[0]))
        _, _, t, _, base = game.placements[game.board[(x, y)]]
        segs = game.rules.tiles[t].segments
        seg = next(i for i in range(len(segs)) if segs[i].kind != RIVER and find(base + i) == r)
        kind = segs[seg].building or KIND_NAMES[segs[seg].kind]
        out.extend(Guest(p, r, kind, x, y, seg) for p in sorted(owners))
    return out


def status_lines(game) -> list[StatusLine]:
    """Expansion status for the text header and the side panel (see the module docstring)."""
    out: list[StatusLine] = []
    kr = game.ext.get(KING_ROBBER)
    if kr is not None:
        rec = f" (city of {kr.king_size} tiles)" if kr.king >= 0 else ""
        out.append(StatusLine(f"King: {_who(kr.king)}{rec}", kr.king if kr.king >= 0 else None))
        rec = f" (road of {kr.robber_size} tiles)" if kr.robber >= 0 else ""
        out.append(StatusLine(f"Robber Baron: {_who(kr.robber)}{rec}", kr.robber if kr.robber >= 0 else None))
    block = count_block(game)
    if block is not None:
        out.append(StatusLine(f"Count on the {QUARTERS[block.count]}"))
        for q, name in enumerate(QUARTERS):
            mark = " (Count)" if q == block.count else ""
            out.append(StatusLine(f"  {name}{mark}: {quarter_text(block, q)}"))
        sent = guests(game)
        text = ", ".join(f"P{g.player} on the {g.kind} at ({g.x},{g.y})" for g in sent)
        out.append(StatusLine(f"Sent from the quarters: {text or '-'}"))
    river = game.ext.get(RIVER2)
    if river is not None:
        tiles = game.rules.tiles
        left = sum(n for t, n in enumerate(game.remaining_counts().tolist()) if n and _is_river(tiles[t]))
        if game.current_tile >= 0 and _is_river(tiles[game.current_tile]):
            left += 1
        if left:
            ends = " ".join(f"({x},{y})" for x, y, _, _ in river["ends"] if (x, y) not in game.board)
            text = f"River: {left} tile{'s' * (left != 1)} to place, open ends {ends or '-'}"
        else:
            text = "River: complete"
        if river.get("extra_turn"):
            text += f"; P{game.turn_player} plays again (lake)"
        out.append(StatusLine(text))
    return out


def _in_block(x: int, y: int) -> bool:
    """Whether (x, y) is a tile of the City of Carcassonne (its inside is drawn over)."""
    return BLOCK_X <= x < BLOCK_X + BLOCK_W and BLOCK_Y <= y < BLOCK_Y + BLOCK_H


def _is_river(tile) -> bool:
    return any(s.kind == RIVER for s in tile.segments)


__all__ = ["CountBlock", "Guest", "StatusLine", "count_block", "guests", "quarter_text", "status_lines"]
