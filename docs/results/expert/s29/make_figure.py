"""docs/img/item2_imitate_s29.png: #25 item 2, session 29: PPO against mcts:1000 that also learns from the
search's own moves (ppo.imitate_player), against PPO alone.

Three runs from base-2p-160 with the same seed and config but the weight on the search's moves: 0 (sessions
24-25's configs/search_pool_1000_direct.yaml, its first 20 updates; that config decays its learning rate over 100
updates, these over 80: the rate is at most 4 % lower here by update 15), 0.05
(configs/search_pool_imitate_low.yaml, stopped at update 15) and 0.25 (configs/search_pool_imitate.yaml, stopped
at update 11).  Their first update's games are the same games (the weight changes only the update).  Left: the
sampling learner's win rate in its training games against mcts:1000 (a moving mean over 3 updates), and the
argmax network's win rate against mcts:1000 on deals 7070-7119 (100 games, 95 % Wilson interval) at the start and
at each imitating run's last checkpoint (updates 15 and 10).  Right: the policy's entropy over legal actions, and the share of the
search's moves that are the network's argmax.  Run from the repository root:
python docs/results/expert/s29/make_figure.py"""

import csv
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = "docs/results/expert"
RUNS = [  # (label, progress log, colour, (update, argmax report against mcts:1000 of its checkpoint) or None)
    ("weight 0 (PPO alone, s24)", f"{D}/s25/search_pool_1000_direct_progress.csv", "tab:blue", None),
    ("weight 0.05", f"{D}/s29/search_pool_imitate_low_progress.csv", "tab:orange",
     (15, f"{D}/s29/imitate05_u15_m1000.json")),
    ("weight 0.25", f"{D}/s29/search_pool_imitate_progress.csv", "tab:red", (10, f"{D}/s29/imitate25_u10_m1000.json")),
]  # fmt: skip
START = f"{D}/s20/start_base2p160_m1000.json"  # base-2p-160 on deals 7070-7169; the games of deals 7070-7119
UPDATES = 20


def rows(path: str) -> list[dict]:
    return [r for r in csv.DictReader(open(path)) if int(r["update"]) <= UPDATES]


def wilson(report: str, below: int | None = None) -> tuple[float, float, float]:
    """The network's win rate in ``report`` (the games of deals below ``below``) and its 95 % Wilson interval."""
    data = json.load(open(report))
    name = data["players"][0]["name"]
    games = [g for g in data["games"] if below is None or g["deal_seed"] < below]
    wins = sum(g["scores"][g["seats"].index(name)] > max(s for i, s in enumerate(g["scores"])
               if i != g["seats"].index(name)) for g in games)  # fmt: skip
    n, z = len(games), 1.959964
    r = wins / n
    centre, half = r + z * z / (2 * n), z * math.sqrt(r * (1 - r) / n + z * z / (4 * n * n))
    return r, (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def mean3(xs: list[float]) -> list[float]:
    return [sum(xs[max(0, i - 2) : i + 1]) / len(xs[max(0, i - 2) : i + 1]) for i in range(len(xs))]


def style(ax, ylim: tuple[float, float], xlabel: str, ylabel: str, title: str) -> None:
    """The axes' ranges, labels, title and legend (both panels alike)."""
    ax.set_xlim(-0.5, UPDATES + 0.5)
    ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=7)


def main() -> None:
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.6))
    r, lo, hi = wilson(START, below=7120)
    a.errorbar([0], [r], yerr=[[r - lo], [hi - r]], fmt="s", color="black", ms=5, capsize=3,
               label="argmax vs mcts:1000, 100 games: the start")  # fmt: skip
    for label, path, colour, report in RUNS:
        log = rows(path)
        u = [int(x["update"]) for x in log]
        a.plot(u, mean3([float(x["train_win_rate_vs_player"]) for x in log]), color=colour, lw=1.5, label=label)
        b.plot(u, [float(x["entropy"]) for x in log], color=colour, lw=1.5, label=f"{label}: entropy")
        if log and log[0].get("player_agreement"):
            b.plot(u, [float(x["player_agreement"]) for x in log], color=colour, lw=1.0, ls="--",
                   label=f"{label}: argmax = the search's move")  # fmt: skip
        if report:
            r, lo, hi = wilson(report[1])
            a.errorbar([report[0] + 0.3], [r], yerr=[[r - lo], [hi - r]], fmt="s", color=colour, ms=5, capsize=3)
    a.axhline(0.5, color="grey", lw=0.5)
    style(a, (0.0, 0.9), "update from base-2p-160 (4,096 learner decisions each)", "win rate against mcts:1000",
          "training games (sampling, mean of 3 updates); squares: argmax")  # fmt: skip
    style(b, (0.0, 2.7), "update from base-2p-160", "nats / share",
          "policy entropy over legal actions; agreement with the search")  # fmt: skip
    fig.suptitle("#25 item 2, session 29: PPO against mcts:1000 that also fits the search's moves, 2-core CPU machine",
                 fontsize=11)  # fmt: skip
    fig.tight_layout()
    fig.savefig("docs/img/item2_imitate_s29.png", dpi=110)
    print("wrote docs/img/item2_imitate_s29.png")


if __name__ == "__main__":
    main()
