"""The example's observation planes (its encoder part).  Seats are relative (``p0`` = me).

Static board channel:

* ``toll_house``: 1 on a tile whose road has a toll house.

Global features:

* ``tolls_pending``: tolls the turn's player collects this turn (``tolls_collect``) / 4;
* ``tolls_banked_p{i}``: tolls banked by seat i / 4.
"""

from __future__ import annotations

import numpy as np

from carc_env.core.tiles import ROAD
from carc_env.encoding import ObservationExtension

from .rules import KEY, TAG


class Observation(ObservationExtension):
    static_channels = ("toll_house",)

    def __init__(self, rules, num_players: int) -> None:
        self.global_names = ("tolls_pending", *(f"tolls_banked_p{i}" for i in range(num_players)))

    def static_table(self, rules) -> np.ndarray:
        table = np.zeros((len(rules.tiles), 4, 1), dtype=np.uint8)
        for t, tile in enumerate(rules.tiles):
            if any(s.kind == ROAD and TAG in s.tags for s in tile.segments):
                table[t, :, 0] = 1
        return table

    def fill_globals(self, game, ctx, out: np.ndarray) -> None:
        st = game.ext[KEY]
        out[0] = st.pending / 4
        for p, n in enumerate(st.banked):
            out[1 + ctx.rel(p)] = n / 4
