"""The batched vector env matches N single environments step for step."""

from __future__ import annotations

import numpy as np
import pytest

from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.core import ConfigError
from carc_env.env.aec import raw_env
from carc_env.env.vector import CarcassonneVectorEnv


@pytest.mark.parametrize(("num_players", "reward"), [(2, "win_loss"), (3, "score_delta")])
def test_vector_env_matches_single_envs_step_for_step(num_players, reward):
    n_envs, seed = 3, 40
    venv = CarcassonneVectorEnv(n_envs, seed=seed, num_players=num_players, reward=reward)
    singles = [raw_env(num_players=num_players, reward=reward) for _ in range(n_envs)]
    for i, e in enumerate(singles):
        e.reset(seed=seed + i)
    obs, infos = venv.reset()
    rng = np.random.default_rng(0)
    games_done = 0
    for _step in range(260):
        actions = np.zeros(n_envs, dtype=np.int64)
        for i, e in enumerate(singles):
            agent = e.agent_selection
            single = e.observe(agent)
            assert venv.seats[i] == e.seat_of(agent) == infos["seat"][i]
            for k in single:
                assert np.array_equal(obs[k][i], single[k]), (k, i, _step)
            actions[i] = rng.choice(np.flatnonzero(single["action_mask"]))
        acting = venv.seats.copy()
        obs, rewards, dones, truncs, infos = venv.step(actions)
        seat_rewards = infos["seat_rewards"]
        assert seat_rewards.shape == (n_envs, num_players) and seat_rewards.dtype == np.float32
        assert rewards.shape == (n_envs,) and rewards.dtype == np.float32 and not truncs.any()
        for i, e in enumerate(singles):
            e.step(int(actions[i]))
            expect = [e.rewards[a] for a in e.possible_agents]
            assert np.allclose(seat_rewards[i], expect), (i, _step)
            assert rewards[i] == seat_rewards[i, acting[i]]  # self-play: the acting seat's reward
            assert dones[i] == e.game.over
            if dones[i]:
                games_done += 1
                assert infos["_final_scores"][i] and list(infos["final_scores"][i]) == e.game.scores
                e.reset()  # an unseeded reset continues the seed stream, as the vector env does
    assert games_done >= n_envs  # the auto-reset path was exercised
    assert np.array_equal(venv.action_masks(), obs["action_mask"].astype(bool))


def test_vector_env_with_opponents_returns_only_learner_decisions():
    venv = CarcassonneVectorEnv(4, seed=0, opponents=[GreedyPolicy(0.5, seed=1)])
    obs, infos = venv.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        assert np.array_equal(venv.seats, venv.learner_seats)
        seats = venv.learner_seats.copy()  # a finished game restarts with the next seat
        keys = rng.random(obs["action_mask"].shape) * obs["action_mask"]
        obs, rewards, dones, _, infos = venv.step(keys.argmax(axis=1))
        finished += int(dones.sum())
        assert np.array_equal(infos["learner_seat"], venv.learner_seats)
        for i in range(4):
            assert rewards[i] == infos["seat_rewards"][i, seats[i]]
            if dones[i]:
                assert infos["_final_scores"][i] and infos["episode_length"][i] > 0
                assert infos["final_learner_seat"][i] == seats[i]
                scores = infos["final_scores"][i].tolist()
                best = max(scores)
                expect = (1.0 if scores.count(best) == 1 else 0.0) if scores[seats[i]] == best else -1.0
                assert rewards[i] == expect
            else:
                assert rewards[i] == 0.0
    assert finished >= 4
    assert set(venv.learner_seats.tolist()) <= {0, 1}


def test_vector_env_bad_arguments():
    with pytest.raises(ConfigError, match="num_envs"):
        CarcassonneVectorEnv(0)
    with pytest.raises(ConfigError, match="unknown environment option"):
        CarcassonneVectorEnv(2, colour="red")
    with pytest.raises(ConfigError, match="learner_seat"):
        CarcassonneVectorEnv(2, opponents=RandomPolicy(), learner_seat=3)
    venv = CarcassonneVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step([0, 0])
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        venv.step([0])
