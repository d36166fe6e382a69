"""What a plug-in declares about the compiled engine: its ``fast`` part.

A plug-in package may have a ``fast`` part (``carc_env/expansions/<key>/fast.py``,
found through :func:`carc_env.core.registry.part` like ``actions``, ``observe``
and ``draw``) holding ``SUPPORT``, a :class:`FastSupport`: which of its hooks
the kernels reproduce, which of its rule options they handle, and the kernel
parameters of a configuration.  An enabled expansion without a ``fast`` part,
or overriding a hook or given an option its part does not list, keeps the
whole configuration on the Python engine.

The kernels (:mod:`carc_env.fast.kernels`) hold the compiled rules; they are
switched and parameterised by the names below, which say what a rule does,
never which expansion asks for it: rule parameters come from
``SUPPORT.params(rules, expansion)``, observation positions (``ch_*``,
``g_*``) from ``SUPPORT.positions(encoder)``.  A parameter given by two
enabled plug-ins is a configuration the compiled engine does not cover.

=======================  ===============================================================
parameter                meaning
=======================  ===============================================================
``start_tile``           tile type index of the start tile (one plug-in lays the start)
``start_x``, ``start_y``  its cell
``start_r``              its rotation
``count_tile_once``      1: a city or road counts each tile once (distinct tiles), 0: every segment
``figures``              1: the holders of the largest completed city and road (the King and the
                         Robber Baron) are tracked and score 1 point per completed city / road
``g_figures``            position of the first of their global features (``2 n + 2`` of them:
                         holder one-hots per relative seat, then the two records x 0.1)
``river``                1: river tiles come first and must extend the river (one touching river
                         edge, no immediate U-turn), the open ends are tracked
``lake_tile``            the tile type whose placement gives an extra turn and takes no follower
``lake_extra_turn``      1: that rule applies
``river_tiles``          river tiles in the game (the denominator of the river feature)
``ch_river_end``         board channel of the open river ends
``g_river_tiles_left``   global feature position of the river tiles left
=======================  ===============================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FastSupport:
    """A plug-in's declaration for the compiled engine (see the module docstring)."""

    hooks: frozenset[str]
    """The hooks it overrides whose behaviour the kernels reproduce."""
    options: frozenset[str] = frozenset()
    """Its rule options the kernels handle (any value)."""
    params: Callable[[Any, Any], dict[str, int]] = field(default=lambda rules, exp: {})
    """``params(rules, expansion) -> {parameter: value}``: the rule parameters of a configuration."""
    positions: Callable[[Any], dict[str, int]] = field(default=lambda encoder: {})
    """``positions(encoder) -> {parameter: index}``: where its observation features are (``ch_*``, ``g_*``)."""


PARAMETERS = (
    "start_tile", "start_x", "start_y", "start_r", "count_tile_once", "figures", "g_figures", "river",
    "lake_tile", "lake_extra_turn", "river_tiles", "ch_river_end", "g_river_tiles_left",
)  # fmt: skip

__all__ = ["FastSupport", "PARAMETERS"]
