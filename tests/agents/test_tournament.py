"""The headless tournament (agents/tournament.py), the player specs (agents/players.py),
the network-guided search (agents/search.py) and scripts/evaluate.py."""

from __future__ import annotations

import csv
import json
import math
import os
import sys
from dataclasses import asdict

import numpy as np
import pytest
import torch
from PIL import Image

import carc_env
from agents.checkpoint import CheckpointError, save_checkpoint
from agents.network import NetConfig, PolicyNet
from agents.players import PlayerSpecError, make_player, split_path_options
from agents.policy import shapes_from_env
from agents.search import NetworkGuide, PPOSearchPolicy
from agents.tournament import (
    bradley_terry,
    make_lineups,
    merge_reports,
    plan,
    ratings,
    run_tournament,
    seatings,
    write_csv,
    write_png,
)
from carc_env.baselines import RandomPolicy
from carc_env.search import MCTSPolicy
from carc_env.search.mcts import node_actions

sys.path.insert(0, "scripts")
import evaluate as evaluate_script  # noqa: E402

TINY_NET = NetConfig(channels=8, blocks=1, hidden=16)


def _untrained_checkpoint(path, num_players=2):
    torch.manual_seed(0)
    shapes = shapes_from_env(carc_env.raw_env(num_players=num_players))
    net = PolicyNet(shapes, TINY_NET)
    save_checkpoint(
        path,
        {
            "shapes": asdict(shapes),
            "net_config": asdict(TINY_NET),
            "trainer": {"net": net.state_dict()},
            "config": {"ppo": {"score_scale": 0.05, "win_bonus": 1.0}},
        },
    )
    return net


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny forward passes (the tournament does the same)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "tiny.pt"
    _untrained_checkpoint(path)
    return str(path)


# ------------------------------------------------------------------------------ the plan
def test_seatings():
    assert seatings((0, 1), "auto") == [(0, 1), (1, 0)]
    assert sorted(seatings((0, 1, 1), "permutations")) == [(0, 1, 1), (1, 0, 1), (1, 1, 0)]
    assert len(seatings((0, 1, 2), "permutations")) == 6
    assert seatings((0, 1, 2), "rotations") == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert len(seatings((0, 1, 2, 3), "auto")) == 4 and len(seatings((0, 1, 1, 1, 1), "auto")) == 5
    with pytest.raises(ValueError, match="seating"):
        seatings((0, 1), "shuffle")


def test_lineups():
    assert make_lineups(3, [0], [1, 2], 2) == [(0, 1), (0, 2)]
    assert make_lineups(3, [0], [1, 2], 3) == [(0, 1, 1), (0, 2, 2)]
    assert make_lineups(3, [0, 1, 2], None, 2) == [(0, 1), (0, 2), (1, 2)]
    assert make_lineups(2, [0, 1], None, 3) == [(0, 1, 1), (1, 0, 0)]
    assert make_lineups(4, [0, 1, 2, 3], None, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]


def test_plan_pairs_deals_and_rounds_up_to_whole_deals():
    tasks, deals = plan([(0, 1), (0, 2)], games=5, seed=100, seating="auto")
    assert deals == 3 and len(tasks) == 12
    for lu in (0, 1):
        mine = [t for t in tasks if t.lineup == lu]
        assert sorted(t.deal_seed for t in mine) == [100, 100, 101, 101, 102, 102]
        for d in range(3):  # each player sits in each seat once per deal
            assert sorted(t.seats for t in mine if t.deal == d) == sorted([(0, 1 + lu), (1 + lu, 0)])
    assert len({t.player_seeds for t in tasks}) == len(tasks)


