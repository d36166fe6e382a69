"""docs/img/item2_raw_s26.png: #25 item 2's raw networks with session 26's run (no search at play time).

Top: session 25's rows (docs/results/expert/s25/make_figure.py) and session 26's network, each network's win
rate against `mcts:1000` and `mcts:5000` with its 95 % Wilson interval, and item 2's bars.  Bottom: the two
in-budget runs from the same start, side by side: the sampling learner's win rate in its training games
against the pool's search player (a moving mean over 10 updates) for `configs/search_pool_1000_direct.yaml`
(plain `mcts:1000`, sessions 24-25) and `configs/search_pool_strong.yaml` (`mcts:1000:root=halving:farmers=0`,
session 26), with the argmax evaluations of their networks.  Run from the repository root:
python docs/results/expert/s26/make_figure.py"""

import csv
import importlib.util

D = "docs/results/expert"
_spec = importlib.util.spec_from_file_location("item2_s25", f"{D}/s25/make_figure.py")
s25 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s25)

UPDATE = 50  # the network evaluated: the last checkpoint inside the 3 CPU-hours on session 26's host
ROWS = s25.ROWS + [
    (
        f"vs mcts:1000 halving, no farmers, u{UPDATE} (s26)",
        f"{D}/s26/strong_update_{UPDATE}_m1000.json",
        f"{D}/s26/strong_update_{UPDATE}_m5000.json",
    )
]
RUNS = [  # (log, colour, name, evaluations: (update, report against mcts:1000, against mcts:5000))
    (s25.LOG, "tab:blue", "plain mcts:1000 (s24-25)", s25.EVALS),
    (
        f"{D}/s26/search_pool_strong_progress.csv",
        "tab:red",
        "mcts:1000 halving, no farmers (s26)",
        [(UPDATE, f"{D}/s26/strong_update_{UPDATE}_m1000.json", f"{D}/s26/strong_update_{UPDATE}_m5000.json")],
    ),
]


def curves(ax) -> None:
    for log, colour, name, evals in RUNS:
        rows = list(csv.DictReader(open(log)))
        u = [int(r["update"]) for r in rows]
        ax.plot(u, s25.mean10([float(r["train_win_rate_vs_player"]) for r in rows]), color=colour, lw=1.5,
                label=f"training games vs {name} (sampling)")  # fmt: skip
        for upd, m1000, m5000 in evals:
            for report, marker, opp in ((m1000, "s", "mcts:1000"), (m5000, "D", "mcts:5000")):
                r, lo, hi, _games = s25.point(report)
                ax.errorbar([upd], [r], yerr=[[r - lo], [hi - r]], fmt=marker, color=colour, ms=5, capsize=3,
                            mfc="white" if opp == "mcts:5000" else colour,
                            label=f"argmax vs {opp}" if (colour == "tab:red") else None)  # fmt: skip
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlim(0, 102)
    ax.set_ylim(0.0, 0.9)
    ax.set_xlabel("update (4,096 learner decisions each); both runs start from base-2p-160")
    ax.set_ylabel("win rate")
    ax.set_title("the two in-budget runs: training win rate against the pool's search player, and finals", fontsize=10)
    ax.legend(loc="lower right", fontsize=7, ncol=2)


def main() -> None:
    s25.main(ROWS, curves, "docs/img/item2_raw_s26.png", (9, 9), 1.4)


if __name__ == "__main__":
    main()
