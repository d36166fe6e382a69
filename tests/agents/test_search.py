"""MCTS (carc_env.search): determinised draws, legality in every phase, determinism, rollouts."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import carc_env
from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.core import Pass, PlaceTile
from carc_env.core.game import new_game
from carc_env.core.record import replay, to_record
from carc_env.encoding.lookahead import immediate_points, leads, one_ply_gain, scan_placement
from carc_env.search import MCTS, MCTSPolicy, RolloutGuide, utilities
from carc_env.search.mcts import node_actions, root_choices
from carc_env.search.rollout import UTILITIES, GreedyMover, canonical_rotations

ALL = ("base", "count", "darmstadt", "king_robber", "river2", "shrines")


def _advance(game, k, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(k):
        if game.over:
            break
        acts = game.legal_actions()
        game.apply(acts[int(rng.integers(len(acts)))])
    return game


# ------------------------------------------------------------------------------ Game.redeal
def test_redeal_keeps_the_remaining_tiles_and_everything_public():
    g = _advance(new_game(2, seed=11), 30)
    c = g.clone()
    c.redeal(np.random.default_rng(1))
    assert c.bag_size == g.bag_size
    assert np.array_equal(c.remaining_counts(), g.remaining_counts())
    assert c.current_tile == g.current_tile and c.phase == g.phase and c.scores == g.scores
    assert c.board == g.board
    assert c._bag != g._bag  # 40-odd tiles: another order (probability of the same one is negligible)
    drawn = len(g.draw_order) - g.bag_size
    assert c.draw_order[:drawn] == g.draw_order[:drawn]
    assert Counter(c.draw_order) == Counter(g.draw_order)
    # the real game is untouched, and the redealt copy is still a replayable game
    assert g.draw_order == replay(to_record(g)).draw_order
    c.apply(c.legal_actions()[0])
    while not c.over:
        c.apply(c.legal_actions()[-1])
    again = replay(to_record(c))
    assert again.scores == c.scores and again.over


def test_redeal_orders_are_uniform_over_the_remaining_tiles():
    g = new_game(2, seed=3)
    while g.bag_size > 15:  # late: few tiles left
        _advance(g, 1, seed=len(g.history))
    left = g.bag_size
    assert 3 <= left <= 30
    rng = np.random.default_rng(0)
    firsts = Counter()
    for _ in range(3000):
        c = g.clone()
        c.redeal(rng)
        firsts[c._bag[-1]] += 1  # the next tile drawn
    counts = g.remaining_counts()
    for t, k in firsts.items():
        expect = 3000 * counts[t] / left
        assert abs(k - expect) < 5 * math.sqrt(expect) + 5, (t, k, expect)


@pytest.mark.parametrize("start_tile", ["main_stack", "after_river"])
def test_redeal_keeps_the_river_first(start_tile):
    opts = {"river2": {"start_tile": start_tile}}
    g = new_game(2, expansions=("base", "river2"), seed=5, **opts)
    rivers = {
        i for i, t in enumerate(g.rules.tiles) if t.set == "river2" and "lake" not in t.id and t.id != "R2-spring"
    }
    lake = g.rules.tile_index["R2-lake-volcano"]
    start = g.rules.tile_index[g.rules.start_tiles["base"]]
    for step in range(12):
        c = g.clone()
        c.redeal(np.random.default_rng(step))
        order = c._bag[::-1]
        n_river = sum(1 for t in order if t in rivers or t == lake)
        assert all(t in rivers or t == lake for t in order[:n_river])
        if lake in order:
            assert order[n_river - 1] == lake
        if start_tile == "after_river" and not g.ext["river2"].river_done and start in order[n_river:]:
            assert order[n_river] == start
        _advance(g, 2, seed=step)
        if g.over:
            break


# ------------------------------------------------------------------------------ utilities, rollouts
def test_utilities():
    assert utilities([10, 5], "win") == [1.0, 0.0]
    assert utilities([7, 7, 3], "win") == [0.5, 0.5, 0.0]
    m = utilities([30, 10], "margin", margin_scale=20)
    assert m[0] == pytest.approx(0.5 + 0.5 * math.tanh(1.0)) and m[1] == pytest.approx(1 - m[0])
    mixed = utilities([30, 10], "mixed", margin_scale=20)
    assert mixed[0] == pytest.approx(0.5 * (1 + m[0]))


def _greedy_values(game, me):
    """The baseline's one-ply value of every distinct legal placement (no tie noise)."""
    out = {}
    for x, y, r in game.legal_tile_placements().tolist():
        scan = scan_placement(game, game.current_tile, x, y, r)
        v = one_ply_gain(game, PlaceTile(x, y, r), me) if scan.completes or not game.bag_size else 0.0
        out[(x, y, r)] = v + sum(0.2 if leads(j.counts, me) else -0.2 for j in scan.joined if j.counts)
    return out


