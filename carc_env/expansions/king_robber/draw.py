"""How King & Robber Baron is drawn (the plug-in's drawing part): two status lines, each with the
holder's colour in the picture's panel::

    King: P1 (city of 5 tiles)
    Robber Baron: nobody yet
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...render.expansions import Drawing as BaseDrawing
from ...render.expansions import StatusLine
from .rules import KEY, KingRobberState

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game


def _who(p: int) -> str:
    return f"P{p}" if p >= 0 else "nobody yet"


class Drawing(BaseDrawing):
    """The holders of the King and the Robber Baron, with their records."""

    def status_lines(self, game: Game) -> list[StatusLine]:
        kr: KingRobberState = game.ext[KEY]
        rec = f" (city of {kr.king_size} tiles)" if kr.king >= 0 else ""
        out = [StatusLine(f"King: {_who(kr.king)}{rec}", kr.king if kr.king >= 0 else None)]
        rec = f" (road of {kr.robber_size} tiles)" if kr.robber >= 0 else ""
        out.append(StatusLine(f"Robber Baron: {_who(kr.robber)}{rec}", kr.robber if kr.robber >= 0 else None))
        return out
