#!/usr/bin/env python
"""Benchmark: random legal play through the engine (and the env, when available).

Prints one JSON line (with ``--json``) or a readable table.  Measured on one
core, in this process, with uniformly random legal actions:

* ``engine_games_per_s`` / ``engine_turns_per_s``: whole games through the core
  (``Game.apply`` with ``legal_tile_placements`` / ``legal_follower_spots``),
  one turn = one tile placement;
* ``mean_legal_placements``: legal (cell, rotation) pairs per tile decision;
  ``mean_distinct_placements`` counts rotations that give the same geometry
  (symmetric tiles) once; ``max_legal_placements`` is the largest seen;
* ``env_steps_per_s`` / ``vector_env_steps_per_s``: AEC steps through
  ``carc_env.env()`` with all wrappers and full observations, and steps of the
  batched vector env (per game-step), when the env package is present.

Speed is measured here and only here (never in a timed test).  Bad arguments
(``--players 6``, ``--expansions foo``, ``--seconds -1``, ``--seed -1``) end the
script with one line naming the argument and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from carc_env.core import Game, GameConfig, Pass, PlaceFollower, PlaceTile  # noqa: E402


def play_random(config: GameConfig, seed: int, stats: dict) -> Game:
    game = Game(config, seed=seed)
    rng = np.random.default_rng(seed + 1_000_003)
    while not game.over:
        if game.phase == "tile":
            legal = game.legal_tile_placements()
            n = len(legal)
            stats["decisions"] += 1
            stats["legal"] += n
            stats["distinct"] += game.count_legal_placements(distinct=True)
            stats["max"] = max(stats["max"], n)
            x, y, r = legal[rng.integers(n)]
            game.apply(PlaceTile(int(x), int(y), int(r)))
            stats["turns"] += 1
        elif game.phase == "follower":
            spots = game.legal_follower_spots()
            c = int(rng.integers(len(spots) + 1))
            game.apply(Pass() if c == len(spots) else PlaceFollower(spots[c]))
        else:  # expansion decisions: uniform over the legal actions
            acts = game.legal_actions()
            game.apply(acts[int(rng.integers(len(acts)))])
    return game


def bench_engine(config: GameConfig, seconds: float, seed: int) -> dict:
    stats = {"decisions": 0, "legal": 0, "distinct": 0, "max": 0, "turns": 0}
    play_random(config, seed, stats)  # warm-up (tables, caches)
    stats = dict.fromkeys(stats, 0)
    games = 0
    t0 = time.perf_counter()
    while True:
        play_random(config, seed + games, stats)
        games += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
    return {
        "engine_games_per_s": round(games / elapsed, 2),
        "engine_turns_per_s": round(stats["turns"] / elapsed, 1),
        "engine_games": games,
        "mean_legal_placements": round(stats["legal"] / stats["decisions"], 3),
        "mean_distinct_placements": round(stats["distinct"] / stats["decisions"], 3),
        "max_legal_placements": stats["max"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="bench.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    ap.add_argument("--players", type=cli.players, default=2, help="2 to 5")
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys ('base' is added)")
    ap.add_argument("--seconds", type=cli.positive_float, default=10.0, help="time per measurement (> 0)")
    ap.add_argument("--seed", type=cli.seed, default=0, help=">= 0")
    ap.add_argument("--num-envs", type=cli.int_range(1), default=16, help="games in the vector env measurement")
    ap.add_argument("--no-env", action="store_true", help="measure the engine only")
    args = ap.parse_args(argv)
    try:
        keys = cli.expansions(args.players)(args.expansions)
    except argparse.ArgumentTypeError as exc:
        ap.error(f"argument --expansions: {exc}")
    config = GameConfig(num_players=args.players, expansions=keys)
    result: dict = {
        "config": config.to_dict(),
        "seconds_per_measurement": args.seconds,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
    }
    result.update(bench_engine(config, args.seconds, args.seed))
    if not args.no_env:
        try:
            from carc_env.env import bench as env_bench
        except ImportError as exc:  # the env layer is optional for an engine-only checkout
            result["env_error"] = f"env benchmark unavailable: {exc}"
        else:
            kw = {"num_players": args.players, "expansions": keys}
            result["env_steps_per_s"] = round(env_bench.env_steps_per_s(seconds=args.seconds, seed=args.seed, **kw), 1)
            result["vector_env_steps_per_s"] = round(
                env_bench.vector_env_steps_per_s(num_envs=args.num_envs, seconds=args.seconds, seed=args.seed, **kw), 1
            )
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:28s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
