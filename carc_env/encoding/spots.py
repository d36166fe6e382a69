"""Per-spot features of the follower decision ("action features").

The follower action ``i`` puts a follower on segment ``i`` of the tile just
placed.  What that segment *is* (a city of 5 tiles with one open edge, a
field bordering two completed cities, ...) depends on the tile type and on
the whole feature it belongs to, which a convolution over the board sees only
partly.  ``spot_features`` describes each segment of the placed tile in a
fixed-size row (columns: :data:`carc_env.encoding.spec.SPOT_FEATURES`), so a policy can
score spots with one shared function.  Rows of segments that do not exist are zero; outside the
follower phase every row is zero.  The compiled engine computes the same rows
(:mod:`carc_env.fast.features`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.tiles import BUILDING, CITY, FIELD, ROAD
from .spec import SPOT_FEATURE_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game

N_SPOT_FEATURES = len(SPOT_FEATURE_NAMES)
_KIND_COL = {CITY: 2, ROAD: 3, FIELD: 4, BUILDING: 5}


def spot_features(game: Game, seat: int, max_segments: int, out: np.ndarray | None = None) -> np.ndarray:
    """``float32 (max_segments, N_SPOT_FEATURES)`` for the tile just placed, seen by ``seat``."""
    if out is None:
        out = np.zeros((max_segments, N_SPOT_FEATURES), dtype=np.float32)
    else:
        out[:] = 0
    if game.phase != "follower" or not game.placements:
        return out
    _, _, t, _, base = game.placements[-1]
    tile = game.rules.tiles[t]
    legal = set(game.legal_follower_spots()) if game.player == seat else set()
    find = game.find
    followers = game.followers
    for i, seg in enumerate(tile.segments[:max_segments]):
        row = out[i]
        row[0] = 1.0
        col = _KIND_COL.get(seg.kind)
        if col is None:  # rivers: never a spot
            continue
        row[1] = 1.0 if i in legal else 0.0
        row[col] = 1.0
        root = find(base + i)
        kind = seg.kind
        if kind in (CITY, ROAD):
            row[6] = len(game.tiles[root]) / 10.0
            row[7] = game.open[root] / 4.0
            row[8] = 1.0 if game.open[root] == 0 else 0.0
            row[15] = game.pennants[root] / 4.0
        elif kind == BUILDING:
            nb = game.building_neighbours.get(root, 0)
            row[6] = nb / 8.0
            row[8] = 1.0 if root in game.completed or game.building_complete(root) else 0.0
        if kind != FIELD:
            row[9] = sum(it.points for it in game.feature_value(root, final=False)) / 20.0
        else:
            cities = {find(c) for c in game.adjacent_cities.get(root, ())}
            row[11] = sum(1 for c in cities if c in game.completed) / 4.0
            row[12] = len(cities) / 4.0
        row[10] = sum(it.points for it in game.feature_value(root, final=True)) / 20.0
        mine = others = 0
        for node in game.occupants.get(root, ()):
            if followers[node] == seat:
                mine += 1
            else:
                others += 1
        row[13] = mine / 4.0
        row[14] = others / 4.0
    return out
