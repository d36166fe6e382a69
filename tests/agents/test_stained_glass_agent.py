"""The Stained Glass agent's recipe (configs/stained_glass.yaml, docs/results/stained_glass.md): a network that
reads the ``windows`` tensor, warm-started from the shipped base-game agent (agents/transfer.py), trained on the
Python engine; its windows reach the trainer's samples, the checkpoint and the evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import carc_env
from agents.checkpoint import load_checkpoint, net_from_checkpoint
from agents.config import config_from_dict, load_config
from agents.evaluate import evaluate
from agents.network import NetConfig, PolicyNet
from agents.players import make_player
from agents.policy import collate, obs_to_tensors, shapes_from_env, with_action_features
from agents.train import train
from agents.transfer import input_names, load_source, transfer
from carc_env.baselines import GreedyPolicy

SG = {"num_players": 2, "expansions": ("stained_glass",), "engine": "python"}
RECIPE = "configs/stained_glass.yaml"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _with_tokens(seed: int = 4, min_tokens: int = 3):
    """A 2-player Stained Glass game played by greedy until the players hold ``min_tokens`` glass tokens."""
    env = carc_env.raw_env(**SG)
    env.reset(seed=seed)
    greedy = GreedyPolicy(seed=0)
    for _ in range(400):
        if env.observe(env.agent_selection)["windows"].sum() >= min_tokens:
            return env
        env.step(greedy.act(env.observe(env.agent_selection), env))
    raise AssertionError(f"deal {seed}: fewer than {min_tokens} tokens held after 400 decisions")


def _project(obs: dict, dst: tuple[list[str], list[str]], src: tuple[list[str], list[str]]) -> dict:
    """The observation as a network of the source layout reads it (its board channels and globals by name)."""
    ch = [dst[0].index(n) for n in src[0]]
    gl = [dst[1].index(n) for n in src[1]]
    return {**obs, "board": obs["board"][ch], "globals": obs["globals"][gl]}


def test_the_recipe_is_stained_glass_on_the_python_engine_from_the_shipped_agent():
    cfg = load_config(RECIPE)
    assert cfg.env_kwargs() == SG
    assert cfg.run.init_weights == "pretrained:base-2p" and cfg.ppo.imitation_updates == 1
    # the recipe names the engine its committed run trained on (the Python engine); the compiled action
    # features and greedy now cover Stained Glass too (byte-identical, tests/fast/test_fast_features.py)
    from carc_env.fast.tables import features_coverage

    env = carc_env.raw_env(**SG)
    assert features_coverage(env.match.rules) is None
    # the network the recipe builds reads the windows tensor: one row of 22 columns per player
    shapes = shapes_from_env(env)
    assert shapes.windows_dim == 2 * 22 and len(shapes.windows_high) == 44
    net = PolicyNet(shapes, cfg.ppo.net)
    assert net.windows_mlp[0].in_features == 44


def test_the_shipped_agent_moved_onto_stained_glass_plays_the_same_until_the_windows_columns_learn():
    """transfer(): the base-2p network in a Stained Glass network (windows MLP, glass channels and globals,
    the thief/steal/window head) computes the shipped network's tile and follower logits and value on any
    Stained Glass position, whatever the players' windows hold; only the windows MLP and the expansion-action
    head are fresh."""
    src, src_names = load_source("pretrained:base-2p")
    env = _with_tokens()
    cfg = load_config(RECIPE)
    torch.manual_seed(0)
    dst = PolicyNet(shapes_from_env(env), cfg.ppo.net)
    dst_names = input_names(SG)
    kept = transfer(src, src_names, dst, dst_names)
    assert sorted(kept) == ["rest_head.bias", "rest_head.weight", "windows_mlp.0.bias", "windows_mlp.0.weight"]
    obs = with_action_features(env.observe(env.agent_selection), env)
    assert obs["windows"].any() and set(src_names[1]) < set(dst_names[1])
    n = src.shapes.tile_actions + src.shapes.follower_actions
    with torch.no_grad():
        a_logits, a_value = src(*obs_to_tensors([_project(obs, dst_names, src_names)]).inputs())
        b_logits, b_value = dst(*obs_to_tensors([obs]).inputs())
        other = {**obs, "windows": np.full_like(obs["windows"], 2)}
        c_logits, c_value = dst(*obs_to_tensors([other]).inputs())
    assert torch.allclose(a_logits[:, :n], b_logits[:, :n], atol=1e-5) and torch.allclose(a_value, b_value, atol=1e-5)
    assert torch.equal(b_logits, c_logits) and torch.equal(b_value, c_value)
    # the windows columns are there, at 0: once they move, the windows change the output
    with torch.no_grad():
        dst.glob_bias.weight[:, -dst.windows_mlp[0].out_features :] += 0.5
        d_logits, _ = dst(*obs_to_tensors([obs]).inputs())
        e_logits, _ = dst(*obs_to_tensors([other]).inputs())
    assert not torch.allclose(d_logits[:, :n], e_logits[:, :n])


def test_a_stained_glass_network_moved_onto_another_keeps_its_windows_columns():
    """A source with the same windows layout gives its windows MLP and the columns reading it."""
    torch.manual_seed(2)
    env = _with_tokens(seed=6)
    tiny = NetConfig(channels=8, blocks=1, hidden=16)
    src = PolicyNet(shapes_from_env(env), tiny)
    for p in src.parameters():
        torch.nn.init.normal_(p, std=0.3)
    dst = PolicyNet(shapes_from_env(env), tiny)
    assert transfer(src, input_names(SG), dst, input_names(SG)) == []
    obs = with_action_features(env.observe(env.agent_selection), env)
    with torch.no_grad():
        a, b = src(*obs_to_tensors([obs]).inputs()), dst(*obs_to_tensors([obs]).inputs())
    assert torch.allclose(a[0], b[0], atol=1e-5) and torch.allclose(a[1], b[1], atol=1e-5)


def test_the_recipe_trains_a_tiny_update_with_the_windows_and_its_checkpoint_reloads_and_plays(tmp_path):
    """The recipe's game, network and warm start with a tiny rollout: one imitation and one PPO update (resumed);
    the samples the trainer learns from carry the windows, the checkpoint reloads with the windows shapes,
    and the evaluation's player reads them."""
    recipe = load_config(RECIPE).to_dict()
    small = {**recipe["ppo"], "num_envs": 2, "steps_per_update": 16, "epochs": 1, "minibatch": 16, "chunk": 16}
    cfg = config_from_dict({"game": recipe["game"], "ppo": small, "run": {**recipe["run"], "total_updates": 2,
                                                                          "torch_threads": 1}})  # fmt: skip
    train(cfg, tmp_path / "sg", progress=False, max_updates=1)
    trainer = train(cfg, tmp_path / "sg", progress=False)  # resumes at update 1: a PPO update
    assert trainer.updates == 2 and trainer.engine == "python"
    assert trainer.shapes.windows_dim == 44
    # the trainer's next samples carry the observation's windows, and the network reads them
    roll = trainer.collect()
    with_windows = [s for s in roll.samples if s["windows"].any()]
    assert with_windows, "no learner decision with glass tokens in the rollout"
    batch = collate(with_windows)
    assert torch.equal(batch.windows, torch.from_numpy(np.stack([s["windows"] for s in with_windows])))
    # the updates reached the windows: the columns joining the windows MLP to the trunk left 0
    cols = trainer.net.glob_bias.weight[:, -trainer.net.windows_mlp[0].out_features :]
    assert cols.abs().sum() > 0
    # the checkpoint reloads with its windows shapes and weights
    data = load_checkpoint(tmp_path / "sg" / "checkpoint.pt")
    env = _with_tokens()
    net = net_from_checkpoint(data, expect=shapes_from_env(env))
    assert net.shapes.windows_dim == 44 and net.shapes.windows_high == trainer.shapes.windows_high
    for k, v in trainer.net.state_dict().items():
        assert torch.equal(net.state_dict()[k], v), k
    # the evaluation's player is that network, fed the windows of the position it plays
    player = make_player(str(tmp_path / "sg" / "checkpoint.pt"), SG, seed=0)
    obs = env.observe(env.agent_selection)
    action = player.act(obs, env)
    assert env.infos[env.agent_selection]["action_mask"][action]
    res = evaluate(player, GreedyPolicy(seed=1), 2, seed=11, env_kwargs=SG)
    assert res["games"] == 2 and res["wins"] + res["ties"] + res["losses"] == 2
