"""The River II in the compiled engine (:mod:`carc_env.fast`): the ``river`` rule.

The spring is the start tile at (0, 0) (``setup``; the Count's combined
layout is not covered, and the Count is not either); the bag is built in
Python by this plug-in's own ``build_bag``; the kernels veto river
placements that do not extend the river or make an immediate U-turn and land
tiles while river tiles remain (``placement_veto``), keep the open ends
(``after_placement``) and give the lake's player an extra turn without a
follower (``follower_spots``, ``next_player``); the observation features are
this plug-in's observe part's.
"""

from __future__ import annotations

from typing import Any

from ...core.tiles import RIVER
from ...fast.support import FastSupport
from .rules import LAKE, SPRING


def params(rules: Any, exp: Any) -> dict[str, int]:
    river_tiles = sum(t.count for t in rules.tiles if any(s.kind == RIVER for s in t.segments))
    return {
        "start_tile": rules.tile_index[SPRING], "start_x": 0, "start_y": 0, "start_r": 0,  # River2.setup
        "river": 1,
        "lake_tile": rules.tile_index[LAKE],
        "lake_extra_turn": 1 if exp.options.lake_extra_turn else 0,
        "river_tiles": max(1, river_tiles),
    }  # fmt: skip


def positions(encoder: Any) -> dict[str, int]:
    return {
        "ch_river_end": list(encoder.channel_names).index("river_end"),
        "g_river_tiles_left": list(encoder.global_names).index("river_tiles_left"),
    }


SUPPORT = FastSupport(
    hooks=frozenset({"setup", "build_bag", "placement_veto", "after_placement", "follower_spots", "next_player"}),
    options=frozenset({"end_city_last", "start_tile", "lake_extra_turn"}),
    params=params,
    positions=positions,
)
