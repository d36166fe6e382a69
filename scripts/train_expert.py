#!/usr/bin/env python
"""Expert iteration: train a network on the visit counts of search guided by itself, or of a fixed search
teacher (expert.teacher: an mcts: or ppo-mcts: spec), and on the games' outcomes (agents/expert.py).

    python scripts/train_expert.py [--config configs/expert.yaml] [--out runs/expert] [--no-resume]
        [--max-iterations N]

Resumes from OUT/checkpoint.pt when it exists (same config; only the run's length and logging may
change).  The checkpoint is a player for scripts/evaluate.py (``OUT/checkpoint.pt``, and
``ppo-mcts:OUT/checkpoint.pt:N`` for search on it).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from agents.config import TrainConfigError  # noqa: E402
from agents.expert import load_expert_config, train_expert  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="train_expert.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/expert.yaml")
    ap.add_argument("--out", default="runs/expert")
    ap.add_argument("--no-resume", action="store_true", help="start over even if OUT/checkpoint.pt exists")
    ap.add_argument("--max-iterations", type=cli.int_range(1), default=None, help="stop after N more iterations")
    args = ap.parse_args(argv)
    try:
        cfg = load_expert_config(args.config)
    except TrainConfigError as exc:
        return cli.fail(ap.prog, exc)
    problem = cli.usable_dir(args.out)
    if problem:
        return cli.fail(ap.prog, problem)
    try:
        trainer = train_expert(cfg, args.out, resume=not args.no_resume, max_iterations=args.max_iterations)
    except (TrainConfigError, CheckpointError) as exc:
        return cli.fail(ap.prog, exc)
    print(f"{trainer.iterations} iterations, {trainer.games} games, {trainer.samples} searched decisions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
