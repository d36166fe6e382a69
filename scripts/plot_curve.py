#!/usr/bin/env python
"""Draw the learning curve of one or more training runs as a PNG (Pillow only).

    python scripts/plot_curve.py runs/default runs/long --out docs/img/learning_curve.png
    python scripts/plot_curve.py docs/results/long --mark 523795:"end of the main command" \
        --points docs/results/long/snapshots.csv --target 0.75:"bar vs greedy" --out docs/img/long_run.png

For each run: the periodic evaluation win rates against the random and greedy
baselines (OUT/eval.csv, points joined by lines) and the training win rate
over all opponents (OUT/progress.csv, a moving average), against environment
steps.  ``--points CSV`` adds evaluations made outside the run (e.g. saved
checkpoints against a search opponent): one series per ``label``, columns
``label,env_steps,win_rate`` and optionally ``lo,hi`` (a 95 % interval, drawn
as a bar).  ``--target Y:LABEL`` draws a dotted horizontal line (repeatable).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import cli  # noqa: E402

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 1000, 520, 70, 270, 40, 60
COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)]


def _read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _number_labels(ap: cli.Parser, option: str, number: str, values: list[str]) -> list[tuple[float, str]]:
    """Parse repeated ``NUMBER:LABEL`` values (the label may be empty); a bad one ends the script."""
    out = []
    for v in values:
        head, _, label = v.partition(":")
        try:
            out.append((float(head), label))
        except ValueError:
            ap.error(f"{option} wants {number}:LABEL, got {v!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run directories (with eval.csv / progress.csv)")
    ap.add_argument("--out", default="learning_curve.png")
    ap.add_argument("--smooth", type=int, default=10, help="moving-average window of the training win rate")
    ap.add_argument(
        "--mark",
        action="append",
        default=[],
        metavar="STEPS:LABEL",
        help="a vertical line at STEPS environment steps, labelled (repeatable)",
    )
    ap.add_argument(
        "--points",
        action="append",
        default=[],
        metavar="CSV",
        help="extra evaluation points: columns label,env_steps,win_rate[,lo,hi] (repeatable)",
    )
    ap.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="Y:LABEL",
        help="a dotted horizontal line at win rate Y, labelled (repeatable)",
    )
    args = ap.parse_args(argv)
    targets = _number_labels(ap, "--target", "Y", args.target)
    for y, _ in targets:
        if not 0.0 <= y <= 1.0:
            ap.error(f"--target: win rate {y:g} is not between 0 and 1")
    marks = _number_labels(ap, "--mark", "STEPS", args.mark)
    series = []  # (label, colour, dashed, points)
    max_x = 1.0
    for i, run in enumerate(args.runs):
        run_dir = Path(run)
        ev, pr = _read(run_dir / "eval.csv"), _read(run_dir / "progress.csv")
        if not ev and not pr:
            return cli.fail(ap.prog, f"{run_dir} has no eval.csv or progress.csv")
        colour = COLOURS[i % len(COLOURS)]
        for opp, dashed in (("random", False), ("greedy", True)):
            pts = [(float(r["env_steps"]), float(r["win_rate"])) for r in ev if r["opponent"] == opp]
            if pts:
                series.append((f"{run_dir.name}: eval vs {opp}", colour, dashed, pts))
        wins = [(float(r["env_steps"]), float(r["train_win_rate"])) for r in pr if r.get("train_win_rate")]
        if wins:
            k = max(1, args.smooth)
            avg = [
                (wins[j][0], sum(w for _, w in wins[max(0, j - k + 1) : j + 1]) / len(wins[max(0, j - k + 1) : j + 1]))
                for j in range(len(wins))
            ]
            series.append(
                (f"{run_dir.name}: training (all opponents)", tuple(c // 2 + 100 for c in colour), False, avg)
            )
    bars = {}  # label -> [(x, lo, hi)]
    extra = 0  # point series drawn so far: each gets the next colour after the runs'
    for path in args.points:
        rows = _read(Path(path))
        if not rows:
            return cli.fail(ap.prog, f"--points {path}: missing or empty")
        missing = {"label", "env_steps", "win_rate"} - set(rows[0])
        if missing:
            return cli.fail(ap.prog, f"--points {path}: lacks the column(s) {', '.join(sorted(missing))}")
        for label in dict.fromkeys(r["label"] for r in rows):
            mine = sorted((r for r in rows if r["label"] == label), key=lambda r: float(r["env_steps"]))
            colour = COLOURS[(len(args.runs) + extra) % len(COLOURS)]
            extra += 1
            series.append(
                (f"eval vs {label}", colour, False, [(float(r["env_steps"]), float(r["win_rate"])) for r in mine])
            )
            if all(r.get("lo") and r.get("hi") for r in mine):
                bars[f"eval vs {label}"] = [(float(r["env_steps"]), float(r["lo"]), float(r["hi"])) for r in mine]
    for _, _, _, pts in series:
        max_x = max(max_x, max(x for x, _ in pts))
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    x0, x1, y0, y1 = PAD_L, W - PAD_R, H - PAD_B, PAD_T

    def px(x: float, y: float) -> tuple[float, float]:
        return (x0 + (x1 - x0) * x / max_x, y0 + (y1 - y0) * y)

    for k in range(11):
        y = k / 10
        d.line([px(0, y), px(max_x, y)], fill=(230, 230, 230))
        d.text((x0 - 40, px(0, y)[1] - 6), f"{y:.1f}", fill=(0, 0, 0))
    for k in range(6):
        x = max_x * k / 5
        d.text((px(x, 0)[0] - 20, y0 + 8), f"{x / 1000:.0f}k", fill=(0, 0, 0))
    d.line([px(0, 0), px(max_x, 0)], fill=(0, 0, 0))
    d.line([px(0, 0), px(0, 1)], fill=(0, 0, 0))
    d.text((x0 + (x1 - x0) // 2 - 60, H - 25), "environment steps", fill=(0, 0, 0))
    d.text((10, 12), "win rate", fill=(0, 0, 0))
    for ty, tlabel in targets:
        yt = px(0, ty)[1]
        for xs in range(x0, x1, 12):
            d.line([(xs, yt), (xs + 6, yt)], fill=(120, 120, 120))
        d.text((x0 + 6, yt - 14), f"{ty:g} {tlabel}".strip(), fill=(90, 90, 90))
    for steps, label in marks:
        xm = px(steps, 0)[0]
        for ys in range(int(y1), int(y0), 10):
            d.line([(xm, ys), (xm, ys + 5)], fill=(90, 90, 90))
        d.text((xm + 4, y1 + 2), label, fill=(90, 90, 90))
    for li, (label, colour, dashed, pts) in enumerate(series):
        xy = [px(x, y) for x, y in pts]
        if dashed:
            for a, b in zip(xy, xy[1:], strict=False):
                d.line([a, b], fill=colour, width=2)
            for p in xy:
                d.rectangle([p[0] - 3, p[1] - 3, p[0] + 3, p[1] + 3], outline=colour)
        else:
            d.line(xy, fill=colour, width=2 if "eval" in label else 1)
            if "eval" in label:
                for p in xy:
                    d.ellipse([p[0] - 3, p[1] - 3, p[0] + 3, p[1] + 3], fill=colour)
        for x, lo, hi in bars.get(label, []):
            (xa, ya), (_, yb) = px(x, lo), px(x, hi)
            d.line([(xa, ya), (xa, yb)], fill=colour, width=1)
            d.line([(xa - 4, ya), (xa + 4, ya)], fill=colour)
            d.line([(xa - 4, yb), (xa + 4, yb)], fill=colour)
        ly = PAD_T + 18 * li
        d.line([(x1 + 20, ly + 6), (x1 + 40, ly + 6)], fill=colour, width=2)
        d.text((x1 + 44, ly), label[:40], fill=(0, 0, 0))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    img.save(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
