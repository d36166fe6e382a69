#!/usr/bin/env python
"""How two players use Stained Glass against each other: tokens, thieves, steals, windows.

    python scripts/glass_stats.py runs/stained_glass/checkpoint.pt --opponent greedy --deals 50 --seed 30000

Plays 2-player Stained Glass games on the Python engine (the reference's events), each deal (game seed
``--seed + d``) twice with the seats swapped, and counts per player and game, from the game's events (a replay of its record):
tokens drawn from the bag (``TokenDrawn``), thieves placed, tokens stolen and lost to steals, windows
scored during play (their number and points) and at the end of the game (``final_windows``), and the
final score.  Players are the specs of ``scripts/evaluate.py`` (a checkpoint path, ``greedy``,
``random`` ...).  ``--json FILE`` writes the figures.  Bad arguments give one line naming the argument
and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402

ENV = {"num_players": 2, "expansions": ("stained_glass",), "engine": "python"}
COUNTS = (
    "tokens_drawn",
    "thieves",
    "steals",
    "tokens_lost",
    "windows_scored",
    "window_points",
    "final_window_points",
    "score",
)


def replayed(game: Any) -> tuple[list[Any], list[int]]:
    """The events of every action of a finished game (the env keeps none: each action returns its own) and
    the tokens each player held before the first decision (drawn at setup, whose events are not kept), from a
    replay of its record (:func:`carc_env.core.record.replay`, which checks the final scores)."""
    from carc_env.core.record import replay, to_record
    from carc_env.expansions.stained_glass.rules import tokens_held

    record = to_record(game)
    again = replay(record, upto=0)
    start = [len(tokens_held(again, s)) for s in range(len(again.scores))]
    events: list[Any] = []
    for text in record["actions"]:
        events += again.apply(text)
    if again.scores != game.scores:
        raise RuntimeError(f"the replay ends with {again.scores}, the game with {game.scores}")
    return events, start


def tally(events: list[Any], start: list[int], scores: list[int], seat: int) -> dict[str, int]:
    """The counts of one seat in one finished game, from its events (:func:`replayed`)."""
    from carc_env.expansions.stained_glass.rules import ThiefPlaced, TokenDrawn, TokenStolen, WindowScored

    out = dict.fromkeys(COUNTS, 0)
    out["tokens_drawn"] = start[seat]
    for ev in events:
        if isinstance(ev, TokenDrawn) and ev.player == seat:
            out["tokens_drawn"] += 1
        elif isinstance(ev, ThiefPlaced) and ev.player == seat:
            out["thieves"] += 1
        elif isinstance(ev, TokenStolen):
            out["steals"] += ev.player == seat
            out["tokens_lost"] += ev.victim == seat
        elif isinstance(ev, WindowScored) and ev.player == seat:
            if ev.final:
                out["final_window_points"] += ev.points
            else:
                out["windows_scored"] += 1
                out["window_points"] += ev.points
    out["score"] = int(scores[seat])
    return out


def glass_stats(player: Any, opponent: Any, deals: int, seed: int) -> dict[str, dict[str, float]]:
    """Mean counts per game of ``player`` and ``opponent`` over ``deals`` deals played with both seatings."""
    from agents.evaluate import _fresh, play_game

    sums = {"player": dict.fromkeys(COUNTS, 0), "opponent": dict.fromkeys(COUNTS, 0)}
    for d in range(deals):
        for seat in (0, 1):
            opp = _fresh(opponent, (seed + d) * 8 + seat)
            policies = [player, opp] if seat == 0 else [opp, player]
            game = play_game(ENV, policies, seed + d, keep_env=True).game
            events, start = replayed(game)
            for role, s in (("player", seat), ("opponent", 1 - seat)):
                for k, v in tally(events, start, game.scores, s).items():
                    sums[role][k] += v
    games = 2 * deals
    return {role: {k: round(v / games, 3) for k, v in counts.items()} for role, counts in sums.items()}


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="glass_stats.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("player", help="player spec (a checkpoint path, greedy, random, ...)")
    ap.add_argument("--opponent", default="greedy", help="opponent spec (default greedy)")
    ap.add_argument("--deals", type=cli.int_range(1), default=50, help="deals, each played twice (default 50)")
    ap.add_argument("--seed", type=cli.seed, default=30000, help="deal d is game seed SEED + d")
    ap.add_argument("--json", default=None, help="write the figures to this JSON file")
    args = ap.parse_args(argv)

    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        return cli.fail(ap.prog, f"argument --json: the folder of {args.json!r} does not exist (create it first)")
    from agents.players import PlayerSpecError, make_player

    try:
        player = make_player(args.player, dict(ENV), seed=args.seed)
        opponent = make_player(args.opponent, dict(ENV), seed=args.seed + 1)
    except (PlayerSpecError, ValueError) as exc:
        return cli.fail(ap.prog, exc)
    stats = glass_stats(player, opponent, args.deals, args.seed)
    print(f"| per game ({2 * args.deals} games) | " + " | ".join(COUNTS) + " |")
    print("|---|" + "---|" * len(COUNTS))
    for role, name in (("player", args.player), ("opponent", args.opponent)):
        print(f"| {name} | " + " | ".join(f"{stats[role][k]:g}" for k in COUNTS) + " |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"player": args.player, "opponent": args.opponent, "deals": args.deals, "seed": args.seed,
                       "env": {**ENV, "expansions": list(ENV["expansions"])}, "per_game": stats}, fh, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
