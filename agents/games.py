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
  ``play(games, player)`` (any player's ``act(obs, env)``; on the compiled
  engine ``env`` is the game's :class:`~carc_env.env.fast_match.FastMatch`, the
  interface the vector env's opponents get, whose reference ``Game`` is replayed
  on demand for the players that search from it),
  ``step(games, actions)``.

On the compiled engine the games live in one
:class:`~carc_env.fast.engine.FastBatch` (observations, masks, features,
greedy decisions and steps are kernel calls over the games asked for); a
Python ``Game`` is built only for a game a player of ``play`` reads it in
(``FastBatch.game``: replayed from the game's actions, then kept in step, and
checked against the compiled state at every step).
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

        self.env_kwargs = dict(env_kwargs)
        self.envs = [carc_env.raw_env(**env_kwargs) for _ in range(n)]
        self.n = n
        self.num_players = len(self.envs[0].possible_agents)
        self.history: list[tuple[int | None, list[int]]] = [(None, []) for _ in range(n)]  # (seed, actions)

    def __getstate__(self) -> dict[str, Any]:
        """A game is stored as its seed and actions (an env need not pickle: some plug-ins' parsers are
        closures); loading replays them, which gives the same states (the engine is deterministic)."""
        return {"env_kwargs": self.env_kwargs, "n": self.n, "history": [(s, list(a)) for s, a in self.history]}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__init__(d["env_kwargs"], d["n"])
        for i, (seed, actions) in enumerate(d["history"]):
            if seed is not None:
                self.reset(i, seed)
                for a in actions:
                    self.step([i], [a])

    def players_of(self, i: int) -> int:
        return self.num_players

    def spec_env(self) -> Any:
        return self.envs[0]

    def reset(self, i: int, seed: int) -> None:
        self.envs[i].reset(seed=seed)
        self.history[i] = (seed, [])

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

    def play(self, games: Sequence[int], policy: Any) -> list[int]:
        """The decisions of ``policy``, a player of :mod:`agents.players` (``act(obs, env)``), in ``games``."""
        return [int(policy.act(self.envs[i].observe(self.envs[i].agent_selection), self.envs[i])) for i in games]

    def step(self, games: Sequence[int], actions: Sequence[int]) -> None:
        for i, a in zip(games, actions, strict=True):
            self.envs[i].step(int(a))
            self.history[i][1].append(int(a))


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
        self._matches: dict[int, Any] = {}  # the FastMatch view of each game a player of play() has decided in

    def players_of(self, i: int) -> int:
        return self.num_players

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

    def play(self, games: Sequence[int], policy: Any) -> list[int]:
        """The decisions of ``policy``, a player of :mod:`agents.players` (``act(obs, env)``), in ``games``:
        ``env`` is the game's :class:`~carc_env.env.fast_match.FastMatch` and ``obs`` its observation for
        the deciding seat (only the mask for a player whose ``uses_observation`` is False), as the
        vector env gives its opponents."""
        from carc_env.env.fast_match import FastMatch

        out = []
        for i in games:
            m = self._matches.get(i)
            if m is None:
                m = self._matches[i] = FastMatch(self.options, self.batch, i, started=True)
            obs = m.observe(m.player) if getattr(policy, "uses_observation", True) else {"action_mask": m.mask()}
            out.append(int(policy.act(obs, m)))
        return out

    def step(self, games: Sequence[int], actions: Sequence[int]) -> None:
        self.batch.step_games(games, actions)


