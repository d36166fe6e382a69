"""The network guide on the compiled state (agents/search.py ``NetworkGuide.compiled_state``): the leaves'
observations from the compiled encoders, byte for byte the Python guide's, and the same searches."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

import carc_env
from agents.expert import ExpertConfig, ExpertTrainer
from agents.network import NetConfig, PolicyNet
from agents.policy import obs_to_tensors, shapes_from_env, stacked_to_tensors
from agents.search import NetworkGuide, PPOSearchPolicy
from carc_env.core.actions import IllegalActionError
from carc_env.core.game import new_game
from carc_env.fast import available as _numba_available
from carc_env.search import MCTS
from carc_env.search.mcts import node_actions
from carc_env.search.rollout import canonical_rotations

pytestmark = [
    pytest.mark.skipif(not _numba_available(), reason="numba is not installed"),
    pytest.mark.usefixtures("one_torch_thread"),
]

BOX = ("base", "count", "king_robber", "river2", "darmstadt", "shrines")
SMALL = {"channels": 8, "blocks": 1, "hidden": 32}


def _net(env_kwargs, seed=0):
    torch.manual_seed(seed)
    return PolicyNet(shapes_from_env(carc_env.raw_env(**env_kwargs)), NetConfig(**SMALL))


def _advance(game, k, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(k):
        if game.over:
            break
        acts = game.legal_actions()
        game.apply(acts[int(rng.integers(len(acts)))])
    return game


def _states(env_kwargs, seeds, stops):
    """Python games of ``env_kwargs`` stopped after ``stops`` random decisions (every phase's)."""
    n = env_kwargs["num_players"]
    out = []
    for s in seeds:
        for k in stops:
            g = _advance(new_game(n, expansions=tuple(env_kwargs.get("expansions", ("base",))), seed=s), k, seed=s)
            if not g.over:
                out.append(g)
    return out


CASES = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 2, "window": (9, 9)},  # placements outside the window: recentred, some moves without an index
    {"num_players": 3, "expansions": BOX},
    {"num_players": 2, "expansions": ("base", "stained_glass")},  # the windows tensor
]


@pytest.mark.parametrize("env_kwargs", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_compiled_observations_are_the_python_guides(env_kwargs):
    """Every seat's observation of a state loaded into the compiled slot equals the Python guide's arrays,
    byte for byte (placement rows in the Python order and number), and the moves' flat indices are the
    codec's (-1 where it refuses: outside the window)."""
    guide = NetworkGuide(_net(env_kwargs), env_kwargs)
    tiny = dataclasses.replace(guide.engine_config, action_features=True, action_feature_rows=3)
    outside = reordered = grown = 0
    canon: dict = {}
    for game in _states(env_kwargs, (1, 2), (0, 7, 30, 61, 95, 130)):
        f = guide.compiled_state(game)
        assert f is not None
        f.begin(game)
        f.load(game)
        py = guide._observations(game, range(game.num_players))
        for obs in (f.observe(), _observe_with(tiny, game)):  # the config's 128 rows; 3 rows, grown to fit
            counts = obs.pop("place_count")
            for p, ref in enumerate(py):
                for key, want in ref.items():
                    got = obs[key][p]
                    if key in ("place_index", "place_features"):
                        assert counts[p] == len(want)
                        assert not got[len(want) :].any()  # zero rows after the real ones
                        got = got[: len(want)]
                    assert got.dtype == np.asarray(want).dtype and np.array_equal(got, want), (key, p)
            k = len(py[game.player]["place_index"])
            grown += k > 3
            reordered += k > 1 and not np.all(np.diff(py[game.player]["place_index"]) > 0)
        if game.phase in ("tile", "follower"):
            acts = node_actions(game, canon)
            moves = f.moves(lambda t, game=game: canonical_rotations(game, t, canon))
            want = []
            for a in acts:
                try:
                    want.append(guide.codec.encode(game, a))
                except IllegalActionError:  # outside the window
                    want.append(-1)
            assert f.flat_indices(moves) == want
            outside += want.count(-1)
    assert grown > 0 and reordered > 0  # the two corrections were exercised
    if env_kwargs.get("window") == (9, 9):
        assert outside > 0


@pytest.mark.parametrize("env_kwargs", CASES[:3], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_stacked_observations_make_obs_to_tensors_tensors(env_kwargs):
    """``stacked_to_tensors`` (the compiled leaf's stacked observations) gives every tensor of
    ``obs_to_tensors`` over the same observations one by one, exactly."""
    guide = NetworkGuide(_net(env_kwargs), env_kwargs)
    for game in _states(env_kwargs, (5,), (0, 3, 30, 80, 130)):
        f = guide.compiled_state(game)
        f.begin(game)
        f.load(game)
        obs = f.observe()
        counts = obs.pop("place_count").tolist()
        one_by_one = [{k: v[p] for k, v in obs.items()} for p in range(len(counts))]
        a, b = stacked_to_tensors(obs, counts), obs_to_tensors(one_by_one)
        for name, x, y in zip(a._fields, a, b, strict=True):
            assert x.dtype == y.dtype and torch.equal(x, y), name


def _observe_with(config, game):
    from carc_env.fast.playout import FastPlayout

    f = FastPlayout(config)
    f.begin(game)
    f.load(game)
    return f.observe()


def _tree(node, out, depth=0, visited_only=False):
    """Every node's statistics depth first, keys in order (the Python tree's and the compiled one's);
    ``visited_only``: a leaf no simulation came back to as its depth and player alone (its moves and priors
    may be listed or not)."""
    if visited_only and node.visits == 0:
        out.append((depth, node.player))
        return out
    out.append((depth, node.player, list(node.n), [round(w, 12) for w in node.w], node.prior))
    for branches in node.children:
        for key in sorted(branches or {}, key=repr):
            out.append(key)
            _tree(branches[key], out, depth + 1, visited_only)
    return out


def _plugin_nodes(node):
    k = 0
    for branches in node.children:
        for key, child in (branches or {}).items():
            k += int(key[0] not in ("tile", "follower")) + _plugin_nodes(child)
    return k


def _plugin_roots(env_kwargs):
    """A plug-in's decision at the root, and the tile decision before it (none in a game without plug-in
    decisions)."""
    n, exps = env_kwargs["num_players"], tuple(env_kwargs.get("expansions", ("base",)))
    for seed in range(8):
        g = new_game(n, expansions=exps, seed=seed)
        rng, before = np.random.default_rng(seed), None
        while not g.over and g.phase in ("tile", "follower"):
            before = g.clone() if g.phase == "tile" else before
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])
        if not g.over:
            return [g, before]
    return []


