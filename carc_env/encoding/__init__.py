"""Action codec and observation encoders between the rules core and RL libraries.

* :class:`ActionCodec`: one flat ``Discrete(N)`` over every decision phase,
  masks, text conversion (:mod:`carc_env.encoding.actions`);
* :class:`ObservationEncoder`: player-relative board tensor, global features
  and stained-glass windows, encoded incrementally
  (:mod:`carc_env.encoding.observation`).

Expansions extend both through registries keyed by phase name
(:func:`register_phase_codec`) and expansion key
(:func:`register_observation_extension`; the built-in ones are in
:mod:`carc_env.encoding.extensions`; the Count of Carcassonne's phase codecs
are in :mod:`carc_env.encoding.count_phases`).  This package imports numpy,
the core and the built-in expansions' action classes only (no gymnasium,
pettingzoo or torch).
"""

from . import (
    count_phases,  # noqa: F401  (registers the Count's phase codecs)
    extensions,  # noqa: F401  (registers the built-in expansions' observation extensions)
)
from .actions import (
    DEFAULT_WINDOW,
    ActionCodec,
    EnumeratedPhaseCodec,
    FollowerPhaseCodec,
    PhaseCodec,
    PhaseRange,
    StateView,
    TilePhaseCodec,
    phase_codecs,
    register_phase_codec,
    window_origin,
)
from .observation import (
    SCORE_SCALE,
    WINDOW_TOKEN_KINDS,
    ObsContext,
    ObservationEncoder,
    ObservationExtension,
    observation_extensions,
    register_observation_extension,
)

__all__ = [
    "DEFAULT_WINDOW",
    "ActionCodec",
    "EnumeratedPhaseCodec",
    "FollowerPhaseCodec",
    "PhaseCodec",
    "PhaseRange",
    "StateView",
    "TilePhaseCodec",
    "phase_codecs",
    "register_phase_codec",
    "window_origin",
    "SCORE_SCALE",
    "WINDOW_TOKEN_KINDS",
    "ObsContext",
    "ObservationEncoder",
    "ObservationExtension",
    "observation_extensions",
    "register_observation_extension",
]
