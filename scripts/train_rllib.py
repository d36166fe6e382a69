#!/usr/bin/env python
"""Self-play PPO with Ray RLlib (new API stack), on a local Ray or an existing Ray cluster.

    python -m pip install -c constraints.txt -e ".[rllib]"
    python scripts/train_rllib.py --env-runners 2 --iterations 20 --out runs/rllib        # local Ray
    python scripts/train_rllib.py --address HEAD_IP:6379 --env-runners 16 --out runs/rllib  # a cluster

Every agent seat plays the shared module "main" (carc_env.integrations.rllib: a turn-based
MultiAgentEnv, a masking convolutional RLModule); ``--frozen-opponent-every K`` makes one seat per
game play "main" and the others a copy of it refreshed every K iterations.  One line per iteration
(env steps, throughput, learning vs sampling time, episode length); an algorithm checkpoint in
OUT/checkpoint every ``--checkpoint-every`` iterations and at the end (written next to it, then
swapped in, so an interruption never leaves a broken one).  Running the same command again resumes
from OUT/checkpoint up to ``--iterations`` in total (``--no-resume`` starts over).  At the end the
checkpoint is evaluated against ``--eval-opponents`` with the example agents' evaluation code
(seat-swapped games with paired seeds) and OUT/summary.json is written (``--json`` prints it).
TensorBoard logs go to OUT/tb (``tensorboard --logdir OUT/tb``): per iteration the throughput and
episode numbers (``charts/``) and every scalar RLlib's learner reports for "main" (``losses/``).
``--out`` may be relative (to the current folder); RLlib's own empty ``~/ray_results/<date>``
folder is removed at the end.

Repeatability: ``--seed S`` seeds RLlib (torch, the env runners' games, the frozen opponent's seat,
which rotates with the episode count of each runner): two runs with the same seed, the same
``--env-runners``, ``--envs-per-runner``, ``--torch-threads`` and the same machine and versions give the
same games and weights (tested with driver sampling).  Other runner counts play other games;
several torch threads may sum floats in another order; without ``--seed`` every run differs.

A cluster (docs/rllib.md): ``ray start --head`` on one machine, ``ray start --address=HEAD_IP:6379``
on the others, the same carc_env checkout installed with the [rllib] extra on all of them; then
``--address HEAD_IP:6379`` (or ``auto`` on a cluster machine) here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import cli  # noqa: E402
from agents.players import evaluate_against  # noqa: E402
from carc_env.core import ConfigError  # noqa: E402


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/rllib", help="output folder (checkpoint, summary.json)")
    ap.add_argument("--iterations", type=int, default=20, help="training iterations in total (resumes count)")
    ap.add_argument("--env-runners", type=int, default=2, help="EnvRunner actors sampling in parallel (0: driver)")
    ap.add_argument("--envs-per-runner", type=int, default=1, help="games each EnvRunner steps as a batch")
    ap.add_argument("--address", default=None, help="an existing Ray cluster (HOST:PORT or 'auto'); default: "
                    "start a local Ray on this machine")  # fmt: skip
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: this machine's, "
                    "at least --env-runners)")  # fmt: skip
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys")
    ap.add_argument("--reward", default="win_loss", help="win_loss, score_diff or score_delta")
    ap.add_argument(
        "--action-features",
        action="store_true",
        help="add the one-ply action features to the observation (the module scores them)",
    )
    ap.add_argument("--train-batch-size", type=int, default=4000, help="env steps per iteration")
    ap.add_argument("--minibatch-size", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=3, help="passes over each batch")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--entropy", type=float, default=0.01, help="entropy bonus coefficient")
    ap.add_argument("--conv-channels", default="32,32", help="conv trunk widths, comma-separated")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument(
        "--frozen-opponent-every",
        type=int,
        default=None,
        metavar="K",
        help="play a frozen copy of main, refreshed every K iterations (default: pure self-play)",
    )
    ap.add_argument("--checkpoint-every", type=int, default=5)
    ap.add_argument("--no-resume", action="store_true", help="ignore OUT/checkpoint and start over")
    ap.add_argument("--eval-games", type=int, default=20, help="games per evaluation opponent (0: no evaluation)")
    ap.add_argument("--eval-opponents", default="random,greedy")
    ap.add_argument("--eval-seed", type=int, default=12345)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch threads of this process (the learner); 1 is fastest on a small busy machine",
    )
    ap.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    args = ap.parse_args(argv)
    for name in ("iterations", "checkpoint_every", "torch_threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.env_runners < 0 or args.eval_games < 0:
        ap.error("--env-runners and --eval-games must be >= 0")
    return args


class _TensorBoard:
    """OUT/tb: one point per iteration (``charts/`` the progress row, ``losses/`` RLlib's learner scalars)."""

    def __init__(self, folder: Path) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(folder))

    def log(self, row: dict[str, Any], result: dict[str, Any], module: str) -> None:
        it = int(row["iteration"])
        for key, value in row.items():
            if key != "iteration" and isinstance(value, (int, float)) and value == value:  # not NaN
                self.writer.add_scalar(f"charts/{key}", float(value), it)
        ret = result.get("env_runners", {}).get("episode_return_mean")
        if isinstance(ret, (int, float)):
            self.writer.add_scalar("charts/episode_return_mean", float(ret), it)
        for key, value in result.get("learners", {}).get(module, {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.writer.add_scalar(f"losses/{key}", float(value), it)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


def _tidy_ray_results(logdir: str | None, root: Path, root_existed: bool) -> None:
    """Remove the empty ``~/ray_results/<date>`` folder RLlib's Algorithm makes for itself (Ray 2.60 writes
    nothing there), and ``~/ray_results`` too if this run created it and it is empty now.  ``rmdir`` removes
    only empty folders: another run's files are never touched."""
    folders = [Path(logdir)] if logdir and Path(logdir).parent.resolve() == root.resolve() else []
    if not root_existed:
        folders.append(root)
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty (or already gone): leave it
            pass


def _save(algo: Any, out: Path) -> Path:
    """Write the algorithm checkpoint to OUT/checkpoint atomically (write beside it, then swap)."""
    final, tmp, old = out / "checkpoint", out / "checkpoint.tmp", out / "checkpoint.old"
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp))
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def _unreachable(address: str, timeout: float = 5.0) -> str | None:
    """Why nothing can answer at ``HOST:PORT`` (None when a TCP connection opens, or for ``auto``).

    Checked before ``ray.init``, which waits for its own long timeout on an address where no
    cluster runs.
    """
    if address == "auto":
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"--address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379) or 'auto'"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        return f"nothing answers at {address} ({exc.strerror or exc})"
    return None


