"""Per-placement features of the tile decision ("action features").

A convolution over the board sees what lies around a cell, but not whole
features: whether putting the tile there closes a 6-tile city, or joins a road
an opponent holds, depends on features that may stretch across the board.
``placement_features`` describes each legal placement in the observation
window in one fixed-size row, computed from the rules core by a one-ply scan
(:mod:`carc_env.encoding.lookahead`), so a policy can score placements with
one shared function and add that score to its per-cell logit.

"Mine" and "others" are seen from ``seat``.  A feature is *mine* when I have
the most followers on it (possibly shared), *others'* when someone else has
more, *free* when nobody has a follower on it.  The features joined are the
cities and roads the placed tile's segments would be part of.

=====  ==================  =====================================================
col    name                meaning
=====  ==================  =====================================================
0      present             1 for a real placement (0 pads a batch)
1      gain                own minus best-opponent points scored at once, with
                           the best follower that would score at once / 20
                           (played out on a clone; 0 when nothing completes;
                           with the last tile, the final scoring included)
2      completes           the placement may complete a feature
3      neighbours          orthogonally adjacent tiles / 4
4      join_mine           incomplete features joined that are mine / 2
5      join_others         incomplete features joined that are others' / 2
6      join_free           incomplete features joined that are free / 2
7      open_mine           open edges left on the mine ones / 8
8      open_others         open edges left on the others' ones / 8
9      size_mine           tiles of the mine ones afterwards / 10
10     size_others         tiles of the others' ones afterwards / 10
11     free_city           best free, incomplete city a follower could take
                           here: 2 x tiles + 2 x pennants / 20
12     free_road           best free, incomplete road here: tiles / 10
13     building_here       the tile has a building: (1 + tiles around) / 9
14     buildings_mine      buildings around with my follower / 4
15     buildings_others    buildings around with another player's follower / 4
16     supply              my followers in supply / 7 (same for every row)
17     progress            tiles placed / (placed + left in the bag)
=====  ==================  =====================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import PlaceTile
from ..core.tiles import CITY, ROAD
from .lookahead import leads, one_ply_gain, scan_placement

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game
    from .actions import ActionCodec, StateView

PLACEMENT_FEATURE_NAMES = (
    "present", "gain", "completes", "neighbours", "join_mine", "join_others", "join_free", "open_mine",
    "open_others", "size_mine", "size_others", "free_city", "free_road", "building_here", "buildings_mine",
    "buildings_others", "supply", "progress",
)
N_PLACEMENT_FEATURES = len(PLACEMENT_FEATURE_NAMES)
_ORTHO = ((0, -1), (1, 0), (0, 1), (-1, 0))


def placement_features(
    game: Game, seat: int, codec: ActionCodec, view: StateView | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(index, features)`` for the legal in-window placements, seen by ``seat``.

    ``index``: ``int64 (k,)`` flat action indices (inside the codec's tile
    range); ``features``: ``float32 (k, N_PLACEMENT_FEATURES)``.  Outside the
    tile phase, or when ``seat`` is not the one placing, both are empty.
    """
    empty = (np.zeros(0, dtype=np.int64), np.zeros((0, N_PLACEMENT_FEATURES), dtype=np.float32))
    if game.phase != "tile" or game.player != seat or game.current_tile < 0:
        return empty
    if view is None:
        view = codec.view(game)
    local = np.asarray(view.tile_index, dtype=np.int64)
    if not len(local):
        return empty
    cells = view.legal_placements(codec.rows, codec.cols)  # the tile phase's window is the codec's
    t = game.current_tile
    tile = game.rules.tiles[t]
    out = np.zeros((len(local), N_PLACEMENT_FEATURES), dtype=np.float32)
    out[:, 0] = 1.0
    out[:, 16] = game.supply[seat] / 7.0
    placed = len(game.placements)
    out[:, 17] = placed / max(1, placed + game.bag_size)
    memo: dict[tuple, np.ndarray] = {}
    for k, (x, y, r) in enumerate(cells.tolist()):
        geo = (x, y, tile.edge_codes[r], tile.center[r], tile.half[r])
        row = memo.get(geo)
        if row is not None:
            out[k, 1:16] = row
            continue
        row = out[k, 1:16]  # a view: fill it in place
        _fill_row(row, game, seat, t, x, y, r)
        memo[geo] = row.copy()
    return local + codec.tile_range.start, out


def _fill_row(row: np.ndarray, game: Game, seat: int, t: int, x: int, y: int, r: int) -> None:
    """Features 1..15 of placing tile ``t`` at (x, y) in rotation r (see the module docstring), into ``row``."""
    scan = scan_placement(game, t, x, y, r)
    if scan.completes or not game.bag_size:  # the last tile's play-out includes the final scoring
        row[0] = one_ply_gain(game, PlaceTile(x, y, r), seat) / 20.0
        row[1] = 1.0
    row[2] = sum((x + dx, y + dy) in game.board for dx, dy in _ORTHO) / 4.0
    best_city = best_road = 0.0
    for j in scan.joined:
        if j.open_after == 0:
            continue
        if not j.counts:
            if j.roots:
                row[5] += 0.5
            if j.kind == CITY:
                best_city = max(best_city, (2 * j.tiles_after + 2 * j.pennants_after) / 20.0)
            elif j.kind == ROAD:
                best_road = max(best_road, j.tiles_after / 10.0)
        elif leads(j.counts, seat):
            row[3] += 0.5
            row[6] += j.open_after / 8.0
            row[8] += j.tiles_after / 10.0
        else:
            row[4] += 0.5
            row[7] += j.open_after / 8.0
            row[9] += j.tiles_after / 10.0
    row[10] = best_city
    row[11] = best_road
    if scan.has_building:
        row[12] = (1 + scan.around) / 9.0
    followers, occ = game.followers, game.occupants
    for root in scan.buildings_around:
        owners = [followers[node] for node in occ.get(root, ())]
        if owners:
            if seat in owners:
                row[13] += 0.25
            else:
                row[14] += 0.25