@pytest.mark.parametrize("env_kwargs", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_search_on_compiled_state_is_the_python_search(env_kwargs):
    """The same seed gives the same tree node for node (visits, summed values, priors, keys) whether each
    simulation's state is a Python game with Python observations or the compiled slot with compiled ones."""
    net = _net(env_kwargs, seed=3)
    fast, ref = NetworkGuide(net, env_kwargs), NetworkGuide(net, env_kwargs, engine="python")
    plugin = 0
    roots = _states(env_kwargs, (4,), (0, 1, 40, 90)) + _plugin_roots(env_kwargs)
    for k, root in enumerate(roots):
        a = MCTS(fast, rng=np.random.default_rng(k)).search(root, simulations=120)
        b = MCTS(ref, rng=np.random.default_rng(k)).search(root, simulations=120)
        assert a.extra == {"state": "compiled"} and b.extra == {}
        assert a.visits == b.visits and a.simulations == b.simulations == 120
        assert all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a.values, b.values, strict=True))
        assert _tree(a.root, []) == _tree(b.root, [])
        plugin += _plugin_nodes(a.root)
    if "count" in env_kwargs.get("expansions", ()):
        assert plugin > 0  # plug-in decisions were evaluated below the root (on the Python leaf)


def test_ppo_search_policy_plays_the_same_game_either_way():
    """``PPOSearchPolicy`` (engine auto and python, same seed) picks the same move at every decision of a
    game against itself; the compiled one searched on the compiled state."""
    kw = {"num_players": 2}
    net = _net(kw, seed=1)
    pols = [PPOSearchPolicy(net, kw, simulations=12, seed=9, engine=e) for e in ("auto", "python")]
    env = carc_env.raw_env(**kw)
    env.reset(seed=12)
    searched = 0
    while not env.game.over:
        obs = {"action_mask": env.match.mask()}
        a, b = (p.act(obs, env) for p in pols)
        assert a == b
        if pols[0].last_search.simulations:
            assert pols[0].last_search.extra == {"state": "compiled"} and pols[1].last_search.extra == {}
            searched += 1
        env.step(a)
    assert searched > 40


