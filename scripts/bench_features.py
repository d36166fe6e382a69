#!/usr/bin/env python
"""Greedy self-play with the acting seat's action features at every decision: decisions per second on the
Python engine and on the compiled one, per configuration, in the same run (interleaved rounds).

What the trainer does per learner decision, one game at a time: the action features of the deciding seat
(``Match.action_features`` / the compiled ``FeatureKernels.features``) and a ``GreedyPolicy`` decision
(the Python policy / ``carc_env.fast.greedy.greedy_actions``), then the step.  One thread, one game.

    python scripts/bench_features.py --seconds 8
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from carc_env.env.match import Match  # noqa: E402
from carc_env.env.options import EnvOptions  # noqa: E402
from carc_env.fast.engine import FastBatch  # noqa: E402
from carc_env.fast.features import kernels_of  # noqa: E402
from carc_env.fast.greedy import greedy_actions  # noqa: E402
from carc_env.policies import GreedyPolicy  # noqa: E402

CONFIGS = [
    (),
    ("count", "king_robber", "darmstadt"),
    ("stained_glass",),
    ("royal_gateways", "sagrada_familia"),
    ("maps_germany",),
]


def python_rate(opts: EnvOptions, seconds: float) -> float:
    n, d, seed, t0 = opts.num_players, 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        m = Match(opts)
        m.reset(seed)
        pols = [GreedyPolicy(seed=seed * 10 + p) for p in range(n)]
        while not m.game.over and time.perf_counter() - t0 < seconds:
            p = m.game.player
            m.action_features(p)
            m.step(pols[p].act({"action_mask": m.mask()}, m))
            d += 1
        seed += 1
    return d / (time.perf_counter() - t0)


def compiled_rate(opts: EnvOptions, seconds: float, fb: FastBatch) -> float:
    n, d, seed, t0 = opts.num_players, 0, 0, time.perf_counter()
    fk, rows = kernels_of(fb), opts.action_feature_rows
    while time.perf_counter() - t0 < seconds:
        fb.reset(0, seed)
        pols = [GreedyPolicy(seed=seed * 10 + p) for p in range(n)]
        while not fb.over(0) and time.perf_counter() - t0 < seconds:
            p = fb.player(0)
            fk.features(np.array([0]), np.array([p]), fb.mask(0)[None], rows)
            fb.step_game(0, int(greedy_actions(fb, [0], [pols[p]])[0]))
            d += 1
        seed += 1
    return d / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=8.0, help="time per configuration and engine (two rounds)")
    ap.add_argument("--players", type=int, default=2, help="2 to 5")
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        ap.error("--seconds must be positive")
    if not 2 <= args.players <= 5:
        ap.error("--players must be 2 to 5")
    for expansions in CONFIGS:
        opts = EnvOptions.from_kwargs(num_players=args.players, expansions=expansions, action_features=True)
        fb = FastBatch(opts, 1)
        compiled_rate(opts, 0.5, fb)  # compiles (or loads) the kernels, outside the timing
        py = [python_rate(opts, args.seconds / 2) for _ in range(2)]
        co = [compiled_rate(opts, args.seconds / 2, fb) for _ in range(2)]
        rate_py, rate_co = float(np.mean(py)), float(np.mean(co))
        row = {"expansions": list(expansions), "python_decisions_per_s": round(rate_py, 1)}
        row.update(compiled_decisions_per_s=round(rate_co, 1), ratio=round(rate_co / rate_py, 1))
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
