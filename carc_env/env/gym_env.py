"""Gymnasium single-agent Carcassonne: one learner seat, opponents from a policy list.

Registered as ``"carc_env/Carcassonne-v0"``::

    import gymnasium, carc_env.env
    env = gymnasium.make("carc_env/Carcassonne-v0", opponents=[GreedyPolicy(0.1)])

Contract
--------
* Options: every option of the AEC env (:mod:`carc_env.env.options`) plus
  ``opponents`` (a policy or a list of policies, :mod:`carc_env.policies`;
  default ``[RandomPolicy()]``) and ``learner_seat`` (an int fixes the seat;
  ``None``, the default, rotates it).
* ``reset(seed=None, options=None)``: the learner's seat is
  ``options["learner_seat"]`` if given, else the constructor's
  ``learner_seat``, else ``seed % num_players`` for a seeded reset and the
  episode counter modulo ``num_players`` otherwise.  Each opponent seat gets
  a policy: the list in order when it holds exactly ``num_players - 1``
  policies, else one drawn uniformly (with the env's seeded generator).
  ``options["draw_order"]`` forces the draw order.  Opponents before the
  learner's first decision play inside ``reset``.
* Observations, action space and mask are those of the learner's seat in the
  AEC env (``obs["action_mask"]``, ``info["action_mask"]``, and
  ``action_masks()`` for sb3-contrib's ``MaskablePPO``).
* ``step(action)``: applies the learner's action, then the opponents'
  decisions until the learner must decide again or the game ends.  The
  reward is the learner's reward (reward mode of the AEC env) summed over
  everything that happened since its previous decision (the first step also
  carries what the opponents' moves inside ``reset`` earned it).  ``terminated`` is
  True when the game ends (never ``truncated``); the final info holds
  ``final_scores`` (absolute seats), ``learner_seat`` and ``winners``.
* An illegal action raises :class:`carc_env.IllegalActionError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..core import ConfigError, Game, IllegalActionError
from ..encoding import ActionCodec
from ..policies import RandomPolicy
from .aec import raw_env
from .options import RENDER_MODES

GYM_RESET_OPTIONS = ("draw_order", "learner_seat")


def _policies(opponents: Any) -> list[Any]:
    if opponents is None:
        return [RandomPolicy()]
    if hasattr(opponents, "act"):
        return [opponents]
    if not isinstance(opponents, Sequence) or not opponents:
        raise ConfigError(f"option opponents must be a policy or a non-empty list of policies, got {opponents!r}")
    for p in opponents:
        if not callable(getattr(p, "act", None)):
            raise ConfigError(f"option opponents: {p!r} has no act(obs, env) method")
    return list(opponents)


class CarcassonneGymEnv(gymnasium.Env):
    """Single-agent view of the game.  See the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2, "name": "carcassonne_v0"}

    def __init__(self, opponents: Any = None, learner_seat: int | None = None, **options: Any) -> None:
        super().__init__()
        self.aec = raw_env(**options)
        self.render_mode = self.aec.render_mode
        self.num_players = self.aec.options.num_players
        self.opponents = _policies(opponents)
        if learner_seat is not None and (not isinstance(learner_seat, int) or not 0 <= learner_seat < self.num_players):
            raise ConfigError(
                f"option learner_seat must be None or a seat 0..{self.num_players - 1}, got {learner_seat!r}"
            )
        self.learner_seat_option = learner_seat
        agent = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent)
        self.action_space = self.aec.action_space(agent)
        self.learner = 0
        self.seat_policies: dict[int, Any] = {}
        self._episode = 0
        self._reward = 0.0
        self._policy_rng = np.random.default_rng()

    # ------------------------------------------------------------------ helpers
    @property
    def game(self) -> Game:
        return self.aec.game

    @property
    def codec(self) -> ActionCodec:
        return self.aec.codec

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (for sb3-contrib's MaskablePPO)."""
        return self.aec.match.mask().astype(bool)

    def _collect(self) -> None:
        """Add the learner's pending reward and leave it pending in the AEC env."""
        agent = self.aec.possible_agents[self.learner]
        self._reward += float(self.aec.rewards.get(agent, 0.0))

    def _play_opponents(self) -> None:
        aec, game = self.aec, self.aec.game
        while not game.over and game.player != self.learner:
            seat = game.player
            policy = self.seat_policies[seat]
            if getattr(policy, "uses_observation", True):
                obs = aec.observe(aec.possible_agents[seat])
            else:
                obs = {"action_mask": aec.match.mask()}
            aec.step(policy.act(obs, aec))
            self._collect()

    def _obs_info(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        aec = self.aec
        agent = aec.possible_agents[self.learner]
        obs = aec.observe(agent)
        info = dict(aec.infos[agent])
        info["learner_seat"] = self.learner
        return obs, info

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - set(GYM_RESET_OPTIONS))
        if unknown:
            raise ConfigError(f"unknown reset option(s) {unknown}; known: {list(GYM_RESET_OPTIONS)}")
        n = self.num_players
        seat = options.get("learner_seat", self.learner_seat_option)
        if seat is None:
            seat = seed % n if seed is not None else self._episode % n
        if not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ConfigError(f"reset option learner_seat must be a seat 0..{n - 1}, got {seat!r}")
        self.learner = int(seat)
        self._episode += 1
        if seed is not None:
            self._policy_rng = np.random.default_rng(np.random.SeedSequence([seed, 0x0770]))
        others = [s for s in range(n) if s != self.learner]
        if len(self.opponents) == n - 1:
            self.seat_policies = dict(zip(others, self.opponents, strict=True))
        else:
            picks = self._policy_rng.integers(len(self.opponents), size=len(others))
            self.seat_policies = {s: self.opponents[int(i)] for s, i in zip(others, picks, strict=True)}
        if seed is not None:
            for k, s in enumerate(others):
                reseed = getattr(self.seat_policies[s], "seed", None)
                if callable(reseed):
                    reseed(int(np.random.SeedSequence([seed, 0x0771, k]).generate_state(1)[0]))
        aec_options = {"draw_order": options["draw_order"]} if "draw_order" in options else None
        self.aec.reset(seed=seed, options=aec_options)
        self._reward = 0.0
        self._play_opponents()  # their rewards to the learner (score_delta) come with its first step
        obs, info = self._obs_info()
        return obs, info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec, game = self.aec, self.aec.game
        if game is None:
            raise IllegalActionError("call reset() before step()")
        if game.over:
            raise IllegalActionError("the game is over; call reset()")
        if game.player != self.learner:  # pragma: no cover - _play_opponents guarantees it
            raise IllegalActionError(f"seat {game.player} decides, not the learner's seat {self.learner}")
        aec.step(int(action))
        self._collect()
        self._play_opponents()
        obs, info = self._obs_info()
        reward, self._reward = self._reward, 0.0
        terminated = bool(game.over)
        if terminated:
            best = max(game.scores)
            info["winners"] = [p for p, s in enumerate(game.scores) if s == best]
        return obs, reward, terminated, False, info

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


__all__ = ["CarcassonneGymEnv"]
