"""docs/img/item2_raw_s29.png: #25 item 2's raw networks with session 29's run, PPO that also learns from the pool
search's moves (no search at play time).

Top: session 28's rows (docs/results/expert/s28/make_figure.py) and session 29's network, each network's win rate
against `mcts:1000` and `mcts:5000` with its 95 % Wilson interval, and item 2's bars.  Bottom: the two runs from
`base-2p-160` against `mcts:1000` from their first update, update by update: sessions 24-25's
(`configs/search_pool_1000_direct.yaml`, PPO only) and session 29's (`configs/search_pool_imitate.yaml`, PPO plus
0.25 x the cross entropy to the search's moves), the sampling learner's win rate in its training games against
the search (a moving mean over 10 updates), session 29's agreement with the search's moves (the share of them
that are the network's argmax), and each run's argmax finals.  Run from the repository root:
python docs/results/expert/s29/make_figure.py"""

import csv
import importlib.util

D = "docs/results/expert"
_spec = importlib.util.spec_from_file_location("item2_s28", f"{D}/s28/make_figure.py")
s28 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s28)
s25 = s28.s25

LOG = f"{D}/s29/search_pool_imitate_progress.csv"
DIRECT = f"{D}/s25/search_pool_1000_direct_progress.csv"


def log(path: str) -> list[dict]:
    return list(csv.DictReader(open(path)))


def final_update() -> int:
    """The last update of the kept log: the run's stop at its CPU budget."""
    return int(log(LOG)[-1]["update"])


def reports() -> tuple[str, str]:
    u = final_update()
    return f"{D}/s29/imitate_u{u}_m1000.json", f"{D}/s29/imitate_u{u}_m5000.json"


def rows() -> list:
    return s28.rows() + [(f"PPO + the search's moves, {final_update()} vs mcts:1000 (s29)", *reports())]


def curves(ax) -> None:
    direct, new = log(DIRECT), log(LOG)
    ax.plot([int(r["update"]) for r in direct], s25.mean10([float(r["train_win_rate_vs_player"]) for r in direct]),
            color="tab:blue", lw=1.4, label="sessions 24-25, PPO only: training win rate vs mcts:1000")  # fmt: skip
    un = [int(r["update"]) for r in new]
    ax.plot(un, s25.mean10([float(r["train_win_rate_vs_player"]) for r in new]), color="tab:red", lw=1.6,
            label="session 29, PPO + the search's moves: training win rate vs mcts:1000")  # fmt: skip
    ax.plot(un, [float(r["player_agreement"]) for r in new], color="tab:red", lw=1.0, ls="--",
            label="session 29: the network's argmax = the search's move (share of its moves)")  # fmt: skip
    finals = (
        ((f"{D}/s24/direct_update_45_m1000.json", f"{D}/s24/direct_update_45_m5000.json"), 45, "tab:blue"),
        ((f"{D}/s25/direct_update_100_m1000.json", f"{D}/s25/direct_update_100_m5000.json"), 100, "tab:blue"),
        (reports(), final_update(), "tab:red"),
    )
    for (m1000, m5000), at, colour in finals:
        for report, marker, opp in ((m1000, "s", "mcts:1000"), (m5000, "D", "mcts:5000")):
            r, lo, hi, _games = s25.point(report)
            ax.errorbar([at + 1.5], [r], yerr=[[r - lo], [hi - r]], fmt=marker, color=colour, ms=5, capsize=3,
                        mfc="white" if opp == "mcts:5000" else colour)  # fmt: skip
    ax.plot([], [], "ks", ms=5, label="argmax finals vs mcts:1000")
    ax.plot([], [], "kD", mfc="white", ms=5, label="argmax finals vs mcts:5000")
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_xlim(0, 105)
    ax.set_ylim(0.25, 1.0)
    ax.set_xlabel("update from base-2p-160 (4,096 learner decisions each)")
    ax.set_ylabel("win rate / share")
    ax.set_title("against mcts:1000 from the first update: PPO only, and PPO + the search's moves", fontsize=10)
    ax.legend(loc="upper center", fontsize=7, ncol=2)


def main() -> None:
    s25.main(rows(), curves, "docs/img/item2_raw_s29.png", (9, 10.5), 1.7)


if __name__ == "__main__":
    main()