def test_greedy_rollout_policy_makes_the_baselines_choices():
    env = carc_env.raw_env(num_players=2)
    mover, base = GreedyMover(), GreedyPolicy(seed=0)
    rng = np.random.default_rng(0)
    checked = {"tile": 0, "follower": 0}
    for seed in range(3):
        env.reset(seed=seed)
        g = env.game
        while not g.over:
            mask = env.match.mask()
            b = base.act({"action_mask": mask}, env)
            m = mover(g, rng)
            if g.phase == "tile":
                vals = _greedy_values(g, g.player)
                ba = env.codec.decode(g, b)
                assert vals[(m.x, m.y, m.rotation)] == pytest.approx(vals[(ba.x, ba.y, ba.rotation)], abs=2e-3)
                checked["tile"] += 1
            elif g.phase == "follower":
                bm = env.codec.decode(g, b)
                base_node = g.placements[-1][4]
                pts = {a: immediate_points(g, base_node + a.segment) if type(a) is not Pass else -1 for a in (bm, m)}
                assert (type(bm) is Pass) == (type(m) is Pass) or pts[bm] == pts[m]
                checked["follower"] += 1
            env.step(b)
    assert checked["tile"] > 100 and checked["follower"] > 50


# ------------------------------------------------------------------------------ the search
def _state(seed=2, k=20, n=2, expansions=("base",)):
    env = carc_env.raw_env(num_players=n, expansions=expansions)
    env.reset(seed=seed)
    rp = RandomPolicy(seed=seed)
    for _ in range(k):
        env.step(rp.act({"action_mask": env.match.mask()}, env))
    return env


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_search_leaves_the_game_unchanged_and_branches_on_the_drawn_tile(engine):
    """Both ways of playing the simulations (the Python game; the compiled state where it covers the game)."""
    env = _state()
    while env.game.phase != "follower":
        env.step(RandomPolicy(seed=1).act({"action_mask": env.match.mask()}, env))
    g = env.game
    before = (list(g.scores), list(g.history), list(g._bag), g.draw_order[:], dict(g.board))
    res = MCTS(RolloutGuide(engine=engine), rng=np.random.default_rng(0), tree="python").search(g, simulations=200)
    assert (list(g.scores), list(g.history), list(g._bag), g.draw_order[:], dict(g.board)) == before
    assert res.extra.get("state") == ("compiled" if engine == "auto" and _numba_available() else None)
    assert sum(res.visits) == 200 == res.simulations
    # after "pass" the turn ends and a tile is drawn: one branch per drawn tile type, never mixed
    i = next(j for j, a in enumerate(res.actions) if type(a) is Pass)
    branches = res.root.children[i]
    assert len(branches) > 3
    tiles = [key[2] for key in branches]
    assert len(set(tiles)) == len(tiles)
    opened = 0
    for key, node in branches.items():
        assert key[0] == "tile" and key[1] == 1 - g.player
        if res.extra.get("state") == "compiled":  # below the root: the engine's moves (kind 0: a tile),
            if node.actions is None:  # listed when a simulation comes back to the leaf
                assert node.visits == 0
                continue
            opened += 1
            assert len(node.actions) and all(int(row[0]) == 0 for row in node.actions)
        else:
            assert all(type(a) is PlaceTile for a in node.actions)
    assert opened > 0 or res.extra.get("state") != "compiled"
    # every action of the root was tried; the visits add up through the tree
    assert all(v > 0 for v in res.visits)
    for j, br in enumerate(res.root.children):
        assert sum(nd.visits for nd in (br or {}).values()) <= res.visits[j]


