"""The board as plain text (the env's ``ansi`` mode; no escape codes).

Contract
--------
``render_text(game, show_legal=True) -> str``: a header, then the board with
absolute coordinates on the axes (x above each column, y left of each row's
middle line; the start tile is at (0, 0), x grows east, y south).  Every
line of the board starts with a 4-character label column.

Header::

    turn 12 | phase tile | player 1 to move | drawn BA-U | tiles left 50
    P0: 12 points, 5 followers in supply | P1: 7 points, 6 followers in supply
    last tile BA-K at (1,-2) r3

With expansions the header has a few more lines after the scores: each
enabled plug-in's status lines, in expansion order (always the same lines for
a configuration; :func:`carc_env.render.expansions.status_lines`), e.g.::

    King: P1 (city of 5 tiles)
    Robber Baron: nobody yet

and a plug-in may write over the board's character blocks (the Count's
quarters inside the City of Carcassonne; see each plug-in's ``draw`` module).

Each tile is a 7 x 3 block, drawn from the tile data in its rotation.  Some
base tiles (unrotated; ``BA-D`` with a follower of player 1 on its road)::

    BA-D     BA-V     BA-A     BA-M     BA-S     BA-X
    +#####+  +.....+  +.....+  ######+  #######  +..|..+
    -1-----  ---+  .  . [c] .  *#    .  ###*###  ---o---
    +.....+  +..|..+  +..|..+  +.....+  +..|..+  +..|..+

``BA-D``: city north, straight road west-east through the centre; ``BA-V``: a
road from the west bending south; ``BA-A``: cloister with a road ending at it;
``BA-M``: a corner city (north and west) with a pennant; ``BA-S``: a city on
three sides covering the centre, the road from the south ends at it;
``BA-X``: four roads ending at a junction.

Legend:

====== ===============================================================
``#``  city (a city covering the tile centre fills the middle row)
``*``  pennant (in its city)
``-``  road running west/east, ``|`` road running north/south
``+``  on a side's middle: a road bend at the centre; in a corner: a tile corner
``o``  road junction (single-sided roads end there)
``~``  river
``.``  field along a side
``[c]`` building in the centre: the letter its plug-in's drawing gives its kind,
       else the kind's first letter (``c`` cloister, ``s`` shrine, ``h`` church)
``D``  a tag on a city, its first letter in capitals (``D`` the Darmstadtium)
``0-4`` a follower of that player, drawn on its feature: on a city side or
       the city's middle, on a road arm, inside a building's brackets, or on a
       field's ``.`` / corner position (a digit where a ``.`` or a corner
       ``+`` would be is a field follower)
``?``  an empty cell where the drawn tile fits (tile phase, ``show_legal``)
====== ===============================================================
"""

from __future__ import annotations

from ..core.tiles import BUILDING, CITY, FIELD, RIVER, ROAD
from .expansions import building_style, drawings, status_lines
from .geometry import rotate_half, rotate_side

CELL_W, CELL_H = 7, 3
LABEL_W = 4

# half-edge -> (row, col) of its field spot when the side's middle is free / when it is a road
_HALF_SPOT = {0: (0, 1), 1: (0, 5), 4: (2, 5), 5: (2, 1)}
_HALF_SPOT_SIDE = {2: (0, 6), 3: (2, 6), 6: (2, 0), 7: (0, 0)}  # E/W halves when that side is a road
_SIDE_MID = {0: (0, 3), 1: (1, 6), 2: (2, 3), 3: (1, 0)}
_ROAD_SPOT = {0: (0, 3), 1: (1, 5), 2: (2, 3), 3: (1, 1)}
_CORNER = {(3, 0): (0, 0), (0, 1): (0, 6), (1, 2): (2, 6), (2, 3): (2, 0)}  # (side a, side b) -> cell
_EVERY_CELL = [(row, col) for row in range(CELL_H) for col in range(CELL_W)]

Grid = list[list[str]]


def _building_letter(kind: str) -> str:
    return building_style(kind).letter or (kind[:1] or "?").lower()


def tile_block(tile, r: int, followers: dict[int, int] | None = None) -> Grid:
    """The 3 x 7 character block of ``tile`` in rotation ``r``; ``followers`` maps segment -> player."""
    followers = followers or {}
    g = [[" "] * CELL_W for _ in range(CELL_H)]
    segs = tile.segments
    side_seg = [-1] * 4
    side_kind = [-1] * 4
    for i, s in enumerate(segs):
        for e in s.edges:
            side_seg[rotate_side(e, r)] = i
            side_kind[rotate_side(e, r)] = s.kind
    _draw_sides(g, tile, r, side_seg, side_kind)
    centre_city = _draw_centre_cities(g, segs, r)
    _draw_arms(g, segs, r, centre_city)
    buildings = [(i, s) for i, s in enumerate(segs) if s.kind == BUILDING]
    _draw_buildings(g, buildings, followers)
    for s in segs:  # cities without a side: a mark in the middle
        if s.kind == CITY and not s.edges and not buildings:
            g[1][2] = g[1][3] = g[1][4] = "#"
    covers = [centre_city == i and not buildings for i in range(len(segs))]
    city_spots = {i: _city_spot(s, r, covers[i]) for i, s in enumerate(segs) if s.kind == CITY}
    _draw_city_marks(g, segs, r, followers, city_spots, covers)
    _draw_followers(g, segs, r, followers, city_spots, side_kind, centre_city)
    return g


