"""The rollout's speed setting (agents.ppo.rollout_mode: inference mode) changes no bit.

A trainer whose rollouts run the plain way (``torch.no_grad``, as before the setting existed) and one
that runs them through ``collect()`` (``rollout_mode``), both on two torch threads, must produce the
same rollouts and learn the same weights.  (One torch thread in the rollouts would be faster but fails
this test: some outputs' last bits depend on the thread count.)  ``scripts/same_training.py`` checks the same on the main
command's whole config against another source tree."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import torch_threads

from agents.network import NetConfig
from agents.ppo import PPOConfig, SelfPlayTrainer, rollout_mode

# The default network (32 channels; the thread count matters only for work big enough to split),
# few games and decisions so the test stays short; no imitation, so the learner samples its actions.
CFG = dict(num_envs=8, rollout_workers=1, steps_per_update=96, epochs=1, minibatch=48, chunk=24, imitation_updates=0,
           p_random=0.2, p_greedy=0.3, p_self=0.25, p_snapshot=0.25, snapshot_every=1,
           net=NetConfig(channels=32, blocks=1, hidden=128))  # fmt: skip
GAME = {"num_players": 2, "expansions": ("base",)}


@pytest.fixture
def two_threads():
    with torch_threads(2):
        yield


def _run(plain: bool) -> tuple[list, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    tr = SelfPlayTrainer(GAME, PPOConfig(**CFG), seed=3)
    trace = []
    for _ in range(3):
        if plain:
            with torch.no_grad():
                roll = tr._collect()
        else:
            roll = tr.collect()
        assert torch.get_num_threads() == 2 and torch.is_grad_enabled()
        trace.append((roll.actions.copy(), roll.logprobs.copy(), roll.values.copy(), roll.next_values.copy()))
        tr.update(roll)
    return trace, tr.net.state_dict()


def test_rollout_mode_gives_the_same_run_bit_for_bit(two_threads):
    plain, plain_net = _run(plain=True)
    fast, fast_net = _run(plain=False)
    for a, b in zip(plain, fast, strict=True):
        for x, y in zip(a, b, strict=True):
            assert x.tobytes() == y.tobytes()
    assert plain_net.keys() == fast_net.keys()
    for k in plain_net:
        assert torch.equal(plain_net[k], fast_net[k]), k


def test_rollout_mode_keeps_threads_and_restores_grad_mode(two_threads):
    with rollout_mode():
        assert torch.get_num_threads() == 2
        assert torch.is_inference_mode_enabled()
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    with pytest.raises(RuntimeError), rollout_mode():  # restored after an error too
        raise RuntimeError("boom")
    assert not torch.is_inference_mode_enabled()


def test_snapshot_opponents_built_during_a_rollout_are_normal_tensors():
    tr = SelfPlayTrainer(GAME, PPOConfig(**CFG), seed=3)
    tr.take_snapshot()
    with rollout_mode():
        net = tr._net_opponent(0).net
    assert not any(p.is_inference() for p in net.parameters())
    assert np.isfinite(sum(float(p.sum()) for p in net.parameters()))
