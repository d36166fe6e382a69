"""Ray RLlib integration: the turn-based MultiAgentEnv, the masking RLModule, and a real (tiny) self-play PPO run.

One local Ray for the whole module (starting Ray and its EnvRunner actors costs ~10-30 s on 2 cores): the
script ``scripts/train_rllib.py`` trains with 2 EnvRunners on it through ``--address`` (the path a cluster
user takes), and the tests below restore, resume and evaluate what it wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import ray
import torch
from _helpers import load_script
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

import carc_env
from agents.evaluate import evaluate
from carc_env.baselines import RandomPolicy
from carc_env.core import ConfigError, IllegalActionError
from carc_env.integrations import rllib as rl

ROOT = Path(__file__).resolve().parents[2]
TINY = {"conv_channels": [8], "hidden": 32}
BATCH = 300


# ---------------------------------------------------------------------------------------------- env adapter
def _play(env: rl.CarcassonneMultiAgentEnv, seed: int, rng: np.random.Generator):
    """A random legal game through the adapter, recorded in RLlib's own MultiAgentEpisode."""
    obs, infos = env.reset(seed=seed)
    episode = MultiAgentEpisode(
        observation_space=env.observation_spaces,
        action_space=env.action_spaces,
        agent_to_module_mapping_fn=rl.self_play_mapping,
    )
    episode.add_env_reset(observations=obs, infos=infos)
    decisions = dict.fromkeys(env.possible_agents, 0)
    while True:
        assert len(obs) == 1, "turn-based: one observing agent per step"
        (agent,) = obs
        assert agent == env.aec.agent_selection
        legal = np.flatnonzero(obs[agent]["action_mask"])
        action = int(rng.choice(legal))
        decisions[agent] += 1
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        assert set(rewards) == set(env.possible_agents)  # every agent is credited at every step
        episode.add_env_step(obs, {agent: action}, rewards, infos, terminateds=terms, truncateds=truncs)
        if terms["__all__"]:
            return episode, decisions, infos


@pytest.mark.parametrize("reward", ["win_loss", "score_delta"])
def test_env_credits_every_agent_its_reward_in_rllibs_episode(reward):
    env = rl.CarcassonneMultiAgentEnv({"num_players": 3, "reward": reward})
    episode, decisions, infos = _play(env, 5, np.random.default_rng(0))
    scores = infos["player_0"]["final_scores"]
    assert episode.is_terminated and episode.env_steps() == sum(decisions.values())
    for seat, agent in enumerate(env.possible_agents):
        sa = episode.agent_episodes[agent]
        assert len(sa) == decisions[agent]  # one agent step per decision of that agent
        ret = sa.get_return()
        if reward == "win_loss":
            best = max(scores)
            expect = (1.0 if scores.count(best) == 1 else 0.0) if scores[seat] == best else -1.0
            assert ret == expect and all(r == 0.0 for r in sa.get_rewards()[:-1])
        else:
            others = [s for i, s in enumerate(scores) if i != seat]
            assert ret == pytest.approx(0.01 * (scores[seat] - sum(others) / len(others)))
    assert infos["player_1"]["winners"] == tuple(
        a for i, a in enumerate(env.possible_agents) if scores[i] == max(scores)
    )


def test_env_replays_the_aec_env_under_a_seed():
    a = rl.CarcassonneMultiAgentEnv({})
    b = carc_env.raw_env()
    obs, _ = a.reset(seed=9)
    b.reset(seed=9)
    rng = np.random.default_rng(1)
    while True:
        (agent,) = obs
        assert agent == b.agent_selection
        np.testing.assert_array_equal(obs[agent]["board"], b.observe(agent)["board"])
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        obs, rewards, terms, _, _ = a.step({agent: action})
        b.step(action)
        assert rewards == {x: float(b.rewards[x]) for x in b.possible_agents}
        if terms["__all__"]:
            assert a.game.scores == b.game.scores
            break


