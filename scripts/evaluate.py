#!/usr/bin/env python
"""Headless tournament: any players, paired deals, every seating, all cores, ratings.

    python scripts/evaluate.py runs/default/checkpoint.pt --opponents random,greedy --games 200 --json
    python scripts/evaluate.py random greedy greedy:0.3 mcts:200 --games 40 --out runs/tournament
    python scripts/evaluate.py mcts:500 --opponents greedy --players 3 --games 30
    python scripts/evaluate.py mypolicies:policy --opponents greedy     # def policy(obs, env) -> int

Players (``python scripts/evaluate.py --list`` prints them): ``random``,
``greedy``, ``greedy:EPS``, ``mcts:N[:OPT]...``, a PPO checkpoint path,
``ppo-mcts:PATH[:N]`` (search guided by the checkpoint; a separate agent),
``rllib:PATH``, ``sb3:PATH`` (both sample their masked policy; ``:argmax`` after
the path plays its most likely action), ``MODULE:NAME`` (your own function
``policy(obs, env) -> int``; see agents/players.py).

With ``--opponents``, each player given meets each opponent (one seat against
the opponent in every other seat); without, every pair of players meets (with
one player and no ``--opponents``: against random and greedy).  ``--games`` is
games per line-up, rounded up to whole deals: each deal (game seed ``--seed +
d``) is played with every seating.  Reports, per player, win rate with a 95 %
Wilson interval, mean score margin (own minus the best other), seconds per
decision and a Bradley-Terry rating (Elo scale); details in agents/tournament.py.
``--json`` prints the report as one JSON line (with ``win_rate_vs_<opponent>``
keys when one player meets opponents); ``--out DIR`` writes report.json,
players.csv, lineups.csv and ratings.png there.  ``--merge A/report.json
B/report.json ...`` rates the games of earlier runs (same configuration)
together, e.g. one budget per run.  Bad arguments give one line
naming the argument, the value and what is allowed, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from agents.players import PlayerSpecError, make_player, player_kinds  # noqa: E402
from agents.tournament import SEATINGS, merge_reports, run_tournament, write_csv, write_png  # noqa: E402

PROG = "evaluate.py"


def _fail(message: str) -> int:
    return cli.fail(PROG, message)


def _file_target(flag: str, value: str | None) -> str | None:
    """Refuse an output file whose folder does not exist (before any game is played)."""
    if value is None:
        return None
    parent = Path(value).expanduser().resolve().parent
    if not parent.is_dir():
        return f"argument {flag}: folder {str(parent)!r} of {value!r} does not exist (create it first)"
    if Path(value).is_dir():
        return f"argument {flag}: {value!r} is a folder; give a file name"
    return None


def _check_outputs(args: argparse.Namespace) -> str | None:
    """The problem with --csv, --png or --out (the folder is created), or None."""
    for flag in ("--csv", "--png"):
        bad = _file_target(flag, getattr(args, flag[2:]))
        if bad:
            return bad
    if args.out is not None:
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            return f"argument --out: {args.out!r} is a file; give a folder"
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"argument --out: cannot create folder {args.out!r} ({exc.strerror})"
    return None


def _key(name: str) -> str:
    return os.path.basename(name).removesuffix(".pt")


def _relative_names(report: Any) -> Any:
    """``report`` with every player name written as the scripts write them now (:func:`agents.cli.relative_spec`:
    an absolute path under the current folder made relative), so that a report written before they did and a
    new one name a checkpoint the same way, and ``--merge`` counts it as one player."""
    if not isinstance(report, dict):
        return report
    name = cli.relative_spec
    for p in report.get("players") or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            p["name"] = name(p["name"])
    for g in report.get("games") or []:
        if isinstance(g, dict) and isinstance(g.get("seats"), list):
            g["seats"] = [name(n) if isinstance(n, str) else n for n in g["seats"]]
    for lu in report.get("lineups") or []:
        if isinstance(lu, dict):
            if isinstance(lu.get("seats"), list):
                lu["seats"] = [name(n) if isinstance(n, str) else n for n in lu["seats"]]
            if isinstance(lu.get("results"), dict):
                lu["results"] = {name(k): v for k, v in lu["results"].items()}
    return report


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("player", nargs="*", help="player specs (see above)")
    ap.add_argument("--opponents", default=None, help="comma-separated opponent specs (each player meets each)")
    ap.add_argument(
        "--games", type=cli.int_range(1), default=200, help="games per line-up, rounded up to whole deals (default 200)"
    )
    ap.add_argument("--players", type=cli.players, default=2, help="seats: 2-5")
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys (default base)")
    ap.add_argument("--seed", type=cli.seed, default=12345, help="deal d is game seed SEED + d")
    ap.add_argument(
        "--engine",
        choices=("auto", "numba", "python"),
        default="auto",
        help="the env option engine (default auto: the compiled engine where it covers the game); python: the "
        "reference engine, e.g. for an agent trained there on a game whose action features it alone models",
    )
    ap.add_argument(
        "--seating",
        choices=SEATINGS,
        default="auto",
        help="every permutation of the seats per deal, or the rotations (auto: permutations up to 3 seats)",
    )
    ap.add_argument("--workers", type=cli.int_range(1), default=None, help="processes (default: every core)")
    ap.add_argument("--anchor", default="random", help="player rated 0 (default random; else the mean is 0)")
    ap.add_argument("--json", action="store_true", help="print the report as one JSON line")
    ap.add_argument("--out", default=None, help="folder for report.json, players.csv, lineups.csv, ratings.png")
    ap.add_argument("--csv", default=None, help="write the players' table (ratings) to this CSV file")
    ap.add_argument("--png", default=None, help="draw the ratings with their intervals to this PNG file")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--list", action="store_true", help="list the player kinds and exit")
    ap.add_argument(
        "--merge",
        nargs="+",
        default=None,
        metavar="REPORT",
        help="rate the games of earlier runs' report.json files together (no game is played)",
    )
    args = ap.parse_args(argv)

    if args.list:
        for kind, help_ in player_kinds().items():
            print(f"{kind:10s} {help_}")
        print(f"{'PATH':10s} a PPO checkpoint file; MODULE:NAME: your own policy(obs, env) -> int")
        return 0
    if args.merge is not None:
        if args.player:
            return _fail("argument --merge: give report files only, no players (the games were played already)")
        reports = []
        for f in args.merge:
            try:
                reports.append(_relative_names(json.loads(Path(f).read_text())))
            except (OSError, ValueError) as exc:
                return _fail(f"argument --merge: cannot read report {f!r} ({exc})")
        try:
            report = merge_reports(reports, anchor=args.anchor, seed=args.seed)
        except ValueError as exc:
            return _fail(f"argument --merge: {exc}")
        bad = _check_outputs(args)
        if bad:
            return _fail(bad)
        return _write_and_print(args, report)
    if not args.player:
        return _fail(
            "give at least one player (e.g. scripts/evaluate.py greedy --opponents random); --list shows the kinds"
        )

    import carc_env
    from carc_env.core.expansion import ConfigError, registry

    expansions = tuple(e.strip() for e in args.expansions.split(",") if e.strip())
    unknown = [e for e in expansions if e not in registry()]
    if not expansions or unknown:
        return _fail(
            f"argument --expansions: {args.expansions!r}: unknown {unknown or 'empty'}; "
            f"allowed: comma-separated keys of {sorted(registry())}"
        )
    env_kwargs = {"num_players": args.players, "expansions": expansions}
    if args.engine != "auto":
        env_kwargs["engine"] = args.engine
    try:
        carc_env.raw_env(**env_kwargs)
    except (ConfigError, ValueError) as exc:
        return _fail(f"argument --expansions / --players: {exc}")
    bad = _check_outputs(args)
    if bad:
        return _fail(bad)

    # a checkpoint under the current directory is named relative to it (the report names no folder of this machine)
    players = [cli.relative_spec(p) for p in args.player]
    opponents = (
        [cli.relative_spec(o.strip()) for o in args.opponents.split(",")] if args.opponents is not None else None
    )
    if opponents is not None and not all(opponents):
        return _fail(f"argument --opponents: {args.opponents!r} has an empty entry; give comma-separated player specs")
    if opponents is None and len(players) == 1:
        opponents = ["random", "greedy"]
    for spec in players + (opponents or []):
        try:  # every spec is checked before a game is played
            make_player(spec, env_kwargs, seed=0)
        except (PlayerSpecError, CheckpointError, ConfigError) as exc:
            where = "--opponents" if opponents and spec in opponents and spec not in players else "player"
            return _fail(f"argument {where}: {exc}")
    try:
        report = run_tournament(
            players,
            env_kwargs,
            games=args.games,
            seed=args.seed,
            opponents=opponents,
            seating=args.seating,
            workers=args.workers,
            progress=not args.no_progress,
            anchor=args.anchor,
        )
    except (PlayerSpecError, CheckpointError, ConfigError, ValueError) as exc:
        return _fail(str(exc))

    if opponents is not None and len(players) == 1:  # the old one-candidate keys
        cand = players[0]
        report = {"candidate": cand, "games_per_opponent": report["games_per_lineup"], **report}
        for opp, lu in zip(opponents, report["lineups"], strict=True):
            res = dict(lu["results"][cand], seed=args.seed)
            report[f"win_rate_vs_{_key(opp)}"] = res["win_rate"]
            report[f"vs_{_key(opp)}"] = res

    return _write_and_print(args, report)


def _write_and_print(args: argparse.Namespace, report: dict) -> int:
    if args.out is not None:
        out = Path(args.out)
        (out / "report.json").write_text(json.dumps(report, indent=1))
        write_csv(report, out / "players.csv", out / "lineups.csv")
        write_png(report, out / "ratings.png")
    if args.csv:
        write_csv(report, args.csv)
    if args.png:
        write_png(report, args.png)
    if args.json:
        print(json.dumps(report))
        return 0
    for w in report["warnings"]:
        print(f"warning: {w}")
    for lu in report["lineups"]:
        head = lu["seats"][0]
        st = lu["results"][head]
        lo, hi = st["win_rate_ci95"]
        print(
            f"{' | '.join(lu['seats'])}: {head} wins {st['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], ties {st['ties']}, "
            f"mean margin {st['mean_margin']:+.1f} over {st['games']} games"
        )
    print(
        f"\n{'player':32s} {'rating':>7s} {'95% interval':>17s} {'games':>6s} {'win rate':>9s} {'margin':>7s} {'s/move':>8s}"
        f" {'cpu s/move':>10s}"
    )
    for p in sorted(report["players"], key=lambda p: -p["rating"]):
        a, b = p["rating_ci95"]
        spm, cpu = p["seconds_per_move"], p.get("cpu_seconds_per_move")
        print(
            f"{p['name'][:32]:32s} {p['rating']:7.0f} {f'[{a:.0f}, {b:.0f}]':>17s} {p['games']:6d} "
            f"{p['win_rate']:9.3f} {p['mean_margin']:+7.1f} {spm if spm is not None else float('nan'):8.4f}"
            f" {cpu if cpu is not None else float('nan'):10.4f}"
        )
    print(f"\n{report['rating_method']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
