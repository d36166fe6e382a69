"""docs/img/item2.png: #25 item 2's measurements so far, each agent's win rate with its 95 % Wilson interval
(read from the evaluation reports in docs/results/expert/), against `mcts:1000` and against `mcts:5000`,
with the item's bars.  Run from the repository root: python docs/results/expert/s13/make_figure.py"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = "docs/results/expert"
M1000 = [  # (label, report, the player's name in it: None = the first player)
    ("start: pretrained:base-2p-160 (s7)", f"{D}/s7/As/report.json", None),
    ("s11 P100: visits as targets", f"{D}/s11/eval_P100_m1000.json", None),
    ("s12 D: disagreements only", f"{D}/s12/eval_D_m1000.json", None),
    ("s12 G: disagreements, gap >= 0.2", f"{D}/s12/eval_G_m1000.json", None),
    ("s12 U: improved policy, 32 it.", f"{D}/s12/eval_U_m1000.json", None),
    ("s13 V: improved policy, 5 visits", f"{D}/s13/eval_V_m1000.json", None),
]
M5000 = [
    ("network argmax (s7, 64 games)", f"{D}/s7/Bs/report.json", None),
    ("ppo-mcts 400, playout 0.5 (s10)", f"{D}/s10/final_p05_400.json", None),
    ("ppo-mcts 4000, top=10 (s13)", f"{D}/s13/final_top10_4000_m5000.json", None),
    ("ppo-mcts 4500, top=15 (s14-15)", f"{D}/s15/final_top15_4500_m5000.json", None),
    ("ppo-mcts 4800, top=20 (s15)", f"{D}/s15/final_top20_4800_m5000.json", None),
    ("ppo-mcts 6000, top=15, horizon=20 (s17)", f"{D}/s17/final_top15_6000_h20_m5000.json", None),
]


def point(report: str, name: str | None) -> tuple[float, float, float, int]:
    players = json.load(open(report))["players"]
    p = players[0] if name is None else next(q for q in players if q["name"] == name)
    lo, hi = p["win_rate_ci95"]
    return p["win_rate"], lo, hi, p["games"]


def panel(ax, rows, bars: list[tuple[float, str]], title: str) -> None:
    for y, (_label, report, name) in enumerate(reversed(rows)):
        try:
            r, lo, hi, games = point(report, name)
        except FileNotFoundError:
            print(f"missing {report}: left out", file=sys.stderr)
            continue
        ax.plot([lo, hi], [y, y], color="tab:blue", lw=2)
        ax.plot([r], [y], "o", color="tab:blue")
        ax.text(hi + 0.01, y, f"{r:.3f} ({games} games)", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _, _ in reversed(rows)], fontsize=8)
    ax.axvline(0.5, color="grey", lw=0.8, ls=":")
    for (bar, what), style in zip(bars, ("--", "-."), strict=False):
        ax.axvline(bar, color="tab:red", lw=1.2, ls=style, label=f"item 2's bar, {what} ({bar})")
    ax.set_xlim(0.15, 1.0)
    ax.set_xlabel("win rate, 95 % Wilson interval")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(-0.6, len(rows) - 0.4 + 0.5 * len(bars))  # room above the rows for the legend
    ax.legend(loc="upper right", fontsize=7)


fig, (a, b) = plt.subplots(2, 1, figsize=(8, 7), gridspec_kw={"height_ratios": [len(M1000), len(M5000)]})
panel(a, M1000, [(0.65, "the network")], "the raw network against mcts:1000 (deals 7070-7169, both seatings)")
panel(b, M5000, [(0.65, "ppo-mcts"), (0.50, "the network")], "against mcts:5000")
fig.suptitle("#25 item 2: strength learned from search, 2-core CPU machine", fontsize=11)
fig.tight_layout()
fig.savefig("docs/img/item2.png", dpi=110)
print("wrote docs/img/item2.png")
