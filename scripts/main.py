#!/usr/bin/env python
"""The main job: train the default PPO agent, evaluate it, and draw a game it played.

    python scripts/main.py [--config configs/default.yaml] [--out runs/default]

1. trains the config (resuming if OUT/checkpoint.pt exists for the same config);
2. evaluates the agent against the random and greedy baselines over
   ``run.final_eval_games`` seat-swapped games each;
3. plays one game against the greedy baseline and writes its record
   (OUT/game.json), a picture of the final board (OUT/game.png) and an
   animated GIF (OUT/game.gif);
4. writes OUT/summary.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from agents.checkpoint import CheckpointError, load_checkpoint, net_from_checkpoint  # noqa: E402
from agents.config import TrainConfigError, load_config  # noqa: E402
from agents.evaluate import evaluate, play_game  # noqa: E402
from agents.policy import PPOPolicy  # noqa: E402
from agents.ppo import rollout_mode  # noqa: E402
from agents.train import train  # noqa: E402
from carc_env.baselines import GreedyPolicy, RandomPolicy  # noqa: E402
from carc_env.core.record import save_record, to_record  # noqa: E402
from carc_env.render import frames_from_record, render_image, save_gif, save_png  # noqa: E402


def machine_info(threads: int) -> dict:
    """What the figures were measured on: CPU model and count, accelerator (none is used), torch threads."""
    import torch

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), model)
    except OSError:
        pass
    return {
        "cpu": model,
        "arch": platform.machine(),
        "logical_cpus": os.cpu_count(),
        "torch_threads": threads,
        "gpu": "none used (training and evaluation run on the CPU)",
        "cuda_available": bool(torch.cuda.is_available()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="main.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--out", default="runs/default")
    ap.add_argument("--eval-games", type=cli.int_range(1), default=None, help="override run.final_eval_games (>= 1)")
    args = ap.parse_args(argv)
    try:  # everything is checked before training starts
        cfg = load_config(args.config)
    except TrainConfigError as exc:
        return cli.fail(ap.prog, str(exc))
    problem = cli.usable_dir(args.out)
    if problem:
        return cli.fail(ap.prog, problem)
    load_start = os.getloadavg()
    try:
        t0 = time.time()
        trainer = train(cfg, args.out)
        train_s = time.time() - t0
        data = load_checkpoint(os.path.join(args.out, "checkpoint.pt"))
        net = net_from_checkpoint(data)
    except (TrainConfigError, CheckpointError) as exc:
        return cli.fail(ap.prog, str(exc))
    env_kwargs = cfg.env_kwargs()
    agent = PPOPolicy(net, name="ppo")
    games = args.eval_games or cfg.run.final_eval_games
    summary: dict = {
        "config": cli.relative_path(args.config),  # (a results file names no folder of this machine)
        "updates": trainer.updates,
        "env_steps": trainer.env_steps,
        "train_seconds_total": round(float(data.get("train_seconds", 0.0)), 1),
        "wall_seconds_this_call": round(train_s, 1),
    }
    summary["env_steps_per_s"] = round(trainer.env_steps / max(summary["train_seconds_total"], 1e-9), 1)
    summary["learner_decisions"] = trainer.learner_steps
    summary["learner_decisions_per_s"] = round(trainer.learner_steps / max(summary["train_seconds_total"], 1e-9), 1)
    summary["cpu_seconds_this_call_training"] = cpu_seconds()
    summary["machine"] = machine_info(cfg.run.torch_threads)
    summary["load_average_1m_at_start_and_after_training"] = [round(load_start[0], 2), round(os.getloadavg()[0], 2)]
    for name, opp in (("random", RandomPolicy(seed=777)), ("greedy", GreedyPolicy(seed=778))):
        print(f"evaluating against {name} over {games} seat-swapped games ...", flush=True)
        with rollout_mode():  # the agent's batched forwards without autograd: the same results, faster
            res = evaluate(agent, opp, games, seed=2024, env_kwargs=env_kwargs)
        summary[f"win_rate_vs_{name}"] = res["win_rate"]
        summary[f"vs_{name}"] = res
        lo, hi = res["win_rate_ci95"]
        print(f"  win rate {res['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], mean margin {res['mean_margin']:+.1f}")
    with rollout_mode():
        env = play_game(env_kwargs, [agent, GreedyPolicy(seed=5)], seed=99, keep_env=True)
    game = env.game
    record = to_record(game)
    save_record(game, os.path.join(args.out, "game.json"))
    save_png(render_image(game, tile_px=48), os.path.join(args.out, "game.png"))
    save_gif(frames_from_record(record, every=2, tile_px=32), os.path.join(args.out, "game.gif"))
    summary["example_game"] = {
        "agent_seat": 0,
        "opponent": "greedy",
        "scores": list(game.scores),
        "record": "game.json",
        "png": "game.png",
        "gif": "game.gif",
    }
    summary["cpu_seconds_this_call_total"] = cpu_seconds()
    summary["wall_seconds_this_call_total"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if not k.startswith("vs_")}, indent=1))
    return 0


def cpu_seconds() -> float:
    """CPU seconds of this process and of its ended children (the rollout shards' helper processes,
    which ``train`` ends before it returns)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, 1)


if __name__ == "__main__":
    raise SystemExit(main())
