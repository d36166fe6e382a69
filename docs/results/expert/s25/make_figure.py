"""docs/img/item2_raw.png: #25 item 2's raw networks since session 20 (no search at play time).

Top: each network's win rate against `mcts:1000` and against `mcts:5000`, with its 95 % Wilson interval,
read from the evaluation reports in docs/results/expert/, and item 2's bars.  Bottom: the training log of
`configs/search_pool_1000_direct.yaml` (sessions 24-25), the sampling learner's win rate in its training
games against `mcts:1000` and against greedy (a moving mean over 10 updates), with the argmax evaluations of
its update-45 and update-100 networks.  Run from the repository root:
python docs/results/expert/s25/make_figure.py"""

import csv
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = "docs/results/expert"
ROWS = [  # (label, report against mcts:1000 or None, report against mcts:5000 or None)
    ("start: base-2p-160 (s20)", f"{D}/s20/start_base2p160_m1000.json", None),
    (
        "expert it., rollout teacher (s20)",
        f"{D}/s20/rollout_teacher_180_m1000.json",
        f"{D}/s20/rollout_teacher_180_m5000.json",
    ),
    ("expert it., searcher teacher (s21)", f"{D}/s21/student_130_m1000.json", f"{D}/s21/student_130_m5000.json"),
    ("PPO vs mcts:300, u160 (s22)", f"{D}/s22/update_160_m1000.json", f"{D}/s22/update_160_m5000.json"),
    ("then vs mcts:1000, u60 (s23, shipped)", f"{D}/s23/update_60_m1000.json", f"{D}/s23/update_60_m5000.json"),
    ("  the same, new deals 7170-7269 (s25)", f"{D}/s25/chain_m1000_7170.json", f"{D}/s25/chain_m5000_7170.json"),
    (
        "  the same, both sets of deals",
        (f"{D}/s23/update_60_m1000.json", f"{D}/s25/chain_m1000_7170.json"),
        (f"{D}/s23/update_60_m5000.json", f"{D}/s25/chain_m5000_7170.json"),
    ),
    (
        "vs mcts:1000 from the start, u45 (s24)",
        f"{D}/s24/direct_update_45_m1000.json",
        f"{D}/s24/direct_update_45_m5000.json",
    ),
    (
        "vs mcts:1000 from the start, u100 (s25)",
        f"{D}/s25/direct_update_100_m1000.json",
        f"{D}/s25/direct_update_100_m5000.json",
    ),
]
LOG = f"{D}/s25/search_pool_1000_direct_progress.csv"
EVALS = [(45, f"{D}/s24/direct_update_45_m1000.json", f"{D}/s24/direct_update_45_m5000.json"),
         (100, f"{D}/s25/direct_update_100_m1000.json", f"{D}/s25/direct_update_100_m5000.json")]  # fmt: skip


def point(report: str | tuple[str, ...]) -> tuple[float, float, float, int]:
    """The network's win rate (wins / games), its 95 % Wilson interval and games in ``report`` (the player
    that is not the search), or in the reports of a tuple together."""
    wins = games = 0
    for path in (report,) if isinstance(report, str) else report:
        p = next(q for q in json.load(open(path))["players"] if not q["name"].startswith("mcts"))
        wins, games = wins + p["wins"], games + p["games"]
    r, z = wins / games, 1.959964
    centre, half = (r + z * z / (2 * games)), z * math.sqrt(r * (1 - r) / games + z * z / (4 * games * games))
    scale = 1 + z * z / games
    return r, (centre - half) / scale, (centre + half) / scale, games


def forest(ax, rows=ROWS) -> None:
    n = len(rows)
    labelled = set()
    for i, (_label, m1000, m5000) in enumerate(rows):
        y = n - 1 - i
        for report, dy, colour, name in (
            (m1000, 0.15, "tab:blue", "mcts:1000"),
            (m5000, -0.15, "tab:orange", "mcts:5000"),
        ):
            if report is None:
                continue
            r, lo, hi, games = point(report)
            ax.plot([lo, hi], [y + dy] * 2, color=colour, lw=2, label=None if name in labelled else name)
            labelled.add(name)
            ax.plot([r], [y + dy], "o", color=colour, ms=4)
            ax.text(hi + 0.008, y + dy, f"{r:.3f} ({games})", va="center", fontsize=7)
    ax.set_yticks(range(n), [label for label, _, _ in reversed(rows)], fontsize=8)
    ax.axvline(0.65, color="tab:blue", lw=1, ls="--", label="bar against mcts:1000 (0.65)")
    ax.axvline(0.50, color="tab:orange", lw=1, ls="--", label="bar against mcts:5000 (0.50)")
    ax.set_xlim(0.2, 0.85)
    ax.set_ylim(-0.6, n - 0.4 + 1.2)
    ax.set_xlabel("win rate of the raw network (argmax), 95 % Wilson interval (games)")
    ax.set_title("raw networks against tree search, deals from 7070 (games in brackets), both seatings", fontsize=10)
    ax.legend(loc="upper right", fontsize=7, ncol=2)


def mean10(xs: list[float]) -> list[float]:
    return [sum(xs[max(0, i - 9) : i + 1]) / len(xs[max(0, i - 9) : i + 1]) for i in range(len(xs))]


def curve(ax) -> None:
    rows = list(csv.DictReader(open(LOG)))
    u = [int(r["update"]) for r in rows]
    for key, colour, name in (("train_win_rate_vs_player", "tab:blue", "training games vs mcts:1000 (sampling)"),
                              ("train_win_rate_vs_greedy", "tab:green", "training games vs greedy (sampling)")):  # fmt: skip
        ax.plot(u, mean10([float(r[key]) for r in rows]), color=colour, lw=1.5, label=name)
    for upd, m1000, m5000 in EVALS:
        for report, colour, name in (
            (m1000, "tab:blue", "argmax vs mcts:1000"),
            (m5000, "tab:orange", "argmax vs mcts:5000"),
        ):
            r, lo, hi, games = point(report)
            ax.errorbar([upd], [r], yerr=[[r - lo], [hi - r]], fmt="s", color=colour, ms=5, capsize=3,
                        label=name if upd == 100 else None)  # fmt: skip
    ax.axvline(75, color="grey", lw=0.8, ls=":")
    ax.text(75.5, 0.26, "session 24 | 25", fontsize=7, color="grey")
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlim(0, 102)
    ax.set_ylim(0.25, 0.9)
    ax.set_xlabel("update of configs/search_pool_1000_direct.yaml (4,096 learner decisions each)")
    ax.set_ylabel("win rate")
    ax.set_title("the in-budget run: training win rates (mean of 10 updates) and its finals", fontsize=10)
    ax.legend(loc="upper left", fontsize=7, ncol=2)


def main(rows=ROWS, bottom=curve, path: str = "docs/img/item2_raw.png", size=(9, 8.5), top=1.3) -> None:
    """The forest of ``rows`` above the plot ``bottom`` draws, written to ``path``."""
    fig, (a, b) = plt.subplots(2, 1, figsize=size, gridspec_kw={"height_ratios": [top, 1]})
    forest(a, rows)
    bottom(b)
    fig.suptitle("#25 item 2: the raw network against search, 2-core CPU machine", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
