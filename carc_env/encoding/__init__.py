"""Action codec and observation encoders between the rules core and RL libraries.

* :class:`ActionCodec`: one flat ``Discrete(N)`` over every decision phase,
  masks, text conversion (:mod:`carc_env.encoding.actions`);
* :class:`ObservationEncoder`: player-relative board tensor, global features
  and stained-glass windows, encoded incrementally
  (:mod:`carc_env.encoding.observation`);
* one-ply features of the tile and follower decisions
  (:mod:`carc_env.encoding.lookahead`, ``placements``, ``spots``).

Expansions extend both through their plug-ins' parts (``actions``:
``PHASE_CODECS``; ``observe``: ``Observation``), found through the plug-in
registry (:mod:`carc_env.core.registry`); this package imports no expansion by
name.  It imports numpy and the core only (no gymnasium, pettingzoo or torch).
"""

from .actions import (
    CORE_PHASE_CODECS,
    DEFAULT_WINDOW,
    ActionCodec,
    EnumeratedPhaseCodec,
    FollowerPhaseCodec,
    PhaseCodec,
    PhaseRange,
    StateView,
    TilePhaseCodec,
    default_window,
    phase_codec_factory,
    window_origin,
)
from .observation import (
    SCORE_SCALE,
    WINDOW_TOKEN_KINDS,
    ObsContext,
    ObservationEncoder,
    ObservationExtension,
    add_cells,
    feature_cells,
)

__all__ = [
    "CORE_PHASE_CODECS",
    "DEFAULT_WINDOW",
    "default_window",
    "ActionCodec",
    "EnumeratedPhaseCodec",
    "FollowerPhaseCodec",
    "PhaseCodec",
    "PhaseRange",
    "StateView",
    "TilePhaseCodec",
    "phase_codec_factory",
    "window_origin",
    "SCORE_SCALE",
    "WINDOW_TOKEN_KINDS",
    "ObsContext",
    "ObservationEncoder",
    "ObservationExtension",
    "add_cells",
    "feature_cells",
]
