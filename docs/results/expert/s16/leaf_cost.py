"""What one leaf of a search costs on this machine: a compiled random play-out, a compiled greedy play-out,
and the shipped network's forward over the deciding seat's observation (alone and in batches), from the
positions of one seeded game (2 players, base game, one torch thread).

    python docs/results/expert/s16/leaf_cost.py [--out leaf_cost.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

import carc_env  # noqa: E402
from agents.players import make_player  # noqa: E402
from agents.search import stacked_to_tensors  # noqa: E402
from carc_env.fast.playout import FastPlayout, GreedyPlayout  # noqa: E402


def _position(decisions: int):
    env = carc_env.raw_env()
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(decisions):
        mask = env.observe(env.agent_selection)["action_mask"]
        if not mask.any():
            raise ValueError(f"the game ended before {decisions} decisions")
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env.unwrapped.game


def _per_call(fn, n: int) -> float:
    fn()  # compile / warm
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="write the JSON here too")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    guide = make_player("ppo-mcts:pretrained:base-2p-160:10:values=decider", {}, 0).guide
    rows = []
    for decisions in (10, 50, 90):
        game = _position(decisions)
        order = list(game._bag[::-1])
        rnd, gre = FastPlayout(), GreedyPlayout()
        rnd.begin(game)
        gre.begin(game)
        seeds = iter(range(10**9))

        def playout(f, order=order, seeds=seeds):
            f.redeal(order)
            f.play_out(next(seeds))

        row = {
            "decisions_before": decisions,
            "tiles_left": len(order),
            "random_playout_us": 1e6 * _per_call(lambda f=rnd: playout(f), 400),
            "greedy_playout_us": 1e6 * _per_call(lambda f=gre: playout(f), 100),
        }
        sim = guide.compiled_state(game)
        guide.begin(game)
        sim.redeal(order)
        row["observe_us"] = 1e6 * _per_call(sim.observe, 100)
        obs = sim.observe()
        p = sim.player
        one = {k: v[p : p + 1].copy() for k, v in obs.items()}
        for b in (1, 8, 32):
            batch_obs = {k: np.concatenate([v] * b) for k, v in one.items()}

            @torch.inference_mode()
            def forward(batch_obs=batch_obs):
                batch = stacked_to_tensors(batch_obs, batch_obs["place_count"].tolist())
                guide.net(*batch.inputs())

            row[f"forward_batch{b}_us_per_leaf"] = 1e6 * _per_call(forward, 20) / b
        rows.append({k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()})
    out = {
        "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "network": "pretrained:base-2p-160",
        "rows": rows,
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
