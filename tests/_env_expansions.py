"""Shared helpers of the environment tests on expansions: random play that reaches the Count's phases."""

from __future__ import annotations

import numpy as np
from _combos import builtin_expansions, combinations, maximal

import carc_env  # noqa: F401  (registers the expansions)
from carc_env.core import Game
from carc_env.encoding import ActionCodec

EXPANSIONS = builtin_expansions()
MAXIMAL = maximal(EXPANSIONS)  # the largest combinations that play (all, when none refuses another)
ALL = ("base", *max(MAXIMAL, key=len))  # the biggest of them
COMBOS = combinations(EXPANSIONS)  # alone, pairs, all, a seeded sample of the rest (tests/_combos.py)
SHOWCASE = [(k,) for k in EXPANSIONS] + MAXIMAL
OPTIONAL = ("follower", "count_leave", "count_deploy", "count_final")  # phases whose last entry is pass


def seed_quarters(game: Game, rng: np.random.Generator) -> None:
    """Put 1-2 followers of every player into random quarters and the Count on a random quarter, as
    earlier deployments would have (taken from the supply: followers stay conserved).  Random play
    rarely deploys (the active player must score nothing while an opponent scores), so without
    this the leave and final phases would hardly ever be reached."""
    st = game.ext.get("count")
    if st is None:
        return
    for p in range(game.num_players):
        for _ in range(int(rng.integers(1, 3))):
            game.take_follower(p)
            st.quarters[int(rng.integers(4))][p] += 1
    st.count = int(rng.integers(4))
    assert game.followers_conserved()


def pick(game: Game, codec: ActionCodec, mask: np.ndarray, rng: np.random.Generator, eager: float = 0.8) -> int:
    """A random enabled action; in optional phases an action other than pass with probability ``eager``
    (followers: half that, so that supplies last)."""
    enabled = np.flatnonzero(mask)
    if game.phase in OPTIONAL:
        stop = codec.ranges[game.phase].stop
        act = enabled[enabled != stop - 1]
        p = eager / 2 if game.phase == "follower" else eager
        if len(act) and rng.random() < p:
            return int(act[rng.integers(len(act))])
    return int(enabled[rng.integers(len(enabled))])
