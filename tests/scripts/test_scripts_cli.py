"""The scripts check every argument and config value before working (issue #12, items 12, 13).

A bad input ends a script with exit status 2 and one line on stderr naming the
key or argument, the value and what is allowed; no traceback, no partial work.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "game": {"num_players": 2, "expansions": ["base"]},
    "ppo": {"num_envs": 2, "steps_per_update": 16, "epochs": 1, "minibatch": 8,
            "net": {"channels": 4, "blocks": 1, "hidden": 8}},
    "run": {"seed": 0, "total_updates": 1, "eval_every": 0, "checkpoint_every": 1, "torch_threads": 1},
}  # fmt: skip


def _script(name: str):
    return load_script(name, f"script_{name}")


def _one_line_error(capsys, rc: int, *needles: str) -> str:
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert "Traceback" not in err
    return lines[0]


def _cfg(tmp_path: Path, change: dict | None = None, text: str | None = None) -> str:
    path = tmp_path / "cfg.yaml"
    if text is not None:
        path.write_text(text)
        return str(path)
    data = copy.deepcopy(TINY)
    for dotted, value in (change or {}).items():
        *sec, key = dotted.split(".")
        node = data
        for s in sec:
            node = node.setdefault(s, {})
        node[key] = value
    path.write_text(yaml.safe_dump(data))
    return str(path)


# ----------------------------------------------------------------- scripts/train.py (item 12)
@pytest.mark.parametrize(
    "change, needles",
    [
        ({"run.checkpoint_every": 0}, ["run.checkpoint_every", "0", ">= 1"]),
        ({"ppo.snapshot_every": 0}, ["ppo.snapshot_every", "0", ">= 1"]),
        ({"ppo.num_envs": 0}, ["ppo.num_envs", "0", ">= 1"]),
        ({"ppo.steps_per_update": 0}, ["ppo.steps_per_update", "0", ">= 1"]),
        ({"ppo.minibatch": 0}, ["ppo.minibatch", "0", ">= 1"]),
        ({"ppo.p_random": 0.0, "ppo.p_greedy": 0.0, "ppo.p_self": 0.0, "ppo.p_snapshot": 0.0}, ["ppo.p_random", "> 0"]),
        ({"ppo.p_random": 0.0, "ppo.p_greedy": 0.0, "ppo.p_self": 0.0, "ppo.p_snapshot": 1.0}, ["ppo.p_self", "> 0"]),
        ({"ppo.lr": -0.001}, ["ppo.lr", "-0.001", "> 0"]),
        ({"ppo.lr": "1e-3"}, ["ppo.lr", "'1e-3'", "0.001"]),
        ({"run.torch_threads": 0}, ["run.torch_threads", "0", ">= 1"]),
        ({"run.total_updates": -3}, ["run.total_updates", "-3", ">= 1"]),
        ({"run.seed": -1}, ["run.seed", "-1", ">= 0"]),
        ({"game.num_players": 6}, ["game", "num_players", "6", "2 to 5"]),
        ({"game.expansions": ["foo"]}, ["game", "unknown expansion 'foo'"]),
        ({"game.colour": "red"}, ["game", "colour"]),
        ({"ppo.net.channels": 0}, ["ppo.net.channels", "0", ">= 1"]),
        ({"ppo.gamma": 1.5}, ["ppo.gamma", "1.5", "(0, 1]"]),
    ],
)
def test_train_script_refuses_bad_config_values_in_one_line(tmp_path, capsys, change, needles):
    out = tmp_path / "run"
    rc = _script("train").main(["--config", _cfg(tmp_path, change), "--out", str(out), "--quiet"])
    _one_line_error(capsys, rc, "train.py: error:", *needles)
    assert not (out / "checkpoint.pt").exists() and not (out / "progress.csv").exists()


@pytest.mark.parametrize(
    "text, needles",
    [
        ("", ["empty", "configs/default.yaml"]),
        ("# only a comment\n", ["empty"]),
        ("{}\n", ["empty"]),
        ("game: [1, 2]\n", ["game", "mapping"]),
        ("ppo: 3\n", ["ppo must be a mapping"]),
        ("run: {seed: [1\n", ["not valid YAML"]),
        ("bogus: 1\n", ["unknown top-level key", "bogus"]),
    ],
)
def test_train_script_refuses_bad_config_files(tmp_path, capsys, text, needles):
    rc = _script("train").main(["--config", _cfg(tmp_path, text=text), "--out", str(tmp_path / "o"), "--quiet"])
    _one_line_error(capsys, rc, *needles)


def test_train_script_refuses_unusable_paths(tmp_path, capsys):
    train = _script("train").main
    _one_line_error(capsys, train(["--config", str(tmp_path), "--out", str(tmp_path / "o")]), "is a directory")
    _one_line_error(capsys, train(["--config", str(tmp_path / "none.yaml")]), "not found")
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00\x01")
    _one_line_error(capsys, train(["--config", str(tmp_path / "binary.yaml")]), "not a text (UTF-8) file")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cfg = _cfg(tmp_path)
    _one_line_error(capsys, train(["--config", cfg, "--out", str(blocker)]), "--out", "is a file")
    _one_line_error(capsys, train(["--config", cfg, "--out", str(blocker / "sub")]), "--out", "cannot be created")
    with pytest.raises(SystemExit) as info:
        train(["--config", cfg, "--updates", "0"])
    _one_line_error(capsys, info.value.code, "--updates", "0", ">= 1")
    for bad, needle in (("-5", ">= 0"), ("lots", "a number >= 0"), ("inf", "a finite number >= 0")):
        with pytest.raises(SystemExit) as info:
            train(["--config", cfg, "--cpu-budget", bad])
        _one_line_error(capsys, info.value.code, "--cpu-budget", needle)


def test_train_script_error_is_one_line_in_a_real_process(tmp_path):
    cfg = _cfg(tmp_path, {"ppo.minibatch": 0})
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", cfg, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert res.returncode == 2
    assert res.stderr.strip() == "train.py: error: " + (
        f"{cfg}: ppo.minibatch: 0 is not allowed; it must be an integer >= 1"
    )


def test_no_resume_starts_logs_and_tensorboard_over(tmp_path):
    from agents.config import config_from_dict
    from agents.train import train

    cfg = config_from_dict(TINY)
    out = tmp_path / "run"
    train(cfg, out, progress=False)
    old_events = sorted(p.name for p in (out / "tb").iterdir())
    assert old_events
    train(cfg, out, resume=False, progress=False)
    new_events = sorted(p.name for p in (out / "tb").iterdir())
    assert not set(old_events) & set(new_events)  # the old run's events are gone
    with open(out / "progress.csv") as fh:
        assert [line.split(",")[0] for line in fh.read().splitlines()] == ["update", "1"]


def test_default_config_equals_the_dataclass_defaults():
    """A key left out of a config takes the value configs/default.yaml documents."""
    from agents.config import TrainConfig, load_config

    assert load_config(ROOT / "configs" / "default.yaml") == TrainConfig()


# ----------------------------------------------------------------- bench.py / replay.py (item 13)
@pytest.mark.parametrize(
    "args, needles",
    [
        (["--players", "6"], ["--players", "6", "2 to 5"]),
        (["--players", "x"], ["--players", "'x'"]),
        (["--expansions", "foo"], ["--expansions", "'foo'", "unknown expansion"]),
        (["--expansions", ","], ["--expansions"]),
        (["--seconds", "-1"], ["--seconds", "-1", "> 0"]),
        (["--seconds", "nan"], ["--seconds", "nan"]),
        (["--seed", "-1"], ["--seed", "-1", ">= 0"]),
        (["--num-envs", "0"], ["--num-envs", "0", ">= 1"]),
    ],
)
def test_bench_refuses_bad_arguments(capsys, args, needles):
    with pytest.raises(SystemExit) as info:
        _script("bench").main([*args, "--no-env"])
    _one_line_error(capsys, info.value.code, "bench.py: error: argument", *needles)


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--png", "/no/such/folder/x.png"], ["--png", "does not exist"]),
        (["--gif", "{tmp}"], ["--gif", "is a folder"]),
        (["--text", "--tile-px", "4"], ["--tile-px", "4", "8 to 512"]),
        (["--gif", "{tmp}/g.gif", "--every", "0"], ["--every", "0", ">= 1"]),
        (["--gif", "{tmp}/g.gif", "--duration-ms", "-5"], ["--duration-ms", "-5"]),
        ([], ["nothing to do"]),
    ],
)
def test_replay_refuses_bad_arguments(tmp_path, capsys, args, needles):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    with pytest.raises(SystemExit) as info:
        _script("replay").main([str(ROOT / "docs" / "img" / "example_game.json"), *args])
    _one_line_error(capsys, info.value.code, "replay.py: error:", *needles)


def test_replay_refuses_bad_records_in_one_line(tmp_path, capsys):
    replay = _script("replay").main
    (tmp_path / "bin.json").write_bytes(b"\xff\x00")
    _one_line_error(capsys, replay([str(tmp_path / "bin.json"), "--text"]), "UTF-8")
    _one_line_error(capsys, replay([str(tmp_path), "--text"]), "is a directory")
    (tmp_path / "null.json").write_text(
        '{"format": "carc_env-game-record", "version": 1, "config": {}, "seed": 1, "draw_order": [], "actions": null}'
    )
    _one_line_error(capsys, replay([str(tmp_path / "null.json"), "--text"]), "'actions' must be a list")


def test_cli_player_spec_for_evaluate():
    """The shared checker the evaluation script uses for --opponents entries."""
    import argparse

    from agents import cli

    assert cli.player_spec("greedy:0.1") == "greedy:0.1"
    for bad in ("greedy:abc", "greedy:2", "nobody"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not allowed"):
            cli.player_spec(bad)


def test_make_player_names_a_bad_greedy_epsilon():
    from agents.players import make_player

    for bad in ("greedy:abc", "greedy:-0.5", "greedy:nan"):
        with pytest.raises(ValueError, match=r"greedy:EPS needs a number 0 <= EPS <= 1"):
            make_player(bad, {}, seed=0)
    assert make_player("greedy:0.25", {}, seed=0).epsilon == 0.25


def test_agents_makes_torch_threads_wait_passively(monkeypatch):
    """Item 16: OpenMP threads that spin slow training severalfold on a busy machine."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    code = "import os, agents, torch; print(os.environ.get('OMP_WAIT_POLICY'))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert res.stdout.strip() == "PASSIVE", res.stderr
    env["OMP_WAIT_POLICY"] = "ACTIVE"  # an explicit choice is kept
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert res.stdout.strip() == "ACTIVE", res.stderr

    from agents.train import warn_spinning_threads

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)  # torch imported before agents: too late to set
    with pytest.warns(UserWarning, match="spin-wait"):
        assert warn_spinning_threads(2)
    assert not warn_spinning_threads(1)
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    assert not warn_spinning_threads(2)