def _draw_sides(g: Grid, tile, r: int, side_seg: list[int], side_kind: list[int]) -> None:
    """Each side: ``#`` for a city, ``.`` for a field, road or river side; corners ``+`` or a city's ``#``."""
    letters = "".join(tile.edges[(s - r) % 4] for s in range(4))
    for side in range(4):
        ch = "#" if side_kind[side] == CITY else "." if letters[side] in "FRI" else " "
        if side in (0, 2):
            row = 0 if side == 0 else 2
            for c in range(1, 6):
                g[row][c] = ch
        else:
            g[1][0 if side == 3 else 6] = ch
    for (a, b), (row, col) in _CORNER.items():
        same_city = side_kind[a] == CITY and side_seg[a] == side_seg[b]
        g[row][col] = "#" if same_city else "+"


def _draw_centre_cities(g: Grid, segs, r: int) -> int:
    """Fill the middle row for a city covering the centre (returned, -1 if none); a corner city's inner corner."""
    centre_city = -1
    for i, s in enumerate(segs):
        if s.kind != CITY:
            continue
        sides = {rotate_side(e, r) for e in s.edges}
        if len(sides) >= 3 or sides in ({0, 2}, {1, 3}):
            centre_city = i
            for c in range(1, 6):
                g[1][c] = "#"
        elif len(sides) == 2:  # a corner city: fill the inner corner
            g[1][1 if 3 in sides else 5] = "#"
    return centre_city


def _draw_arms(g: Grid, segs, r: int, centre_city: int) -> None:
    """Roads and rivers: an arm from each of their sides to the centre, and the centre's mark."""
    arms: dict[int, list[int]] = {ROAD: [], RIVER: []}
    single_road = False
    for s in segs:
        if s.kind in (ROAD, RIVER):
            sides = [rotate_side(e, r) for e in s.edges]
            arms[s.kind].extend(sides)
            if s.kind == ROAD and len(sides) == 1:
                single_road = True
    for kind, ch_v, ch_h in ((RIVER, "~", "~"), (ROAD, "|", "-")):
        for side in arms[kind]:
            if side == 0:
                g[0][3] = ch_v
            elif side == 2:
                g[2][3] = ch_v
            elif side == 3:
                for c in (0,) if centre_city >= 0 else (0, 1, 2):
                    g[1][c] = ch_h
            else:
                for c in (6,) if centre_city >= 0 else (4, 5, 6):
                    g[1][c] = ch_h
    road_arms = set(arms[ROAD])
    if road_arms and centre_city < 0:
        if single_road:
            g[1][3] = "o"
        elif road_arms == {1, 3}:
            g[1][3] = "-"
        elif road_arms == {0, 2}:
            g[1][3] = "|"
        else:
            g[1][3] = "+"
    elif arms[RIVER] and centre_city < 0:
        g[1][3] = "~"


def _draw_buildings(g: Grid, buildings: list, followers: dict[int, int]) -> None:
    """Buildings in the middle row: their letter (or the follower on them), in brackets when alone."""
    if not buildings:
        return
    if len(buildings) == 1:
        cols = [3]
    else:
        cols = [2, 4] if len(buildings) == 2 else [1, 3, 5][: len(buildings)]
    for (i, s), c in zip(buildings, cols, strict=False):
        if len(buildings) == 1:
            g[1][2], g[1][4] = "[", "]"
        g[1][c] = str(followers[i]) if i in followers else _building_letter(s.building)


def _draw_city_marks(
    g: Grid, segs, r: int, followers: dict[int, int], city_spots: dict[int, tuple[int, int]], covers: list[bool]
) -> None:
    """Pennants (``*``), then tags (first letter in capitals) on free city characters."""
    for i, s in enumerate(segs):
        if s.kind != CITY or not s.pennants:
            continue
        cands = [(1, 3)] if covers[i] else []
        cands += [_SIDE_MID[rotate_side(e, r)] for e in reversed(s.edges)]
        taken = city_spots[i] if i in followers else None
        for row, col in cands + _EVERY_CELL:
            if g[row][col] == "#" and (row, col) != taken:
                g[row][col] = "*"
                break
    for i, s in enumerate(segs):
        if s.kind != CITY or not s.tags:
            continue
        taken = city_spots[i] if i in followers else None
        cands = [(1, 3), (1, 2), (1, 4)] if covers[i] else []
        cands += [_SIDE_MID[rotate_side(e, r)] for e in s.edges]
        for tag in sorted(s.tags):
            for row, col in cands + _EVERY_CELL:
                if g[row][col] == "#" and (row, col) != taken:
                    g[row][col] = tag[:1].upper()
                    break


