"""A search player for a pilot: ``ppo-mcts``'s batched search (``values=decider``, batches of 16) whose priors
come from the shipped ``base-2p-160`` and whose leaf values come from a second network, the one
``value_fit.py --trunk E --save PATH`` trained on the mean of 32 play-outs.

    PYTHONPATH=docs/results/expert/s16 TWONET_VALUE=value_net.pt TWONET_SIMS=600 \\
        python scripts/evaluate.py twonet:TwoNet --opponents mcts:5000 --games 10 --seed 9500 --workers 1
"""

from __future__ import annotations

import os
from typing import Any

import torch

from agents.pretrained import load_net
from agents.search import NetworkGuide, PPOSearchPolicy


class TwoNetGuide(NetworkGuide):
    """The network guide with a second network for the leaves' values (priors: the first's)."""

    def __init__(self, net: Any, value_net: Any, batch: int) -> None:
        super().__init__(net, {}, value_view="decider", batch=batch)
        self.value_net = value_net.eval()

    def leaf_forward(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return self.net(*batch.inputs())[0], self.value_net(*batch.inputs())[1]


def TwoNet() -> PPOSearchPolicy:  # noqa: N802 (a player factory, named as the spec names it)
    torch.set_num_threads(1)
    net = load_net("base-2p-160")
    value_net = load_net("base-2p-160")
    value_net.load_state_dict(torch.load(os.environ.get("TWONET_VALUE", "value_net.pt"))["state_dict"])
    sims = int(os.environ.get("TWONET_SIMS", "600"))
    policy = PPOSearchPolicy(net, {}, simulations=sims, value_view="decider", batch=16, name=f"twonet:{sims}")
    policy.guide = policy.mcts.guide = TwoNetGuide(net, value_net, 16)
    return policy
