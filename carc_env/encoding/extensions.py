"""Observation extensions of the built-in expansions.

Registered by expansion key (:func:`register_observation_extension`); the
encoder asks for one per enabled expansion, so none of these channels or
features exists in a game without its expansion (the base game's layout is
unchanged).  Static channels follow the ``building_*`` channels, dynamic ones
come after every base channel, global features after every base feature, each group
in the rule set's expansion order (``RuleSet.expansions``, the registry order:
count, darmstadt, king_robber, river2, shrines), whatever order the config
lists them in.  Seats are relative to the observer (``p0`` = me).

King & Robber Baron (``king_robber``), globals:

* ``king_p{i}`` / ``robber_p{i}``: one-hot of the seat holding the King /
  the Robber Baron (all 0 before the first city / road is completed);
* ``king_record`` / ``robber_record``: tiles of the largest completed city /
  longest completed road x 0.1 (what a new city / road must beat).

The Count of Carcassonne (``count``), globals:

* ``count_in_{quarter}``: one-hot of the quarter the Count stands on
  (castle, market, blacksmith, cathedral: the quarter order of the Count's
  action ranges);
* ``quarter_{quarter}_p{i}``: followers of seat i in that quarter / followers
  per player;

and dynamic board channels:

* ``guests_p{i}``: followers of seat i that were sent from a quarter onto a
  feature (they stand on no segment), counted on every tile of that feature
  (they are only on the board during ``count_leave`` and ``count_final``,
  until the feature scores);
* ``completing``: 1 on every tile of a feature the placed tile completed and
  that is about to be scored (the targets of ``count_leave``; 0 outside the
  turn's scoring).

The River II (``river2``): dynamic board channel

* ``river_end``: 1 on the empty cell an open end of the river flows into,
  while river tiles remain to be placed (the drawn one included);

and global feature:

* ``river_tiles_left``: river tiles still in the bag / river tiles in the game.

(The lake's extra turn needs no feature: the lake takes no follower, so no
decision falls between placing it and the extra turn's tile, where
``placed_tile_R2-lake-volcano`` and ``turn_p0`` already say whose turn it is.)

Darmstadt (``darmstadt``): static board channel

* ``darmstadtium``: 1 on the tile whose city holds the Darmstadtium (+3 to the
  majority when that city is completed during the game).

Heretics and Shrines (``shrines``) adds nothing here: shrines and churches
are building kinds, so they appear in the encoder's ``building_shrine`` /
``building_church`` channels (with ``complete_building`` and
``follower_on_building``), and river edges and the City of Carcassonne's
inside in the ``edge_{S}_river`` / ``edge_{S}_interior`` channels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.tiles import CITY, RIVER
from .observation import ObsContext, ObservationExtension, register_observation_extension

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.game import Game

QUARTERS = ("castle", "market", "blacksmith", "cathedral")


def feature_cells(game: Game, roots: list[int]) -> dict[int, np.ndarray]:
    """Per feature root, the ``(x, y)`` cells (int array ``(k, 2)``, unique) of the tiles it covers.

    One vectorised pass over every node; meant for the few features of an
    expansion phase, not for every step.
    """
    if not roots:
        return {}
    root = np.fromiter(game.parent, dtype=np.intp, count=len(game.parent))
    while True:  # pointer jumping: the game's own parent list is left as it is
        nxt = root[root]
        if not (nxt != root).any():
            break
        root = nxt
    node_tile = np.fromiter(game.node_tile, dtype=np.intp, count=len(game.node_tile))
    xy = np.array([p[:2] for p in game.placements], dtype=np.intp).reshape(-1, 2)
    out = {}
    for r in roots:
        tiles = np.unique(node_tile[root == root[r]])
        out[r] = xy[tiles]
    return out


def _add_cells(plane: np.ndarray, cells: np.ndarray, ctx: ObsContext, value: int = 1) -> None:
    """Add ``value`` to ``plane`` at the window cells among ``cells`` (absolute ``(x, y)``)."""
    cols, rows = cells[:, 0] - ctx.x0, cells[:, 1] - ctx.y0
    ok = (cols >= 0) & (cols < ctx.cols) & (rows >= 0) & (rows < ctx.rows)
    if ok.any():
        plane[rows[ok], cols[ok]] += value


class KingRobberObservation(ObservationExtension):
    KEY = "king_robber"

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        n = num_players
        self.n = n
        self.global_names = (
            *(f"king_p{i}" for i in range(n)),
            *(f"robber_p{i}" for i in range(n)),
            "king_record",
            "robber_record",
        )

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st = game.ext.get(self.KEY)
        if st is None:
            return
        n = self.n
        if st.king >= 0:
            out[ctx.rel(st.king)] = 1.0
        if st.robber >= 0:
            out[n + ctx.rel(st.robber)] = 1.0
        out[2 * n] = st.king_size * 0.1
        out[2 * n + 1] = st.robber_size * 0.1


class CountObservation(ObservationExtension):
    KEY = "count"

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        n = num_players
        self.n = n
        self.followers = max(1, rules.config.followers)
        self.global_names = (
            *(f"count_in_{q}" for q in QUARTERS),
            *(f"quarter_{q}_p{i}" for q in QUARTERS for i in range(n)),
        )
        self.dynamic_channels = (*(f"guests_p{i}" for i in range(n)), "completing")

    def channel_high(self) -> list[int]:
        return [min(255, self.followers)] * self.n + [1]

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        guests, completing = game.guests, game.completing
        if not guests and not completing:
            return
        find = game.find
        roots = sorted({find(r) for r in guests} | {find(r) for r in completing})
        cells = feature_cells(game, roots)
        for r, owners in guests.items():
            c = cells[find(r)]
            for p in owners:
                _add_cells(board[ctx.rel(p)], c, ctx)
        if completing:
            plane = board[self.n]
            for r in {find(r) for r in completing}:
                _add_cells(plane, cells[r], ctx)
            np.minimum(plane, 1, out=plane)

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st = game.ext.get(self.KEY)
        if st is None:
            return
        count = st.get("count", -1)
        if 0 <= count < 4:
            out[count] = 1.0
        n, inv = self.n, 1.0 / self.followers
        for q, per_player in enumerate(st.get("quarters") or ()):
            for p, k in enumerate(per_player):
                if k:
                    out[4 + q * n + ctx.rel(p)] = k * inv


class RiverObservation(ObservationExtension):
    KEY = "river2"

    dynamic_channels = ("river_end",)
    global_names = ("river_tiles_left",)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        self.river = np.array([any(s.kind == RIVER for s in t.segments) for t in rules.tiles], dtype=bool)
        self.total = max(1, sum(t.count for t, r in zip(rules.tiles, self.river, strict=True) if r))

    def _left(self, game: Game) -> int:
        st = game.ext[self.KEY]
        if st["river_done"]:  # set once no river tile is left to draw; the bag only shrinks
            return 0
        return int(game.remaining_counts()[self.river].sum())

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        st = game.ext.get(self.KEY)
        if not st or not st["ends"] or st["river_done"]:
            return
        t = game.current_tile
        if not (t >= 0 and self.river[t]) and not self._left(game):
            return
        board_cells = game.board
        plane = board[0]
        for x, y, _side, _turn in st["ends"]:
            col, row = x - ctx.x0, y - ctx.y0
            if (x, y) not in board_cells and 0 <= col < ctx.cols and 0 <= row < ctx.rows:
                plane[row, col] = 1

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st = game.ext.get(self.KEY)
        if st is None:
            return
        out[0] = self._left(game) / self.total


class DarmstadtObservation(ObservationExtension):
    KEY = "darmstadt"
    TAG = "darmstadtium"

    static_channels = ("darmstadtium",)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        pass

    def static_table(self, rules: RuleSet) -> np.ndarray:
        table = np.zeros((len(rules.tiles), 4, 1), dtype=np.uint8)
        for ti, tile in enumerate(rules.tiles):
            if any(s.kind == CITY and self.TAG in s.tags for s in tile.segments):
                table[ti, :, 0] = 1
        return table


register_observation_extension(KingRobberObservation.KEY, KingRobberObservation)
register_observation_extension(CountObservation.KEY, CountObservation)
register_observation_extension(RiverObservation.KEY, RiverObservation)
register_observation_extension(DarmstadtObservation.KEY, DarmstadtObservation)

__all__ = [
    "CountObservation",
    "DarmstadtObservation",
    "KingRobberObservation",
    "QUARTERS",
    "RiverObservation",
    "feature_cells",
]
