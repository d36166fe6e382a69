"""What a plug-in declares about the compiled engine: its ``fast`` part.

A plug-in package may have a ``fast`` part (``carc_env/expansions/<key>/fast.py``,
found through :func:`carc_env.core.registry.part` like ``actions``, ``observe``
and ``draw``) holding ``SUPPORT``, a :class:`FastSupport`: which of its hooks
its kernels reproduce, which of its rule options they handle, the kernels
themselves (one per compiled hook, :data:`carc_env.fast.seam.HOOKS`), and what
they need from the engine (parameters, per-game integers, tile columns).  An
enabled expansion without a ``fast`` part, or overriding a hook or given an
option its part does not list, keeps the whole configuration on the Python
engine.  How the kernels are composed into one compiled step is
:mod:`carc_env.fast.seam`'s business (and ``docs/architecture.md``'s).

A plug-in's parameters come in two kinds:

* **engine parameters** (:data:`PARAMETERS`), which the engine itself reads:
  the start layout and how a city or road counts its tiles.  A parameter given
  by two enabled plug-ins is a configuration the compiled engine does not cover.
* **its own parameters** (``own``, any names): values its kernels read from its
  block of the parameter vector, ``T.P[pb + i]`` for the ``i``-th name of
  ``own`` (``pb`` is the block start the seam passes to every kernel; the
  positions come from :func:`carc_env.fast.seam.own_positions`).

=======================  ===============================================================
engine parameter         meaning
=======================  ===============================================================
``start_tile``           tile type index of the start tile (one plug-in lays the start)
``start_x``, ``start_y``  its cell
``start_r``              its rotation
``count_tile_once``      1: a city or road counts each tile once (distinct tiles), 0: every segment
``river``                1: a plug-in's kernels govern the river segments (tiles with a river
                         are covered only then)
``start_by_plugin``      1: the engine lays no start tile: the plug-in's ``setup`` kernel lays
                         ``start_tile`` (where and how turned is its rule: a map's start squares)
=======================  ===============================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _no_columns(rules: Any) -> np.ndarray:
    return np.zeros((len(rules.tiles), 0), dtype=np.int16)


@dataclass(frozen=True)
class FastSupport:
    """A plug-in's declaration for the compiled engine (see the module docstring)."""

    hooks: frozenset[str]
    """The Python hooks it overrides whose behaviour its kernels (or the engine) reproduce."""
    options: frozenset[str] = frozenset()
    """Its rule options the kernels handle (any value)."""
    params: Callable[[Any, Any], dict[str, int]] = field(default=lambda rules, exp: {})
    """``params(rules, expansion) -> {name: value}``: engine parameters and its own parameters."""
    positions: Callable[[Any], dict[str, int]] = field(default=lambda encoder: {})
    """``positions(encoder) -> {name: index}``: its own parameters that are observation positions."""
    kernels: Mapping[str, Any] = field(default_factory=dict)
    """``{compiled hook: kernel}``: its kernels (made with :func:`carc_env.fast.seam.kernel`), one per
    hook of :data:`carc_env.fast.seam.HOOKS` it takes part in."""
    own: tuple[str, ...] = ()
    """The names of its own parameters, in block order (``T.P[pb + B_OWN + i]``)."""
    slots: int = 0
    """Per-game integers its kernels keep (``S.ls[g, T.P[pb + B_LS] + i]``), zeroed when a game starts."""
    tile_columns: Callable[[Any], np.ndarray] = _no_columns
    """``tile_columns(rules) -> int16 array (tile types, k)``: per-tile-type data its kernels read,
    ``T.tile[t, T.P[pb + B_TILE] + j]``."""
    awards: tuple[str, ...] = ()
    """The score-item kinds of the points it awards outside feature scoring (``PointsAwarded``); its
    kernels log award ``i`` as ``T.P[pb + B_AWARD] + i`` (the differential test reads the codes)."""
    phases: tuple[str, ...] = ()
    """The decision phases of its stages its kernels run (the ``decision_*`` compiled hooks); a rule set
    with a decision phase no enabled plug-in's fast part lists runs on the Python engine."""
    setup_tiles: Callable[[Any, Any], list[int]] = field(default=lambda rules, exp: [])
    """``setup_tiles(rules, expansion) -> tile type indices`` its ``setup`` kernel lays besides the start
    tile, taken out of the bag as the reference's ``place_fixed`` does."""
    history_action: Callable[..., Any] | None = None
    """``history_action(rules, a, b, c, tile_at) -> Action``: the reference's action of a history row its
    decision kernels logged (``kernels.H_PLUG`` + its position, then ``a, b, c``); ``tile_at(x, y)`` is
    the tile type on a cell (-1: none).  Needed with ``phases``."""
    table: Callable[[Any], np.ndarray] | None = None
    """``table(encoder) -> int array``: variable-length data its kernels read (a board's cells, lists),
    placed after its own parameters: ``T.P[pb + B_OWN + len(own) + i]``."""
    setup_draws: Callable[[Any, Any, Any], list[int]] | None = None
    """``setup_draws(rules, expansion, generator) -> ints``: the random numbers its ``setup`` draws from the
    game's generator before the stack is shuffled (the reference's ``Expansion.setup``), encoded as
    integers, always as many for a configuration; the engine loads them before the draw order
    (``S.ls[g, T.P[P_O_NEXTBAG] + i]`` while its setup kernel runs, in expansion order)."""
    history_row: Callable[..., Any] | None = None
    """``history_row(rules, action, tile_at) -> (a, b, c)``: the inverse of ``history_action``, the row its
    ``decision_apply_row`` kernel applies; raises IllegalActionError for an action it cannot name.
    ``tile_at.last`` is the cell ``(x, y)`` of the tile placed last (an action naming a segment of it)."""
    build_bags: Callable[[Any, Any, np.ndarray], np.ndarray] | None = None
    """``build_bags(rules, expansion, bags) -> bags``: its ``build_bag`` applied to every row of a 2-d array
    of shuffled draw orders at once (NumPy), giving exactly the orders the Python hook gives; the engine's
    deal then calls it once for many games instead of the Python hook per game."""
    history_rows: Callable[[Any, Any], int] = field(default=lambda rules, exp: 0)
    """``history_rows(rules, expansion) -> int``: a bound on the history rows its decisions log per tile of
    the game (every move and the pass that ends each of its phases, averaged over the game where moves
    are bounded by earlier ones), beyond the core's two (tile, follower); the engine's history holds that
    many per tile."""
    features: frozenset[str] = frozenset()
    """The hooks of :data:`carc_env.fast.tables.FEATURE_HOOKS` it overrides that the compiled action
    features and greedy (:mod:`carc_env.fast.features`) reproduce, through its kernels (a field's extra
    cities, a placement's links) or because the hook reaches them only through the engine's play-out;
    each proven by the features differential (``tests/fast``).  An overridden hook not listed keeps
    those on the Python engine (:func:`carc_env.fast.tables.features_coverage`)."""
    heuristics: bool = False
    """Its kernels reproduce its ``heuristics`` part (what the greedy baseline values in its state and
    chooses in its phases); a plug-in with a heuristics part and no such kernels keeps the greedy and the
    action features on the Python engine."""
    random: bool = False
    """Its kernels draw from the game's random generator (:mod:`carc_env.fast.rng`, at ``T.P[P_O_RNG]``):
    the engine then loads the reference's generator, as it stands after the deal, into every game."""


PARAMETERS = ("start_tile", "start_x", "start_y", "start_r", "count_tile_once", "river", "start_by_plugin")

__all__ = ["FastSupport", "PARAMETERS"]
