"""The River II's rules: a river of 12 tiles laid before every other tile.

Contract (rules: ``docs/rules/river2.md``; data: ``data/tiles/river2.toml``)
-------------------------------------------------------------------------
* ``setup`` (``REPLACES_START``): the spring ``R2-spring`` is the start tile, at
  (0, 0) unrotated (river flowing east).  With the Count of Carcassonne
  (``START_COMBINES``) the Count's block lies at x=-2..1, y=-1..1 and the spring
  at (2, -1), unrotated, east of the block's north-east tile (JCZ
  ``count-with-river``).
* ``build_bag`` (and ``order_unseen``: the same order on a search's reshuffle of
  the tiles left): the fork first, then the other river tiles in the shuffled
  order, then ``R2-lake-volcano``, then the other tiles in the shuffled order.
  Options: ``end_city_last`` (O11) puts ``R2-end-city`` just before the lake;
  ``start_tile`` (O7) is ``"main_stack"`` (every base start tile stays among the
  shuffled normal tiles, JCZ) or ``"after_river"`` (one is the first tile after
  the lake).  A forced ``draw_order`` replaces the whole stack and is not reordered.
* ``placement_veto``: a river tile must extend the river: exactly one of its
  river edges abuts a placed river edge (an open river end; two would join
  branches or close a loop, none would start a new river) and it may not make
  an immediate U-turn (see below).  A non-river tile cannot be placed while
  river tiles remain to be drawn.  A tile with no legal placement is removed
  by the core.
* ``after_placement`` keeps the open river ends; placing the lake gives its
  player no follower on it (``follower_spots``) and another full turn
  (``next_player``; option ``lake_extra_turn``, O10).

How turning is computed
-----------------------
Each open river end is a :class:`RiverEnd` ``(x, y, side, turn)``: the empty cell the river flows
into, the side of that cell the river enters through, and the turn the river
made on the tile it leaves (0 straight, 1 right = clockwise, 3 left).  A river
tile placed in that cell turns by ``(exit side - flow direction) % 4`` where
the flow direction is ``(side + 2) % 4``; a placement is vetoed when it turns
(1 or 3) the same way as the end's ``turn``: two consecutive tiles of one
branch turning the same way would make the river double back beside itself.
A straight tile in between resets the turn to 0 (only *immediate* U-turns are
forbidden, HiG).  The spring's end has turn 0; each branch of the fork
records the turn that branch made on the fork (e.g. entering from the west:
the north branch turned left, the east branch went straight).

State: ``game.ext["river2"]``, a :class:`RiverState`.  Which tile types are
river tiles: :func:`river_tiles` (one table per rule set, shared with the
plug-in's observation and drawing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ...core.expansion import ConfigError, Expansion
from ...core.tiles import DX, DY, EDGE_CODES, RIVER

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

KEY = "river2"
SPRING, FORK, LAKE, END_CITY = "R2-spring", "R2-fork", "R2-lake-volcano", "R2-end-city"
RIVER_CODE = EDGE_CODES["I"]
START_TILE_CHOICES = ("main_stack", "after_river")


@dataclass(frozen=True)
class RiverOptions:
    """Rule variants of The River II (defaults: C2 rules / JCZ where the texts are silent)."""

    end_city_last: bool = False
    """O11: True puts R2-end-city (river into a city) just before the lake instead of shuffling it in."""
    start_tile: str = "main_stack"
    """O7: where the base game's start tiles go: "main_stack" (JCZ) or "after_river" (one first after the lake)."""
    lake_extra_turn: bool = True
    """O10: the lake's player puts no follower on it and plays another full turn (C2 rule)."""

    def validate(self) -> None:
        if self.start_tile not in START_TILE_CHOICES:
            raise ConfigError(f"option river2.start_tile must be one of {START_TILE_CHOICES}, got {self.start_tile!r}")


class RiverEnd(NamedTuple):
    """An open end of the river: the empty cell it flows into, the side of that cell it enters through,
    and the turn the river made on the tile it leaves (0 straight, 1 right, 3 left)."""

    x: int
    y: int
    side: int
    turn: int

    def __deepcopy__(self, memo: dict) -> RiverEnd:
        return self  # immutable: a game's clone may share it


@dataclass
class RiverState:
    """The river's state in one game (``game.ext["river2"]``)."""

    ends: list[RiverEnd] = field(default_factory=list)
    """The open ends of the river."""
    extra_turn: bool = False
    """The lake was just placed and its player plays again."""
    river_done: bool = False
    """No river tile is left to draw (the veto is then skipped)."""


def river_tiles(rules: RuleSet) -> np.ndarray:
    """``bool (tile types,)``: which tile types of the rule set are river tiles (one table per rule set)."""
    return rules.cache(f"{KEY}.tiles", lambda: np.array([t.has_kind(RIVER) for t in rules.tiles], dtype=bool))


def river_tile_set(rules: RuleSet) -> frozenset[int]:
    """The river tile types as a set of indices."""
    return rules.cache(f"{KEY}.tile_set", lambda: frozenset(np.flatnonzero(river_tiles(rules)).tolist()))


def river_sides(tile: Any, r: int) -> list[int]:
    """Sides (0..3 = N E S W) whose edge is river when ``tile`` is turned ``r`` quarter turns."""
    return [s for s in range(4) if tile.edge_codes[r][s] == RIVER_CODE]


