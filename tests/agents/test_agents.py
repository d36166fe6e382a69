"""The PPO example agent: training smoke test, checkpoints, exact resume, evaluation."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from agents.checkpoint import CheckpointError, load_checkpoint, net_from_checkpoint, save_checkpoint
from agents.config import TrainConfigError, config_from_dict, load_config
from agents.evaluate import evaluate, wilson
from agents.network import masked_entropy, masked_logits
from agents.players import make_player
from agents.policy import PPOPolicy, shapes_from_env
from agents.train import train
from carc_env.baselines import RandomPolicy

TINY = {
    "game": {"num_players": 2, "expansions": ["base"]},
    "ppo": {
        "num_envs": 2,
        "steps_per_update": 48,
        "epochs": 1,
        "minibatch": 16,
        "snapshot_every": 1,
        "p_random": 0.25,
        "p_greedy": 0.25,
        "p_self": 0.25,
        "p_snapshot": 0.25,
        "net": {"channels": 8, "blocks": 1, "hidden": 16},
    },
    "run": {"seed": 3, "total_updates": 2, "eval_every": 0, "checkpoint_every": 1, "torch_threads": 1},
}


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_default_config_loads_and_is_documented():
    cfg = load_config("configs/default.yaml")
    assert cfg.env_kwargs() == {"num_players": 2, "expansions": ("base",), "engine": "auto"}
    text = open("configs/default.yaml").read()
    for line in text.splitlines():
        if ":" in line and not line.strip().startswith("#") and not line.rstrip().endswith(":"):
            assert "#" in line, f"undocumented hyperparameter: {line.strip()}"


def test_one_iteration_training_smoke(tmp_path):
    trainer = train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    assert trainer.updates == 1
    assert trainer.learner_steps >= 48
    assert trainer.env_steps > trainer.learner_steps  # opponents' moves are steps too
    rows = _rows(tmp_path / "progress.csv")
    assert len(rows) == 1 and rows[0]["update"] == "1"
    assert float(rows[0]["entropy"]) > 0
    # 48 decisions in minibatches of 16, one pass (an imitation update: no early stop)
    assert float(rows[0]["gradient_steps"]) == 3
    assert (tmp_path / "checkpoint.pt").exists()
    assert any((tmp_path / "tb").iterdir())


def test_checkpoint_round_trip_gives_the_same_policy(tmp_path):
    trainer = train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    data = load_checkpoint(tmp_path / "checkpoint.pt")
    net = net_from_checkpoint(data, expect=trainer.shapes)
    for (k, a), (_, b) in zip(trainer.net.state_dict().items(), net.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    import carc_env

    env = carc_env.raw_env(**config_from_dict(TINY).env_kwargs())
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert PPOPolicy(net).act(obs, env) == PPOPolicy(trainer.net).act(obs, env)


def test_resume_continues_the_same_run(tmp_path):
    """Two updates in one go == one update, a fresh process-like restart, then one more."""
    cfg = config_from_dict(TINY)
    straight = train(cfg, tmp_path / "a", progress=False)
    train(cfg, tmp_path / "b", progress=False, max_updates=1)
    resumed = train(cfg, tmp_path / "b", progress=False)  # new trainer object, loads the checkpoint
    assert resumed.updates == straight.updates == 2
    assert resumed.env_steps == straight.env_steps
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), f"{k} differs after resume"
    ra, rb = _rows(tmp_path / "a" / "progress.csv"), _rows(tmp_path / "b" / "progress.csv")
    assert [r["update"] for r in rb] == ["1", "2"]
    for x, y in zip(ra, rb, strict=True):
        assert x["policy_loss"] == y["policy_loss"] and x["env_steps"] == y["env_steps"]


def test_resume_refuses_a_checkpoint_of_another_config(tmp_path):
    train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    other = dict(TINY, run=dict(TINY["run"], seed=4))
    with pytest.raises(CheckpointError, match="another config"):
        train(config_from_dict(other), tmp_path, progress=False)
    other = dict(TINY, ppo=dict(TINY["ppo"], lr=0.5))
    with pytest.raises(CheckpointError, match="another config"):
        train(config_from_dict(other), tmp_path, progress=False)


def test_a_checkpoint_older_than_a_ppo_key_resumes_with_its_default(tmp_path):
    train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    data = load_checkpoint(tmp_path / "checkpoint.pt")
    for key in ("count_weights", "anchor_coef", "anchor_counts"):  # as written before these keys existed
        del data["config"]["ppo"][key]
    save_checkpoint(tmp_path / "checkpoint.pt", data)
    assert train(config_from_dict(TINY), tmp_path, progress=False).updates == 2
    other = dict(TINY, game={"num_players": [2, 3]}, ppo=dict(TINY["ppo"], count_weights=[1, 1]))
    with pytest.raises(CheckpointError, match="another config"):
        train(config_from_dict(other), tmp_path, progress=False)


def test_a_run_can_be_extended(tmp_path):
    train(config_from_dict(TINY), tmp_path, progress=False)
    longer = dict(TINY, run=dict(TINY["run"], total_updates=3))
    assert train(config_from_dict(longer), tmp_path, progress=False).updates == 3
    assert [r["update"] for r in _rows(tmp_path / "progress.csv")] == ["1", "2", "3"]


def test_evaluation_is_deterministic_for_a_seed(tmp_path):
    trainer = train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    kw = {"num_players": 2, "expansions": ("base",)}
    a = evaluate(PPOPolicy(trainer.net), RandomPolicy(seed=1), 4, seed=5, env_kwargs=kw)
    b = evaluate(PPOPolicy(trainer.net), RandomPolicy(seed=1), 4, seed=5, env_kwargs=kw)
    assert a == b
    assert a["games"] == 4 and a["wins"] + a["ties"] + a["losses"] == 4
    c = evaluate(PPOPolicy(trainer.net), RandomPolicy(seed=1), 4, seed=6, env_kwargs=kw)
    assert c["mean_score"] != a["mean_score"] or c["mean_margin"] != a["mean_margin"]


def test_corrupt_checkpoint_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"this is not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or not a carc_env checkpoint"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a carc_env PPO checkpoint"):
        load_checkpoint(other)


def test_truncated_checkpoint_gives_a_clear_error(tmp_path):
    train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    data = (tmp_path / "checkpoint.pt").read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(cut)


def test_mismatched_checkpoint_names_the_difference(tmp_path):
    train(config_from_dict(TINY), tmp_path, progress=False, max_updates=1)
    with pytest.raises(CheckpointError, match="num_players|board_channels|globals_dim|another game layout"):
        make_player(str(tmp_path / "checkpoint.pt"), {"num_players": 3, "expansions": ("base",)}, seed=0)
    with pytest.raises(CheckpointError, match="rows"):
        make_player(str(tmp_path / "checkpoint.pt"), {"num_players": 2, "window": (21, 21)}, seed=0)


def test_checkpoint_of_an_old_version_is_refused(tmp_path):
    save_checkpoint(tmp_path / "x.pt", {"shapes": {}, "net_config": {}, "trainer": {}, "config": {}})
    data = torch.load(tmp_path / "x.pt", weights_only=True)
    data["version"] = 99
    torch.save(data, tmp_path / "y.pt")
    with pytest.raises(CheckpointError, match="version 99"):
        load_checkpoint(tmp_path / "y.pt")


def test_bad_training_config_names_the_key():
    with pytest.raises(TrainConfigError, match="unknown key"):
        config_from_dict({"ppo": {"learning_rate": 1.0}})
    with pytest.raises(TrainConfigError, match="ppo.epochs: .many. is not allowed; it must be int"):
        config_from_dict({"ppo": {"epochs": "many"}})
    with pytest.raises(TrainConfigError, match="top-level"):
        config_from_dict({"trainer": {}})
    with pytest.raises(TrainConfigError, match="ppo.net"):
        config_from_dict({"ppo": {"net": {"width": 3}}})


def test_masked_distribution_removes_illegal_actions():
    logits = torch.tensor([[5.0, 1.0, 1.0, 9.0]])
    mask = torch.tensor([[0, 1, 1, 0]])
    probs = torch.softmax(masked_logits(logits, mask), dim=1)
    assert probs[0, 0] == 0 and probs[0, 3] == 0
    assert torch.allclose(probs[0, 1:3], torch.tensor([0.5, 0.5]))
    assert torch.allclose(masked_entropy(logits, mask), torch.tensor([0.6931472]), atol=1e-6)


def test_legal_exp_is_exp_bit_for_bit_on_legal_entries_and_zero_elsewhere():
    from agents.network import legal_exp

    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(32, 2925, generator=gen) * torch.tensor([1.0, 40.0, 400.0]).repeat(11)[:32, None]
    mask = torch.rand(32, 2925, generator=gen) < 0.02
    mask[:, 7] = True
    logp = torch.log_softmax(masked_logits(logits, mask), dim=1)
    fast, plain = legal_exp(logp, mask), logp.exp()
    assert (fast[~mask] == 0).all() and (plain[~mask] == 0).all()
    assert torch.equal(fast.view(torch.int32), plain.view(torch.int32))  # bit for bit, underflows included
    assert (plain[mask] == 0).any() and (plain[mask] == 1).any()  # the scales reach both ends
    assert torch.allclose(fast.sum(dim=1), torch.ones(32))


def test_the_legal_actions_policy_is_the_masked_policy():
    from agents.network import legal_exp, legal_logits
    from agents.policy import legal_actions

    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(9, 300, generator=gen) * 3
    mask = torch.rand(9, 300, generator=gen) < 0.05
    mask[:, 299] = True  # the last action, and one row with a single legal action
    mask[4] = False
    mask[4, 17] = True
    full = torch.log_softmax(masked_logits(logits, mask), dim=1)
    index, ok = legal_actions([np.flatnonzero(row) for row in mask.numpy()])
    assert index.shape == (9, int(mask.sum(dim=1).max())) and torch.equal(ok.sum(dim=1), mask.sum(dim=1))
    logp = torch.log_softmax(legal_logits(logits, index, ok), dim=1)
    assert torch.allclose(logp[ok], full.gather(1, index)[ok], atol=1e-6)
    assert (legal_exp(logp, ok)[~ok] == 0).all() and logp[4, 0] == 0
    entropy = -torch.where(ok, legal_exp(logp, ok) * logp, torch.zeros_like(logp)).sum(dim=1)
    assert torch.allclose(entropy, masked_entropy(logits, mask), atol=1e-5)


def test_network_layout_matches_the_action_space():
    import carc_env

    env = carc_env.raw_env(num_players=2)
    env.reset(seed=0)
    shapes = shapes_from_env(env)
    assert shapes.tile_actions == 4 * shapes.rows * shapes.cols
    assert shapes.n_actions == env.action_space("player_0").n


def test_wilson_interval():
    lo, hi = wilson(180, 200)
    assert 0.85 < lo < 0.9 < hi < 0.94
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_network_reads_the_windows_tensor_with_stained_glass():
    import carc_env
    from agents.network import NetConfig, PolicyNet
    from agents.policy import obs_to_tensors, with_action_features

    base = carc_env.raw_env(num_players=2)
    base.reset(seed=0)
    assert shapes_from_env(base).windows_dim == 0  # without Stained Glass the (all-zero) tensor is ignored
    env = carc_env.raw_env(
        num_players=2, expansions=("stained_glass",), rules={"stained_glass": {"start_tokens": "G1a G1b; G2a"}}
    )
    env.reset(seed=0)
    shapes = shapes_from_env(env)
    assert shapes.windows_dim == 2 * 22 and set(shapes.windows_high) == {2}
    torch.manual_seed(0)
    net = PolicyNet(shapes, NetConfig(channels=8, blocks=1, hidden=16)).eval()
    obs = with_action_features(env.observe("player_0"), env)
    batch = obs_to_tensors([obs])
    other = batch.windows.clone()
    other[0, 0, 2] += 1  # a third token: W1 is finished
    other[0, 0, 12] = 1
    with torch.no_grad():
        logits, value = net(*batch.inputs())
        logits2, value2 = net(*batch._replace(windows=other).inputs())
        again, _ = net(*batch.inputs())
    assert torch.equal(logits, again)
    assert not torch.allclose(logits, logits2) and not torch.allclose(value, value2)
    with pytest.raises(ValueError, match="windows"):
        net(*batch._replace(windows=None).inputs())


def test_training_runs_with_stained_glass(tmp_path):
    cfg = {**TINY, "game": {"num_players": 2, "expansions": ["base", "stained_glass"]}}
    trainer = train(config_from_dict(cfg), tmp_path, progress=False, max_updates=1)
    assert trainer.updates == 1 and trainer.shapes.windows_dim == 44
    data = load_checkpoint(tmp_path / "checkpoint.pt")
    net = net_from_checkpoint(data, expect=trainer.shapes)
    assert net.shapes.windows_high == trainer.shapes.windows_high


def test_anchor_kl_is_zero_at_the_anchor_and_its_gradient_pulls_back():
    import carc_env
    from agents.network import NetConfig, PolicyNet
    from agents.policy import collate, sample_from_obs
    from agents.ppo import anchor_kl

    env = carc_env.raw_env(num_players=2, action_features=True)
    env.reset(seed=2)
    batch = collate([sample_from_obs(env.observe(env.agent_selection), True)])
    torch.manual_seed(0)
    anchor = PolicyNet(shapes_from_env(env), NetConfig(channels=8, hidden=16))
    net = PolicyNet(anchor.shapes, anchor.cfg)
    net.load_state_dict(anchor.state_dict())
    kl = anchor_kl(anchor, batch, masked_logits(net(*batch.inputs())[0], batch.mask))
    assert float(kl.detach()) == pytest.approx(0.0, abs=1e-6)
    torch.manual_seed(1)
    other = PolicyNet(anchor.shapes, anchor.cfg)  # another start: a positive KL that a step reduces
    opt = torch.optim.SGD(other.parameters(), lr=0.05)
    before = anchor_kl(anchor, batch, masked_logits(other(*batch.inputs())[0], batch.mask))
    assert float(before.detach()) > 1e-3
    other_ml = masked_logits(other(*batch.inputs())[0], batch.mask).detach()
    with torch.no_grad():
        assert float(anchor_kl(anchor, batch, other_ml, torch.zeros(1, dtype=torch.bool))) == 0.0  # not anchored
        assert float(anchor_kl(anchor, batch, other_ml, torch.ones(1, dtype=torch.bool))) == float(before.detach())
    opt.zero_grad()
    before.backward()
    opt.step()
    after = anchor_kl(anchor, batch, masked_logits(other(*batch.inputs())[0], batch.mask))
    assert float(after.detach()) < float(before.detach())


def test_a_decaying_learning_rate_resumes_exactly(tmp_path):
    cfg = config_from_dict(
        dict(
            TINY,
            ppo=dict(TINY["ppo"], imitation_updates=0, lr_decay_updates=2, lr_final=1e-4),
            run=dict(TINY["run"], total_updates=3),
        )
    )
    straight = train(cfg, tmp_path / "a", progress=False)
    train(cfg, tmp_path / "b", progress=False, max_updates=2)
    resumed = train(cfg, tmp_path / "b", progress=False)
    assert resumed.opt.param_groups[0]["lr"] == straight.opt.param_groups[0]["lr"] == pytest.approx(1e-4)
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), f"{k} differs after resume"
    with pytest.raises(TrainConfigError, match="ppo.lr_decay_updates: -1 is not allowed"):
        config_from_dict(dict(TINY, ppo=dict(TINY["ppo"], lr_decay_updates=-1)))


def test_an_anchored_run_needs_a_start_and_resumes_exactly(tmp_path):
    with pytest.raises(TrainConfigError, match="anchor_coef.*needs run.init_weights"):
        config_from_dict(dict(TINY, ppo=dict(TINY["ppo"], anchor_coef=1.0)))
    train(config_from_dict(TINY), tmp_path / "start", progress=False, max_updates=1)
    start = str(tmp_path / "start" / "checkpoint.pt")
    cfg = config_from_dict(
        dict(TINY, ppo=dict(TINY["ppo"], anchor_coef=1.0), run=dict(TINY["run"], init_weights=start))
    )
    straight = train(cfg, tmp_path / "a", progress=False)
    train(cfg, tmp_path / "b", progress=False, max_updates=1)
    resumed = train(cfg, tmp_path / "b", progress=False)  # the anchor comes back from the checkpoint
    first = load_checkpoint(start)["trainer"]["net"]
    for k, v in resumed.anchor.state_dict().items():
        assert torch.equal(v, first[k]), f"{k}: the anchor is not the start network"
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), f"{k} differs after resume"
    assert any(not torch.equal(v, first[k]) for k, v in resumed.net.state_dict().items())  # it did learn
