"""A training run killed with SIGKILL and run again equals an uninterrupted run (issue #12, item 1).

Both runs go through ``scripts/train.py`` in subprocesses with a tiny config
(snapshot opponents from the first update on, checkpoints every other update,
periodic evaluation).  The interrupted run is killed after snapshots exist and
a checkpoint was written, mid-way through a later update, then resumed with the
same command.  The final checkpoint (network, optimiser, snapshots, counters,
random generators, games in progress), ``progress.csv``, ``eval.csv`` and the
TensorBoard scalars must equal the uninterrupted run's, except the wall-clock
columns (``seconds``, ``env_steps_per_s``, ``learner_steps_per_s``, ``collect_seconds``,
``update_seconds``), whose content is not deterministic.
"""

from __future__ import annotations

import csv
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml

ROOT = Path(__file__).resolve().parents[2]
TIMING = {"seconds", "env_steps_per_s", "learner_steps_per_s", "collect_seconds", "update_seconds", "cpu_seconds"}


def test_only_the_clock_columns_are_exempt():
    from agents.train import PROGRESS_FIELDS, TIMING_FIELDS

    assert TIMING_FIELDS == TIMING and TIMING <= set(PROGRESS_FIELDS)


CONFIG = {
    "game": {"num_players": 2, "expansions": ["base"]},
    "ppo": {
        "num_envs": 2, "steps_per_update": 96, "epochs": 1, "minibatch": 16, "lr": 0.003,
        "p_random": 0.2, "p_greedy": 0.0, "p_self": 0.1, "p_snapshot": 0.7,
        "snapshot_every": 1, "max_snapshots": 3,
        # the default recipe's levers: imitation across the checkpoint at update 2, KL early stop, chunks
        # (96 decisions per update: imitated games are longer, and one against a snapshot must cross it)
        "imitation_updates": 3, "target_kl": 0.01, "chunk": 8,
        "net": {"channels": 4, "blocks": 1, "hidden": 8},
    },
    "run": {"seed": 1, "total_updates": 7, "eval_every": 2, "eval_games": 2, "checkpoint_every": 2,
            "torch_threads": 1, "final_eval_games": 2},
}  # fmt: skip


def _cmd(cfg: Path, out: Path) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(cfg), "--out", str(out), "--quiet"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(fh)]


