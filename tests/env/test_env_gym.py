"""Gymnasium single-agent env, flattening wrappers, and a short MaskablePPO run through them."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import carc_env.env  # noqa: F401  (registers carc_env/Carcassonne-v0)
from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.core import ConfigError, IllegalActionError
from carc_env.env.aec import env as make_aec_env
from carc_env.env.gym_env import CarcassonneGymEnv
from carc_env.env.wrappers import FlattenObservation, FlattenObservationAEC, flat_layout, flatten_observation


def _play(env, seed, rng):
    obs, info = env.reset(seed=seed)
    trace = []
    total = 0.0
    while True:
        mask = env.unwrapped.action_masks()
        assert np.array_equal(mask, obs["action_mask"].astype(bool))
        assert np.array_equal(info["action_mask"], obs["action_mask"])
        assert mask.any()
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(a)
        assert not truncated
        total += reward
        trace.append((a, reward, obs["globals"].copy()))
        if terminated:
            return trace, total, info


def test_gym_make_and_episode_protocol():
    env = gymnasium.make("carc_env/Carcassonne-v0", opponents=[GreedyPolicy(epsilon=0.2)])
    trace, total, info = _play(env, 3, np.random.default_rng(0))
    assert info["learner_seat"] == 3 % 2
    scores = info["final_scores"]
    me = info["learner_seat"]
    best = max(scores)
    expect = (1.0 if scores.count(best) == 1 else 0.0) if scores[me] == best else -1.0
    assert total == expect  # win_loss: the whole return arrives at the end
    assert all(r == 0.0 for _, r, _ in trace[:-1])
    with pytest.raises(IllegalActionError):
        env.step(0)


def test_gym_env_is_deterministic_under_a_seed():
    a = CarcassonneGymEnv(opponents=[RandomPolicy(1), GreedyPolicy(0.3, seed=2)], num_players=3)
    b = CarcassonneGymEnv(opponents=[RandomPolicy(7), GreedyPolicy(0.3, seed=8)], num_players=3)
    ta, *_ = _play(a, 11, np.random.default_rng(4))
    tb, *_ = _play(b, 11, np.random.default_rng(4))
    assert len(ta) == len(tb)
    for (a1, r1, g1), (a2, r2, g2) in zip(ta, tb, strict=True):
        assert a1 == a2 and r1 == r2 and np.array_equal(g1, g2)


def test_learner_seat_rotation_and_option():
    env = CarcassonneGymEnv(num_players=3)
    seats = []
    for seed in range(3):
        _, info = env.reset(seed=seed)
        seats.append(info["learner_seat"])
        assert env.game.player == info["learner_seat"]
    assert seats == [0, 1, 2]
    _, info = env.reset(seed=5, options={"learner_seat": 0})
    assert info["learner_seat"] == 0
    fixed = CarcassonneGymEnv(learner_seat=1)
    _, info = fixed.reset(seed=0)
    assert info["learner_seat"] == 1
    with pytest.raises(ConfigError, match="learner_seat"):
        CarcassonneGymEnv(learner_seat=2)
    with pytest.raises(ConfigError, match="unknown reset option"):
        env.reset(seed=0, options={"bogus": 1})
    with pytest.raises(ConfigError, match="opponents"):
        CarcassonneGymEnv(opponents=[object()])


def test_score_delta_rewards_sum_to_the_final_difference():
    env = CarcassonneGymEnv(reward="score_delta", opponents=GreedyPolicy(seed=0))
    _, total, info = _play(env, 2, np.random.default_rng(1))
    s = info["final_scores"]
    me = info["learner_seat"]
    assert total == pytest.approx(0.01 * (s[me] - s[1 - me]))


def test_flatten_wrappers():
    env = FlattenObservation(CarcassonneGymEnv())
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs.ndim == 1
    assert env.observation_space.contains(obs)
    assert "action_mask" in info and env.action_masks().any()
    layout = flat_layout(env.env.observation_space)
    board = env.env.aec.observe(env.env.aec.possible_agents[0])["board"]
    assert np.array_equal(obs[layout["board"]], board.ravel().astype(np.float32))
    obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env.observation_space.contains(obs)

    aec = FlattenObservationAEC(make_aec_env())
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in aec.agent_iter(60):
        obs, _, term, trunc, info = aec.last()
        assert aec.observation_space(agent).contains(obs)
        assert np.array_equal(obs, flatten_observation(aec.unwrapped.observe(agent)))
        aec.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))


def test_maskable_ppo_trains_through_the_gymnasium_env():
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny networks: extra threads only spin (35x slower on a busy 2-core box)
    try:
        _train_and_predict(MaskablePPO, get_action_masks)
    finally:
        torch.set_num_threads(threads)


def _train_and_predict(MaskablePPO, get_action_masks):  # noqa: N803
    env = gymnasium.make("carc_env/Carcassonne-v0", opponents=[RandomPolicy(0)])
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=256,
        batch_size=128,
        n_epochs=1,
        seed=0,
        device="cpu",
        verbose=0,
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(total_timesteps=2_000)
    assert model.num_timesteps >= 2_000
    obs, _ = env.reset(seed=1)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
        assert obs["action_mask"][int(action)] == 1
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            break
