"""The optional action-feature part of an observation, on the Python engine.

:func:`encode_action_features` gives the three arrays the environments add to
an observation when the option ``action_features`` is on (shapes and meanings:
:mod:`carc_env.encoding.spec`): ``place_index`` / ``place_features`` (the
legal in-window placements of the drawn tile in ascending action order, from
:func:`~carc_env.encoding.placements.placement_features`, zero-padded to
``rows``) and ``spots`` (:func:`~carc_env.encoding.spots.spot_features`).  The
compiled engine writes the same bytes (:mod:`carc_env.fast.features`;
``tests/fast/test_fast_differential.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .placements import placement_features
from .spec import PLACEMENT_FEATURES, SPOT_FEATURES
from .spots import spot_features

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game
    from .actions import ActionCodec, StateView

ACTION_FEATURE_KEYS = ("place_index", "place_features", "spots")


def action_feature_shapes(codec: ActionCodec, rows: int) -> dict[str, tuple[int, ...]]:
    """The shapes of the action-feature arrays of one observation."""
    return {
        "place_index": (rows,),
        "place_features": (rows, len(PLACEMENT_FEATURES)),
        "spots": (codec.follower_range.size - 1, len(SPOT_FEATURES)),
    }


def encode_action_features(
    game: Game, seat: int, codec: ActionCodec, view: StateView, rows: int
) -> tuple[dict[str, np.ndarray], int]:
    """``(arrays, missing)``: the action features of ``game`` seen by ``seat`` and the legal in-window
    placements that did not fit in ``rows`` (they have no row; reported, never dropped silently)."""
    shapes = action_feature_shapes(codec, rows)
    index = np.zeros(shapes["place_index"], dtype=np.int64)
    feats = np.zeros(shapes["place_features"], dtype=np.float32)
    idx, f = placement_features(game, seat, codec, view)
    order = np.argsort(idx, kind="stable")[:rows]
    k = len(order)
    index[:k] = idx[order]
    feats[:k] = f[order]
    spots = spot_features(game, seat, shapes["spots"][0])
    return {"place_index": index, "place_features": feats, "spots": spots}, len(idx) - k


__all__ = ["ACTION_FEATURE_KEYS", "action_feature_shapes", "encode_action_features"]
