"""Per-placement features of the tile decision ("action features").

A convolution over the board sees what lies around a cell, but not whole
features: whether putting the tile there closes a 6-tile city, or joins a road
an opponent holds, depends on features that may stretch across the board.
``placement_features`` describes each legal placement in the observation
window in one fixed-size row, computed from the rules core by a one-ply scan
(:mod:`carc_env.encoding.lookahead`), so a policy can score placements with
one shared function and add that score to its per-cell logit.

The columns (names and meanings) are :data:`carc_env.encoding.spec.PLACEMENT_FEATURES`;
the compiled engine computes the same rows (:mod:`carc_env.fast.features`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import PlaceTile
from ..core.tiles import CITY, ROAD
from .lookahead import leads, one_ply_gain, scan_placement
from .spec import PLACEMENT_FEATURE_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game
    from .actions import ActionCodec, StateView

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
