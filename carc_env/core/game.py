"""The game state and its one mutator, :meth:`Game.apply`.

Contract
--------
* ``Game(config, seed=..., draw_order=...)`` sets a game up; the same
  ``(config, seed, draw_order, actions)`` always gives the same game.  The
  game's one random generator (``game.rng``) shuffles the bag at setup, and
  plug-ins may draw from it during play (the Stained Glass token bag): it is
  in the same state after setup whether or not a draw order is forced, so a
  game replayed from its seed, its recorded draw order and its actions draws
  the same numbers.  Without a seed a fresh one is drawn and kept in
  ``game.seed`` (so records always name one).
* ``game.phase`` is the current decision phase (``"tile"``, ``"follower"``,
  expansion phases) or ``"game_over"``; ``game.player`` decides it (not always
  the turn's player, ``game.turn_player``).
* ``seed`` is None or a non-negative integer (numpy integers are stored as
  ``int``, so the game record stays JSON); ``draw_order`` a list of tile ids.
  Anything else raises :class:`ConfigError`.
* ``game.legal_actions()`` lists every legal action; ``game.apply(action)``
  is the only way the state changes.  It returns the events of the change and
  raises :class:`IllegalActionError` (saying what was wrong) for anything
  illegal, leaving the state untouched.  Types are checked first: an action
  whose fields are not of their annotated types (a float coordinate, a string,
  a bool) or that is no action at all raises
  :class:`~carc_env.core.actions.ActionTypeError` (an ``IllegalActionError``
  and a ``TypeError``); numpy integers are accepted and stored as ``int``.
* ``game.clone()`` is a cheap independent copy (for search).  Every attribute
  is copied as :data:`Game.CLONE` says; an attribute it does not name makes
  ``clone`` raise, so a new mutable field can never be shared by accident.
* Expansions change the game only through the methods meant for them (see
  :mod:`carc_env.core.expansion`: ``take_follower``, ``add_guest``, ``award``,
  ``emit``, ``link_features`` ...).

Board and features
------------------
Cells are ``(x, y)`` with the start tile at ``(0, 0)``, x east, y south.
Every tile segment (city, road, field, building, river) becomes a node of an
incremental union-find; matching segments of neighbouring tiles are united when
a tile is placed.  Each root carries its feature's aggregates: open edges
(a city or road is complete when none is left), the set of tiles, pennants,
the followers on it, and for fields the city nodes it borders.  Buildings
(cloisters and the cloister-like kinds of expansions) count their neighbours.

Legal placement is vectorised: every empty cell next to the board (the
frontier) keeps a pattern of the edge codes its neighbours require; the
rotations of the drawn tile that fit each cell are one table look-up over all
frontier cells (``RuleSet.compat``), after which expansions may veto cells.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import layout as _layout
from .actions import Action, IllegalActionError, Pass, PlaceFollower, PlaceTile, checked_action, parse_basic
from .config import DEFAULT_EXPANSIONS, PATTERN_BITS, GameConfig, TileInfo, ruleset
from .events import (
    Event,
    FeatureCompleted,
    FeatureScored,
    FollowerPlaced,
    GameOver,
    PointsAwarded,
    ScoreItem,
    TileDiscarded,
    TileDrawn,
    TilePlaced,
)
from .expansion import ConfigError
from .lookahead import Scan, scan_placement
from .tiles import BUILDING, CITY, DX, DY, FIELD, KIND_NAMES, NEIGHBOURS8, RIVER, ROAD, SIDES

GAME_OVER = "game_over"
_SHIFT = tuple(PATTERN_BITS * s for s in range(4))
_ROT4 = np.arange(4, dtype=np.uint8)
_IMMUTABLE = (int, float, str, bool, type(None))


def _list_of_lists(d: dict) -> dict:
    return {k: v[:] for k, v in d.items()}


def _dict_of_sets(d: dict) -> dict:
    return {k: set(v) for k, v in d.items()}


def _copy_rng(rng: np.random.Generator) -> np.random.Generator:
    """A generator in the same state (three times faster than ``copy.deepcopy``)."""
    bits = rng.bit_generator
    twin = type(bits)(0)
    twin.state = bits.state
    return np.random.Generator(twin)


class Game:
    """One game of Carcassonne.  See the module docstring for the contract."""

    CLONE: dict[str, Any] = {
        # shared: immutable, or never changed after setup
        "rules": None,
        "config": None,
        "_infos": None,
        "draw_order": None,
        "num_players": None,
        "seed": None,
        "turn_player": None,
        "player": None,
        "turn": None,
        "over": None,
        "phase": None,
        "ending": None,
        "current_tile": None,
        "_stage_i": None,
        "_nf": None,
        # copied
        "rng": _copy_rng,
        "scores": list.copy,
        "supply": list.copy,
        "events": lambda ev: [],  # a clone starts with no pending events
        "history": list.copy,
        "_history_k": list.copy,
        "ext": copy.deepcopy,
        "board": dict.copy,
        "placements": list.copy,  # of tuples
        "bounds": list.copy,
        "_fx": np.ndarray.copy,
        "_fy": np.ndarray.copy,
        "_fpat": np.ndarray.copy,
        "_fslot": dict.copy,
        "_masks": np.ndarray.copy,
        "parent": list.copy,
        "kind": list.copy,
        "node_tile": list.copy,
        "open": list.copy,
        "pennants": list.copy,
        "completed": set.copy,
        "tiles": _dict_of_sets,
        "occupants": _list_of_lists,
        "adjacent_cities": _dict_of_sets,
        "followers": dict.copy,
        "guests": _list_of_lists,
        "buildings": _list_of_lists,
        "building_neighbours": dict.copy,
        "_pending_buildings": list.copy,
        "_follower_spots": list.copy,
        "completing": list.copy,
        "_bag": list.copy,
        "_start_tiles_used": list.copy,
        "layout": None,
        "connected_groups": set.copy,
    }
    """How :meth:`clone` copies each attribute: ``None`` shares it (a number or string, immutable
    data, or never changed after setup), a function copies it.  An attribute missing here is shared
    if it holds a number, string or None, and makes :meth:`clone` raise otherwise; add it with the
    copy it needs."""

    def __init__(
        self,
        config: GameConfig | None = None,
        seed: int | None = None,
        draw_order: Sequence[str] | None = None,
    ) -> None:
        config = config or GameConfig()
        if not isinstance(config, GameConfig):
            raise ConfigError(f"config must be a GameConfig, got {type(config).__name__}")
        rules = ruleset(config)
        self.rules = rules
        self.config = config
        self.num_players = config.num_players
        seed = _checked_seed(seed)
        if seed is None:
            # A fresh seed is drawn and kept, so that the game's record replays it: expansions draw
            # from the generator during play (a token bag), which a recorded draw order cannot fix.
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._infos: tuple[TileInfo, ...] = rules.tile_infos
        n = config.num_players
        self.scores = [0] * n
        self.supply = [rules.followers] * n
        self.turn_player = 0
        self.player = 0
        self.turn = 0
        self.over = False
        self.phase = "tile"
        self.events: list[Event] = []
        self.history: list[Action] = []
        self._history_k: list[int] = []  # placements made when each action was applied
        self.ext: dict[str, Any] = {e.KEY: e.new_state() for e in rules.expansions}
        # board
        self.board: dict[tuple[int, int], int] = {}
        self.placements: list[tuple[int, int, int, int, int]] = []  # x, y, tile, rotation, node base
        self.bounds = [0, 0, 0, 0]  # min x, max x, min y, max y
        cap = 64
        self._fx = np.zeros(cap, dtype=np.int32)
        self._fy = np.zeros(cap, dtype=np.int32)
        self._fpat = np.zeros(cap, dtype=np.int32)
        self._nf = 0
        self._fslot: dict[tuple[int, int], int] = {}
        self._masks = np.zeros(0, dtype=np.uint8)
        # union-find over segments
        self.parent: list[int] = []
        self.kind: list[int] = []
        self.node_tile: list[int] = []
        self.open: list[int] = []
        self.pennants: list[int] = []
        self.completed: set[int] = set()
        self.tiles: dict[int, set[int]] = {}
        self.occupants: dict[int, list[int]] = {}
        self.adjacent_cities: dict[int, set[int]] = {}
        self.followers: dict[int, int] = {}  # node -> owner
        self.guests: dict[int, list[int]] = {}  # root -> owners of followers on no segment (see add_guest)
        self.buildings: dict[tuple[int, int], list[int]] = {}
        self.building_neighbours: dict[int, int] = {}
        self._pending_buildings: list[int] = []
        self._follower_spots: list[int] = []
        self.completing: list[int] = []
        self.ending = False  # True once the last tile is played: the final stages run
        self.current_tile = -1
        self._stage_i = 0
        self._start_tiles_used = []
        # a printed board (Carcassonne Maps), see core.layout: its printed pieces are laid first
        self.layout = rules.layout
        self.connected_groups: set[int] = set()
        if self.layout is not None:
            _layout.lay_printed(self)

        for exp in rules.expansions:
            exp.setup(self)
        # The shuffled bag is built even when a draw order is forced, so that the generator is in
        # the same state after setup either way: a record (which forces the recorded draw order)
        # then replays every later random draw of the game too.
        bag: list[int] = []
        for t, tile in enumerate(rules.tiles):
            bag.extend([t] * tile.count)
        for start in self._start_tiles_used:
            bag.remove(start)
        bag = [bag[i] for i in self.rng.permutation(len(bag))]
        for exp in rules.expansions:
            bag = exp.build_bag(self, bag)
        if draw_order is not None:
            bag = self._bag_from_order(draw_order)
        self.draw_order = [rules.tiles[t].id for t in bag]
        self._bag = bag[::-1]  # next tile at the end
        for hook in rules.h_setup_from_bag:
            hook(self)
        self._run()
        self.events = []  # setup's draws are not the first action's events

    # ------------------------------------------------------------------ setup
    _start_tiles_used: list[int]

    def _bag_from_order(self, order: Sequence[str]) -> list[int]:
        if isinstance(order, str):
            raise ConfigError("draw_order must be a list of tile ids, not a string")
        if not isinstance(order, (Sequence, np.ndarray)) or isinstance(order, (bytes, bytearray)):
            raise ConfigError(
                f"draw_order must be a list of tile ids (e.g. ['BA-D', 'BA-U']), got {order!r} of type "
                f"{type(order).__name__}"
            )
        for pos, tid in enumerate(order):
            if not isinstance(tid, str):
                raise ConfigError(f"draw_order[{pos}] must be a tile id (str), got {tid!r} of type {type(tid).__name__}")
        available: dict[int, int] = {}
        for t, tile in enumerate(self.rules.tiles):
            available[t] = tile.count
        for t in self._start_tiles_used:
            available[t] -= 1
        bag = []
        for pos, tid in enumerate(order):
            t = self.rules.tile_index.get(tid)
            if t is None:
                raise ConfigError(
                    f"draw_order[{pos}]: unknown tile id {tid!r} for expansions {self.config.expansions}"
                )
            available[t] -= 1
            if available[t] < 0:
                raise ConfigError(
                    f"draw_order[{pos}]: more copies of {tid} than the game has ({self.rules.tiles[t].count}"
                    " including any start tile)"
                )
            bag.append(t)
        return bag

    def place_fixed(
        self, tile_id: str, x: int, y: int, rotation: int = 0, from_bag: bool = True, announce: bool = False
    ) -> None:
        """Lay a tile during setup (start tile, start blocks).  For expansions' ``setup``.

        ``announce``: the tile is an ordinary tile laid by no player (a map's tiles from the bag on
        its start squares): the links it makes (``placement_links``) are made and the
        ``after_setup_placement`` hooks are told, so plug-ins that record placed tiles (royal
        gates, the Sagrada Familia) see it."""
        t = self.rules.tile_index[tile_id]
        if (x, y) in self.board:
            raise ConfigError(f"setup places two tiles on ({x},{y})")
        if self.layout is not None and (x, y) not in self.layout.playable:
            raise ConfigError(f"setup places {tile_id} on ({x},{y}), which is not a playable square of the board")
        if from_bag:
            self._start_tiles_used.append(t)
        links = [pair for hook in self.rules.h_placement_links for pair in hook(self, t, x, y, rotation)] if announce else []
        self._put_tile(t, x, y, rotation)
        for segment, node in links:
            self._union(self.placements[-1][4] + segment, node)
        if self.layout is not None:
            _layout.mark_closed(self)
        if announce:
            for hook in self.rules.h_after_setup_placement:
                hook(self, x, y)

    def take_from_bag(self) -> str | None:
        """Take the next tile out of the bag (for ``setup_from_bag``: a map's start squares); its id,
        or None when the bag is empty."""
        return self.rules.tiles[self._bag.pop()].id if self._bag else None

    def fitting_rotations(self, tile_id: str, x: int, y: int) -> list[int]:
        """Rotations in which ``tile_id`` fits cell (x, y) during setup: its placed neighbours and, on
        a printed board, the printed features around it (the cell need not touch the play area)."""
        return _layout.fitting_rotations(self, self.rules.tile_index[tile_id], x, y)

    # ----------------------------------------------------------------- public
    @property
    def bag_size(self) -> int:
        """Tiles left to draw (not counting the drawn tile)."""
        return len(self._bag)

    def remaining_counts(self) -> np.ndarray:
        """Tiles left to draw per tile type (int array in RuleSet.tiles order)."""
        return np.bincount(np.asarray(self._bag, dtype=np.int64), minlength=len(self.rules.tiles))

    @property
    def tile_id(self) -> str | None:
        """Id of the drawn tile, or None."""
        return self.rules.tiles[self.current_tile].id if self.current_tile >= 0 else None

    def legal_tile_placements(self) -> np.ndarray:
        """Legal placements of the drawn tile as an int array of rows (x, y, rotation)."""
        if self.phase != "tile":
            return np.zeros((0, 3), dtype=np.int32)
        nf = self._nf
        bits = (self._masks[:, None] >> _ROT4[None, :]) & 1
        ci, ri = np.nonzero(bits)
        return np.stack([self._fx[:nf][ci], self._fy[:nf][ci], ri.astype(np.int32)], axis=1)

    def frontier_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the frontier cells' x and y (in the order of the rotation masks that
        ``placement_veto`` hooks receive); valid until the next placement."""
        nf = self._nf
        xs, ys = self._fx[:nf], self._fy[:nf]
        xs.flags.writeable = False
        ys.flags.writeable = False
        return xs, ys

    def scan_placement(self, t: int, x: int, y: int, r: int) -> Scan:
        """What placing tile type ``t`` at ``(x, y)`` in rotation ``r`` would join and complete,
        without placing it (see :mod:`carc_env.core.lookahead`)."""
        return scan_placement(self, t, x, y, r)

    def closes_feature(self, t: int, x: int, y: int, r: int, node: int) -> bool:
        """Whether placing tile type ``t`` at ``(x, y)`` in rotation ``r`` would close the city or road
        of ``node`` (its open edges would reach 0; the Sagrada Familia refuses such placements)."""
        root = self.find(node)
        return any(root in j.roots and j.open_after == 0 for j in scan_placement(self, t, x, y, r).joined)

    def frontier(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Frontier cells (x, y) and, while in the tile phase, their legal-rotation bitmasks."""
        nf = self._nf
        masks = self._masks if self.phase == "tile" else np.zeros(nf, dtype=np.uint8)
        return self._fx[:nf].copy(), self._fy[:nf].copy(), masks.copy()

    def count_legal_placements(self, distinct: bool = False) -> int:
        """Number of legal placements of the drawn tile; ``distinct`` counts symmetric rotations once."""
        if self.phase != "tile":
            return 0
        m = self._masks
        if distinct:
            m = m & self.rules.tiles[self.current_tile].distinct_rotations
        return int(np.unpackbits(m[:, None], axis=1)[:, 4:].sum())

    def legal_follower_spots(self) -> list[int]:
        """Segments of the placed tile a follower may go on (Pass is always legal too)."""
        return list(self._follower_spots) if self.phase == "follower" else []

    def _stage_list(self) -> list:
        return self.rules.final_stages if self.ending else self.rules.stages

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        return self._stage_list()[self._stage_i].legal_actions(self)

    def apply(self, action: Action | str) -> list[Event]:
        """Apply the deciding player's action; return the events it caused."""
        if self.over:
            raise IllegalActionError("the game is over; no action is legal")
        action = checked_action(self.parse_action(action) if isinstance(action, str) else action)
        stage = self._stage_list()[self._stage_i]
        done = stage.apply(self, action)
        self.history.append(action)
        self._history_k.append(len(self.placements))
        if done:
            self._next_stage()
        self._run()
        ev = self.events
        self.events = []
        return ev

    def clone(self) -> Game:
        """An independent copy sharing only immutable data (see :data:`CLONE`)."""
        src = self.__dict__
        unknown = src.keys() - self.CLONE.keys()
        for name in unknown:
            value = src[name]
            if not (type(value) in _IMMUTABLE or isinstance(value, np.generic)):  # numbers, strings, None
                raise TypeError(
                    f"Game.clone does not know how to copy attribute {name!r} ({type(value).__name__}); "
                    "add it to Game.CLONE with the copy it needs (None if it is never changed)"
                )
        d = src.copy()  # shares everything; then the mutable attributes are replaced by copies
        for name, copier in self.CLONE.items():
            if copier is not None:
                d[name] = copier(d[name])
        g = Game.__new__(Game)
        g.__dict__ = d
        return g

    def redeal(self, rng: np.random.Generator) -> None:
        """Shuffle the tiles still to draw into a new random order (a determinisation for search).

        The new order is drawn uniformly from the orders a player cannot tell
        from the real one: the same remaining tiles, reordered by the
        expansions' ``order_unseen`` hooks (the river's tiles stay first).  The
        drawn tile, the board and everything else are unchanged, and
        ``draw_order`` is updated so a record of the game still replays.  Only
        for copies made with :meth:`clone`: it changes the draws to come.
        """
        order = self._bag[::-1]
        rng.shuffle(order)
        hooks = self.rules.h_order_unseen
        for hook in hooks:
            order = hook(self, order)
        if hooks and sorted(order) != sorted(self._bag):
            raise ValueError("an order_unseen hook changed which tiles are left to draw")
        drawn = len(self.draw_order) - len(self._bag)
        tiles = self.rules.tiles
        self.draw_order = self.draw_order[:drawn] + [tiles[t].id for t in order]
        self._bag = order[::-1]
        self.rng = np.random.default_rng(rng.integers(2**63))

    # ----------------------------------------------------------- text notation
    def action_text(self, action: Action, placed: int | None = None) -> str:
        """Text form of an action; follower spots use the feature names of the tile just placed.

        ``placed`` is the number of tiles on the board when the action was
        taken (default: now), to name followers of past actions.
        """
        k = len(self.placements) if placed is None else placed
        if type(action) is PlaceFollower and k:
            t = self.placements[k - 1][2]
            segs = self.rules.tiles[t].segments
            if 0 <= action.segment < len(segs):
                return f"follower {segs[action.segment].name}"
        return action.to_text()

    def history_texts(self) -> list[str]:
        """Every action applied so far, in text notation."""
        return [self.action_text(a, k) for a, k in zip(self.history, self._history_k, strict=True)]

    def parse_action(self, text: str) -> Action:
        """Parse an action's text form in the current state (see carc_env.core.actions)."""
        if not isinstance(text, str):
            raise IllegalActionError(f"an action text must be a string, got {text!r}")
        parsed = parse_basic(text, self.rules.action_parsers)
        if parsed is None:
            raise IllegalActionError(
                f"cannot parse action {text!r}; expected 'tile X,Y rR', 'follower NAME', 'pass' or an expansion action"
            )
        if isinstance(parsed, tuple):
            name = parsed[1]
            if not self.placements:
                raise IllegalActionError(f"{text!r}: no tile has been placed")
            tile = self.rules.tiles[self.placements[-1][2]]
            if name.startswith("#") and name[1:].isdigit():
                return PlaceFollower(int(name[1:]))
            try:
                return PlaceFollower(tile.segment_index(name))
            except KeyError as exc:
                raise IllegalActionError(f"{text!r}: {exc.args[0]}") from None
        return parsed

    # -------------------------------------------------------------- features
    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def root_array(self) -> np.ndarray:
        """The union-find root of every node as an int array (pointer jumping over a copy of the
        parent list, so the game is not changed; for vectorised readers such as encoders)."""
        root = np.fromiter(self.parent, dtype=np.intp, count=len(self.parent))
        while True:  # the depth halves each round
            nxt = root[root]
            if not (nxt != root).any():
                return root
            root = nxt

    def feature_nodes(self, root: int) -> list[int]:
        """All nodes of the feature with this root (linear scan; for tests and rendering)."""
        return [i for i in range(len(self.parent)) if self.find(i) == root]

    def feature_tiles(self, root: int) -> list[tuple[int, int]]:
        ks = self.tiles.get(root)
        if ks is None:
            ks = {self.node_tile[i] for i in self.feature_nodes(root)}
        return sorted((self.placements[k][0], self.placements[k][1]) for k in ks)

    def node_of(self, x: int, y: int, segment: int | str) -> int:
        """Union-find node of a segment (index or name) of the tile at (x, y)."""
        k = self.board[(x, y)]
        _, _, t, _, base = self.placements[k]
        if isinstance(segment, str):
            segment = self.rules.tiles[t].segment_index(segment)
        return base + segment

    def is_completed(self, root: int) -> bool:
        return root in self.completed

    def counts_as_completed(self, root: int) -> bool:
        """Whether rules that count or compare completed features (the King) count feature ``root``;
        False for one an expansion leaves out (``uncounted_completion``)."""
        return not any(hook(self, root) for hook in self.rules.h_uncounted)

    def count_completed(self, kind: int) -> int:
        """Completed features of ``kind`` (``CITY``, ``ROAD``) on the board, each counted once,
        plus those expansions add through the ``extra_completed`` hook."""
        find, kinds = self.find, self.kind
        n = len({find(r) for r in self.completed if kinds[r] == kind and self.counts_as_completed(find(r))})
        for hook in self.rules.h_extra_completed:
            n += hook(self, kind)
        return n

    def follower_positions(self) -> list[tuple[int, int, int, int]]:
        """Followers on the board as (player, x, y, segment index)."""
        out = []
        for node, p in self.followers.items():
            k = self.node_tile[node]
            x, y, _, _, base = self.placements[k]
            out.append((p, x, y, node - base))
        return sorted(out)

    # ------------------------------------------------------------ the turn
    def _next_stage(self) -> None:
        self._stage_i += 1
        if self._stage_i == len(self.rules.stages) and not self.ending:
            self._stage_i = 0

    def _run(self) -> None:
        while not self.over:
            stage = self._stage_list()[self._stage_i]
            if stage.enter(self):
                if not self.over:
                    self.phase = stage.name
                return
            self._next_stage()

    def _draw(self) -> None:
        rules = self.rules
        compat = rules.compat
        while True:
            if not self._bag:
                self._begin_ending()
                return
            t = self._bag.pop()
            self.events.append(TileDrawn(self.turn_player, rules.tiles[t].id))
            for hook in rules.h_after_draw:
                hook(self, t)
            masks = compat[t][self._fpat[: self._nf]]
            reason = "no legal placement"
            for veto in rules.h_veto:
                had = masks.any()
                why = veto(self, t, masks)
                if why and had and not masks.any():
                    reason = why
            if masks.any():
                self.current_tile = t
                self._masks = masks
                self.player = self.turn_player
                return
            self.events.append(TileDiscarded(self.turn_player, rules.tiles[t].id, reason))

    def _place_tile(self, x: int, y: int, r: int) -> None:
        t = self.current_tile
        slot = self._fslot.get((x, y))
        tile = self.rules.tiles[t]
        if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 0 <= r <= 3:
            raise IllegalActionError(f"rotation must be 0..3, got {r!r}")
        if slot is None:
            where = "is already taken" if (x, y) in self.board else "touches no placed tile"
            raise IllegalActionError(f"cannot place {tile.id} at ({x},{y}): the cell {where}")
        if not (int(self._masks[slot]) >> r) & 1:
            fits = [q for q in range(4) if (int(self._masks[slot]) >> q) & 1]
            edges = "".join(tile.edges[(s - r) % 4] for s in range(4))
            if (int(self.rules.compat[t][self._fpat[slot]]) >> r) & 1:
                why = f"its edges {edges} (N E S W) fit, but {self._vetoed_by(t, slot, r)}"
                rest = f"; rotations allowed here: {fits}" if fits else "; no rotation is allowed in this cell"
            else:
                why = f"its edges {edges} (N E S W) do not fit there"
                rest = f"; rotations that fit: {fits}" if fits else "; no rotation fits this cell"
            raise IllegalActionError(f"cannot place {tile.id} at ({x},{y}) in rotation {r}: {why}{rest} (see legal_actions())")
        x, y, r = int(x), int(y), int(r)
        links = [pair for hook in self.rules.h_placement_links for pair in hook(self, t, x, y, r)]
        self._put_tile(t, x, y, r)
        if links:
            base = self.placements[-1][4]
            for segment, node in links:
                self._union(base + segment, node)
        self.current_tile = -1
        self.events.append(TilePlaced(self.player, tile.id, x, y, r))
        for hook in self.rules.h_after_placement:
            hook(self, x, y)

    def _vetoed_by(self, t: int, slot: int, r: int) -> str:
        """Which expansion's ``placement_veto`` refuses rotation ``r`` of tile type ``t`` at frontier ``slot``, in words."""
        for veto in self.rules.h_veto:
            masks = self.rules.compat[t][self._fpat[: self._nf]]  # a fresh copy (fancy indexing)
            why = veto(self, t, masks)
            if not (int(masks[slot]) >> r) & 1:
                exp = veto.__self__
                return f"expansion {exp.KEY!r} forbids it: {exp.veto_reason or why or 'its placement rule'}"
        return "an expansion's placement rule forbids it"  # pragma: no cover - only vetoes clear fitting bits

    def _put_tile(self, t: int, x: int, y: int, r: int) -> None:
        if self.layout is not None:
            _layout.put_tile(self, t, x, y, r)
            return
        tile = self.rules.tiles[t]
        info = self._infos[t]
        k = len(self.placements)
        base = len(self.parent)
        n = info.n
        self.parent.extend(range(base, base + n))
        self.kind.extend(info.kinds)
        self.node_tile.extend([k] * n)
        self.open.extend(info.open0)
        self.pennants.extend(info.pen0)
        tiles = self.tiles
        for i in info.scorable:
            tiles[base + i] = {k}
        for i, cities in info.fields:
            self.adjacent_cities[base + i] = {base + c for c in cities}
        self.placements.append((x, y, t, r, base))
        board = self.board
        board[(x, y)] = k
        b = self.bounds
        if x < b[0]:
            b[0] = x
        elif x > b[1]:
            b[1] = x
        if y < b[2]:
            b[2] = y
        elif y > b[3]:
            b[3] = y

        center = tile.center[r]
        half = tile.half[r]
        codes = tile.edge_codes[r]
        placements = self.placements
        rtiles = self.rules.tiles
        for s in range(4):
            nx, ny = x + DX[s], y + DY[s]
            nk = board.get((nx, ny))
            o = (s + 2) & 3
            if nk is None:
                self._frontier_require(nx, ny, o, codes[s])
                continue
            _, _, nt, nr, nbase = placements[nk]
            ntile = rtiles[nt]
            c = center[s]
            if c >= 0 and info.kinds[c] != RIVER:
                nc = ntile.center[nr][o]
                root = self._union(base + c, nbase + nc)
                self.open[root] -= 2
            hl = half[2 * s]
            if hl >= 0:
                nh = ntile.half[nr][2 * o + 1]
                if nh >= 0:
                    self._union(base + hl, nbase + nh)
            hr = half[2 * s + 1]
            if hr >= 0:
                nh = ntile.half[nr][2 * o]
                if nh >= 0:
                    self._union(base + hr, nbase + nh)
        self._frontier_remove(x, y)
        self._count_building_neighbours(x, y, base, info)

    def _count_building_neighbours(self, x: int, y: int, base: int, info: TileInfo) -> None:
        board = self.board
        buildings = self.buildings
        bn = self.building_neighbours
        pending = self._pending_buildings
        if buildings:
            for dx, dy in NEIGHBOURS8:
                nodes = buildings.get((x + dx, y + dy))
                if nodes:
                    for node in nodes:
                        bn[node] += 1
                        if bn[node] == self.building_target(x + dx, y + dy):
                            pending.append(node)
        if info.buildings:
            cnt = sum(1 for dx, dy in NEIGHBOURS8 if (x + dx, y + dy) in board)
            nodes = [base + i for i in info.buildings]
            buildings[(x, y)] = nodes
            for node in nodes:
                bn[node] = cnt
                if cnt >= self.building_target(x, y):
                    pending.append(node)

    def building_target(self, x: int, y: int) -> int:
        """Tiles around the building at ``(x, y)`` that complete it (8 unless an expansion says otherwise)."""
        for hook in self.rules.h_building_target:
            v = hook(self, x, y)
            if v is not None:
                return v
        if self.layout is not None:  # the squares around it that exist on the board
            return self.layout.building_target.get((x, y), 8)
        return 8

    def building_complete(self, node: int) -> bool:
        """Whether the building with segment ``node`` has every neighbour it needs (completed, or
        completed by the tile just placed and about to be scored)."""
        x, y = self.placements[self.node_tile[node]][:2]
        return self.building_neighbours.get(node, 0) >= self.building_target(x, y)

    def _frontier_require(self, x: int, y: int, side: int, code: int) -> None:
        slot = self._fslot.get((x, y))
        if slot is None:
            slot = self._nf
            if slot == len(self._fx):
                cap = 2 * slot
                self._fx = np.resize(self._fx, cap)
                self._fy = np.resize(self._fy, cap)
                self._fpat = np.resize(self._fpat, cap)
            self._fx[slot] = x
            self._fy[slot] = y
            self._fpat[slot] = code << _SHIFT[side]
            self._fslot[(x, y)] = slot
            self._nf = slot + 1
        else:
            self._fpat[slot] |= code << _SHIFT[side]

    def _frontier_remove(self, x: int, y: int) -> None:
        slot = self._fslot.pop((x, y), None)
        if slot is None:
            return
        last = self._nf - 1
        if slot != last:
            lx, ly = int(self._fx[last]), int(self._fy[last])
            self._fx[slot] = lx
            self._fy[slot] = ly
            self._fpat[slot] = self._fpat[last]
            self._fslot[(lx, ly)] = slot
        self._nf = last

    def _union(self, a: int, b: int) -> int:
        p = self.parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        while p[b] != b:
            p[b] = p[p[b]]
            b = p[b]
        if a == b:
            return a
        tiles = self.tiles
        ta = tiles.get(a)
        if ta is not None:
            tb = tiles[b]
            if len(ta) < len(tb):
                a, b, ta, tb = b, a, tb, ta
            ta |= tb
            del tiles[b]
            self.open[a] += self.open[b]
            self.pennants[a] += self.pennants[b]
        p[b] = a
        occ = self.occupants
        ob = occ.pop(b, None)
        if ob is not None:
            oa = occ.get(a)
            if oa is None:
                occ[a] = ob
            else:
                oa.extend(ob)
        adj = self.adjacent_cities
        cb = adj.pop(b, None)
        if cb is not None:
            ca = adj.get(a)
            if ca is None:
                adj[a] = cb
            else:
                ca |= cb
        if self.guests:
            gb = self.guests.pop(b, None)
            if gb is not None:
                self.guests.setdefault(a, []).extend(gb)
        return a

    # -------------------------------------------------------------- followers
    def take_follower(self, player: int) -> None:
        """Take one follower from ``player``'s supply (for an expansion holding it somewhere else)."""
        if self.supply[player] <= 0:
            raise IllegalActionError(f"player {player} has no follower in supply")
        self.supply[player] -= 1

    def return_follower(self, player: int) -> None:
        """Give one follower held by an expansion back to ``player``'s supply."""
        if self.supply[player] >= self.rules.followers:
            raise ValueError(f"player {player} already has all {self.rules.followers} followers in supply")
        self.supply[player] += 1

    def _compute_follower_spots(self) -> list[int]:
        p = self.player
        if self.supply[p] <= 0 or not self.placements:
            return []
        _, _, t, _, base = self.placements[-1]
        occ = self.occupants
        spots = [i for i in self._infos[t].spots if self.find(base + i) not in occ]
        for hook in self.rules.h_follower_spots:
            spots = hook(self, spots)
        return spots

    def _place_follower(self, segment: int) -> None:
        if segment not in self._follower_spots:
            tile = self.rules.tiles[self.placements[-1][2]]
            names = [tile.segments[i].name for i in self._follower_spots]
            what = tile.segments[segment].name if 0 <= segment < len(tile.segments) else f"#{segment}"
            raise IllegalActionError(
                f"cannot put a follower on {what} of {tile.id}: free features are {names} (or pass)"
            )
        x, y, t, _, base = self.placements[-1]
        node = base + segment
        p = self.player
        self.followers[node] = p
        root = self.find(node)
        occ = self.occupants.get(root)
        if occ is None:
            self.occupants[root] = [node]
        else:  # pragma: no cover - spots exclude occupied features
            occ.append(node)
        self.supply[p] -= 1
        seg = self.rules.tiles[t].segments[segment]
        self.events.append(FollowerPlaced(p, x, y, seg.name, seg.kind_name))

    def add_follower(self, node: int, player: int) -> None:
        """Put a follower of ``player`` on segment ``node`` (for expansions moving followers onto
        features; the caller takes it from where it was, e.g. :meth:`take_follower`)."""
        if node in self.followers:
            raise ValueError(f"node {node} already holds a follower of player {self.followers[node]}")
        self.followers[node] = player
        self.occupants.setdefault(self.find(node), []).append(node)

    def add_guest(self, root: int, player: int) -> None:
        """Put a follower of ``player`` on feature ``root`` without a segment under it (a follower
        sent from off the board, e.g. from a quarter of the City of Carcassonne; the caller takes
        it from where it was).  It occupies the feature and counts for its majority like any
        follower, and goes back to its owner's supply when the feature's followers are removed."""
        self.guests.setdefault(self.find(root), []).append(player)

    def remove_followers(self, root: int) -> list[int]:
        """Return every follower on a feature to its owner; returns the count per player."""
        back = [0] * self.num_players
        nodes = self.occupants.pop(root, None)
        if nodes:
            for node in nodes:
                p = self.followers.pop(node)
                self.supply[p] += 1
                back[p] += 1
        if self.guests:
            for p in self.guests.pop(root, ()):
                self.supply[p] += 1
                back[p] += 1
        return back

    # ---------------------------------------------------------------- scoring
    def _detect_completions(self) -> None:
        """Collect the features the placed tile completed into ``self.completing``."""
        self.completing = []
        if not self.placements:
            return
        _, _, t, _, base = self.placements[-1]
        candidates = self.completing
        open_ = self.open
        for i in self._infos[t].scorable:
            root = self.find(base + i)
            if open_[root] == 0 and root not in self.completed and root not in candidates:
                candidates.append(root)
        candidates.extend(self._pending_buildings)
        self._pending_buildings = []
        for hook in self.rules.h_extra_completions:
            for root in hook(self):
                if root not in candidates and root not in self.completed:
                    candidates.append(root)
        if self.rules.h_blocks:
            self.completing = [r for r in candidates if not any(block(self, r) for block in self.rules.h_blocks)]

    def _score_completions(self) -> None:
        for root in self.completing:
            self.complete_feature(self.find(root))
        self.completing = []

    def complete_feature(self, root: int) -> None:
        """Mark a feature completed, tell the expansions, and score it if occupied."""
        self.completed.add(root)
        kind = self.kind[root]
        size = len(self.tiles[root]) if kind != BUILDING else 1 + self.building_neighbours[root]
        occupied = root in self.occupants or root in self.guests
        self.events.append(FeatureCompleted(self._kind_name(root), size, root, occupied))
        for hook in self.rules.h_on_completed:
            hook(self, root, kind, size)
        if root in self.occupants or root in self.guests:
            if any(defer(self, root) for defer in self.rules.h_defers_scoring):
                return  # scored at the end of the game, its followers stay until then
            self.score_feature(root, final=False)

    def _kind_name(self, root: int) -> str:
        kind = self.kind[root]
        if kind == BUILDING:
            k = self.node_tile[root]
            t = self.placements[k][2]
            return self.rules.tiles[t].segments[root - self.placements[k][4]].building
        return KIND_NAMES[kind]

    def feature_size(self, root: int) -> int:
        """Tiles a city or road counts for scoring: distinct tiles unless an expansion's
        ``feature_size`` hook says otherwise."""
        for hook in self.rules.h_feature_size:
            v = hook(self, root)
            if v is not None:
                return v
        return len(self.tiles[root])

    def feature_value(self, root: int, final: bool) -> list[ScoreItem]:
        """The itemised value of a feature scored now (completed or at game end)."""
        kind = self.kind[root]
        if kind == CITY:
            n = self.feature_size(root)
            pen = self.pennants[root]
            per = 1 if final else 2
            items = [ScoreItem("tiles", f"{n} city tile{'s' * (n != 1)} x {per}", n * per)]
            if pen:
                items.append(ScoreItem("pennants", f"{pen} pennant{'s' * (pen != 1)} x {per}", pen * per))
            return items
        if kind == ROAD:
            n = self.feature_size(root)
            return [ScoreItem("tiles", f"{n} road tile{'s' * (n != 1)} x 1", n)]
        if kind == BUILDING:
            nb = self.building_neighbours[root]
            name = self._kind_name(root)
            return [ScoreItem(name, f"{name} 1 + {nb} neighbour{'s' * (nb != 1)}", 1 + nb)]
        if kind == FIELD:
            find = self.find
            cities = {find(c) for c in self.adjacent_cities.get(root, ())}
            n = sum(1 for c in cities if c in self.completed)
            for hook in self.rules.h_field_cities:
                n += hook(self, root)
            return [ScoreItem("cities", f"{n} completed cit{'ies' if n != 1 else 'y'} x 3", 3 * n)]
        raise ValueError(f"node {root} ({KIND_NAMES.get(kind)}) is not scorable")

    def score_feature(self, root: int, final: bool) -> FeatureScored:
        """Score an occupied feature for its majority and return its followers."""
        n = self.num_players
        counts = [0] * n
        for node in self.occupants.get(root, ()):
            counts[self.followers[node]] += 1
        for p in self.guests.get(root, ()):
            counts[p] += 1
        items = None
        for override in self.rules.h_score_override:
            items = override(self, root, final)
            if items is not None:
                items = list(items)
                break
        if items is None:
            items = self.feature_value(root, final)
            for hook in self.rules.h_score_items:
                hook(self, root, final, items, counts)
        value = sum(i.points for i in items)
        best = max(counts)
        winners = tuple(p for p in range(n) if best > 0 and counts[p] == best)
        points = [0] * n
        for p in winners:
            points[p] = value
            self.scores[p] += value
        returned = self.remove_followers(root)
        ev = FeatureScored(
            self._kind_name(root),
            final,
            value,
            tuple(items),
            tuple(points),
            winners,
            tuple(returned),
            tuple(self.feature_tiles(root)) if self.kind[root] != FIELD else (),
            root,
        )
        self.events.append(ev)
        kind = self.kind[root]
        for hook in self.rules.h_on_scored:
            hook(self, root, kind, final)
        return ev

    def _end_turn(self) -> None:
        nxt = (self.turn_player + 1) % self.num_players
        for hook in self.rules.h_next_player:
            v = hook(self, nxt)
            if v is not None:
                nxt = v
        self.turn_player = nxt
        self.player = nxt
        self.turn += 1

    def _begin_ending(self) -> None:
        """The last tile has been played: switch to the final stages (before_final, then scoring)."""
        self.current_tile = -1
        self.ending = True
        self._stage_i = -1  # _run's _next_stage moves to the first final stage
        self._masks = np.zeros(0, dtype=np.uint8)

    def award(self, player: int, points: int, items: Sequence[ScoreItem], final: bool = False) -> None:
        """Give points outside a feature's majority (expansion bonuses), with an event."""
        self.scores[player] += points
        self.events.append(PointsAwarded(player, points, tuple(items), final))

    def emit(self, event: Event) -> None:
        """Add an event to those the current action returns (an expansion's events)."""
        self.events.append(event)

    def link_features(self, a: int, b: int) -> int:
        """Make the features of nodes ``a`` and ``b`` one (royal gates link cities); returns the new root.

        Their aggregates add up: tiles (a tile in both counts once), open edges, pennants, followers
        and guests, bordering cities; the linked feature completes when its open edges reach 0.
        """
        return self._union(a, b)

    def _finish(self) -> None:
        """End-of-game scoring: roads, cities, buildings, then fields, then expansions.

        Every feature still holding followers is scored: the incomplete ones, and completed ones
        whose scoring an expansion deferred to the end (``defers_scoring``)."""
        self.current_tile = -1
        occ = self.occupants.keys() | self.guests.keys()
        roots = [i for i, p in enumerate(self.parent) if p == i and i in occ]
        for kind in (ROAD, CITY, BUILDING, FIELD):
            for root in roots:
                if self.kind[root] != kind:
                    continue
                if root in self.occupants or root in self.guests:
                    self.score_feature(root, final=True)
        for hook in self.rules.h_final_scoring:
            hook(self)
        best = max(self.scores)
        winners = tuple(p for p, s in enumerate(self.scores) if s == best)
        self.events.append(GameOver(tuple(self.scores), winners))
        self.over = True
        self.phase = GAME_OVER

    # ------------------------------------------------------------ inspection
    def describe_cell(self, x: int, y: int) -> str:
        k = self.board.get((x, y))
        if k is None:
            return f"({x},{y}) empty"
        _, _, t, r, _ = self.placements[k]
        return f"({x},{y}) {self.rules.tiles[t].id} r{r}"

    def followers_conserved(self) -> bool:
        per = [0] * self.num_players
        for p in self.followers.values():
            per[p] += 1
        for owners in self.guests.values():
            for p in owners:
                per[p] += 1
        extra = [0] * self.num_players
        for held in self.rules.h_followers_held:
            for p, c in enumerate(held(self)):
                extra[p] += c
        return all(
            self.supply[p] + per[p] + extra[p] == self.rules.followers for p in range(self.num_players)
        )


def _checked_seed(seed: Any) -> int | None:
    """A game seed: None or a non-negative integer, as a Python int (JSON-serialisable)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ConfigError(f"seed must be None or a non-negative integer, got {seed!r} of type {type(seed).__name__}")
    if seed < 0:
        raise ConfigError(f"seed must be None or a non-negative integer, got {seed!r}")
    return int(seed)


def new_game(
    num_players: int = 2,
    expansions: Iterable[str] = DEFAULT_EXPANSIONS,
    seed: int | None = None,
    draw_order: Sequence[str] | None = None,
    **options: Any,
) -> Game:
    """Shortcut: ``new_game(2, seed=1)``."""
    return Game(GameConfig(num_players, tuple(expansions), options), seed=seed, draw_order=draw_order)


__all__ = ["Game", "GameConfig", "GAME_OVER", "new_game", "SIDES", "Pass", "PlaceFollower", "PlaceTile"]
