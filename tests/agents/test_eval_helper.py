"""The evaluation helper (a second process playing part of an evaluation's games): the reports, the
quick evaluations' rows and the main command's figures are the same as when one process plays them all."""

from __future__ import annotations

import csv
import json
import os

import pytest
import torch

from agents import evaluate as ev
from agents.config import config_from_dict
from agents.evaluate import EvalHelper, evaluate, evaluate_many, order_free
from agents.policy import PPOPolicy
from agents.pretrained import load_net
from agents.train import train
from carc_env.baselines import GreedyPolicy, RandomPolicy

KW = {"num_players": 2, "expansions": ("base",)}
TINY = {
    "game": {"num_players": 2, "expansions": ["base"]},
    "ppo": {
        "num_envs": 2,
        "steps_per_update": 48,
        "epochs": 1,
        "minibatch": 16,
        "snapshot_every": 1,
        "net": {"channels": 8, "blocks": 1, "hidden": 16},
    },
    "run": {"seed": 3, "total_updates": 2, "eval_every": 1, "eval_games": 6, "checkpoint_every": 1, "torch_threads": 1},
}

pytestmark = [
    pytest.mark.skipif(ev.usable_cores() < 2, reason="the helper is only started with two usable cores"),
    pytest.mark.usefixtures("one_torch_thread"),  # the helper copies this process's count
]


@pytest.fixture(scope="module")
def helper():
    with EvalHelper() as h:
        assert h.wait_ready(120), "the helper process did not come up"
        yield h


@pytest.fixture
def small_groups(monkeypatch):
    """Groups of 8 games instead of 64, so that a short evaluation has several groups to share."""
    real = ev._groups
    monkeypatch.setattr(ev, "_groups", lambda jobs, batched: real(jobs, False) if not batched else _eights(jobs))


def _eights(jobs):
    return [list(range(lo, min(lo + 8, len(jobs)))) for lo in range(0, len(jobs), 8)]


def _matches(agent, games=20):
    return [(agent, RandomPolicy(seed=777), games, 2024, KW), (agent, GreedyPolicy(seed=778), games, 2024, KW)]


def test_shared_games_give_the_same_reports(helper, small_groups):
    agent = PPOPolicy(load_net("base-2p"))
    alone = evaluate_many(_matches(agent))
    before = helper.groups_played
    drawn = []
    shared = evaluate_many(_matches(agent), helper, meanwhile=lambda: drawn.append(1))
    assert shared == alone
    assert helper.groups_played > before, "the helper played none of the 6 groups"
    assert drawn == [1]
    assert [r["games"] for r in shared] == [20, 20]
    # the same again: the helper is reused batch after batch
    assert evaluate_many(_matches(agent), helper) == alone


def test_the_evaluate_wrapper_shares_too(helper, small_groups):
    agent = PPOPolicy(load_net("base-2p"))
    ticks = []
    res = evaluate(
        agent,
        GreedyPolicy(seed=3),
        24,
        seed=7,
        env_kwargs=KW,
        helper=helper,
        progress=lambda d, t: ticks.append((d, t)),
    )
    assert res == evaluate(agent, GreedyPolicy(seed=3), 24, seed=7, env_kwargs=KW)
    assert sorted(d for d, _ in ticks) == list(range(1, 25)) and {t for _, t in ticks} == {24}


def test_a_sampling_candidate_is_not_shared(helper, small_groups):
    sampler = PPOPolicy(load_net("base-2p"), sample=True, seed=4)
    assert not order_free(sampler, RandomPolicy(seed=1))
    assert order_free(PPOPolicy(load_net("base-2p")), RandomPolicy(seed=1))
    before = helper.groups_played
    with_helper = evaluate(sampler, RandomPolicy(seed=1), 16, seed=3, env_kwargs=KW, helper=helper)
    assert helper.groups_played == before
    again = PPOPolicy(load_net("base-2p"), sample=True, seed=4)
    assert with_helper == evaluate(again, RandomPolicy(seed=1), 16, seed=3, env_kwargs=KW)


