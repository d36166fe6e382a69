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
from ...encoding.observation import ObsContext, ObservationExtension
from .rules import GATE_TAGS, KEY, GatewaysState, linked_cities

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game


def _mark(plane: np.ndarray, cells: list[tuple[int, int]], ctx: ObsContext) -> None:
    """Set ``plane`` to 1 at the window cells among ``cells`` (absolute ``(x, y)``)."""
    if not cells:
        return
    xy = np.array(cells, dtype=np.intp)
    cols, rows = xy[:, 0] - ctx.x0, xy[:, 1] - ctx.y0
    ok = (cols >= 0) & (cols < ctx.cols) & (rows >= 0) & (rows < ctx.rows)
    plane[rows[ok], cols[ok]] = 1


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
        gates = st.gates.values()
        if not any(gates):
            return
        if any(len(nodes) > 1 for nodes in gates):
            linked = [cell for city in linked_cities(game) for cells in city.parts for cell in cells]
            _mark(board[0], linked, ctx)
        if self.blocks:
            find, placements = game.find, game.placements
            # the only placed gate of its type: its city waits (blocks_completion says the same)
            waiting = [placements[k][:2] for nodes in gates if len(nodes) == 1 for k in game.tiles[find(nodes[0])]]
            _mark(board[1], waiting, ctx)

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st: GatewaysState = game.ext[KEY]
        for i, tag in enumerate(GATE_TAGS):
            out[i] = len(st.gates[tag]) / 2