def _curve_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.csv").write_text(
        "update,env_steps,opponent,games,win_rate,ties,mean_margin\n"
        "10,1000,random,40,1.0,0,70\n10,1000,greedy,40,0.5,0,0\n20,2000,greedy,40,0.6,0,3\n"
    )
    (run / "progress.csv").write_text("update,env_steps,train_win_rate\n1,100,0.4\n2,200,0.5\n")
    return run


def test_plot_curve_draws_runs_points_with_intervals_and_targets(tmp_path, capsys):
    from PIL import Image

    run = _curve_run(tmp_path)
    points = tmp_path / "points.csv"
    points.write_text("label,env_steps,win_rate,lo,hi\nmcts:1000,1000,0.25,0.1,0.4\nmcts:1000,2000,0.5,0.35,0.65\n")
    out = tmp_path / "curve.png"
    plain = tmp_path / "plain.png"
    rc = _script("plot_curve").main([str(run), "--points", str(points), "--target", "0.75:target", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert _script("plot_curve").main([str(run), "--out", str(plain)]) == 0
    a, b = Image.open(out).convert("RGB"), Image.open(plain).convert("RGB")
    assert a.size == b.size == (1000, 520)
    # the extra series, its interval bars and the target line are drawn: the pictures differ in many pixels
    import numpy as np

    diff = int((np.asarray(a) != np.asarray(b)).any(axis=2).sum())
    assert diff > 200
    # two series without intervals in one file get two colours (the run has the first)
    two = tmp_path / "two.csv"
    two.write_text("label,env_steps,win_rate\na,1000,0.2\na,2000,0.3\nb,1000,0.7\nb,2000,0.8\n")
    assert _script("plot_curve").main([str(run), "--points", str(two), "--out", str(out)]) == 0
    pixels = {tuple(p) for p in np.asarray(Image.open(out).convert("RGB")).reshape(-1, 3)}
    assert (214, 39, 40) in pixels and (44, 160, 44) in pixels


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (["--target", "x:bad"], ("--target", "'x:bad'")),
        (["--target", "1.5:high"], ("--target", "1.5", "between 0 and 1")),
    ],
)
def test_plot_curve_refuses_bad_targets(tmp_path, capsys, extra, needles):
    run = _curve_run(tmp_path)
    with pytest.raises(SystemExit) as exc:
        _script("plot_curve").main([str(run), *extra, "--out", str(tmp_path / "c.png")])
    _one_line_error(capsys, exc.value.code, *needles)


