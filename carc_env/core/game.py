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

The game's shape
----------------
A game is the state record :data:`carc_env.core.state.STATE` (every field,
its owner, how ``clone`` copies it) and the methods of four concerns, one
module each, that :class:`Game` composes:

* :mod:`carc_env.core.turn`: the bag and the draw, the decision stages, who
  decides, ``apply``;
* :mod:`carc_env.core.board`: placed tiles, the frontier and legal placement,
  the one placement procedure (``put_tile``, plain and printed boards alike);
* :mod:`carc_env.core.features`: the union-find over tile segments and the
  followers on features;
* :mod:`carc_env.core.scoring`: completions, feature values, majorities, final
  scoring.

This module is setup (configuration, seed, the bag's shuffle, the start
layout), ``clone`` and the text notation of actions.  Cells are ``(x, y)``
with the start tile at ``(0, 0)``, x east, y south.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .actions import Action, Pass, PlaceFollower, PlaceTile, parse_action
from .board import Board
from .config import DEFAULT_EXPANSIONS, GameConfig, ruleset
from .events import Event
from .expansion import ConfigError
from .features import Features
from .lookahead import Scan, scan_placement
from .scoring import GAME_OVER, Scoring
from .state import BOARD_SETUP, CLONE
from .tiles import SIDES
from .turn import TurnFlow

_IMMUTABLE = (int, float, str, bool, type(None))


class Game(TurnFlow, Scoring, Features, Board):
    """One game of Carcassonne.  See the module docstring for the contract."""

    CLONE = CLONE
    """How :meth:`clone` copies each attribute (:data:`carc_env.core.state.CLONE`, from the state
    record): ``None`` shares it, a function copies it.  An attribute missing here is shared if it
    holds a number, string or None, and makes :meth:`clone` raise otherwise; add it to
    :data:`carc_env.core.state.STATE` with the copy it needs."""

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
        self.tile_infos = rules.tile_infos
        self.reset_features(rules.followers)
        self.reset_scoring()
        self.reset_turn()
        self.events: list[Event] = []
        self.ext: dict[str, Any] = {e.KEY: e.new_state() for e in rules.expansions}
        self.reset_board()
        self._start_tiles_used: list[int] = []
        # a printed board (Carcassonne Maps), see core.layout: its printed pieces are laid first
        self.layout = rules.layout
        if self.layout is not None:
            self.lay_printed(CLONE, BOARD_SETUP)
        for exp in rules.expansions:
            exp.setup(self)
        self.deal(self._shuffled_bag(draw_order))
        for hook in rules.h_setup_from_bag:
            hook(self)
        self.start()

    # ------------------------------------------------------------------ setup
    def _shuffled_bag(self, draw_order: Sequence[str] | None) -> list[int]:
        """The tiles to draw, first drawn first.  The shuffled bag is built even when a draw order
        is forced, so that the generator is in the same state after setup either way: a record
        (which forces the recorded draw order) then replays every later random draw of the game too."""
        rules = self.rules
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
        return bag

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
                raise ConfigError(
                    f"draw_order[{pos}] must be a tile id (str), got {tid!r} of type {type(tid).__name__}"
                )
        available: dict[int, int] = {}
        for t, tile in enumerate(self.rules.tiles):
            available[t] = tile.count
        for t in self._start_tiles_used:
            available[t] -= 1
        bag: list[int] = []
        for pos, tid in enumerate(order):
            ti = self.rules.tile_index.get(tid)
            if ti is None:
                raise ConfigError(f"draw_order[{pos}]: unknown tile id {tid!r} for expansions {self.config.expansions}")
            available[ti] -= 1
            if available[ti] < 0:
                raise ConfigError(
                    f"draw_order[{pos}]: more copies of {tid} than the game has ({self.rules.tiles[ti].count}"
                    " including any start tile)"
                )
            bag.append(ti)
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
        links = (
            [pair for hook in self.rules.h_placement_links for pair in hook(self, t, x, y, rotation)]
            if announce
            else []
        )
        base = self.put_tile(t, x, y, rotation)
        for segment, node in links:
            self.union(base + segment, node)
        if self.layout is not None:
            self.mark_closed(len(self.placements) - 1)
        if announce:
            for hook in self.rules.h_after_setup_placement:
                hook(self, x, y)

    # ------------------------------------------------------------------ copies
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

    # ------------------------------------------------------------------ for expansions
    def scan_placement(self, t: int, x: int, y: int, r: int) -> Scan:
        """What placing tile type ``t`` at ``(x, y)`` in rotation ``r`` would join and complete,
        without placing it (see :mod:`carc_env.core.lookahead`)."""
        return scan_placement(self, t, x, y, r)

    def closes_feature(self, t: int, x: int, y: int, r: int, node: int) -> bool:
        """Whether placing tile type ``t`` at ``(x, y)`` in rotation ``r`` would close the city or road
        of ``node`` (its open edges would reach 0; the Sagrada Familia refuses such placements)."""
        root = self.find(node)
        return any(root in j.roots and j.open_after == 0 for j in scan_placement(self, t, x, y, r).joined)

    def emit(self, event: Event) -> None:
        """Add an event to those the current action returns (an expansion's events)."""
        self.events.append(event)

    # ------------------------------------------------------------------ text notation
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

    def parse_action(self, text: str) -> Action:
        """Parse an action's text form in the current state (see carc_env.core.actions)."""
        last = self.rules.tiles[self.placements[-1][2]] if self.placements else None
        return parse_action(text, last, self.rules.action_parsers)


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
