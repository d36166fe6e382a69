"""The training loop: PPO updates, logs, periodic evaluation, atomic checkpoints, resume.

Output directory layout::

    OUT/checkpoint.pt     latest state (atomic); resume continues from here exactly
    OUT/best.pt           not kept: the latest checkpoint is the agent
    OUT/progress.csv      one row per update (appended on resume, never rewritten)
    OUT/eval.csv          one row per periodic evaluation
    OUT/tb/               TensorBoard scalars
    OUT/config.yaml       the config of the run

Resuming with the same config continues the same run (the run section's
length, evaluation and checkpoint settings may change, e.g. to extend a run):
the network,
optimiser, snapshots, random generators and the games in progress are all in
the checkpoint, so an interrupted run ends where an uninterrupted one would.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import torch
import yaml

from carc_env.baselines import GreedyPolicy, RandomPolicy

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .evaluate import evaluate
from .network import NetShapes
from .policy import PPOPolicy
from .ppo import SelfPlayTrainer

PROGRESS_FIELDS = [
    "update", "env_steps", "learner_steps", "episodes", "seconds", "env_steps_per_s", "policy_loss", "value_loss",
    "entropy", "approx_kl", "clip_frac", "mean_reward", "train_win_rate", "train_margin",
    "train_win_rate_vs_random", "train_win_rate_vs_greedy",
]
EVAL_FIELDS = ["update", "env_steps", "opponent", "games", "win_rate", "ties", "mean_margin"]


def checkpoint_payload(trainer: SelfPlayTrainer, cfg: TrainConfig, seconds: float) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "config": cfg.to_dict(),
        "shapes": asdict(trainer.shapes),
        "net_config": asdict(trainer.cfg.net),
        "trainer": trainer.state_dict(),
        "train_seconds": seconds,
    }


def _append_csv(path: Path, fields: list[str], row: dict[str, Any]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def train(
    cfg: TrainConfig,
    out: str | Path,
    resume: bool = True,
    progress: bool = True,
    max_updates: int | None = None,
) -> SelfPlayTrainer:
    """Train until ``cfg.run.total_updates`` (or ``max_updates`` more in this call)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.run.torch_threads)
    trainer = SelfPlayTrainer(cfg.env_kwargs(), cfg.ppo, seed=cfg.run.seed)
    ckpt = out / "checkpoint.pt"
    seconds = 0.0
    if resume and ckpt.exists():
        data = load_checkpoint(ckpt)
        old, new = data["config"], cfg.to_dict()
        if old["game"] != new["game"] or old["ppo"] != new["ppo"] or old["run"]["seed"] != new["run"]["seed"]:
            raise CheckpointError(
                f"{ckpt} belongs to a run with another config (game, ppo or seed differ); use another --out, "
                "or --no-resume to start over (only the run's length and logging may change on resume)"
            )
        if NetShapes(**{**data["shapes"], "board_high": tuple(data["shapes"]["board_high"])}) != trainer.shapes:
            raise CheckpointError(f"{ckpt}: network shapes do not match the env")
        trainer.load_state_dict(data["trainer"])
        seconds = float(data.get("train_seconds", 0.0))
        if progress:
            print(f"resuming {out} at update {trainer.updates} ({trainer.env_steps} env steps)")
    elif not resume:
        for name in ("progress.csv", "eval.csv", "checkpoint.pt"):
            (out / name).unlink(missing_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    writer = None
    try:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(out / "tb"), purge_step=trainer.updates or None)
    except ImportError:  # pragma: no cover - tensorboard is in the [train] extra
        pass
    goal = cfg.run.total_updates if max_updates is None else min(cfg.run.total_updates, trainer.updates + max_updates)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.run.total_updates, initial=trainer.updates, desc="train", unit="upd")
    try:
        while trainer.updates < goal:
            t0 = time.perf_counter()
            steps0 = trainer.env_steps
            buf = trainer.collect()
            stats = trainer.update(buf)
            dt = time.perf_counter() - t0
            seconds += dt
            stats.update(trainer.pop_episode_stats())
            row = {"update": trainer.updates, "env_steps": trainer.env_steps, "learner_steps": trainer.learner_steps,
                   "episodes": trainer.episodes, "seconds": round(seconds, 2),
                   "env_steps_per_s": round((trainer.env_steps - steps0) / dt, 1), **stats}
            _append_csv(out / "progress.csv", PROGRESS_FIELDS, row)
            if writer:
                for k, v in row.items():
                    if k != "update" and isinstance(v, (int, float)):
                        writer.add_scalar(f"train/{k}", v, trainer.updates)
            if cfg.run.eval_every and trainer.updates % cfg.run.eval_every == 0:
                _periodic_eval(trainer, cfg, out, writer, bar)
            if trainer.updates % cfg.run.checkpoint_every == 0 or trainer.updates == goal:
                save_checkpoint(ckpt, checkpoint_payload(trainer, cfg, seconds))
            if bar:
                bar.update(1)
                bar.set_postfix(win=f"{stats.get('train_win_rate', float('nan')):.2f}",
                                sps=f"{row['env_steps_per_s']:.0f}")
    finally:
        if bar:
            bar.close()
        if writer:
            writer.close()
    return trainer


def _periodic_eval(trainer: SelfPlayTrainer, cfg: TrainConfig, out: Path, writer: Any, bar: Any) -> None:
    policy = PPOPolicy(trainer.net, name="ppo")
    for name, opp in (("random", RandomPolicy(seed=cfg.run.seed + 11)), ("greedy", GreedyPolicy(seed=cfg.run.seed + 12))):
        res = evaluate(policy, opp, cfg.run.eval_games, seed=10_000_000 + cfg.run.seed, env_kwargs=cfg.env_kwargs())
        _append_csv(out / "eval.csv", EVAL_FIELDS, {"update": trainer.updates, "env_steps": trainer.env_steps,
                                                    "opponent": name, **res})
        if writer:
            writer.add_scalar(f"eval/win_rate_vs_{name}", res["win_rate"], trainer.updates)
            writer.add_scalar(f"eval/margin_vs_{name}", res["mean_margin"], trainer.updates)
        if bar:
            bar.write(f"update {trainer.updates}: vs {name} win rate {res['win_rate']:.2f} "
                      f"(margin {res['mean_margin']:+.1f}, {res['games']} games)")
    trainer.net.train(False)
