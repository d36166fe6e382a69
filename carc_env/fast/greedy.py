"""The greedy baseline on the compiled engine: one kernel decision per game.

:func:`greedy_actions` decides for the deciding seat of each of several games
of a :class:`~carc_env.fast.engine.FastBatch` exactly as
:class:`carc_env.policies.GreedyPolicy` would (with its epsilon): each game's
policy draws its random numbers from its own generator with
:meth:`~carc_env.policies.GreedyPolicy.draws` (the draws ``act`` takes), and
one call of :func:`carc_env.fast.features.greedy_range` (through the composed
module, :func:`carc_env.fast.seam.engine`) makes every decision.  In a
plug-in's decision phase the plug-in's ``greedy_decision`` kernel (its
``heuristics`` part compiled) chooses; without one the Python policy picks a
legal action uniformly with one more draw, and so does this (a configuration
outside :func:`carc_env.fast.tables.features_coverage` is refused here).
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


def greedy_actions(batch: Any, games: Sequence[int], policies: Sequence[Any]) -> np.ndarray:
    """Flat actions (int64 (len(games),)) of ``policies[j]`` (a GreedyPolicy) deciding in game ``games[j]``."""
    games = np.asarray(games, dtype=np.int64)
    n = len(games)
    if len(policies) != n:
        raise ValueError(f"greedy_actions: {n} games but {len(policies)} policies")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _refuse_uncovered(batch)
    fk = kernels_of(batch)
    counts = fk.legal_counts(games)
    picks = np.full(n, -1, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)
    reserves = np.zeros(n, dtype=np.int64)
    chunks: list[np.ndarray] = []
    used = 0
    fixed: dict[int, int] = {}
    for j in range(n):
        g = int(games[j])
        if counts[j, 0] == 0:
            raise ValueError(f"greedy_actions: game {g} is over; no decision to make")
        phase = batch.phase(g)
        pick, noise = policies[j].draws(phase, int(counts[j, 0]))
        if pick < 0 and phase != "tile" and phase != "follower":  # a plug-in's phase: decided now, in turn
            fixed[j] = _plug_in_choice(fk, g, policies[j], int(counts[j, 0]))
            pick = 0
        picks[j] = pick
        reserves[j] = policies[j].reserve
        at[j] = used
        if noise is not None:
            chunks.append(noise)
            used += len(noise)
    noise_all = np.concatenate(chunks) if chunks else np.zeros(1)
    if not len(noise_all):
        noise_all = np.zeros(1)
    out = fk.greedy(games, picks, noise_all, at, reserves)
    for j, a in fixed.items():
        out[j] = a
    return out


def _plug_in_choice(fk: Any, g: int, policy: Any, n_legal: int) -> int:
    """GreedyPolicy.act in a plug-in's phase: the plug-in's heuristic choice (its ``greedy_decision``
    kernel) if it has a legal one, else a uniform pick with the policy's next draw."""
    one = np.array([g], dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    a = int(fk.greedy(one, np.full(1, -1, dtype=np.int64), np.zeros(1), zero, zero)[0])
    if a < 0:
        k = int(policy.rng.integers(n_legal))
        a = int(fk.greedy(one, np.array([k], dtype=np.int64), np.zeros(1), zero, zero)[0])
    return a


def _refuse_uncovered(batch: Any) -> None:
    """Raise when the compiled greedy does not reproduce the Python policy in the batch's configuration
    (:func:`carc_env.fast.tables.features_coverage`: a plug-in's heuristics, a printed board ...)."""
    why = getattr(batch, "_greedy_refused", None)  # "" once checked and covered
    if why is None:
        from .tables import features_coverage

        why = batch._greedy_refused = features_coverage(batch.layout.rules) or ""
    if why:
        raise ValueError(
            f"greedy_actions: the compiled greedy does not cover this configuration ({why}); "
            "use GreedyPolicy on the Python engine (engine='python')"
        )


__all__ = ["greedy_actions"]
