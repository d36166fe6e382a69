"""Stable-Baselines3 / sb3-contrib integration: vectorised envs with masks, the features extractor, and a real
(tiny) MaskablePPO run of ``scripts/train_sb3.py`` against a baseline pool, resumed and evaluated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from agents.evaluate import evaluate
from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.core import ConfigError
from carc_env.integrations import sb3

ROOT = Path(__file__).resolve().parents[2]


def _script(*args: str) -> tuple[dict, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)  # the subprocess workers
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train_sb3.py"), *args, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr[-5000:]}"
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


@pytest.mark.parametrize("subprocess_workers", [True, False])
def test_vec_env_hands_sb3_contrib_the_learners_masks(subprocess_workers):
    vec = sb3.make_vec_env(2, opponents=[GreedyPolicy(seed=0)], seed=3, subprocess=subprocess_workers, num_players=3)
    try:
        assert isinstance(vec, SubprocVecEnv if subprocess_workers else DummyVecEnv)
        obs = vec.reset()
        rng = np.random.default_rng(0)
        for _ in range(30):
            masks = get_action_masks(vec)
            assert masks.shape == (2, vec.action_space.n) and masks.dtype == bool
            np.testing.assert_array_equal(masks, obs["action_mask"].astype(bool))
            assert masks.any(axis=1).all()
            obs, rewards, dones, infos = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            assert not any("illegal_action" in info for info in infos)
        # make_vec_env seeds game i with 3 + i; a seeded reset puts the learner in seat seed % num_players
        assert vec.get_attr("learner") == [0, 1]
    finally:
        vec.close()


def test_vec_env_rejects_bad_options_before_starting_workers():
    with pytest.raises(ConfigError, match="num_players"):
        sb3.make_vec_env(2, num_players=7)
    with pytest.raises(ConfigError, match="n_envs"):
        sb3.make_vec_env(0)


def test_features_extractor_reads_board_globals_windows_but_not_the_mask():
    from carc_env.env.gym_env import CarcassonneGymEnv

    env = CarcassonneGymEnv()
    ext = sb3.CarcassonneFeaturesExtractor(env.observation_space, conv_channels=(4,), features_dim=16)
    obs, _ = env.reset(seed=0)
    batch = {k: torch.from_numpy(np.stack([v, v])).float() for k, v in obs.items()}
    feats = ext(batch)
    assert feats.shape == (2, 16) and ext.features_dim == 16
    masked = dict(batch)
    masked["action_mask"] = torch.zeros_like(batch["action_mask"])
    assert torch.equal(ext(masked), feats)  # MaskablePPO applies the mask; it is not a feature
    for key in ("board", "globals"):
        changed = dict(batch)
        changed[key] = batch[key] + 1
        assert not torch.equal(ext(changed), feats)
    with pytest.raises(ConfigError, match="conv_channels"):
        sb3.CarcassonneFeaturesExtractor(env.observation_space, conv_channels=())
    with pytest.raises(ConfigError, match="Dict observation space"):
        sb3.CarcassonneFeaturesExtractor(env.observation_space["board"])


def test_sb3_player_samples_by_default_and_argmax_on_request(tmp_path):
    """Issue 26 item 6: ``sb3:PATH`` samples the masked policy (seeded), ``sb3:PATH:argmax`` plays its argmax."""
    from sb3_contrib import MaskablePPO

    from agents.players import make_player
    from carc_env.env.gym_env import CarcassonneGymEnv

    model = MaskablePPO("MultiInputPolicy", CarcassonneGymEnv(), n_steps=8, batch_size=8, seed=0, device="cpu",
                        policy_kwargs=sb3.policy_kwargs((4,), 16))  # fmt: skip
    model.save(str(tmp_path / "m.zip"))
    sampler = make_player(f"sb3:{tmp_path / 'm.zip'}", {}, seed=3)
    greedy = make_player(f"sb3:{tmp_path / 'm.zip'}:argmax", {}, seed=3)
    assert (sampler.deterministic, greedy.deterministic) == (False, True)
    assert make_player(f"sb3:{tmp_path / 'm.zip'}:sample", {}, seed=3).deterministic is False
    env = CarcassonneGymEnv()
    obs, _ = env.reset(seed=1)
    mask = obs["action_mask"].astype(bool)
    tensors, _ = model.policy.obs_to_tensor({k: np.asarray(v) for k, v in obs.items()})
    with torch.no_grad():
        probs = model.policy.get_distribution(tensors, action_masks=mask[None]).distribution.probs[0].numpy()
    assert greedy.act(obs) == int(np.argmax(probs))
    picks = [sampler.act(obs) for _ in range(60)]
    assert all(mask[a] for a in picks) and len(set(picks)) > 1  # an untrained policy is near uniform
    sampler.seed(7)
    again = [sampler.act(obs) for _ in range(20)]
    sampler.seed(7)
    assert [sampler.act(obs) for _ in range(20)] == again  # seeded: repeatable games


def test_the_features_extractor_reads_the_action_features_and_a_model_plays_with_them(tmp_path):
    """With action_features=True the extractor pools the placement rows and reads the spot rows; a
    MaskablePPO trained on them plays through SB3Policy, also in an env without the option."""
    from sb3_contrib import MaskablePPO

    from carc_env.env.gym_env import CarcassonneGymEnv

    env = CarcassonneGymEnv(action_features=True, opponents=RandomPolicy(seed=0))
    ext = sb3.CarcassonneFeaturesExtractor(env.observation_space, conv_channels=(4,), features_dim=16)
    assert ext.action_features
    obs, _ = env.reset(seed=0)
    batch = {k: torch.from_numpy(np.stack([np.asarray(v)] * 2)).float() for k, v in obs.items()}
    feats = ext(batch)
    changed = dict(batch)
    changed["place_features"] = batch["place_features"] * 2  # gain, sizes...: the rows matter
    assert not torch.equal(ext(changed), feats)
    padding = dict(batch)
    pad = batch["place_features"].clone()
    pad[:, -1, 1:] = 5.0  # a padding row (present 0) is ignored
    padding["place_features"] = pad
    assert torch.equal(ext(padding), feats)
    torch.set_num_threads(1)
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=32,
        batch_size=16,
        n_epochs=1,
        seed=0,
        policy_kwargs=sb3.policy_kwargs(conv_channels=(4,), features_dim=16),
    )
    model.learn(64)
    model.save(tmp_path / "m.zip")
    player = sb3.load_policy(tmp_path / "m.zip")
    res = evaluate(player, RandomPolicy(seed=1), 2, seed=3, env_kwargs={"num_players": 2})  # no option: computed
    assert res["games"] == 2


def test_train_sb3_learns_saves_resumes_and_evaluates(tmp_path):
    out = tmp_path / "sb3"
    tiny = ["--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--conv-channels", "8", "--features", "32"]
    summary, log = _script(
        "--out", str(out), "--timesteps", "300", "--envs", "2", "--vec", "subproc",
        "--opponents", "random,greedy:0.5", "--eval-games", "2", *tiny,
    )  # fmt: skip
    assert summary["vec_env"] == "SubprocVecEnv" and summary["envs"] == 2
    assert summary["timesteps"] >= 300  # whole rollouts of 2 x 64 steps
    assert [row["timesteps"] for row in summary["progress"]] == [128, 256, 384]
    assert summary["progress"][-1]["games"] >= 1  # games against the pool finished during training
    for name in ("random", "greedy"):
        res = summary[f"vs_{name}"]
        assert res["games"] == 2 and summary[f"win_rate_vs_{name}"] == res["wins"] / 2
    model = out / "model.zip"
    assert model.is_file()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (run,) = (out / "tb").iterdir()  # issue 26 item 7: SB3's TensorBoard logs
    acc = EventAccumulator(str(run))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert "train/policy_gradient_loss" in tags and "time/fps" in tags, tags

    policy = sb3.load_policy(model, env_kwargs={})
    assert policy.model.num_timesteps == summary["timesteps"]
    res = evaluate(policy, RandomPolicy(seed=2), 2, 11, {})
    assert res["games"] == 2 and 0.0 <= res["win_rate"] <= 1.0
    with pytest.raises(ConfigError, match="trained on observations"):
        sb3.load_policy(model, env_kwargs={"num_players": 3})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        sb3.load_policy(out / "nothing.zip")

    before = {k: v.clone() for k, v in policy.model.policy.state_dict().items()}
    summary2, log2 = _script(
        "--out", str(out), "--timesteps", "500", "--envs", "2", "--vec", "dummy", "--eval-games", "0", *tiny
    )  # fmt: skip
    assert f"resumed from {model} at {summary['timesteps']} timesteps" in log2
    assert summary2["timesteps"] >= 500 and summary2["vec_env"] == "DummyVecEnv"
    assert "vs_random" not in summary2
    after = sb3.load_policy(model).model
    assert after.num_timesteps == summary2["timesteps"]
    assert any(not torch.equal(before[k], v) for k, v in after.policy.state_dict().items())