def test_symmetric_rotations_are_searched_once():
    g = new_game(2, seed=0)
    cache: dict = {}
    for _ in range(40):
        if g.phase == "tile":
            acts = node_actions(g, cache)
            assert len(acts) == g.count_legal_placements(distinct=True)
        _advance(g, 1, seed=len(g.history))


def test_mcts_policy_is_deterministic_given_seed_and_budget():
    def play(seed):
        env = carc_env.raw_env(num_players=2)
        env.reset(seed=4)
        m, gp = MCTSPolicy(24, seed=seed), GreedyPolicy(seed=1)
        moves = []
        for _ in range(14):
            p = m if env.game.player == 0 else gp
            a = p.act({"action_mask": env.match.mask()}, env)
            moves.append(a)
            env.step(a)
        return moves

    assert play(7) == play(7)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_mcts_plays_legal_moves_with_every_expansion(n):
    env = carc_env.raw_env(num_players=n, expansions=ALL)
    env.reset(seed=n)
    policies = [MCTSPolicy(3, rollout="greedy" if s == 1 else "random", epsilon=0.8, seed=s) for s in range(n)]
    for _ in range(20):
        mask = env.match.mask()
        a = policies[env.game.player].act({"action_mask": mask}, env)
        assert mask[a] == 1
        env.step(a)


def test_mcts_searches_every_expansion_phase_including_other_players_decisions():
    """Random games of the Count reach all its phases (test_count); MCTS decides in each."""
    from types import SimpleNamespace

    from carc_env.core import Game, GameConfig
    from carc_env.encoding import ActionCodec

    searched = Counter()
    other_player = 0
    for seed in range(60):
        g = Game(GameConfig(2 + seed % 4, ("base", "count")), seed=seed)
        codec = ActionCodec(g.rules)
        env = SimpleNamespace(game=g, codec=codec)
        rng = np.random.default_rng(seed)
        policy = MCTSPolicy(5, seed=seed)
        while not g.over:
            if g.phase.startswith("count") and searched[g.phase] < 3:
                mask = codec.mask(g)
                history = list(g.history)
                a = policy.act({"action_mask": mask}, env)
                assert mask[a] == 1 and g.history == history
                searched[g.phase] += 1
                other_player += g.player != g.turn_player
                g.apply(codec.decode(g, a))
                continue
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])
        if len(searched) == 4 and min(searched.values()) == 3:
            break
    assert set(searched) == {"count_leave", "count_deploy", "count_move", "count_final"}, searched
    assert other_player > 0  # decisions outside one's own turn are searched too


def test_mcts_beats_random_and_plays_a_whole_game_with_a_time_budget():
    from carc_env.baselines import play_match

    for seed in (1, 2):
        scores, winners = play_match([MCTSPolicy(12, seed=seed), RandomPolicy(seed=seed)], seed=seed)
        assert winners == [0], scores
    m = MCTSPolicy(simulations=None, time_per_move=0.01, seed=0)
    scores, _ = play_match([RandomPolicy(seed=3), m], seed=3)
    assert m.last_search is not None and m.last_search.simulations >= 1


def test_bad_options_are_refused():
    for kw, msg in [
        ({"simulations": 0}, "simulations"),
        ({"simulations": None}, "budget"),
        ({"time_per_move": -1}, "time_per_move"),
        ({"rollout": "smart"}, "rollout"),
        ({"utility": "elo"}, "utility"),
        ({"epsilon": 2}, "epsilon"),
        ({"c": -1}, "c must"),
    ]:
        with pytest.raises(ValueError, match=msg):
            MCTSPolicy(**kw)


