"""The Sagrada Familia's rules (one-tile fan expansion; rules: ``docs/rules/sagrada_familia.md``).

Contract
--------
* ``tile_files``: ``SF-sagrada-familia`` (``data/tiles/sagrada_familia.toml``, a
  four-sided city: probable layout).  The city feature tagged
  ``sagrada_familia`` is the one the rules are about.
* Once it is placed its city is *in force* (:func:`in_force`) until it is
  completed: ``placement_veto`` clears every placement that would leave the
  city (the whole linked city, with The Royal Gateways) without an open edge,
  asking the core's ``Game.closes_feature`` (which counts the links a gate
  placement makes), and returns the reason the core's ``TileDiscarded`` gives
  when a tile is left with no legal placement.  The Sagrada Familia tile itself
  is never refused by this rule; if it fits nowhere the core removes it
  ("no legal placement").
* Exception 1 (``after_placement``): the Sagrada Familia tile leaves its city
  without an open edge.  The city completes as usual, but ``score_override``
  makes it score 0 (one item ``sagrada_familia``, whatever other expansions
  would add), and its followers return; the veto has nothing left to guard.
  What else sees that city (each an option, default: nothing, it "scores 0
  points"): the King (``uncounted_completion``, unless
  ``exception_city_counts_for_king``), farmers (``field_cities`` gives -1 for
  it, unless ``exception_city_counts_for_farmers``); a knight may be put on it
  by its placer and comes back at once (``follower_spots`` removes the spot
  unless ``exception_knight_allowed``, default True).
* Variant ``may_close``: no veto; once the city completes it scores 0 and
  ``defers_scoring`` keeps its followers on it until the end of the game, when
  the core scores it (0) and returns them.  A city closed by the tile itself
  returns its followers at once (``exception_returns_followers``, default True).
* At the end an incomplete Sagrada Familia city scores as any incomplete city.

State (``game.ext["sagrada_familia"]``, a :class:`SagradaState`): ``node`` (the
union-find node of the tile's city, -1 before it is placed) and
``closed_by_tile`` (exception 1 happened).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...core.events import ScoreItem
from ...core.expansion import Expansion
from ...core.tiles import CITY, DX, DY

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "sagrada_familia"
TAG = "sagrada_familia"
REFUSED = "every legal placement would close the Sagrada Familia city"
CLOSED_BY_TILE = ScoreItem(KEY, "closed by placing the Sagrada Familia: 0 points", 0)
CLOSED_CITY = ScoreItem(KEY, "the Sagrada Familia city was closed: 0 points", 0)


@dataclass(frozen=True)
class SagradaFamiliaOptions:
    """Rule variants of the Sagrada Familia (default: the 2018 rules' main text)."""

    may_close: bool = False
    """The variant: the city may be closed; it then scores 0 and its followers stay until the end."""
    exception_returns_followers: bool = True
    """With the variant, a city the Sagrada Familia tile itself closes (exception 1) gives its followers
    back at once (exception 1's wording); False: they stay until the end like the variant's."""
    exception_city_counts_for_king: bool = False
    """Exception 1: the city the Sagrada Familia tile closed is a completed city for King & Robber Baron
    (its placer may take the King for it; the King's final points count it).  Default False: "that
    city will score 0 points", the King's point for it included."""
    exception_city_counts_for_farmers: bool = False
    """Exception 1: farmers score 3 for the city the Sagrada Familia tile closed.  Default False: the
    city "will score 0 points", its farmers' 3 included."""
    exception_knight_allowed: bool = True
    """Exception 1: the placer may put a knight on the city the Sagrada Familia tile just closed (the
    base rule: any free feature of the placed tile); it comes back at once with the others, 0 points.
    False: that city offers no follower spot."""


@dataclass
class SagradaState:
    node: int = -1
    """Union-find node of the Sagrada Familia tile's city; -1 while the tile is not on the board."""
    closed_by_tile: bool = False
    """Exception 1: placing the tile left its city without an open edge (that city scores 0)."""


class SagradaFamilia(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = SagradaFamiliaOptions
    tile_files = ("sagrada_familia.toml",)
    veto_reason = "this placement would close the Sagrada Familia city, which may never be completed"

    def __init__(self, options: SagradaFamiliaOptions) -> None:
        super().__init__(options)
        self._segments: list[tuple[int, ...]] | None = None

    def new_state(self) -> SagradaState:
        return SagradaState()

    def segments(self, game: Game) -> list[tuple[int, ...]]:
        """Per tile type, its city segments tagged ``sagrada_familia`` (built on first use)."""
        if self._segments is None:
            self._segments = [
                tuple(i for i, s in enumerate(tile.segments) if s.kind == CITY and TAG in s.tags)
                for tile in game.rules.tiles
            ]
        return self._segments

    # -- placement ---------------------------------------------------------------
    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> str | None:
        if self.options.may_close or not in_force(game):
            return None
        root = game.find(game.ext[KEY].node)
        # One tile fills one cell, and links only add open edges: a placement can close the city
        # only when every open edge of it faces the same empty cell (at most 4 edges).
        if game.open[root] > 4:
            return None
        cells = open_cells(game, root)
        if len(cells) != 1:
            return None
        xs, ys = game.frontier_cells()
        for cx, cy in cells:
            hit = np.flatnonzero((xs == cx) & (ys == cy))
            if not len(hit):
                continue
            slot = int(hit[0])
            bits = int(masks[slot])
            for r in range(4):
                if bits >> r & 1 and game.closes_feature(tile, cx, cy, r, root):
                    bits &= ~(1 << r)
            masks[slot] = bits
        return REFUSED

    def after_placement(self, game: Game, x: int, y: int) -> None:
        _, _, t, _, base = game.placements[-1]
        segs = self.segments(game)[t]
        if not segs:
            return
        st: SagradaState = game.ext[KEY]
        st.node = base + segs[0]
        if game.open[game.find(st.node)] == 0:
            st.closed_by_tile = True

    after_setup_placement = after_placement  # laid at setup (a map's start square): its city is in force

    def follower_spots(self, game: Game, spots: list[int]) -> list[int]:
        if self.options.exception_knight_allowed or not spots:
            return spots
        st: SagradaState = game.ext[KEY]
        if not st.closed_by_tile or game.node_tile[st.node] != len(game.placements) - 1:
            return spots  # only the Sagrada Familia tile that just closed its own city
        root = game.find(st.node)
        base = game.placements[-1][4]
        return [i for i in spots if game.find(base + i) != root]

    def _closed_city(self, game: Game) -> int:
        """Root of the city the Sagrada Familia tile itself closed (exception 1), else -1."""
        st: SagradaState = game.ext[KEY]
        if not st.closed_by_tile:
            return -1
        root = game.find(st.node)
        return root if root in game.completed else -1

    def uncounted_completion(self, game: Game, root: int) -> bool:
        if self.options.exception_city_counts_for_king:
            return False
        st: SagradaState = game.ext[KEY]
        return st.closed_by_tile and game.find(st.node) == root

    def field_cities(self, game: Game, root: int) -> int:
        if self.options.exception_city_counts_for_farmers:
            return 0
        city = self._closed_city(game)
        if city < 0:
            return 0
        find = game.find
        return -1 if any(find(c) == city for c in game.adjacent_cities.get(root, ())) else 0

    # -- scoring -----------------------------------------------------------------
    def score_override(self, game: Game, root: int, final: bool) -> list[ScoreItem] | None:
        st: SagradaState = game.ext[KEY]
        if st.node < 0 or game.find(st.node) != root:
            return None
        if st.closed_by_tile:
            return [CLOSED_BY_TILE]
        if root in game.completed:
            return [CLOSED_CITY]
        return None

    def defers_scoring(self, game: Game, root: int) -> bool:
        st: SagradaState = game.ext[KEY]
        if not self.options.may_close or st.node < 0 or game.find(st.node) != root:
            return False
        return not (st.closed_by_tile and self.options.exception_returns_followers)


def in_force(game: Game) -> bool:
    """The Sagrada Familia is on the board, its city is not completed and its tile did not close it."""
    st: SagradaState = game.ext[KEY]
    return st.node >= 0 and not st.closed_by_tile and game.find(st.node) not in game.completed


def open_cells(game: Game, root: int) -> list[tuple[int, int]]:
    """The empty cells an open edge of city ``root`` faces (every part of a linked city).  On a
    printed board only squares count: an edge facing the sea or abroad is closed."""
    tiles, placements, board, find = game.rules.tiles, game.placements, game.board, game.find
    playable = None if game.layout is None else game.layout.playable
    out: set[tuple[int, int]] = set()
    for k in game.tiles[root]:
        x, y, t, r, base = placements[k]
        center = tiles[t].center[r]
        for s in range(4):
            i = center[s]
            c = (x + DX[s], y + DY[s])
            if i >= 0 and c not in board and (playable is None or c in playable) and find(base + i) == root:
                out.add(c)
    return sorted(out)
