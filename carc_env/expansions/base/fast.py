"""The base game in the compiled engine (:mod:`carc_env.fast`): the start tile and ``count_tile_once``.

Everything else the base game does is the core's, which the kernels implement.
"""

from __future__ import annotations

from typing import Any

from ...fast.support import FastSupport


def params(rules: Any, exp: Any) -> dict[str, int]:
    p = {"count_tile_once": 1 if exp.options.count_tile_once else 0}
    if not any(e.REPLACES_START for e in rules.expansions):  # BaseGame.setup
        p.update(start_tile=rules.tile_index[rules.start_tiles[exp.KEY]], start_x=0, start_y=0, start_r=0)
    return p


SUPPORT = FastSupport(hooks=frozenset({"setup", "feature_size"}), options=frozenset({"count_tile_once"}), params=params)