def test_root_choices_cover_the_mask():
    env = _state(seed=9, k=11)
    g = env.game
    mask = env.match.mask()
    acts, idx = root_choices(g, env.codec, mask, {})
    assert set(idx) <= set(np.flatnonzero(mask).tolist())
    if g.phase == "tile":
        assert len(acts) == g.count_legal_placements(distinct=True)
    else:
        assert len(acts) == int(mask.sum())


def test_mcts_is_an_opponent_in_the_gymnasium_env():
    from carc_env.env.gym_env import CarcassonneGymEnv

    def run():
        env = CarcassonneGymEnv(opponents=[MCTSPolicy(5)], learner_seat=1)
        obs, info = env.reset(seed=21)
        actions, rewards = [], []
        for _ in range(8):
            a = int(np.flatnonzero(obs["action_mask"])[0])
            obs, r, term, trunc, info = env.step(a)
            actions.append(list(env.game.history))
            rewards.append(r)
            if term:
                break
        return actions, rewards

    assert run() == run()  # the env re-seeds the search on a seeded reset


def test_a_faster_engine_plugs_in_as_the_playout():
    calls = []

    def playout(game, rng):  # a stand-in engine: seat 0 always wins by 30
        calls.append(game.bag_size)
        return [30, 0]

    g = new_game(2, seed=4)
    res = MCTS(RolloutGuide(playout=playout, utility="win"), rng=np.random.default_rng(0)).search(g, simulations=30)
    assert len(calls) == 30  # one play-out per simulation (every leaf is new, none is the end)
    assert all(v == 1.0 for v, n in zip(res.values, res.visits, strict=True) if n)  # seat 0 decides at the root


def test_a_used_policy_pickles_without_its_caches():
    import pickle

    env = _state(seed=3, k=6)
    m = MCTSPolicy(5, rollout="greedy", epsilon=0.5, seed=0)
    m.act({"action_mask": env.match.mask()}, env)
    copy = pickle.loads(pickle.dumps(m))
    assert copy.last_search is None and copy.mcts._canon == {} and copy.simulations == 5
    m.seed(9)
    copy.seed(9)
    mask = env.match.mask()
    assert copy.act({"action_mask": mask}, env) == m.act({"action_mask": mask}, env)


# ------------------------------------------------------------------------------ compiled play-outs
from carc_env.fast import available as _numba_available  # noqa: E402
from carc_env.fast import kernels as K  # noqa: E402
from carc_env.fast.playout import FastPlayout  # noqa: E402
from carc_env.search.rollout import random_action  # noqa: E402

needs_numba = pytest.mark.skipif(not _numba_available(), reason="numba is not installed")


def _leaf(root, rng, steps):
    """A search's leaf: the root cloned, redealt, then ``steps`` random decisions (its path)."""
    c = root.clone()
    c.redeal(rng)
    for _ in range(steps):
        if not c.over:
            c.apply(random_action(c, rng))
    return c


@needs_numba
@pytest.mark.parametrize(
    "n,expansions",
    [
        (2, ("base",)),
        (3, ("base",)),
        (2, ("base", "king_robber", "river2")),
        (4, ("base", "king_robber")),
        (3, ("base", "count", "king_robber", "river2", "darmstadt", "shrines")),  # the Count's phases too
    ],
)
def test_compiled_playout_takes_over_the_leaf_exactly(n, expansions):
    """The leaf handed to the kernels is the Python leaf: same scores, phase, drawn tile, legal moves,
    and the same remaining stack (the same decisions then end both with the same scores)."""
    rng = np.random.default_rng(n)
    f = FastPlayout()
    for k in (0, 7, 25):
        root = _advance(new_game(n, expansions=expansions, seed=20 + k), k, seed=k)
        f.begin(root)
        for steps in (0, 1, 4):
            leaf = _leaf(root, rng, steps)
            g = f.load(leaf)
            b = f._batch
            assert b.scores(g) == leaf.scores and b.phase(g) == leaf.phase and b.supply(g) == leaf.supply
            if leaf.phase == "tile":
                assert int(b.state.gi[g, K.G_CUR]) == leaf.current_tile
                fast_moves = sorted(map(tuple, b.legal_tile_placements(g).tolist()))
                assert fast_moves == sorted(map(tuple, np.asarray(leaf.legal_tile_placements()).tolist()))
            while not leaf.over:
                a = random_action(leaf, rng)
                leaf.apply(a)
                b.apply(g, a)
            assert b.scores(g) == leaf.scores and b.over(g)


