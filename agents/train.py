"""The training loop: PPO updates, logs, periodic evaluation, atomic checkpoints, resume.

Output directory layout::

    OUT/checkpoint.pt     latest state (atomic); resume continues from here exactly
    OUT/best.pt           not kept: the latest checkpoint is the agent
    OUT/progress.csv      one row per update (cpu_seconds: the run's CPU so far, its helpers included)
    OUT/eval.csv          one row per periodic evaluation and opponent
    OUT/tb/               TensorBoard scalars (the same numbers as the two CSV files)
    OUT/config.yaml       the config of the run

Resuming with the same config continues the same run (the run section's
length, evaluation and checkpoint settings may change, e.g. to extend a run):
the network, optimiser, snapshots, random generators and the games in progress
are all in the checkpoint, and snapshot opponents are rebuilt from their saved
weights without touching any random stream, so a run killed at any moment (even
SIGKILL) and started again ends exactly where an uninterrupted one would: same
final checkpoint, same CSV rows, same TensorBoard scalars (all but the
clock columns, wall and CPU, ``TIMING_FIELDS``).  The CPU column goes on from
the checkpoint's count: the work of a killed run after its last checkpoint,
done again on resume, is counted once.

To get there, a (re)started run first cuts the logs back to the checkpoint it
starts from: rows of ``progress.csv`` and ``eval.csv`` after the checkpoint's
update (written before the interruption, and about to be written again) are
dropped (the files are rewritten atomically), and ``OUT/tb`` is rewritten from
the remaining rows, so no learning curve doubles back.  Without a checkpoint
(a fresh start, ``resume=False``, or a run interrupted before its first
checkpoint) the old logs are removed.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch
import yaml

from carc_env.baselines import GreedyPolicy, RandomPolicy

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig, TrainConfigError, validate
from .evaluate import evaluate
from .network import NetShapes
from .policy import PPOPolicy
from .ppo import SelfPlayTrainer, rollout_mode

PROGRESS_FIELDS = [
    "update",
    "env_steps",
    "learner_steps",
    "episodes",
    "seconds",
    "env_steps_per_s",
    "learner_steps_per_s",
    "collect_seconds",
    "update_seconds",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "old_approx_kl",
    "clipfrac",
    "explained_variance",
    "imitation_accuracy",
    "mean_reward",
    "train_win_rate",
    "train_margin",
    "train_win_rate_vs_random",
    "train_win_rate_vs_greedy",
    "train_win_rate_vs_player",
    "cpu_seconds",
    "player_rung",
    "player_cross_entropy",
    "player_agreement",
    "player_decisions",
    "gradient_steps",
]
TIMING_FIELDS = {
    "seconds",
    "env_steps_per_s",
    "learner_steps_per_s",
    "collect_seconds",
    "update_seconds",
    "cpu_seconds",
}
"""The clock columns of progress.csv (wall and CPU): the only ones a resumed run may not reproduce exactly."""
EVAL_FIELDS = ["update", "env_steps", "opponent", "games", "win_rate", "ties", "mean_margin"]
PPO_ADDED = {
    "count_weights": [],
    "anchor_coef": 0.0,
    "anchor_counts": [],
    "lr_decay_updates": 0,
    "lr_final": 1e-4,
    "rollout_workers": 1,
    "player_ladder": [],
    "ladder_win_rate": 0.5,
    "ladder_window": 5,
    "imitate_player": 0.0,
    "parallel_update": False,
}
"""PPO keys added after checkpoints were written, with the default an older run trained with."""


def checkpoint_payload(
    trainer: SelfPlayTrainer,
    cfg: TrainConfig,
    seconds: float,
    cpu_seconds: float | None = None,
    update_cpu: list[float] | None = None,
) -> dict[str, Any]:
    """``cpu_seconds``: the run's CPU seconds to this checkpoint (None: not known, for a run resumed from a
    checkpoint written before they were counted); ``update_cpu``: the CPU seconds of the last updates (at most
    ``BUDGET_WINDOW``), from which ``run.cpu_budget`` foresees the next one's."""
    from dataclasses import asdict

    return {
        "update_cpu": list(update_cpu or []),
        "config": cfg.to_dict(),
        "shapes": asdict(trainer.shapes),
        "net_config": asdict(trainer.cfg.net),
        "trainer": trainer.state_dict(),
        "train_seconds": seconds,
        "cpu_seconds": cpu_seconds,
    }


