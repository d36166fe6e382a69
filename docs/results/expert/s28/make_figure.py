"""docs/img/item2_raw_s28.png: #25 item 2's raw networks with session 28's shortened chain (no search at play time).

Top: session 27's rows (docs/results/expert/s27/make_figure.py) and session 28's network, each network's win
rate against `mcts:1000` and `mcts:5000` with its 95 % Wilson interval, and item 2's bars.  Bottom: the two
chains from `base-2p-160`, update by update: session 28's (`configs/search_pool_chain.yaml` against `mcts:300`,
then `configs/search_pool_chain_1000.yaml` against `mcts:1000`) and sessions 22-23's (160 updates against
`mcts:300`, then 60 against `mcts:1000`), the sampling learner's win rate in its training games against the
pool's search (a moving mean over 10 updates, restarted at each stage), with each chain's argmax finals.  Run
from the repository root:
python docs/results/expert/s28/make_figure.py"""

import csv
import importlib.util

D = "docs/results/expert"
_spec = importlib.util.spec_from_file_location("item2_s27", f"{D}/s27/make_figure.py")
s27 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s27)
s25 = s27.s25

LOG_A = f"{D}/s28/search_pool_chain_progress.csv"
LOG_B = f"{D}/s28/search_pool_chain_1000_progress.csv"
OLD_A = f"{D}/s22/search_pool_progress.csv"
OLD_B = f"{D}/s23/search_pool_1000_progress.csv"


def log(path: str) -> list[dict]:
    return list(csv.DictReader(open(path)))


def final_update() -> int:
    """The last update of stage 2's kept log: the run's last checkpoint inside the 3 CPU-hours."""
    return int(log(LOG_B)[-1]["update"])


def reports() -> tuple[str, str]:
    u = final_update()
    return f"{D}/s28/chain_b{u}_m1000.json", f"{D}/s28/chain_b{u}_m5000.json"


def rows() -> list:
    n_a = len(log(LOG_A))
    return s27.rows() + [(f"chain, {n_a} vs mcts:300 + {final_update()} vs mcts:1000 (s28)", *reports())]


def stages(ax, first: str, second: str, colour: str, name: str) -> int:
    """Plot a two-stage chain's training win rates against its pool search; return its last update."""
    a, b = log(first), log(second)
    ua = [int(r["update"]) for r in a]
    ub = [len(a) + int(r["update"]) for r in b]
    ax.plot(ua, s25.mean10([float(r["train_win_rate_vs_player"]) for r in a]), color=colour, lw=1.3, ls="--",
            label=f"{name}: vs mcts:300")  # fmt: skip
    ax.plot(ub, s25.mean10([float(r["train_win_rate_vs_player"]) for r in b]), color=colour, lw=1.6,
            label=f"{name}: then vs mcts:1000")  # fmt: skip
    ax.axvline(len(a) + 0.5, color=colour, lw=0.8, ls=":")
    return ub[-1]


def curves(ax) -> None:
    end_old = stages(ax, OLD_A, OLD_B, "tab:blue", "sessions 22-23 (3.53 CPU-h)")
    end_new = stages(ax, LOG_A, LOG_B, "tab:purple", "session 28 (2.98 CPU-h)")
    for (m1000, m5000), end, colour in (
        ((f"{D}/s23/update_60_m1000.json", f"{D}/s23/update_60_m5000.json"), end_old, "tab:blue"),
        (reports(), end_new, "tab:purple"),
    ):
        for report, marker, opp in ((m1000, "s", "mcts:1000"), (m5000, "D", "mcts:5000")):
            r, lo, hi, _games = s25.point(report)
            ax.errorbar([end + 3], [r], yerr=[[r - lo], [hi - r]], fmt=marker, color=colour, ms=5, capsize=3,
                        mfc="white" if opp == "mcts:5000" else colour)  # fmt: skip
    ax.plot([], [], "ks", ms=5, label="argmax finals vs mcts:1000")
    ax.plot([], [], "kD", mfc="white", ms=5, label="argmax finals vs mcts:5000")
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlim(0, end_old + 8)
    ax.set_ylim(0.25, 1.05)
    ax.set_xlabel("update from base-2p-160 (4,096 learner decisions each); dotted: the switch to mcts:1000")
    ax.set_ylabel("win rate")
    ax.set_title("two chains: training win rate against the pool's search (mean of 10 updates), and finals",
                 fontsize=10)  # fmt: skip
    ax.legend(loc="upper center", fontsize=7, ncol=2)


def main() -> None:
    s25.main(rows(), curves, "docs/img/item2_raw_s28.png", (9, 10), 1.6)


if __name__ == "__main__":
    main()
