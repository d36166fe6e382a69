"""Greedy play-outs on the compiled engine (carc_env.fast.playout.GreedyPlayout): legal games the reference
scores alike, decided as the greedy baseline decides, and the tree search's leaves when it asks for them."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import env_after_random_moves

from carc_env.fast.playout import FastPlayout, GreedyPlayout
from carc_env.policies import GreedyPolicy
from carc_env.search import MCTSPolicy, RolloutGuide

CONFIGS = [
    ({}, 3),
    ({"num_players": 3}, 11),
    ({"expansions": ("king_robber", "count", "darmstadt")}, 5),
    ({"expansions": ("shrines", "river2"), "num_players": 4}, 7),
]


class _Favour:
    """A stand-in for GreedyPolicy's generator: its tie-breaking noise is 0 except ``1e-3`` for the ``k``-th
    legal action (placement, or follower spot), so the policy plays that action exactly when its greedy value
    is within the noise's range of the best (the kernel's own noise is uniform in [0, 1e-3))."""

    def __init__(self, k: int) -> None:
        self.k = k

    def random(self, n: int | None = None):
        out = np.zeros(n)
        if 0 <= self.k < n:
            out[self.k] = 1e-3
        return out

    def integers(self, high: int) -> int:
        raise AssertionError("a greedy decision with epsilon 0 draws no uniform pick")


_root = env_after_random_moves


@pytest.mark.parametrize("kw,seed", CONFIGS, ids=[repr(c[0]) for c in CONFIGS])
def test_a_greedy_play_out_is_the_greedy_baselines_game_and_the_reference_scores_it_alike(kw, seed):
    """From a position mid-game, play slot 1 out greedily on the true draw order; replay its actions on the
    Python engine: every one is legal, every tile and follower decision is one the Python GreedyPolicy makes
    (given noise that favours it by less than the kernel's noise can), and the final scores agree."""
    env = _root(kw, seed, 24)
    root = env.unwrapped.game
    f = GreedyPlayout(epsilon=0.0)
    f.begin(root)
    assert not f.uses_rng  # (the configurations here draw nothing from the game's generator)
    f.redeal(list(root._bag[::-1]))  # the tiles left in the order the env's game will draw them
    scores = f.play_out(seed)
    actions = f._batch.actions(1, len(root.history))
    assert actions, "the play-out made no decision"
    codec = env.unwrapped.codec
    checked = 0
    for a in actions:
        game = env.unwrapped.game
        flat = codec.encode(game, a)
        obs = env.observe(env.agent_selection)
        assert obs["action_mask"][flat], f"illegal play-out action {a} in phase {game.phase}"
        if game.phase in ("tile", "follower"):
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            k = legal.index(flat)
            policy = GreedyPolicy(epsilon=0.0)
            policy.rng = _Favour(k if game.phase == "tile" or k < len(legal) - 1 else -1)  # pass: no favour
            assert policy.act(obs, env) == flat, f"not the greedy choice: {a} in phase {game.phase}"
            checked += 1
        env.step(flat)
    game = env.unwrapped.game
    assert game.over
    assert list(game.scores) == scores
    assert checked >= 20


def test_greedy_play_outs_with_random_moves_are_legal_and_score_alike():
    """epsilon 0.5: half the decisions uniformly random (the random play-out's rule), half greedy; every
    game a legal one whose replay on the Python engine ends with the same scores."""
    kw = {"expansions": ("king_robber", "count", "darmstadt"), "num_players": 3}
    for seed in (21, 22):
        env = _root(kw, seed, 10)
        root = env.unwrapped.game
        f = GreedyPlayout(epsilon=0.5)
        f.begin(root)
        f.redeal(list(root._bag[::-1]))
        scores = f.play_out(seed)
        game = root.clone()
        for a in f._batch.actions(1, len(root.history)):
            game.apply(a)
        assert game.over and list(game.scores) == scores


def test_greedy_play_outs_score_more_than_random_ones():
    """The reason to pay for them: from the same position and draws, greedy players complete features and
    place followers as players do. Over 40 play-outs the points scored are far above random play-outs'."""
    env = _root({}, 4, 30)
    root = env.unwrapped.game
    rnd, gre = FastPlayout(), GreedyPlayout()
    rnd.begin(root)
    gre.begin(root)
    order = list(root._bag[::-1])
    rng = np.random.default_rng(0)
    total = {"random": 0, "greedy": 0}
    for i in range(40):
        rng.shuffle(order)
        for name, f in (("random", rnd), ("greedy", gre)):
            f.redeal(order)
            total[name] += sum(f.play_out(i)) - sum(root.scores)
    assert total["greedy"] > 2 * total["random"], total


def test_the_search_plays_greedy_play_outs_on_the_compiled_engine_where_it_covers_the_game():
    env = _root({}, 8, 20)
    game = env.unwrapped.game
    auto = RolloutGuide("greedy", epsilon=0.1)
    assert isinstance(auto.compiled_state(game), GreedyPlayout)
    assert auto.compiled_state(game).epsilon == 0.1
    assert RolloutGuide("greedy", engine="python").compiled_state(game) is None
    assert isinstance(RolloutGuide("random").compiled_state(game), FastPlayout)
    assert not isinstance(RolloutGuide("random").compiled_state(game), GreedyPlayout)
    obs = env.observe(env.agent_selection)
    moves, visits = [], []
    for _ in range(2):  # a seeded search with a simulation budget is a pure function of the state
        p = MCTSPolicy(40, rollout="greedy", seed=5)
        moves.append(p.act(obs, env))
        visits.append(list(p.last_search.visits))
        assert p.last_search.simulations == 40
        assert p.last_search.extra.get("state") == "compiled"
    assert moves[0] == moves[1] and visits[0] == visits[1]
    assert obs["action_mask"][moves[0]]