def test_env_illegal_actions():
    env = rl.CarcassonneMultiAgentEnv({})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    bad = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    obs2, rewards, terms, truncs, infos = env.step({agent: bad})  # default "loss": PettingZoo's convention
    assert terms["__all__"] and not truncs["__all__"]
    assert rewards == {"player_0": -1.0, "player_1": 0.0} and set(obs2) == {"player_0", "player_1"}
    assert infos["player_1"]["illegal_action"] == bad and "disables" in infos["player_1"]["illegal_reason"]
    with pytest.raises(IllegalActionError, match="episode is over"):
        env.step({agent: bad})

    strict = rl.CarcassonneMultiAgentEnv({"illegal_action": "raise"})
    obs, _ = strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="disables"):
        strict.step({agent: bad})
    for wrong in ({"player_1": 0}, {agent: 0, "player_1": 0}, {agent: strict.aec.codec.n}, {agent: 1.5}):
        with pytest.raises(IllegalActionError):
            strict.step(wrong)
    with pytest.raises(ConfigError, match="illegal_action"):
        rl.CarcassonneMultiAgentEnv({"illegal_action": "skip"})
    with pytest.raises(ConfigError, match="num_players"):
        rl.CarcassonneMultiAgentEnv({"num_players": 9})


# ---------------------------------------------------------------------------------------------- module
def _module(env_config=None, **model_config):
    env = rl.CarcassonneMultiAgentEnv(env_config or {})
    spec = rl.RLModuleSpec(
        module_class=rl.CarcassonneRLModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config=model_config or TINY,
    )
    return env, spec.build()


def _batch(observations):
    return {Columns.OBS: {k: torch.from_numpy(np.stack([o[k] for o in observations])) for k in observations[0]}}


def test_module_masks_inside_and_values_every_observation():
    env, module = _module()
    obs, _ = env.reset(seed=3)
    (agent,) = obs
    first = obs[agent]
    obs, *_ = env.step({agent: int(np.flatnonzero(first["action_mask"])[0])})
    second = next(iter(obs.values()))  # the follower phase: another part of the action space
    final = {k: v.copy() for k, v in second.items()}
    final["action_mask"][:] = 0  # what every agent observes when the game ends
    batch = _batch([first, second, final])
    out = module.forward_train(batch)
    logits = out[Columns.ACTION_DIST_INPUTS]
    assert logits.shape == (3, env.aec.codec.n)
    for i, o in enumerate((first, second)):
        legal = torch.from_numpy(o["action_mask"] > 0)
        assert (logits[i][~legal] == rl.MASKED_LOGIT).all() and (logits[i][legal] > rl.MASKED_LOGIT / 2).all()
        probs = torch.softmax(logits[i].detach(), 0)
        assert float(probs[~legal].sum()) == 0.0
    assert torch.isfinite(torch.log_softmax(logits[2], 0)).all()  # an all-zero mask gives no NaN
    values = module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS])
    assert values.shape == (3,) and torch.allclose(values, module.compute_values(batch))
    inf = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    assert torch.equal(inf[:2].argmax(1) < 4 * 27 * 27, torch.tensor([True, False]))  # tile range, then follower


def test_module_tile_logits_follow_the_board_cell_layout():
    """The placement head is convolutional: a change at one board cell moves only nearby tile logits."""
    env, module = _module(conv_channels=[4], hidden=8)
    obs, _ = env.reset(seed=0)
    o = next(iter(obs.values()))
    o = {k: v.copy() for k, v in o.items()}
    o["action_mask"][:] = 1
    rows, cols = o["board"].shape[1:]
    base = module.forward_inference(_batch([o]))[Columns.ACTION_DIST_INPUTS][0, : 4 * rows * cols]
    o2 = {k: v.copy() for k, v in o.items()}
    o2["board"][:, 5, 20] = 1 - o2["board"][:, 5, 20].clip(0, 1)
    with torch.no_grad():
        # keep the pooled vector out of it: the global path would move every logit
        module.place_bias.weight.zero_()
        module.place_bias.bias.zero_()
        base = module.forward_inference(_batch([o]))[Columns.ACTION_DIST_INPUTS][0, : 4 * rows * cols]
        moved = module.forward_inference(_batch([o2]))[Columns.ACTION_DIST_INPUTS][0, : 4 * rows * cols]
    changed = (moved != base).view(4, rows, cols).any(0).nonzero().tolist()
    assert changed and all(abs(r - 5) <= 1 and abs(c - 20) <= 1 for r, c in changed)


