"""Rollouts split over processes (``ppo.rollout_workers``, agents/shards.py).

A sharded rollout must be exactly the shards' own rollouts side by side: each shard is the rollout a
one-process trainer of that shard's games and seed would collect with the same weights.  Sharded runs
are reproducible, keep the helpers' snapshots in step, survive a close, and fail loudly when a helper
fails or dies.  (The SIGKILL-and-resume test, tests/agents/test_resume_kill.py, runs the default two
shards through scripts/train.py and also checks that the helper ends with its training process.)"""

from __future__ import annotations

import csv
import pickle
import time
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest
import torch
from _helpers import torch_threads

from agents.checkpoint import CheckpointError, load_checkpoint
from agents.config import TrainConfigError, config_from_dict
from agents.network import NetConfig
from agents.ppo import PPOConfig, Rollout, SelfPlayTrainer
from agents.shards import shard_seed, shard_sizes
from agents.train import train

GAME = {"num_players": 2, "expansions": ("base",)}
CFG = PPOConfig(
    num_envs=4, rollout_workers=2, steps_per_update=24, epochs=1, minibatch=12, chunk=6, imitation_updates=1,
    p_random=0.2, p_greedy=0.3, p_self=0.2, p_snapshot=0.3, snapshot_every=1, max_snapshots=2,
    net=NetConfig(channels=8, blocks=1, hidden=16),
)  # fmt: skip


@pytest.fixture
def one_thread():
    with torch_threads(1):
        yield


def _columns(roll: Rollout, lo: int, hi: int) -> list[np.ndarray]:
    return [roll.actions[:, lo:hi], roll.logprobs[:, lo:hi], roll.values[:, lo:hi], roll.rewards[:, lo:hi],
            roll.dones[:, lo:hi], roll.next_values[lo:hi]]  # fmt: skip


def _samples(roll: Rollout, lo: int, hi: int) -> list[dict]:
    return [roll.samples[t * roll.n + j] for t in range(roll.rounds) for j in range(lo, hi)]


