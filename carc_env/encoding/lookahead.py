"""One-ply analysis of a tile placement, shared by the greedy baseline and the placement features.

``scan_placement`` looks at what placing tile ``t`` at ``(x, y)`` with
rotation ``r`` would join, without changing the game: for each city or road
the tile's segments would form (joined with the neighbours' features or new),
its open edges, tiles, pennants and followers afterwards; whether it may
complete something (never wrongly False, so a caller may skip playing out the rest);
and the buildings around the cell.  ``one_ply_gain`` plays a placement out
on a clone and returns own minus best-opponent points, counting the best
follower that would score at once (with the last tile, the play-out runs
through the final scoring).  Neither changes ``game``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import Pass, PlaceTile
from ..core.tiles import BUILDING, CITY, DX, DY, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game

NEIGHBOURS8 = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))


@dataclass
class Joined:
    """A city or road as it would be after the placement."""

    kind: int
    roots: set[int]  # the existing features it joins (empty: a new feature)
    open_after: int  # open edges afterwards (0: completed by the placement)
    tiles_after: int  # distinct tiles afterwards (an upper bound when the joined features share tiles)
    pennants_after: int
    counts: dict[int, int] = field(default_factory=dict)  # followers per player on the joined features


@dataclass
class Scan:
    joined: list[Joined]
    completes: bool  # the placement may complete a feature (never False when it does)
    has_building: bool  # the tile has a building (cloister, shrine, ...)
    around: int  # placed tiles in the 8 cells around
    buildings_around: list[int]  # roots of the buildings on those cells


def scan_placement(game: Game, t: int, x: int, y: int, r: int) -> Scan:
    rules = game.rules
    tile = rules.tiles[t]
    segs = tile.segments
    center = tile.center[r]
    board, placements, find, open_ = game.board, game.placements, game.find, game.open
    seg_roots: dict[int, set[int]] = {}
    matched: dict[int, int] = {}
    for s in range(4):
        i = center[s]
        if i < 0 or segs[i].kind not in (CITY, ROAD):
            continue
        nk = board.get((x + DX[s], y + DY[s]))
        if nk is None:
            continue
        _, _, nt, nr, nbase = placements[nk]
        nc = rules.tiles[nt].center[nr][(s + 2) & 3]
        if nc < 0:
            continue
        seg_roots.setdefault(i, set()).add(find(nbase + nc))
        matched[i] = matched.get(i, 0) + 1
    # group the tile's segments that join a common feature; unconnected segments stand alone
    groups: list[tuple[set[int], set[int]]] = []
    for i, roots in seg_roots.items():
        merged_s, merged_r = {i}, set(roots)
        rest = []
        for gs, gr in groups:
            if gr & merged_r:
                merged_s |= gs
                merged_r |= gr
            else:
                rest.append((gs, gr))
        groups = [*rest, (merged_s, merged_r)]
    for i, s in enumerate(segs):
        if s.kind in (CITY, ROAD) and i not in seg_roots:
            groups.append(({i}, set()))
    occ, followers, tiles, pennants = game.occupants, game.followers, game.tiles, game.pennants
    joined = []
    completes = False
    for gs, gr in groups:
        open_after = (
            sum(len(segs[i].edges) for i in gs) + sum(open_[q] for q in gr) - 2 * sum(matched.get(i, 0) for i in gs)
        )
        completes = completes or open_after <= 0
        counts: dict[int, int] = {}
        for q in gr:
            for node in occ.get(q, ()):
                p = followers[node]
                counts[p] = counts.get(p, 0) + 1
        n_tiles = 1 + (len(set().union(*(tiles[q] for q in gr))) if gr else 0)
        joined.append(
            Joined(
                kind=segs[next(iter(gs))].kind,
                roots=gr,
                open_after=max(open_after, 0),
                tiles_after=n_tiles,
                pennants_after=sum(segs[i].pennants for i in gs) + sum(pennants[q] for q in gr),
                counts=counts,
            )
        )
    has_building = any(s.kind == BUILDING for s in segs)
    around = 0
    buildings_around: list[int] = []
    bn, done = game.building_neighbours, game.completed
    for dx, dy in NEIGHBOURS8:
        c = (x + dx, y + dy)
        if c in board:
            around += 1
            for node in game.buildings.get(c, ()):
                root = find(node)
                buildings_around.append(root)
                if root not in done and bn.get(node, 0) + 1 >= game.building_target(*c):
                    completes = True  # this placement is the building's last missing neighbour
    if has_building and around >= game.building_target(x, y):
        completes = True
    return Scan(joined, completes, has_building, around, buildings_around)


def immediate_points(g: Game, node: int) -> int:
    """Points a follower on ``node`` would score at once (0 if its feature is not complete)."""
    root = g.find(node)
    kind = g.kind[root]
    if kind in (CITY, ROAD):
        if g.open[root] == 0 and root not in g.completed:
            return sum(item.points for item in g.feature_value(root, final=False))
        return 0
    if kind == BUILDING and root not in g.completed and g.building_neighbours.get(root, 0) >= 8:
        return 1 + g.building_neighbours[root]
    return 0


def one_ply_gain(game: Game, act: PlaceTile, me: int) -> float:
    """Own immediate points minus the best opponent's, with the best follower that scores at once."""
    g = game.clone()
    before = g.scores[:]
    g.apply(act)
    bonus = 0.0
    if g.phase == "follower" and g.player == me:
        for spot in g.legal_follower_spots():
            pts = immediate_points(g, g.placements[-1][4] + spot)
            if pts > bonus:
                bonus = float(pts)
        g.apply(Pass())
    n = g.num_players
    gains = [g.scores[p] - before[p] for p in range(n)]
    best_other = max(gains[p] for p in range(n) if p != me)
    return gains[me] + bonus - best_other


def leads(counts: dict[int, int], player: int) -> bool:
    """``player`` has the most followers (possibly shared) on a feature with these follower counts."""
    return bool(counts) and counts.get(player, 0) == max(counts.values())