class _Unpicklable:
    """A deterministic candidate that cannot travel to the helper (it holds a lambda)."""

    sample = False

    def __init__(self):
        self.pick = lambda mask: int(mask.nonzero()[0][0])

    def act(self, obs, env=None):
        return self.pick(obs["action_mask"])


def test_players_that_cannot_be_pickled_are_played_here(helper, small_groups):
    with pytest.warns(UserWarning, match="cannot be pickled"):
        shared = evaluate_many([(_Unpicklable(), RandomPolicy(seed=2), 4, 11, KW)], helper)
    assert shared == evaluate_many([(_Unpicklable(), RandomPolicy(seed=2), 4, 11, KW)])


def test_a_dead_helper_leaves_the_games_to_this_process(small_groups):
    agent = PPOPolicy(load_net("base-2p"))
    alone = evaluate_many(_matches(agent, games=8))
    with EvalHelper() as h:
        assert h.wait_ready(120)
        h._proc.kill()
        h._proc.join()
        assert evaluate_many(_matches(agent, games=8), h) == alone
        assert h.groups_played == 0


def test_a_helper_is_not_started_on_one_core(monkeypatch):
    monkeypatch.setattr(ev, "usable_cores", lambda: 1)
    h = EvalHelper()
    assert h.start() is False and not h.started
    agent = PPOPolicy(load_net("base-2p"))
    assert evaluate_many(_matches(agent, games=4), h) == evaluate_many(_matches(agent, games=4))
    h.close()


def _csv(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_quick_evaluations_write_the_same_rows_with_a_helper(helper, tmp_path):
    cfg = config_from_dict(TINY)
    threads = torch.get_num_threads()
    try:
        alone = train(cfg, tmp_path / "alone", progress=False)
        shared = train(config_from_dict(TINY), tmp_path / "shared", progress=False, eval_helper=helper)
    finally:
        torch.set_num_threads(threads)
    rows = _csv(tmp_path / "alone" / "eval.csv")
    assert [(r["update"], r["opponent"]) for r in rows] == [
        ("1", "random"),
        ("1", "greedy"),
        ("2", "random"),
        ("2", "greedy"),
    ]
    assert _csv(tmp_path / "shared" / "eval.csv") == rows
    for a, b in zip(alone.net.state_dict().values(), shared.net.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def _main_script():
    import importlib.util

    path = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "main.py")
    spec = importlib.util.spec_from_file_location("main_script_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_main_command_reports_the_one_process_figures(tmp_path, monkeypatch, capsys):
    import yaml

    from agents.checkpoint import load_checkpoint, net_from_checkpoint
    from agents.ppo import rollout_mode

    cfg_path = tmp_path / "tiny.yaml"
    cfg_path.write_text(yaml.safe_dump({**TINY, "run": {**TINY["run"], "total_updates": 1, "final_eval_games": 6}}))
    out = tmp_path / "run"
    threads = torch.get_num_threads()
    try:
        assert _main_script().main(["--config", str(cfg_path), "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        net = net_from_checkpoint(load_checkpoint(out / "checkpoint.pt"))
        agent = PPOPolicy(net)
        with rollout_mode():
            alone = evaluate_many(_matches(agent, games=6))
    finally:
        torch.set_num_threads(threads)
    assert summary["vs_random"] == alone[0] and summary["vs_greedy"] == alone[1]
    assert summary["win_rate_vs_greedy"] == alone[1]["win_rate"]
    assert summary["example_game"]["agent_seat"] == 0 and len(summary["example_game"]["scores"]) == 2
    for name in ("game.json", "game.png", "game.gif"):
        assert (out / name).stat().st_size > 0
    assert summary["cpu_seconds_this_call_total"] >= summary["cpu_seconds_this_call_training"] > 0
    assert "this process and a helper" in capsys.readouterr().out