def _same_samples(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for k in x:
            assert np.asarray(x[k]).tobytes() == np.asarray(y[k]).tobytes(), k


def test_shard_sizes_split_the_games_evenly_and_refuse_impossible_splits():
    assert shard_sizes(32, 2) == [16, 16]
    assert shard_sizes(5, 3) == [2, 2, 1]
    assert shard_sizes(7, 1) == [7]
    for bad in (0, 8):
        with pytest.raises(ValueError, match="rollout_workers"):
            shard_sizes(7, bad)
    assert len({shard_seed(0, j) for j in range(1, 6)} | {0}) == 6  # other streams than the run's own


def test_join_puts_the_shards_side_by_side_and_keeps_the_samples_round_major():
    parts = []
    for p, n in enumerate((2, 1)):
        r = Rollout(3, n)
        r.actions[:] = 10 * p + np.arange(3)[:, None]
        r.next_values[:] = p
        r.samples = [{"id": (p, t, j)} for t in range(3) for j in range(n)]
        parts.append(r)
    joined = Rollout.join(parts)
    assert joined.actions.tolist() == [[0, 0, 10], [1, 1, 11], [2, 2, 12]]
    assert joined.next_values.tolist() == [0, 0, 1]
    assert [s["id"] for s in joined.samples[:3]] == [(0, 0, 0), (0, 0, 1), (1, 0, 0)]
    assert len(joined) == len(joined.samples) == 9
    with pytest.raises(ValueError, match="rounds"):
        Rollout.join([Rollout(3, 1), Rollout(2, 1)])


def test_a_sharded_rollout_is_each_shards_own_rollout(one_thread):
    """Shard 0 = a one-process trainer of 2 games with the run's seed; shard 1 = one with the shard's
    seed and the same weights: same actions, log-probabilities, values, rewards and boards."""
    cfg = replace(CFG, imitation_updates=0)
    sharded = SelfPlayTrainer(GAME, cfg, seed=3)
    try:
        roll = sharded.collect()
        steps = sharded.env_steps
    finally:
        sharded.close()
    rounds = roll.rounds
    assert roll.actions.shape == (rounds, 4) and len(roll.samples) == rounds * 4
    alone = replace(cfg, num_envs=2, steps_per_update=rounds * 2, rollout_workers=1)
    # one after the other: a trainer seeds torch's global generator, which its rollout then draws from
    own = SelfPlayTrainer(GAME, alone, seed=3)
    parts = [own.collect()]
    other = SelfPlayTrainer(GAME, alone, seed=shard_seed(3, 1))
    other.net.load_state_dict(own.net.state_dict())
    parts.append(other.collect())
    for lo, part in zip((0, 2), parts, strict=True):
        for x, y in zip(_columns(roll, lo, lo + 2), _columns(part, 0, 2), strict=True):
            assert x.tobytes() == y.tobytes()
        _same_samples(_samples(roll, lo, lo + 2), part.samples)
    assert steps == own.env_steps + other.env_steps
    assert sharded.learner_steps == rounds * 4
    assert not np.array_equal(roll.actions[:, :2], roll.actions[:, 2:])  # two shards, two sets of games


def _run(updates: int, close_between: bool = False) -> tuple[SelfPlayTrainer, list[Rollout]]:
    tr = SelfPlayTrainer(GAME, CFG, seed=5)
    rolls = []
    try:
        for _ in range(updates):
            rolls.append(tr.collect())
            tr.update(rolls[-1])
            if close_between:
                tr.close()  # the next rollout restarts the helper from the state it kept
    finally:
        tr.close()
    return tr, rolls


def test_sharded_runs_are_reproducible_and_a_close_between_rollouts_changes_nothing():
    a, rolls_a = _run(8)  # 48 decisions per game slot: games end (about 36 learner decisions each)
    b, rolls_b = _run(8, close_between=True)
    for x, y in zip(rolls_a, rolls_b, strict=True):
        assert x.actions.tobytes() == y.actions.tobytes() and x.logprobs.tobytes() == y.logprobs.tobytes()
    for k, v in a.net.state_dict().items():
        assert torch.equal(v, b.net.state_dict()[k]), k
    assert (a.env_steps, a.episodes) == (b.env_steps, b.episodes)
    assert a.episodes > 0 and a.pop_episode_stats()["episodes"] == a.episodes  # the helper's episodes counted


def test_the_helper_keeps_the_same_snapshots_as_the_trainer():
    tr = SelfPlayTrainer(GAME, CFG, seed=7)
    try:
        for _ in range(5):  # a snapshot per update, at most 2 kept (or more while a game still plays one)
            tr.update(tr.collect())
        tr.collect()
        helper = pickle.loads(tr._pool.states()[0])
        assert sorted(helper["snapshots"]) == sorted(tr.snapshots)
        for key, weights in tr.snapshots.items():
            for name, t in weights.items():
                assert torch.equal(helper["snapshots"][key][name], t)
        in_use = {o for o in tr._pool.opponents[0] if isinstance(o, int)}
        assert in_use <= set(tr.snapshots)
    finally:
        tr.close()


def test_a_helpers_error_and_a_dead_helper_are_reported():
    tr = SelfPlayTrainer(GAME, CFG, seed=1)
    try:
        tr.collect()
        with pytest.raises(RuntimeError, match="unknown command 'bogus'"):
            tr._pool._ask(0, "bogus")
        tr._pool.procs[0].kill()
        tr._pool.procs[0].join()
        with pytest.raises(RuntimeError, match="shard 1's process ended"):
            tr.collect()
        # the helper's games are gone: no checkpoint, no silent fresh start, only a resume
        tr.close()
        for act in (tr.collect, tr.state_dict):
            with pytest.raises(RuntimeError, match="failed earlier.*resume the run from its last checkpoint"):
                act()
    finally:
        tr.close()


TINY = {
    "game": {"num_players": 2, "expansions": ["base"]},
    "ppo": {"num_envs": 2, "steps_per_update": 24, "epochs": 1, "minibatch": 12, "snapshot_every": 1,
            "net": {"channels": 4, "blocks": 1, "hidden": 8}},
    "run": {"seed": 2, "total_updates": 2, "eval_every": 0, "torch_threads": 1},
}  # fmt: skip


def test_the_config_checks_rollout_workers_and_a_resume_keeps_them(tmp_path):
    for bad in (0, 3):
        with pytest.raises(TrainConfigError, match="ppo.rollout_workers"):
            train(config_from_dict({**TINY, "ppo": {**TINY["ppo"], "rollout_workers": bad}}), tmp_path, progress=False)
    trainer = train(config_from_dict(TINY), tmp_path / "run", progress=False, max_updates=1)
    assert trainer.cfg.rollout_workers == 2 and trainer._pool is None  # train() ends its helper
    other = config_from_dict({**TINY, "ppo": {**TINY["ppo"], "rollout_workers": 1}})
    with pytest.raises(CheckpointError, match="another config"):
        train(other, tmp_path / "run", progress=False)


def test_the_helpers_cpu_is_counted_with_the_trainers_own():
    tr = SelfPlayTrainer(GAME, CFG, seed=3)
    try:
        tr.collect()
        helper = tr._pool.cpu_seconds()
        assert helper > 0  # the helper played its shard and said what it cost
        # the trainer's count is its own process's CPU plus the helper's
        assert abs(tr.cpu_seconds() - time.process_time() - helper) < 0.05
        tr.close()
        assert tr._pool is None and tr._ended_pools_cpu >= helper  # kept when the helper ends
        assert tr.cpu_seconds() >= time.process_time() - 0.05 + helper - 0.05
    finally:
        tr.close()


def test_the_logs_cpu_column_goes_on_from_the_checkpoints_count(tmp_path):
    cfg = config_from_dict({**TINY, "run": {**TINY["run"], "checkpoint_every": 1}})
    train(cfg, tmp_path, progress=False, max_updates=1)
    first = load_checkpoint(tmp_path / "checkpoint.pt")["cpu_seconds"]
    train(cfg, tmp_path, progress=False)  # a new call resumes at update 1
    with (tmp_path / "progress.csv").open() as fh:
        cpu = [float(r["cpu_seconds"]) for r in csv.DictReader(fh)]
    # the log rounds to 0.01 s; the checkpoint is written after the row
    assert len(cpu) == 2 and 0 < cpu[0] <= first + 0.005 < cpu[1]
    assert load_checkpoint(tmp_path / "checkpoint.pt")["cpu_seconds"] + 0.005 >= cpu[1]


def _grads(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("imitate", [False, True])
def test_a_parallel_minibatch_gradient_is_the_one_process_gradient(one_thread, imitate):
    """``ppo.parallel_update``: the helper's part (its own games' decisions of the minibatch) plus this process's
    is the gradient this process computes alone over the whole minibatch, and so are the statistics."""
    tr = SelfPlayTrainer(GAME, replace(CFG, imitation_updates=0, parallel_update=True), seed=4)
    try:
        tr.update(tr.collect())  # a first update, so that the weights are not the initial ones
        roll = tr.collect()
        assert tr.parallel_update and tr._layout == [2, 2]
        adv, ret = tr.advantages(roll)
        mb = np.random.default_rng(0).permutation(len(roll))[:12]
        shard, local = tr._shard_of(mb)
        assert 0 < (shard == 1).sum() < len(mb)  # both processes have a part
        # the helper's decision at its own index is the joined rollout's decision at mb's index
        t, i = np.divmod(mb[shard == 1], 4)
        assert np.array_equal(local[shard == 1], t * 2 + i - 2)
        a = torch.as_tensor(adv.reshape(-1))[mb]
        a = (a - a.mean()) / (a.std() + 1e-8)
        args = (torch.as_tensor(ret.reshape(-1)), torch.as_tensor(roll.actions.reshape(-1)),
                torch.as_tensor(roll.logprobs.reshape(-1)))  # fmt: skip
        legal = [np.flatnonzero(s["mask"]) for s in roll.samples]
        tr.net.train()
        tr.opt.zero_grad()
        together: dict[str, float] = defaultdict(float)
        tr._parallel_grads(mb, roll.samples, a, *args, legal, imitate, together)
        g_together = _grads(tr.net)
        tr.opt.zero_grad()
        alone: dict[str, float] = defaultdict(float)
        tr._grad_terms([roll.samples[k] for k in mb], a, args[0][mb], args[1][mb], args[2][mb],
                       [legal[k] for k in mb], imitate, len(mb), alone)  # fmt: skip
        g_alone = _grads(tr.net)
        assert g_together.keys() == g_alone.keys() and len(g_alone) > 5
        for name, g in g_alone.items():
            assert torch.allclose(g_together[name], g, rtol=1e-4, atol=1e-6), name
        assert together.keys() == alone.keys()
        for k, v in alone.items():
            assert together[k] == pytest.approx(v, rel=1e-4, abs=1e-6), k
    finally:
        tr.close()


def test_a_parallel_run_is_reproducible_and_differs_from_the_one_process_update():
    a, _ = _run(4)
    b, _ = _run(4, close_between=True)  # the first update of each rollout after a restart: helpers start afresh
    for k, v in a.net.state_dict().items():
        assert torch.equal(v, b.net.state_dict()[k]), k
    tr = SelfPlayTrainer(GAME, replace(CFG, parallel_update=False), seed=5)
    try:
        for _ in range(4):
            tr.update(tr.collect())
    finally:
        tr.close()
    assert any(not torch.equal(v, tr.net.state_dict()[k]) for k, v in a.net.state_dict().items())


def test_an_anchored_run_updates_in_the_training_process_alone(tmp_path):
    """The KL anchor's start network is only in the training process: with it the update does not go parallel."""
    train(config_from_dict(TINY), tmp_path / "start", progress=False, max_updates=1)
    cfg = {**TINY, "ppo": {**TINY["ppo"], "anchor_coef": 0.1},
           "run": {**TINY["run"], "init_weights": str(tmp_path / "start" / "checkpoint.pt")}}  # fmt: skip
    tr = SelfPlayTrainer(GAME, replace(config_from_dict(cfg).ppo), seed=1)
    try:
        tr.set_anchor()
        tr.update(tr.collect())
        assert tr.cfg.parallel_update and tr._layout and not tr.parallel_update
    finally:
        tr.close()
