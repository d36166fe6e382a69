"""scripts/bench.py runs and reports every row, ratio and target (speed itself is never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_reports_every_row_with_ratios():
    out = subprocess.run(
        [
            sys.executable,
            "scripts/bench.py",
            "--json",
            "--seconds",
            "0.4",
            "--rounds",
            "1",
            "--num-envs",
            "4",
            "--no-jit",
            "--no-peers",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    for key in (
        "engine_games_per_s",
        "fast_engine_games_per_s",
        "env_steps_per_s",
        "fast_env_steps_per_s",
        "vector_env_steps_per_s",
        "fast_vector_env_steps_per_s",
    ):
        assert res[key] > 0, key
    assert res["followers_per_player"] == 7  # the count played (a map's plug-in raises it to 9)
    assert res["fast_mean_legal_placements"] > 1 and res["mean_legal_placements"] > 1
    assert set(res["ratios"]) >= {"fast_engine / engine", "fast_env / env", "fast_vector (1 thread) / vector"}
    assert set(res["targets"]) >= {"fast_env_steps_per_s", "fast_engine_games_per_s", "fast_vector_env_steps_per_s"}


def test_bench_repeats_read_the_thread_ratio_as_a_median_of_pairs():
    out = subprocess.run(
        [sys.executable, "scripts/bench.py", "--json", "--seconds", "0.2", "--rounds", "1", "--num-envs", "4"]
        + ["--no-jit", "--no-peers", "--repeats", "3", "--repeat-seconds", "0.1", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if "fast_vector_env_steps_per_s_2_threads" not in res:  # pragma: no cover - a 1-core machine has no pairs
        assert "vector_thread_repeats" not in res
        return
    rep = res["vector_thread_repeats"]
    ratios = rep["ratios"]
    assert len(ratios) == len(rep["probe_ratios"]) == 3 and all(r > 0 for r in ratios)
    assert rep["median"] == round(sorted(ratios)[1], 2) and rep["min"] <= rep["median"] <= rep["max"]
    assert res["ratios"]["fast_vector 2 threads / 1 thread"] == rep["median"]
    assert res["ratios"]["probe 2 threads / 1 thread"] == rep["probe_median"]
    assert len(rep["pingpong_ns"]) == 3 and all(p > 0 for p in rep["pingpong_ns"])
    if rep["others"]:  # (from /proc: Linux)
        assert len(rep["others"]) == 3 and all(o >= 0 for o in rep["others"])
        assert rep["quiet_pairs"] == sum(o < 0.1 for o in rep["others"])