def _init_ray(args: argparse.Namespace) -> None:
    import ray

    if args.address:
        why = _unreachable(args.address)
        if why:
            raise SystemExit(f"error: cannot join the Ray cluster: {why}. Is `ray start --head` running there?")
        try:
            ray.init(address=args.address, log_to_driver=False)
        except (ConnectionError, RuntimeError) as exc:
            raise SystemExit(
                f"error: cannot join the Ray cluster at {args.address}: {exc}\n"
                "Is `ray start --head` running there?  With token authentication (the default of `ray start` "
                "since Ray 2.59) this machine needs the head's token: copy the head's ~/.ray/auth_token here or set "
                "RAY_AUTH_TOKEN; with a cluster started with RAY_AUTH_MODE=disabled, set RAY_AUTH_MODE=disabled here "
                "too (docs/rllib.md)."
            ) from None
        return
    # workers of a local Ray inherit this environment: let them import carc_env from this checkout too
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    cpus = args.num_cpus or max(os.cpu_count() or 1, args.env_runners)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    # Ray reads these when it is imported
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if args.address:
        # `ray start --head` (Ray 2.60) turns token authentication on; a driver must ask for it too
        os.environ.setdefault("RAY_AUTH_MODE", "token")
    import torch

    torch.set_num_threads(args.torch_threads)
    from carc_env.integrations.rllib import MAIN, load_policy, ppo_config

    out = Path(args.out).resolve()  # pyarrow (RLlib's checkpoints) refuses relative paths
    env_kwargs = {"num_players": args.players, "expansions": tuple(args.expansions.split(",")), "reward": args.reward}
    if args.action_features:
        env_kwargs["action_features"] = True
    try:
        channels = tuple(int(c) for c in args.conv_channels.split(","))
        config = ppo_config(
            env_kwargs,
            env_runners=args.env_runners,
            envs_per_runner=args.envs_per_runner,
            frozen_opponent_every=args.frozen_opponent_every,
            model_config={"conv_channels": channels, "hidden": args.hidden},
            train_batch_size=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.epochs,
            lr=args.lr,
            entropy_coeff=args.entropy,
            seed=args.seed,
        )
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "checkpoint"
    _init_ray(args)
    import ray
    from ray.train.constants import DEFAULT_STORAGE_PATH

    ray_results = Path(DEFAULT_STORAGE_PATH)
    ray_results_existed = ray_results.exists()
    algo = None
    tb = _TensorBoard(out / "tb")
    try:
        t0 = time.perf_counter()
        algo = config.build_algo()
        if ckpt.exists() and not args.no_resume:
            algo.restore_from_path(str(ckpt.resolve()))
            print(f"resumed from {ckpt} at iteration {algo.iteration}", file=sys.stderr)
        print(f"Ray and {args.env_runners} EnvRunner(s) ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        # RLlib's own timers are smoothed over many iterations; time the learner's update of each iteration
        # here instead (the rest of an iteration is sampling, weight sync and metrics)
        learn_time = [0.0]
        update = algo.learner_group.update

        def timed_update(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return update(*a, **kw)
            finally:
                learn_time[0] += time.perf_counter() - t

        algo.learner_group.update = timed_update
        steps_total = 0
        wall_total = 0.0
        rows = []
        result: dict[str, Any] = {}
        while algo.iteration < args.iterations:
            learn_time[0] = 0.0
            t = time.perf_counter()
            result = algo.train()
            wall = time.perf_counter() - t
            er = result.get("env_runners", {})
            steps = int(er.get("num_env_steps_sampled", 0))
            steps_total += steps
            wall_total += wall
            row = {
                "iteration": algo.iteration,
                "env_steps_lifetime": int(result.get("num_env_steps_sampled_lifetime", 0)),
                "env_steps": steps,
                "seconds": round(wall, 3),
                "env_steps_per_s": round(steps / wall, 1) if wall else None,
                "learning_s": round(learn_time[0], 3),
                "sampling_s": round(wall - learn_time[0], 3),  # sampling, weight sync, metrics
                "episodes": int(er.get("num_episodes", 0)),
                "episode_len_mean": float(er.get("episode_len_mean", float("nan"))),
            }
            rows.append(row)
            tb.log(row, result, MAIN)
            print(
                f"iter {row['iteration']}: {row['env_steps_lifetime']:,} env steps (+{steps} in {wall:.1f} s, "
                f"{row['env_steps_per_s']} steps/s; learning {row['learning_s']:.1f} s, sampling and the rest "
                f"{row['sampling_s']:.1f} s), {row['episodes']} games, mean length {row['episode_len_mean']:.0f}",
                file=sys.stderr,
                flush=True,
            )
            if algo.iteration % args.checkpoint_every == 0 or algo.iteration >= args.iterations:
                _save(algo, out)
        if not rows and not ckpt.exists():
            _save(algo, out)
        summary: dict[str, Any] = {
            "iterations": algo.iteration,
            "env_steps_lifetime": int(result.get("num_env_steps_sampled_lifetime", 0)) if result else None,
            "env_steps_this_run": steps_total,
            "train_seconds_this_run": round(wall_total, 2),
            "env_steps_per_s": round(steps_total / wall_total, 1) if wall_total else None,
            "env_runners": args.env_runners,
            "envs_per_runner": args.envs_per_runner,
            "address": args.address or "local",
            "checkpoint": cli.relative_path(ckpt),
            "env": {k: list(v) if isinstance(v, tuple) else v for k, v in env_kwargs.items()},
            "progress": rows,
        }
        algo.stop()
    finally:
        tb.close()
        ray.shutdown()
        _tidy_ray_results(algo.logdir if algo is not None else None, ray_results, ray_results_existed)

    if args.eval_games:
        policy = load_policy(ckpt, env_kwargs=env_kwargs, name="rllib")
        summary.update(evaluate_against(policy, args.eval_opponents, args.eval_games, args.eval_seed, env_kwargs))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"done: {summary['iterations']} iterations, checkpoint {ckpt}, summary {out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
