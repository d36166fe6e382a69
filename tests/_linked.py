"""Brute-force reference for linked cities (The Royal Gateways), from the tile data alone;
and the configurations the property tests of The Royal Gateways and the Sagrada Familia draw.

The engine unites the roots of the cities holding two gates of one type in its
incremental union-find.  This reference recomputes the same partition without it:
it flood-fills the physical features of the board (``_helpers.BruteFeatures``),
then joins the features of every pair of same-type gates the rules link, in the
order the tiles were placed, and sums tiles, open edges and pennants over each
group.  Gates are read from the tile data (a city feature tagged ``king_gate`` or
``queen_gate``), never from the plug-in's state.

Which pairs are linked: every pair of same-type gates, except (option
``unpaired_gate_blocks_completion=False`` only) when the earlier gate's city was
already complete, i.e. its group had no open edge, when the later gate was placed.
With the default a gate's city cannot complete before its partner is placed, so
every pair is linked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _combos import REFUSED, builtin_expansions
from _expansion_games import players
from _helpers import DX, DY, BruteFeatures
from hypothesis import assume
from hypothesis import strategies as st

from carc_env.core import Game, GameConfig
from carc_env.core.tiles import CITY, TileType

GATE_TAGS = ("king_gate", "queen_gate")


class _Prefix:
    """The attributes of a game that BruteFeatures reads, for the first ``k`` placements."""

    def __init__(self, game: Game | Hypothetical, k: int) -> None:
        self.rules = game.rules
        self.placements = game.placements[:k]


def _gates(tile: TileType) -> list[tuple[int, str]]:
    return [(i, tag) for i, s in enumerate(tile.segments) if s.kind == CITY for tag in GATE_TAGS if tag in s.tags]


class LinkedFeatures:
    """Physical features joined by gate links: the partition the engine should hold."""

    def __init__(
        self, game: Game | Hypothetical, unpaired_gate_blocks_completion: bool = True, upto: int | None = None
    ) -> None:
        k_end = len(game.placements) if upto is None else upto
        self.physical = BruteFeatures(_Prefix(game, k_end))  # type: ignore[arg-type]
        self.links: list[tuple[int, int]] = []
        placed: dict[str, list[int]] = {tag: [] for tag in GATE_TAGS}  # tag -> nodes of the gates placed so far
        for k, (_, _, t, _, base) in enumerate(game.placements[:k_end]):
            for seg, tag in _gates(game.rules.tiles[t]):
                node = base + seg
                for other in placed[tag]:
                    if unpaired_gate_blocks_completion or not self._closed_before(game, k, other):
                        self.links.append((node, other))
                placed[tag].append(node)
        self._group: dict[int, frozenset[int]] = {}
        self._build()

    def _closed_before(self, game: Game | Hypothetical, k: int, node: int) -> bool:
        """Was the (linked) city of ``node`` without open edges before placement ``k``?"""
        before = LinkedFeatures(game, False, upto=k)
        group = before.group_of(node)
        return before.open_edges(group) == 0

    def _build(self) -> None:
        parent: dict[frozenset[int], frozenset[int]] = {f: f for f in self.physical.features()}

        def find(f: frozenset[int]) -> frozenset[int]:
            while parent[f] != f:
                f = parent[f]
            return f

        for a, b in self.links:
            ra, rb = find(self.physical.feature_of[a]), find(self.physical.feature_of[b])
            if ra != rb:
                parent[rb] = ra
        groups: dict[frozenset[int], set[int]] = {}
        for f in parent:
            groups.setdefault(find(f), set()).update(f)
        for nodes in groups.values():
            g = frozenset(nodes)
            for n in g:
                self._group[n] = g

    # -- queries -----------------------------------------------------------
    def partition(self) -> set[frozenset[int]]:
        return set(self._group.values())

    def group_of(self, node: int) -> frozenset[int]:
        return self._group[node]

    def parts(self, group: frozenset[int]) -> set[frozenset[int]]:
        """The physical features a group is made of."""
        return {self.physical.feature_of[n] for n in group}

    def tile_count(self, group: frozenset[int]) -> int:
        return len({self.physical.node_info[n][:2] for n in group})

    def open_edges(self, group: frozenset[int]) -> int:
        return sum(self.physical.open_edges(part) for part in self.parts(group))

    def pennants(self, group: frozenset[int]) -> int:
        info = self.physical.node_info
        return sum(info[n][2].segments[info[n][4]].pennants for n in group)

    def open_cells(self, group: frozenset[int]) -> set[tuple[int, int]]:
        """The empty cells that open edges of ``group`` face."""
        out = set()
        for n in group:
            x, y, tile, r, i = self.physical.node_info[n]
            for printed in tile.segments[i].edges:
                s = (printed + r) % 4
                c = (x + DX[s], y + DY[s])
                if self.physical.is_open(c):
                    out.add(c)
        return out

    def bordered_cities(self, field: frozenset[int]) -> set[frozenset[int]]:
        """The (linked) cities a physical field borders, each once."""
        return {self.group_of(next(iter(c))) for c in self.physical.bordered_cities(field)}


def gate_nodes(game: Game | Hypothetical) -> dict[str, list[int]]:
    """Nodes of the placed gates per tag, in placement order (from the tile data)."""
    out: dict[str, list[int]] = {tag: [] for tag in GATE_TAGS}
    for _, _, t, _, base in game.placements:
        for seg, tag in _gates(game.rules.tiles[t]):
            out[tag].append(base + seg)
    return out


class Hypothetical:
    """The placements of ``game`` plus one more (``tile`` at ``(x, y)`` in rotation ``r``, its nodes
    numbered after the game's), for ``LinkedFeatures`` to say what that placement would make."""

    def __init__(self, game: Game, tile: int, x: int, y: int, r: int) -> None:
        self.rules = game.rules
        self.placements = [*game.placements, (x, y, tile, r, len(game.parent))]


def gate_waits(game: Game | Hypothetical, group: frozenset[int]) -> bool:
    """Whether ``group`` holds a gate that is the only placed gate of its type."""
    placed = gate_nodes(game)
    return any(len(nodes) == 1 and nodes[0] in group for nodes in placed.values())


@st.composite
def configs_with(draw: Callable, must: str) -> GameConfig:
    """A config with ``must``, any subset of the other built-in expansions and random options of
    The Royal Gateways and the Sagrada Familia."""
    others = [k for k in builtin_expansions() if k != must]
    chosen = draw(st.lists(st.sampled_from(others), unique=True, max_size=len(others)))
    combo = tuple(sorted({must, *chosen}))
    assume(not any(bad <= set(combo) for bad in REFUSED))
    options: dict[str, dict[str, Any]] = {}
    if "royal_gateways" in combo:
        options["royal_gateways"] = {
            "unpaired_gate_blocks_completion": draw(st.booleans()),
            "follower_on_gate": draw(st.booleans()),
        }
    if "sagrada_familia" in combo:
        options["sagrada_familia"] = {
            "may_close": draw(st.booleans()),
            "exception_returns_followers": draw(st.booleans()),
        }
    return GameConfig(draw(players), ("base", *combo), options)