@needs_numba
def test_compiled_playout_has_the_python_playouts_distribution():
    """Same decisions rule (uniform over legal placements, over spots + pass): from one state, 300
    redealt play-outs on each engine give final scores whose means agree within sampling error."""
    root = _advance(new_game(2, seed=8), 30, seed=3)
    rng = np.random.default_rng(1)
    fast = FastPlayout()
    fast.begin(root)
    guide = RolloutGuide(engine="python")
    fs, ps = [], []
    for _ in range(300):
        fs.append(fast(_leaf(root, rng, 0), rng))
        c = _leaf(root, rng, 0)
        guide.playout(c, rng)
        ps.append(c.scores)
    fs, ps = np.array(fs, dtype=float), np.array(ps, dtype=float)
    assert root.scores == list(root.scores)  # the root is never changed
    for col in (fs[:, 0], fs[:, 1], fs[:, 0] - fs[:, 1]):
        assert col.std() > 0  # the play-outs are random, not one game repeated
    for j, (a, b) in enumerate(
        [(fs[:, 0], ps[:, 0]), (fs[:, 1], ps[:, 1]), (fs[:, 0] - fs[:, 1], ps[:, 0] - ps[:, 1])]
    ):
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4.0 * se, (j, a.mean(), b.mean(), se)
        assert 0.7 < a.std() / b.std() < 1.4, (j, a.std(), b.std())


@needs_numba
def test_engine_option_picks_the_playouts():
    from carc_env.search.rollout import ENGINES

    assert ENGINES == ("auto", "python", "numba")
    base, glass = new_game(2, seed=1), new_game(2, expansions=("base", "stained_glass"), seed=1)
    assert isinstance(RolloutGuide()._playout_for(base), FastPlayout)
    assert isinstance(RolloutGuide()._playout_for(new_game(2, expansions=("base", "count"), seed=1)), FastPlayout)
    assert isinstance(RolloutGuide()._playout_for(glass), FastPlayout)  # the glass tokens' generator too
    assert RolloutGuide(engine="python")._playout_for(base) is None
    from carc_env.fast.playout import GreedyPlayout

    assert isinstance(RolloutGuide("greedy")._playout_for(base), GreedyPlayout)  # the compiled greedy covers it
    assert isinstance(RolloutGuide("greedy", engine="numba")._playout_for(glass), GreedyPlayout)
    assert RolloutGuide("greedy", engine="python")._playout_for(base) is None
    from carc_env.core.expansion import Expansion, register, unregister

    class NoFast(Expansion):  # a user's plug-in without a fast part: the Python play-out
        KEY = "test_no_fast"
        REQUIRES = ("base",)

    register(NoFast, package="_toy_plugins.panel")
    try:
        other = new_game(2, expansions=("base", "test_no_fast"), seed=1)
        assert RolloutGuide()._playout_for(other) is None
        assert RolloutGuide("greedy")._playout_for(other) is None
        with pytest.raises(ValueError, match="test_no_fast"):
            RolloutGuide(engine="numba")._playout_for(other)
        with pytest.raises(ValueError, match="test_no_fast"):
            RolloutGuide("greedy", engine="numba")._playout_for(other)
    finally:
        unregister("test_no_fast")
    with pytest.raises(ValueError, match="engine must be one of"):
        RolloutGuide(engine="gpu")