def turn_of(entry_side: int, exit_side: int) -> int:
    """The turn a river makes entering a tile through ``entry_side`` and leaving through ``exit_side``.

    0 = straight, 1 = right (clockwise), 3 = left.
    """
    return (exit_side - (entry_side + 2)) % 4


class River2(Expansion):
    KEY = KEY
    Options = RiverOptions
    tile_files = ("river2.toml",)
    REQUIRES = ("base",)
    REPLACES_START = True
    START_COMBINES = {"count": (2, -1)}
    """The start layouts the spring can lie beside, and where: with the Count of Carcassonne (O6, JCZ
    ``count-with-river``) east of the block's north-east tile."""

    def new_state(self) -> RiverState:
        return RiverState()

    # -------------------------------------------------------------------- setup
    def setup(self, game: Game) -> None:
        beside = [cell for key, cell in self.START_COMBINES.items() if key in game.rules.by_key]
        x, y = beside[0] if beside else (0, 0)
        game.place_fixed(SPRING, x, y, 0)
        tile = game.rules.tiles[game.rules.tile_index[SPRING]]
        ends = game.ext[KEY].ends
        for s in river_sides(tile, 0):
            ends.append(RiverEnd(x + DX[s], y + DY[s], (s + 2) % 4, 0))

    def build_bag(self, game: Game, bag: list[int]) -> list[int]:
        return self._river_order(game, bag, start_first=True)

    def order_unseen(self, game: Game, order: list[int]) -> list[int]:
        # What everyone knows of the real stack: the order build_bag gave it.  The start tile
        # ("after_river") is known to come first among the normal tiles until one has been drawn.
        return self._river_order(game, order, start_first=not game.ext[KEY].river_done)

    def _river_order(self, game: Game, bag: list[int], start_first: bool) -> list[int]:
        rivers = river_tile_set(game.rules)
        ids = [game.rules.tiles[t].id for t in bag]
        first = [t for t, i in zip(bag, ids, strict=True) if i == FORK]
        last_ids = (END_CITY, LAKE) if self.options.end_city_last else (LAKE,)
        last = [t for i in last_ids for t, j in zip(bag, ids, strict=True) if j == i]
        middle = [t for t in bag if t in rivers and t not in first and t not in last]
        normal = [t for t in bag if t not in rivers]
        if start_first and self.options.start_tile == "after_river":
            # the start tile the spring replaced (the base game's) is the first tile after the river
            for key, start in game.rules.start_tiles.items():
                s = game.rules.tile_index[start]
                if key != self.KEY and s in normal:
                    normal.remove(s)
                    normal.insert(0, s)
        return first + middle + last + normal

    # ---------------------------------------------------------------- placement
    veto_reason = (
        "every river tile is placed before any other tile, and a river tile continues the river from one "
        "open end (one river side against the board) without turning the same way twice in a row"
    )

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> None:
        st: RiverState = game.ext[KEY]
        rivers = river_tile_set(game.rules)
        if tile not in rivers:
            if not st.river_done:
                left = game.remaining_counts()
                if any(left[t] for t in rivers):
                    masks[:] = 0  # every river tile is placed before any other tile
                else:
                    st.river_done = True
            return
        tt = game.rules.tiles[tile]
        board = game.board
        fx, fy = game.frontier_cells()
        last_turn = {(e.x, e.y, e.side): e.turn for e in st.ends}
        for i in masks.nonzero()[0]:
            x, y = int(fx[i]), int(fy[i])
            m = int(masks[i])
            for r in range(4):
                if not (m >> r) & 1:
                    continue
                sides = river_sides(tt, r)
                touching = [s for s in sides if (x + DX[s], y + DY[s]) in board]
                ok = len(touching) == 1
                if ok:
                    entry = touching[0]
                    before = last_turn.get((x, y, entry), 0)
                    for exit_side in sides:
                        if exit_side != entry:
                            t = turn_of(entry, exit_side)
                            if t and t == before:
                                ok = False
                if not ok:
                    m &= ~(1 << r)
            masks[i] = m

    def after_placement(self, game: Game, x: int, y: int) -> None:
        _, _, t, r, _ = game.placements[game.board[(x, y)]]
        if t not in river_tile_set(game.rules):
            return
        st: RiverState = game.ext[KEY]
        tile = game.rules.tiles[t]
        sides = river_sides(tile, r)
        entry = next(s for s in sides if (x + DX[s], y + DY[s]) in game.board)
        st.ends = [e for e in st.ends if (e.x, e.y) != (x, y)]
        for s in sides:
            if s != entry:
                st.ends.append(RiverEnd(x + DX[s], y + DY[s], (s + 2) % 4, turn_of(entry, s)))
        if tile.id == LAKE and self.options.lake_extra_turn:
            st.extra_turn = True

    def follower_spots(self, game: Game, spots: list[int]) -> list[int]:
        if self.options.lake_extra_turn and game.rules.tiles[game.placements[-1][2]].id == LAKE:
            return []
        return spots

    def claims(self, hook: str) -> bool:
        if hook == "next_player":
            return self.options.lake_extra_turn
        return super().claims(hook)

    def next_player(self, game: Game, default: int) -> int | None:
        st: RiverState = game.ext[KEY]
        if st.extra_turn:
            st.extra_turn = False
            return game.turn_player
        return None