def test_module_scores_the_action_features_onto_their_placements():
    """With action_features=True, each legal placement's row moves that placement's logit only."""
    env, module = _module({"action_features": True}, conv_channels=[4], hidden=8)
    assert module.action_features
    obs, _ = env.reset(seed=1)
    o = {k: v.copy() for k, v in next(iter(obs.values())).items()}
    k = int((o["place_features"][:, 0] > 0).sum())
    assert k > 1
    with torch.no_grad():
        base = module.forward_inference(_batch([o]))[Columns.ACTION_DIST_INPUTS][0]
        o2 = {kk: v.copy() for kk, v in o.items()}
        o2["place_features"][0, 1:] += 3.0  # the first placement's row
        o2["place_features"][k:, 1:] = 7.0  # padding rows: ignored
        moved = module.forward_inference(_batch([o2]))[Columns.ACTION_DIST_INPUTS][0]
    assert (moved != base).nonzero().flatten().tolist() == [int(o["place_index"][0])]


def test_module_config_is_validated():
    with pytest.raises(ConfigError, match="conv_channels"):
        _module(conv_channels=[])
    with pytest.raises(ConfigError, match="hidden"):
        _module(conv_channels=[4], hidden=0)
    with pytest.raises(ConfigError, match="num_players"):
        rl.ppo_config({"num_players": 1})
    with pytest.raises(ConfigError, match="reads the dict observation"):
        rl.ppo_config({"obs_format": "classic"})


def test_frozen_opponent_mapping_gives_one_learner_seat_per_episode():
    mapping = rl.frozen_opponent_mapping(3)

    class Ep:
        def __init__(self, i):
            self.id_ = f"episode-{i}"

    seats = []
    for i in range(30):
        modules = [mapping(f"player_{s}", Ep(i)) for s in range(3)]
        assert modules.count(rl.MAIN) == 1 and modules.count(rl.FROZEN) == 2
        assert modules == [mapping(f"player_{s}", Ep(i)) for s in range(3)]  # stable for the episode
        seats.append(modules.index(rl.MAIN))
    assert set(seats) == {0, 1, 2}
    assert rl.self_play_mapping("player_2") == rl.MAIN


# ---------------------------------------------------------------------------------------------- a real run
@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray for the module; its address is handed to the script like a cluster's."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    env_pp = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env_pp) if p)  # workers import this checkout
    ctx = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()
        if env_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = env_pp


