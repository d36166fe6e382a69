"""Search on top of the learned network: PUCT guided by a PPO checkpoint (a separate agent).

``PPOSearchPolicy`` is :class:`carc_env.search.MCTSPolicy` with a
:class:`NetworkGuide` instead of rollouts: at every new leaf one batched
forward pass of the network over every seat's observation of that state
gives

* the *prior* of the leaf's actions: the deciding seat's policy (softmax of
  its masked logits over the leaf's legal actions; an action outside the
  observation window, which the network cannot express, gets prior 0);
* the *value* of the leaf for every player ``p``:
  ``score_scale * (p's score - best other score now) + V_p``, where ``V_p`` is
  the value head on ``p``'s observation.  The PPO value estimates the rest of
  the return, whose rewards are ``score_scale`` x the change of that margin
  plus ``win_bonus`` x the outcome (``agents/ppo.py``), so the sum estimates
  ``score_scale * final margin + win_bonus * outcome``; a finished game is
  valued exactly that way (``terminal``).  ``score_scale`` and ``win_bonus``
  are read from the checkpoint's training config.

The tree, the determinised draws and the budget options are those of
:mod:`carc_env.search.mcts` (PUCT selection with min-max normalised values,
``c`` default 1.5).  The plain checkpoint (argmax of the policy,
:class:`agents.policy.PPOPolicy`) stays a player of its own: the tournament
names this one ``ppo-mcts:PATH[:N]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from carc_env.core.actions import IllegalActionError
from carc_env.encoding.placements import placement_features
from carc_env.encoding.spots import spot_features
from carc_env.search import MCTSPolicy

from .network import PolicyNet, masked_logits
from .policy import obs_to_tensors


class NetworkGuide:
    """Priors and values from a :class:`PolicyNet` (see the module docstring)."""

    uses_priors = True

    def __init__(
        self, net: PolicyNet, env_kwargs: dict[str, Any], score_scale: float = 0.05, win_bonus: float = 1.0
    ) -> None:
        import carc_env

        self.net = net.eval()
        env = carc_env.raw_env(**env_kwargs)  # its own codec and encoder (their caches follow this guide's games)
        self.codec = env.codec
        self.encoder = env.match.encoder
        self.num_players = len(env.possible_agents)
        self.max_spots = self.codec.follower_range.size - 1
        self.score_scale = float(score_scale)
        self.win_bonus = float(win_bonus)
        self.forwards = 0

    def __repr__(self) -> str:
        return f"NetworkGuide(score_scale={self.score_scale}, win_bonus={self.win_bonus})"

    def _observations(self, game: Any) -> list[dict[str, np.ndarray]]:
        """Every seat's observation with the action features (empty for the seats not deciding)."""
        view = self.codec.view(game)
        out = []
        for seat in range(game.num_players):
            obs = dict(self.encoder.encode(game, seat, view))
            obs["place_index"], obs["place_features"] = placement_features(game, seat, self.codec, view)
            obs["spots"] = spot_features(game, seat, self.max_spots)
            out.append(obs)
        return out

    @torch.no_grad()
    def expand(self, game: Any, actions: Sequence[Any], rng: Any) -> tuple[list[float], list[float]]:
        obs = self._observations(game)
        batch = obs_to_tensors(obs)
        logits, values = self.net(*batch.inputs())
        self.forwards += 1
        decider = game.player
        ml = masked_logits(logits[decider : decider + 1], batch.mask[decider : decider + 1])[0]
        flat = []
        for a in actions:
            try:
                flat.append(self.codec.encode(game, a))
            except IllegalActionError:  # outside the observation window: the net cannot express it
                flat.append(-1)
        sel = torch.tensor([max(f, 0) for f in flat], dtype=torch.int64)
        lg = ml[sel].double()
        lg[torch.tensor([f < 0 for f in flat])] = -torch.inf
        if torch.isinf(lg).all():
            priors = [1.0] * len(actions)
        else:
            priors = torch.softmax(lg, dim=0).tolist()
        scores = game.scores
        n = len(scores)
        vals = values.tolist()
        out = []
        for p in range(n):
            margin = scores[p] - max(scores[q] for q in range(n) if q != p)
            out.append(self.score_scale * margin + vals[p])
        return priors, out

    def terminal(self, game: Any) -> list[float]:
        scores = game.scores
        n = len(scores)
        best = max(scores)
        k = sum(1 for s in scores if s == best)
        out = []
        for p in range(n):
            margin = scores[p] - max(scores[q] for q in range(n) if q != p)
            outcome = (1.0 if k == 1 else 0.0) if scores[p] == best else -1.0
            out.append(self.score_scale * margin + self.win_bonus * outcome)
        return out


class PPOSearchPolicy(MCTSPolicy):
    """PUCT search guided by a PPO network: ``act(obs, env) -> int``.  A separate agent from the plain network."""

    def __init__(
        self,
        net: PolicyNet,
        env_kwargs: dict[str, Any],
        simulations: int | None = 100,
        time_per_move: float | None = None,
        c: float | None = None,
        seed: int | None = None,
        score_scale: float = 0.05,
        win_bonus: float = 1.0,
        name: str = "ppo-mcts",
    ) -> None:
        guide = NetworkGuide(net, env_kwargs, score_scale, win_bonus)
        super().__init__(simulations=simulations, time_per_move=time_per_move, c=c, seed=seed, guide=guide, name=name)

    @classmethod
    def from_checkpoint(
        cls, path: str, env_kwargs: dict[str, Any], seed: int | None = None, name: str | None = None, **kw: Any
    ) -> PPOSearchPolicy:
        """Load ``path`` (checked against the env) and read the reward scales from its training config."""
        import carc_env

        from .checkpoint import load_checkpoint, net_from_checkpoint
        from .policy import shapes_from_env

        data = load_checkpoint(path)
        net = net_from_checkpoint(data, expect=shapes_from_env(carc_env.raw_env(**env_kwargs)), where=str(path))
        ppo = (data.get("config") or {}).get("ppo") or {}
        return cls(
            net,
            env_kwargs,
            seed=seed,
            name=name or f"ppo-mcts:{path}",
            score_scale=float(ppo.get("score_scale", 0.05)),
            win_bonus=float(ppo.get("win_bonus", 1.0)),
            **kw,
        )


__all__ = ["NetworkGuide", "PPOSearchPolicy"]