def _draw_followers(
    g: Grid,
    segs,
    r: int,
    followers: dict[int, int],
    city_spots: dict[int, tuple[int, int]],
    side_kind: list[int],
    centre_city: int,
) -> None:
    """Followers on cities, roads and fields: the player's digit on their feature."""
    for i, p in followers.items():
        s = segs[i]
        d = str(p)
        if s.kind == CITY:
            row, col = city_spots[i]
        elif s.kind == ROAD:
            side = rotate_side(s.edges[0], r)
            row, col = _ROAD_SPOT[side]
            if centre_city >= 0 and side in (1, 3):
                col = 6 if side == 1 else 0
        elif s.kind == FIELD:
            row, col = _field_spot(s, r, side_kind, g)
        else:  # buildings: drawn with their letter
            continue
        g[row][col] = d


def _city_spot(s, r: int, covers_centre: bool) -> tuple[int, int]:
    if covers_centre or not s.edges:
        return (1, 3)
    return _SIDE_MID[rotate_side(s.edges[0], r)]


def _field_spot(s, r: int, side_kind: list[int], g: list[list[str]]) -> tuple[int, int]:
    options = []
    for h0 in s.halves:
        h = rotate_half(h0, r)
        side = h // 2
        if h in _HALF_SPOT:
            options.append(_HALF_SPOT[h])
        elif side_kind[side] == ROAD or side_kind[side] == RIVER:
            options.append(_HALF_SPOT_SIDE[h])
        else:
            options.append(_SIDE_MID[side])
    for row, col in options:
        if g[row][col] in ".+ ":
            return row, col
    return options[0] if options else (1, 3)


def render_text(game, show_legal: bool = True) -> str:
    """The board as text; see the module docstring for the layout and legend."""
    n = game.num_players
    tiles = game.rules.tiles
    if game.over:
        best = max(game.scores)
        win = ", ".join(f"P{p}" for p in range(n) if game.scores[p] == best)
        head = f"turn {game.turn + 1} | game over | winner {win} | tiles left {game.bag_size}"
    else:
        head = (
            f"turn {game.turn + 1} | phase {game.phase} | player {game.player} to move | "
            f"drawn {game.tile_id or '-'} | tiles left {game.bag_size}"
        )
    lines = [head]
    lines.append(" | ".join(f"P{p}: {game.scores[p]} points, {game.supply[p]} followers in supply" for p in range(n)))
    lines.extend(s.text for s in status_lines(game))
    if game.history and game.placements:
        x, y, t, r, _ = game.placements[-1]
        lines.append(f"last tile {tiles[t].id} at ({x},{y}) r{r}")
    lines.append("")

    per_tile: dict[int, dict[int, int]] = {}
    for node, p in game.followers.items():
        k = game.node_tile[node]
        per_tile.setdefault(k, {})[node - game.placements[k][4]] = p

    xs = [p[0] for p in game.placements] or [0]
    ys = [p[1] for p in game.placements] or [0]
    legal: set[tuple[int, int]] = set()
    if show_legal and game.phase == "tile":
        fx, fy, masks = game.frontier()
        legal = {(int(x), int(y)) for x, y, m in zip(fx, fy, masks, strict=True) if m}
        xs += [x for x, _ in legal]
        ys += [y for _, y in legal]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    header = " " * LABEL_W + "".join(str(x).center(CELL_W) for x in range(x0, x1 + 1))
    lines.append(header.rstrip())
    blocks: dict[tuple[int, int], list[list[str]]] = {}
    for k, (x, y, t, r, _) in enumerate(game.placements):
        blocks[(x, y)] = tile_block(tiles[t], r, per_tile.get(k))
    for drawing in drawings(game.rules):
        drawing.draw_text(game, blocks)
    empty = [[" "] * CELL_W for _ in range(CELL_H)]
    qmark = [[" "] * CELL_W, list("   ?   "), [" "] * CELL_W]
    for y in range(y0, y1 + 1):
        rows: list[list[str]] = [[] for _ in range(CELL_H)]
        for x in range(x0, x1 + 1):
            b = blocks.get((x, y))
            if (x, y) in legal:  # an empty cell: a plug-in's background (a printed board) keeps its frame
                b = qmark if b is None else [b[0], [*b[1][:3], "?", *b[1][4:]], b[2]]
            elif b is None:
                b = empty
            for i in range(CELL_H):
                rows[i].extend(b[i])
        for i in range(CELL_H):
            label = str(y).rjust(LABEL_W - 1) + " " if i == 1 else " " * LABEL_W
            lines.append((label + "".join(rows[i])).rstrip())
    return "\n".join(lines) + "\n"