def test_plot_curve_refuses_points_without_the_columns(tmp_path, capsys):
    run = _curve_run(tmp_path)
    points = tmp_path / "points.csv"
    points.write_text("name,steps,win\na,1,0.5\n")
    rc = _script("plot_curve").main([str(run), "--points", str(points), "--out", str(tmp_path / "c.png")])
    _one_line_error(capsys, rc, str(points), "env_steps", "label", "win_rate")


def test_results_name_paths_relative_to_the_current_folder_when_under_it(tmp_path, monkeypatch):
    from agents import cli

    monkeypatch.chdir(tmp_path)
    inside = str(tmp_path / "runs" / "x" / "checkpoint.pt")
    outside = str(tmp_path.parent / "elsewhere.pt")
    assert cli.relative_path(inside) == os.path.join("runs", "x", "checkpoint.pt")
    assert cli.relative_path(Path(inside)) == os.path.join("runs", "x", "checkpoint.pt")
    assert cli.relative_path(str(tmp_path / "scripts" / ".." / "t.toml")) == "t.toml"  # normalised
    assert cli.relative_path(outside) == outside  # not under it: as given
    assert cli.relative_path("runs/y.pt") == "runs/y.pt" and cli.relative_path("../z.pt") == "../z.pt"
    rel = os.path.join("runs", "x", "checkpoint.pt")
    assert cli.relative_spec(inside) == rel
    assert cli.relative_spec(f"ppo-mcts:{inside}:50") == f"ppo-mcts:{rel}:50"
    assert cli.relative_spec(f"ppo-mcts:{outside}:50") == f"ppo-mcts:{outside}:50"
    for spec in ("greedy:0.3", "mcts:200:c=1", "mymodule:policy", "runs/a.pt"):
        assert cli.relative_spec(spec) == spec


def test_fast_differential_names_the_mini_map_relative_to_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # (where the README runs the scripts)
    mod = _script("fast_differential")
    assert mod.MINI_MAP == os.path.join("tests", "data", "maps", "mini.toml") and os.path.isfile(mod.MINI_MAP)
    # the configurations' names (the report's per_config keys) then name no folder of this machine
    names = [repr(kw) for kw in mod.map_configs()]
    assert sum(repr(mod.MINI_MAP) in n for n in names) >= 2 and not any(str(ROOT) in n for n in names)


def test_main_summary_names_its_config_relative_to_the_current_folder(tmp_path, monkeypatch, capsys):
    cfg = copy.deepcopy(TINY)
    cfg["run"]["final_eval_games"] = 1
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    monkeypatch.chdir(tmp_path)
    assert _script("main").main(["--config", str(tmp_path / "tiny.yaml"), "--out", "out"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"] == "tiny.yaml" and summary["updates"] == 1
    assert str(tmp_path) not in json.dumps(summary)