@needs_numba
def test_mcts_on_compiled_playouts_is_deterministic_and_pickles():
    import pickle

    env = _state(seed=5, k=10)
    mask = env.match.mask()
    a = MCTSPolicy(60, seed=2, engine="numba")
    b = MCTSPolicy(60, seed=2, engine="numba")
    ia = a.act({"action_mask": mask}, env)
    assert ia == b.act({"action_mask": mask}, env) and mask[ia]
    assert a.last_search.visits == b.last_search.visits and a.last_search.simulations == 60
    c = pickle.loads(pickle.dumps(a))
    assert c.guide._fast == {}
    c.seed(4)
    a.seed(4)
    assert c.act({"action_mask": mask}, env) == a.act({"action_mask": mask}, env)


# ------------------------------------------------------------------------------ the search on compiled state
def _tree(node, out, depth=0):
    """Every node's statistics, depth first, keys in order: two trees searched alike give equal lists (a
    leaf never visited again: its player only; the compiled-state search lists its moves on a return)."""
    if node.visits == 0:
        out.append((depth, node.player))
        return out
    out.append((depth, node.player, list(node.n), [round(w, 12) for w in node.w], node.order))
    for branches in node.children:
        for key in sorted(branches or {}, key=repr):
            out.append(key)
            _tree(branches[key], out, depth + 1)
    return out


def _plugin_nodes(node):
    k = 0
    for branches in node.children:
        for key, child in (branches or {}).items():
            opened = key[0] not in ("tile", "follower") and child.actions is not None  # its moves listed
            k += int(opened) + _plugin_nodes(child)
    return k


@needs_numba
@pytest.mark.parametrize(
    "n,expansions",
    [
        (2, ("base",)),
        (3, ("base",)),
        (2, ("base", "king_robber", "river2")),
        (3, ("base", "count", "king_robber", "river2", "darmstadt", "shrines")),  # the Count's phases in the tree
        (2, ("base", "stained_glass")),
    ],
)
def test_search_on_compiled_state_is_the_python_trees_search(n, expansions, monkeypatch):
    """The same seed gives the same tree, node for node (visits, values, keys, the untried orders), whether
    each simulation's state is a Python game (with compiled play-outs: the reference) or the compiled
    engine's slot: the same redeals, moves, keys, legal-move orders and play-out seeds.

    Stained Glass draws tokens from the game's generator: the reference's compiled play-out continues the
    ROOT's generator (FastPlayout.load copies slot 0), the compiled-state search the redealt one, as
    ``Game.redeal`` makes it (the next test); with the root's generator both searches are the same."""
    if "stained_glass" in expansions:
        monkeypatch.setattr(FastPlayout, "uses_rng", property(lambda self: False))
    plugin_nodes = 0
    roots = [_advance(new_game(n, expansions=expansions, seed=30 + k), k, seed=k) for k in (0, 3, 17, 40)]
    for seed in range(8):  # a plug-in's decision at the root, and the tile decision before it
        g = new_game(n, expansions=expansions, seed=seed)
        rng, before = np.random.default_rng(seed), None
        while not g.over and g.phase in ("tile", "follower"):
            before = g.clone() if g.phase == "tile" else before
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])
        if not g.over:
            roots += [g, before]
            break
    for k, root in enumerate(roots):
        if root.over:
            continue
        fast = MCTS(RolloutGuide(), rng=np.random.default_rng(k), tree="python")  # (compiled tree: test_tree_search)
        ref = MCTS(RolloutGuide(playout=FastPlayout()), rng=np.random.default_rng(k))
        a = fast.search(root, simulations=300)
        b = ref.search(root, simulations=300)
        assert a.extra == {"state": "compiled"} and b.extra == {}
        assert a.visits == b.visits and a.simulations == b.simulations == 300
        assert a.values == b.values or all(
            (math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a.values, b.values, strict=True)
        )
        assert _tree(a.root, []) == _tree(b.root, [])
        plugin_nodes += _plugin_nodes(a.root)
        assert fast.rng.integers(2**62) == ref.rng.integers(2**62)  # the generator consumed alike
    if len(expansions) > 3:
        assert plugin_nodes > 0  # plug-in decisions were searched below the root


