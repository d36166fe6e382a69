#!/usr/bin/env python
"""A quick, time-boxed A/B training run for comparing PPO settings.

    python scripts/quick_ab.py NAME '{"lr": 0.003, "seed": 1}' [--minutes 10] [--out runs/ab]

Trains the 2-player base game with the default config's PPO settings
(``configs/default.yaml``), overridden by the JSON object, for a fixed
wall-clock budget on ONE torch thread (so two variants can run side by side
on the two cores and get the same compute).  At 25/50/75/100 % of the budget
the argmax agent plays 40 seat-swapped games against random (deals seed
2024; these pauses do not count against the budget); at the end 100 games
against random and 20 against greedy.  Writes OUT/NAME.log (one line per
update, EVAL lines, a FINAL line) and OUT/NAME.pt (the network's weights).

Extra keys besides PPOConfig fields: ``seed`` (default 0), ``threads``
(default 1), ``no_placement_features`` (true: the network without the
placement-feature scorer, as before it existed), ``net`` (NetConfig fields),
``lr_final`` (the learning rate decays linearly from ``lr`` to this over the
time budget).

The figures in docs/results/ablations.md come from this script.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import agents  # noqa: E402,F401  (before torch: sets OMP_WAIT_POLICY=PASSIVE, see agents/__init__.py)

# isort: split
import torch  # noqa: E402

from agents.config import load_config  # noqa: E402
from agents.evaluate import evaluate  # noqa: E402
from agents.network import PolicyNet  # noqa: E402
from agents.policy import PPOPolicy  # noqa: E402
from agents.ppo import SelfPlayTrainer  # noqa: E402
from carc_env.baselines import GreedyPolicy, RandomPolicy  # noqa: E402

GAME = {"num_players": 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("overrides", nargs="?", default="{}", help="JSON object of PPOConfig fields and extra keys")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--out", default="runs/ab")
    ap.add_argument("--greedy-games", type=int, default=20, help="games against greedy at the end")
    args = ap.parse_args(argv)
    over = json.loads(args.overrides)
    if not isinstance(over, dict):
        ap.error("overrides must be a JSON object")
    seed = int(over.pop("seed", 0))
    torch.set_num_threads(int(over.pop("threads", 1)))
    no_feats = bool(over.pop("no_placement_features", False))
    lr_final = over.pop("lr_final", None)
    base = load_config("configs/default.yaml").ppo
    try:
        cfg = dataclasses.replace(base, net=dataclasses.replace(base.net, **over.pop("net", {})), **over)
    except TypeError as exc:
        ap.error(f"unknown setting: {exc}")
    trainer = SelfPlayTrainer(GAME, cfg, seed=seed)
    if no_feats:
        trainer.shapes = dataclasses.replace(trainer.shapes, placement_features=0)
        trainer.net = PolicyNet(trainer.shapes, cfg.net)
        trainer.opt = torch.optim.Adam(trainer.net.parameters(), lr=cfg.lr)
        trainer._live.net = trainer.net
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, f"{args.name}.log"), "w")

    def vs_random(games: int) -> tuple[float, float, float]:
        r = evaluate(PPOPolicy(trainer.net), RandomPolicy(seed=1), games, 2024, GAME)
        return r["win_rate"], r["mean_margin"], r["mean_score"]

    budget = args.minutes * 60
    t0 = time.time()
    marks = [0.25, 0.5, 0.75, 1.0]
    while time.time() - t0 < budget:
        if lr_final is not None:
            frac = min(1.0, (time.time() - t0) / budget)
            for group in trainer.opt.param_groups:
                group["lr"] = cfg.lr + (float(lr_final) - cfg.lr) * frac
        stats = trainer.update(trainer.collect())
        ep = trainer.pop_episode_stats()
        el = time.time() - t0
        print(
            f"{trainer.updates} {el:.0f}s steps={trainer.env_steps} ent={stats['entropy']:.2f} "
            f"kl={stats['approx_kl']:.4f} vr={ep.get('train_win_rate_vs_random', -1):.2f} "
            f"vg={ep.get('train_win_rate_vs_greedy', -1):.2f} m={ep.get('train_margin', 0):.1f}",
            file=log, flush=True,
        )
        if marks and el > marks[0] * budget:
            marks.pop(0)
            t_eval = time.time()
            result = vs_random(40)
            t0 += time.time() - t_eval  # evaluation time does not count
            print("EVAL", trainer.updates, f"{el:.0f}s", result, file=log, flush=True)
    final = vs_random(100)
    g = evaluate(PPOPolicy(trainer.net), GreedyPolicy(seed=1), args.greedy_games, 2024, GAME)
    print("FINAL", args.name, trainer.updates, trainer.env_steps, final, g["win_rate"], g["mean_margin"],
          file=log, flush=True)
    torch.save(trainer.net.state_dict(), os.path.join(args.out, f"{args.name}.pt"))
    print(open(os.path.join(args.out, f"{args.name}.log")).read().splitlines()[-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
