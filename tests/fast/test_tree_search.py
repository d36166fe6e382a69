"""Plain MCTS compiled whole (``carc_env.fast.tree``, ``MCTS(tree="compiled")``): the same search as the Python
tree in distribution, the same tree from the same seed whatever the kernel copies or however its arrays grow,
plug-in decisions searched in the tree, the cases it leaves to the Python tree, and the option in the specs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import env_after_random_moves

from agents.players import PlayerSpecError, make_player
from carc_env.core.tiles import RIVER
from carc_env.search import MCTS, MCTSPolicy, RolloutGuide
from carc_env.search.mcts import node_actions

# every plug-in whose redeal is a plain shuffle (the river's order and Stained Glass's generator: below)
CONFIGS = [
    ({}, 3, 20),
    ({"num_players": 3}, 11, 9),
    ({"expansions": ("king_robber", "count", "darmstadt")}, 5, 14),
    ({"expansions": ("king_robber", "count", "darmstadt", "shrines"), "num_players": 5}, 9, 30),
    ({"expansions": ("royal_gateways", "sagrada_familia"), "num_players": 3}, 13, 25),
    ({"expansions": ("maps_germany",)}, 15, 12),
]


def _whole(game, seed, sims, **kw):
    """One compiled search from ``game`` straight through FastPlayout.tree_search: (visits, value sums, stats)."""
    guide = RolloutGuide()
    guide.begin(game)
    f = guide.tree_state(game)
    assert f is not None
    m = MCTS(guide)
    actions = node_actions(game, m._canon)
    rows = [f.row(0, a) for a in actions]
    order = list(range(len(rows)))
    n, w, done, stats = f.tree_search(
        rows, order, sims, math.inf, 0.7, "mixed", 20.0, m._canon_table(game), np.random.default_rng(seed), **kw
    )
    assert done == sims == sum(n)
    return n, w, stats


@pytest.mark.parametrize("kw,seed,moves", CONFIGS, ids=[repr(c[0]) for c in CONFIGS])
def test_the_kernel_copies_what_a_simulation_reads_and_grows_its_arrays_without_changing_the_search(kw, seed, moves):
    """From the same seed, the tree is the same whether every simulation copies the root's every row or only the
    rows a simulation touched (the default), and whether the tree's arrays start large or tiny (grown between
    kernel calls, the random stream continued): visits and value sums equal, bit for bit."""
    for k in (0, moves):
        game = env_after_random_moves(kw, seed, k).unwrapped.game
        n, w, stats = _whole(game, 7, 400)
        n_full, w_full, _ = _whole(game, 7, 400, full_copy=True)
        n_small, w_small, small = _whole(game, 7, 400, initial=(3, 40))
        assert (n, w) == (n_full, w_full) == (n_small, w_small)
        assert small["calls"] > 3 > stats["calls"]  # the tiny arrays grew several times
        assert 1 < stats["nodes"] <= 401
        other, _, _ = _whole(game, 8, 400)
        assert other != n  # another seed, another search


def _shares(game, tree, seeds, sims):
    """The root's visit shares averaged over searches from ``seeds``, and the root's mean value."""
    acc, value = None, 0.0
    for s in seeds:
        r = MCTS(RolloutGuide(), rng=np.random.default_rng(s), tree=tree).search(game, simulations=sims)
        v = np.asarray(r.visits, dtype=float) / sims
        acc = v if acc is None else acc + v
        value += sum(n * x for n, x in zip(r.visits, r.values, strict=True) if n) / sims
    return acc / len(seeds), value / len(seeds)


@pytest.mark.parametrize("kw,seed,moves", [({}, 5, 6), ({}, 5, 31), ({"num_players": 3}, 4, 17)])
def test_the_compiled_tree_searches_as_the_python_tree_does(kw, seed, moves):
    """Not seed for seed (the kernel draws its own random numbers), so in distribution: at a tile decision, a
    follower decision and a 3-player table, the root's visit shares averaged over 12 searches of 600 simulations
    differ from the Python tree's no more than two Python trees of other seeds differ (plus a margin), and the
    root's mean value agrees to 0.01.  A wrong player in the backup, a wrong key or a wrong copy moves both."""
    game = env_after_random_moves(kw, seed, moves).unwrapped.game
    compiled, v_c = _shares(game, "compiled", range(12), 600)
    python, v_p = _shares(game, "python", range(12), 600)
    python2, v_p2 = _shares(game, "python", range(100, 112), 600)
    tv = 0.5 * np.abs(compiled - python).sum()
    null = 0.5 * np.abs(python2 - python).sum()
    assert tv <= 2 * null + 0.03, (tv, null)
    assert abs(v_c - v_p) < 0.01 and abs(v_p2 - v_p) < 0.01


