#!/usr/bin/env python
"""The benchmark page per configuration: ``scripts/bench.py`` for every configuration issues 29 and 30 name.

Runs one ``scripts/bench.py --json`` per configuration and player count, each in a fresh process (so every
row has connect four measured in the same run, interleaved with it), and writes the side-by-side table:

* ``OUT.json``: the machine, the command, and every run's JSON line as bench.py printed it;
* ``OUT.md``: one table row per run: the compiled engine's games per second (wall and per CPU-second),
  ``carc_env.env()`` AEC / connect four, the vector env (64 games) / connect four on 1 and on 2 threads,
  its 2 / 1 thread ratio next to the probe's (how much of the second core there was), the serial share of
  a 1-thread batched step with its 2-thread bound, and the load.  With ``--repeats K`` (default 5) the
  2 / 1 thread ratio is the median of K pairs of runs made back to back (bench.py's ``--repeats``), shown
  with its min-max, and the probe's ratio the median of the probes made right after each pair; after each
  pair bench.py also times a cache line's round trip between two threads (shown as a range).

The configurations (``--list`` prints them): the base game; each expansion alone; the box (King & Robber
Baron, the Count, The River II, Heretics and Shrines, Darmstadt); every expansion the compiled engine
covers that combine; every expansion that combines; the map (Maps - Germany) with King & Robber Baron,
Shrines and Darmstadt.  A configuration the compiled engine does not cover is measured on the Python
engine and its row says so, with the engine's reason (no crash, no compiled figures).

Progress goes to stderr (one line per run, and bench.py's own lines: ``--quiet`` silences them).  Bad
arguments end the script with one line naming the argument and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents import cli  # noqa: E402

BOX = ("king_robber", "count", "river2", "shrines", "darmstadt")
"""The Count, King & Robber box and Darmstadt (issue 29's whole box)."""
MAP_MIX = ("maps_germany", "king_robber", "shrines", "darmstadt")
"""Issue 30's map configuration."""
MAP_KEY = "maps_germany"


def _allowed(keys: tuple[str, ...], players: int) -> bool:
    from carc_env.core import ConfigError, GameConfig
    from carc_env.core.config import ruleset

    try:
        ruleset(GameConfig(num_players=players, expansions=("base", *keys)))
    except ConfigError:
        return False
    return True


def _compiled(keys: tuple[str, ...], players: int) -> str | None:
    """None where the compiled engine covers the configuration, else its reason."""
    from carc_env.core import GameConfig
    from carc_env.core.config import ruleset
    from carc_env.fast import available, rules_coverage

    if not available():
        return "numba is not available"
    return rules_coverage(ruleset(GameConfig(num_players=players, expansions=("base", *keys))))


def _combining(keys: list[str], players: int) -> tuple[str, ...]:
    """The keys in order, each kept if the rules allow it with those kept before it (the map last: it
    refuses start layouts other expansions lay)."""
    kept: tuple[str, ...] = ()
    for k in sorted(keys, key=lambda k: (k == MAP_KEY, k)):
        if _allowed((*kept, k), players):
            kept = (*kept, k)
    return kept


def configurations(players: int = 2) -> list[tuple[str, tuple[str, ...]]]:
    """``(label, expansion keys)`` of every configuration of the page (base added by bench.py)."""
    import carc_env  # noqa: F401  (registers the built-in expansions)
    from carc_env.core.expansion import registry

    every = sorted(k for k in registry() if k != "base")
    out: list[tuple[str, tuple[str, ...]]] = [("base", ())]
    out += [(k, (k,)) for k in every]
    out.append(("the box (" + ", ".join(BOX) + ")", BOX))
    compiled = [k for k in every if _compiled((k,), players) is None]
    both = _combining(compiled, players)
    out.append((f"every compiled expansion that combines ({len(both)})", both))
    allk = _combining(every, players)
    if allk != both:
        out.append((f"every expansion that combines ({len(allk)})", allk))
    out.append(("the map with " + ", ".join(MAP_MIX[1:]), MAP_MIX))
    return [(label, keys) for label, keys in out if all(k in registry() for k in keys)]


def run_one(keys: tuple[str, ...], players: int, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        "scripts/bench.py",  # (run in ROOT: the command recorded is the one a reader types there)
        "--json",
        "--players",
        str(players),
        "--expansions",
        ",".join(keys) or "base",
        "--seconds",
        str(args.seconds),
        "--rounds",
        str(args.rounds),
        "--peers",
        "connect_four",
        "--no-jit",
        "--repeats",
        str(args.repeats),
        "--repeat-seconds",
        str(args.repeat_seconds),
    ]
    if args.quiet:
        cmd.append("--quiet")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = "python " + " ".join(cmd[1:])
    res = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=None, text=True)
    if res.returncode:
        return {"error": f"bench.py exited with status {res.returncode}", "command": command}
    return {**json.loads(res.stdout.strip().splitlines()[-1]), "command": command}


