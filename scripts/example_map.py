#!/usr/bin/env python
"""Draw ``docs/img/example_map_germany.png``: a game on the map of Germany (Maps - Germany), late on.

Usage::

    python scripts/example_map.py [--seed 3] [--players 3] [--decisions 170] [--out PATH]

Plays ``--decisions`` decisions of a seeded game on ``maps_germany`` with the
greedy baseline for every seat (one-ply: the placement and follower that
score most at once), then writes the picture and prints the text board.  The
board file is an approximation of the printed map (see
``docs/rules/maps_germany.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from carc_env.env.aec import raw_env  # noqa: E402
from carc_env.policies import GreedyPolicy  # noqa: E402
from carc_env.render import render_image, render_text, save_png  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument("--decisions", type=int, default=170)
    ap.add_argument("--tile-px", type=int, default=48)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs/img/example_map_germany.png"
    )
    args = ap.parse_args(argv)
    env = raw_env(num_players=args.players, expansions=("base", "maps_germany"))
    env.reset(seed=args.seed)
    policy = GreedyPolicy(seed=args.seed)
    for _ in range(args.decisions):
        if env.game.over:
            break
        env.step(policy.act({"action_mask": env.match.mask()}, env))
    print(render_text(env.game))
    save_png(render_image(env.game, tile_px=args.tile_px, highlight_legal=True), args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
