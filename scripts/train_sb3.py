#!/usr/bin/env python
"""MaskablePPO (sb3-contrib) against an opponent pool of baselines, through the Gymnasium env.

    python -m pip install -c constraints.txt -e ".[sb3]"
    python scripts/train_sb3.py --timesteps 50000 --envs 2 --opponents random,greedy:0.3,greedy --out runs/sb3

``--envs`` games run in ``SubprocVecEnv`` worker processes (``--vec dummy``: in this process), built
by SB3's ``make_vec_env`` over ``carc_env/Carcassonne-v0``; every opponent seat draws its player from
``--opponents`` at each reset (``random``, ``greedy``, ``greedy:EPS`` or an example-agent
checkpoint).  The policy reads the board with a convolutional features extractor
(carc_env.integrations.sb3); MaskablePPO takes the legal actions from the env's ``action_masks()``.
One line per rollout (timesteps, steps/s, training win rate); OUT/model.zip every
``--checkpoint-every`` steps and at the end (written beside it, then swapped in).  Running the same
command again resumes from OUT/model.zip up to ``--timesteps`` in total (``--no-resume`` starts
over).  At the end the model is evaluated against ``--eval-opponents`` with the example agents'
evaluation code (seat-swapped games, paired seeds; the model samples its masked policy) and
OUT/summary.json is written.  SB3 writes its TensorBoard logs to OUT/tb (``tensorboard --logdir
OUT/tb``: ``rollout/`` episode returns and lengths, ``train/`` losses, one run folder per
invocation).

The ``SubprocVecEnv`` workers start by re-importing the main module (Python's spawn and forkserver
start methods), so a script of yours that builds the envs must keep its work under
``if __name__ == "__main__":`` (this one does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import cli  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from agents.players import evaluate_against, make_player  # noqa: E402
from carc_env.core import ConfigError  # noqa: E402


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/sb3", help="output folder (model.zip, summary.json)")
    ap.add_argument("--timesteps", type=int, default=50_000, help="learner decisions in total (resumes count)")
    ap.add_argument("--envs", type=int, default=2, help="parallel games")
    ap.add_argument("--vec", choices=("subproc", "dummy"), default="subproc", help="SubprocVecEnv or DummyVecEnv")
    ap.add_argument("--opponents", default="random,greedy:0.3,greedy", help="the opponent pool, comma-separated")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys")
    ap.add_argument("--reward", default="win_loss", help="win_loss, score_diff or score_delta")
    ap.add_argument(
        "--action-features",
        action="store_true",
        help="add the one-ply action features to the observation (the extractor pools them)",
    )
    ap.add_argument("--n-steps", type=int, default=256, help="steps per env per rollout")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--ent-coef", type=float, default=0.01)
    ap.add_argument("--conv-channels", default="32,32", help="conv trunk widths, comma-separated")
    ap.add_argument("--features", type=int, default=256, help="features extractor output size")
    ap.add_argument("--checkpoint-every", type=int, default=10_000, help="timesteps between saves")
    ap.add_argument("--no-resume", action="store_true", help="ignore OUT/model.zip and start over")
    ap.add_argument("--eval-games", type=int, default=20, help="games per evaluation opponent (0: no evaluation)")
    ap.add_argument("--eval-opponents", default="random,greedy")
    ap.add_argument("--eval-seed", type=int, default=12345)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-threads", type=int, default=1, help="torch threads of the learner process")
    ap.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    args = ap.parse_args(argv)
    for name in ("timesteps", "envs", "n_steps", "batch_size", "epochs", "checkpoint_every", "torch_threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.eval_games < 0:
        ap.error("--eval-games must be >= 0")
    return args


def _save(model: Any, out: Path) -> Path:
    """OUT/model.zip, written beside it and then renamed over it (an interruption never leaves half a file)."""
    final = out / "model.zip"
    tmp = out / "model.tmp.zip"
    model.save(str(tmp))
    os.replace(tmp, final)
    return final


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    import torch

    torch.set_num_threads(args.torch_threads)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from carc_env.integrations.sb3 import load_policy, make_vec_env, policy_kwargs

    out = Path(args.out)
    env_kwargs: dict[str, Any] = {
        "num_players": args.players,
        "expansions": tuple(args.expansions.split(",")),
        "reward": args.reward,
    }
    if args.action_features:
        env_kwargs["action_features"] = True
    try:
        pool = [
            make_player(spec, env_kwargs, seed=args.seed + 100 + i) for i, spec in enumerate(args.opponents.split(","))
        ]
        channels = tuple(int(c) for c in args.conv_channels.split(","))
        vec_env = make_vec_env(
            args.envs, opponents=pool, seed=args.seed, subprocess=args.vec == "subproc", **env_kwargs
        )
    except (ConfigError, CheckpointError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    model_path = out / "model.zip"
    tb = str(out / "tb")
    if model_path.exists() and not args.no_resume:
        model = MaskablePPO.load(str(model_path), env=vec_env, device="cpu", tensorboard_log=tb)
        print(f"resumed from {model_path} at {model.num_timesteps} timesteps", file=sys.stderr)
    else:
        model = MaskablePPO(
            "MultiInputPolicy",
            vec_env,
            n_steps=args.n_steps,
            batch_size=args.batch_size,
            n_epochs=args.epochs,
            learning_rate=args.lr,
            ent_coef=args.ent_coef,
            policy_kwargs=policy_kwargs(channels, args.features),
            seed=args.seed,
            device="cpu",
            verbose=0,
            tensorboard_log=tb,
        )

    rows: list[dict[str, Any]] = []

    class Progress(BaseCallback):
        """One line per rollout; a checkpoint every --checkpoint-every timesteps."""

        def _on_training_start(self) -> None:
            self.t0 = time.perf_counter()
            self.start_steps = self.num_timesteps
            self.last_save = self.num_timesteps
            self.results: deque[float] = deque(maxlen=100)

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", ()):
                if "episode" in info:  # Monitor's end-of-game record
                    self.results.append(float(info["episode"]["r"]))
            if self.num_timesteps - self.last_save >= args.checkpoint_every:
                _save(self.model, out)
                self.last_save = self.num_timesteps
            return True

        def _on_rollout_end(self) -> None:
            wall = time.perf_counter() - self.t0
            done = self.num_timesteps - self.start_steps
            wins = sum(r > 0 for r in self.results)
            row = {
                "timesteps": self.num_timesteps,
                "seconds": round(wall, 2),
                "steps_per_s": round(done / wall, 1) if wall else None,
                "games": len(self.results),
                "train_win_rate": round(wins / len(self.results), 3) if self.results else None,
            }
            rows.append(row)
            print(f"{row['timesteps']:,} timesteps, {row['steps_per_s']} steps/s, training win rate "
                  f"{row['train_win_rate']} over the last {row['games']} games", file=sys.stderr, flush=True)  # fmt: skip

    remaining = args.timesteps - model.num_timesteps
    t0 = time.perf_counter()
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=Progress(), reset_num_timesteps=False, tb_log_name="sb3")
    wall = time.perf_counter() - t0
    _save(model, out)
    vec_env.close()
    summary: dict[str, Any] = {
        "timesteps": int(model.num_timesteps),
        "train_seconds_this_run": round(wall, 2),
        "envs": args.envs,
        "vec_env": type(vec_env).__name__,
        "opponents": args.opponents.split(","),
        "model": cli.relative_path(model_path),
        "env": {k: list(v) if isinstance(v, tuple) else v for k, v in env_kwargs.items()},
        "progress": rows,
    }
    if args.eval_games:
        policy = load_policy(model_path, env_kwargs=env_kwargs, name="sb3")
        summary.update(evaluate_against(policy, args.eval_opponents, args.eval_games, args.eval_seed, env_kwargs))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"done: {summary['timesteps']} timesteps, model {model_path}, summary {out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