BUDGET_WINDOW = 3
"""``run.cpu_budget`` foresees an update's CPU as the dearest of the last this many."""


def budget_stop(cpu: float | None, update_cpu: list[float], budget: float, updates: int) -> str:
    """Why the run stops before its next update under ``run.cpu_budget`` = ``budget`` ("" = it goes on): when the
    run's CPU so far (``cpu``) plus the dearest of its last updates' (``update_cpu``) would pass the budget.  With
    no update measured yet the update runs (the first one of a run, which may compile, is the dearest anyway)."""
    if budget <= 0 or cpu is None or not update_cpu:
        return ""
    nxt = max(update_cpu[-BUDGET_WINDOW:])
    if cpu + nxt <= budget:
        return ""
    return (
        f"run.cpu_budget: stopped after update {updates}, {cpu:.0f} CPU-s spent; the next update (about {nxt:.0f} CPU-s, "
        f"the dearest of the last {min(len(update_cpu), BUDGET_WINDOW)}) would pass the budget of {budget:.0f}"
    )


def _append_csv(path: Path, fields: list[str], row: dict[str, Any]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def _read_rows(path: Path, fields: list[str], upto: int) -> list[dict[str, str]]:
    """The complete rows of a log with ``update <= upto``, each (update[, opponent]) once.

    A row cut short by a kill has missing fields (dropped); rows after ``upto`` were written
    after the checkpoint the run resumes from and will be written again."""
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        have = list(reader.fieldnames or [])
        if have != fields[: len(have)] or not have:  # a log of a run made before columns were added: its prefix
            raise CheckpointError(f"{path}: unexpected columns {reader.fieldnames}; expected {fields}")
        rows, seen = [], set()
        for row in reader:
            for f in fields[len(have) :]:
                row[f] = ""
            if None in row or any(row.get(f) is None for f in fields):
                continue
            try:
                u = int(row["update"])
            except ValueError:
                continue
            key = (u, row.get("opponent"))
            if u <= upto and key not in seen:
                seen.add(key)
                rows.append(row)
    return rows


def _write_rows(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    """Replace a log atomically (a kill leaves either the old or the new file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _log_update(writer: Any, row: dict[str, Any]) -> None:
    """TensorBoard scalars of one progress row (live, or rebuilt from progress.csv)."""
    u = int(row["update"])
    for k in PROGRESS_FIELDS:
        v = row.get(k)
        if k == "update" or v is None or v == "" or isinstance(v, bool):
            continue
        writer.add_scalar(f"train/{k}", float(v), u)


def _log_eval(writer: Any, row: dict[str, Any]) -> None:
    u, name = int(row["update"]), row["opponent"]
    writer.add_scalar(f"eval/win_rate_vs_{name}", float(row["win_rate"]), u)
    writer.add_scalar(f"eval/margin_vs_{name}", float(row["mean_margin"]), u)


def _restart_logs(out: Path, upto: int) -> Any:
    """Cut progress.csv / eval.csv back to update ``upto`` and rewrite OUT/tb from them; return the
    TensorBoard writer to continue with (None without tensorboard)."""
    logs = {}
    for name, fields in (("progress.csv", PROGRESS_FIELDS), ("eval.csv", EVAL_FIELDS)):
        path = out / name
        rows = _read_rows(path, fields, upto)
        if rows:
            _write_rows(path, fields, rows)
        else:
            path.unlink(missing_ok=True)
        logs[name] = rows
    shutil.rmtree(out / "tb", ignore_errors=True)
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # pragma: no cover - tensorboard is in the [train] extra
        return None
    writer = SummaryWriter(str(out / "tb"))
    evals: dict[int, list[dict[str, str]]] = {}
    for row in logs["eval.csv"]:
        evals.setdefault(int(row["update"]), []).append(row)
    for row in logs["progress.csv"]:  # in the order a live run writes them
        _log_update(writer, row)
        for ev in evals.pop(int(row["update"]), []):
            _log_eval(writer, ev)
    for rows in evals.values():
        for ev in rows:
            _log_eval(writer, ev)
    writer.flush()
    return writer


def warn_spinning_threads(threads: int) -> bool:
    """Warn (and return True) when several torch threads will spin-wait: OMP_WAIT_POLICY was unset
    when torch started (see agents/__init__.py), which on a busy machine slows training severalfold."""
    if threads > 1 and "OMP_WAIT_POLICY" not in os.environ:
        warnings.warn(
            f"training with run.torch_threads={threads} while torch's OpenMP threads spin-wait (torch was "
            "imported before agents, so OMP_WAIT_POLICY=PASSIVE could not be set): on a busy machine this can "
            "slow training several times; import agents first, set OMP_WAIT_POLICY=PASSIVE, or use "
            "run.torch_threads: 1",
            stacklevel=3,
        )
        return True
    return False


def train(
    cfg: TrainConfig,
    out: str | Path,
    resume: bool = True,
    progress: bool = True,
    max_updates: int | None = None,
) -> SelfPlayTrainer:
    """Train until ``cfg.run.total_updates`` (or ``max_updates`` more in this call).

    The config is validated first (:func:`agents.config.validate`), so a bad value fails before
    anything is built or written."""
    validate(cfg)
    if max_updates is not None and (
        isinstance(max_updates, bool) or not isinstance(max_updates, int) or max_updates < 1
    ):
        raise TrainConfigError(f"max_updates: {max_updates!r} is not allowed; it must be None or an integer >= 1")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    warn_spinning_threads(cfg.run.torch_threads)
    torch.set_num_threads(cfg.run.torch_threads)
    trainer = SelfPlayTrainer(cfg.env_kwargs(), cfg.ppo, seed=cfg.run.seed)
    ckpt = out / "checkpoint.pt"
    seconds = 0.0
    cpu_base: float | None = 0.0  # the run's CPU seconds before this call (None: a checkpoint that did not count them)
    cpu0 = trainer.cpu_seconds()
    update_cpu: list[float] = []  # the CPU seconds of the last updates (run.cpu_budget)
    if resume and ckpt.exists():
        data = load_checkpoint(ckpt)
        old, new = data["config"], cfg.to_dict()
        old_ppo = {**PPO_ADDED, **old["ppo"]}  # a checkpoint written before a key existed had its default
        if old["game"] != new["game"] or old_ppo != new["ppo"] or old["run"]["seed"] != new["run"]["seed"]:
            raise CheckpointError(
                f"{ckpt} belongs to a run with another config (game, ppo or seed differ); use another --out, "
                "or --no-resume to start over (only the run's length and logging may change on resume)"
            )
        saved = {
            **data["shapes"],
            "board_high": tuple(data["shapes"]["board_high"]),
            "windows_high": tuple(data["shapes"].get("windows_high", ())),
        }
        if NetShapes(**saved) != trainer.shapes:
            raise CheckpointError(f"{ckpt}: network shapes do not match the env")
        trainer.load_state_dict(data["trainer"])
        seconds = float(data.get("train_seconds", 0.0))
        cpu_base = data.get("cpu_seconds")
        update_cpu = [float(x) for x in data.get("update_cpu", [])]
        if progress:
            print(f"resuming {out} at update {trainer.updates} ({trainer.env_steps} env steps)")
    else:
        if not resume:
            ckpt.unlink(missing_ok=True)
        if cfg.run.init_weights:  # a fresh run started from another network's weights (agents/transfer.py)
            from .transfer import input_names, load_source, transfer

            src, names = load_source(cfg.run.init_weights)
            kept = transfer(src, names, trainer.net, input_names(cfg.env_kwargs(), trainer.shapes.seats))
            if progress:
                print(f"started from {cfg.run.init_weights} (fresh: {', '.join(kept) or 'none'})")
        if cfg.ppo.anchor_coef > 0:  # the KL anchor: the network the run starts from
            trainer.set_anchor()
    if cfg.run.cpu_budget > 0 and cpu_base is None:
        raise CheckpointError(
            f"{ckpt} was written before runs counted their CPU seconds, so run.cpu_budget cannot be applied; "
            "set run.cpu_budget: 0 to resume it"
        )
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    writer = _restart_logs(out, trainer.updates)
    goal = cfg.run.total_updates if max_updates is None else min(cfg.run.total_updates, trainer.updates + max_updates)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.run.total_updates, initial=trainer.updates, desc="train", unit="upd")
    stopped = ""

    def spent() -> float | None:
        return None if cpu_base is None else cpu_base + trainer.cpu_seconds() - cpu0

    try:
        while trainer.updates < goal:
            stopped = budget_stop(spent(), update_cpu, cfg.run.cpu_budget, trainer.updates)
            if stopped:  # resumed at the budget: nothing more to do
                break
            cpu_before = spent()
            t0 = time.perf_counter()
            steps0, learner0 = trainer.env_steps, trainer.learner_steps
            buf = trainer.collect()
            t1 = time.perf_counter()
            stats = trainer.update(buf)
            dt = time.perf_counter() - t0
            seconds += dt
            stats.update(trainer.pop_episode_stats())
            row = {
                "update": trainer.updates,
                "env_steps": trainer.env_steps,
                "learner_steps": trainer.learner_steps,
                "episodes": trainer.episodes,
                "seconds": round(seconds, 2),
                "env_steps_per_s": round((trainer.env_steps - steps0) / dt, 1),
                "learner_steps_per_s": round((trainer.learner_steps - learner0) / dt, 1),
                "collect_seconds": round(t1 - t0, 2),
                "update_seconds": round(dt - (t1 - t0), 2),
                **stats,
                "cpu_seconds": "" if cpu_base is None else round(cpu_base + trainer.cpu_seconds() - cpu0, 2),
            }
            _append_csv(out / "progress.csv", PROGRESS_FIELDS, row)
            if writer:
                _log_update(writer, row)
            if cfg.run.eval_every and trainer.updates % cfg.run.eval_every == 0:
                _periodic_eval(trainer, cfg, out, writer, bar)
            cpu = spent()
            if cpu is not None and cpu_before is not None:
                update_cpu = (update_cpu + [cpu - cpu_before])[-BUDGET_WINDOW:]
            stopped = budget_stop(cpu, update_cpu, cfg.run.cpu_budget, trainer.updates)
            if trainer.updates % cfg.run.checkpoint_every == 0 or trainer.updates == goal or stopped:
                save_checkpoint(ckpt, checkpoint_payload(trainer, cfg, seconds, cpu, update_cpu))
            if bar:
                bar.update(1)
                bar.set_postfix(
                    win=f"{stats.get('train_win_rate', float('nan')):.2f}", sps=f"{row['env_steps_per_s']:.0f}"
                )
            if stopped:
                break
    finally:
        trainer.close()  # the rollout shards' processes (a later collect would restart them)
        if bar:
            bar.close()
        if writer:
            writer.close()
    trainer.stop_reason = stopped  # (scripts/train.py prints it)
    return trainer


def _periodic_eval(trainer: SelfPlayTrainer, cfg: TrainConfig, out: Path, writer: Any, bar: Any) -> None:
    policy = PPOPolicy(trainer.net, name="ppo")
    counts = cfg.player_counts()
    if len(counts) == 1:
        matches = [
            (name, opp, cfg.env_kwargs())
            for name, opp in (
                ("random", RandomPolicy(seed=cfg.run.seed + 11)),
                ("greedy", GreedyPolicy(seed=cfg.run.seed + 12)),
            )
        ]
    else:  # a mixed-table run: greedy in every other seat, at each count
        matches = [
            (f"greedy_{c}p", GreedyPolicy(seed=cfg.run.seed + 12), {**cfg.env_kwargs(), "num_players": c})
            for c in counts
        ]
    for name, opp, kw in matches:
        with rollout_mode():  # batched forwards of up to 64 boards without autograd (same results)
            res = evaluate(policy, opp, cfg.run.eval_games, seed=10_000_000 + cfg.run.seed, env_kwargs=kw)
        row = {"update": trainer.updates, "env_steps": trainer.env_steps, "opponent": name, **res}
        _append_csv(out / "eval.csv", EVAL_FIELDS, row)
        if writer:
            _log_eval(writer, row)
        if bar:
            bar.write(
                f"update {trainer.updates}: vs {name} win rate {res['win_rate']:.2f} "
                f"(margin {res['mean_margin']:+.1f}, {res['games']} games)"
            )
    trainer.net.train(False)
