"""Seat-swapped evaluation with paired seeds.

For every seed the same deal (draw order) is played once with the candidate
in each seat and the opponent policy in every other seat, so luck of the draw
cancels out between the pair.  Results: wins, shared wins and losses of the
candidate, win rate with a 95 % Wilson interval, mean score margin (own score
minus the best opponent's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def play_game(env_kwargs: dict[str, Any], policies: Sequence[Any], seed: int, keep_env: bool = False) -> Any:
    """Play one game; ``policies[seat]`` acts for each seat.  Returns the final scores (or the env)."""
    import carc_env

    env = carc_env.raw_env(**env_kwargs)
    env.reset(seed=seed)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        env.step(int(policies[seat].act(env.observe(agent), env)))
    return env if keep_env else list(env.game.scores)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def evaluate(
    candidate: Any,
    opponent: Any,
    games: int,
    seed: int,
    env_kwargs: dict[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Play ``games`` games (rounded up to a multiple of the player count)."""
    n = int(env_kwargs.get("num_players", 2))
    deals = max(1, math.ceil(games / n))
    wins = ties = losses = 0
    margins = []
    scores_c = []
    total = deals * n
    done = 0
    for d in range(deals):
        for seat in range(n):
            policies = [opponent] * n
            policies[seat] = candidate
            scores = play_game(env_kwargs, policies, seed + d)
            best_other = max(s for p, s in enumerate(scores) if p != seat)
            margins.append(scores[seat] - best_other)
            scores_c.append(scores[seat])
            if scores[seat] > best_other:
                wins += 1
            elif scores[seat] == best_other:
                ties += 1
            else:
                losses += 1
            done += 1
            if progress:
                progress(done, total)
    lo, hi = wilson(wins, total)
    return {
        "games": total,
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "win_rate": wins / total,
        "win_rate_ci95": [round(lo, 4), round(hi, 4)],
        "mean_margin": float(np.mean(margins)),
        "mean_score": float(np.mean(scores_c)),
        "seed": seed,
    }
