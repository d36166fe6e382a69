"""Baseline policies: legal, reproducible, and greedy beats random."""

from __future__ import annotations

import numpy as np
import pytest

from carc_env.baselines import GreedyPolicy, Policy, RandomPolicy, play_match
from carc_env.env.aec import raw_env


def test_policies_follow_the_protocol_and_act_legally():
    for policy in (RandomPolicy(0), GreedyPolicy(seed=0), GreedyPolicy(epsilon=0.5, seed=1)):
        assert isinstance(policy, Policy)
        e = raw_env(num_players=3)
        e.reset(seed=5)
        while not e.game.over:
            obs = e.observe(e.agent_selection)
            a = policy.act(obs, e)
            assert obs["action_mask"][a] == 1
            e.step(a)


def test_greedy_takes_an_immediately_scoring_placement_and_follower():
    # BA-E below the start tile's city closes a 2-tile city: greedy places it there and puts a knight on it.
    e = raw_env()
    e.reset(seed=0, options={"draw_order": ["BA-E", "BA-B", "BA-B"]})
    g = GreedyPolicy(seed=0)
    a = g.act(e.observe("player_0"), e)
    assert e.action_to_text(a) == "tile 0,-1 r2"
    e.step(a)
    a = g.act(e.observe("player_0"), e)
    assert e.action_to_text(a) == "follower c1"
    e.step(a)
    assert e.game.scores == [4, 0]


def test_greedy_avoids_early_farmers_and_passes_on_worthless_spots():
    e = raw_env()
    e.reset(seed=0, options={"draw_order": ["BA-V", "BA-B", "BA-B"]})  # a road curve: road or field
    g = GreedyPolicy(seed=0)
    e.step(g.act(e.observe("player_0"), e))
    assert e.game.phase == "follower"
    text = e.action_to_text(g.act(e.observe("player_0"), e))
    assert not text.startswith("follower f")


def test_policies_are_reproducible():
    for make in (lambda: RandomPolicy(3), lambda: GreedyPolicy(epsilon=0.3, seed=3)):
        a = play_match([make(), make()], seed=8)
        b = play_match([make(), make()], seed=8)
        assert a == b


def test_greedy_beats_random():
    wins, diff = 0, 0
    games = 6
    for s in range(games):
        seat = s % 2
        pols = [RandomPolicy(s), RandomPolicy(s + 50)]
        pols[seat] = GreedyPolicy(seed=s)
        scores, winners = play_match(pols, seed=1000 + s)
        wins += winners == [seat]
        diff += scores[seat] - scores[1 - seat]
    assert wins == games
    assert diff / games > 30


def test_epsilon_is_the_strength_knob():
    with pytest.raises(ValueError, match="epsilon"):
        GreedyPolicy(epsilon=1.5)
    e = raw_env()
    e.reset(seed=1)
    obs = e.observe(e.agent_selection)
    # epsilon=1 is uniformly random over the mask
    picks = {GreedyPolicy(epsilon=1.0, seed=s).act(obs, e) for s in range(30)}
    assert len(picks) > 3 and all(obs["action_mask"][a] for a in picks)


def test_greedy_leaves_the_game_untouched():
    e = raw_env()
    e.reset(seed=2)
    rng = np.random.default_rng(0)
    g = GreedyPolicy(seed=0)
    for _ in range(60):
        before = (list(e.game.history), list(e.game.scores), dict(e.game.followers), len(e.game.placements))
        obs = e.observe(e.agent_selection)
        g.act(obs, e)
        assert before == (list(e.game.history), list(e.game.scores), dict(e.game.followers), len(e.game.placements))
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
