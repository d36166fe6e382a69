#!/usr/bin/env python
"""Draw ``docs/img/example_expansions.png``: a random game with every built-in expansion, mid-game.

Usage::

    python scripts/example_expansions.py [--seed 143] [--players 5] [--decisions 111] [--out PATH]

Plays ``--decisions`` decisions of a seeded game (King & Robber Baron, the
Count of Carcassonne, The River II, Heretics and Shrines, Darmstadt) with
random legal actions drawn from the env's action mask: an optional decision
(follower, Count phases) takes an action other than ``pass`` with
probability 1 (followers: 1/2), so followers reach the quarters of
Carcassonne.  Then writes the picture (legal cells highlighted) and prints
the text board.  The defaults stop at a ``count_leave`` decision of a
5-player game (picked from a few hundred seeds for showing most at once):
three players wait in quarters, the Count stands on the blacksmith, the King
and the Robber Baron are held, the river is complete, and shrines, churches
and the Darmstadtium lie on the board.  ``--seed 137 --decisions 104`` shows
a follower just sent from a quarter onto a road (in a gold ring).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from carc_env.core import Game, GameConfig  # noqa: E402
from carc_env.encoding import ActionCodec  # noqa: E402
from carc_env.render import render_image, render_text, save_png  # noqa: E402

ALL = ("base", "king_robber", "count", "river2", "shrines", "darmstadt")
OPTIONAL = ("follower", "count_leave", "count_deploy", "count_final")


def play(seed: int, players: int, decisions: int) -> Game:
    game = Game(GameConfig(players, ALL), seed=seed)
    codec = ActionCodec(game.rules)
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        if game.over:
            break
        enabled = np.flatnonzero(codec.mask(game))
        if game.phase in OPTIONAL:
            act = enabled[enabled != codec.ranges[game.phase].stop - 1]
            if len(act) and rng.random() < (0.5 if game.phase == "follower" else 1.0):
                enabled = act
        game.apply(codec.decode(game, int(enabled[rng.integers(len(enabled))])))
    return game


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=143)
    ap.add_argument("--players", type=int, default=5)
    ap.add_argument("--decisions", type=int, default=111)
    ap.add_argument("--tile-px", type=int, default=48)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs/img/example_expansions.png"
    )
    args = ap.parse_args(argv)
    game = play(args.seed, args.players, args.decisions)
    print(render_text(game))
    save_png(render_image(game, tile_px=args.tile_px, highlight_legal=True), args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
