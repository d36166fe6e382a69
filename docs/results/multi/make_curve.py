"""docs/results/multi/curve.csv: per player count (one series each), the run's periodic evaluations (eval.csv, 40-42 games, deals
seed 10,000,000) and the 400-game evaluations of update 0 and of the final checkpoint (deals seed 20000),
each with its 95 % Wilson interval."""

import csv
import json
import sys

sys.path.insert(0, ".")
from agents.evaluate import wilson  # noqa: E402

D = "docs/results/multi"
rows = []
final_steps = None
for r in csv.DictReader(open(f"{D}/progress.csv")):
    final_steps = int(r["env_steps"])
for n in (2, 3, 4, 5):
    start = json.load(open(f"{D}/start/eval_{n}p.json"))["players"][0]
    rows.append((f"{n} players", 0, start["win_rate"], *start["win_rate_ci95"]))
    for r in csv.DictReader(open(f"{D}/eval.csv")):
        if r["opponent"] == f"greedy_{n}p":
            g = int(r["games"])
            w = round(float(r["win_rate"]) * g)
            lo, hi = wilson(w, g)
            rows.append((f"{n} players", int(r["env_steps"]), float(r["win_rate"]), lo, hi))
    fin = json.load(open(f"{D}/eval_{n}p/report.json"))["players"][0]
    rows.append((f"{n} players", final_steps, fin["win_rate"], *fin["win_rate_ci95"]))
with open(f"{D}/curve.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["label", "env_steps", "win_rate", "lo", "hi"])
    for row in rows:
        w.writerow([row[0], row[1], round(row[2], 4), round(row[3], 4), round(row[4], 4)])
print(len(rows), "rows")
