"""Glue between the env's observations and the network, and the PPO policy as a player.

``PPOPolicy`` implements the baseline protocol of ``carc_env.baselines``
(``act(obs, env) -> int``), so a trained agent can be an opponent, be
evaluated against the baselines, or play in a rendered game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from carc_env.encoding.placements import N_PLACEMENT_FEATURES, placement_features
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
    windows_dim, windows_high = 0, ()
    if list(getattr(env, "window_names", ())):  # an expansion fills the windows tensor (Stained Glass)
        high = np.broadcast_to(space["windows"].high, space["windows"].shape)
        windows_dim, windows_high = int(high.size), tuple(int(h) for h in high.reshape(-1))
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
        placement_features=N_PLACEMENT_FEATURES,
        windows_dim=windows_dim,
        windows_high=windows_high,
    )


def with_action_features(obs: dict, env: Any) -> dict:
    """The observation with the action features the network scores added (if the env lacks them).

    ``"spots"``: per follower spot (:mod:`carc_env.encoding.spots`);
    ``"place_index"`` / ``"place_features"``: per legal placement
    (:mod:`carc_env.encoding.placements`), empty outside the tile phase.
    """
    if "spots" in obs and "place_index" in obs:
        return obs
    if env is None or not hasattr(env, "game"):
        raise ValueError("the network's action features are computed from the game: call act(obs, env) with the env")
    game = env.game
    seat = env.possible_agents.index(env.agent_selection)
    max_spots = env.codec.follower_range.size - 1
    idx, feats = placement_features(game, seat, env.codec)
    return {**obs, "spots": spot_features(game, seat, max_spots), "place_index": idx, "place_features": feats}


class Batch(NamedTuple):
    """Network inputs for a batch of observations (see :meth:`PolicyNet.forward`)."""

    board: torch.Tensor
    globs: torch.Tensor
    spots: torch.Tensor
    place_index: torch.Tensor
    place_features: torch.Tensor
    mask: torch.Tensor
    windows: torch.Tensor

    def inputs(self) -> tuple[torch.Tensor, ...]:
        return self.board, self.globs, self.spots, self.place_index, self.place_features, self.windows


def pad_placements(
    index: Sequence[torch.Tensor], features: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack per-observation placement rows, padding with zero rows (index 0, ``present`` 0)."""
    k = max((len(i) for i in index), default=0)
    n_feat = features[0].shape[1] if len(features) else N_PLACEMENT_FEATURES
    idx = torch.zeros((len(index), k), dtype=torch.int64)
    feats = torch.zeros((len(index), k, n_feat), dtype=torch.float32)
    for j, (i, f) in enumerate(zip(index, features, strict=True)):
        idx[j, : len(i)] = i
        feats[j, : len(i)] = f
    return idx, feats


def obs_to_tensors(obs: Sequence[dict]) -> Batch:
    """Stack observation dicts (with action features) into the network's input tensors and the bool mask."""
    board = torch.from_numpy(np.stack([o["board"] for o in obs]).astype(np.float32))
    globs = torch.from_numpy(np.stack([o["globals"] for o in obs]).astype(np.float32))
    spots = torch.from_numpy(np.stack([o["spots"] for o in obs]).astype(np.float32))
    mask = torch.from_numpy(np.stack([o["action_mask"] for o in obs]).astype(bool))
    windows = torch.from_numpy(np.stack([o["windows"] for o in obs]).astype(np.float32))
    idx, feats = pad_placements(
        [torch.from_numpy(o["place_index"]) for o in obs], [torch.from_numpy(o["place_features"]) for o in obs]
    )
    return Batch(board, globs, spots, idx, feats, mask, windows)


class PPOPolicy:
    """A trained network as a player: argmax over legal actions (or sampling)."""

    def __init__(self, net: PolicyNet, sample: bool = False, seed: int = 0, name: str = "ppo") -> None:
        self.net = net.eval()
        self.sample = sample
        self.name = name
        self.gen = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def act(self, obs: dict, env: Any = None) -> int:
        return self.act_batch([with_action_features(obs, env)])[0]

    @torch.no_grad()
    def act_batch(self, obs: Sequence[dict]) -> list[int]:
        batch = obs_to_tensors(obs)
        logits, _ = self.net(*batch.inputs())
        ml = masked_logits(logits, batch.mask)
        if self.sample:
            probs = torch.softmax(ml, dim=1)
            return torch.multinomial(probs, 1, generator=self.gen).squeeze(1).tolist()
        return ml.argmax(dim=1).tolist()
