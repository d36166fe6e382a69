"""``ppo-mcts:PATH:N:top=K`` (:class:`agents.search.PrunedSearchPolicy`): plain MCTS over the network's K
most likely root actions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import carc_env
from agents.network import NetConfig, PolicyNet, masked_logits
from agents.policy import PPOPolicy, obs_to_tensors, shapes_from_env, with_action_features
from agents.search import PrunedSearchPolicy
from carc_env.fast import available as _numba_available
from carc_env.search import MCTSPolicy
from carc_env.search.mcts import root_choices

pytestmark = [
    pytest.mark.skipif(not _numba_available(), reason="numba is not installed"),
    pytest.mark.usefixtures("one_torch_thread"),
]

KW = {"num_players": 2}


def _net(seed=0):
    torch.manual_seed(seed)
    return PolicyNet(shapes_from_env(carc_env.raw_env(**KW)), NetConfig(channels=8, blocks=1, hidden=32))


def _logits(net, obs, env):
    """The network's masked logits over the flat actions, computed here without the policy's code."""
    with torch.no_grad():
        batch = obs_to_tensors([with_action_features(obs, env)])
        logits, _ = net(*batch.inputs())
        return masked_logits(logits, batch.mask)[0].double().numpy()


def _decisions(seed, limit):
    """The env at each of the first ``limit`` decisions of a game played by a random stream."""
    env = carc_env.raw_env(**KW)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        if env.game.over:
            return
        obs = env.observe(env.agent_selection)
        yield env, obs
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_a_list_longer_than_the_root_is_plain_mcts():
    """With K above every root's size the network changes nothing: the same moves as plain MCTS from the
    same seed and budget."""
    pruned = PrunedSearchPolicy(_net(), top=10_000, simulations=30, seed=5)
    plain = MCTSPolicy(simulations=30, seed=5)
    searched = 0
    for env, obs in _decisions(seed=3, limit=24):
        a, b = pruned.act(obs, env), plain.act(obs, env)
        assert a == b
        searched += pruned.last_search.simulations > 0
        assert pruned.last_kept == len(plain.last_search.actions)
    assert searched > 10


def test_the_search_spends_its_simulations_on_the_networks_best_root_actions():
    net = _net(seed=1)
    pol = PrunedSearchPolicy(net, top=3, simulations=20, seed=0)
    canon: dict = {}
    pruned = 0
    for env, obs in _decisions(seed=4, limit=30):
        actions, indices = root_choices(env.game, env.codec, obs["action_mask"], canon)
        chosen = pol.act(obs, env)
        logits = _logits(net, obs, env)
        if len(indices) <= 3:
            assert pol.last_kept == len(indices)
            continue
        pruned += 1
        best = sorted(indices, key=lambda i: -logits[i])[:3]
        assert pol.last_kept == 3 and chosen in best
        assert sorted(pol.last_search.actions, key=repr) == sorted((actions[indices.index(i)] for i in best), key=repr)
        assert pol.last_search.simulations == 20 and sum(pol.last_search.visits) == 20
    assert pruned > 10


def test_the_pruned_search_is_plain_mcts_on_the_mask_cut_to_the_kept_actions():
    """The same moves, visits and root order as plain MCTS from the same seed given a mask of only the K
    kept actions (how sessions 13 and 14 ran it: the root is listed once, not once per cut)."""
    net = _net(seed=1)
    pol, plain = PrunedSearchPolicy(net, top=3, simulations=25, seed=7), MCTSPolicy(simulations=25, seed=7)
    canon: dict = {}
    pruned = 0
    for env, obs in _decisions(seed=8, limit=30):
        _, indices = root_choices(env.game, env.codec, obs["action_mask"], canon)
        logits = _logits(net, obs, env)
        kept = np.zeros_like(obs["action_mask"])
        kept[sorted(indices, key=lambda i: -logits[i])[:3]] = 1
        assert pol.act(obs, env) == plain.act({**obs, "action_mask": kept}, env)
        assert pol.last_search.actions == plain.last_search.actions
        assert pol.last_search.visits == plain.last_search.visits
        pruned += len(indices) > 3
    assert pruned > 10


def test_one_kept_action_is_the_networks_choice_without_a_search():
    net = _net(seed=2)
    pol, plain = PrunedSearchPolicy(net, top=1, simulations=50, seed=0), PPOPolicy(net)
    canon: dict = {}
    same = 0
    for env, obs in _decisions(seed=6, limit=30):
        _, indices = root_choices(env.game, env.codec, obs["action_mask"], canon)
        chosen = pol.act(obs, env)
        assert pol.last_kept == 1 and pol.last_search.simulations == 0
        argmax = plain.act(obs, env)
        if argmax in indices:  # (a rotation with the same geometry as a listed one is listed once)
            assert chosen == argmax
            same += 1
    assert same > 20


def test_the_spec_takes_top(tmp_path):
    from agents.checkpoint import save_checkpoint
    from agents.players import PlayerSpecError, make_player

    path = tmp_path / "net.pt"
    net = _net(seed=3)
    save_checkpoint(path, {"trainer": {"net": net.state_dict()}, "shapes": dataclasses.asdict(net.shapes),
                           "net_config": dataclasses.asdict(net.cfg), "config": {}})  # fmt: skip
    p = make_player(f"ppo-mcts:{path}:40:top=4:c=0.5", KW, seed=0)
    assert isinstance(p, PrunedSearchPolicy) and p.top == 4 and p.simulations == 40 and p.c == 0.5
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in p.network.net.state_dict().items())
    shipped = make_player("ppo-mcts:pretrained:base-2p:8:top=2", KW, seed=0)
    assert isinstance(shipped, PrunedSearchPolicy) and shipped.top == 2
    env = carc_env.raw_env(**KW)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][shipped.act(obs, env)]
    greedy = make_player("ppo-mcts:pretrained:base-2p:8:top=2:greedy:eps=0.2", KW, seed=0)  # mcts's play-outs
    assert isinstance(greedy, PrunedSearchPolicy) and (greedy.guide.rollout, greedy.guide.epsilon) == ("greedy", 0.2)
    assert shipped.guide.rollout == "random" and shipped.guide.epsilon == 0.0
    assert obs["action_mask"][greedy.act(obs, env)]
    cut = make_player("ppo-mcts:pretrained:base-2p:8:top=2:utility=win:horizon=10", KW, seed=0)  # mcts's play-outs
    assert (cut.guide.utility, cut.guide.horizon) == ("win", 10)
    for bad, match in (
        ("top=0", "top must be"),
        ("top=x", "top must be"),
        ("top=3:playout=1", "do not apply"),
        ("greedy", "option of mcts rollouts"),  # below the root the network search has no play-out policy
        ("utility=win", "option of mcts rollouts"),
        ("horizon=10", "option of mcts rollouts"),
    ):
        with pytest.raises(PlayerSpecError, match=match):
            make_player(f"ppo-mcts:{path}:8:{bad}", KW, seed=0)
    with pytest.raises(ValueError, match="top must be"):
        PrunedSearchPolicy(net, top=0)
