"""Measure how far random 2-player base games spread, to size the observation window.

Plays ``--games`` random games (uniform over legal tile placements, uniform
over follower spots and pass; ``--policy greedy``: GreedyPolicy on both
seats) and records, per game, the final bounding box
of the board (width x height in tiles) and, over every tile decision, the
largest span of the legal placements (columns and rows of the cells that
can take the drawn tile).  The default window of ``carc_env.encoding`` must
hold every legal-placement span seen here: the window is centred on the
frontier, so a legal placement can only fall outside when that span exceeds
the window.

Usage::

    PYTHONPATH=. python scripts/measure_window.py --games 10000 --workers 2 [--json out.json]

Result (10,000 random games, seeds 0..9999): final board at most 21 x 21 tiles
(mean 13.8 x 13.8, p99 18); legal-placement span at most 23 cells (p99 21,
p99.9 22).  Greedy against greedy (1,000 games) stays inside the same bounds
(see the report in ``carc_env.encoding.actions``).  The default window is
27 x 27: two cells of margin on each side beyond the largest span seen.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def _play(job: tuple[list[int], str]) -> list[tuple[int, int, int, int]]:
    from carc_env.core import Pass, PlaceFollower, PlaceTile, new_game

    seeds, policy = job
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed + 1_000_003)
        if policy == "greedy":
            out.append(_play_greedy(seed))
            continue
        g = new_game(2, seed=seed)
        span_x = span_y = 0
        while not g.over:
            if g.phase == "tile":
                legal = g.legal_tile_placements()
                span_x, span_y = _spans(legal, span_x, span_y)
                x, y, r = legal[rng.integers(len(legal))]
                g.apply(PlaceTile(int(x), int(y), int(r)))
            else:
                spots = g.legal_follower_spots()
                i = int(rng.integers(len(spots) + 1))
                g.apply(PlaceFollower(spots[i]) if i < len(spots) else Pass())
        b = g.bounds
        out.append((b[1] - b[0] + 1, b[3] - b[2] + 1, span_x, span_y))
    return out


def _spans(legal: np.ndarray, span_x: int, span_y: int) -> tuple[int, int]:
    """The largest column and row spans of legal placements seen so far, updated with ``legal``."""
    span_x = max(span_x, int(legal[:, 0].max() - legal[:, 0].min()) + 1)
    span_y = max(span_y, int(legal[:, 1].max() - legal[:, 1].min()) + 1)
    return span_x, span_y


def _play_greedy(seed: int) -> tuple[int, int, int, int]:
    """Greedy against greedy through the environment, with a window too large to ever clip."""
    from carc_env.baselines import GreedyPolicy
    from carc_env.env.aec import raw_env

    env = raw_env(window=(151, 151))
    env.reset(seed=seed)
    g = env.game
    players = [GreedyPolicy(seed=seed), GreedyPolicy(seed=seed + 1)]
    span_x = span_y = 0
    while not g.over:
        if g.phase == "tile":
            span_x, span_y = _spans(g.legal_tile_placements(), span_x, span_y)
        env.step(players[g.player].act({"action_mask": env.match.mask()}, env))
    b = g.bounds
    return (b[1] - b[0] + 1, b[3] - b[2] + 1, span_x, span_y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--policy", choices=("random", "greedy"), default="random", help="who plays both seats")
    ap.add_argument("--json", default=None, help="write the summary here too")
    args = ap.parse_args()
    t0 = time.perf_counter()
    chunks = [(list(range(i, args.games, args.workers * 8)), args.policy) for i in range(args.workers * 8)]
    with ProcessPoolExecutor(args.workers) as ex:
        rows = [r for part in ex.map(_play, chunks) for r in part]
    a = np.array(rows)
    w, h, sx, sy = a.T
    board_max = np.maximum(w, h)
    span_max = np.maximum(sx, sy)
    summary = {
        "policy": args.policy,
        "games": len(rows),
        "seconds": round(time.perf_counter() - t0, 1),
        "board_width": {"mean": float(w.mean()), "p99": float(np.percentile(w, 99)), "max": int(w.max())},
        "board_height": {"mean": float(h.mean()), "p99": float(np.percentile(h, 99)), "max": int(h.max())},
        "board_longer_side": {
            "mean": float(board_max.mean()),
            "p99": float(np.percentile(board_max, 99)),
            "p999": float(np.percentile(board_max, 99.9)),
            "max": int(board_max.max()),
        },
        "legal_span_longer_side": {
            "mean": float(span_max.mean()),
            "p99": float(np.percentile(span_max, 99)),
            "p999": float(np.percentile(span_max, 99.9)),
            "max": int(span_max.max()),
        },
        "histogram_legal_span": {int(k): int(v) for k, v in zip(*np.unique(span_max, return_counts=True), strict=True)},
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=1)


if __name__ == "__main__":
    main()
