"""The Royal Gateways' observation channels and global features (the plug-in's encoder part).

Static board channels (from the tile data):

* ``king_gate`` / ``queen_gate``: 1 on a tile whose city carries a King's / a
  Queen's Gate (no follower may go on that city feature, unless the option
  ``follower_on_gate`` allows it).

Dynamic board channels:

* ``linked_city``: 1 on every tile of a city whose gates link two or more
  physical cities into one (its parts score together, once, when every part is
  complete; the core's ``open_{S}`` channels already count the open edges of
  all parts, and its follower channels show the followers of every part);
* ``gate_waiting``: 1 on every tile of a city holding the only placed gate of
  its type, which therefore cannot complete yet (only with the default
  ``unpaired_gate_blocks_completion``; all 0 otherwise).

Global features:

* ``king_gates_placed`` / ``queen_gates_placed``: gates of that type on the
  board / 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.tiles import CITY
from ...encoding.observation import ObsContext, ObservationExtension, add_cells
from .rules import GATE_TAGS, KEY, GatewaysState, linked_cities, waiting_gates

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


class Observation(ObservationExtension):
    """Where the gates are, which cities they link, which wait for their partner; gates placed."""

    static_channels = GATE_TAGS
    dynamic_channels = ("linked_city", "gate_waiting")
    global_names = tuple(f"{tag.split('_')[0]}_gates_placed" for tag in GATE_TAGS)

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        self.blocks = rules.by_key[KEY].options.unpaired_gate_blocks_completion

    def static_table(self, rules: RuleSet) -> np.ndarray:
        table = np.zeros((len(rules.tiles), 4, len(GATE_TAGS)), dtype=np.uint8)
        for ti, tile in enumerate(rules.tiles):
            for c, tag in enumerate(GATE_TAGS):
                if any(s.kind == CITY and tag in s.tags for s in tile.segments):
                    table[ti, :, c] = 1
        return table

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        st: GatewaysState = game.ext[KEY]
        if sum(len(nodes) for nodes in st.gates.values()) == 0:
            return
        for city in linked_cities(game):
            for cells in city.parts:
                add_cells(board[0], np.array(cells, dtype=np.intp), ctx)
        if self.blocks:
            find = game.find
            for nodes in st.gates.values():
                if len(nodes) == 1:
                    root = find(nodes[0])
                    if waiting_gates(game, root):
                        add_cells(board[1], np.array(game.feature_tiles(root), dtype=np.intp), ctx)
        np.minimum(board, 1, out=board)

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st: GatewaysState = game.ext[KEY]
        for i, tag in enumerate(GATE_TAGS):
            out[i] = len(st.gates[tag]) / 2
