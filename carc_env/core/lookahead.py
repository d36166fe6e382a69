"""What a tile placement would join and close, without placing it (``Game.scan_placement``).

:func:`scan_placement` looks at placing tile type ``t`` at ``(x, y)`` in
rotation ``r`` and reports, for each city or road the tile's segments would
form (joined with the neighbours' features, or new), its open edges, tiles,
pennants and followers afterwards; whether the placement may complete
something (never wrongly False); and the buildings around the cell.  The game
is not changed, and the placement need not be legal (``placement_veto`` hooks
ask about placements they are deciding on: the Sagrada Familia refuses a
placement that would close its city, :meth:`Game.closes_feature`).

Links a placement makes (``placement_links``: a royal gate joins its city to
the city of the other gate of its type) count like neighbours: the linked
feature's roots are in ``roots`` and its open edges in ``open_after``.

Exactness: ``open_after`` is exact for every city and road (0 means the
placement closes it, before any expansion's ``blocks_completion``; on a
printed board a side facing no square or a neutral printed edge closes, as
:mod:`carc_env.core.layout` places it);
``tiles_after`` is an upper bound when the joined features already share a
tile; ``completes`` is True whenever the placement closes a city or road or
fills the last neighbour of a building (it may be True for a building an
expansion's ``building_target`` later keeps open).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .tiles import BUILDING, CITY, DX, DY, NEIGHBOURS8, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game


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
    """The result of :func:`scan_placement`."""

    joined: list[Joined]
    completes: bool  # the placement may complete a feature (never False when it does)
    has_building: bool  # the tile has a building (cloister, shrine, ...)
    around: int  # placed tiles in the 8 cells around (on a printed board: filled squares)
    buildings_around: list[int]  # roots of the buildings on those cells


def scan_placement(game: Game, t: int, x: int, y: int, r: int) -> Scan:
    """What placing tile type ``t`` at ``(x, y)`` in rotation ``r`` would join and complete."""
    segs = game.rules.tiles[t].segments
    seg_roots, matched, closed = _neighbour_features(game, t, x, y, r)
    joined = [_joined(game, segs, gs, gr, matched, closed) for gs, gr in _groups(segs, seg_roots)]
    completes = any(g.raw_open <= 0 for g in joined)
    has_building = any(s.kind == BUILDING for s in segs)
    around, buildings_around, fills_last = _around(game, x, y)
    completes = completes or fills_last or (has_building and around >= game.building_target(x, y))
    return Scan([g.joined for g in joined], completes, has_building, around, buildings_around)


def _neighbour_features(
    game: Game, t: int, x: int, y: int, r: int
) -> tuple[dict[int, set[int]], dict[int, int], dict[int, int]]:
    """Per city or road segment of the tile: the roots it would join, its sides that meet a
    neighbour's segment (``matched``) and its sides closed by a border or a neutral printed edge."""
    rules = game.rules
    tile = rules.tiles[t]
    segs = tile.segments
    center = tile.center[r]
    board, placements, find = game.board, game.placements, game.find
    layout = game.layout
    seg_roots: dict[int, set[int]] = {}
    matched: dict[int, int] = {}
    closed: dict[int, int] = {}  # sides closed by a border or a neutral printed edge (printed boards)
    for s in range(4):
        i = center[s]
        if i < 0 or segs[i].kind not in (CITY, ROAD):
            continue
        n = (x + DX[s], y + DY[s])
        nk = board.get(n)
        if nk is None:
            if layout is not None and n not in layout.playable and n not in layout.piece_at:
                closed[i] = closed.get(i, 0) + 1
            continue
        _, _, nt, nr, nbase = placements[nk]
        nc = rules.tiles[nt].center[nr][(s + 2) & 3]
        if nc < 0:
            if layout is not None:
                closed[i] = closed.get(i, 0) + 1
            continue
        seg_roots.setdefault(i, set()).add(find(nbase + nc))
        matched[i] = matched.get(i, 0) + 1
    for hook in rules.h_placement_links:  # features the placement links to its segments (royal gates)
        for i, node in hook(game, t, x, y, r):
            seg_roots.setdefault(i, set()).add(find(node))
    return seg_roots, matched, closed


def _groups(segs: tuple, seg_roots: dict[int, set[int]]) -> list[tuple[set[int], set[int]]]:
    """The tile's segments grouped by the features they would join (segments, roots); unconnected
    cities and roads stand alone."""
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
    return groups


@dataclass
class _Group:
    joined: Joined
    raw_open: int


def _joined(
    game: Game, segs: tuple, gs: set[int], gr: set[int], matched: dict[int, int], closed: dict[int, int]
) -> _Group:
    """The feature a group of the tile's segments would form with the roots it joins."""
    occ, followers, tiles, pennants, open_ = game.occupants, game.followers, game.tiles, game.pennants, game.open
    open_after = (
        sum(len(segs[i].edges) for i in gs)
        + sum(open_[q] for q in gr)
        - 2 * sum(matched.get(i, 0) for i in gs)
        - sum(closed.get(i, 0) for i in gs)
    )
    counts: dict[int, int] = {}
    for q in gr:
        for node in occ.get(q, ()):
            p = followers[node]
            counts[p] = counts.get(p, 0) + 1
    n_tiles = 1 + (len(set().union(*(tiles[q] for q in gr))) if gr else 0)
    joined = Joined(
        kind=segs[next(iter(gs))].kind,
        roots=gr,
        open_after=max(open_after, 0),
        tiles_after=n_tiles,
        pennants_after=sum(segs[i].pennants for i in gs) + sum(pennants[q] for q in gr),
        counts=counts,
    )
    return _Group(joined, open_after)


def _around(game: Game, x: int, y: int) -> tuple[int, list[int], bool]:
    """Filled cells around (x, y) (on a printed board: squares), the buildings' roots there, and
    whether the placement would be some building's last missing neighbour."""
    around = 0
    buildings_around: list[int] = []
    fills_last = False
    bn, done, find, board = game.building_neighbours, game.completed, game.find, game.board
    squares = None if game.layout is None else game.layout.squares  # on a printed board only squares count
    for dx, dy in NEIGHBOURS8:
        c = (x + dx, y + dy)
        if c in board and (squares is None or c in squares):
            around += 1
            for node in game.buildings.get(c, ()):
                root = find(node)
                buildings_around.append(root)
                if root not in done and bn.get(node, 0) + 1 >= game.building_target(*c):
                    fills_last = True  # this placement is the building's last missing neighbour
    return around, buildings_around, fills_last


__all__ = ["Joined", "Scan", "scan_placement"]
