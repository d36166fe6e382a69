"""A full, comparable snapshot of a game's (or an env's) state, for "nothing changed" assertions.

``freeze(obj)`` turns any state into nested tuples of plain values: numpy arrays by dtype,
shape and bytes, generators by their bit-generator state, dataclasses and objects by their
fields, sets sorted.  Two snapshots are equal exactly when the states are, so a test comparing
the snapshot before and after a rejected action fails on any change, however deep.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

# Shared, immutable parts of a game (the rule set and the per-tile tables derived from it).
_SHARED = {"rules", "config", "tile_infos"}


def freeze(obj: Any, _seen: set[int] | None = None) -> Any:
    seen = _seen if _seen is not None else set()
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.generic):
        return ("np", obj.dtype.str, obj.item())
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes(), bool(obj.flags.writeable))
    if isinstance(obj, np.random.Generator):
        return ("rng", freeze(obj.bit_generator.state, seen))
    if isinstance(obj, dict):
        return ("dict", tuple((freeze(k, seen), freeze(v, seen)) for k, v in obj.items()))
    if isinstance(obj, (set, frozenset)):
        return ("set", tuple(sorted((freeze(v, seen) for v in obj), key=repr)))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(freeze(v, seen) for v in obj))
    if id(obj) in seen:  # a cycle: identity is enough
        return ("seen", type(obj).__name__)
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj):
        return (
            type(obj).__name__,
            tuple((f.name, freeze(getattr(obj, f.name), seen)) for f in dataclasses.fields(obj)),
        )
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, tuple((k, freeze(v, seen)) for k, v in vars(obj).items() if k not in _SHARED))
    if hasattr(obj, "__slots__"):
        return (type(obj).__name__, tuple((k, freeze(getattr(obj, k, None), seen)) for k in obj.__slots__))
    return ("repr", repr(obj))


def game_state(game: Any) -> Any:
    """Everything that makes up a game (not the shared rule set).  The union-find's parent links are
    taken as each node's root: ``find`` compresses paths when it reads, which changes the links but
    never the features, so it is not a change of state."""
    state = {k: v for k, v in vars(game).items() if k not in _SHARED}
    state["parent"] = [game.find(i) for i in range(len(game.parent))]
    return freeze(state)


ENGINES = ("python", "numba")
"""The env engines the reliability tests run on (option ``engine``): every contract holds on both."""


def seed_stream(match: Any) -> Any:
    """The match's seed stream (the generator its unseeded resets draw game seeds from), on either engine."""
    if match.engine == "numba":
        return match.batch._seed_rngs[match.g]
    return match._seed_rng


def match_state(match: Any) -> Any:
    """Everything that makes up a match's running game on either engine, seed stream included.

    Python engine: the game (:func:`game_state`).  Compiled engine: game ``g``'s rows of every kernel
    state array (board, placements, frontier, union-find, lists, counters, the next game's bag), its
    seed, forced draw order and prepared next seed, plus the reference game replayed from its actions
    (so a change the kernels' arrays hide from the Python side would show there too)."""
    if match.engine == "numba":
        b, g = match.batch, match.g
        return freeze({
            "arrays": [a[g] for a in b.state], "seed": b.seeds[g], "draw_order": b.draw_orders[g],
            "next_seed": b._next_seeds[g], "started": match.started, "stream": seed_stream(match),
            "game": game_state(match.game) if match.started else None,
        })  # fmt: skip
    return freeze({"game": game_state(match.game) if match.started else None, "stream": seed_stream(match)})
