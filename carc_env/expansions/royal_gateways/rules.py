"""The Royal Gateways' rules (fan expansion; rules: ``docs/rules/royal_gateways.md``).

Contract
--------
* ``tile_files``: 2 King's Gate and 2 Queen's Gate tiles (``RG-king-1``,
  ``RG-king-2``, ``RG-queen-1``, ``RG-queen-2``; ``data/tiles/royal_gateways.toml``,
  placeholder layouts).  A gate is a city feature tagged ``king_gate`` or
  ``queen_gate``; nothing else of the layouts is read, so real tile data can
  replace the file.
* Linking (``placement_links``): placing a gate links its city with the city of
  every placed gate of the same type that is not complete.  The core unites the
  two roots of its union-find right after laying the tile (``Game.link_features``
  semantics), so the linked city is one feature from then on: tiles (a tile
  counted once), pennants, followers and open edges of every part together.  It
  completes when its open edges are 0, i.e. when every part is closed, and is
  scored once; every other rule (follower spots, fields, the King, Darmstadt,
  the Count, the Sagrada Familia's veto) sees one city.  Two gates of a type in
  one city unite nothing new.  Chains of King's and Queen's Gates link three or
  more cities.
* ``blocks_completion``: with ``unpaired_gate_blocks_completion`` (default), a
  city holding the only placed gate of its type does not complete.
* ``follower_spots``: no follower on a gate's city feature (unless
  ``follower_on_gate``).
* The Black Fairy of the drafts has no rule anywhere: not implemented.

State (``game.ext["royal_gateways"]``, a :class:`GatewaysState`): ``gates``, the
union-find nodes of the placed gates per tag, in placement order.

:func:`linked_cities` (for the observation and the drawing) finds the cities whose
gates link two or more physical parts, and those parts, from the board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.expansion import Expansion
from ...core.tiles import CITY, DX, DY

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "royal_gateways"
KING, QUEEN = "king_gate", "queen_gate"
GATE_TAGS = (KING, QUEEN)
GATE_NAMES = {KING: "King's Gate", QUEEN: "Queen's Gate"}


@dataclass(frozen=True)
class RoyalGatewaysOptions:
    """Rule variants of The Royal Gateways (defaults: the literal rules of the draft)."""

    unpaired_gate_blocks_completion: bool = True
    """A city holding a gate whose partner is not on the board cannot complete (the King's Gateway
    sentence kept in the draft); False: a gate alone has no effect (and a partner placed after its
    city completed links nothing)."""
    follower_on_gate: bool = False
    """False: no follower on the city feature carrying a gate (it stands for "the portal itself");
    True: the portal is a drawing, the gate's city takes a knight like any city."""


@dataclass
class GatewaysState:
    gates: dict[str, list[int]] = field(default_factory=lambda: {tag: [] for tag in GATE_TAGS})
    """Union-find nodes of the placed gates per tag (``king_gate``, ``queen_gate``), in placement order."""


@dataclass(frozen=True)
class LinkedCity:
    """A city made of several physical cities by gate links: its root, the cells of each part, and
    its gates as ``(tag, x, y, part index)``."""

    root: int
    parts: tuple[tuple[tuple[int, int], ...], ...]
    gates: tuple[tuple[str, int, int, int], ...]


