"""King & Robber Baron's rules (Count, King & Robber, 1st edition; rules: ``docs/rules/king_robber.md``).

Contract
--------
* ``tile_files``: the 5 land tiles ``KR-*`` (``data/tiles/king_robber.toml``),
  shuffled into the stack; the King and the Robber Baron are figures, not tiles.
* The King goes to the player who places the tile completing the first city of
  the game (occupied or not), then to whoever completes a city of strictly more
  distinct tiles than the largest completed so far; the Robber Baron likewise
  for roads (``on_completed``).  When one tile completes several cities, the
  largest of them (``game.completing``) is compared, once.
* End of game (``final_scoring``): the King's holder scores 1 point per
  completed city on the board, the Robber Baron's 1 per completed road
  (``Game.count_completed``, so an expansion can add completed features that
  are not union-find roots through the ``extra_completed`` hook).
* A completed feature an expansion leaves out (``Game.counts_as_completed``: a
  city the Sagrada Familia tile itself closed) neither moves a figure nor counts.
* Events: :class:`~carc_env.core.events.FigureMoved` when a figure changes
  hands; ``PointsAwarded`` (items ``"king"`` / ``"robber"``) at the end.

State (``game.ext["king_robber"]``, a :class:`KingRobberState`):
``king`` / ``robber`` (holder's player index, -1 = nobody yet) and
``king_size`` / ``robber_size`` (tiles of the largest completed city / road).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.events import FigureMoved, ScoreItem
from ...core.expansion import Expansion
from ...core.tiles import CITY, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "king_robber"


@dataclass
class KingRobberState:
    """Who holds the King and the Robber Baron, and the record each was won with."""

    king: int = -1
    """Player holding the King, -1 before the first city is completed."""
    king_size: int = 0
    """Distinct tiles of the largest city completed so far."""
    robber: int = -1
    """Player holding the Robber Baron, -1 before the first road is completed."""
    robber_size: int = 0
    """Distinct tiles of the longest road completed so far."""


# figure name, holder attribute, record attribute, feature noun (singular, plural)
_FIGURES = {
    CITY: ("king", "king", "king_size", "city", "cities"),
    ROAD: ("robber", "robber", "robber_size", "road", "roads"),
}


class KingRobber(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    tile_files = ("king_robber.toml",)

    def new_state(self) -> KingRobberState:
        return KingRobberState()

    def on_completed(self, game: Game, root: int, kind: int, size: int) -> None:
        fig = _FIGURES.get(kind)
        if fig is None or not game.counts_as_completed(root):
            return
        name, holder_attr, size_attr, noun, _ = fig
        st: KingRobberState = game.ext[KEY]
        # Several features of this kind completed on one turn: the largest is compared
        # (the others then never beat the record it sets).
        find, kinds, tiles = game.find, game.kind, game.tiles
        for r in game.completing:
            if kinds[r] == kind and game.counts_as_completed(find(r)):
                size = max(size, len(tiles[find(r)]))
        if size <= getattr(st, size_attr):  # strictly larger only; equal keeps the holder
            return
        setattr(st, size_attr, size)
        previous = getattr(st, holder_attr)
        player = game.turn_player
        if player != previous:
            setattr(st, holder_attr, player)
            game.emit(FigureMoved(name, player, previous, f"completed a {noun} of {size} tiles"))

    def final_scoring(self, game: Game) -> None:
        st: KingRobberState = game.ext[KEY]
        for kind, (name, holder_attr, _, noun, plural) in _FIGURES.items():
            holder = getattr(st, holder_attr)
            if holder < 0:
                continue
            n = game.count_completed(kind)
            game.award(holder, n, [ScoreItem(name, f"{n} completed {noun if n == 1 else plural} x 1", n)], final=True)
