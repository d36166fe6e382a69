"""``run.cpu_budget``: a run that stops itself at the last update inside a CPU budget, checkpointed, and stays
stopped on resume."""

from __future__ import annotations

import csv

import pytest
from test_agents import TINY

from agents.checkpoint import load_checkpoint
from agents.config import TrainConfigError, config_from_dict
from agents.train import BUDGET_WINDOW, budget_stop, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _cfg(budget: float, total: int = 3, every: int = 10):
    return config_from_dict(dict(TINY, run=dict(TINY["run"], total_updates=total, checkpoint_every=every,
                                                 cpu_budget=budget)))  # fmt: skip


def test_the_next_update_is_foreseen_as_the_dearest_of_the_last_three():
    assert budget_stop(50.0, [], 60.0, 0) == ""  # nothing measured yet: the first update runs
    assert budget_stop(50.0, [9.0, 4.0], 0.0, 2) == ""  # no budget
    assert budget_stop(None, [9.0], 60.0, 1) == ""  # CPU not counted
    assert budget_stop(50.0, [9.0, 4.0], 60.0, 2) == ""  # 50 + 9 <= 60
    msg = budget_stop(50.0, [11.0, 4.0, 3.0], 60.0, 3)  # 50 + 11 > 60
    assert msg.startswith("run.cpu_budget: stopped after update 3, 50 CPU-s spent") and "about 11 CPU-s" in msg
    assert BUDGET_WINDOW == 3 and budget_stop(50.0, [30.0, 4.0, 3.0, 2.0], 60.0, 4) == ""  # 30 is too old to count


def _rows(path):
    with (path / "progress.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_a_run_past_its_budget_stops_after_its_first_update_checkpointed_and_stays_stopped(tmp_path):
    cfg = _cfg(1e-6)  # any update costs more than this
    tr = train(cfg, tmp_path, progress=False)
    assert tr.updates == 1 and tr.stop_reason.startswith("run.cpu_budget: stopped after update 1,")
    data = load_checkpoint(tmp_path / "checkpoint.pt")  # written although checkpoint_every is 10
    assert data["trainer"] is not None and len(data["update_cpu"]) == 1 and data["update_cpu"][0] > 0
    assert [r["update"] for r in _rows(tmp_path)] == ["1"]
    again = train(cfg, tmp_path, progress=False)  # resumed: the budget is still spent, no update runs
    assert again.updates == 1 and again.stop_reason.startswith("run.cpu_budget: stopped after update 1,")
    more = train(_cfg(0.0), tmp_path, progress=False)  # the budget lifted: the run goes on to its end
    assert more.updates == 3 and more.stop_reason == ""
    assert [r["update"] for r in _rows(tmp_path)] == ["1", "2", "3"]


def test_a_run_inside_its_budget_runs_every_update(tmp_path):
    tr = train(_cfg(1e9), tmp_path, progress=False)
    assert tr.updates == 3 and tr.stop_reason == ""
    cpu = [float(r["cpu_seconds"]) for r in _rows(tmp_path)]
    assert cpu == sorted(cpu) and load_checkpoint(tmp_path / "checkpoint.pt")["update_cpu"][-1] > 0


def test_a_bad_budget_names_its_key():
    with pytest.raises(TrainConfigError, match=r"run.cpu_budget: -5.0 is not allowed"):
        _cfg(-5.0)


def test_a_checkpoint_that_did_not_count_its_cpu_is_refused_under_a_budget(tmp_path):
    from agents.checkpoint import CheckpointError, save_checkpoint

    train(_cfg(0.0), tmp_path, progress=False, max_updates=1)
    data = load_checkpoint(tmp_path / "checkpoint.pt")
    data["cpu_seconds"] = None  # as a run resumed from a checkpoint older than the CPU count writes it
    save_checkpoint(tmp_path / "checkpoint.pt", data)
    with pytest.raises(CheckpointError, match=r"run.cpu_budget cannot be applied; set run.cpu_budget: 0"):
        train(_cfg(100.0), tmp_path, progress=False)
    assert train(_cfg(0.0), tmp_path, progress=False).updates == 3  # without a budget it resumes


def test_the_train_script_takes_a_budget_and_says_why_it_stopped(tmp_path, capsys):
    import importlib.util

    import yaml

    spec = importlib.util.spec_from_file_location("train_script", "scripts/train.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(_cfg(0.0).to_dict()))
    out = tmp_path / "run"
    assert script.main(["--config", str(cfg), "--out", str(out), "--cpu-budget", "0.000001", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "run.cpu_budget: stopped after update 1," in text and "done: 1 updates" in text
    assert script.main(["--config", str(cfg), "--out", str(out), "--cpu-budget", "0", "--quiet"]) == 0
    assert "done: 3 updates" in capsys.readouterr().out  # 0 lifts the budget: the run goes on to its end
