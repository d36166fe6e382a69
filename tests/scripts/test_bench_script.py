"""scripts/bench.py runs and reports every row, ratio and target (speed itself is never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import load_script

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
    assert len(ratios) == len(rep["probe_ratios"]) == 3 and all(r is not None and r > 0 for r in ratios)
    assert rep["unmeasured"] == rep["probe_unmeasured"] == 0  # (every run times at least one step)
    assert rep["median"] == round(sorted(ratios)[1], 2) and rep["min"] <= rep["median"] <= rep["max"]
    assert res["ratios"]["fast_vector 2 threads / 1 thread"] == rep["median"]
    assert res["ratios"]["probe 2 threads / 1 thread"] == rep["probe_median"]
    assert len(rep["pingpong_ns"]) == 3 and all(p > 0 for p in rep["pingpong_ns"])
    if rep["others"]:  # (from /proc: Linux)
        assert len(rep["others"]) == 3 and all(o >= 0 for o in rep["others"])
        assert rep["quiet_pairs"] == sum(o < 0.1 for o in rep["others"])


def _fake_run(units):
    """A row's measuring function that counts ``units[i]`` steps in its ``i``-th call, over its window."""
    calls = iter(units)

    def run(row, seconds):
        row.add(next(calls), seconds)

    return run


def test_a_pair_whose_run_counted_no_step_is_unmeasured_not_a_ratio_of_0(monkeypatch):
    bench = load_script("bench")
    monkeypatch.setattr(bench, "probe_round", lambda threads, sec, row: row.add(100 * threads, sec))
    monkeypatch.setattr(bench, "pingpong_ns", lambda: 50.0)
    # pair 2's 2-thread run counted no step (a window in which the process got no core)
    rep = bench.thread_repeats(3, 0.5, _fake_run([100, 100, 100]), _fake_run([180, 0, 200]))
    assert rep["ratios"] == [1.8, None, 2.0] and rep["unmeasured"] == 1
    assert (rep["median"], rep["min"], rep["max"]) == (1.9, 1.8, 2.0)  # of the two measured pairs
    assert rep["probe_ratios"] == [2.0, 2.0, 2.0] and rep["probe_unmeasured"] == 0 and rep["probe_median"] == 2.0
    if rep["others"]:  # (from /proc: Linux) a quiet pair counts only if it was measured
        assert rep["quiet_pairs"] == sum(
            o < 0.1 and r is not None for r, o in zip(rep["ratios"], rep["others"], strict=True)
        )
    # the 1-thread side alike, and no pair measured at all: no median rather than 0
    rep = bench.thread_repeats(2, 0.5, _fake_run([0, 0]), _fake_run([180, 200]))
    assert rep["ratios"] == [None, None] and rep["unmeasured"] == 2
    assert rep["median"] is rep["min"] is rep["max"] is rep["quiet_median"] is None and rep["quiet_pairs"] == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_a_probe_window_too_short_for_a_call_still_times_one_per_thread(threads):
    bench = load_script("bench")
    row = bench.Row()
    bench.probe_round(threads, 1e-9, row)  # the window is over before the first call ends
    assert row.units == threads and row.rate > 0