def _num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def table(runs: list[dict]) -> str:
    head = (
        "| configuration | players | engine | engine games/s | engine games per CPU-s | AEC / connect four (wall) "
        "| AEC / connect four (per CPU-s) | vector 1 thread / connect four (per CPU-s) "
        "| vector 2 threads / connect four (wall) | vector 2 / 1 threads (wall) | probe 2 / 1 threads (wall) "
        "| serial share (bound) | load |"
    )
    lines = [head, "|" + "---|" * 13]
    for r in runs:
        label, players = r["label"], r["players"]
        if "error" in r:
            lines.append(f"| {label} | {players} | {r['error']} |" + " |" * 10)
            continue
        ratios = r.get("ratios", {})
        cpu = r.get("per_cpu_second", {})
        c4_cpu = cpu.get("peer_connect_four_steps_per_s")
        load = r.get("load_average_before", [None])[0]
        if "fast_error" in r:
            reason = r["fast_error"].replace("no compiled-engine rows: ", "")
            aec = ratios.get("env / connect_four")
            aec_cpu = cpu.get("env_steps_per_s")
            lines.append(
                f"| {label} | {players} | Python only: {reason} | {_num(r.get('engine_games_per_s'), 1)} | – "
                f"| {_num(aec, 2)} | {_num(aec_cpu / c4_cpu if aec_cpu and c4_cpu else None, 2)} | – | – | – | – | – "
                f"| {_num(load, 1)} |"
            )
            continue
        fe_cpu = cpu.get("fast_engine_games_per_s")
        aec_cpu = cpu.get("fast_env_steps_per_s")
        v1 = cpu.get("fast_vector_env_steps_per_s")
        bd = r.get("vector_step_breakdown", {})
        serial = f"{bd['serial_share']:.2f} ({bd['amdahl_2_threads']:.2f})" if bd else "–"
        rep = r.get("vector_thread_repeats")
        pings = rep.get("pingpong_ns") if rep else None
        pp = f"; cache line {min(pings):.0f}-{max(pings):.0f} ns" if pings else ""
        spread = probe_spread = ""
        if rep:  # (a pair that counted no work has no ratio: bench.py leaves it out, "unmeasured")
            n = len(rep["ratios"])
            pairs = f"{n - rep['unmeasured']} of {n} pairs measured" if rep.get("unmeasured") else f"{n} pairs"
            ends = f"{rep['min']:.2f}-{rep['max']:.2f}, " if rep["min"] is not None else ""
            spread = f" ({ends}{pairs}{pp})"
            probe_spread = f" (min {rep['probe_min']:.2f})" if rep["probe_min"] is not None else ""
        lines.append(
            f"| {label} | {players} | compiled | {_num(r.get('fast_engine_games_per_s'))} | {_num(fe_cpu)} "
            f"| {_num(ratios.get('fast_env / connect_four'), 2)} "
            f"| {_num(aec_cpu / c4_cpu if aec_cpu and c4_cpu else None, 2)} "
            f"| {_num(v1 / c4_cpu if v1 and c4_cpu else None, 2)} "
            f"| {_num(ratios.get('fast_vector (2 threads) / connect_four'), 2)} "
            f"| {_num(ratios.get('fast_vector 2 threads / 1 thread'), 2)}{spread} "
            f"| {_num(ratios.get('probe 2 threads / 1 thread'), 2)}{probe_spread} | {serial} | {_num(load, 1)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="bench_matrix.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", default="2,4", help="comma-separated player counts, 2 to 5 (default 2,4)")
    ap.add_argument("--seconds", type=cli.positive_float, default=4.0, help="bench.py's --seconds per run (> 0)")
    ap.add_argument("--rounds", type=cli.int_range(1), default=2, help="bench.py's --rounds (>= 1)")
    ap.add_argument(
        "--repeats",
        type=cli.int_range(0),
        default=5,
        help="bench.py's --repeats: pairs of 1- and 2-thread vector env runs per row, the ratio their median (>= 0)",
    )
    ap.add_argument("--repeat-seconds", type=cli.positive_float, default=1.0, help="bench.py's --repeat-seconds (> 0)")
    ap.add_argument("--only", default="", help="comma-separated configuration numbers from --list (default: all)")
    ap.add_argument("--out", default="docs/results/bench_matrix", help="path of the .md and .json (no suffix)")
    ap.add_argument("--list", action="store_true", help="print the configurations and exit")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--render", metavar="JSON", help="write OUT.md again from a JSON this script wrote, run nothing")
    args = ap.parse_args(argv)
    if args.render:
        try:
            saved = json.loads(Path(args.render).read_text())
            runs, meta = saved["runs"], {k: v for k, v in saved.items() if k != "runs"}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            ap.error(f"argument --render: {args.render!r} is not a JSON this script wrote ({exc})")
        write(Path(args.out), runs, meta, json_too=False)
        return 0
    try:
        players = [cli.players(p) for p in args.players.split(",") if p.strip()]
    except argparse.ArgumentTypeError as exc:
        ap.error(f"argument --players: {exc}")
    if not players:
        ap.error("argument --players: give at least one player count, e.g. 2,4")
    configs = configurations(players[0])
    if args.list:
        for i, (label, keys) in enumerate(configs):
            print(f"{i:2d}  {label}: {','.join(keys) or 'base'}")
        return 0
    if args.only:
        try:
            picks = [int(x) for x in args.only.split(",") if x.strip()]
        except ValueError:
            picks = [-1]
        if not picks or any(not 0 <= i < len(configs) for i in picks):
            ap.error(f"argument --only: {args.only!r}: numbers 0..{len(configs) - 1} from --list, comma-separated")
        configs = [configs[i] for i in picks]
    jobs = [(label, keys, p) for label, keys in configs for p in players if _allowed(keys, p)]
    runs = []
    t0 = time.time()
    for k, (label, keys, p) in enumerate(jobs):
        if not args.quiet:
            print(f"[bench_matrix {k + 1}/{len(jobs)}, {time.time() - t0:.0f} s] {label}, {p} players", file=sys.stderr)
        r = run_one(keys, p, args)
        r.update(label=label, players=p, expansions=list(keys))
        runs.append(r)
    meta = {
        "command": "python scripts/bench_matrix.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or platform.platform()}",
        "python": platform.python_version(),
    }
    write(Path(args.out), runs, meta)
    return 0


def write(out: Path, runs: list[dict], meta: dict, json_too: bool = True) -> None:
    """``out.md`` (and ``out.json``) of the runs; the table printed too."""
    md = table(runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    if json_too:
        out.with_suffix(".json").write_text(json.dumps({**meta, "runs": runs}, indent=1) + "\n")
    loads = [r["load_average_before"][0] for r in runs if r.get("load_average_before")]
    load = f"load average {min(loads):.1f}-{max(loads):.1f}" if loads else "load not recorded"
    out.with_suffix(".md").write_text(
        f"# bench.py per configuration\n\n`{meta['command']}` ({meta['date']}; {meta['machine']}; Python "
        f"{meta['python']}; {load}); every row one `scripts/bench.py` run (its command in the JSON), connect "
        f"four measured in the same run. Per CPU-second: rates per second of the process's CPU time, less "
        f"disturbed by other jobs than wall time; the 2-thread figures are wall time and mean little when the "
        f"probe (a compiled loop on 1 and 2 threads) shows the second core taken by other jobs "
        f"(probe 2 / 1 well below 2). Where a row shows pairs, its vector 2 / 1 ratio is the median of that many "
        f"pairs of 1- and 2-thread runs made back to back (min-max in brackets, and the range of the round trips "
        f"of a cache line between two threads measured after each pair; each pair's ratio, the probe and round "
        f"trip after it and the CPU other processes used meanwhile are in the JSON's vector_thread_repeats)."
        f"\n\n{md}\n"
    )
    print(md)


if __name__ == "__main__":
    raise SystemExit(main())
