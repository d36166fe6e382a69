"""The greedy baseline on the compiled engine: one kernel decision per game.

:func:`greedy_actions` decides for the deciding seat of each of several games
of a :class:`~carc_env.fast.engine.FastBatch` exactly as
:class:`carc_env.policies.GreedyPolicy` would (with its epsilon): each game's
policy draws its random numbers from its own generator with
:meth:`~carc_env.policies.GreedyPolicy.draws` (the draws ``act`` takes), and
one call of :func:`carc_env.fast.features.greedy_range` (through the composed
module, :func:`carc_env.fast.seam.engine`) makes every decision.
``tests/fast/test_fast_greedy.py`` checks the choices against the Python policy,
game by game.  The environments on the compiled engine route
``GreedyPolicy.act`` here (``FastMatch.greedy_action``), so the vector env's
opponents, the tournament and the trainer never rebuild a Python ``Game`` for
greedy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .features import kernels_of
from .seam import engine as E


def greedy_actions(batch: Any, games: Sequence[int], policies: Sequence[Any]) -> np.ndarray:
    """Flat actions (int64 (len(games),)) of ``policies[j]`` (a GreedyPolicy) deciding in game ``games[j]``."""
    games = np.asarray(games, dtype=np.int64)
    n = len(games)
    if len(policies) != n:
        raise ValueError(f"greedy_actions: {n} games but {len(policies)} policies")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    fk = kernels_of(batch)
    counts = np.zeros((n, 2), dtype=np.int64)
    E().legal_counts(batch.tables, batch.state, games, counts)
    picks = np.full(n, -1, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)
    reserves = np.zeros(n, dtype=np.int64)
    chunks: list[np.ndarray] = []
    used = 0
    for j in range(n):
        g = int(games[j])
        if counts[j, 0] == 0:
            raise ValueError(f"greedy_actions: game {g} is over; no decision to make")
        pick, noise = policies[j].draws(batch.phase(g), int(counts[j, 0]))
        picks[j] = pick
        reserves[j] = policies[j].reserve
        at[j] = used
        if noise is not None:
            chunks.append(noise)
            used += len(noise)
    noise_all = np.concatenate(chunks) if chunks else np.zeros(1)
    if not len(noise_all):
        noise_all = np.zeros(1)
    return fk.greedy(games, picks, noise_all, at, reserves)


__all__ = ["greedy_actions"]
