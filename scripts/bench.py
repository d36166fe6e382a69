#!/usr/bin/env python
"""Benchmark: random legal play through the engines, the envs and PettingZoo peers, side by side.

Prints a readable table with the ratios (or one JSON line with ``--json``).
Every row plays uniformly random legal actions with full observations; the
rows are measured in one process, interleaved in ``--rounds`` rounds so that
a change in the machine's load hits them alike:

* engine alone, one core: ``engine_games_per_s`` (Python reference: ``Game.apply``
  with ``legal_tile_placements`` / ``legal_follower_spots``) and
  ``fast_engine_games_per_s`` (the compiled engine, shuffles included); with
  ``mean_legal_placements`` (legal (cell, rotation) pairs per tile decision),
  ``mean_distinct_placements`` (symmetric rotations once) and ``max_legal_placements``;
* ``carc_env.env()`` (AEC, PettingZoo wrappers on), one core:
  ``env_steps_per_s`` (Python engine) and ``fast_env_steps_per_s`` (compiled);
* the batched vector env (self-play, ``--num-envs`` games): ``vector_env_steps_per_s``
  (Python engine), ``fast_vector_env_steps_per_s`` (compiled, one thread) and
  ``fast_vector_env_steps_per_s_2_threads`` (two threads, two cores);
* PettingZoo classic peers through their ``env()`` with the same loop:
  ``peers`` (connect four, go 9x9, chess; "not installed" when their
  dependencies are missing: ``pip install -e ".[bench]"``);
* ``jit``: the compiled engine's one-time cost, measured in fresh processes:
  compiling (an empty cache) and loading the cache (a second process);
* the machine's own 2-thread ceiling at the moment (with the vector env rows): a
  compiled loop that touches no memory, on one thread and on two
  (``probe_steps_per_s`` and ``probe_steps_per_s_2_threads``): on a machine shared
  with other jobs the second core is only partly there, and the ratio
  "probe 2 threads / 1 thread" says how much of it the vector env's own ratio
  could have had;
* ``vector_thread_repeats`` (``--repeats K``): the vector env's 2 / 1 thread ratio read from K
  pairs of runs made back to back after the rounds (one thread then two, two then one in turn, each
  ``--repeat-seconds``), each pair with the probe's ratio measured right after it: the ratios,
  their median, min and max (a pair where a run counted no work has no ratio: ``None``, counted in
  ``unmeasured``, left out of them; every run times at least one step, so it does not happen here).
  With K >= 1 the ratios "fast_vector 2 threads / 1 thread" and "probe 2 threads / 1 thread" are
  these medians (one run of a row cannot tell the env's slow
  mode from a moment when another job had the second core);
* ``vector_step_breakdown``: where one thread's CPU time goes in a batched step
  of the compiled vector env (kernel, the work a step does ahead for the next,
  the policy's compiled scan of the masks, the rest of ``step()`` and of the
  policy in Python), and the bound that its serial part puts on two threads.

The vector env rows play ``env.step(env.sample_legal_actions(rng))``: one
uniformly random legal action per game (the same actions as the numpy
``random_legal_actions(obs["action_mask"], rng)``, scanned by compiled code on
the env's threads); the AEC rows and the peers pick from each mask with numpy.

Speed is measured here and only here (never in a timed test).  Bad arguments
(``--players 6``, ``--expansions foo``, ``--seconds -1``, ``--seed -1``) end the
script with one line naming the argument and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from carc_env.core import Game, GameConfig, Pass, PlaceFollower, PlaceTile  # noqa: E402

TARGETS = {  # the bars of issue #17 (base game, 2 players)
    "fast_vector_env_steps_per_s_2_threads": 50_000,
    "fast_vector_env_steps_per_s": 25_000,
    "fast_env_steps_per_s": 10_000,
    "fast_engine_games_per_s": 5_000,
}


WARM_UP_S = 0.3
"""Seconds of each row's warm-up run (not counted), or its measured time if shorter."""

_QUIET = False


