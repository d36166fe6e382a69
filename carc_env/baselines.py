"""Baseline policies and a one-game match runner.

The policies (:class:`RandomPolicy`, :class:`GreedyPolicy`, the
:class:`Policy` protocol) live in :mod:`carc_env.policies`, below the
environments; this module re-exports them and adds :func:`play_match`, which
plays one game through the AEC environment (so it sits above it).
"""

from __future__ import annotations

from typing import Any

from .env.aec import raw_env
from .policies import GreedyPolicy, Policy, RandomPolicy


def play_match(policies: list[Any], seed: int | None = None, **options: Any) -> tuple[list[int], list[int]]:
    """Play one game between ``policies`` (one per seat) through ``raw_env``; return (scores, winners)."""
    env = raw_env(num_players=len(policies), **options)
    env.reset(seed=seed)
    game = env.game
    while not game.over:
        seat = game.player
        policy = policies[seat]
        if getattr(policy, "uses_observation", True):
            obs = env.observe(env.agent_selection)
        else:
            obs = {"action_mask": env.match.mask()}
        env.step(policy.act(obs, env))
    best = max(game.scores)
    return list(game.scores), [p for p, s in enumerate(game.scores) if s == best]


__all__ = ["Policy", "RandomPolicy", "GreedyPolicy", "play_match"]