@pytest.fixture(scope="module")
def trained(ray_cluster, tmp_path_factory):
    """scripts/train_rllib.py: 2 iterations of self-play PPO with 2 EnvRunners on the cluster, then evaluation.

    ``--out`` is relative, as in the docs (issue 26: pyarrow refused it at the first checkpoint)."""
    work = tmp_path_factory.mktemp("rllib")
    out = work / "runs" / "rllib"
    cmd = [
        sys.executable, str(ROOT / "scripts" / "train_rllib.py"), "--address", ray_cluster, "--out", "runs/rllib",
        "--iterations", "2", "--env-runners", "2", "--train-batch-size", str(BATCH), "--minibatch-size", "100",
        "--epochs", "1", "--conv-channels", "8", "--hidden", "32", "--frozen-opponent-every", "1",
        "--eval-games", "2", "--eval-opponents", "random,greedy", "--seed", "0", "--json",
    ]  # fmt: skip
    run = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900, env=dict(os.environ))
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr[-5000:]}"
    return out, json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def test_training_ran_on_the_cluster_and_evaluated(trained):
    out, summary, log = trained
    assert summary["address"] != "local" and summary["env_runners"] == 2
    assert summary["iterations"] == 2
    assert summary["env_steps_lifetime"] >= 2 * BATCH and summary["env_steps_this_run"] >= 2 * BATCH
    assert [row["iteration"] for row in summary["progress"]] == [1, 2]
    assert all(row["env_steps"] >= BATCH and row["env_steps_per_s"] > 0 for row in summary["progress"])
    assert "iter 2:" in log
    for name in ("random", "greedy"):
        res = summary[f"vs_{name}"]
        assert res["games"] == 2 and res["wins"] + res["ties"] + res["losses"] == 2
        assert summary[f"win_rate_vs_{name}"] == res["wins"] / 2
    assert json.loads((out / "summary.json").read_text())["vs_random"] == summary["vs_random"]
    assert (out / "checkpoint" / "learner_group" / "learner" / "rl_module" / rl.MAIN).is_dir()


