"""Glue between the env's observations and the network, and the PPO policy as a player.

``PPOPolicy`` implements the baseline protocol of ``carc_env.baselines``
(``act(obs, env) -> int``), so a trained agent can be an opponent, be
evaluated against the baselines, or play in a rendered game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from carc_env.encoding.spots import N_SPOT_FEATURES, spot_features

from .network import NetShapes, PolicyNet, masked_logits


def shapes_from_env(env: Any) -> NetShapes:
    """Read the network's input/output shapes from a raw env."""
    agent = env.possible_agents[0]
    space = env.observation_space(agent)
    c, rows, cols = space["board"].shape
    n_actions = int(env.action_space(agent).n)
    t_lo, t_hi = env.codec.tile_range.start, env.codec.tile_range.stop
    lo, hi = env.codec.follower_range.start, env.codec.follower_range.stop
    if (t_lo, t_hi) != (0, 4 * rows * cols) or lo != t_hi:
        raise ValueError(f"unexpected action layout: tile {t_lo}..{t_hi}, follower {lo}..{hi}")
    names = list(env.channel_names)
    last = [i for i, n in enumerate(names) if n == "last_placed"]
    if not last:
        raise ValueError(f"the env has no 'last_placed' board channel; channels: {names}")
    return NetShapes(
        board_channels=c,
        rows=rows,
        cols=cols,
        globals_dim=int(space["globals"].shape[0]),
        n_actions=n_actions,
        tile_actions=t_hi,
        follower_actions=hi - lo,
        last_placed_channel=last[0],
        spot_features=N_SPOT_FEATURES,
        board_high=tuple(int(h) for h in env.encoder.channel_high),
    )


def with_spots(obs: dict, env: Any) -> dict:
    """The observation with ``"spots"`` (per follower spot features) added if the env lacks them."""
    if "spots" in obs:
        return obs
    game = env.game
    seat = env.possible_agents.index(env.agent_selection)
    max_spots = env.codec.follower_range.size - 1
    return {**obs, "spots": spot_features(game, seat, max_spots)}


def obs_to_tensors(obs: Sequence[dict]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stack observation dicts into (board, globals, spots) float tensors and the bool mask."""
    board = torch.from_numpy(np.stack([o["board"] for o in obs]).astype(np.float32))
    globs = torch.from_numpy(np.stack([o["globals"] for o in obs]).astype(np.float32))
    spots = torch.from_numpy(np.stack([o["spots"] for o in obs]).astype(np.float32))
    mask = torch.from_numpy(np.stack([o["action_mask"] for o in obs]).astype(bool))
    return board, globs, spots, mask


class PPOPolicy:
    """A trained network as a player: argmax over legal actions (or sampling)."""

    def __init__(self, net: PolicyNet, sample: bool = False, seed: int = 0, name: str = "ppo") -> None:
        self.net = net.eval()
        self.sample = sample
        self.name = name
        self.gen = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def act(self, obs: dict, env: Any = None) -> int:
        return self.act_batch([with_spots(obs, env)])[0]

    @torch.no_grad()
    def act_batch(self, obs: Sequence[dict]) -> list[int]:
        b, g, s, m = obs_to_tensors(obs)
        logits, _ = self.net(b, g, s)
        ml = masked_logits(logits, m)
        if self.sample:
            probs = torch.softmax(ml, dim=1)
            return torch.multinomial(probs, 1, generator=self.gen).squeeze(1).tolist()
        return ml.argmax(dim=1).tolist()