def progress(text: str) -> None:
    """One line on stderr saying what is being measured (``--quiet`` silences it)."""
    if not _QUIET:
        print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def play_random(config: GameConfig, seed: int, stats: dict) -> Game:
    game = Game(config, seed=seed)
    rng = np.random.default_rng(seed + 1_000_003)
    while not game.over:
        if game.phase == "tile":
            legal = game.legal_tile_placements()
            n = len(legal)
            stats["decisions"] += 1
            stats["legal"] += n
            stats["distinct"] += game.count_legal_placements(distinct=True)
            stats["max"] = max(stats["max"], n)
            x, y, r = legal[rng.integers(n)]
            game.apply(PlaceTile(int(x), int(y), int(r)))
            stats["turns"] += 1
        elif game.phase == "follower":
            spots = game.legal_follower_spots()
            c = int(rng.integers(len(spots) + 1))
            game.apply(Pass() if c == len(spots) else PlaceFollower(spots[c]))
        else:  # expansion decisions: uniform over the legal actions
            acts = game.legal_actions()
            game.apply(acts[int(rng.integers(len(acts)))])
    return game


class Row:
    """One measurement accumulated over rounds: work units and seconds (wall and process CPU)."""

    def __init__(self) -> None:
        self.units = 0.0
        self.seconds = 0.0
        self.cpu = 0.0
        self.extra: dict = {}

    def add(self, units: float, seconds: float, cpu: float = 0.0) -> None:
        self.units += units
        self.seconds += seconds
        self.cpu += cpu

    @property
    def rate(self) -> float:
        return self.units / self.seconds if self.seconds else 0.0


def engine_round(config: GameConfig, seconds: float, seed: int, row: Row, stats: dict) -> None:
    games = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    while True:
        play_random(config, seed + int(row.units) + games, stats)
        games += 1
        if time.perf_counter() - t0 >= seconds:
            break
    row.add(games, time.perf_counter() - t0, time.process_time() - c0)


def fast_engine_round(batch, seconds: float, seed: int, row: Row, stats: dict) -> None:
    games = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    chunk = 50
    while True:
        first = seed + int(row.units) + games
        out = batch.play_random(range(first, first + chunk), rng_seed=first)
        games += chunk
        for k in ("decisions", "legal"):
            stats[k] += out[k]
        stats["max"] = max(stats["max"], out["max_legal"])
        if time.perf_counter() - t0 >= seconds:
            break
    row.add(games, time.perf_counter() - t0, time.process_time() - c0)


_SPIN = None


def _spin():
    """The probe's compiled loop (no memory traffic, GIL released): a fixed amount of work per call."""
    global _SPIN
    if _SPIN is None:
        from numba import njit

        @njit(nogil=True)
        def spin(n):
            x = 1
            for _ in range(n):
                x = (x * 6364136223846793005 + 1442695040888963407) % 1000000007
            return x

        spin(1)
        _SPIN = spin
    return _SPIN


def probe_round(threads: int, seconds: float, row: Row) -> None:
    """Calls of the spin loop (about a millisecond each) made by ``threads`` threads in ``seconds``, each
    thread making at least one call (a thread that got no core in a short window still times a call)."""
    import threading

    spin = _spin()
    counts = [0] * threads
    t0 = time.perf_counter()
    c0 = time.process_time()
    deadline = t0 + seconds

    def loop(k: int) -> None:
        while True:
            spin(200_000)
            counts[k] += 1
            if time.perf_counter() >= deadline:
                break

    others = [threading.Thread(target=loop, args=(k,)) for k in range(1, threads)]
    for t in others:
        t.start()
    loop(0)
    for t in others:
        t.join()
    row.add(sum(counts), time.perf_counter() - t0, time.process_time() - c0)


_PINGPONG = None


def pingpong_ns(rounds: int = 5_000) -> float:
    """Nanoseconds per round trip of one cache line between two threads: each thread waits (spinning,
    GIL released) for the other's atomic increment of a shared counter, then increments it itself.
    A diagnostic of the vector env's 2-thread rows, whose step hands chunks and a control line between
    the threads: on one machine it is steady; a rise of this figure in a slow pair says the two cores
    got further apart (another cache, another socket) while the pair ran."""
    import threading

    global _PINGPONG
    if _PINGPONG is None:
        from numba import njit

        from carc_env.fast.vector_kernels import atomic_add, atomic_load, relax

        @njit(nogil=True)
        def bounce(flag, me, n):
            for i in range(n):
                want = 2 * i + me
                while atomic_load(flag, 0) != want:
                    relax()
                atomic_add(flag, 0, 1)
            return n

        bounce(np.zeros(1, np.int64), 0, 1)
        _PINGPONG = bounce
    flag = np.zeros(8, np.int64)
    other = threading.Thread(target=_PINGPONG, args=(flag, 1, rounds))
    t0 = time.perf_counter()
    other.start()
    _PINGPONG(flag, 0, rounds)
    other.join()
    return (time.perf_counter() - t0) / rounds * 1e9


