#!/usr/bin/env python
"""Evaluate a checkpoint or baseline against opponents over seat-swapped games with paired seeds.

    python scripts/evaluate.py runs/default/checkpoint.pt --opponents random,greedy --games 200 --json

Each deal (seed) is played with the candidate in every seat; prints win rate
with a 95 % Wilson interval and the mean score margin per opponent.  With
``--json`` prints one JSON line with ``win_rate_vs_<opponent>`` keys.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents.checkpoint import CheckpointError  # noqa: E402
from agents.evaluate import evaluate  # noqa: E402
from agents.players import make_player  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidate", help="checkpoint path, 'random', 'greedy' or 'greedy:EPS'")
    ap.add_argument("--opponents", default="random,greedy", help="comma-separated players")
    ap.add_argument("--games", type=int, default=200, help="games per opponent (rounded to a multiple of players)")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--expansions", default="base")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    env_kwargs = {"num_players": args.players, "expansions": tuple(args.expansions.split(","))}
    try:
        cand = make_player(args.candidate, env_kwargs, seed=args.seed)
        result: dict = {"candidate": args.candidate, "games_per_opponent": args.games, "seed": args.seed,
                        "env": {"num_players": args.players, "expansions": list(env_kwargs["expansions"])}}
        for name in args.opponents.split(","):
            opp = make_player(name, env_kwargs, seed=args.seed + 1)

            def show(done: int, total: int, name: str = name) -> None:
                if not args.json and (done % 20 == 0 or done == total):
                    print(f"  vs {name}: {done}/{total} games", file=sys.stderr)

            res = evaluate(cand, opp, args.games, args.seed, env_kwargs, progress=show)
            key = os.path.basename(name).removesuffix(".pt")
            result[f"win_rate_vs_{key}"] = res["win_rate"]
            result[f"vs_{key}"] = res
            if not args.json:
                lo, hi = res["win_rate_ci95"]
                print(f"vs {name}: win rate {res['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], ties {res['ties']}, "
                      f"mean margin {res['mean_margin']:+.1f} over {res['games']} games")
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