def test_a_compiled_search_is_a_function_of_its_seed_and_keeps_its_budget():
    game = env_after_random_moves({}, 2, 10).unwrapped.game
    before = (list(game.scores), list(game.history), game.draw_order[:], game.bag_size)
    a = MCTS(RolloutGuide(), rng=np.random.default_rng(3)).search(game, simulations=300)
    b = MCTS(RolloutGuide(), rng=np.random.default_rng(3)).search(game, simulations=300)
    assert (list(game.scores), list(game.history), game.draw_order[:], game.bag_size) == before
    assert a.extra["tree"] == "compiled" and a.root is None
    assert (a.visits, a.values, a.simulations) == (b.visits, b.values, 300) and sum(a.visits) == 300
    timed = MCTS(RolloutGuide(), rng=np.random.default_rng(3)).search(game, simulations=None, time_per_move=0.05)
    assert timed.simulations == sum(timed.visits) >= 1 and timed.extra["calls"] >= 1
    assert timed.seconds < 1.0


def test_plug_in_decisions_are_searched_in_the_compiled_tree():
    """The Count's, the King and Robber's and Darmstadt's decisions: below the root (listed as the action mask's
    flat indices) and at the root (the decision's history rows); a game between two compiled searches plays
    through them, every move legal, to its end."""
    kw = {"expansions": ("king_robber", "count", "darmstadt", "shrines"), "num_players": 3}
    plugin_nodes = 0
    for seed in range(6):
        env = env_after_random_moves(kw, seed, 0)
        game = env.unwrapped.game
        rng = np.random.default_rng(seed)
        while not game.over and game.phase in ("tile", "follower"):
            mask = env.observe(env.agent_selection)["action_mask"]
            if game.phase == "tile" and game.bag_size < 60 and seed % 2:  # some roots at a tile decision
                break
            env.step(int(rng.choice(np.flatnonzero(mask))))
        if game.over:
            continue
        r = MCTS(RolloutGuide(), rng=np.random.default_rng(seed)).search(game, simulations=400)
        assert r.extra["tree"] == "compiled" and sum(r.visits) == 400
        plugin_nodes += r.extra["plugin_nodes"]
    assert plugin_nodes > 0
    env = env_after_random_moves(kw, 1, 0)
    players = {a: MCTSPolicy(simulations=40, seed=i, tree="compiled") for i, a in enumerate(env.possible_agents)}
    steps = 0
    while not env.unwrapped.game.over:
        agent = env.agent_selection
        env.step(players[agent].act(env.observe(agent), env))
        steps += 1
    assert env.unwrapped.game.over and steps > 100


RIVER_OPTIONS = [{}, {"rules": {"river2": {"end_city_last": True, "start_tile": "after_river"}}}]


@pytest.mark.parametrize("options", RIVER_OPTIONS, ids=["default", "end_city_last,after_river"])
def test_the_kernels_redeal_deals_the_river_first_as_the_python_redeal_does(options):
    """The compiled redeal (``tree.redeal``: shuffle, then the River II's ``order_unseen`` kernel) deals orders
    the Python hook leaves as they are (the order everyone knows: fork, river, end city, lake, the start tile,
    then the land tiles), of the tiles left, with the land tiles in a uniformly random order; once the river is
    done, any order of the land tiles.  From the spring to well past the lake, with both options."""
    from carc_env.fast.playout import FastPlayout

    kw = {"expansions": ("river2",), **options}
    for moves in (0, 3, 9, 30):
        game = env_after_random_moves(kw, 4, moves).unwrapped.game
        hook = game.rules.h_order_unseen[0]
        f = FastPlayout()
        f.begin(game)
        left = sorted(game._bag)
        firsts = set()
        for seed in range(40):
            order = f.redeal_in_kernel(seed)
            assert sorted(order) == left
            assert hook(game, list(order)) == order, (moves, seed)  # already in the known order
            rivers = sum(1 for t in order if game.rules.tiles[t].has_kind(RIVER))
            firsts.add(order[rivers + 1] if rivers + 1 < len(order) else None)
        assert len(firsts) > 5  # the land tiles shuffled (the second land tile: the start tile may lead)
    # a shuffle the hook reorders: the kernel's order is not the identity of a shuffled list
    game = env_after_random_moves(kw, 4, 0).unwrapped.game
    shuffled = list(game._bag[::-1])
    np.random.default_rng(0).shuffle(shuffled)
    assert hook(game, list(shuffled)) != shuffled


