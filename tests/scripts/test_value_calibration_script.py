"""scripts/value_calibration.py: the leaf values' calibration report (docs/results/expert.md, session 8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch
from _helpers import load_script

from agents.expert import expert_config_from_dict, train_expert

ROOT = Path(__file__).resolve().parents[2]


def _script():
    return load_script("value_calibration", "script_value_calibration")


def test_report_on_a_tiny_checkpoint(tmp_path, capsys, monkeypatch):
    torch.set_num_threads(1)
    ex = {"simulations": 2, "games_per_iteration": 1, "batch": 16, "steps_per_iteration": 1, "chunk": 16,
          "net": {"channels": 4, "blocks": 0, "hidden": 16}}  # fmt: skip
    cfg = expert_config_from_dict(
        {
            "game": {"num_players": 2, "expansions": ["base"]},
            "expert": ex,
            "run": {"total_iterations": 1, "eval_every": 0},
        }
    )
    train_expert(cfg, tmp_path / "x", progress=False)
    mod = _script()
    monkeypatch.chdir(tmp_path)  # the report names the checkpoint relative to the current folder
    rc = mod.main([str(tmp_path / "x" / "checkpoint.pt"), "--games", "2", "--every", "25", "--random", "2",
                   "--greedy", "1", "--json"])  # fmt: skip
    assert rc == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["checkpoint"] == os.path.join("x", "checkpoint.pt")
    rows = rep["rows"]
    assert rep["positions"] == len(rows) // 2 >= 4
    for a, b in zip(rows[0::2], rows[1::2], strict=True):
        assert {a["role"], b["role"]} == {"decider", "other"}
        # the returns of a 2-player game are zero-sum (margins opposite, outcomes opposite or both 0 on a tie)
        for key in ("final", "random", "greedy", "now", "net_antisym", "net_decider"):
            assert abs(a[key] + b[key]) < 1e-9, key
        assert abs(a["final"]) >= 1.0  # the outcome's +-1 (no tie in these deals) and the margin's sign agree
    s = rep["stats"]["all/total/net->final"]
    assert s["n"] == len(rows) and -1 <= s["pearson"] <= 1 and 0 <= s["sign_agreement"] <= 1
    assert np.isfinite(s["mean_abs_error"])
    # --summarise recomputes the statistics from a saved report's rows
    saved = tmp_path / "rep.json"
    saved.write_text(json.dumps(rep))
    assert mod.main([str(saved), "--summarise", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["stats"] == rep["stats"]
    # a bad checkpoint: one line naming it
    assert mod.main([str(tmp_path / "missing.pt")]) == 2
    assert "missing.pt" in capsys.readouterr().err
