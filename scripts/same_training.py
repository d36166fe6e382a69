#!/usr/bin/env python
"""Check that two source trees train bit for bit the same, and compare their CPU time.

    python scripts/same_training.py --against /path/to/other/tree [--updates 8] [--rounds 1]
        [--config configs/default.yaml] [--eval-every 4]

Each tree trains the config for ``--updates`` updates from scratch (``agents.train.train``, the main
command's trainer: logs, periodic evaluations, checkpoints) in its own subprocess, with the tree first
on ``PYTHONPATH``; the trees take turns ``--rounds`` times (same-run A/B on a shared machine).  Each
run reports a digest of what it learned (the final checkpoint's network, optimiser state, snapshots,
random generators and running games) and of its logs (``progress.csv`` without the wall-clock
columns, ``eval.csv``), and the CPU seconds (``time.process_time``, all threads) of the rollouts
(``SelfPlayTrainer.collect``: games, opponents, the learner's forwards), the learning
(``SelfPlayTrainer.update``: the PPO epochs) and the whole call.  Exit status 1 if any digest
differs between the trees (or between rounds).

``--eval-every`` overrides ``run.eval_every`` (a run-section setting: it changes when the quick
evaluations run, not what is learned) so a short run exercises them too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402

WORKER = r"""
import hashlib, io, json, os, sys, time
import agents  # before torch: OMP_WAIT_POLICY=PASSIVE, as the scripts do
import torch
from agents import ppo, train as train_mod
from agents.config import load_config

cfg = load_config(sys.argv[1])
cfg.run.total_updates = int(sys.argv[3])
cfg.run.eval_every = int(sys.argv[4])
out = sys.argv[2]
cpu = {"collect": 0.0, "update": 0.0}

def timed(name, fn):
    def wrapper(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            cpu[name] += time.process_time() - t
    return wrapper

ppo.SelfPlayTrainer.collect = timed("collect", ppo.SelfPlayTrainer.collect)
ppo.SelfPlayTrainer.update = timed("update", ppo.SelfPlayTrainer.update)
t0 = time.process_time()
train_mod.train(cfg, out, resume=False, progress=False)
total = time.process_time() - t0

import pickle
data = torch.load(os.path.join(out, "checkpoint.pt"), weights_only=True)
tr = data["trainer"]
h = hashlib.sha256()
def add(obj):
    if isinstance(obj, torch.Tensor):
        h.update(str(obj.dtype).encode() + str(tuple(obj.shape)).encode())
        h.update(obj.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            h.update(str(k).encode())
            add(obj[k])
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            add(v)
    else:
        h.update(repr(obj).encode())
def add_state(state):
    # a trainer's state by value: the rollout shards' states (pickled in the blob; a tensor's pickled
    # bytes vary with its storage) recursively, the rest as before
    for key in ("net", "opt", "snapshots", "torch_rng"):
        add(state[key])
    rest = pickle.loads(state["blob"].numpy().tobytes())
    shards = rest.pop("shards", None) or []
    h.update(pickle.dumps(rest))
    for shard in shards:
        add_state(pickle.loads(shard))
add_state(tr)
learned = h.hexdigest()[:20]
timing = set(train_mod.TIMING_FIELDS)
lines = []
import csv
for name in ("progress.csv", "eval.csv"):
    path = os.path.join(out, name)
    if os.path.exists(path):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                lines.append(name + ":" + json.dumps({k: v for k, v in row.items() if k not in timing}, sort_keys=True))
logs = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:20]
print("RESULT " + json.dumps({"learned": learned, "logs": logs, "cpu_collect": round(cpu["collect"], 2),
                              "cpu_update": round(cpu["update"], 2), "cpu_train_call": round(total, 2)}))
"""


def run_tree(tree: str, config: str, updates: int, eval_every: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="same_training_") as out:
        env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
        proc = subprocess.run(
            [sys.executable, "-c", WORKER, os.path.abspath(config), out, str(updates), str(eval_every)],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        raise SystemExit(f"the run in {tree} failed:\n{proc.stderr[-3000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="same_training.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", required=True, help="the other source tree (e.g. a checkout of main)")
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--updates", type=int, default=8)
    ap.add_argument("--eval-every", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    if args.updates < 1 or args.rounds < 1 or args.eval_every < 0:
        return cli.fail(ap.prog, "--updates and --rounds must be >= 1 and --eval-every >= 0")
    if not os.path.isdir(os.path.join(args.against, "agents")):
        return cli.fail(ap.prog, f"--against {args.against}: no agents/ package there; give the root of a source tree")
    if not os.path.isfile(args.config):
        return cli.fail(ap.prog, f"--config {args.config}: no such file; give a training config (configs/default.yaml)")
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    trees = {"this": here, "against": os.path.abspath(args.against)}
    results: dict[str, list[dict]] = {k: [] for k in trees}
    for r in range(args.rounds):
        for name, tree in trees.items():
            res = run_tree(tree, args.config, args.updates, args.eval_every)
            results[name].append(res)
            print(f"round {r + 1} {name:8s} {tree}: {json.dumps(res)}", flush=True)
    digests = {(res["learned"], res["logs"]) for runs in results.values() for res in runs}
    for name, runs in results.items():
        n = len(runs)
        mean = {k: round(sum(x[k] for x in runs) / n, 2) for k in ("cpu_collect", "cpu_update", "cpu_train_call")}
        print(f"{name}: mean CPU s over {n} run(s): {json.dumps(mean)}")
    if len(digests) != 1:
        print(f"DIFFERENT: {len(digests)} distinct (learned, logs) digests")
        return 1
    print(f"SAME: every run learned {digests.pop()[0]} (weights, optimiser, generators, games) with the same logs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
