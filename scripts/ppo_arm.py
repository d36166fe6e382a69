#!/usr/bin/env python
"""The plain-PPO arm of the expert-iteration A/B: continue PPO from a network for a CPU budget.

    python scripts/ppo_arm.py --init pretrained:base-2p --cpu-seconds 1800 --out runs/ppo_arm
        [--config configs/default.yaml]

Builds the trainer of ``--config`` (imitation off: the network already plays) around the ``--init``
network (a checkpoint path or ``pretrained:NAME``, as ``expert.init`` in configs/expert.yaml), runs PPO
updates until this process has used ``--cpu-seconds`` of CPU (checked between updates), and writes
``OUT/checkpoint.pt`` after every update (a player for scripts/evaluate.py) and ``OUT/progress.csv``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import resource
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from agents.checkpoint import CheckpointError, save_checkpoint  # noqa: E402
from agents.config import TrainConfigError, load_config  # noqa: E402
from agents.expert import initial_net  # noqa: E402
from agents.policy import shapes_from_env  # noqa: E402
from agents.ppo import SelfPlayTrainer  # noqa: E402
from agents.train import checkpoint_payload  # noqa: E402


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main(argv: list[str] | None = None) -> int:
    import torch

    import carc_env

    ap = cli.Parser(prog="ppo_arm.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--init", required=True)
    ap.add_argument("--cpu-seconds", type=float, required=True)
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--out", default="runs/ppo_arm")
    args = ap.parse_args(argv)
    try:
        cfg = load_config(args.config)
        cfg.ppo = dataclasses.replace(cfg.ppo, imitation_updates=0)
        torch.set_num_threads(cfg.run.torch_threads)
        shapes = shapes_from_env(carc_env.raw_env(**cfg.env_kwargs()))
        net = initial_net(args.init, shapes, cfg.ppo.net)
    except (TrainConfigError, CheckpointError) as exc:
        return cli.fail(ap.prog, exc)
    os.makedirs(args.out, exist_ok=True)
    trainer = SelfPlayTrainer(cfg.env_kwargs(), cfg.ppo, seed=cfg.run.seed, net=net)
    c0 = _cpu()  # the budget counts the updates, as the expert run's cpu_seconds counts its iterations
    path = os.path.join(args.out, "progress.csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["update", "cpu_seconds", "train_win_rate_vs_greedy", "policy_loss", "value_loss"])
        while _cpu() - c0 < args.cpu_seconds:
            stats = trainer.update(trainer.collect())
            stats.update(trainer.pop_episode_stats())
            used = round(_cpu() - c0, 1)
            w.writerow([trainer.updates, used, stats.get("train_win_rate_vs_greedy", ""),
                        stats.get("policy_loss"), stats.get("value_loss")])  # fmt: skip
            fh.flush()
            print(f"update {trainer.updates}: {used} CPU-s", flush=True)
            save_checkpoint(os.path.join(args.out, "checkpoint.pt"), checkpoint_payload(trainer, cfg, _cpu() - c0))
    print(f"{trainer.updates} updates in {_cpu() - c0:.0f} CPU-s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
