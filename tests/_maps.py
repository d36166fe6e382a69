"""Brute-force references for games on a printed board (Carcassonne Maps).

Like tests/_helpers.py, these recompute from the data alone what the engine
keeps incrementally: which cells are squares comes from the map file
(:class:`MapData`, not the engine's :class:`BoardLayout`), edges and segments
from the tile data through ``rotated_edge`` / ``segment_on_side`` /
``segment_on_half`` (never the engine's rotation tables), connection of a
large city from the placed tiles around it, and features from a flood fill.
The rules they encode (docs/rules/maps_germany.md):

* a tile goes on an empty square that is not printed, orthogonally next to a
  placed tile or to a square of a large city that a placed tile touches;
* every side must match what is there: a placed or printed tile's edge
  letter, except a printed ``-`` edge and a side facing no square (anything fits);
* a city or road edge facing a printed ``-`` edge or no square is closed;
* a building's target is the number of squares around it; printed pieces
  off the board never count.
"""

from __future__ import annotations

from _helpers import DX, DY, SIDES, board_cells, rotated_edge, segment_on_half, segment_on_side

from carc_env.core import Game
from carc_env.core.tiles import BUILDING, CITY, FIELD, ROAD, TileType
from carc_env.expansions.maps_germany.mapfile import MapData

NEIGHBOURS8 = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


def printed_count(m: MapData) -> int:
    """Printed pieces: one per large-city square and per feature abroad (placements [0, n))."""
    return sum(len(c.cells) for c in m.large_cities) + len(m.abroad)


def connected_cities(game: Game, m: MapData) -> set[int]:
    """Indices of the large cities a placed (non-printed) tile touches orthogonally."""
    n = printed_count(m)
    placed = {(x, y) for x, y, *_ in game.placements[n:]}
    out = set()
    for i, city in enumerate(m.large_cities):
        for x, y in city.cells:
            if any((x + DX[s], y + DY[s]) in placed for s in range(4)):
                out.add(i)
    return out


def brute_legal_placements(game: Game, m: MapData, tile: TileType) -> set[tuple[int, int, int]]:
    cells = board_cells(game)
    n = printed_count(m)
    printed = {(x, y) for x, y, *_ in game.placements[:n]}
    active = {(x, y) for x, y, *_ in game.placements[n:]}
    for i in connected_cities(game, m):
        active |= set(m.large_cities[i].cells)
    legal = set()
    for x, y in m.squares:
        if (x, y) in cells or (x, y) in printed:
            continue
        if not any((x + DX[s], y + DY[s]) in active for s in range(4)):
            continue
        for r in range(4):
            ok = True
            for s in range(4):
                nb = cells.get((x + DX[s], y + DY[s]))
                if nb is None:
                    continue
                ntile, nr, _ = nb
                want = rotated_edge(ntile, nr, (s + 2) % 4)
                if want == "-" and (x + DX[s], y + DY[s]) in printed:
                    continue
                if rotated_edge(tile, r, s) != want:
                    ok = False
                    break
            if ok:
                legal.add((x, y, r))
    return legal


class MapBruteFeatures:
    """Features of a board on a map by a flood fill over every tile's segments, printed ones included."""

    def __init__(self, game: Game, m: MapData) -> None:
        cells = board_cells(game)
        self.cells = cells
        self.squares = m.squares
        self.node_info: dict[int, tuple[int, int, TileType, int, int]] = {}
        adj: dict[int, set[int]] = {}
        for (x, y), (tile, r, base) in cells.items():
            for i in range(len(tile.segments)):
                self.node_info[base + i] = (x, y, tile, r, i)
                adj.setdefault(base + i, set())
        for (x, y), (tile, r, base) in cells.items():
            for s in range(4):
                nb = cells.get((x + DX[s], y + DY[s]))
                if nb is None:
                    continue
                ntile, nr, nbase = nb
                o = (s + 2) % 4
                a = segment_on_side(tile, r, s)
                b = segment_on_side(ntile, nr, o)
                if a >= 0 and b >= 0:
                    assert tile.segments[a].kind == ntile.segments[b].kind, f"kind mismatch at ({x},{y}) {SIDES[s]}"
                    adj[base + a].add(nbase + b)
                    adj[nbase + b].add(base + a)
                for lr in (0, 1):
                    ha = segment_on_half(tile, r, 2 * s + lr)
                    hb = segment_on_half(ntile, nr, 2 * o + (1 - lr))
                    if ha >= 0 and hb >= 0:
                        adj[base + ha].add(nbase + hb)
                        adj[nbase + hb].add(base + ha)
        self.feature_of: dict[int, frozenset[int]] = {}
        for start in adj:
            if start in self.feature_of:
                continue
            comp, stack = {start}, [start]
            while stack:
                q = stack.pop()
                for w in adj[q]:
                    if w not in comp:
                        comp.add(w)
                        stack.append(w)
            fs = frozenset(comp)
            for q in comp:
                self.feature_of[q] = fs

    def features(self) -> set[frozenset[int]]:
        return set(self.feature_of.values())

    def kind(self, feature: frozenset[int]) -> int:
        x, y, tile, r, i = self.node_info[next(iter(feature))]
        return tile.segments[i].kind

    def tile_count(self, feature: frozenset[int]) -> int:
        return len({self.node_info[q][:2] for q in feature})

    def open_edges(self, feature: frozenset[int]) -> int:
        """Edges of the feature facing an empty square (the only edges that can still be matched)."""
        count = 0
        for q in feature:
            x, y, tile, r, i = self.node_info[q]
            for printed in tile.segments[i].edges:
                s = (printed + r) % 4
                c = (x + DX[s], y + DY[s])
                if c in self.squares and c not in self.cells:
                    count += 1
        return count

    def bordered_cities(self, feature: frozenset[int]) -> set[frozenset[int]]:
        out = set()
        for q in feature:
            x, y, tile, r, i = self.node_info[q]
            for c in tile.segments[i].cities:
                out.add(self.feature_of[q - i + c])
        return out

    def building_around(self, x: int, y: int) -> tuple[int, int]:
        """(filled squares around (x, y), squares around (x, y))."""
        around = [(x + dx, y + dy) for dx, dy in NEIGHBOURS8]
        squares = [c for c in around if c in self.squares]
        return sum(c in self.cells for c in squares), len(squares)


def is_feature_kind(kind: int) -> bool:
    return kind in (CITY, ROAD, FIELD, BUILDING)
