#!/usr/bin/env python
"""Train a masked-PPO agent with self-play.

    python scripts/train.py --config configs/default.yaml --out runs/default

Shows a progress bar, writes OUT/progress.csv, OUT/eval.csv and TensorBoard
logs (OUT/tb), and an atomic checkpoint (OUT/checkpoint.pt).  Run the same
command again after an interruption (even a kill) to resume exactly where the
last checkpoint left off (the logs are cut back to it); ``--no-resume`` starts
over, old logs and TensorBoard events included.

Everything is checked before training starts: a bad config key or value, an
empty or unreadable config file, an unusable ``--out``, ``--updates`` or
``--cpu-budget`` ends the script with one line naming the problem and exit
status 2.  ``--cpu-budget SECONDS`` stops the run by itself at the last update
inside that many CPU seconds (``run.cpu_budget``; the command prints why it
stopped); the same command resumed stops again at once.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents.cli import Parser, fail, int_range, non_negative_float, usable_dir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="train.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/default.yaml", help="training config (YAML)")
    ap.add_argument("--out", default="runs/default", help="output folder (created if missing)")
    ap.add_argument("--no-resume", action="store_true", help="ignore an existing checkpoint and start over")
    ap.add_argument("--updates", type=int_range(1), default=None, help="override run.total_updates (>= 1)")
    ap.add_argument(
        "--cpu-budget",
        type=non_negative_float,
        default=None,
        metavar="SECONDS",
        help="override run.cpu_budget: stop at the last update inside this many CPU seconds of the run (0: none)",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)

    from agents.checkpoint import CheckpointError
    from agents.config import TrainConfigError, load_config, validate

    try:
        cfg = load_config(args.config)
        if args.updates is not None:
            cfg.run.total_updates = args.updates
        if args.cpu_budget is not None:
            cfg.run.cpu_budget = args.cpu_budget
        validate(cfg)
    except TrainConfigError as exc:
        return fail(ap.prog, exc)
    problem = usable_dir(args.out)
    if problem:
        return fail(ap.prog, problem)

    from agents.train import train

    try:
        trainer = train(cfg, args.out, resume=not args.no_resume, progress=not args.quiet)
    except (TrainConfigError, CheckpointError) as exc:
        return fail(ap.prog, exc)
    if trainer.stop_reason:  # run.cpu_budget stopped it before run.total_updates
        print(trainer.stop_reason)
    print(f"done: {trainer.updates} updates, {trainer.env_steps} env steps; checkpoint {args.out}/checkpoint.pt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
