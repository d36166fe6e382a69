"""Gymnasium single-agent Carcassonne: one learner seat, opponents from a policy list.

Registered as ``"carc_env/Carcassonne-v0"``::

    import gymnasium, carc_env
    env = gymnasium.make("carc_env/Carcassonne-v0", opponents=[carc_env.GreedyPolicy(0.1)])

Contract
--------
* Options: every option of the AEC env (:mod:`carc_env.env.options`) plus
  ``opponents`` (a policy or a list of policies, :mod:`carc_env.policies`;
  default ``[RandomPolicy()]``) and ``learner_seat`` (an int fixes the seat;
  ``None``, the default, rotates it).
* ``reset(seed=None, options=None)``: the learner's seat is
  ``options["learner_seat"]`` if given, else the constructor's
  ``learner_seat``, else ``k % num_players`` where ``k`` counts episodes
  from the last seeded reset's seed (``seed % num_players`` for the seeded
  reset itself, ``(seed + 1) % num_players`` for the next unseeded one, ...).
  So a seeded reset fully determines what follows, seats included, whatever
  resets came before (Gymnasium's ``check_env`` checks this); before any
  seeded reset ``k`` counts from 0.  Each opponent seat gets
  a policy: the list in order when it holds exactly ``num_players - 1``
  policies, else one drawn uniformly (with the env's seeded generator).
  ``options["draw_order"]`` forces the draw order; ``options["record"]``
  (and ``"upto"``) starts at the position of a saved game record
  (:mod:`carc_env.env.start`).  Opponents before the learner's first
  decision play inside ``reset``.
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
* Illegal actions (``illegal_action=``, a constructor option):

  - ``"loss"`` (default, PettingZoo's classic convention, as in
    ``carc_env.env()``'s ``TerminateIllegalWrapper``): an action that the
    mask disables ends the episode at once with ``terminated=True`` and
    reward ``illegal_reward`` (default ``-1.0``, a loss under
    ``reward="win_loss"``) plus whatever the learner had earned since its
    previous decision; the game state is left as it was (the observation is
    the one the action was chosen from) and ``info`` says why:
    ``info["illegal_action"]`` (the action) and ``info["illegal_reason"]``
    (a sentence naming the action, the phase and the number of legal
    actions).  This is what lets Gymnasium's and Stable-Baselines3's
    ``check_env`` step the env with unmasked ``action_space.sample()``
    actions; a masked learner (``action_masks()``) never triggers it.
  - ``"raise"``: an illegal action raises
    :class:`carc_env.IllegalActionError` and changes nothing (the
    behaviour before this option existed).

  In both modes an action outside ``Discrete(N)``, or a ``step`` after the
  episode ended or before ``reset``, raises
  :class:`~carc_env.IllegalActionError`: that is a bug in the caller, not a
  move.
* ``step`` takes an integer (Python or numpy integer, integer 0-d array or
  tensor); ``None``, floats, strings and bools raise
  ``carc_env.core.ActionTypeError`` (an ``IllegalActionError`` and a
  ``TypeError``) naming the value and its type, before anything changes.
* Observations and masks are read-only arrays (see :mod:`carc_env.env.aec`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..core import ConfigError, Game, IllegalActionError, as_index
from ..encoding import ActionCodec
from ..policies import RandomPolicy
from .aec import raw_env
from .options import RENDER_MODES

GYM_RESET_OPTIONS = ("draw_order", "learner_seat", "record", "upto")
ILLEGAL_ACTION_MODES = ("loss", "raise")


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

    def __init__(
        self,
        opponents: Any = None,
        learner_seat: int | None = None,
        illegal_action: str = "loss",
        illegal_reward: float = -1.0,
        **options: Any,
    ) -> None:
        super().__init__()
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ConfigError(
                f"option illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}"
            )
        if (
            isinstance(illegal_reward, bool)
            or not isinstance(illegal_reward, (int, float))
            or not math.isfinite(illegal_reward)
        ):
            raise ConfigError(f"option illegal_reward must be a finite number, got {illegal_reward!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._ended = False  # an illegal action ended the episode (the game itself goes on)
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
        # the match's cheap accessors, not aec.game: on the compiled engine the game object is rebuilt
        # by replay when read, and once read it follows every step through the Python engine
        aec, match = self.aec, self.aec.match
        while not match.over and match.player != self.learner:
            seat = match.player
            policy = self.seat_policies[seat]
            if getattr(policy, "uses_observation", True):
                obs = match.observe(seat)  # the dict observation, whatever obs_format the learner sees
            else:
                obs = {"action_mask": aec.match.mask()}
            aec.step(policy.act(obs, aec))
            self._collect()

    def _obs_info(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        aec = self.aec
        agent = aec.possible_agents[self.learner]
        obs = aec.observe(agent)
        info: dict[str, Any] = dict(aec.infos[agent])
        info["learner_seat"] = self.learner
        return obs, info

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if options is not None and not isinstance(options, dict):
            raise ConfigError(
                f"reset options must be a dict (keys {list(GYM_RESET_OPTIONS)}) or None, got {options!r} "
                f"of type {type(options).__name__}"
            )
        options = dict(options or {})
        unknown = sorted(set(options) - set(GYM_RESET_OPTIONS), key=repr)
        if unknown:
            raise ConfigError(f"unknown reset option(s) {unknown}; known: {list(GYM_RESET_OPTIONS)}")
        n = self.num_players
        seat = options.get("learner_seat", self.learner_seat_option)
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n
        ):
            raise ConfigError(f"reset option learner_seat must be a seat 0..{n - 1}, got {seat!r}")
        # The game first: a reset that fails there (bad seed, bad draw order) changes nothing.
        aec_options: dict[str, Any] | None = {
            k: options[k] for k in ("draw_order", "record", "upto") if k in options
        } or None
        self.aec.reset(seed=seed, options=aec_options)
        super().reset(seed=seed)
        if seed is not None:
            self._episode = int(seed)  # the seat rotation restarts from the seed: nothing before matters
        if seat is None:
            seat = self._episode % n
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
        self._reward = 0.0
        self._ended = False
        self._play_opponents()  # their rewards to the learner (score_delta) come with its first step
        obs, info = self._obs_info()
        return obs, info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec, match = self.aec, self.aec.match
        if not match.started:
            raise IllegalActionError("call reset() before step()")
        if match.over or self._ended:
            raise IllegalActionError("the episode is over; call reset()")
        if match.player != self.learner:  # pragma: no cover - _play_opponents guarantees it
            raise IllegalActionError(f"seat {match.player} decides, not the learner's seat {self.learner}")
        action = as_index(action, "an action")
        n = int(self.aec.match.codec.n)  # the Discrete action space's size
        if not 0 <= action < n:
            raise IllegalActionError(
                f"action {action!r} is outside the action space {self.action_space} (an int from 0 to {n - 1})"
            )
        if self.illegal_action == "loss" and not aec.match.mask()[action]:
            return self._illegal(action)
        aec.step(action)  # raises IllegalActionError for an illegal action (illegal_action="raise")
        self._collect()
        self._play_opponents()
        obs, info = self._obs_info()
        reward, self._reward = self._reward, 0.0
        terminated = bool(match.over)
        if terminated:
            scores = match.scores
            best = max(scores)
            info["winners"] = [p for p, s in enumerate(scores) if s == best]
        return obs, reward, terminated, False, info

    def _illegal(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """End the episode with a loss for an illegal action (``illegal_action="loss"``); the game is untouched."""
        try:
            what = self.aec.action_to_text(action)
        except (IllegalActionError, ValueError):
            what = "not expressible in this state"
        legal = int(self.aec.match.mask().sum())
        reason = (
            f"action {action} ({what}) is not legal for the learner (seat {self.learner}) in phase "
            f"{self.aec.match.phase!r}; {legal} legal action(s), see info['action_mask'] or action_masks()"
        )
        obs, info = self._obs_info()
        # the state did not change, so the encoder's cached arrays (handed out with the previous
        # observation) would come back again: give the caller its own copies
        obs = {k: v.copy() for k, v in obs.items()}
        info = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in info.items()}
        info["illegal_action"] = action
        info["illegal_reason"] = reason
        reward, self._reward = self._reward + self.illegal_reward, 0.0
        self._ended = True
        return obs, reward, True, False, info

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


__all__ = ["CarcassonneGymEnv"]
