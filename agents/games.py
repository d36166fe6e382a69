"""The games a trainer plays: N games of one configuration, on the compiled or the Python engine.

:func:`make_games` picks :class:`CompiledGames` where the compiled engine covers
the configuration (``carc_env.fast.select_engine``, the env option ``engine``
deciding as everywhere) and :class:`PythonGames` otherwise.  Both answer the same
questions, batched over a list of game indices, so the trainer
(:mod:`agents.ppo`) is written once:

* ``reset(i, seed)``, ``over()``, ``movers()`` (the deciding seat of every
  game), ``scores(i)``;
* ``observe(games, seats)``: observations with the action features
  (:mod:`carc_env.encoding.spec`; the compiled engine writes them in its
  kernels, the Python one computes them from its ``Game``);
* ``masks(games)``, ``greedy(games, policy)`` (the GreedyPolicy's decisions:
  one kernel call on the compiled engine, :mod:`carc_env.fast.greedy`),
  ``step(games, actions)``.

On the compiled engine no Python ``Game`` is ever built: the games live in one
:class:`~carc_env.fast.engine.FastBatch` (observations, masks, features,
greedy decisions and steps are kernel calls over the games asked for).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class PythonGames:
    """N ``carc_env.raw_env`` games (the reference engine, or whatever ``engine`` the env picks)."""

    engine = "python"

    def __init__(self, env_kwargs: dict[str, Any], n: int) -> None:
        import carc_env

        self.envs = [carc_env.raw_env(**env_kwargs) for _ in range(n)]
        self.n = n
        self.num_players = len(self.envs[0].possible_agents)

    def spec_env(self) -> Any:
        return self.envs[0]

    def reset(self, i: int, seed: int) -> None:
        self.envs[i].reset(seed=seed)

    def over(self) -> np.ndarray:
        return np.array([all(e.terminations.values()) or all(e.truncations.values()) for e in self.envs])

    def movers(self) -> np.ndarray:
        return np.array([e.possible_agents.index(e.agent_selection) for e in self.envs], dtype=np.int64)

    def scores(self, i: int) -> list[int]:
        return list(self.envs[i].game.scores)

    def observe(self, games: Sequence[int], seats: Sequence[int]) -> list[dict]:
        from .policy import with_action_features

        out = []
        for i, s in zip(games, seats, strict=True):
            env = self.envs[i]
            out.append(with_action_features(env.observe(env.possible_agents[s]), env))
        return out

    def masks(self, games: Sequence[int]) -> list[np.ndarray]:
        return [self.envs[i].infos[self.envs[i].agent_selection]["action_mask"] for i in games]

    def greedy(self, games: Sequence[int], policy: Any) -> list[int]:
        return [int(policy.act(self.envs[i].infos[self.envs[i].agent_selection], self.envs[i])) for i in games]

    def step(self, games: Sequence[int], actions: Sequence[int]) -> None:
        for i, a in zip(games, actions, strict=True):
            self.envs[i].step(int(a))


class CompiledGames:
    """N games in one :class:`~carc_env.fast.engine.FastBatch`; every question is a kernel call."""

    engine = "numba"

    def __init__(self, env_kwargs: dict[str, Any], n: int) -> None:
        from carc_env.env.options import EnvOptions
        from carc_env.fast.engine import FastBatch

        kw = {**env_kwargs, "action_features": True}
        self.env_kwargs = kw
        self.options = EnvOptions.from_kwargs(**kw)
        self.batch = FastBatch(self.options, n)
        self.n = n
        self.num_players = self.options.num_players

    def __getstate__(self) -> dict[str, Any]:
        return {"env_kwargs": self.env_kwargs, "n": self.n, "batch": self.batch}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__init__(d["env_kwargs"], d["n"])
        self.batch = d["batch"]

    def spec_env(self) -> Any:
        import carc_env

        return carc_env.raw_env(**self.env_kwargs)

    def reset(self, i: int, seed: int) -> None:
        self.batch.reset(i, seed)

    def over(self) -> np.ndarray:
        return self.batch.over_all()

    def movers(self) -> np.ndarray:
        return self.batch.players_all()

    def scores(self, i: int) -> list[int]:
        return self.batch.scores(i)

    def observe(self, games: Sequence[int], seats: Sequence[int]) -> list[dict]:
        obs = self.batch.observe_games(games, seats)
        return [{k: v[j] for k, v in obs.items()} for j in range(len(games))]

    def masks(self, games: Sequence[int]) -> list[np.ndarray]:
        return list(self.batch.masks_of(games))

    def greedy(self, games: Sequence[int], policy: Any) -> list[int]:
        from carc_env.fast.greedy import greedy_actions

        return greedy_actions(self.batch, games, [policy] * len(games)).tolist()

    def step(self, games: Sequence[int], actions: Sequence[int]) -> None:
        self.batch.step_games(games, actions)


def make_games(env_kwargs: dict[str, Any], n: int) -> PythonGames | CompiledGames:
    """:class:`CompiledGames` where the compiled engine covers ``env_kwargs`` (and its option ``engine``
    allows it), else :class:`PythonGames`."""
    from carc_env.env.options import EnvOptions
    from carc_env.fast import select_engine

    options = EnvOptions.from_kwargs(**{**env_kwargs, "action_features": True})  # the trainer reads them
    engine, _ = select_engine(options, options.engine)
    return CompiledGames(env_kwargs, n) if engine == "numba" else PythonGames(env_kwargs, n)


__all__ = ["CompiledGames", "PythonGames", "make_games"]
