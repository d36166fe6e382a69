"""Heretics and Shrines' rules (Count, King & Robber; rules: ``docs/rules/shrines.md``).

Contract
--------
* ``tile_files``: the 5 shrine tiles ``CU-*`` (``data/tiles/shrines.toml``);
  option ``sixth_tile`` adds RGG's ``CU-shrine-CRFR`` (``shrines_rgg.toml``).
  The file declares the building kind ``shrine``, which the core places,
  occupies and scores exactly like a cloister.
* Two sides: shrines, and cloister-like buildings (``cloister``; ``church``
  too unless ``churches_are_cloisters=False``).  Other building kinds take no
  part.
* Placement (``placement_veto``): a tile with a building of one side may not go
  where it adjoins (8 neighbours) more than one building of the other side.
  With ``strict_pairing`` (default) it may not go next to a building of the
  other side that already adjoins one of its own side either, so every
  shrine-cloister pairing is one-to-one (official FAQ; JCZ).
* Challenges (``on_scored``): when an occupied building is completed and
  scored during the game, every adjacent building of the other side that is
  still incomplete, and not being completed by the same tile, loses its
  followers without points (``FollowerReturned``).  An unoccupied completed
  building is not scored, so it wins no challenge.  At game end nothing
  happens: both buildings score as incomplete cloisters.

State: none; everything is read from the board (``game.buildings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.events import FollowerReturned
from ...core.expansion import Expansion
from ...core.tiles import BUILDING, NEIGHBOURS8

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ...core.config import RuleSet
    from ...core.game import Game

KEY = "shrines"
SHRINE, CLOISTER = 1, -1


@dataclass(frozen=True)
class ShrineOptions:
    sixth_tile: bool = False
    """Add RGG's sixth tile CU-shrine-CRFR (Cult, Siege & Creativity); the HiG edition has 5."""
    strict_pairing: bool = True
    """Also forbid placing a building next to one of the other side that already has a partner of
    the new building's side (official FAQ: a shrine may not force a cloister to neighbour two shrines;
    JCZ).  False: only the rule text's direct restriction."""
    churches_are_cloisters: bool = True
    """Churches (Darmstadt) take the cloisters' side (publisher clarification 3/2015)."""


class Shrines(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = ShrineOptions
    tile_files = ("shrines.toml",)

    def __init__(self, options: ShrineOptions) -> None:
        super().__init__(options)
        if options.sixth_tile:
            self.tile_files = ("shrines.toml", "shrines_rgg.toml")
        cloisters = {"cloister", "church"} if options.churches_are_cloisters else {"cloister"}
        self._side_of_kind = {"shrine": SHRINE, **{k: CLOISTER for k in cloisters}}
        self._tile_side: list[int] | None = None  # per tile type of the rule set, built on first use

    # -- sides ---------------------------------------------------------------
    def _tile_sides(self, game: Game) -> list[int]:
        """Side of each tile type's building (0 = none); an instance serves one RuleSet."""
        if self._tile_side is None:
            self._tile_side = self.tile_sides(game.rules)
        return self._tile_side

    def tile_sides(self, rules: RuleSet) -> list[int]:
        """Side of each tile type's building in ``rules`` (0 = none)."""
        sides = []
        for tile in rules.tiles:
            side = 0
            for seg in tile.segments:
                if seg.kind == BUILDING:
                    side = self._side_of_kind.get(seg.building, 0) or side
            sides.append(side)
        return sides

    def side_at(self, game: Game, x: int, y: int) -> int:
        """Side of the building on the tile at (x, y): 1 shrine, -1 cloister-like, 0 none."""
        k = game.board.get((x, y))
        if k is None or (x, y) not in game.buildings:
            return 0
        return self._tile_sides(game)[game.placements[k][2]]

    def _neighbours(self, game: Game, x: int, y: int, side: int) -> list[tuple[int, int]]:
        """Cells next to (x, y) holding a building of ``side``."""
        return [(x + dx, y + dy) for dx, dy in NEIGHBOURS8 if self.side_at(game, x + dx, y + dy) == side]

    def forbidden_cells(self, game: Game, side: int) -> set[tuple[int, int]]:
        """The cells (empty or not) where a tile with a building of ``side`` may not go.

        Built from the few buildings on the board rather than from every
        frontier cell's neighbours: only cells next to a building of the other
        side can be forbidden.
        """
        sides = {c: s for c in game.buildings if (s := self.side_at(game, *c))}
        strict = self.options.strict_pairing
        seen: set[tuple[int, int]] = set()  # cells next to one building of the other side
        out: set[tuple[int, int]] = set()
        for (ox, oy), s in sides.items():
            if s != -side:
                continue
            # strict: a building of the other side already paired forbids its whole neighbourhood
            paired = strict and any(sides.get((ox + dx, oy + dy)) == side for dx, dy in NEIGHBOURS8)
            for dx, dy in NEIGHBOURS8:
                cell = (ox + dx, oy + dy)
                if paired or cell in seen:  # next to two of the other side
                    out.add(cell)
                seen.add(cell)
        return out

    # -- hooks ---------------------------------------------------------------
    veto_reason = (
        "a shrine may not adjoin more than one cloister nor a cloister more than one shrine "
        "(nor a building one of the other side that already has its partner, with strict_pairing)"
    )

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> None:
        side = self._tile_sides(game)[tile]
        if not side or not game.buildings:
            return
        forbidden = self.forbidden_cells(game, side)
        if not forbidden:
            return
        xs, ys = game.frontier_cells()
        for i in masks.nonzero()[0]:
            if (int(xs[i]), int(ys[i])) in forbidden:
                masks[i] = 0

    def on_scored(self, game: Game, root: int, kind: int, final: bool) -> None:
        if final or kind != BUILDING:
            return
        x, y = game.placements[game.node_tile[root]][:2]
        side = self.side_at(game, x, y)
        if not side:
            return
        winner = _building_name(game, root)
        for cx, cy in self._neighbours(game, x, y, -side):
            for node in game.buildings[(cx, cy)]:
                rival = game.find(node)
                if self._side_of_kind.get(_building_name(game, node)) != -side:
                    continue
                # Completed this turn too (not yet scored): both score, nobody loses.
                if rival in game.completed or rival in game.completing:
                    continue
                # followers on its segment, and guests (followers sent in without a segment)
                lost = [(n, game.followers[n]) for n in game.occupants.get(rival, ())]
                lost += [(rival, p) for p in game.guests.get(rival, ())]
                if not lost:
                    continue
                game.remove_followers(rival)
                for n, p in lost:
                    game.emit(
                        FollowerReturned(p, n, f"lost a challenge: the {winner} at ({x},{y}) was completed first")
                    )


def _building_name(game: Game, node: int) -> str:
    _, _, t, _, base = game.placements[game.node_tile[node]]
    return game.rules.tiles[t].segments[node - base].building