def test_expert_iteration_searches_on_compiled_state_and_plays_the_same_game():
    """The trainer's searches (root noise included) run on the compiled state and give the same samples as
    on the Python game."""
    cfg = ExpertConfig(simulations=6, net=NetConfig(**SMALL), temperature_moves=4)
    out = []
    for engine in ("auto", "python"):
        tr = ExpertTrainer({"num_players": 2, "expansions": ("base",)}, cfg, seed=5)
        tr.guide.engine = engine
        out.append(tr.play())
        assert (tr.guide._fast != {}) == (engine == "auto")
    a, b = out
    assert len(a) == len(b) > 50
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x["pi_index"], y["pi_index"]) and np.array_equal(x["pi"], y["pi"])
        assert x["z"] == y["z"]


def test_engine_option():
    kw = {"num_players": 2}
    with pytest.raises(ValueError, match="engine must be one of"):
        NetworkGuide(_net(kw), kw, engine="gpu")
    guide = NetworkGuide(_net(kw), kw, engine="numba")
    with pytest.raises(ValueError, match="engine='numba'.*not the configuration"):
        guide.compiled_state(new_game(3))
    assert NetworkGuide(_net(kw), kw).compiled_state(new_game(3)) is None  # auto: the Python search
    assert NetworkGuide(_net(kw), kw, engine="python").compiled_state(new_game(2)) is None
    assert "engine='python'" in repr(NetworkGuide(_net(kw), kw, engine="python"))


def test_a_used_policy_pickles_without_its_compiled_state():
    """Tournament workers get the policy pickled: the compiled state stays behind and is rebuilt there."""
    import pickle

    kw = {"num_players": 2}
    pol = PPOSearchPolicy(_net(kw), kw, simulations=8, seed=0)
    env = carc_env.raw_env(**kw)
    env.reset(seed=1)
    for _ in range(3):
        env.step(pol.act(env.observe(env.agent_selection), env))
    assert pol.guide._fast
    copy = pickle.loads(pickle.dumps(pol))
    assert copy.guide._fast == {}
    obs = env.observe(env.agent_selection)
    assert copy.act(obs, env) == pol.act(obs, env) and copy.last_search.extra == {"state": "compiled"}


def test_value_view_decider_values_every_leaf_from_the_deciding_seat():
    """``value_view="decider"``: the deciding seat's value (the seat view's, unchanged) for it and its negation
    for the other seat, on the Python game and on the compiled state alike; priors unchanged."""
    kw = {"num_players": 2, "expansions": ("base",)}
    net = _net(kw, seed=3)
    seat, dec = NetworkGuide(net, kw), NetworkGuide(net, kw, value_view="decider")
    checked = 0
    for g in _states(kw, seeds=(1, 2), stops=(0, 7, 30)):
        acts = node_actions(g, {})
        p0, v0 = seat.expand(g.clone(), acts, None)
        p1, v1 = dec.expand(g.clone(), acts, None)
        d = g.player
        # the decider's observation alone in the forward: the same numbers up to the batch's last bits
        assert p1 == pytest.approx(p0, abs=1e-6) and v1[d] == pytest.approx(v0[d], abs=1e-6) and v1[1 - d] == -v1[d]
        # the seat view gives the other seat its own head's value, not the negation: the two differ
        assert v0[1 - d] != -v0[d]
        f = dec.compiled_state(g)
        f.begin(g)
        f.redeal(list(g._bag[::-1]), None)  # slot 1 := the root itself
        moves = f.moves(lambda t, g=g: canonical_rotations(g, t, {}))
        _, vc = dec.expand_state(f, moves, None)
        assert vc == pytest.approx(v1, abs=1e-5)
        checked += 1
    assert checked >= 5
    with pytest.raises(ValueError, match="two players only"):
        NetworkGuide(_net({"num_players": 3}), {"num_players": 3}, value_view="decider")
    with pytest.raises(ValueError, match="value_view"):
        NetworkGuide(net, kw, value_view="mine")


def _saved_net(tmp_path, kw):
    """A small network of ``kw``'s game saved as a checkpoint file (a player spec's PATH)."""
    from agents.checkpoint import save_checkpoint

    net = _net(kw)
    path = tmp_path / "n.pt"
    save_checkpoint(path, {"trainer": {"net": net.state_dict()}, "shapes": dataclasses.asdict(net.shapes),
                           "net_config": dataclasses.asdict(net.cfg), "config": {}})  # fmt: skip
    return path


