"""``ppo-mcts:...:values=decider:batch=B``: the network search valuing its new leaves B at a time, one forward
each batch, with virtual losses spreading a batch's descents (carc_env.search.mcts.MCTS._search_compiled_batched)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import carc_env
from agents.network import NetConfig, PolicyNet
from agents.policy import shapes_from_env
from agents.search import NetworkGuide, PPOSearchPolicy
from carc_env.core.game import new_game
from carc_env.fast import available as _numba_available
from carc_env.search import MCTS
from carc_env.search.mcts import node_actions
from carc_env.search.rollout import canonical_rotations

pytestmark = [
    pytest.mark.skipif(not _numba_available(), reason="numba is not installed"),
    pytest.mark.usefixtures("one_torch_thread"),
]

KW = {"num_players": 2}
BOX = {"num_players": 2, "expansions": ("base", "count", "king_robber", "darmstadt")}


def _net(kw, seed=0):
    torch.manual_seed(seed)
    return PolicyNet(shapes_from_env(carc_env.raw_env(**kw)), NetConfig(channels=8, blocks=1, hidden=32))


def _game(kw, seed, k):
    g = new_game(kw["num_players"], expansions=tuple(kw.get("expansions", ("base",))), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(k):
        acts = g.legal_actions()
        g.apply(acts[int(rng.integers(len(acts)))])
    return g


def _stats(node, out):
    """Every node's visits, values and priors, depth first, keys in order."""
    out.append((node.player, list(node.n), list(node.w), node.prior))
    for branches in node.children:
        for key in sorted(branches or {}, key=repr):
            out.append(key)
            _stats(branches[key], out)
    return out


@pytest.mark.parametrize("kw", [KW, BOX], ids=["base", "box"])
def test_batches_of_one_are_the_search_leaf_by_leaf(kw):
    """With batch 1 every leaf is valued before the next descent: the batched loop builds the tree the
    leaf-by-leaf loop builds, node for node, bit for bit (the Count's decisions valued on the Python game)."""
    net = _net(kw, seed=1)
    for seed, k in ((2, 6), (3, 25)):
        game = _game(kw, seed, k)
        trees = []
        for batched in (False, True):
            guide = NetworkGuide(net, kw, value_view="decider")
            mcts = MCTS(guide, rng=np.random.default_rng(7))
            guide.begin(game)
            sim = guide.compiled_state(game)
            assert sim is not None
            run = mcts._search_compiled_batched if batched else mcts._search_compiled
            res = run(sim, game, node_actions(game, {}), 60, None, 0.0)
            assert res.simulations == 60
            trees.append(_stats(res.root, []))
        assert trees[0] == trees[1]


def _check_tree(node):
    """Visits add up, no virtual loss is left behind, every listed node has its priors."""
    if node.actions is None:
        return 0
    assert node.prior is not None, "a leaf of a batch was never evaluated"
    assert sum(node.n) == node.visits
    assert math.isclose(sum(node.w), node.wsum, rel_tol=1e-9, abs_tol=1e-9)
    k = 1
    for i, branches in enumerate(node.children):
        if branches:  # each descent through a child was first a visit of this action
            assert sum(child.visits for child in branches.values()) <= node.n[i]
        for child in (branches or {}).values():
            k += _check_tree(child)
    return k


@pytest.mark.parametrize("size", [4, 16])
def test_batched_searches_keep_the_trees_statistics_and_spend_the_budget(size):
    """Batches of 4 and 16: exactly the budget's simulations, visits that add up at every node, the root's
    values the mean of what came back (no virtual loss left), every node evaluated; and the same search
    again from the same seed."""
    net = _net(KW, seed=2)
    game = _game(KW, 5, 20)
    results = []
    for _ in range(2):
        guide = NetworkGuide(net, KW, value_view="decider", batch=size)
        res = MCTS(guide, rng=np.random.default_rng(3)).search(game, simulations=150)
        assert res.simulations == 150 and sum(res.visits) == 150
        assert res.extra["state"] == "compiled" and res.extra["batches"] >= math.ceil(150 / size)
        assert guide.forwards == res.extra["batches"] + 1  # the root's, then one per batch
        assert _check_tree(res.root) > 20
        results.append((res.visits, res.values))
    assert results[0] == results[1]


def test_a_batch_values_each_leaf_as_the_guide_values_it_alone():
    """evaluate_leaves over several captured leaves: each leaf's priors and values are expand_state's for
    that leaf alone (up to the batched forward's last bits)."""
    net = _net(KW, seed=4)
    guide = NetworkGuide(net, KW, value_view="decider")
    captured, alone = [], []
    for seed, k in ((1, 3), (2, 17), (3, 40), (4, 61)):
        g = _game(KW, seed, k)
        f = guide.compiled_state(g)
        f.begin(g)
        f.redeal(list(g._bag[::-1]), None)  # slot 1 := the game itself
        moves = f.moves(lambda t, g=g: canonical_rotations(g, t, {}))
        captured.append(guide.leaf_state(f, moves))
        alone.append(guide.expand_state(f, moves, None))
    together = guide.evaluate_leaves(captured)
    for (p1, v1), (p0, v0) in zip(together, alone, strict=True):
        assert p1 == pytest.approx(p0, abs=1e-5) and v1 == pytest.approx(v0, abs=1e-5)


def test_batch_needs_the_deciding_seats_value_and_the_spec_takes_it():
    from agents.players import PlayerSpecError, make_player

    net = _net(KW)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="batch must be"):
            NetworkGuide(net, KW, value_view="decider", batch=bad)
    with pytest.raises(ValueError, match="value_view='decider' and playout=0"):
        NetworkGuide(net, KW, batch=8)
    with pytest.raises(ValueError, match="value_view='decider' and playout=0"):
        NetworkGuide(net, KW, value_view="decider", playout=0.5, batch=8)
    p = make_player("ppo-mcts:pretrained:base-2p:40:values=decider:batch=8", KW, seed=0)
    assert isinstance(p, PPOSearchPolicy) and p.guide.batch == 8
    env = carc_env.raw_env(**KW)
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][p.act(obs, env)] and p.last_search.simulations == 40
    for bad, match in (("batch=0", "batch must be"), ("batch=x", "batch must be"), ("top=3:batch=4", "do not apply")):
        with pytest.raises(PlayerSpecError, match=match):
            make_player(f"ppo-mcts:pretrained:base-2p:8:values=decider:{bad}", KW, seed=0)


def test_every_virtual_loss_is_replaced_by_the_value_that_came_back():
    """Leaves all valued 0.25 for both seats (exact in binary): after a batched search every action's summed
    value is exactly 0.25 times its visits, at every node, whatever the virtual losses were meanwhile."""
    net = _net(KW, seed=5)
    guide = NetworkGuide(net, KW, value_view="decider", batch=8)
    real = guide.evaluate_leaves
    guide.evaluate_leaves = lambda leaves: [(p, [0.25, 0.25]) for p, _ in real(leaves)]
    game = _game(KW, 6, 12)
    res = MCTS(guide, rng=np.random.default_rng(1)).search(game, simulations=120)
    assert res.extra["batches"] >= 15

    def walk(node):
        if node.actions is None:
            return 0
        assert node.w == [0.25 * n for n in node.n] and node.wsum == 0.25 * node.visits
        return 1 + sum(walk(c) for b in node.children for c in (b or {}).values())

    assert walk(res.root) > 10