@needs_numba
@pytest.mark.parametrize(
    "n,expansions",
    [
        (2, ("base",)),
        (3, ("base", "count", "king_robber", "river2", "darmstadt", "shrines")),
        (2, ("base", "stained_glass")),
    ],
)
def test_compiled_simulation_state_is_the_redealt_python_game(n, expansions):
    """FastPlayout.redeal / step / key / moves on a search's path equal the Python game that
    ``root.clone(); redeal(rng)`` makes and the same moves play, to the end (the redealt generator too)."""
    from carc_env.fast.rng import generator_words
    from carc_env.search.mcts import state_key

    f, canon = FastPlayout(), {}
    drew = plugin = 0
    for k in (0, 9, 30):
        root = _advance(new_game(n, expansions=expansions, seed=50 + k), k, seed=k)
        f.begin(root)
        for s in range(3):
            leaf = root.clone()
            leaf.redeal(np.random.default_rng(s))
            rng = np.random.default_rng(s)  # the search's sampling of the same redeal
            order = root._bag[::-1]
            rng.shuffle(order)
            shuffled = list(order)
            for hook in root.rules.h_order_unseen:
                order = hook(root, order)
            seed = rng.integers(2**63)
            f.redeal(order, generator_words(np.random.default_rng(seed)) if f.uses_rng else None)
            assert leaf._bag[::-1] == order
            moves = np.random.default_rng(100 + s)
            while not leaf.over:
                assert f.key() == state_key(leaf)
                listed = f.moves(lambda t, root=root: canonical_rotations(root, t, canon))
                if listed is None:  # a plug-in's decision
                    listed = f.plugin_moves(root, shuffled, seed)
                    plugin += 1
                rows = [list(map(int, r)) for r in listed]
                acts = node_actions(leaf, canon)
                assert rows == [list(f.row(1, a)) for a in acts]
                i = int(moves.integers(len(acts)))
                assert f.step(rows[i])
                leaf.apply(acts[i])
                drew += 1
            assert f.key() is None and f.scores() == leaf.scores
    assert drew > 300
    assert plugin > 0 or n == 2  # the Count's decisions (the glass's are rare in random play)


def test_guide_values_are_the_utilities_bit_for_bit():
    """RolloutGuide.values (the compiled-state search's leaf values) gives utilities()'s floats exactly."""
    rng = np.random.default_rng(0)
    for kind in UTILITIES:
        guide = RolloutGuide(utility=kind, margin_scale=13.0)
        for _ in range(3000):
            scores = [int(v) for v in rng.integers(0, 8, int(rng.integers(2, 6)))]  # ties are common
            assert guide.values(scores) == utilities(scores, kind, 13.0), (kind, scores)


@needs_numba
def test_the_tournaments_mcts_searches_on_compiled_state_and_engine_python_does_not():
    """``mcts:N`` (engine auto) plays its simulations on the compiled state, under a time budget too;
    greedy rollouts too (on the compiled greedy); ``engine=python`` keeps the Python game."""
    from agents.players import make_player

    env = _state(seed=4, k=12)
    obs = {"action_mask": env.match.mask()}
    for spec, state in [
        ("mcts:60", "compiled"),
        ("mcts:time=0.05", "compiled"),
        ("mcts:30:engine=python", None),
        ("mcts:5:greedy", "compiled"),
        ("mcts:5:greedy:engine=python", None),
    ]:
        p = make_player(spec, {"num_players": 2}, seed=1)
        assert obs["action_mask"][p.act(obs, env)]
        res = p.last_search
        assert res.extra.get("state") == state, spec
        assert res.simulations >= 1 and sum(res.visits) == res.simulations