class RoyalGateways(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = RoyalGatewaysOptions
    tile_files = ("royal_gateways.toml",)

    def __init__(self, options: RoyalGatewaysOptions) -> None:
        super().__init__(options)
        self._gate_segments: list[tuple[tuple[int, str], ...]] | None = None

    def new_state(self) -> GatewaysState:
        return GatewaysState()

    def gate_segments(self, game: Game) -> list[tuple[tuple[int, str], ...]]:
        """Per tile type: its gates as ``(segment, tag)`` (built on first use; one per rule set)."""
        if self._gate_segments is None:
            self._gate_segments = [
                tuple(
                    (i, tag)
                    for i, s in enumerate(tile.segments)
                    if s.kind == CITY
                    for tag in GATE_TAGS
                    if tag in s.tags
                )
                for tile in game.rules.tiles
            ]
        return self._gate_segments

    # -- linking -----------------------------------------------------------------
    def placement_links(self, game: Game, tile: int, x: int, y: int, r: int) -> list[tuple[int, int]]:
        gates = self.gate_segments(game)[tile]
        if not gates:
            return []
        placed = game.ext[KEY].gates
        find, completed = game.find, game.completed
        return [(seg, node) for seg, tag in gates for node in placed[tag] if find(node) not in completed]

    def after_placement(self, game: Game, x: int, y: int) -> None:
        _, _, t, _, base = game.placements[-1]
        gates = self.gate_segments(game)[t]
        if gates:
            placed = game.ext[KEY].gates
            for seg, tag in gates:
                placed[tag].append(base + seg)

    after_setup_placement = after_placement  # a gate laid at setup (a map's start square) is a placed gate

    # -- followers ---------------------------------------------------------------
    def follower_spots(self, game: Game, spots: list[int]) -> list[int]:
        if self.options.follower_on_gate:
            return spots
        gates = self.gate_segments(game)[game.placements[-1][2]]
        if not gates:
            return spots
        on_gate = {seg for seg, _ in gates}
        return [s for s in spots if s not in on_gate]

    # -- completion --------------------------------------------------------------
    def blocks_completion(self, game: Game, root: int) -> bool:
        if not self.options.unpaired_gate_blocks_completion:
            return False
        return bool(waiting_gates(game, root))


def waiting_gates(game: Game, root: int) -> list[str]:
    """Tags of the gates in city ``root`` that are the only placed gate of their type."""
    find = game.find
    return [tag for tag, nodes in game.ext[KEY].gates.items() if len(nodes) == 1 and find(nodes[0]) == root]


def physical_parts(game: Game, root: int) -> list[set[int]]:
    """The physical cities (sets of city nodes joined through tile edges) that feature ``root`` is
    made of; one part unless gates link it.  Reads the board; meant for display, not the hot path."""
    find = game.find
    tiles, placements, board = game.rules.tiles, game.placements, game.board
    nodes = [
        base + i
        for k in sorted(game.tiles[root])
        for x, y, t, r, base in (placements[k],)
        for i in range(len(tiles[t].segments))
        if find(base + i) == root
    ]
    parent = {n: n for n in nodes}

    def up(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n in nodes:
        x, y, t, r, base = placements[game.node_tile[n]]
        center = tiles[t].center[r]
        for s in range(4):
            if center[s] != n - base:
                continue
            k = board.get((x + DX[s], y + DY[s]))
            if k is None:
                continue
            _, _, nt, nr, nbase = placements[k]
            nc = tiles[nt].center[nr][(s + 2) & 3]
            if nc < 0:  # a neutral printed edge (a map's closed large-city side) joins nothing
                continue
            m = nbase + nc
            if m in parent:
                parent[up(m)] = up(n)
    groups: dict[int, set[int]] = {}
    for n in nodes:
        groups.setdefault(up(n), set()).add(n)
    return sorted(groups.values(), key=min)


def linked_cities(game: Game) -> list[LinkedCity]:
    """Every city whose gates link two or more physical cities, with its parts and gates."""
    gates = game.ext[KEY].gates
    find = game.find
    by_root: dict[int, list[tuple[str, int]]] = {}
    for tag, nodes in gates.items():
        for node in nodes:
            by_root.setdefault(find(node), []).append((tag, node))
    out = []
    for root, held in sorted(by_root.items()):
        if len(held) < 2:
            continue
        parts = physical_parts(game, root)
        if len(parts) < 2:
            continue
        part_of = {n: i for i, p in enumerate(parts) for n in p}
        cells = tuple(tuple(sorted({game.placements[game.node_tile[n]][:2] for n in p})) for p in parts)
        gate_list = tuple((tag, *game.placements[game.node_tile[node]][:2], part_of[node]) for tag, node in held)
        out.append(LinkedCity(root, cells, gate_list))  # type: ignore[arg-type]
    return out
