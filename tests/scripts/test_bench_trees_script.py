"""scripts/bench_trees.py plays the same seeded games through two checkouts, pair by pair (speed is never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "scripts/bench_trees.py", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_one_tree_against_itself_plays_the_same_games():
    res = _run(str(ROOT), str(ROOT), "--json", "--games", "2", "--pairs", "2", "--expansions", "river2", "--nice", "0")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout.strip().splitlines()[-1])
    assert d["same_work"] and d["pairs"] == 2 and d["expansions"] == "river2"
    assert d["old_cpu_s_median"] > 0 and d["new_cpu_s_median"] > 0
    assert d["ratio_min"] <= d["ratio_median"] <= d["ratio_max"]
    assert list(d["work"]) == [str(ROOT)] and d["work"][str(ROOT)][0] > 2 * 60  # turns of two games


def test_a_folder_that_is_no_checkout_is_refused(tmp_path):
    res = _run(str(tmp_path), str(ROOT))
    assert res.returncode == 2
    assert "is not a checkout with scripts/bench.py" in res.stderr