class MixedGames:
    """N game slots whose player count is drawn per game from ``counts``: one games object
    (:class:`CompiledGames` or :class:`PythonGames`, N games each) per count, slot ``i`` playing game ``i``
    of its current count's object.  Observations come in the seat-padded layout (:mod:`agents.seats`),
    the same for every count, so one network reads them all."""

    def __init__(
        self, env_kwargs: dict[str, Any], n: int, seats: int | None = None, weights: Sequence[float] | None = None
    ) -> None:
        from .seats import MAX_SEATS, SeatAdapter

        counts = [int(c) for c in env_kwargs["num_players"]]
        if not counts or len(set(counts)) != len(counts):
            raise ValueError(f"num_players: {counts!r}: give distinct player counts, e.g. [2, 3, 4, 5]")
        self.env_kwargs = dict(env_kwargs)
        self.counts = counts
        self.weights = _count_weights(weights, counts)
        self.seats = seats or MAX_SEATS
        self.n = n
        self.parts = {c: _single_games({**env_kwargs, "num_players": c}, n) for c in counts}
        self.adapters = {c: SeatAdapter(g.spec_env(), self.seats) for c, g in self.parts.items()}
        layouts = {ad.layout() for ad in self.adapters.values()}
        if len(layouts) != 1:
            raise ValueError("the seat-padded observation layouts of the player counts differ; cannot mix them")
        self.count = np.array([counts[i % len(counts)] for i in range(n)], dtype=np.int64)
        engines = {g.engine for g in self.parts.values()}
        self.engine = engines.pop() if len(engines) == 1 else "mixed"
        self.num_players = self.seats  # the widest table (per slot: players_of)

    def players_of(self, i: int) -> int:
        return int(self.count[i])

    def spec_env(self) -> Any:
        return self.parts[self.counts[-1]].spec_env()

    def net_shapes(self) -> Any:
        from .policy import shapes_from_env

        return shapes_from_env(self.spec_env(), seats=self.seats)

    def reset(self, i: int, seed: int) -> None:
        """A new game in slot ``i``; its player count is drawn from the seed (so a game is a function of
        its seed, whatever the slot played before); with ``weights``, count ``k`` in proportion to
        ``weights[k]``."""
        rng = np.random.default_rng(seed)
        weights = getattr(self, "weights", None)  # games pickled before weights existed: uniform
        k = rng.integers(len(self.counts)) if weights is None else rng.choice(len(self.counts), p=weights)
        self.count[i] = self.counts[int(k)]
        self.parts[int(self.count[i])].reset(i, seed)

    def _split(self, games: Sequence[int]) -> dict[int, list[int]]:
        """Positions in ``games`` per player count."""
        out: dict[int, list[int]] = {}
        for j, i in enumerate(games):
            out.setdefault(int(self.count[i]), []).append(j)
        return out

    def over(self) -> np.ndarray:
        res = np.zeros(self.n, dtype=bool)
        for c, g in self.parts.items():
            sel = self.count == c
            res[sel] = g.over()[sel]
        return res

    def movers(self) -> np.ndarray:
        res = np.zeros(self.n, dtype=np.int64)
        for c, g in self.parts.items():
            sel = self.count == c
            res[sel] = g.movers()[sel]
        return res

    def scores(self, i: int) -> list[int]:
        return self.parts[int(self.count[i])].scores(i)

    def observe(self, games: Sequence[int], seats: Sequence[int]) -> list[dict]:
        out: list[dict] = [{}] * len(games)
        for c, pos in self._split(games).items():
            obs = self.parts[c].observe([games[j] for j in pos], [seats[j] for j in pos])
            ad = self.adapters[c]
            for j, o in zip(pos, obs, strict=True):
                out[j] = ad(o)
        return out

    def masks(self, games: Sequence[int]) -> list[np.ndarray]:
        out: list[np.ndarray] = [np.zeros(0)] * len(games)
        for c, pos in self._split(games).items():
            for j, m in zip(pos, self.parts[c].masks([games[j] for j in pos]), strict=True):
                out[j] = m
        return out

    def greedy(self, games: Sequence[int], policy: Any) -> list[int]:
        out = [0] * len(games)
        for c, pos in self._split(games).items():
            for j, a in zip(pos, self.parts[c].greedy([games[j] for j in pos], policy), strict=True):
                out[j] = int(a)
        return out

    def step(self, games: Sequence[int], actions: Sequence[int]) -> None:
        for c, pos in self._split(games).items():
            self.parts[c].step([games[j] for j in pos], [actions[j] for j in pos])


def _single_games(env_kwargs: dict[str, Any], n: int) -> PythonGames | CompiledGames:
    from carc_env.env.options import EnvOptions
    from carc_env.fast import select_engine

    options = EnvOptions.from_kwargs(**{**env_kwargs, "action_features": True})  # the trainer reads them
    engine, _ = select_engine(options, options.engine)
    return CompiledGames(env_kwargs, n) if engine == "numba" else PythonGames(env_kwargs, n)


def _count_weights(weights: Sequence[float] | None, counts: list[int]) -> np.ndarray | None:
    """The chance of each player count (``None``: all alike), checked: one positive weight per count."""
    if weights is None or len(weights) == 0:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(counts),) or not np.all(np.isfinite(w)) or not np.all(w > 0):
        raise ValueError(
            f"count weights {list(weights)!r}: give one positive number per player count {counts!r} "
            "(or none for every count alike)"
        )
    return w / w.sum()


def make_games(
    env_kwargs: dict[str, Any], n: int, weights: Sequence[float] | None = None
) -> PythonGames | CompiledGames | MixedGames:
    """:class:`CompiledGames` where the compiled engine covers ``env_kwargs`` (and its option ``engine``
    allows it), else :class:`PythonGames`; with a list of player counts (``num_players: [2, 3, 4, 5]``)
    a :class:`MixedGames` over them, drawing each new game's count in proportion to ``weights``
    (``None``: uniformly).  ``weights`` with a single player count is an error."""
    if isinstance(env_kwargs.get("num_players"), (list, tuple)):
        return MixedGames(env_kwargs, n, weights=weights)
    if weights is not None and len(weights):
        raise ValueError(f"count weights {list(weights)!r} need a list of player counts in num_players")
    return _single_games(env_kwargs, n)


__all__ = ["CompiledGames", "MixedGames", "PythonGames", "make_games"]
