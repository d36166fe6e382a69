"""scripts/bench_search.py: the compiled-state search and the Python tree play the same searches, the compiled tree is
timed beside them (speed never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from carc_env.fast import available

ROOT = Path(__file__).resolve().parents[2]
needs_numba = pytest.mark.skipif(not available(), reason="numba is not installed")


def _run(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "scripts/bench_search.py", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


@needs_numba
def test_the_two_trees_give_the_same_visits_at_every_position():
    res = _run("--sims", "40", "--json", "--expansions", "base,river2")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["expansions"] == ["base", "river2"] and d["repeat"] == 1
    ref = [r for r in d["rows"] if r["search"] == "random, python tree"]
    assert len(ref) == 4 and all(r["same_visits"] and r["tree_ratio"] > 0 for r in ref)
    assert {r["state"] for r in d["rows"] if r["search"] == "random rollouts"} == {"compiled"}
    assert {r["state"] for r in d["rows"] if r["search"] == "greedy rollouts"} == {"compiled"}
    assert {r["state"] for r in d["rows"] if r["search"] == "greedy rollouts, python"} == {"python"}
    assert {r["state"] for r in d["rows"] if r["search"] in ("random, horizon 20", "random, no farmers")} == {
        "compiled"
    }
    assert sum(r["search"] == "random, horizon 20" for r in d["rows"]) == 4
    # the river orders the tiles left (its order_unseen kernel in the compiled tree's redeal)
    assert {r["tree"] for r in d["rows"] if r["search"] == "random, compiled tree"} == {"compiled"}
    assert {r["tree"] for r in d["rows"] if r["search"] == "random rollouts"} == {"python"}


@needs_numba
def test_the_compiled_tree_is_timed_against_the_same_search_in_python_nodes():
    res = _run("--sims", "40", "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)["rows"]
    for name in ("random, compiled tree", "random, horizon 20", "random, no farmers"):
        assert [r["tree"] for r in rows if r["search"] == name] == ["compiled"] * 4
    assert {r["tree"] for r in rows if r["search"] in ("random rollouts", "random, horizon 20, python nodes")} == {
        "python"
    }
    sped = [r for r in rows if "tree_speedup" in r]
    assert sorted({r["search"] for r in sped}) == ["random, compiled tree", "random, horizon 20"]
    assert len(sped) == 8 and all(r["tree_speedup"] > 0 for r in sped)


@needs_numba
def test_a_whole_game_is_played_alike_by_both_trees():
    res = _run("--sims", "20", "--game", "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["same_game"] and len(d["games"]) == 3 and d["games"][2]["search"] == "random, compiled tree"
    assert d["games"][0]["scores"] == d["games"][1]["scores"] and d["games"][0]["searches"] > 20
    assert d["games"][2]["searches"] > 20 and d["tree_speedup"] > 0


def test_a_bad_expansion_is_refused():
    res = _run("--expansions", "base,nosuch")
    assert res.returncode == 2 and "--expansions 'base,nosuch'" in res.stderr and "nosuch" in res.stderr


@needs_numba
def test_the_network_guided_search_is_timed_both_ways_with_the_same_visits():
    res = _run("--sims", "12", "--json", "--guide", "pretrained:base-2p")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert [r["search"] for r in d["rows"][:2]] == ["ppo-mcts, compiled state", "ppo-mcts, python"]
    ref = [r for r in d["rows"] if r["search"] == "ppo-mcts, python"]
    assert len(ref) == 4 and all(r["same_visits"] and r["state"] == "python" for r in ref)
    assert {r["state"] for r in d["rows"] if r["search"] == "ppo-mcts, compiled state"} == {"compiled"}
    res = _run("--sims", "4", "--game", "--json", "--guide", "fresh", "--players", "3")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["same_game"]


def test_a_bad_guide_is_refused():
    res = _run("--guide", "no/such.pt")
    assert res.returncode == 2 and "--guide 'no/such.pt'" in res.stderr
    res = _run("--guide", "pretrained:base-2p", "--players", "3")
    assert res.returncode == 2 and "not {'num_players': 3" in res.stderr
