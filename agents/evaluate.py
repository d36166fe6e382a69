"""Seat-swapped evaluation with paired seeds.

For every seed the same deal (draw order) is played once with the candidate
in each seat and the opponent policy in every other seat, so luck of the draw
cancels out between the pair.  Results: wins, shared wins and losses of the
candidate, win rate with a 95 % Wilson interval, mean score margin (own score
minus the best opponent's).

A seedable opponent (``seed(s)``) is restarted for every game from the deal and
the seat, so each game's result depends on them only, not on the order the
games are played in; a network candidate (``act_envs``) plays up to 64 games
side by side with one batched forward per round.
"""

from __future__ import annotations

import copy
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


def _fresh(policy: Any, seed: int) -> Any:
    """A copy of ``policy`` restarted at ``seed`` (if it is seedable), so a game's result depends on its deal
    and seat only, not on which games were played before it or alongside it."""
    if not hasattr(policy, "seed"):
        return policy
    fresh = copy.deepcopy(policy)
    fresh.seed(seed)
    return fresh


def _game_results(
    candidate: Any,
    opponent: Any,
    jobs: list[tuple[int, int]],
    env_kwargs: dict[str, Any],
    progress: Callable[[], None] | None,
) -> list[list[int]]:
    """Final scores of each ``(deal seed, candidate seat)`` game.  A candidate with ``act_envs(envs)``
    (a network) decides in all the games waiting for it at once, one batched forward; others play
    game by game."""
    import carc_env

    n = int(env_kwargs.get("num_players", 2))
    scores: list[list[int]] = [[] for _ in jobs]
    batched = hasattr(candidate, "act_envs")
    step = 64 if batched else 1  # games in flight
    for lo in range(0, len(jobs), step):
        group = list(range(lo, min(lo + step, len(jobs))))
        envs, policies = {}, {}
        for j in group:
            deal, seat = jobs[j]
            env = carc_env.raw_env(**env_kwargs)
            env.reset(seed=deal)
            opp = _fresh(opponent, deal * 8 + seat)
            envs[j] = env
            policies[j] = [candidate if p == seat else opp for p in range(n)]
        active = list(group)
        while active:
            waiting = []
            for j in active:
                env = envs[j]
                seat = jobs[j][1]
                while not all(env.terminations.values()):
                    agent = env.agent_selection
                    p = env.possible_agents.index(agent)
                    if p == seat and batched:
                        waiting.append(j)
                        break
                    env.step(int(policies[j][p].act(env.observe(agent), env)))
                else:
                    scores[j] = list(env.game.scores)
                    if progress:
                        progress()
            if waiting:
                for j, a in zip(waiting, candidate.act_envs([envs[j] for j in waiting]), strict=True):
                    envs[j].step(int(a))
            active = waiting
    return scores


def evaluate(
    candidate: Any,
    opponent: Any,
    games: int,
    seed: int,
    env_kwargs: dict[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Play ``games`` games (rounded up to a multiple of the player count): deals ``seed``, ``seed + 1``,
    ..., each once with the candidate in every seat and the opponent in the others.  A seedable opponent
    (``seed(s)``) is restarted per game from the deal and seat."""
    n = int(env_kwargs.get("num_players", 2))
    deals = max(1, math.ceil(games / n))
    jobs = [(seed + d, seat) for d in range(deals) for seat in range(n)]
    total = len(jobs)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    results = _game_results(candidate, opponent, jobs, env_kwargs, tick)
    wins = ties = losses = 0
    margins = []
    scores_c = []
    for (_, seat), scores in zip(jobs, results, strict=True):
        best_other = max(s for p, s in enumerate(scores) if p != seat)
        margins.append(scores[seat] - best_other)
        scores_c.append(scores[seat])
        if scores[seat] > best_other:
            wins += 1
        elif scores[seat] == best_other:
            ties += 1
        else:
            losses += 1
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
