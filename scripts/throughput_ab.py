#!/usr/bin/env python
"""Training throughput of two trainers side by side, in one run: env steps/s and learner decisions/s.

    git archive <old-commit> | tar -x -C /tmp/old_tree
    python scripts/throughput_ab.py --old /tmp/old_tree [--updates 3] [--rounds 2] [--out FILE.json]

Variants (each a subprocess on one torch thread, the game of each tree's ``configs/default.yaml``
with 2 players, seed 0):

* ``old/old-config``: the trainer and default config of the tree at ``--old`` (e.g. main before
  the trainer moved onto the compiled engine), with its imitation updates off;
* ``new/old-config``: this tree's trainer with the old config's PPO settings and its game engine
  (the same batch size and opponent mix; with the old ``engine: python`` the ratio to the first
  row is what the trainer's own changes give on the Python engine);
* ``new/new-config``: this tree's trainer with ``configs/default.yaml`` (the compiled engine where it
  covers the game), without its imitation updates, whose learner seat is played by greedy.

Per variant the summary gives env steps/s, learner decisions/s and the collect / update seconds per
update (the split says which phase bounds the run).

Each variant is built, runs one warm-up update (not counted), then ``--updates`` timed updates
(collect + update).  The variants take turns, ``--rounds`` times, so a change in the machine's load
hits all of them; the load average is recorded with every measurement.  Nothing here is asserted:
it is a measurement, reported in docs/results/ablations.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUNNER = textwrap.dedent(
    """
    import dataclasses, json, os, sys, time
    import agents  # sets the thread-wait policy before torch
    import torch
    torch.set_num_threads(1)
    from agents.config import load_config
    from agents.ppo import PPOConfig, SelfPlayTrainer
    spec = json.loads(sys.argv[1])
    full = load_config(spec["config"])
    base = full.ppo
    over = {k: v for k, v in spec["override"].items() if k in {f.name for f in dataclasses.fields(PPOConfig)}}
    cfg = dataclasses.replace(base, **over)
    game = {**full.env_kwargs(), "num_players": 2, **spec.get("game", {})}
    trainer = SelfPlayTrainer(game, cfg, seed=0)
    rows = []
    for k in range(spec["updates"] + 1):
        t0 = time.perf_counter(); s0, l0 = trainer.env_steps, trainer.learner_steps
        buf = trainer.collect(); t1 = time.perf_counter()
        trainer.update(buf); t2 = time.perf_counter()
        if k:  # the first update is a warm-up
            rows.append({"env_steps": trainer.env_steps - s0, "learner_steps": trainer.learner_steps - l0,
                         "collect_s": t1 - t0, "update_s": t2 - t1, "load1": os.getloadavg()[0]})
    print(json.dumps(rows))
    """
)


def run_variant(tree: Path, spec: dict) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(spec)], cwd=tree, env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="a checkout (or git archive) of the old tree")
    ap.add_argument("--updates", type=int, default=3, help="timed updates per variant and round (>= 1)")
    ap.add_argument("--rounds", type=int, default=2, help="times each variant runs, taking turns (>= 1)")
    ap.add_argument("--out", default=None, help="write the raw measurements here (JSON)")
    ap.add_argument("--only", default=None, help="comma-separated variant names to run (default: all)")
    args = ap.parse_args(argv)
    old = Path(args.old).resolve()
    if not (old / "agents" / "ppo.py").exists() or not (old / "configs" / "default.yaml").exists():
        ap.error(f"--old {old} has no agents/ppo.py and configs/default.yaml: pass a checkout of the old tree")
    if args.updates < 1 or args.rounds < 1:
        ap.error("--updates and --rounds must be >= 1")
    import yaml

    old_yaml = yaml.safe_load((old / "configs" / "default.yaml").read_text())
    old_ppo = {k: v for k, v in old_yaml["ppo"].items() if k != "net"}
    old_game = {k: v for k, v in (old_yaml.get("game") or {}).items() if k == "engine"}
    variants = {
        "old/old-config": (old, {"config": "configs/default.yaml", "override": {"imitation_updates": 0}}),
        "new/old-config": (
            ROOT,
            {
                "config": "configs/default.yaml",
                "override": {**old_ppo, "imitation_updates": 0, "snapshot_every": old_ppo.get("snapshot_every", 10)},
                "game": old_game,
            },
        ),
        "new/new-config": (ROOT, {"config": "configs/default.yaml", "override": {"imitation_updates": 0}}),
    }
    if args.only:
        variants = {k: v for k, v in variants.items() if k in args.only.split(",")}
    results: dict[str, list[dict]] = {name: [] for name in variants}
    for r in range(args.rounds):
        for name, (tree, spec) in variants.items():
            rows = run_variant(tree, {**spec, "updates": args.updates})
            results[name] += rows
            print(
                f"round {r + 1} {name}: "
                + ", ".join(f"{x['env_steps'] / (x['collect_s'] + x['update_s']):.0f} sps" for x in rows),
                flush=True,
            )
    summary = {}
    for name, rows in results.items():
        secs = sum(x["collect_s"] + x["update_s"] for x in rows)
        summary[name] = {
            "updates": len(rows),
            "env_steps_per_s": round(sum(x["env_steps"] for x in rows) / secs, 1),
            "learner_decisions_per_s": round(sum(x["learner_steps"] for x in rows) / secs, 1),
            "collect_share": round(sum(x["collect_s"] for x in rows) / secs, 3),
            "collect_s_per_update": round(sum(x["collect_s"] for x in rows) / len(rows), 2),
            "update_s_per_update": round(sum(x["update_s"] for x in rows) / len(rows), 2),
            "load1_range": [min(x["load1"] for x in rows), max(x["load1"] for x in rows)],
        }
    print(json.dumps(summary, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "raw": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
