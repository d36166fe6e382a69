"""Per-spot features of the follower decision ("action features").

The follower action ``i`` puts a follower on segment ``i`` of the tile just
placed.  What that segment *is* (a city of 5 tiles with one open edge, a
field bordering two completed cities, ...) depends on the tile type and on
the whole feature it belongs to, which a convolution over the board sees only
partly.  ``spot_features`` describes each segment of the placed tile in a
fixed-size row, so a policy can score spots with one shared function:

=====  ==================  =====================================================
col    name                meaning
=====  ==================  =====================================================
0      present             the placed tile has a segment ``i``
1      legal               a follower may go there now
2-5    kind_*              city, road, field, building (one-hot)
6      size                tiles of the feature / 10 (building: neighbours / 8)
7      open_edges          open edges of a city or road / 4
8      completes           the feature is complete now (it scores this turn)
9      value_now           points it would score if completed now / 20
10     value_final         points it would score at the end as it is / 20
11     field_done_cities   completed cities a field borders / 4
12     field_cities        cities (complete or not) a field borders / 4
13     mine                my followers on the feature / 4
14     others              other players' followers on the feature / 4
15     pennants            pennants of a city / 4
=====  ==================  =====================================================

Rows of segments that do not exist are zero.  Outside the follower phase
every row is zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.tiles import BUILDING, CITY, FIELD, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game

SPOT_FEATURE_NAMES = (
    "present", "legal", "kind_city", "kind_road", "kind_field", "kind_building", "size", "open_edges",
    "completes", "value_now", "value_final", "field_done_cities", "field_cities", "mine", "others", "pennants",
)
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
