"""A batched environment stepping N games at once, for PPO self-play rollouts.

PettingZoo has no vector API for turn-based games and SuperSuit breaks on
dict observations with masks, so this is a small purpose-built one.

Contract
--------
``CarcassonneVectorEnv(num_envs, seed=None, opponents=None, learner_seat=None, threads=None, **options)``
(options as in :mod:`carc_env.env.options`; ``threads``: the compiled engine's threads, see Engines).

Every game has, at every moment, one *acting seat*: the seat that must decide
now.  Observations are returned from that seat's point of view (the encoding
is player-relative, so one policy network serves every seat).

* ``reset(seed=None) -> (obs, infos)``: game ``i`` is reset with seed
  ``seed + i`` (unseeded: a fresh stream); a seeded reset also restarts the
  episode counters that rotate the learner seat, so it fully determines what
  follows whatever came before.  ``obs`` is a dict of stacked
  arrays: ``board (N, C, H, W) uint8``, ``globals (N, G) float32``,
  ``windows (N, P, W) uint8``, ``action_mask (N, A) int8``.
* ``step(actions) -> (obs, rewards, dones, infos)``: ``actions[i]`` is the
  acting seat's action in game ``i`` (an integer enabled in the mask).  The
  whole batch is checked before any game moves: one ill-typed or illegal
  action raises (``ActionTypeError`` / ``IllegalActionError`` naming
  ``actions[i]``) and changes nothing, so the call can be retried.
  ``rewards`` is ``float32 (N, num_players)``: what each *absolute* seat
  earned during this step (terminal rewards included), so a self-play
  learner credits ``rewards[i, s]`` to seat ``s``'s latest transition in game
  ``i``.  ``dones[i]`` is True when game ``i`` ended in this step; it is then
  reset automatically (the next game's seed continues game ``i``'s seed
  stream) and ``obs[i]`` is the first observation of the new game.
  ``infos[i]`` has ``seat`` (the acting seat of ``obs[i]``) and, when done,
  ``final_scores``, ``winners`` and ``episode_length``.
* ``seats``: ``int64 (N,)``, the acting seat of each returned observation
  (also in ``infos``).  ``action_masks()`` returns the masks as bool.
* With ``opponents`` (a policy or a list, as in the Gymnasium env) the env
  plays every seat except a learner seat itself and returns only the
  learner's decisions: the learner seat is ``learner_seat`` if given, else it
  rotates with the episode number of each game.  ``rewards`` still has one
  column per seat; the learner's column is what a single-agent learner wants
  (``rewards[np.arange(N), env.learner_seats]``).

Game ``i`` steps exactly like a :class:`carc_env.env.aec.raw_env` reset with
``seed + i`` and then reset without a seed after each game (tested).

Engines: where the compiled engine (:mod:`carc_env.fast`) covers the
configuration (option ``engine``, default ``"auto"``), self-play steps the
whole batch in one kernel call that decodes, applies, auto-resets and writes
the stacked observations (on ``threads`` threads, default: the cores this
process may use); with ``opponents`` each game steps on the compiled engine
one decision at a time.  ``engine`` says which runs (``"numba"`` or
``"python"``), ``engine_reason`` why the Python engine does.  The outputs are
identical either way (tested).

The returned observation arrays are read-only (``action_masks()`` is computed
from them); copy them to modify.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..core import ActionTypeError, ConfigError, IllegalActionError, as_index
from ..fast import select_engine
from .fast_match import FastMatch
from .gym_env import _policies
from .match import Match
from .options import EnvOptions


class CarcassonneVectorEnv:
    """N games in lockstep with stacked observations.  See the module docstring."""

    def __init__(
        self,
        num_envs: int,
        seed: int | None = None,
        opponents: Any = None,
        learner_seat: int | None = None,
        threads: int | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive integer, got {num_envs!r}")
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be None or a positive integer, got {threads!r}")
        self.options = EnvOptions.from_kwargs(**options)
        self.num_envs = num_envs
        self.num_players = n = self.options.num_players
        self.engine, self.engine_reason = select_engine(self.options.engine_config(), self.options.engine)
        self._batch = None
        if self.engine == "numba":
            from ..fast.engine import FastBatch, default_threads

            self.threads = threads or min(default_threads(), num_envs)
            self._batch = FastBatch(self.options, num_envs, threads=self.threads)
            self.matches: list[Any] = [FastMatch(self.options, self._batch, i) for i in range(num_envs)]
        else:
            self.threads = 1
            self.matches = [Match(self.options) for _ in range(num_envs)]
        self.self_play = opponents is None
        self.opponents = [] if opponents is None else _policies(opponents)
        if learner_seat is not None and (not isinstance(learner_seat, int) or not 0 <= learner_seat < n):
            raise ConfigError(f"learner_seat must be None or a seat 0..{n - 1}, got {learner_seat!r}")
        self.learner_seat = learner_seat
        m0 = self.matches[0]
        enc, codec = m0.encoder, m0.codec
        self.codec = codec
        self.encoder = enc
        self.channel_names = enc.channel_names
        self.global_names = enc.global_names
        self.window_names = enc.window_names
        self.single_observation_space = m0.observation_space()
        self.single_action_space = spaces.Discrete(codec.n)
        self.seats = np.zeros(num_envs, dtype=np.int64)
        self.learner_seats = np.zeros(num_envs, dtype=np.int64)
        self._episodes = np.zeros(num_envs, dtype=np.int64)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._seat_policies: list[dict[int, Any]] = [{} for _ in range(num_envs)]
        self._seed = seed
        self._pending = np.zeros((num_envs, n), dtype=np.float32)
        self._obs: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------------ internals
    def _empty_batch(self) -> dict[str, np.ndarray]:
        enc, N = self.encoder, self.num_envs
        return {
            "board": np.empty((N, *enc.board_shape), dtype=np.uint8),
            "globals": np.empty((N, enc.n_globals), dtype=np.float32),
            "windows": np.empty((N, *enc.windows_shape), dtype=np.uint8),
            "action_mask": np.empty((N, self.codec.n), dtype=np.int8),
        }

    @property
    def _batched(self) -> bool:
        """Self-play on the compiled engine: the whole batch steps in one kernel call."""
        return self._batch is not None and self.self_play

    def _start(self, i: int, seed: int | None) -> None:
        m = self.matches[i]
        if self._batched:
            m.reset(seed, prepare_next=True)  # the next game's draw order is ready for the in-kernel reset
        else:
            m.reset(seed)
        n = self.num_players
        if not self.self_play:
            seat = self.learner_seat if self.learner_seat is not None else int(self._episodes[i] % n)
            self.learner_seats[i] = seat
            others = [s for s in range(n) if s != seat]
            if len(self.opponents) == n - 1:
                self._seat_policies[i] = dict(zip(others, self.opponents, strict=True))
            else:
                rng = np.random.default_rng(np.random.SeedSequence([m.seed or 0, 0x0770]))
                picks = rng.integers(len(self.opponents), size=len(others))
                self._seat_policies[i] = {s: self.opponents[int(k)] for s, k in zip(others, picks, strict=True)}
        self._episodes[i] += 1
        self._lengths[i] = 0

    def _advance(self, i: int, rewards: np.ndarray) -> None:
        """Play opponents' decisions of game i until the learner decides or the game ends."""
        if self.self_play:
            return
        m = self.matches[i]
        learner = self.learner_seats[i]
        while not m.over and m.player != learner:
            policy = self._seat_policies[i][m.player]
            if getattr(policy, "uses_observation", True):
                obs = m.observe(m.player)
            else:
                obs = {"action_mask": m.mask()}
            rewards += m.step(int(policy.act(obs, m)))
            self._lengths[i] += 1

    def _write_obs(self, i: int, batch: dict[str, np.ndarray]) -> None:
        m = self.matches[i]
        seat = m.player
        self.seats[i] = seat
        m.observe_into(seat, {k: v[i] for k, v in batch.items()})

    # ------------------------------------------------------------------ API
    def _checked_actions(self, actions: Any) -> list[int]:
        """The batch as ints, each legal in its game; raise naming the first bad one.  Changes nothing.

        Each game's own ``check`` says what is wrong (the same words on both engines).  On the batched
        compiled path the legality of the whole batch is first looked up at once in the published masks
        (the acting seats' masks, read-only, what each game's ``check`` reads too), so only a bad action
        costs a per-game check."""
        try:
            arr = np.asarray(actions)
        except ValueError as exc:  # ragged nesting
            raise ValueError(f"actions must be a sequence of {self.num_envs} integers: {exc}") from None
        if arr.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {arr.shape}")
        if arr.dtype == object:
            ints = [as_index(a, f"actions[{i}]") for i, a in enumerate(arr.tolist())]
        elif np.issubdtype(arr.dtype, np.integer):
            ints = arr.tolist()
        else:
            raise ActionTypeError(f"actions must be integers, got an array of dtype {arr.dtype}: {arr.tolist()!r:.200}")
        suspects: Any = range(self.num_envs)
        if self._batched and self._obs is not None:
            mask = self._obs["action_mask"]
            n = mask.shape[1]
            vals = np.array([a if 0 <= a < n else -1 for a in ints], dtype=np.int64)
            legal = (vals >= 0) & (mask[np.arange(self.num_envs), np.maximum(vals, 0)] != 0)
            suspects = np.flatnonzero(~legal)[:1].tolist()
        for i in suspects:
            try:
                self.matches[i].check(ints[i])
            except IllegalActionError as exc:
                raise type(exc)(f"actions[{i}] (game {i}): {exc}; no game was stepped") from None
        if self._batched and suspects:  # pragma: no cover - the published mask and the game disagree: a bug
            raise RuntimeError(f"actions[{suspects[0]}]: the published mask and game {suspects[0]}'s check disagree")
        return ints

    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer or None, got {seed!r} of type {type(seed).__name__}")
            self._seed = int(seed)
            self._episodes[:] = 0  # the learner-seat rotation restarts too: a seeded reset determines everything
        batch = self._empty_batch()
        infos: list[dict[str, Any]] = []
        self._pending[:] = 0
        for i in range(self.num_envs):
            self._start(i, None if self._seed is None else self._seed + i)
            self._advance(i, self._pending[i])
            if not self._batched:
                self._write_obs(i, batch)
        if self._batched:
            batch = self._batch.observe_acting()
            self.seats[:] = [m.player for m in self.matches]
        infos = [{"seat": int(s)} for s in self.seats.tolist()]
        self._publish(batch)
        return batch, infos

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._obs is not None:  # unpickled arrays come back writable
            self._publish(self._obs)

    def _publish(self, batch: dict[str, np.ndarray]) -> None:
        for a in batch.values():
            a.flags.writeable = False
        self._obs = batch

    def step(
        self, actions: np.ndarray | list[int]
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        actions = self._checked_actions(actions)  # the whole batch, before any game moves
        if self._batched:
            return self._step_batched(actions)
        rewards = self._pending
        self._pending = np.zeros_like(rewards)
        dones = np.zeros(self.num_envs, dtype=bool)
        batch = self._empty_batch()
        infos: list[dict[str, Any]] = []
        for i in range(self.num_envs):
            m = self.matches[i]
            rewards[i] += m.step(actions[i])
            self._lengths[i] += 1
            self._advance(i, rewards[i])
            info: dict[str, Any] = {}
            if m.over:
                dones[i] = True
                scores = m.scores
                best = max(scores)
                info["final_scores"] = tuple(scores)
                info["winners"] = tuple(p for p, s in enumerate(scores) if s == best)
                info["episode_length"] = int(self._lengths[i])
                self._start(i, None)
                self._advance(i, self._pending[i])  # opponents' moves before the learner's first decision
            self._write_obs(i, batch)
            info["seat"] = int(self.seats[i])
            view = m.view()
            if view.outside:
                info["placements_outside_window"] = view.outside
            if view.dropped:
                info["actions_out_of_range"] = view.dropped
            infos.append(info)
        self._publish(batch)
        return batch, rewards, dones, infos

    def _step_batched(
        self, actions: list[int]
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Self-play on the compiled engine: one kernel call for the whole batch (actions checked already)."""
        acts = np.asarray(actions, dtype=np.int64)
        batch, rewards64, dones, final, eplen, seats = self._batch.step(acts)
        rewards = rewards64.astype(np.float32)
        self.seats[:] = seats
        infos: list[dict[str, Any]] = [{"seat": int(s)} for s in seats.tolist()]
        for i in np.flatnonzero(dones).tolist():
            scores = tuple(int(v) for v in final[i])
            best = max(scores)
            infos[i].update(
                final_scores=scores,
                winners=tuple(p for p, s in enumerate(scores) if s == best),
                episode_length=int(eplen[i]),
            )
            self._episodes[i] += 1
        outside = self._batch.outside_all()
        for i in np.flatnonzero(outside).tolist():
            infos[i]["placements_outside_window"] = int(outside[i])
        self._publish(batch)  # fresh arrays each step, handed out read-only like the Python path's
        return batch, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Masks of the current observations as bool ``(N, A)``."""
        if self._obs is None:
            raise RuntimeError("call reset() first")
        return self._obs["action_mask"].astype(bool)

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()


__all__ = ["CarcassonneVectorEnv"]
