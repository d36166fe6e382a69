#!/usr/bin/env python
"""Two checkouts side by side: the same seeded games through each tree's engine, CPU seconds pair by pair.

``scripts/bench.py`` measures rates inside one process, so it cannot put two
versions of the package side by side.  This script runs a fixed amount of work
(``--games`` random legal games, the same seeds, ``bench.play_random`` of each
tree) in a fresh process for each tree, in turn: A B, B A, A B, ... for
``--pairs`` pairs, so a change in the machine's load hits both alike.  Each
process reports the CPU seconds of its game loop only (imports, the warm-up
game and the compiled engine's compile or cache load are outside it); the
table gives each tree's median and the median of the pair-by-pair ratios
``new / old`` (above 1: the new tree is slower); ``ratio_per_work_median`` divides
each side by its work (turns played; compiled: decisions) first, for trees
whose rules play other games from the same seeds (``same_work`` false).

    python scripts/bench_trees.py OLD_TREE NEW_TREE --expansions base --games 300 --pairs 7
    python scripts/bench_trees.py OLD_TREE NEW_TREE --engine numba --games 20000

``--engine numba`` plays the games with the compiled engine (``FastBatch.play_random``).
Both trees must have ``scripts/bench.py`` with ``play_random`` (every tree since #17 has).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
tree, engine, players, expansions, games, seed = sys.argv[1:7]
sys.path[:0] = [tree, os.path.join(tree, "scripts")]
import bench
import carc_env
assert os.path.realpath(carc_env.__file__).startswith(os.path.realpath(tree)), carc_env.__file__
from carc_env.core import GameConfig
players, games, seed = int(players), int(games), int(seed)
keys = bench.cli.expansions(players)(expansions)
stats = {"decisions": 0, "legal": 0, "distinct": 0, "max": 0, "turns": 0}
if engine == "python":
    config = GameConfig(num_players=players, expansions=keys)
    bench.play_random(config, seed + 10**6, dict(stats))  # warm-up: tables, caches
    c0 = time.process_time()
    for s in range(seed, seed + games):
        bench.play_random(config, s, stats)
    cpu = time.process_time() - c0
    work = stats["turns"]
else:
    from carc_env.env.options import EnvOptions
    from carc_env.fast.engine import FastBatch
    fb = FastBatch(EnvOptions.from_kwargs(num_players=players, expansions=keys), 1)
    fb.play_random([seed + 10**6])  # compile or load the kernels
    c0 = time.process_time()
    work = 0
    for first in range(seed, seed + games, 50):
        out = fb.play_random(range(first, min(first + 50, seed + games)), rng_seed=first)
        work += out["decisions"]
    cpu = time.process_time() - c0
print(json.dumps({"cpu": cpu, "work": work}))
"""


def run_once(tree: str, args: argparse.Namespace) -> dict:
    cmd = ["nice", "-n", str(args.nice), sys.executable, "-c", CHILD, tree, args.engine]
    cmd += [str(args.players), args.expansions, str(args.games), str(args.seed)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    if res.returncode:
        raise SystemExit(f"{tree}: the game process failed:\n{res.stderr.strip()[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the checkout measured first (the baseline)")
    ap.add_argument("new", help="the checkout compared with it")
    ap.add_argument("--engine", choices=("python", "numba"), default="python")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys ('base' is added)")
    ap.add_argument("--games", type=int, default=300, help="games per process (default 300)")
    ap.add_argument("--pairs", type=int, default=7, help="interleaved pairs (default 7)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nice", type=int, default=5, help="niceness of the game processes (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    args = ap.parse_args(argv)
    for tree in (args.old, args.new):
        if not os.path.isfile(os.path.join(tree, "scripts", "bench.py")):
            ap.error(f"{tree!r} is not a checkout with scripts/bench.py: give the root of a carc_env tree")
    if args.games < 1 or args.pairs < 1:
        ap.error("--games and --pairs must be >= 1")
    load_before = os.getloadavg()
    old: list[dict] = []
    new: list[dict] = []
    for i in range(args.pairs):
        order = ((args.old, old), (args.new, new)) if i % 2 == 0 else ((args.new, new), (args.old, old))
        for tree, out in order:
            out.append(run_once(tree, args))
    ratios = [b["cpu"] / a["cpu"] for a, b in zip(old, new, strict=True)]
    # per unit of work (turns; compiled: decisions), for trees whose rules play other games
    per_work = [(b["cpu"] / b["work"]) / (a["cpu"] / a["work"]) for a, b in zip(old, new, strict=True)]
    work = {args.old: {d["work"] for d in old}, args.new: {d["work"] for d in new}}
    result = {
        "engine": args.engine,
        "players": args.players,
        "expansions": args.expansions,
        "games": args.games,
        "pairs": args.pairs,
        "old_cpu_s_median": round(statistics.median(d["cpu"] for d in old), 3),
        "new_cpu_s_median": round(statistics.median(d["cpu"] for d in new), 3),
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_min": round(min(ratios), 3),
        "ratio_max": round(max(ratios), 3),
        "ratio_per_work_median": round(statistics.median(per_work), 3),
        "same_work": len(work[args.old] | work[args.new]) == 1,
        "work": {t: sorted(w) for t, w in work.items()},
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:22s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
