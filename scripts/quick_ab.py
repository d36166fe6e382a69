#!/usr/bin/env python
"""A quick, time-boxed A/B training run for comparing PPO settings.

    python scripts/quick_ab.py NAME '{"lr": 0.003, "seed": 1}' [--minutes 10] [--out runs/ab]

Trains the 2-player base game with the default config's PPO settings
(``configs/default.yaml``), overridden by the JSON object, for a fixed
wall-clock budget on ONE torch thread (so two variants can run side by side
on the two cores and get the same compute).  At 25/50/75/100 % of the budget
the argmax agent plays ``--eval-games`` seat-swapped games against greedy
(these pauses do not count against the budget); at the end 100 games against
random and ``--greedy-games`` against greedy.  Evaluation deals start at
seed 900000 (``--deals``), a set of its own: not the deals of
``scripts/main.py`` (2024...) or ``scripts/evaluate.py`` (12345...), so
nothing is tuned on the deals the README's figures come from.  Writes
OUT/NAME.log (one line per update with env steps/s and learner decisions/s,
EVAL lines, a FINAL line) and OUT/NAME.pt (the network's weights).

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
    ap.add_argument(
        "--updates", type=int, default=0, help="budget in updates instead of minutes (evaluations at 25/50/75 %%)"
    )
    ap.add_argument("--out", default="runs/ab")
    ap.add_argument("--eval-games", type=int, default=40, help="games against greedy at 25/50/75 %% of the budget")
    ap.add_argument("--greedy-games", type=int, default=200, help="games against greedy at the end")
    ap.add_argument("--deals", type=int, default=900_000, help="seed of the first evaluation deal")
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
    print(
        "CONFIG",
        json.dumps(dataclasses.asdict(cfg)),
        "seed",
        seed,
        "threads",
        torch.get_num_threads(),
        file=log,
        flush=True,
    )

    def vs(opp: object, games: int) -> dict:
        return evaluate(PPOPolicy(trainer.net), opp, games, args.deals, GAME)

    budget = args.minutes * 60
    t0 = time.time()
    marks = [0.25, 0.5, 0.75]

    def progress() -> float:
        return trainer.updates / args.updates if args.updates else (time.time() - t0) / budget

    while progress() < 1.0:
        if lr_final is not None:
            frac = min(1.0, progress())
            for group in trainer.opt.param_groups:
                group["lr"] = cfg.lr + (float(lr_final) - cfg.lr) * frac
        t_u = time.time()
        s0, l0 = trainer.env_steps, trainer.learner_steps
        buf = trainer.collect()
        t_c = time.time()
        stats = trainer.update(buf)
        t_e = time.time()
        ep = trainer.pop_episode_stats()
        el = time.time() - t0
        print(
            f"{trainer.updates} {el:.0f}s steps={trainer.env_steps} sps={(trainer.env_steps - s0) / (t_e - t_u):.0f} "
            f"lps={(trainer.learner_steps - l0) / (t_e - t_u):.0f} collect={t_c - t_u:.1f}s update={t_e - t_c:.1f}s "
            f"ent={stats['entropy']:.2f} gs={stats.get('gradient_steps', 0):.0f} kl={stats.get('approx_kl', 0):.4f} "
            f"acc={stats.get('imitation_accuracy', -1):.2f} vloss={stats['value_loss']:.3f} "
            f"vr={ep.get('train_win_rate_vs_random', -1):.2f} "
            f"vg={ep.get('train_win_rate_vs_greedy', -1):.2f} m={ep.get('train_margin', 0):.1f}",
            file=log,
            flush=True,
        )
        if marks and progress() > marks[0]:
            marks.pop(0)
            t_eval = time.time()
            g = vs(GreedyPolicy(seed=1), args.eval_games)
            t0 += time.time() - t_eval  # evaluation time does not count
            print(
                "EVAL",
                trainer.updates,
                f"{el:.0f}s",
                trainer.env_steps,
                "greedy",
                g["win_rate"],
                round(g["mean_margin"], 1),
                file=log,
                flush=True,
            )
    r = vs(RandomPolicy(seed=1), 100)
    g = vs(GreedyPolicy(seed=1), args.greedy_games)
    lo, hi = g["win_rate_ci95"]
    print(
        "FINAL",
        args.name,
        trainer.updates,
        trainer.env_steps,
        "random",
        r["win_rate"],
        round(r["mean_margin"], 1),
        "greedy",
        g["win_rate"],
        f"[{lo:.3f},{hi:.3f}]",
        round(g["mean_margin"], 1),
        file=log,
        flush=True,
    )
    torch.save(trainer.net.state_dict(), os.path.join(args.out, f"{args.name}.pt"))
    print(open(os.path.join(args.out, f"{args.name}.log")).read().splitlines()[-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