# ------------------------------------------------------------------------------ ratings
def test_bradley_terry_recovers_a_known_strength_ratio():
    wins = np.array([[0.0, 30.0], [10.0, 0.0]])
    elo = bradley_terry(2, wins, prior=0.0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    # three players, consistent ratios 2:1 and 4:1 -> 3 x 200 pairs are fitted exactly
    wins = np.array([[0, 400 / 3 * 2, 160], [400 / 3, 0, 400 / 3 * 2], [40, 400 / 3, 0]])
    elo = bradley_terry(3, wins, prior=0.0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert elo[0] - elo[2] == pytest.approx(400 * math.log10(4), abs=1e-6)
    # a player who won everything still gets a finite rating thanks to the virtual tie
    elo = bradley_terry(2, np.array([[0.0, 20.0], [0.0, 0.0]]))
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(20.5 / 0.5))


def test_ratings_anchor_intervals_and_separate_groups():
    games = [((0, 1), [10, 5], d) for d in range(6)] + [((1, 0), [4, 9], d) for d in range(6)]
    games += [((1, 0), [9, 4], 7)]
    elo, ci, warn = ratings(["random", "b"], games, anchor="random", seed=0)
    assert elo[0] == 0 and elo[1] < 0 and ci[1][0] < elo[1] < ci[1][1] and not warn
    # two gauntlets that never meet: each group is rated on its own, with a warning
    games = [((0, 1), [3, 1], 0), ((2, 3), [1, 3], 0), ((1, 0), [0, 2], 1), ((3, 2), [4, 1], 1)]
    elo, ci, warn = ratings(["a", "b", "c", "d"], games, anchor=None, seed=0)
    assert warn and "never met" in warn[0]
    assert elo[0] + elo[1] == pytest.approx(0) and elo[2] + elo[3] == pytest.approx(0)
    assert elo[0] > elo[1] and elo[3] > elo[2]


# ------------------------------------------------------------------------------ playing
def _strip(report):
    r = json.loads(json.dumps(report))
    r.pop("run")
    for p in r["players"]:
        p.pop("seconds_per_move")
        p.pop("cpu_seconds_per_move")
    return r


def test_results_do_not_depend_on_the_number_of_workers():
    kw = dict(games=2, seed=7, progress=False, opponents=["greedy:0.5"])
    one = run_tournament(["random", "mcts:3"], workers=1, **kw)
    two = run_tournament(["random", "mcts:3"], workers=2, **kw)
    assert _strip(one) == _strip(two)
    again = run_tournament(["random", "mcts:3"], workers=1, **kw)
    assert _strip(again) == _strip(one)
    other = run_tournament(["random", "mcts:3"], workers=1, **{**kw, "seed": 8})
    assert other["games"] != one["games"]


def test_two_player_report_is_consistent():
    rep = run_tournament(["greedy", "random"], games=6, seed=1, workers=1, progress=False)
    assert rep["mode"] == "round-robin" and rep["games_per_lineup"] == 6 and rep["deals_per_lineup"] == 3
    by = {p["name"]: p for p in rep["players"]}
    assert by["random"]["rating"] == 0 and by["greedy"]["rating"] > 200
    assert by["greedy"]["wins"] == 6 and by["greedy"]["mean_margin"] > 30
    lu = rep["lineups"][0]["results"]
    assert lu["greedy"]["mean_margin"] == pytest.approx(-lu["random"]["mean_margin"])
    assert rep["pairwise"] == [{"a": "greedy", "b": "random", "a_score": 6.0, "b_score": 0.0, "pairs": 6}]
    for g in rep["games"]:
        assert sorted(g["seats"]) == ["greedy", "random"]


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_more_than_two_players(seats):
    rep = run_tournament(
        ["greedy"], {"num_players": seats}, games=seats, seed=3, opponents=["random"], workers=1, progress=False
    )
    assert rep["seating"] == ("permutations" if seats == 3 else "rotations")
    lu = rep["lineups"][0]
    assert lu["seats"] == ["greedy"] + ["random"] * (seats - 1)
    g, r = lu["results"]["greedy"], lu["results"]["random"]
    assert g["games"] == seats and r["games"] == seats * (seats - 1)  # every seat a player holds counts
    assert g["wins"] + g["ties"] + g["losses"] == seats and g["wins"] >= seats - 1
    positions = {tuple(x["seats"]).index("greedy") for x in rep["games"]}
    assert positions == set(range(seats))


def test_a_player_may_meet_its_own_copy():
    rep = run_tournament(["greedy"], games=2, opponents=["greedy"], workers=1, progress=False)
    assert [p["name"] for p in rep["players"]] == ["greedy", "greedy#2"]


def test_outputs(tmp_path):
    rep = run_tournament(["greedy", "random", "greedy:0.5"], games=2, seed=2, workers=1, progress=False)
    write_csv(rep, tmp_path / "p.csv", tmp_path / "l.csv")
    rows = list(csv.DictReader(open(tmp_path / "p.csv")))
    assert [r["name"] for r in rows][0] == "greedy" and len(rows) == 3
    assert float(rows[-1]["rating"]) <= float(rows[0]["rating"])
    assert len(list(csv.DictReader(open(tmp_path / "l.csv")))) == 6
    write_png(rep, tmp_path / "r.png")
    img = Image.open(tmp_path / "r.png")
    assert img.size[0] > 400 and img.size[1] > 100


# ------------------------------------------------------------------------------ player specs
def test_player_specs():
    kw = {"num_players": 2}
    assert make_player("greedy:0.25", kw, 0).epsilon == 0.25
    m = make_player("mcts:50:greedy:eps=0.1:c=0.5:utility=win", kw, 0)
    assert isinstance(m, MCTSPolicy) and m.simulations == 50 and m.c == 0.5
    assert m.guide.rollout == "greedy" and m.guide.epsilon == 0.1 and m.guide.utility == "win"
    t = make_player("mcts:time=0.2", kw, 0)
    assert t.simulations is None and t.time_per_move == 0.2
    both = make_player("mcts:300:time=2", kw, 0)
    assert both.simulations == 300 and both.time_per_move == 2.0
    assert split_path_options("runs/a:b/x.pt:200:c=1") == ("runs/a:b/x.pt", ["200", "c=1"])
    for bad, msg in [
        ("greedy:abc", "epsilon"),
        ("greedy:2", "epsilon"),
        ("mcts:0", "simulations"),
        ("mcts:10:fast", "unknown option"),
        ("mcts:10:c=-1", "c"),
        ("random:3", "no option"),
        ("ppo-mcts:missing.pt", "no checkpoint"),
        ("nosuchplayer", "unknown player"),
        ("nosuchmodule_xyz:f", "cannot import"),
        ("ppo:missing.pt", "no checkpoint"),
    ]:
        with pytest.raises(PlayerSpecError, match=msg):
            make_player(bad, kw, 0)


def test_missing_integration_is_a_clear_error():
    try:
        import ray  # noqa: F401
    except ImportError:
        with pytest.raises(PlayerSpecError, match=r"\[rllib\]"):
            make_player("rllib:some/dir", {"num_players": 2}, 0)
    else:  # the integration is installed: a missing checkpoint is named
        with pytest.raises(PlayerSpecError, match="some/dir"):
            make_player("rllib:some/dir", {"num_players": 2}, 0)


USER_MODULE = '''
import numpy as np

def policy(obs, env):
    """The documented signature: the lowest legal action."""
    return int(np.flatnonzero(obs["action_mask"])[0])

class Seeded:
    def __init__(self):
        self.rng = np.random.default_rng(0)
    def seed(self, seed):
        self.rng = np.random.default_rng(seed)
    def act(self, obs, env):
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[self.rng.integers(len(legal))])

def factory():
    return Seeded()
'''


def test_user_policies(tmp_path, monkeypatch):
    (tmp_path / "my_policies_t18.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    kw = {"num_players": 2}
    assert type(make_player("my_policies_t18:policy", kw, 0)).__name__ == "FunctionPolicy"
    assert type(make_player("my_policies_t18:Seeded", kw, 0)).__name__ == "Seeded"
    assert type(make_player("py:my_policies_t18:factory", kw, 0)).__name__ == "Seeded"
    with pytest.raises(PlayerSpecError, match="no attribute"):
        make_player("my_policies_t18:nothing", kw, 0)
    # played in spawned workers too (they import the module from the current directory)
    specs = ["my_policies_t18:policy", "my_policies_t18:factory"]
    one = run_tournament(specs, games=2, seed=4, workers=1, progress=False)
    two = run_tournament(specs, games=2, seed=4, workers=2, progress=False)
    assert _strip(one) == _strip(two)


# ------------------------------------------------------------------------------ ppo-mcts
def test_network_guide_on_an_untrained_network():
    for n in (2, 3):
        torch.manual_seed(1)
        env = carc_env.raw_env(num_players=n)
        net = PolicyNet(shapes_from_env(env), TINY_NET)
        env.reset(seed=5)
        guide = NetworkGuide(net, {"num_players": n})
        for _ in range(6):
            g = env.game
            acts = node_actions(g, {})
            priors, values = guide.expand(g.clone(), acts, None)
            assert len(priors) == len(acts) and sum(priors) == pytest.approx(1.0) and min(priors) >= 0
            assert len(values) == n and all(math.isfinite(v) for v in values)
            pol = PPOSearchPolicy(net, {"num_players": n}, simulations=6, seed=3)
            mask = env.match.mask()
            a = pol.act({"action_mask": mask}, env)
            assert mask[a] == 1
            assert pol.act({"action_mask": mask}, env) != -1
            pol.seed(3)
            assert pol.act({"action_mask": mask}, env) == PPOSearchPolicy(net, {"num_players": n}, 6, seed=3).act(
                {"action_mask": mask}, env
            )
            env.step(a)
    # a finished game is valued score_scale * margin + win_bonus * outcome
    env = carc_env.raw_env()
    env.reset(seed=1)
    rp = RandomPolicy(seed=1)
    while not env.game.over:
        env.step(rp.act({"action_mask": env.match.mask()}, env))
    s = env.game.scores
    v = NetworkGuide(net, {"num_players": 2}, score_scale=0.1, win_bonus=2.0).terminal(env.game)
    sign = 1 if s[0] > s[1] else -1 if s[0] < s[1] else 0
    assert v[0] == pytest.approx(0.1 * (s[0] - s[1]) + 2.0 * sign if sign else 0.0)


def test_ppo_and_ppo_mcts_are_separate_players(ckpt):
    rep = run_tournament([ckpt, f"ppo-mcts:{ckpt}:4"], games=2, seed=1, opponents=["random"], workers=1, progress=False)
    names = [p["name"] for p in rep["players"]]
    assert names == [ckpt, f"ppo-mcts:{ckpt}:4", "random"]
    assert all(p["decisions"] > 0 for p in rep["players"])
    with pytest.raises(CheckpointError, match="another game layout"):
        make_player(f"ppo-mcts:{ckpt}", {"num_players": 3}, 0)
    # where its simulations run: engine=auto (default), python or numba; rollout options are refused
    assert make_player(f"ppo-mcts:{ckpt}:4", {"num_players": 2}, 0).guide.engine == "auto"
    assert make_player(f"ppo-mcts:{ckpt}:4:engine=python", {"num_players": 2}, 0).guide.engine == "python"
    with pytest.raises(PlayerSpecError, match="option of mcts rollouts.*engine=auto"):
        make_player(f"ppo-mcts:{ckpt}:4:greedy", {"num_players": 2}, 0)


# ------------------------------------------------------------------------------ scripts/evaluate.py
@pytest.mark.parametrize(
    "argv, needle",
    [
        (["greedy", "--players", "6"], "--players: 6 is not allowed; it must be an integer from 2 to 5"),
        (["greedy", "--expansions", "foo"], "--expansions: 'foo'"),
        (["greedy", "--opponents", "greedy:abc"], "--opponents: player 'greedy:abc'"),
        (["greedy", "--seed", "-1"], "--seed: -1 is not allowed; it must be an integer >= 0"),
        (["greedy", "--png", "/no/such/folder/x.png"], "--png: folder"),
        (["greedy", "--csv", "/no/such/folder/x.csv"], "--csv: folder"),
        (["greedy", "--games", "0"], "--games: 0 is not allowed; it must be an integer >= 1"),
        (["greedy", "--workers", "0"], "--workers: 0"),
        (["greedy", "--opponents", "random,"], "--opponents: 'random,' has an empty entry"),
        (["nosuchplayer"], "unknown player 'nosuchplayer'"),
        ([], "give at least one player"),
    ],
)
def test_cli_rejects_bad_arguments_with_one_line(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        rc = evaluate_script.main(argv)
        raise SystemExit(rc)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err
    assert err.startswith("evaluate.py: error: ")  # the scripts' one-line form (agents/cli.py)


def test_cli_old_interface_and_outputs(ckpt, tmp_path, capsys):
    rc = evaluate_script.main(
        [ckpt, "--opponents", "random,greedy", "--games", "2", "--json", "--workers", "1", "--no-progress"]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["candidate"] == ckpt and out["games_per_opponent"] == 2
    assert set(out) >= {"win_rate_vs_random", "win_rate_vs_greedy", "vs_random", "vs_greedy", "players", "lineups"}
    assert out["vs_greedy"]["games"] == 2 and out["vs_greedy"]["seed"] == 12345
    rc = evaluate_script.main(
        [
            "greedy",
            "random",
            "--games",
            "2",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "new" / "dir"),
            "--csv",
            str(tmp_path / "t.csv"),
            "--png",
            str(tmp_path / "t.png"),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "greedy | random" in text and "Bradley-Terry" in text
    for f in ("report.json", "players.csv", "lineups.csv", "ratings.png"):
        assert (tmp_path / "new" / "dir" / f).stat().st_size > 0
    assert (tmp_path / "t.csv").exists() and (tmp_path / "t.png").exists()


def test_cli_names_a_checkpoint_under_the_current_folder_relative_to_it(ckpt, monkeypatch, capsys):
    # the report, players and games name "ckpt0/tiny.pt", not the machine's folder it lay in
    root = os.path.dirname(os.path.dirname(ckpt))
    monkeypatch.chdir(root)
    rel = os.path.relpath(ckpt, root)
    rc = evaluate_script.main(
        [ckpt, "--opponents", f"greedy,ppo-mcts:{ckpt}:2", "--games", "2", "--json", "--workers", "1", "--no-progress"]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["candidate"] == rel and not rel.startswith(os.sep)
    assert {p["name"] for p in out["players"]} == {rel, "greedy", f"ppo-mcts:{rel}:2"}
    assert root not in json.dumps(out)


def test_a_failing_player_is_named(tmp_path, monkeypatch):
    (tmp_path / "bad_policies_t18.py").write_text("def policy(obs, env):\n    return -5\n")
    monkeypatch.chdir(tmp_path)
    from agents.tournament import PlayerFailed

    with pytest.raises(PlayerFailed, match=r"player bad_policies_t18:policy failed in seat \d, deal seed 3"):
        run_tournament(["bad_policies_t18:policy"], games=2, seed=3, opponents=["random"], workers=1, progress=False)
    with pytest.raises(PlayerFailed, match="bad_policies_t18:policy"):
        run_tournament(["bad_policies_t18:policy"], games=2, seed=3, opponents=["random"], workers=2, progress=False)


# ------------------------------------------------------------------------------ merging runs
def test_merging_runs_rates_their_games_together(tmp_path, capsys):
    a = run_tournament(["random", "greedy"], games=4, seed=7, workers=1, progress=False)
    b = run_tournament(["greedy:0.5", "greedy"], games=4, seed=7, workers=1, progress=False)
    one = merge_reports([a], anchor="random", seed=7)  # one run: its own ratings (deals = deal seeds)
    assert [(p["name"], p["rating"], p["rating_ci95"], p["win_rate"]) for p in one["players"]] == [
        (p["name"], p["rating"], p["rating_ci95"], p["win_rate"]) for p in a["players"]
    ]
    m = merge_reports([a, b], anchor="greedy", seed=7)
    by = {p["name"]: p for p in m["players"]}
    assert list(by) == ["random", "greedy", "greedy:0.5"]  # greedy of both runs is one player
    assert by["greedy"]["games"] == 8 and by["random"]["games"] == by["greedy:0.5"]["games"] == 4
    assert by["greedy"]["rating"] == 0.0
    old = {p["name"]: p for p in a["players"]}
    assert by["random"]["wins"] == old["random"]["wins"] and by["random"]["mean_margin"] == old["random"]["mean_margin"]
    assert len(m["games"]) == 8 and len(m["lineups"]) == 2 and {g["run"] for g in m["games"]} == {0, 1}
    assert {(q["a"], q["b"]) for q in m["pairwise"]} == {("random", "greedy"), ("greedy", "greedy:0.5")}
    three = run_tournament(["random", "greedy"], {"num_players": 3}, games=6, seed=7, workers=1, progress=False)
    with pytest.raises(ValueError, match="another game configuration"):
        merge_reports([a, three])
    with pytest.raises(ValueError, match="not a tournament report"):
        merge_reports([a, {"players": []}])
    # the script: --merge writes the same outputs as a run
    for name, r in (("a", a), ("b", b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(r))
    out = tmp_path / "merged"
    assert (
        evaluate_script.main(
            [
                "--merge",
                str(tmp_path / "a.json"),
                str(tmp_path / "b.json"),
                "--anchor",
                "greedy",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads((out / "report.json").read_text())["players"] == json.loads(json.dumps(m["players"]))
    assert (out / "players.csv").exists() and Image.open(out / "ratings.png").size[0] > 0
    assert evaluate_script.main(["greedy", "--merge", str(tmp_path / "a.json")]) == 2
    assert "no players" in capsys.readouterr().err


def test_merge_counts_a_checkpoint_named_by_absolute_and_relative_path_as_one_player(tmp_path, monkeypatch):
    """Reports written before the scripts made paths relative name a checkpoint by its absolute path; a new
    report by the relative one: --merge (run from the folder the paths are relative to) rates one player."""
    a = run_tournament(["random", "greedy"], games=4, seed=7, workers=1, progress=False)
    b = run_tournament(["random", "greedy"], games=4, seed=9, workers=1, progress=False)
    agent = tmp_path / "runs" / "agent.pt"

    def renamed(report, new):  # greedy played as if it were the checkpoint file `new`
        text = json.dumps(report).replace('"greedy"', json.dumps(new))
        assert text != json.dumps(report)
        return text

    (tmp_path / "old.json").write_text(renamed(a, str(agent)))
    (tmp_path / "new.json").write_text(renamed(b, "runs/agent.pt"))
    monkeypatch.chdir(tmp_path)
    assert evaluate_script.main(["--merge", "old.json", "new.json", "--out", "merged", "--no-progress"]) == 0
    merged = json.loads((tmp_path / "merged" / "report.json").read_text())
    by = {p["name"]: p for p in merged["players"]}
    assert list(by) == ["random", "runs/agent.pt"]
    assert by["runs/agent.pt"]["games"] == 8 and len(merged["games"]) == 8
    assert all(set(g["seats"]) == {"random", "runs/agent.pt"} for g in merged["games"])
    assert {name for lu in merged["lineups"] for name in lu["seats"]} == {"random", "runs/agent.pt"}


def test_cpu_seconds_per_move_are_reported_and_merged_weighted_by_decisions():
    a = run_tournament(["random", "mcts:20"], games=2, seed=3, workers=1, progress=False)
    b = run_tournament(["random", "mcts:20"], games=4, seed=5, workers=1, progress=False)
    for r in (a, b):
        by = {p["name"]: p for p in r["players"]}
        # a 20-simulation search costs CPU a move; the CPU of one thread cannot much exceed the wall time
        assert by["mcts:20"]["cpu_seconds_per_move"] > 0
        assert by["mcts:20"]["cpu_seconds_per_move"] <= 1.5 * by["mcts:20"]["seconds_per_move"] + 1e-3
    m = {p["name"]: p for p in merge_reports([a, b], seed=1)["players"]}
    pa = {p["name"]: p for p in a["players"]}["mcts:20"]
    pb = {p["name"]: p for p in b["players"]}["mcts:20"]
    want = (pa["cpu_seconds_per_move"] * pa["decisions"] + pb["cpu_seconds_per_move"] * pb["decisions"]) / (
        pa["decisions"] + pb["decisions"]
    )
    assert m["mcts:20"]["cpu_seconds_per_move"] == pytest.approx(want, abs=1e-5)
    # a report written before CPU times were kept: the merged player has none, rather than a wrong mean
    old = json.loads(json.dumps(a))
    for p in old["players"]:
        del p["cpu_seconds_per_move"]
    assert all(p["cpu_seconds_per_move"] is None for p in merge_reports([old, b], seed=1)["players"])