def test_training_wrote_tensorboard_logs(trained):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, summary, _ = trained
    acc = EventAccumulator(str(out / "tb"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    steps = acc.Scalars("charts/env_steps")
    assert [e.step for e in steps] == [1, 2]
    assert [e.value for e in steps] == [row["env_steps"] for row in summary["progress"]]
    losses = [t for t in tags if t.startswith("losses/")]
    assert "losses/policy_loss" in losses and "losses/vf_loss" in losses, tags


def _remove_empty(logdir: str) -> None:
    """RLlib's Algorithm makes an empty ~/ray_results/<date> folder: leave nothing behind."""
    try:
        os.rmdir(logdir)
    except OSError:
        pass


def _train_once(seed: int) -> tuple[list, dict]:
    config = rl.ppo_config({}, env_runners=0, frozen_opponent_every=1, model_config=TINY, train_batch_size=BATCH,
                           minibatch_size=100, num_epochs=1, seed=seed)  # fmt: skip
    algo = config.build_algo()
    try:
        result = algo.train()
        er = result["env_runners"]
        stats = [int(er["num_env_steps_sampled"]), int(er["num_episodes"]), float(er["episode_len_mean"])]
        return stats, {k: v.clone() for k, v in algo.get_module(rl.MAIN).state_dict().items()}
    finally:
        algo.stop()
        _remove_empty(algo.logdir)


def test_a_seed_makes_a_run_repeatable(ray_cluster):
    """Issue 26 item 7: the same --seed gives the same games and weights (frozen opponent's seats included)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, wa = _train_once(0)
        b, wb = _train_once(0)
        c, wc = _train_once(1)
    finally:
        torch.set_num_threads(threads)
    assert a == b and all(torch.equal(wa[k], wb[k]) for k in wa)
    assert any(not torch.equal(wa[k], wc[k]) for k in wa)  # another seed: another run


def test_the_empty_ray_results_folder_is_removed(tmp_path):
    mod = load_script("train_rllib")
    root = tmp_path / "ray_results"
    (root / "2026-01-01_mine").mkdir(parents=True)
    (root / "someone_else").mkdir()
    (root / "someone_else" / "result.json").write_text("{}")
    mod._tidy_ray_results(str(root / "2026-01-01_mine"), root, root_existed=False)
    assert not (root / "2026-01-01_mine").exists() and (root / "someone_else" / "result.json").exists()
    (root / "someone_else" / "result.json").unlink()
    (root / "someone_else").rmdir()
    (root / "2026-01-02_mine").mkdir()
    mod._tidy_ray_results(str(root / "2026-01-02_mine"), root, root_existed=False)
    assert not root.exists()  # created by this run and empty now
    (root / "x").mkdir(parents=True)
    mod._tidy_ray_results(str(root / "x"), root, root_existed=True)
    assert root.is_dir()  # it was there before: kept


def test_checkpoint_restores_and_training_resumes(trained):
    out, summary, _ = trained
    ckpt = out / "checkpoint"
    policy = rl.load_policy(ckpt, env_kwargs={})
    saved = {k: v.clone() for k, v in policy.module.state_dict().items()}
    # the frozen opponent was refreshed from main after the last iteration (--frozen-opponent-every 1)
    frozen = rl.load_policy(ckpt, rl.FROZEN).module.state_dict()
    assert all(torch.equal(saved[k], frozen[k]) for k in saved)

    # resume in this process (sampling in the driver: no new EnvRunner actors)
    config = rl.ppo_config({}, env_runners=0, frozen_opponent_every=1, model_config=TINY, train_batch_size=BATCH,
                           minibatch_size=100, num_epochs=1)  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: more threads only spin on a busy 2-core machine
    algo = config.build_algo()
    try:
        algo.restore_from_path(str(ckpt.resolve()))
        assert algo.iteration == 2
        restored = algo.get_module(rl.MAIN).state_dict()
        assert all(torch.equal(saved[k], restored[k]) for k in saved)
        result = algo.train()
        assert algo.iteration == 3
        assert result["num_env_steps_sampled_lifetime"] >= summary["env_steps_lifetime"] + BATCH
        learned = algo.get_module(rl.MAIN).state_dict()
        assert any(not torch.equal(saved[k], learned[k]) for k in saved)  # the update changed the weights
    finally:
        algo.stop()
        _remove_empty(algo.logdir)
        torch.set_num_threads(threads)


def test_checkpoint_plays_through_the_example_agents_evaluation(trained):
    out, _, _ = trained
    policy = rl.load_policy(out / "checkpoint", env_kwargs={})
    res = evaluate(policy, RandomPolicy(seed=1), 2, 7, {})
    assert res["games"] == 2 and 0.0 <= res["win_rate"] <= 1.0
    env = carc_env.raw_env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][policy.act(obs, env)] == 1
    with pytest.raises(ConfigError, match="trained on observations"):
        rl.load_policy(out / "checkpoint", env_kwargs={"num_players": 3})
    from agents.players import make_player

    sampler = make_player(f"rllib:{out / 'checkpoint'}", {}, seed=1)  # issue 26 item 6: samples by default
    greedy = make_player(f"rllib:{out / 'checkpoint'}:argmax", {}, seed=1)
    assert (sampler.deterministic, greedy.deterministic) == (False, True)
    sampler.seed(4)
    picks = [sampler.act(obs, env) for _ in range(10)]
    sampler.seed(4)
    assert [sampler.act(obs, env) for _ in range(10)] == picks and all(obs["action_mask"][a] for a in picks)
    with pytest.raises(FileNotFoundError, match="modules found"):
        rl.load_policy(out / "checkpoint", "nobody")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rl.load_policy(out / "missing")


def test_an_address_where_no_cluster_runs_fails_at_once_with_one_clear_line(tmp_path):
    # a port nothing listens on: bind one, note it, close it
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, str(ROOT / "scripts" / "train_rllib.py"), "--address", f"127.0.0.1:{port}",
           "--out", str(tmp_path / "o"), "--iterations", "1"]  # fmt: skip
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert run.returncode != 0
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert lines[-1].startswith(f"error: cannot join the Ray cluster: nothing answers at 127.0.0.1:{port}"), run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize("address", ["localhost", "host:port", ":6379", "10.0.0.5:70000"])
def test_a_malformed_address_is_named(address):
    mod = load_script("train_rllib")
    assert mod._unreachable(address) == f"--address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379) or 'auto'"
    assert mod._unreachable("auto") is None