def test_ppo_mcts_spec_takes_the_value_view(tmp_path):
    from agents.players import PlayerSpecError, make_player

    kw = {"num_players": 2, "expansions": ("base",)}
    path = _saved_net(tmp_path, kw)
    p = make_player(f"ppo-mcts:{path}:8:values=decider", kw, seed=0)
    assert p.guide.value_view == "decider" and p.simulations == 8
    assert make_player(f"ppo-mcts:{path}:8", kw, seed=0).guide.value_view == "seat"
    with pytest.raises(PlayerSpecError, match="values must be seat or decider"):
        make_player(f"ppo-mcts:{path}:8:values=mine", kw, seed=0)


def _count_nodes(node):
    return 1 + sum(_count_nodes(c) for branches in node.children for c in (branches or {}).values())


class _PythonLoopGuide(NetworkGuide):
    """The guide searched on Python games (no compiled state), its play-outs still on the compiled engine."""

    def compiled_state(self, game):
        return None


@pytest.mark.parametrize("env_kwargs", [CASES[0], CASES[3]], ids=["base-2p", "box-3p"])
def test_playout_mix_gives_the_same_search_on_the_compiled_state(env_kwargs):
    """``playout=0.5``: the compiled state's leaves (played out in their slot) and the Python loop's (the
    Python game loaded into the guide's own play-out engine) draw the same seed and reach the same final
    scores, so the trees are the same node for node, plug-in leaves included; and every leaf was played out."""
    net = _net(env_kwargs, seed=3)
    fast = NetworkGuide(net, env_kwargs, playout=0.5)
    ref = _PythonLoopGuide(net, env_kwargs, playout=0.5)
    plain = NetworkGuide(net, env_kwargs)
    roots = _states(env_kwargs, (4, 6), (0, 40, 90)) + _plugin_roots(env_kwargs)
    differs = plugin = 0
    for k, root in enumerate(roots):
        before = fast.playouts
        a = MCTS(fast, rng=np.random.default_rng(k)).search(root, simulations=80)
        b = MCTS(ref, rng=np.random.default_rng(k)).search(root, simulations=80)
        c = MCTS(plain, rng=np.random.default_rng(k)).search(root, simulations=80)
        assert a.extra == {"state": "compiled"} and b.extra == {}
        assert a.visits == b.visits
        assert _tree(a.root, []) == _tree(b.root, [])
        new_leaves = _count_nodes(a.root) - 1
        assert fast.playouts - before == new_leaves + 1  # every new leaf, and the root's evaluation
        differs += a.values != c.values
        plugin += _plugin_nodes(a.root)
    assert differs == len(roots)  # the play-outs changed every search's values
    if "count" in env_kwargs.get("expansions", ()):
        assert plugin > 0


def test_playout_weight_one_values_a_leaf_by_its_play_out_alone():
    """λ = 1: a leaf's value is the value of the play-out's final scores, whatever the network says; λ = 0.25
    mixes the two exactly; bad weights are refused."""
    kw = {"num_players": 2}
    g = _states(kw, (3,), (30,))[0]
    acts = node_actions(g, {})
    for seed in (0, 1):
        nets = [_net(kw, seed=s) for s in (1, 2)]
        full = [NetworkGuide(n, kw, playout=1.0).expand(g.clone(), acts, np.random.default_rng(seed))[1] for n in nets]
        assert full[0] == full[1]  # two networks, the same play-out: the same values
        final = NetworkGuide(nets[0], kw)._python_playout(g.clone(), np.random.default_rng(seed))
        assert full[0] == NetworkGuide(nets[0], kw).values(final)
        net_only = NetworkGuide(nets[0], kw).expand(g.clone(), acts, None)[1]
        quarter = NetworkGuide(nets[0], kw, playout=0.25).expand(g.clone(), acts, np.random.default_rng(seed))[1]
        assert quarter == pytest.approx([0.75 * v + 0.25 * z for v, z in zip(net_only, full[0], strict=True)])
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="playout must be in"):
            NetworkGuide(_net(kw), kw, playout=bad)


def test_ppo_mcts_spec_takes_the_playout_weight(tmp_path):
    from agents.players import PlayerSpecError, make_player

    kw = {"num_players": 2, "expansions": ("base",)}
    path = _saved_net(tmp_path, kw)
    p = make_player(f"ppo-mcts:{path}:8:values=decider:playout=0.5", kw, seed=0)
    assert p.guide.playout == 0.5 and p.guide.value_view == "decider" and "playout=0.5" in repr(p.guide)
    assert make_player(f"ppo-mcts:{path}:8", kw, seed=0).guide.playout == 0.0
    with pytest.raises(PlayerSpecError, match="playout"):
        make_player(f"ppo-mcts:{path}:8:playout=2", kw, seed=0)


