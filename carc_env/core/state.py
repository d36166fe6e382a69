"""What a game *is*: every field of a :class:`~carc_env.core.Game`, its owner, and how it is copied.

A game is the state below and nothing else.  :data:`STATE` lists every
attribute a :class:`~carc_env.core.Game` holds, field by field: the module
that owns it (keeps its invariants; a private ``_name`` is read and written
there only, ``tests/core/test_core_shape.py`` checks it), how :meth:`Game.clone`
copies it, and what it means.
``Game.clone`` copies exactly these fields (an attribute missing here makes it
raise), the printed board's cached setup copies the :data:`BOARD_SETUP`
fields with the same copiers, and a game record
(:mod:`carc_env.core.record`) keeps the :data:`RECORD` fields, from which
every other field is rebuilt by replaying (``replay(to_record(g))`` is ``g``:
``tests/core/test_clone.py``, ``scripts/soak.py``).  The compiled engine's
conversion of a game (:mod:`carc_env.fast.playout`) takes the same record
fields (seed, draw order, actions).

Owners, one module per concern:

``game``      setup, the record's identity (configuration, seed, generator), expansions' state
``turn``      the bag and the draw, the decision stages, who decides, the action history
``board``     placed tiles, the frontier (empty cells next to the board and what they require),
              buildings' neighbour counts, a printed board's connected groups
``features``  the union-find over tile segments, the aggregates of each feature, followers on them
              and in the supply
``scoring``   features being completed this turn, the scores

Conventions: cells are ``(x, y)`` with the start tile at ``(0, 0)``, x east,
y south; a *node* is one segment of one placed tile (``base + segment``,
``base`` from the tile's placement); a *root* is the node that represents its
feature in the union-find (aggregates are kept on roots only).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def _list_of_lists(d: dict) -> dict:
    return {k: v[:] for k, v in d.items()}


def _dict_of_sets(d: dict) -> dict:
    return {k: set(v) for k, v in d.items()}


def copy_rng(rng: np.random.Generator) -> np.random.Generator:
    """A generator in the same state (three times faster than ``copy.deepcopy``)."""
    bits = rng.bit_generator
    twin = type(bits)(0)
    twin.state = bits.state
    return np.random.Generator(twin)


def _no_events(_events: list) -> list:
    return []  # a clone starts with no pending events


@dataclass(frozen=True)
class Field:
    """One field of the game state: owning module, copy for ``clone`` (None: shared), meaning."""

    owner: str
    copy: Callable[[Any], Any] | None
    doc: str


SHARE = None
_F = Field
STATE: dict[str, Field] = {
    # -- game: setup and identity ------------------------------------------------------------
    "rules": _F("game", SHARE, "the RuleSet: tiles, tables, enabled expansions and their hooks (immutable)"),
    "config": _F("game", SHARE, "the GameConfig the game was made from (immutable)"),
    "tile_infos": _F("game", SHARE, "rules.tile_infos: per tile type, its segments' kinds, open edges, spots"),
    "num_players": _F("game", SHARE, "players, 2 to 5"),
    "seed": _F("game", SHARE, "the game's seed (an int, drawn when none was given, so records name one)"),
    "rng": _F("game", copy_rng, "the game's one random generator (setup's shuffle, plug-ins' draws)"),
    "ext": _F("game", copy.deepcopy, "expansion key -> that plug-in's own state (its new_state())"),
    "layout": _F("game", SHARE, "the printed board (a BoardLayout) or None for the unbounded table"),
    "events": _F("game", _no_events, "events of the action being applied (handed out by apply)"),
    "_start_tiles_used": _F("game", list.copy, "tile types setup laid from the bag (start tile, river spring)"),
    # -- turn: the bag, the stages, the deciding player ----------------------------------------
    "draw_order": _F("turn", SHARE, "every tile id in draw order (replaced whole, never changed in place)"),
    "_bag": _F("turn", list.copy, "tile types still to draw, the next one last"),
    "current_tile": _F("turn", SHARE, "the drawn tile type waiting to be placed, -1 if none"),
    "_masks": _F("turn", np.ndarray.copy, "per frontier slot, the drawn tile's legal rotations (bit r)"),
    "_follower_spots": _F("turn", list.copy, "segments of the placed tile a follower may go on now"),
    "phase": _F("turn", SHARE, "the decision phase ('tile', 'follower', a plug-in's, 'game_over')"),
    "player": _F("turn", SHARE, "the seat deciding now (not always the turn's player)"),
    "turn_player": _F("turn", SHARE, "the seat whose turn it is"),
    "turn": _F("turn", SHARE, "turns completed"),
    "ending": _F("turn", SHARE, "True once the last tile is played: the final stages run"),
    "over": _F("turn", SHARE, "True when the game has ended"),
    "_stages": _F("turn", SHARE, "the stages running: rules.stages, or rules.final_stages once ending"),
    "_stage_i": _F("turn", SHARE, "index of the current stage in _stages"),
    "history": _F("turn", list.copy, "every action applied, in order"),
    "_history_k": _F("turn", list.copy, "tiles on the board when each action was applied (names follower spots)"),
    # -- board: placed tiles and the frontier --------------------------------------------------
    "board": _F("board", dict.copy, "(x, y) -> index into placements"),
    "placements": _F("board", list.copy, "(x, y, tile type, rotation, node base) per placed tile (tuples)"),
    "bounds": _F("board", list.copy, "[min x, max x, min y, max y] of the placed tiles"),
    "_fx": _F("board", np.ndarray.copy, "frontier slot -> x (the first _nf entries are live)"),
    "_fy": _F("board", np.ndarray.copy, "frontier slot -> y"),
    "_fpat": _F("board", np.ndarray.copy, "frontier slot -> required edge codes, PATTERN_BITS per side"),
    "_nf": _F("board", SHARE, "live frontier slots"),
    "_fslot": _F("board", dict.copy, "(x, y) -> frontier slot"),
    "buildings": _F("board", _list_of_lists, "(x, y) -> building nodes of the tile there (cloisters and kin)"),
    "building_neighbours": _F("board", dict.copy, "building node -> filled neighbouring squares"),
    "_pending_buildings": _F("board", list.copy, "building nodes that reached their target this placement"),
    "connected_groups": _F("board", set.copy, "printed groups (large cities) joined to the play area"),
    # -- features: union-find over segments, followers -----------------------------------------
    "parent": _F("features", list.copy, "node -> parent node (a root is its own parent)"),
    "kind": _F("features", list.copy, "node -> segment kind (CITY, ROAD, FIELD, BUILDING, RIVER)"),
    "node_tile": _F("features", list.copy, "node -> index into placements"),
    "open": _F("features", list.copy, "root -> open edges of a city or road (complete at 0)"),
    "pennants": _F("features", list.copy, "root -> pennants of a city"),
    "tiles": _F("features", _dict_of_sets, "root of a city or road -> its placement indices"),
    "adjacent_cities": _F("features", _dict_of_sets, "root of a field -> city nodes it borders"),
    "completed": _F("features", set.copy, "roots of completed features (stale roots resolve with find)"),
    "occupants": _F("features", _list_of_lists, "root -> nodes holding a follower in that feature"),
    "followers": _F("features", dict.copy, "node -> owner of the follower on it"),
    "guests": _F("features", _list_of_lists, "root -> owners of followers on no segment (add_guest)"),
    "supply": _F("features", list.copy, "player -> followers in hand"),
    # -- scoring -------------------------------------------------------------------------------
    "completing": _F("scoring", list.copy, "roots this turn's placement completes, until scored"),
    "scores": _F("scoring", list.copy, "player -> points"),
}
"""Every field of a game (see the module docstring)."""

RECORD = ("config", "seed", "draw_order", "history", "scores", "over")
"""The fields a game record keeps; replaying ``history`` from ``(config, seed, draw_order)`` rebuilds the rest."""

BOARD_SETUP = (
    "parent", "kind", "node_tile", "open", "pennants", "completed", "tiles", "adjacent_cities", "placements",
    "board", "bounds", "buildings", "building_neighbours",
)  # fmt: skip
"""The fields laying a printed board's pieces changes (cached once per rule set, copied into each game)."""

CLONE: dict[str, Callable[[Any], Any] | None] = {name: f.copy for name, f in STATE.items()}
"""Field -> copier for :meth:`Game.clone` (None: shared).  ``Game.CLONE`` is this dict."""

__all__ = ["BOARD_SETUP", "CLONE", "Field", "RECORD", "STATE", "copy_rng"]