def test_the_kernels_redeal_draws_a_fresh_generator_where_a_plug_in_draws_from_it():
    """Stained Glass draws its tokens from the game's generator: each simulation gets a new one (a valid PCG64
    state, odd increment), never the real game's, which would foresee the real draws."""
    from carc_env.fast.playout import FastPlayout
    from carc_env.fast.rng import WORDS, words_generator
    from carc_env.fast.tables import P_O_RNG

    game = env_after_random_moves({"expansions": ("stained_glass",)}, 3, 6).unwrapped.game
    f = FastPlayout()
    f.begin(game)
    assert f.uses_rng
    o = int(f._batch.tables.P[P_O_RNG])
    real = f._batch.state.ls[0, o : o + WORDS].tolist()
    seen = set()
    for seed in range(5):
        f.redeal_in_kernel(seed)
        words = f._batch.state.ls[1, o : o + WORDS].tolist()
        assert words != real and words[4] & 1 and words[8:] == [0, 0]
        words_generator(words).integers(10)  # a working generator
        seen.add(tuple(words))
    assert len(seen) == 5


@pytest.mark.parametrize(
    "kw", [{"expansions": ("river2", "king_robber")}, {"expansions": ("stained_glass",)}], ids=["river", "glass"]
)
def test_the_river_and_stained_glass_are_searched_by_the_compiled_tree(kw):
    """With the river's order and Stained Glass's generator in the kernel's redeal, ``auto`` compiles these
    searches too, and they agree with the Python tree in distribution (the root's mean value)."""
    game = env_after_random_moves(kw, 3, 2).unwrapped.game
    r = MCTS(RolloutGuide(), rng=np.random.default_rng(0)).search(game, simulations=50)
    assert r.extra["tree"] == "compiled"
    _, v_c = _shares(game, "compiled", range(8), 500)
    _, v_p = _shares(game, "python", range(8), 500)
    assert abs(v_c - v_p) < 0.015


def test_where_a_redeal_hook_has_no_kernel_the_python_tree_searches(monkeypatch):
    """A plug-in whose Python ``order_unseen`` hook has no compiled kernel keeps the Python redeal: ``auto``
    takes the Python tree there, ``compiled`` says why not."""
    import dataclasses

    from carc_env.expansions.river2 import fast as river_fast

    kernels = {k: v for k, v in river_fast.SUPPORT.kernels.items() if k != "order_unseen"}
    monkeypatch.setattr(river_fast, "SUPPORT", dataclasses.replace(river_fast.SUPPORT, kernels=kernels))
    game = env_after_random_moves({"expansions": ("river2",)}, 3, 4).unwrapped.game
    r = MCTS(RolloutGuide(), rng=np.random.default_rng(0)).search(game, simulations=50)
    assert r.extra == {"state": "compiled"} and r.root is not None
    with pytest.raises(ValueError, match="order_unseen"):
        MCTS(RolloutGuide(), tree="compiled").search(game, simulations=50)


