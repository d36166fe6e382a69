"""docs/img/item2_raw_s27.png: #25 item 2's raw networks with session 27's ladder run (no search at play time).

Top: session 26's rows (docs/results/expert/s26/make_figure.py) and session 27's network, each network's win
rate against `mcts:1000` and `mcts:5000` with its 95 % Wilson interval, and item 2's bars.  Bottom: the ladder
run (`configs/search_pool_ladder.yaml`), the sampling learner's win rate in each update's training games
against the pool's search player, on the rung it stood on (shaded: `mcts:300`, `mcts:600`, `mcts:1000`,
`mcts:2000`), beside the direct run's (plain `mcts:1000` from the same start, sessions 24-25; a moving mean over
10 updates), with the argmax evaluations of the ladder run's last network inside the budget.  Run from the
repository root:
python docs/results/expert/s27/make_figure.py"""

import csv
import importlib.util

D = "docs/results/expert"
_spec = importlib.util.spec_from_file_location("item2_s26", f"{D}/s26/make_figure.py")
s26 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s26)
s25 = s26.s25

LOG = f"{D}/s27/search_pool_ladder_progress.csv"
RUNGS = ["mcts:300", "mcts:600", "mcts:1000", "mcts:2000"]
SHADES = ["#f2f2f2", "#e0e0e0", "#cccccc", "#b3b3b3"]


def final_update() -> int:
    """The last update of the kept log: the run's last checkpoint inside the 3 CPU-hours."""
    return int(list(csv.DictReader(open(LOG)))[-1]["update"])


def reports() -> tuple[str, str]:
    u = final_update()
    return f"{D}/s27/ladder_update_{u}_m1000.json", f"{D}/s27/ladder_update_{u}_m5000.json"


def rows() -> list:
    return s26.ROWS + [(f"ladder mcts:300 -> 2000, u{final_update()} (s27)", *reports())]


def curves(ax) -> None:
    log = list(csv.DictReader(open(LOG)))
    u = [int(r["update"]) for r in log]
    rung = [int(float(r["player_rung"])) for r in log]
    start = 0
    for i in range(1, len(log) + 1):  # a band per rung
        if i == len(log) or rung[i] != rung[start]:
            ax.axvspan(u[start] - 0.5, u[i - 1] + 0.5, color=SHADES[rung[start]], lw=0)
            ax.text((u[start] + u[i - 1]) / 2, 0.04, RUNGS[rung[start]], ha="center", fontsize=7)
            start = i
    ax.plot(u, [float(r["train_win_rate_vs_player"]) for r in log], "o-", color="tab:purple", lw=1, ms=3,
            label="ladder run: each update's training games vs its rung (sampling)")  # fmt: skip
    direct = list(csv.DictReader(open(s25.LOG)))
    ax.plot([int(r["update"]) for r in direct], s25.mean10([float(r["train_win_rate_vs_player"]) for r in direct]),
            color="tab:blue", lw=1.2, ls="--", label="direct run vs plain mcts:1000 (mean of 10 updates)")  # fmt: skip
    m1000, m5000 = reports()
    for report, marker, opp in ((m1000, "s", "mcts:1000"), (m5000, "D", "mcts:5000")):
        r, lo, hi, _games = s25.point(report)
        ax.errorbar([u[-1] + 1.5], [r], yerr=[[r - lo], [hi - r]], fmt=marker, color="tab:purple", ms=5, capsize=3,
                    mfc="white" if opp == "mcts:5000" else "tab:purple", label=f"ladder run's last network, argmax vs {opp}")  # fmt: skip
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlim(0, max(u[-1] + 4, 60))
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("update (4,096 learner decisions each); both runs start from base-2p-160")
    ax.set_ylabel("win rate")
    ax.set_title("the ladder run: training win rate against the rung it stood on, and its finals", fontsize=10)
    ax.legend(loc="upper right", fontsize=7)


def main() -> None:
    s25.main(rows(), curves, "docs/img/item2_raw_s27.png", (9, 9.5), 1.5)


if __name__ == "__main__":
    main()
