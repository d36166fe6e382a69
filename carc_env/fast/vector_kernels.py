"""Compiled helpers of the batched vector env's step on the compiled engine (:mod:`carc_env.env.vector`).

A batched step of 64 games is one kernel call of a few hundred microseconds that runs on every thread;
what ``step()`` does around it in Python (checking the actions against the published masks, the rewards,
infos and bookkeeping) runs on one core whatever the threads, so it bounds what a second thread can add
(Amdahl).  Done with numpy it was about thirty small array operations per step; here it is two compiled
calls that release the GIL:

* :func:`first_illegal`: the first game whose action is outside the space or not enabled in its mask
  (-1 if none), the whole batch checked before any game moves;
* :func:`post_step`: from the engine's outputs, the acting seats' rewards, the seats' rewards as
  float32, the next acting seats (written into the env's ``seats`` in place, and a copy for the infos),
  the winners of the games that ended, the episode counters, the placements outside the window, and the
  arrays the infos and the 5-tuple need (row masks, truncations), each fresh.

Imported only where the compiled engine runs (it needs Numba); compiled once and cached on disk like the
engine's entry points.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def first_illegal(mask: np.ndarray, actions: np.ndarray) -> int:  # pragma: no cover - compiled
    """The first row ``i`` whose ``actions[i]`` is outside ``0..A-1`` or not enabled in ``mask[i]``; -1 if
    every action is legal."""
    n = mask.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= n or mask[i, a] == 0:
            return i
    return -1


@njit(cache=True, nogil=True)
def post_step(rewards, dones, final, seats, acting, episodes, gi, outside_col):  # pragma: no cover - compiled
    """What ``step()`` hands out after a batched step, in one pass over the games.

    ``rewards`` float64 (N, P), ``dones`` bool (N,), ``final`` int64 (N, P), ``seats`` int64 (N,): the
    engine's outputs; ``acting`` int64 (N,): the seats that chose this step's actions, overwritten in
    place by the next acting seats (the env's ``seats``); ``episodes`` int64 (N,): +1 per ended game;
    ``gi[:, outside_col]``: the legal placements outside the window.  Returns ``(rewards of the acting
    seats float32 (N,), seat rewards float32 (N, P), next seats int64 (N,) (a copy), winners bool (N, P),
    outside int64 (N,), all-True bool (N,) twice, truncations bool (N,) (False), games ended, games with
    placements outside)``."""
    N, P = rewards.shape
    own = np.empty(N, np.float32)
    seat_rewards = np.empty((N, P), np.float32)
    nxt = np.empty(N, np.int64)
    winners = np.zeros((N, P), np.bool_)
    outside = np.empty(N, np.int64)
    rows_a = np.ones(N, np.bool_)
    rows_b = np.ones(N, np.bool_)
    trunc = np.zeros(N, np.bool_)
    ended = 0
    clipped = 0
    for i in range(N):
        for p in range(P):
            seat_rewards[i, p] = np.float32(rewards[i, p])
        own[i] = seat_rewards[i, acting[i]]
        nxt[i] = seats[i]
        acting[i] = seats[i]
        if dones[i]:
            ended += 1
            episodes[i] += 1
            best = final[i, 0]
            for p in range(1, P):
                if final[i, p] > best:
                    best = final[i, p]
            for p in range(P):
                winners[i, p] = final[i, p] == best
        o = gi[i, outside_col]
        outside[i] = o
        if o:
            clipped += 1
    return own, seat_rewards, nxt, winners, outside, rows_a, rows_b, trunc, ended, clipped


__all__ = ["first_illegal", "post_step"]
