"""The trainer on the compiled engine (agents.games.CompiledGames) against the Python one, and its parts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.network import NetConfig
from agents.ppo import PPOConfig, SelfPlayTrainer, explained_variance, sample_masked
from carc_env.core import Game

CFG = dict(num_envs=2, steps_per_update=44, epochs=1, minibatch=12, chunk=6, imitation_updates=1,
           p_random=0.25, p_greedy=0.25, p_self=0.25, p_snapshot=0.25, snapshot_every=1,
           net=NetConfig(channels=8, blocks=1, hidden=16))  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _run(game: dict, updates: int, **change) -> tuple[SelfPlayTrainer, list]:
    torch.manual_seed(0)
    tr = SelfPlayTrainer(game, PPOConfig(**{**CFG, **change}), seed=4)
    trace = []
    for _ in range(updates):
        roll = tr.collect()
        stats = tr.update(roll)
        trace.append(
            (
                roll.actions.tolist(),
                roll.rewards.tolist(),
                roll.dones.tolist(),
                roll.values.tolist(),
                roll.next_values.tolist(),
                stats,
                tr.pop_episode_stats(),
                tr.env_steps,
                tr.episodes,
            )
        )
    return tr, trace


@pytest.mark.parametrize(
    "game,updates",
    [
        ({"num_players": 2}, 4),
        ({"num_players": 3, "expansions": ("king_robber",)}, 3),
        ({"num_players": 2, "expansions": ("darmstadt", "shrines")}, 4),
        ({"num_players": 2, "expansions": ("count", "king_robber", "darmstadt")}, 3),  # the box: the Count's phases
    ],
)
def test_the_compiled_games_train_exactly_like_the_python_ones(game, updates):
    """Same seeds, same opponents, byte-identical features and greedy decisions: the same rollouts,
    rewards, values and update statistics from both engines (imitation, then PPO against every kind of
    opponent: random, greedy, the live network and snapshots)."""
    fast, a = _run({**game, "engine": "auto"}, updates)
    slow, b = _run({**game, "engine": "python"}, updates)
    assert fast.engine == "numba" and slow.engine == "python"
    assert a == b
    assert fast.episodes >= 2 and len(fast.snapshots) >= 2


@pytest.mark.parametrize("player", ["mcts:8", "mcts:6:root=halving:farmers=0"])
def test_a_pool_player_trains_exactly_alike_on_both_engines(player):
    """A search player in the pool (``ppo.p_player``) decides from each game's FastMatch on the compiled
    engine and from its env on the Python one: the same searches, so the same rollouts and updates."""
    pool = dict(imitation_updates=0, p_random=0.0, p_greedy=0.25, p_self=0.1, p_snapshot=0.15, p_player=0.5)
    fast, a = _run({"num_players": 2, "engine": "auto"}, 3, player=player, **pool)
    slow, b = _run({"num_players": 2, "engine": "python"}, 3, player=player, **pool)
    assert fast.engine == "numba" and slow.engine == "python"
    assert a == b
    assert any("train_win_rate_vs_player" in episodes for *_, episodes, _, _ in a)  # games against it ended


def test_no_python_game_is_built_while_training_on_the_compiled_engine(monkeypatch):
    tr = SelfPlayTrainer({"num_players": 2}, PPOConfig(**CFG), seed=1)

    def refuse(*args, **kwargs):
        raise AssertionError("a Python Game was built during training")

    monkeypatch.setattr(Game, "__init__", refuse)
    for _ in range(3):
        tr.update(tr.collect())
    assert tr.engine == "numba" and tr.episodes > 0


def test_sample_masked_draws_legal_actions_with_their_probabilities():
    torch.manual_seed(0)
    neg = torch.finfo(torch.float32).min
    ml = torch.full((20000, 7), neg)
    ml[:, 1], ml[:, 4], ml[:, 6] = 0.0, 1.0, -1.0
    acts, logp = sample_masked(ml)
    counts = np.bincount(acts.numpy(), minlength=7) / len(acts)
    p = torch.softmax(ml[0], 0).numpy()
    assert set(acts.tolist()) == {1, 4, 6}
    assert np.abs(counts - p).max() < 0.015
    assert torch.allclose(logp, torch.log_softmax(ml, 1).gather(1, acts[:, None]).squeeze(1))


def test_explained_variance():
    r = np.array([1.0, 2.0, 3.0, 4.0])
    assert explained_variance(r, r) == 1.0
    assert explained_variance(np.zeros(4), r) == pytest.approx(1 - np.var(r) / np.var(r) + 0.0)
    assert np.isnan(explained_variance(r, np.ones(4)))