def test_ppo_mcts_takes_a_shipped_agent():
    """``ppo-mcts:pretrained:NAME:...`` searches on a shipped agent's network; a wrong game or name is refused."""
    from agents.checkpoint import CheckpointError
    from agents.players import PlayerSpecError, make_player
    from agents.pretrained import load

    kw = {"num_players": 2, "expansions": ("base",)}
    p = make_player("ppo-mcts:pretrained:base-2p:8:values=decider:playout=0.5", kw, seed=0)
    assert p.simulations == 8 and p.guide.playout == 0.5 and p.guide.value_view == "decider"
    want = load("base-2p").net.state_dict()
    assert all(torch.equal(v, want[k]) for k, v in p.guide.net.state_dict().items())
    env = carc_env.raw_env(**kw)
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][p.act(obs, env)]
    with pytest.raises(PlayerSpecError, match="pretrained:nope"):
        make_player("ppo-mcts:pretrained:nope:8", kw, seed=0)
    with pytest.raises(CheckpointError, match="not this game"):
        make_player("ppo-mcts:pretrained:base-2p:8", {"num_players": 3}, seed=0)


def test_decider_view_forwards_the_deciding_seat_alone_and_searches_the_same_either_way():
    """``value_view="decider"``: every forward is one row (the deciding seat's observation), and the compiled
    state's search is still the Python game's, node for node, with play-outs mixed in too."""
    kw = {"num_players": 2}
    net = _net(kw, seed=5)
    rows = []
    real = net.forward

    def counting(*args, **kwargs):
        rows.append(int(args[0].shape[0]))
        return real(*args, **kwargs)

    net.forward = counting
    for playout in (0.0, 0.5):
        fast = NetworkGuide(net, kw, value_view="decider", playout=playout)
        ref = NetworkGuide(net, kw, value_view="decider", playout=playout, engine="python")
        for k, root in enumerate(_states(kw, (8,), (0, 30, 70))):
            a = MCTS(fast, rng=np.random.default_rng(k)).search(root, simulations=60)
            b = MCTS(ref if playout == 0.0 else _PythonLoopGuide(net, kw, value_view="decider", playout=playout),
                     rng=np.random.default_rng(k)).search(root, simulations=60)  # fmt: skip
            assert a.extra == {"state": "compiled"} and b.extra == {}
            assert _tree(a.root, []) == _tree(b.root, [])
    assert rows and set(rows) == {1}


@pytest.mark.parametrize("env_kwargs", [CASES[0], CASES[3]], ids=["base-2p", "box-3p"])
def test_deferred_priors_give_the_same_tree_with_fewer_forwards(env_kwargs):
    """``playout=1``: a new leaf is valued by its play-out alone and its priors are asked for when a simulation
    first comes back (``defers_priors``); the tree is the one of asking for both at once (``defer=False``),
    node for node, on the compiled state and on the Python loop, plug-in leaves included, with fewer
    forwards."""
    net = _net(env_kwargs, seed=4)
    lazy, eager = NetworkGuide(net, env_kwargs, playout=1.0), NetworkGuide(net, env_kwargs, playout=1.0, defer=False)
    lazy_py, eager_py = (_PythonLoopGuide(net, env_kwargs, playout=1.0, defer=d) for d in (True, False))
    assert (
        lazy.defers_priors and not eager.defers_priors and not NetworkGuide(net, env_kwargs, playout=0.5).defers_priors
    )
    plugin = 0
    for k, root in enumerate(_states(env_kwargs, (5,), (0, 40, 90)) + _plugin_roots(env_kwargs)):
        trees = []
        for guide in (lazy, eager, lazy_py, eager_py):
            before = guide.forwards
            res = MCTS(guide, rng=np.random.default_rng(k)).search(root, simulations=100)
            trees.append((_tree(res.root, [], visited_only=True), res.visits, guide.forwards - before))
        assert trees[0][:2] == trees[1][:2] == trees[2][:2] == trees[3][:2]
        assert trees[0][2] < trees[1][2] and trees[2][2] < trees[3][2]  # fewer forwards deferred
        plugin += _plugin_nodes(res.root)
    if "count" in env_kwargs.get("expansions", ()):
        assert plugin > 0
