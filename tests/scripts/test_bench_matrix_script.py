"""scripts/bench_matrix.py: the configurations of the benchmark page, its table and files (speed is never
asserted), and a configuration the compiled engine does not cover shown as such."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


def _module():
    return load_script("bench_matrix")


def test_configurations_are_the_issues_list():
    bm = _module()
    configs = bm.configurations(2)
    keys = [k for _, k in configs]
    assert keys[0] == () and bm.BOX in keys and bm.MAP_MIX in keys
    from carc_env.core.expansion import registry

    for k in registry():
        if k != "base":
            assert (k,) in keys  # each expansion alone
    for _, k in configs:  # every configuration is one the rules allow
        assert bm._allowed(k, 2)


def test_a_configuration_without_the_compiled_engine_is_a_row_saying_so():
    bm = _module()
    run = {
        "label": "user plug-in",
        "players": 2,
        "fast_error": "no compiled-engine rows: expansion 'x' has no compiled rules (its plug-in has no fast part)",
        "engine_games_per_s": 101.5,
        "ratios": {"env / connect_four": 0.3},
        "per_cpu_second": {"env_steps_per_s": 3000.0, "peer_connect_four_steps_per_s": 10000.0},
        "peers": {"connect_four": 9000.0},
        "load_average_before": [1.0, 1.0, 1.0],
    }
    row = bm.table([run]).splitlines()[-1]
    assert "Python only: expansion 'x' has no compiled rules" in row
    assert "| 0.30 | 0.30 |" in row  # the Python engine's AEC ratios, wall and per CPU-second
    assert row.count("|") == bm.table([]).splitlines()[0].count("|")


def test_a_row_whose_repeats_left_pairs_unmeasured_says_how_many_were_measured():
    bm = _module()
    rep = {"ratios": [1.8, None, 2.0], "unmeasured": 1, "min": 1.8, "max": 2.0, "probe_min": 1.9}
    run = {"label": "base", "players": 2, "ratios": {"fast_vector 2 threads / 1 thread": 1.9}}
    row = bm.table([{**run, "vector_thread_repeats": rep}]).splitlines()[-1]
    assert "| 1.90 (1.80-2.00, 2 of 3 pairs measured) | – (min 1.90) |" in row
    none = {"ratios": [None, None], "unmeasured": 2, "min": None, "max": None, "probe_min": None}
    row = bm.table([{**run, "vector_thread_repeats": none}]).splitlines()[-1]
    assert "| 1.90 (0 of 2 pairs measured) | – |" in row
    old = {"ratios": [1.8, 2.0], "min": 1.8, "max": 2.0, "probe_min": 1.9}  # (a JSON from before "unmeasured")
    assert "| 1.90 (1.80-2.00, 2 pairs) |" in bm.table([{**run, "vector_thread_repeats": old}])


def test_bench_matrix_writes_the_table_and_the_runs(tmp_path):
    out = tmp_path / "matrix"
    res = subprocess.run(
        [sys.executable, "scripts/bench_matrix.py", "--only", "0", "--players", "2", "--seconds", "0.2"]
        + ["--rounds", "1", "--repeats", "2", "--repeat-seconds", "0.1", "--out", str(out), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    data = json.loads(out.with_suffix(".json").read_text())
    (run,) = data["runs"]
    assert run["label"] == "base" and run["players"] == 2 and "peers" in run
    assert run["command"].startswith("python scripts/bench.py --json --players 2 ")  # (no path of this machine)
    md = out.with_suffix(".md").read_text()
    assert "| base | 2 |" in md and md.strip().endswith(res.stdout.strip().splitlines()[-1])
    if "vector_thread_repeats" in run:  # (a machine of two cores or more): the ratio and its spread
        rep = run["vector_thread_repeats"]
        assert len(rep["ratios"]) == 2
        pings = rep["pingpong_ns"]
        assert len(pings) == 2 and all(p > 0 for p in pings)
        pp = f"cache line {min(pings):.0f}-{max(pings):.0f} ns"
        assert f"{rep['median']:.2f} ({rep['min']:.2f}-{rep['max']:.2f}, 2 pairs; {pp})" in md


def test_bad_arguments_exit_2_with_one_line():
    for args in (["--players", "6"], ["--only", "99"], ["--seconds", "-1"]):
        res = subprocess.run(
            [sys.executable, "scripts/bench_matrix.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, (args, res.stderr)
