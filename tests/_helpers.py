"""Shared test helpers: scripted games and brute-force reference geometry.

The brute-force functions here recompute, from the tile data alone (printed
edges, printed segment sides and half-edges), what the engine keeps
incrementally: rotated edges, legal placements and the features of the board.
They deliberately do not use the engine's precomputed rotation tables
(``TileType.edge_codes`` / ``center`` / ``half``), its frontier or its
union-find, so that a test comparing the two can fail.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np

import carc_env  # noqa: F401  (registers the base game)
from carc_env.core import FeatureScored, Game, GameConfig, Pass, PlaceFollower
from carc_env.core.actions import Action
from carc_env.core.events import Event
from carc_env.core.tiles import CITY, FIELD, ROAD, TileType

SIDES = "NESW"
DX = {0: 0, 1: 1, 2: 0, 3: -1}
DY = {0: -1, 1: 0, 2: 1, 3: 0}


def new_game(draw_order: Sequence[str], num_players: int = 2, seed: int = 0, **config) -> Game:
    return Game(GameConfig(num_players=num_players, **config), seed=seed, draw_order=list(draw_order))


def play_random_game(
    config: GameConfig,
    seed: int,
    action_seed: int,
    before: Callable[[Game], None] | None = None,
    after: Callable[[Game | None, Game, Action, list[Event]], None] | None = None,
    keep_previous: bool = False,
    max_steps: int = 1000,
) -> Game:
    """The one random-game loop of the property tests: a whole game with random legal actions.

    ``before(game)`` runs at every decision; ``after(previous, game, action, events)`` after every
    action (``previous``: a clone taken before it if ``keep_previous``, else None).  Followers are
    placed with probability 0.6 when offered, so that supplies run out.
    """
    g = Game(config, seed=seed)
    rng = np.random.default_rng(action_seed)
    steps = 0
    while not g.over:
        if before is not None:
            before(g)
        actions = g.legal_actions()
        assert actions, f"no legal action in phase {g.phase}"
        if g.phase == "follower":
            spots = [a for a in actions if isinstance(a, PlaceFollower)]
            assert Pass() in actions
            a = spots[rng.integers(len(spots))] if spots and rng.random() < 0.6 else Pass()
        else:
            a = actions[rng.integers(len(actions))]
        prev = g.clone() if keep_previous else None
        ev = g.apply(a)
        if after is not None:
            after(prev, g, a, ev)
        steps += 1
        assert steps < max_steps
    return g


def play(game: Game, moves: Iterable[str]) -> list[Event]:
    """Apply every move; return all the events they caused, in order."""
    out: list[Event] = []
    for m in moves:
        out.extend(game.apply(m))
    return out


def scored(events: Iterable[Event]) -> list[FeatureScored]:
    return [e for e in events if isinstance(e, FeatureScored)]


# --------------------------------------------------------------- geometry
def rotated_edge(tile: TileType, r: int, side: int) -> str:
    """Edge letter facing ``side`` when the tile is turned ``r`` quarter turns clockwise."""
    return tile.edges[(side - r) % 4]


def rotated_edges(tile: TileType, r: int) -> str:
    return "".join(rotated_edge(tile, r, s) for s in range(4))


def segment_on_side(tile: TileType, r: int, side: int) -> int:
    """Local index of the city/road segment whose printed edge faces ``side`` after rotation, or -1."""
    printed = (side - r) % 4
    for i, seg in enumerate(tile.segments):
        if seg.kind in (CITY, ROAD) and printed in seg.edges:
            return i
    return -1


def segment_on_half(tile: TileType, r: int, half: int) -> int:
    """Local index of the field touching half-edge ``half`` (2*side + 0 for L, + 1 for R) after rotation."""
    side, lr = divmod(half, 2)
    printed = 2 * ((side - r) % 4) + lr
    for i, seg in enumerate(tile.segments):
        if seg.kind == FIELD and printed in seg.halves:
            return i
    return -1


def board_cells(game: Game) -> dict[tuple[int, int], tuple[TileType, int, int]]:
    """(x, y) -> (tile type, rotation, node base) for every placed tile."""
    return {(x, y): (game.rules.tiles[t], r, base) for x, y, t, r, base in game.placements}


def printed_board(game: Game) -> tuple[frozenset, set, set] | None:
    """On a printed board (``game.rules.layout``), from its data alone: the squares, the cells of
    the printed pieces, and the cells that make their neighbours playable (placed tiles, and the
    printed squares of a group a placed tile touches).  None on an unbounded table."""
    layout = getattr(game.rules, "layout", None)
    if layout is None:
        return None
    pieces = layout.pieces
    printed = {(p.x, p.y) for p in pieces}
    placed = {(x, y) for x, y, *_ in game.placements[len(pieces) :]}
    active = set(placed)
    for g in {p.group for p in pieces if p.square}:
        group = [(p.x, p.y) for p in pieces if p.square and p.group == g]
        if any((x + DX[s], y + DY[s]) in placed for x, y in group for s in range(4)):
            active.update(group)
    return layout.squares, printed, active


def brute_legal_placements(game: Game, tile: TileType) -> set[tuple[int, int, int]]:
    """Every (x, y, r) where ``tile`` fits, by checking all empty cells next to the board.

    On a printed board: only empty squares next to a placed tile or to a connected printed
    square; a side facing no square, or a printed ``-`` edge, allows anything."""
    cells = board_cells(game)
    board = printed_board(game)
    sources = cells if board is None else board[2]
    empty = set()
    for x, y in sources:
        for s in range(4):
            c = (x + DX[s], y + DY[s])
            if c not in cells and (board is None or c in board[0]):
                empty.add(c)
    legal = set()
    for x, y in empty:
        for r in range(4):
            ok = True
            for s in range(4):
                nb = cells.get((x + DX[s], y + DY[s]))
                if nb is None:
                    continue
                ntile, nr, _ = nb
                want = rotated_edge(ntile, nr, (s + 2) % 4)
                if board is not None and want == "-" and (x + DX[s], y + DY[s]) in board[1]:
                    continue
                if rotated_edge(tile, r, s) != want:
                    ok = False
                    break
            if ok:
                legal.add((x, y, r))
    return legal


class BruteFeatures:
    """Features of the board by a flood fill over the placed tiles' segments."""

    def __init__(self, game: Game) -> None:
        cells = board_cells(game)
        layout = getattr(game.rules, "layout", None)
        self.squares = None if layout is None else layout.squares  # on a printed board, where tiles go
        self.cells = cells
        self.node_info: dict[int, tuple[int, int, TileType, int, int]] = {}  # node -> x, y, tile, rot, segment
        adj: dict[int, set[int]] = {}
        for (x, y), (tile, r, base) in cells.items():
            for i, _seg in enumerate(tile.segments):
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
                # a "-" edge (the inside of the City of Carcassonne, a neutral edge printed on a map)
                # joins nothing, and anything may face it
                neutral = "-" in (rotated_edge(tile, r, s), rotated_edge(ntile, nr, o))
                assert (a < 0) == (b < 0) or neutral, f"edge mismatch between ({x},{y}) and its {SIDES[s]} neighbour"
                if a >= 0 and b >= 0:
                    assert tile.segments[a].kind == ntile.segments[b].kind
                    adj[base + a].add(nbase + b)
                    adj[nbase + b].add(base + a)
                for lr in (0, 1):
                    ha = segment_on_half(tile, r, 2 * s + lr)
                    hb = segment_on_half(ntile, nr, 2 * o + (1 - lr))
                    assert (ha < 0) == (hb < 0) or neutral, f"half-edge mismatch at ({x},{y}) side {SIDES[s]}"
                    if ha >= 0 and hb >= 0:
                        adj[base + ha].add(nbase + hb)
                        adj[nbase + hb].add(base + ha)
        self.feature_of: dict[int, frozenset[int]] = {}
        for start in adj:
            if start in self.feature_of:
                continue
            comp, stack = {start}, [start]
            while stack:
                n = stack.pop()
                for m in adj[n]:
                    if m not in comp:
                        comp.add(m)
                        stack.append(m)
            fs = frozenset(comp)
            for n in comp:
                self.feature_of[n] = fs

    def features(self) -> set[frozenset[int]]:
        return set(self.feature_of.values())

    def kind(self, feature: frozenset[int]) -> int:
        n = next(iter(feature))
        x, y, tile, r, i = self.node_info[n]
        return tile.segments[i].kind

    def tile_count(self, feature: frozenset[int]) -> int:
        return len({self.node_info[n][:2] for n in feature})

    def is_open(self, cell: tuple[int, int]) -> bool:
        """An edge facing ``cell`` is open: the cell is empty and (on a printed board) a square."""
        return cell not in self.cells and (self.squares is None or cell in self.squares)

    def open_edges(self, feature: frozenset[int]) -> int:
        count = 0
        for n in feature:
            x, y, tile, r, i = self.node_info[n]
            for printed in tile.segments[i].edges:
                s = (printed + r) % 4
                if self.is_open((x + DX[s], y + DY[s])):
                    count += 1
        return count

    def bordered_cities(self, feature: frozenset[int]) -> set[frozenset[int]]:
        out = set()
        for n in feature:
            x, y, tile, r, i = self.node_info[n]
            base = n - i
            for c in tile.segments[i].cities:
                out.add(self.feature_of[base + c])
        return out


def engine_partition(game: Game) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for n in range(len(game.parent)):
        groups.setdefault(game.find(n), set()).add(n)
    return {frozenset(g) for g in groups.values()}


def load_script(name: str, module: str | None = None):
    """``scripts/<name>.py`` imported as a module (the scripts are not a package)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        module or name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def torch_threads(n: int):
    """torch on ``n`` intra-op threads inside the block, its former count after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def env_after_random_moves(kw: dict, seed: int, moves: int):
    """A Python-engine ``raw_env(**kw)`` after ``moves`` uniformly random decisions of deal ``seed`` (a position
    mid-game for the search and play-out tests)."""
    env = carc_env.raw_env(engine="python", **kw)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env
