"""docs/img/main_command_s30.png: where the main command's training time went on session 30's host, before and
after the update ran on both cores (#25 item 4).

Three runs of configs/default.yaml, seed 0, 170 updates, each the README's main command timed alone on the same
kind of host (2-core Intel Xeon, no GPU): session 29's code (docs/results/main_command_s29/), this session's
legal-actions loss alone (commit 1005dfb) and the loss with ppo.parallel_update (79d5c13, the default since).
Left: the training's own clock (rollouts plus updates, the progress log's ``seconds``) against the update number.
Right: each update's rollout and learning time, medians over bins of 10 updates.  The seeds' win rates against
greedy (400 games) are in the legend.  Run from the repository root:
python docs/results/main_command_s30/make_figure.py"""

import csv
import json
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = "docs/results"
RUNS = [  # (label, progress log, summary, colour)
    ("session 29's code", f"{D}/main_command_s29/seed0_progress.csv", f"{D}/main_command_s29/seed0_summary.json",
     "tab:gray"),
    ("legal-actions loss (1005dfb)", f"{D}/main_command_s30/legal_only_seed0_progress.csv",
     f"{D}/main_command_s30/legal_only_seed0_summary.json", "tab:orange"),
    ("+ update on both cores (79d5c13)", f"{D}/main_command_s30/seed0_progress.csv",
     f"{D}/main_command_s30/seed0_summary.json", "tab:blue"),
]  # fmt: skip


def main() -> None:
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, path, summary, colour in RUNS:
        rows = list(csv.DictReader(open(path)))
        with open(summary) as fh:
            win = json.load(fh)["win_rate_vs_greedy"]
        ups = [int(r["update"]) for r in rows]
        ax0.plot(ups, [float(r["seconds"]) / 60 for r in rows], color=colour, label=f"{label}: {win:.3f} vs greedy")
        bins = range(0, len(rows), 10)
        mid = [b + 5 for b in bins]
        for key, style in (("collect_seconds", "--"), ("update_seconds", "-")):
            med = [statistics.median(float(r[key]) for r in rows[b : b + 10]) for b in bins]
            ax1.plot(mid, med, style, color=colour)
    ax0.set_xlabel("update")
    ax0.set_ylabel("training clock (minutes)")
    ax0.set_title("Training time of the 170 updates")
    ax0.legend(fontsize=8, loc="upper left")
    ax0.grid(alpha=0.3)
    ax1.set_xlabel("update")
    ax1.set_ylabel("seconds (median of 10 updates)")
    ax1.set_title("Rollout (dashed) and learning (solid) per update")
    ax1.grid(alpha=0.3)
    fig.suptitle("The main command on a 2-core Intel Xeon host, seed 0 (no GPU)", fontsize=11)
    fig.tight_layout()
    fig.savefig("docs/img/main_command_s30.png", dpi=110)


if __name__ == "__main__":
    main()
