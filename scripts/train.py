#!/usr/bin/env python
"""Train a masked-PPO agent with self-play.

    python scripts/train.py --config configs/default.yaml --out runs/default

Shows a progress bar, writes OUT/progress.csv, OUT/eval.csv and TensorBoard
logs (OUT/tb), and an atomic checkpoint (OUT/checkpoint.pt).  Run the same
command again after an interruption to resume exactly where it stopped;
``--no-resume`` starts over.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents.checkpoint import CheckpointError  # noqa: E402
from agents.config import TrainConfigError, load_config  # noqa: E402
from agents.train import train  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--out", default="runs/default")
    ap.add_argument("--no-resume", action="store_true", help="ignore an existing checkpoint and start over")
    ap.add_argument("--updates", type=int, default=None, help="override run.total_updates")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        cfg = load_config(args.config)
        if args.updates is not None:
            cfg.run.total_updates = args.updates
        trainer = train(cfg, args.out, resume=not args.no_resume, progress=not args.quiet)
    except (TrainConfigError, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"done: {trainer.updates} updates, {trainer.env_steps} env steps; checkpoint {args.out}/checkpoint.pt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