def _tb_scalars(tb: Path) -> list[tuple[str, int, float]]:
    """Every scalar event on disk, in file and write order (no purging: what a reader of the files sees)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    out = []
    for f in sorted(tb.glob("events.out.tfevents.*")):
        for ev in EventFileLoader(str(f)).Load():
            for v in ev.summary.value:
                tag = v.tag
                if tag.split("/")[-1] in TIMING:
                    continue
                value = v.simple_value if v.HasField("simple_value") else float(torch.tensor(v.tensor.float_val)[0])
                out.append((tag, ev.step, value))
    return out


def _checkpoint(path: Path) -> dict:
    data = torch.load(path, map_location="cpu", weights_only=True)
    data.pop("train_seconds")
    data.pop("cpu_seconds")  # the clocks: not reproducible
    data.pop("update_cpu")  # (the last updates' CPU, for run.cpu_budget)
    return data


def _same(a, b, where: str = "") -> None:
    if isinstance(a, torch.Tensor):
        same = isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
        assert same, f"{where} differs"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _same_trainer(a: dict, b: dict, where: str) -> int:
    """Two trainer states are the same: network, optimiser, snapshots, torch generator, counters, numpy
    generators, seats / opponents / open transitions, the running games (on the compiled engine: one
    FastBatch, state arrays and histories included), and recursively each rollout shard's (compared by
    value: a tensor's pickled bytes may differ with its storage).  Returns the number of shards."""
    a, b = dict(a), dict(b)
    blob_a = pickle.loads(a.pop("blob").numpy().tobytes())
    blob_b = pickle.loads(b.pop("blob").numpy().tobytes())
    _same(a, b, where)
    games_a, games_b = blob_a.pop("games"), blob_b.pop("games")
    slots_a, slots_b = blob_a.pop("slots"), blob_b.pop("slots")
    shards_a, shards_b = blob_a.pop("shards", None) or [], blob_b.pop("shards", None) or []
    assert blob_a == blob_b, where  # counters and numpy generators
    assert pickle.dumps(slots_a) == pickle.dumps(slots_b), where
    assert games_a.engine == games_b.engine == "numba"
    assert all(np.array_equal(x, y) for x, y in zip(games_a.batch.state, games_b.batch.state, strict=True))
    assert [games_a.batch.actions(g) for g in range(games_a.n)] == [games_b.batch.actions(g) for g in range(games_b.n)]
    assert len(shards_a) == len(shards_b), where
    for j, (x, y) in enumerate(zip(shards_a, shards_b, strict=True)):
        assert _same_trainer(pickle.loads(x), pickle.loads(y), f"{where}/shard{j + 1}") == 0
    return len(shards_a)


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (Linux's /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def test_sigkilled_run_resumes_to_the_uninterrupted_result(tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    straight, killed = tmp_path / "straight", tmp_path / "killed"

    proc = subprocess.Popen(_cmd(cfg, killed), env=_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # Kill once update 3 is logged: snapshots exist (one per update), the checkpoint is at update 2,
    # and update 3's row (and maybe more) is past the checkpoint, so the logs must be cut back on resume.
    # The deadline only bounds a hung run: on a loaded 2-core machine (load 11-14, 6 jobs) update 3
    # took over 120 s to be logged, and a kill before it tests nothing the assertions below expect.
    deadline = time.monotonic() + 600
    progress = killed / "progress.csv"
    while time.monotonic() < deadline and proc.poll() is None:
        if progress.exists() and len(progress.read_text().splitlines()) >= 4:  # header + updates 1..3
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed:\n" + proc.stdout.read().decode()
    assert len(progress.read_text().splitlines()) >= 4, "update 3 was not logged within 600 s"
    helpers = _children(proc.pid)  # the rollout shard's process (ppo.rollout_workers: 2)
    assert len(helpers) == 1, helpers
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60  # an orphaned helper reads end-of-file and ends (it may finish a rollout)
    while time.monotonic() < deadline and any(Path(f"/proc/{h}").exists() for h in helpers):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{h}").exists() for h in helpers), "the helper outlived its killed training process"
    kill_rows = len(_rows(progress))
    ckpt = pickle.loads(_checkpoint(killed / "checkpoint.pt")["trainer"]["blob"].numpy().tobytes())
    assert ckpt["next_snapshot"] >= 2 and ckpt["updates"] <= kill_rows <= 6, (ckpt["updates"], kill_rows)
    if ckpt["updates"] == 2:  # the kill lands in update 3 or 4 (checkpoint 4 follows update 4's evaluation)
        assert kill_rows > 2  # rows past the checkpoint: the logs must be cut back on resume
        # a game against a snapshot runs across the checkpoint: its net was built before the kill and
        # must be rebuilt after it without shifting any random stream
        opponents = ckpt["slots"][1]  # (seats, opponents, last score differences, open transitions)
        assert any(isinstance(o, int) for o in opponents), opponents

    resumed = subprocess.run(_cmd(cfg, killed), env=_env(), cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming" not in resumed.stderr
    done = subprocess.run(_cmd(cfg, straight), env=_env(), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

    a, b = _checkpoint(straight / "checkpoint.pt"), _checkpoint(killed / "checkpoint.pt")
    shards = _same_trainer(a["trainer"], b["trainer"], "checkpoint")
    assert shards == 1  # the config's default ppo.rollout_workers: 2 (the training process and one helper)
    a.pop("trainer"), b.pop("trainer")
    _same(a, b, "checkpoint")  # config, shapes

    pa, pb = _rows(straight / "progress.csv"), _rows(killed / "progress.csv")
    assert [r["update"] for r in pb] == [str(u) for u in range(1, 8)]
    assert pa == pb
    assert _rows(straight / "eval.csv") == _rows(killed / "eval.csv")
    assert [r["update"] for r in _rows(killed / "eval.csv")] == ["2", "2", "4", "4", "6", "6"]
    sa, sb = _tb_scalars(straight / "tb"), _tb_scalars(killed / "tb")
    assert len(sa) > 0 and sorted(sa) == sorted(sb)
    steps = [s for tag, s, _ in sb if tag == "train/policy_loss"]
    assert steps == list(range(1, 8))  # no update logged twice, none missing: the curve never doubles back


def test_a_run_killed_before_its_first_checkpoint_starts_clean(tmp_path):
    """Logs of a run that never checkpointed are stale: running again starts them over."""
    from agents.config import config_from_dict
    from agents.train import PROGRESS_FIELDS, train

    cfg = config_from_dict({**CONFIG, "run": {**CONFIG["run"], "total_updates": 1, "eval_every": 0}})
    out = tmp_path / "run"
    out.mkdir()
    (out / "progress.csv").write_text(",".join(PROGRESS_FIELDS) + "\n" + "1," * (len(PROGRESS_FIELDS) - 1) + "1\n")
    (out / "eval.csv").write_text("update,env_steps,opponent,games,win_rate,ties,mean_margin\n1,5,random,2,0.5,0,1\n")
    (out / "tb").mkdir()
    (out / "tb" / "events.out.tfevents.0.stale").write_bytes(b"")
    train(cfg, out, progress=False)
    assert [r["update"] for r in _rows(out / "progress.csv")] == ["1"]
    assert not (out / "eval.csv").exists()
    assert not (out / "tb" / "events.out.tfevents.0.stale").exists()