def test_the_option_is_checked():
    game = env_after_random_moves({}, 2, 4).unwrapped.game
    with pytest.raises(ValueError, match="tree must be one of"):
        MCTS(RolloutGuide(), tree="numba")
    with pytest.raises(ValueError, match="random play-outs"):  # greedy play-outs: the Python tree only
        MCTS(RolloutGuide("greedy"), tree="compiled").search(game, simulations=20)
    with pytest.raises(ValueError, match="plain MCTS with compiled random play-outs"):
        MCTS(RolloutGuide(engine="python"), tree="compiled").search(game, simulations=20)
    assert MCTS(RolloutGuide("greedy")).search(game, simulations=20).root is not None  # auto: the Python tree
    assert make_player("mcts:30:tree=python", {}, 0).mcts.tree == "python"
    assert make_player("mcts:30", {}, 0).mcts.tree == "auto"
    with pytest.raises(PlayerSpecError, match="tree must be auto, compiled or python"):
        make_player("mcts:30:tree=fast", {}, 0)
    with pytest.raises(PlayerSpecError, match="tree is an option of mcts rollouts"):
        make_player("ppo-mcts:pretrained:base-2p-160:30:tree=python", {}, 0)
    assert make_player("ppo-mcts:pretrained:base-2p-160:30:top=5:tree=python", {}, 0).mcts.tree == "python"


@pytest.mark.parametrize("kw,seed,moves", [({}, 3, 20), ({"num_players": 3}, 11, 11)])
def test_sequential_halving_shares_each_round_evenly_and_keeps_the_better_half(kw, seed, moves):
    """``root="halving"``: ceil(log2 k) rounds of equal budget; in each the root moves still in get equal visits
    (within a few), the better half by mean stays in, and the move is the best mean of the last ones in: each
    move's visits are the shares of the rounds it lasted, and at each cut the worst mean kept is at least the
    best mean that went out."""
    game = env_after_random_moves(kw, seed, moves).unwrapped.game
    sims = 1200
    r = MCTS(RolloutGuide(), rng=np.random.default_rng(5), root="halving").search(game, simulations=sims)
    k = len(r.actions)
    rounds = math.ceil(math.log2(k))
    assert k > 4 and r.extra["rounds"] == rounds and r.extra["root"] == "halving"
    assert sum(r.visits) == r.simulations == sims
    sizes = [k]  # the moves in, round by round
    while len(sizes) < rounds:
        sizes.append((sizes[-1] + 1) // 2)
    expect = [sum(sims / rounds / m for m in sizes if i < m) for i in range(k)]  # from the most lasting move
    assert all(abs(v - e) <= rounds for v, e in zip(sorted(r.visits, reverse=True), expect, strict=True))
    cuts = r.extra["cuts"]  # each cut kept the better half by the means of that moment
    assert [len(out) for _, out in cuts] == [m - h for m, h in zip(sizes, sizes[1:], strict=False)]
    for worst_kept, out in cuts:
        assert out and max(out) <= worst_kept
    last = [i for i in range(k) if r.visits[i] >= max(r.visits) - rounds]
    assert r.choice in last and r.values[r.choice] == max(r.values[i] for i in last)
    assert r.best() == r.choice
    again = MCTS(RolloutGuide(), rng=np.random.default_rng(5), root="halving").search(game, simulations=sims)
    assert (again.visits, again.values, again.choice) == (r.visits, r.values, r.choice)
    timed = MCTS(RolloutGuide(), rng=np.random.default_rng(5), root="halving").search(
        game, simulations=None, time_per_move=0.08
    )
    assert timed.simulations == sum(timed.visits) >= 1 and timed.seconds < 1.0 and timed.choice is not None


def test_the_root_option_is_checked():
    with pytest.raises(ValueError, match="root must be one of"):
        MCTS(RolloutGuide(), root="gumbel")
    with pytest.raises(ValueError, match="compiled tree only"):
        MCTS(RolloutGuide(), tree="python", root="halving")
    game = env_after_random_moves({}, 2, 4).unwrapped.game
    with pytest.raises(ValueError, match="root='halving'"):  # greedy play-outs: the Python tree, no halving there
        MCTS(RolloutGuide("greedy"), root="halving").search(game, simulations=20)
    assert make_player("mcts:30:root=halving", {}, 0).mcts.root == "halving"
    assert make_player("mcts:30", {}, 0).mcts.root == "uct"
    assert make_player("ppo-mcts:pretrained:base-2p-160:30:top=5:root=halving", {}, 0).mcts.root == "halving"
    with pytest.raises(PlayerSpecError, match="root must be uct or halving"):
        make_player("mcts:30:root=sh", {}, 0)
    with pytest.raises(PlayerSpecError, match="root is an option of mcts rollouts"):
        make_player("ppo-mcts:pretrained:base-2p-160:30:root=halving", {}, 0)