def _busy() -> tuple[float, float, float] | None:
    """CPU-seconds the whole machine and this process have run so far, and the wall clock (Linux's
    ``/proc``; None elsewhere)."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
        with open("/proc/self/stat") as f:
            own = f.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    machine = sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait
    return machine / hz, (int(own[11]) + int(own[12])) / hz, time.perf_counter()


def thread_repeats(k: int, seconds: float, one, two) -> dict:
    """``k`` pairs of runs of the vector env on 1 and 2 threads (``one`` / ``two``: a row's measuring
    function), back to back, the order alternating (1 then 2, then 2 then 1, ...), each pair followed by
    the probe on 1 and 2 threads (``seconds / 2`` each): every pair's 2 / 1 ratio and the probe's, their
    medians, mins and maxes, and the cores other processes kept busy during each pair (``others``:
    their CPU-seconds per second, from ``/proc``; a pair with ``others`` near 0 had the machine to
    itself: ``quiet_median`` is the median of the pairs under 0.1), and after each pair the round trip
    of a cache line between two threads (:func:`pingpong_ns`, ``pingpong_ns``).

    A pair whose run on either side counted no work (a rate of 0: no step finished in its window) has
    no ratio: it is listed as None in ``ratios`` (``probe_ratios`` alike), counted in ``unmeasured``
    (``probe_unmeasured``) and left out of the medians, mins and maxes, which are None when no pair was
    measured. (The measuring loops here time at least one step, so this guards the report, not them.)"""
    ratios, probes, others, pings = [], [], [], []
    for i in range(k):
        a, b = Row(), Row()
        before = _busy()
        for fn, row in ((one, a), (two, b)) if i % 2 == 0 else ((two, b), (one, a)):
            progress(f"repeat {i + 1}/{k}: vector env on {1 if row is a else 2} thread(s)")
            fn(row, seconds)
        after = _busy()
        if before and after:
            others.append(round(max(0.0, (after[0] - before[0]) - (after[1] - before[1])) / (after[2] - before[2]), 2))
        pa, pb = Row(), Row()
        probe_round(1, seconds / 2, pa)
        probe_round(2, seconds / 2, pb)
        pings.append(round(pingpong_ns(), 1))
        ratios.append(_pair_ratio(b, a))
        probes.append(_pair_ratio(pb, pa))
        if ratios[-1] is None or probes[-1] is None:
            progress(f"repeat {i + 1}/{k}: a run counted no work in its window: the pair is left unmeasured")
    measured = [r for r in ratios if r is not None]
    measured_probes = [r for r in probes if r is not None]
    # (no others where /proc is missing)
    quiet = [r for r, o in zip(ratios, others, strict=False) if o < 0.1 and r is not None]
    return {
        "seconds": seconds,
        "ratios": ratios,
        "probe_ratios": probes,
        "others": others,
        "pingpong_ns": pings,
        "unmeasured": k - len(measured),
        "probe_unmeasured": k - len(measured_probes),
        "median": _stat(np.median, measured),
        "min": _stat(min, measured),
        "max": _stat(max, measured),
        "probe_median": _stat(np.median, measured_probes),
        "probe_min": _stat(min, measured_probes),
        "quiet_pairs": len(quiet),
        "quiet_median": _stat(np.median, quiet),
    }


def _pair_ratio(two: Row, one: Row) -> float | None:
    """``two``'s rate over ``one``'s, or None when either counted no work (no ratio, not a ratio of 0)."""
    return round(two.rate / one.rate, 3) if two.rate > 0 and one.rate > 0 else None


def _stat(fn, values: list) -> float | None:
    return round(float(fn(values)), 2) if values else None


def jit_cost(kw: dict) -> dict:
    """Seconds a fresh process spends compiling the kernels (empty cache), then loading them (cached)."""
    code = (
        "import time, json, numpy as np\n"
        "t0 = time.perf_counter(); c0 = time.process_time()\n"
        "from carc_env.env.options import EnvOptions\n"
        "from carc_env.fast.engine import FastBatch\n"
        "from carc_env.env.bench import random_legal_actions\n"
        "t1 = time.perf_counter()\n"
        f"fb = FastBatch(EnvOptions.from_kwargs(**{kw!r}), 2)\n"
        "for g in range(2): fb.reset(g, g, prepare_next=True)\n"
        "obs = fb.observe_acting()\n"
        "fb.step(random_legal_actions(obs['action_mask'], np.random.default_rng(0)))\n"
        "fb.sample_rows(fb.observe_acting()['action_mask'], np.random.default_rng(0).random(2))\n"
        "fb.step_game(0, int(np.flatnonzero(fb.mask(0))[0])); fb.observe(0, 1)\n"
        "fb.play_random([1])\n"
        "print(json.dumps({'import_s': t1 - t0, 'first_use_s': time.perf_counter() - t1,\n"
        "                  'cpu_s': time.process_time() - c0}))\n"
    )
    root = os.path.join(os.path.dirname(__file__), "..")
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, CARC_ENV_CACHE_DIR=cache, PYTHONPATH=os.path.abspath(root))
        for label in ("first_process", "cached_process"):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=root)
            if res.returncode:
                return {"error": res.stderr.strip().splitlines()[-1] if res.stderr else "failed"}
            d = json.loads(res.stdout.strip().splitlines()[-1])
            out[f"{label}_s"] = round(d["first_use_s"], 2)  # wall seconds of the first kernel calls
            out[f"{label}_cpu_s"] = round(d["cpu_s"], 2)  # CPU seconds of the whole process (import included)
            out[f"{label}_import_s"] = round(d["import_s"], 2)
            out[f"{label}_total_s"] = round(d["import_s"] + d["first_use_s"], 2)  # wall: import and first use
    return out


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="bench.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    ap.add_argument("--players", type=cli.players, default=2, help="2 to 5")
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys ('base' is added)")
    ap.add_argument(
        "--seconds", type=cli.positive_float, default=10.0, help="time per measurement, split over the rounds (> 0)"
    )
    ap.add_argument("--rounds", type=cli.int_range(1), default=2, help="interleaved rounds (>= 1, default 2)")
    ap.add_argument("--seed", type=cli.seed, default=0, help=">= 0")
    ap.add_argument("--num-envs", type=cli.int_range(1), default=64, help="games in the vector env measurements")
    ap.add_argument("--no-env", action="store_true", help="measure the engines only")
    ap.add_argument("--no-peers", action="store_true", help="skip the PettingZoo peers")
    ap.add_argument(
        "--peers",
        default="connect_four,go_9x9,chess",
        help="comma-separated PettingZoo peers (connect_four, go_9x9, chess)",
    )
    ap.add_argument(
        "--repeats",
        type=cli.int_range(0),
        default=0,
        help="pairs of 1- and 2-thread vector env runs whose ratios' median is the 2 / 1 thread ratio (>= 0)",
    )
    ap.add_argument(
        "--repeat-seconds", type=cli.positive_float, default=1.0, help="seconds of each run of a --repeats pair (> 0)"
    )
    ap.add_argument("--no-jit", action="store_true", help="skip measuring the compile time (two fresh processes)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    global _QUIET
    _QUIET = args.quiet
    peer_names = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peer_names) - {"connect_four", "go_9x9", "chess"})
    if unknown or not peer_names:
        ap.error(f"argument --peers: {args.peers!r}: choose from connect_four, go_9x9, chess (comma-separated)")
    try:
        expansions = cli.expansions(args.players)(args.expansions)
    except argparse.ArgumentTypeError as exc:
        ap.error(f"argument --expansions: {exc}")
    config = GameConfig(num_players=args.players, expansions=expansions)
    kw = {"num_players": args.players, "expansions": expansions}
    result: dict = {
        "config": config.to_dict(),
        "seconds_per_measurement": args.seconds,
        "rounds": args.rounds,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_average_before": [round(v, 2) for v in os.getloadavg()],
    }
    from carc_env.core.config import ruleset
    from carc_env.fast import available, rules_coverage

    rules = ruleset(config)
    # what the games are played with: an expansion may change the configured count (a map plays 9)
    result["followers_per_player"] = rules.followers
    reason = rules_coverage(rules)
    if not available():
        reason = "numba is not available"
    else:
        import numba

        result["numba"] = numba.__version__
    fast_ok = reason is None
    if not fast_ok:
        result["fast_error"] = f"no compiled-engine rows: {reason}"
    per = args.seconds / args.rounds

    # -------------------------------------------------------------- set up every row, then measure in rounds
    rows: dict[str, Row] = {}
    eng_stats = {"decisions": 0, "legal": 0, "distinct": 0, "max": 0, "turns": 0}
    play_random(config, args.seed, dict(eng_stats))  # warm-up (tables, caches)
    rows["engine_games_per_s"] = Row()
    fast_stats = {"decisions": 0, "legal": 0, "max": 0}
    jobs: list = [("engine_games_per_s", lambda r, sec: engine_round(config, sec, args.seed, r, eng_stats))]
    if fast_ok:
        from carc_env.env.options import EnvOptions
        from carc_env.fast.engine import FastBatch

        fb = FastBatch(EnvOptions.from_kwargs(**kw), 1)
        fb.play_random([0])  # compile or load the kernels before measuring
        rows["fast_engine_games_per_s"] = Row()
        jobs.append(("fast_engine_games_per_s", lambda r, sec: fast_engine_round(fb, sec, args.seed, r, fast_stats)))
    env_ok = not args.no_env
    if env_ok:
        try:
            from carc_env.env import bench as env_bench
        except ImportError as exc:  # the env layer is optional for an engine-only checkout
            result["env_error"] = f"env benchmark unavailable: {exc}"
            env_ok = False
    if env_ok:

        def aec(engine: str):
            def run(r: Row, sec: float) -> None:
                d = env_bench.env_benchmark(sec, args.seed, engine=engine, **kw)
                r.add(d["steps"], d["seconds"], d["cpu_seconds"])

            return run

        def vec(engine: str, threads: int | None):
            def run(r: Row, sec: float) -> None:
                d = env_bench.vector_env_benchmark(args.num_envs, sec, args.seed, threads=threads, engine=engine, **kw)
                r.add(d["steps"], d["seconds"], d["cpu_seconds"])

            return run

        specs = [("env_steps_per_s", aec("python")), ("vector_env_steps_per_s", vec("python", None))]
        if fast_ok:
            specs += [("fast_env_steps_per_s", aec("numba")), ("fast_vector_env_steps_per_s", vec("numba", 1))]
            if (result["cpus"] or 1) >= 2:
                specs.append(("fast_vector_env_steps_per_s_2_threads", vec("numba", 2)))
                specs.append(("probe_steps_per_s", lambda r, sec: probe_round(1, sec / 2, r)))
                specs.append(("probe_steps_per_s_2_threads", lambda r, sec: probe_round(2, sec / 2, r)))
        if not args.no_peers:
            for name in [n for n in env_bench.PEERS if n in peer_names]:
                probe = env_bench.pettingzoo_benchmark(name, 0.2, args.seed)
                if "error" in probe:
                    result.setdefault("peers_unavailable", {})[name] = probe["error"]
                    continue

                def peer(name=name):
                    def run(r: Row, sec: float) -> None:
                        d = env_bench.pettingzoo_benchmark(name, sec, args.seed)
                        r.add(d["steps"], d["seconds"], d["cpu_seconds"])

                    return run

                specs.append((f"peer_{name}_steps_per_s", peer()))
        for key, fn in specs:
            rows[key] = Row()
            jobs.append((key, fn))
    # every entry point once before any timing (kernels loaded or compiled, tables built, thread pools
    # started, each row's first game played): what a row measures is then its steady rate
    for key, fn in jobs:
        progress(f"warm-up {key}")
        fn(Row(), min(WARM_UP_S, per))
    if fast_ok and env_ok:
        env_bench.vector_step_breakdown(args.num_envs, min(WARM_UP_S, per), args.seed, **kw)
    for stats in (eng_stats, fast_stats):  # the warm-up's games are not counted
        stats.update(dict.fromkeys(stats, 0))
    for k in range(args.rounds):
        for key, fn in jobs:
            progress(f"round {k + 1}/{args.rounds}: {key}")
            fn(rows[key], per)
    repeats: dict = {}
    if args.repeats and "fast_vector_env_steps_per_s_2_threads" in rows:
        repeats = thread_repeats(args.repeats, args.repeat_seconds, vec("numba", 1), vec("numba", 2))

    # -------------------------------------------------------------- report
    result["engine_games_per_s"] = round(rows["engine_games_per_s"].rate, 2)
    result["engine_turns_per_s"] = round(eng_stats["turns"] / rows["engine_games_per_s"].seconds, 1)
    result["engine_games"] = int(rows["engine_games_per_s"].units)
    result["mean_legal_placements"] = round(eng_stats["legal"] / eng_stats["decisions"], 3)
    result["mean_distinct_placements"] = round(eng_stats["distinct"] / eng_stats["decisions"], 3)
    result["max_legal_placements"] = eng_stats["max"]
    if "fast_engine_games_per_s" in rows:
        result["fast_engine_games_per_s"] = round(rows["fast_engine_games_per_s"].rate, 1)
        result["fast_engine_games"] = int(rows["fast_engine_games_per_s"].units)
        result["fast_mean_legal_placements"] = round(fast_stats["legal"] / max(1, fast_stats["decisions"]), 3)
        result["fast_max_legal_placements"] = fast_stats["max"]
    peers = {}
    for key, row in rows.items():
        if key.startswith("peer_"):
            peers[key[len("peer_") : -len("_steps_per_s")]] = round(row.rate, 1)
        elif key not in result:
            result[key] = round(row.rate, 1)
    if peers:
        result["peers"] = peers
    cpu = {k: round(r.units / r.cpu, 1) for k, r in rows.items() if r.cpu and k != "engine_games_per_s"}
    result["per_cpu_second"] = cpu  # rates per second of this process's CPU time (less sensitive to load)

    def ratio(a: str, b: str) -> float | None:
        va, vb = result.get(a), result.get(b)
        if va is None and a.startswith("peer_"):
            va = peers.get(a[5:])
        if vb is None and b.startswith("peer_"):
            vb = peers.get(b[5:])
        return round(va / vb, 2) if va and vb else None

    ratios = {
        "fast_engine / engine": ratio("fast_engine_games_per_s", "engine_games_per_s"),
        "fast_env / env": ratio("fast_env_steps_per_s", "env_steps_per_s"),
        "fast_env / connect_four": ratio("fast_env_steps_per_s", "peer_connect_four"),
        "env / connect_four": ratio("env_steps_per_s", "peer_connect_four"),
        "fast_vector (1 thread) / vector": ratio("fast_vector_env_steps_per_s", "vector_env_steps_per_s"),
        "fast_vector (2 threads) / vector": ratio("fast_vector_env_steps_per_s_2_threads", "vector_env_steps_per_s"),
        "fast_vector 2 threads / 1 thread": ratio(
            "fast_vector_env_steps_per_s_2_threads", "fast_vector_env_steps_per_s"
        ),
        "probe 2 threads / 1 thread": ratio("probe_steps_per_s_2_threads", "probe_steps_per_s"),
        "fast_vector / connect_four": ratio("fast_vector_env_steps_per_s", "peer_connect_four"),
        "fast_vector (2 threads) / connect_four": ratio("fast_vector_env_steps_per_s_2_threads", "peer_connect_four"),
    }
    if repeats:
        result["vector_thread_repeats"] = repeats
        if repeats["median"] is not None:  # (else the rounds' ratio stands)
            ratios["fast_vector 2 threads / 1 thread"] = repeats["median"]
        if repeats["probe_median"] is not None:
            ratios["probe 2 threads / 1 thread"] = repeats["probe_median"]
    result["ratios"] = {k: v for k, v in ratios.items() if v is not None}
    result["targets"] = {
        k: {"bar": bar, "measured": result.get(k), "met": bool(result.get(k) and result[k] >= bar)}
        for k, bar in TARGETS.items()
        if k in result
    }
    if fast_ok and env_ok:
        progress("vector_step_breakdown")
        result["vector_step_breakdown"] = env_bench.vector_step_breakdown(args.num_envs, per, args.seed, **kw)
    if fast_ok and not args.no_jit:
        progress("compile cost: two fresh processes")
        result["jit"] = jit_cost(kw)
    result["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            if isinstance(v, dict):
                print(f"{k}:")
                for kk, vv in v.items():
                    print(f"  {kk:42s} {vv}")
            else:
                print(f"{k:44s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
