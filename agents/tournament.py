"""A headless tournament for any players: paired deals, every seating, all cores, ratings.

Contract
--------
``run_tournament(players, ...)`` plays games between player specs
(:mod:`agents.players`: ``random``, ``greedy:EPS``, ``mcts:N``, checkpoints,
``ppo-mcts:...``, ``rllib:...``, ``MODULE:NAME``) or policy objects, and
returns one JSON-ready dict.

*Who meets whom (line-ups).*  A spec given twice (``greedy`` against
``greedy``) is two players, the second named ``greedy#2``.  With ``opponents``, every player of
``players`` (a candidate) meets every opponent: the candidate in one seat,
the opponent in all the others (a gauntlet; with 2 seats, one against one).
Without, every pair of players meets in 2-seat games, and with 3-5 seats
either every combination of that many distinct players (when there are
enough) or, for each pair, each of the two in one seat against the other in
all the others.

*Paired deals, every seating.*  Each line-up plays ``deals`` deals; deal ``d``
is the game seed ``seed + d`` (the same tile order for every line-up and
seating), and on each deal the line-up plays every distinct seating:
``"permutations"`` (every order of the seats) or ``"rotations"`` (each player
in each seat once, the cyclic order kept).  ``"auto"`` is permutations up to
3 seats and rotations for 4-5 (24 and 120 permutations per deal would be too
many).  ``games`` is the number of games per line-up, rounded up to whole
deals.  The luck of the draw cancels within a deal.

*Reproducible, in parallel.*  Every game is a task carrying its deal seed and
one seed per player (from ``numpy.random.SeedSequence([seed, deal, seating,
player])``); players with ``seed()`` are re-seeded before each game.  So the
results do not depend on how many worker processes play them or in which
order (a test checks it), except the seconds per move (wall and CPU) and anything a
``time=`` search budget decides.  Workers are started with ``spawn`` (safe
with torch); each builds its players once from the specs.  Torch runs one
thread per worker (and in this process while it plays with ``workers=1``):
the networks' forward passes are small, and on a busy machine one thread was
9x faster than two (12 vs 99 ms per search leaf, measured with other jobs
running).  A progress bar (tqdm) counts games.

*What is reported.*  Per line-up and player (each seat a player holds counts
as one game): wins (the only best score), shared wins, losses, the win rate
with a 95 % Wilson interval, the mean margin (own score minus the best
other's), the mean score.  Per player over the whole tournament: the same,
seconds per decision (wall clock, and the CPU of the process that decided, all its
threads: the CPU figure holds when other work shares the machine), and a rating.  Ratings: a Bradley-Terry model fitted
to every pair of seats with different players in every game (the one with
the higher score wins the pair; a tie is half a win each), by the MM
algorithm (Hunter 2004), with one virtual tie added to every pair of players
that met (so a player who won everything gets a finite rating), on the Elo
scale (400 log10 of the strength: +191 means a 75 % pairwise win chance),
anchored at 0 for ``anchor`` (default: ``random`` if it plays, else the mean
is 0).  The 95 % interval of a rating is the union of two: the Wald interval
from the model's Fisher information (it treats the pairs as independent) and
the 2.5-97.5 percentile over 200 bootstrap resamples of the deals (all games
of a deal together: it sees the correlation within a deal, but collapses to a
point when one player won every deal).  Players
never connected by games (two separate gauntlets) are rated per connected
group, each anchored at its mean, with a warning.

Output files (:func:`write_csv`, :func:`write_png`): the players' table and
the line-ups' table as CSV, the ratings with their intervals as a PNG drawn
with Pillow.
"""

from __future__ import annotations

import csv
import itertools
import math
import multiprocessing
import operator
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .evaluate import wilson
from .players import make_player

SEATINGS = ("auto", "permutations", "rotations")


class PlayerFailed(ValueError):
    """A player raised or returned an illegal action; the message names it, the seat and the deal."""


BOOTSTRAP = 200


# --------------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class GameTask:
    """One game: which players sit where, on which deal, with which seeds."""

    index: int
    lineup: int
    deal: int
    arrangement: int
    seats: tuple[int, ...]  # player index per seat
    deal_seed: int
    player_seeds: tuple[int, ...]  # per player index of ``seats`` (same order as sorted(set(seats)))


def make_lineups(
    n_players: int, candidates: Sequence[int], opponents: Sequence[int] | None, seats: int
) -> list[tuple[int, ...]]:
    """Line-ups (player index per seat, before seating) as described in the module docstring."""
    if opponents is not None:
        return [(c,) + (o,) * (seats - 1) for c in candidates for o in opponents]
    if seats == 2 or n_players < seats:
        out = []
        for a, b in itertools.combinations(range(n_players), 2):
            out.append((a,) + (b,) * (seats - 1))
            if seats > 2:
                out.append((b,) + (a,) * (seats - 1))
        return out
    return list(itertools.combinations(range(n_players), seats))


def seatings(lineup: tuple[int, ...], mode: str) -> list[tuple[int, ...]]:
    """The distinct seatings of a line-up: every permutation or the cyclic rotations (order kept)."""
    n = len(lineup)
    if mode == "auto":
        mode = "permutations" if n <= 3 else "rotations"
    if mode == "permutations":
        cand = itertools.permutations(lineup)
    elif mode == "rotations":
        cand = (lineup[i:] + lineup[:i] for i in range(n))
    else:
        raise ValueError(f"seating must be one of {SEATINGS}, got {mode!r}")
    out: list[tuple[int, ...]] = []
    for s in cand:
        if s not in out:
            out.append(s)
    return out


def plan(lineups: list[tuple[int, ...]], games: int, seed: int, seating: str) -> tuple[list[GameTask], int]:
    """Every game of the tournament; returns (tasks, deals per line-up)."""
    per_deal = max(len(seatings(lu, seating)) for lu in lineups)
    deals = max(1, math.ceil(games / per_deal))
    tasks = []
    for li, lu in enumerate(lineups):
        arrangements = seatings(lu, seating)
        for d in range(deals):
            for ai, seats in enumerate(arrangements):
                pseeds = tuple(
                    int(np.random.SeedSequence([seed, d, ai, p, li]).generate_state(1)[0]) for p in sorted(set(seats))
                )
                tasks.append(GameTask(len(tasks), li, d, ai, seats, seed + d, pseeds))
    return tasks, deals


# --------------------------------------------------------------------------------- playing
_WORKER: dict[str, Any] = {}


def _build_players(players: Sequence[Any], env_kwargs: dict[str, Any], seed: int) -> list[Any]:
    out = []
    for i, p in enumerate(players):
        out.append(make_player(p, env_kwargs, seed=seed + i) if isinstance(p, str) else p)
    return out


def _init_worker(players: Sequence[Any], env_kwargs: dict[str, Any], seed: int) -> None:
    _WORKER["players"] = _build_players(players, env_kwargs, seed)
    _WORKER["env_kwargs"] = env_kwargs
    if "torch" in sys.modules:  # one torch thread per worker: the workers already use every core
        sys.modules["torch"].set_num_threads(1)


def play_task(
    task: GameTask, players: Sequence[Any] | None = None, env_kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Play one game of the plan; returns its scores and the time each seat spent deciding."""
    import carc_env

    players = players if players is not None else _WORKER["players"]
    env_kwargs = env_kwargs if env_kwargs is not None else _WORKER["env_kwargs"]
    for p, s in zip(sorted(set(task.seats)), task.player_seeds, strict=True):
        seeder = getattr(players[p], "seed", None)
        if callable(seeder):
            seeder(s)
    env = carc_env.raw_env(**env_kwargs)
    env.reset(seed=task.deal_seed)
    game = env.game
    n = len(task.seats)
    seconds = [0.0] * n
    cpu = [0.0] * n
    decisions = [0] * n
    while not game.over:
        seat = game.player
        policy = players[task.seats[seat]]
        try:
            if getattr(policy, "uses_observation", True):
                obs = env.observe(env.agent_selection)
            else:
                obs = {"action_mask": env.match.mask()}
            t0, c0 = time.perf_counter(), time.process_time()
            action = policy.act(obs, env)
            seconds[seat] += time.perf_counter() - t0
            cpu[seat] += time.process_time() - c0  # this process's CPU, all its threads: holds on a busy machine
            decisions[seat] += 1
            env.step(operator.index(action))
        except Exception as exc:
            name = getattr(policy, "name", repr(policy))
            raise PlayerFailed(
                f"player {name} failed in seat {seat}, deal seed {task.deal_seed}, phase {game.phase!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return {"index": task.index, "scores": list(game.scores), "seconds": seconds, "cpu": cpu, "decisions": decisions}


# --------------------------------------------------------------------------------- statistics
def _outcomes(scores: Sequence[int], seat: int) -> tuple[str, int]:
    best_other = max(s for q, s in enumerate(scores) if q != seat)
    own = scores[seat]
    return ("win" if own > best_other else "tie" if own == best_other else "loss"), own - best_other


def _stats(rows: list[tuple[str, int, int]], seed: int | None = None) -> dict[str, Any]:
    """Win/tie/loss counts, Wilson interval, mean margin and score of (outcome, margin, score) rows."""
    g = len(rows)
    wins = sum(1 for r in rows if r[0] == "win")
    ties = sum(1 for r in rows if r[0] == "tie")
    lo, hi = wilson(wins, g)
    out = {
        "games": g,
        "wins": wins,
        "ties": ties,
        "losses": g - wins - ties,
        "win_rate": wins / g if g else 0.0,
        "win_rate_ci95": [round(lo, 4), round(hi, 4)],
        "mean_margin": float(np.mean([r[1] for r in rows])) if g else 0.0,
        "mean_score": float(np.mean([r[2] for r in rows])) if g else 0.0,
    }
    if seed is not None:
        out["seed"] = seed
    return out


def bradley_terry(k: int, wins: np.ndarray, prior: float = 0.5, iters: int = 10000) -> np.ndarray:
    """Bradley-Terry strengths (log10 scale x 400 = Elo) from ``wins[i, j]`` (i beat j; ties counted 0.5).

    ``prior``: virtual wins given each way between every pair that met.  Fitted
    by minorisation-maximisation; the result has mean 0 within each connected group.
    """
    met = (wins + wins.T) > 0
    w = wins + prior * met
    n = w + w.T
    total = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(iters):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), 1.0)
        new = np.maximum(new, 1e-300)
        for comp in _components(met):
            idx = list(comp)
            new[idx] /= np.exp(np.mean(np.log(new[idx])))
        done = np.max(np.abs(np.log(new) - np.log(p))) < 1e-10
        p = new
        if done:
            break
    return 400.0 * np.log10(p)


def _components(met: np.ndarray) -> list[set[int]]:
    k = len(met)
    seen: set[int] = set()
    comps = []
    for s in range(k):
        if s in seen:
            continue
        comp, stack = set(), [s]
        while stack:
            i = stack.pop()
            if i in comp:
                continue
            comp.add(i)
            stack.extend(int(j) for j in np.flatnonzero(met[i]) if j not in comp)
        seen |= comp
        comps.append(comp)
    return comps


def _pair_wins(k: int, games: list[tuple[tuple[int, ...], list[int]]]) -> np.ndarray:
    wins = np.zeros((k, k))
    for seats, scores in games:
        for a, b in itertools.combinations(range(len(seats)), 2):
            pa, pb = seats[a], seats[b]
            if pa == pb:
                continue
            if scores[a] > scores[b]:
                wins[pa, pb] += 1
            elif scores[a] < scores[b]:
                wins[pb, pa] += 1
            else:
                wins[pa, pb] += 0.5
                wins[pb, pa] += 0.5
    return wins


def _anchored(elo: np.ndarray, met: np.ndarray, anchor: int | None) -> np.ndarray:
    elo = elo.copy()
    for comp in _components(met):
        idx = sorted(comp)
        shift = elo[anchor] if anchor is not None and anchor in comp else float(np.mean(elo[idx]))
        elo[idx] -= shift
    return elo


def ratings(
    names: list[str],
    games: list[tuple[tuple[int, ...], list[int], int]],
    anchor: str | None,
    seed: int,
    bootstrap: int = BOOTSTRAP,
) -> tuple[list[float], list[list[float]], list[str]]:
    """Elo-scale Bradley-Terry ratings, bootstrap 95 % intervals over deals, warnings."""
    k = len(names)
    a = names.index(anchor) if anchor in names else None
    wins = _pair_wins(k, [(s, sc) for s, sc, _ in games])
    met = (wins + wins.T) > 0
    warnings = []
    comps = _components(met)
    if len(comps) > 1:
        groups = ["{" + ", ".join(names[i] for i in sorted(c)) + "}" for c in comps]
        warnings.append(f"players in different groups never met; each group is rated on its own: {' '.join(groups)}")
    elo = _anchored(bradley_terry(k, wins), met, a)
    deals = sorted({d for _, _, d in games})
    by_deal: dict[int, list[tuple[tuple[int, ...], list[int]]]] = {d: [] for d in deals}
    for s, sc, d in games:
        by_deal[d].append((s, sc))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xB007]))
    samples = []
    for _ in range(bootstrap if len(deals) > 1 else 0):
        pick = rng.integers(len(deals), size=len(deals))
        sample = [g for i in pick for g in by_deal[deals[i]]]
        w = _pair_wins(k, sample)
        samples.append(_anchored(bradley_terry(k, w), met, a))
    se = _wald_se(wins, elo, a)
    ci = [[float(elo[i] - 1.96 * se[i]), float(elo[i] + 1.96 * se[i])] for i in range(k)]
    if samples:  # the union with the bootstrap's percentile interval
        arr = np.array(samples)
        for i in range(k):
            ci[i] = [
                min(ci[i][0], float(np.percentile(arr[:, i], 2.5))),
                max(ci[i][1], float(np.percentile(arr[:, i], 97.5))),
            ]
    return [float(e) for e in elo], ci, warnings


def _wald_se(wins: np.ndarray, elo: np.ndarray, anchor: int | None, prior: float = 0.5) -> np.ndarray:
    """Standard errors (Elo points) of the fitted ratings from the Fisher information of the BT model."""
    k = len(elo)
    met = (wins + wins.T) > 0
    n = wins + wins.T + 2 * prior * met
    theta = elo * math.log(10) / 400
    pij = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
    info = n * pij * (1 - pij)
    h = np.diag(info.sum(axis=1)) - info
    if anchor is not None and len(_components(met)) == 1:
        keep = [i for i in range(k) if i != anchor]
        cov = np.zeros((k, k))
        if keep:
            cov[np.ix_(keep, keep)] = np.linalg.pinv(h[np.ix_(keep, keep)])
    else:
        cov = np.linalg.pinv(h)
    return np.sqrt(np.maximum(np.diag(cov), 0.0)) * 400 / math.log(10)


def summarize(
    names: list[str],
    lineups: list[tuple[int, ...]],
    tasks: list[GameTask],
    results: list[dict[str, Any]],
    anchor: str | None,
    seed: int,
) -> dict[str, Any]:
    """The report (see the module docstring) from the plan and the games' results (any order)."""
    by_index = {r["index"]: r for r in results}
    per_lineup: list[dict[int, list[tuple[str, int, int]]]] = [{p: [] for p in sorted(set(lu))} for lu in lineups]
    per_player: dict[int, list[tuple[str, int, int]]] = {i: [] for i in range(len(names))}
    secs = [0.0] * len(names)
    cpus = [0.0] * len(names)
    decs = [0] * len(names)
    rated = []
    game_rows = []
    for t in tasks:
        r = by_index[t.index]
        scores = r["scores"]
        for seat, p in enumerate(t.seats):
            outcome, margin = _outcomes(scores, seat)
            row = (outcome, margin, scores[seat])
            per_lineup[t.lineup][p].append(row)
            per_player[p].append(row)
            secs[p] += r["seconds"][seat]
            cpus[p] += r["cpu"][seat]
            decs[p] += r["decisions"][seat]
        rated.append((t.seats, scores, t.deal))
        game_rows.append(
            {
                "lineup": t.lineup,
                "deal": t.deal,
                "deal_seed": t.deal_seed,
                "seats": [names[p] for p in t.seats],
                "scores": scores,
            }
        )
    elo, ci, warnings = ratings(names, rated, anchor, seed)
    players = []
    for i, name in enumerate(names):
        st = _stats(per_player[i])
        players.append(
            {
                "name": name,
                "rating": round(elo[i], 1),
                "rating_ci95": [round(x, 1) for x in ci[i]],
                **st,
                "decisions": decs[i],
                "seconds_per_move": round(secs[i] / decs[i], 5) if decs[i] else None,
                "cpu_seconds_per_move": round(cpus[i] / decs[i], 5) if decs[i] else None,
            }
        )
    lus = []
    for li, lu in enumerate(lineups):
        lus.append(
            {
                "seats": [names[p] for p in lu],
                "games": sum(1 for t in tasks if t.lineup == li),
                "results": {names[p]: _stats(rows) for p, rows in per_lineup[li].items()},
            }
        )
    wins = _pair_wins(len(names), [(s, sc) for s, sc, _ in rated])
    pairwise = []
    for a, b in itertools.combinations(range(len(names)), 2):
        if wins[a, b] + wins[b, a]:
            pairwise.append(
                {
                    "a": names[a],
                    "b": names[b],
                    "a_score": float(wins[a, b]),
                    "b_score": float(wins[b, a]),
                    "pairs": int(round(wins[a, b] + wins[b, a])),
                }
            )
    return {
        "players": players,
        "lineups": lus,
        "pairwise": pairwise,
        "rating_method": (
            "Bradley-Terry on every pair of seats with different players (higher score wins, tie = 0.5 each), "
            "MM fit, one virtual tie per pair that met, Elo scale (400 log10), anchored at "
            f"{anchor if anchor in names else 'the mean'} = 0; 95 % interval: union of the Wald interval (Fisher information) "
            f"and the percentile interval of {BOOTSTRAP} bootstrap resamples of deals"
        ),
        "warnings": warnings,
        "games": game_rows,
    }


# --------------------------------------------------------------------------------- the run
def unique_names(names: Sequence[str]) -> list[str]:
    """The names, a repeated one suffixed ``#2``, ``#3``, ... (a player may meet its own copy)."""
    out: list[str] = []
    for n in names:
        name, k = n, 1
        while name in out:
            k += 1
            name = f"{n}#{k}"
        out.append(name)
    return out


def run_tournament(
    players: Sequence[Any],
    env_kwargs: dict[str, Any] | None = None,
    games: int = 100,
    seed: int = 0,
    opponents: Sequence[Any] | None = None,
    seating: str = "auto",
    workers: int | None = None,
    progress: bool = True,
    anchor: str | None = "random",
    on_game: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Play the tournament and return the report (see the module docstring).

    ``players`` / ``opponents``: player specs or policy objects (objects are
    pickled to the workers; give them a ``name``).  ``workers``: processes
    (default: every core; 1 plays in this process).  The workers are spawned:
    a script calling this with ``workers > 1`` must do so under
    ``if __name__ == "__main__":``.
    """
    env_kwargs = dict(env_kwargs or {"num_players": 2})
    seats = int(env_kwargs.get("num_players", 2))
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {SEATINGS}, got {seating!r}")
    pool = list(players) + list(opponents or [])
    names = unique_names([p if isinstance(p, str) else str(getattr(p, "name", repr(p))) for p in pool])
    if len(pool) < 2:
        raise ValueError("a tournament needs at least two players (or one player and --opponents)")
    cand = list(range(len(players)))
    opp = list(range(len(players), len(pool))) if opponents else None
    lineups = make_lineups(len(pool), cand, opp, seats)
    tasks, deals = plan(lineups, games, seed, seating)
    built = _build_players(pool, env_kwargs, seed)  # validates every spec before anything is played
    workers = (os.cpu_count() or 1) if workers is None else int(workers)
    workers = max(1, min(workers, len(tasks)))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), desc="games", unit="game", dynamic_ncols=True)
    results = []
    t0 = time.time()
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    try:
        if workers == 1:
            if torch is not None:  # small forward passes: one thread is much faster on a busy machine
                torch.set_num_threads(1)
            for t in tasks:
                results.append(play_task(t, built, env_kwargs))
                if bar is not None:
                    bar.update(1)
                if on_game:
                    on_game(len(results), len(tasks))
        else:
            del built
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(workers, initializer=_init_worker, initargs=(pool, env_kwargs, seed)) as mp:
                for r in mp.imap_unordered(play_task, tasks, chunksize=1):
                    results.append(r)
                    if bar is not None:
                        bar.update(1)
                    if on_game:
                        on_game(len(results), len(tasks))
    finally:
        if bar is not None:
            bar.close()
        if threads is not None:
            torch.set_num_threads(threads)
    report = summarize(names, lineups, tasks, results, anchor, seed)
    env_desc = {"num_players": seats, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in env_kwargs.items()}}
    return {
        "env": env_desc,
        "seed": seed,
        "games_per_lineup": len(tasks) // len(lineups),
        "deals_per_lineup": deals,
        "seating": seating if seating != "auto" else ("permutations" if seats <= 3 else "rotations"),
        "mode": "gauntlet" if opponents else "round-robin",
        **report,
        "run": {"workers": workers, "wall_seconds": round(time.time() - t0, 1), "cpu_count": os.cpu_count()},
    }


# --------------------------------------------------------------------------------- merging runs
def merge_reports(reports: Sequence[dict[str, Any]], anchor: str | None = "random", seed: int = 0) -> dict[str, Any]:
    """One report from the reports of several runs of one game configuration (rated together).

    A player name in several reports is one player (give a player the same spec only if it is the same
    player: ``greedy`` is).  Games with the same deal seed share a deal in the bootstrap (the same tile
    order).  The line-ups are the runs' own, in order; ratings, per-player results and pairwise counts
    are recomputed from every game.  Raises ValueError for reports of different configurations or
    without their games."""
    if not reports:
        raise ValueError("nothing to merge: give at least one report")
    env = reports[0].get("env")
    for i, r in enumerate(reports):
        if "games" not in r or "players" not in r or "lineups" not in r:
            raise ValueError(f"report {i} is not a tournament report (no games, players or lineups)")
        if r.get("env") != env:
            raise ValueError(
                f"report {i} is of another game configuration ({r.get('env')} vs {env}); "
                "only runs of one configuration can be rated together"
            )
    names: list[str] = []
    for r in reports:
        for p in r["players"]:
            if p["name"] not in names:
                names.append(p["name"])
    index = {n: i for i, n in enumerate(names)}
    per_player: dict[int, list[tuple[str, int, int]]] = {i: [] for i in range(len(names))}
    secs = [0.0] * len(names)
    cpus: list[float | None] = [0.0] * len(names)  # None: a report without CPU times (written before they were kept)
    decs = [0] * len(names)
    rated = []
    game_rows = []
    lineups = []
    for ri, r in enumerate(reports):
        for p in r["players"]:
            i = index[p["name"]]
            n = int(p.get("decisions") or 0)
            decs[i] += n
            secs[i] += float(p.get("seconds_per_move") or 0.0) * n
            c, before = p.get("cpu_seconds_per_move"), cpus[i]
            cpus[i] = None if before is None or (c is None and n) else before + float(c or 0.0) * n
        for g in r["games"]:
            seats = tuple(index[n] for n in g["seats"])
            scores = g["scores"]
            for seat, pi in enumerate(seats):
                outcome, margin = _outcomes(scores, seat)
                per_player[pi].append((outcome, margin, scores[seat]))
            rated.append((seats, scores, g["deal_seed"]))
            game_rows.append({**g, "lineup": len(lineups) + g["lineup"], "run": ri})
        lineups.extend(r["lineups"])
    elo, ci, warnings = ratings(names, rated, anchor, seed)
    players = [
        {
            "name": name,
            "rating": round(elo[i], 1),
            "rating_ci95": [round(x, 1) for x in ci[i]],
            **_stats(per_player[i]),
            "decisions": decs[i],
            "seconds_per_move": round(secs[i] / decs[i], 5) if decs[i] else None,
            "cpu_seconds_per_move": round(c / decs[i], 5) if decs[i] and c is not None else None,
        }
        for i, (name, c) in enumerate(zip(names, cpus, strict=True))
    ]
    wins = _pair_wins(len(names), [(st, sc) for st, sc, _ in rated])
    pairwise = [
        {
            "a": names[a],
            "b": names[b],
            "a_score": float(wins[a, b]),
            "b_score": float(wins[b, a]),
            "pairs": int(round(wins[a, b] + wins[b, a])),
        }
        for a, b in itertools.combinations(range(len(names)), 2)
        if wins[a, b] + wins[b, a]
    ]
    return {
        "env": env,
        "mode": "merged",
        "runs": [
            {k: r.get(k) for k in ("seed", "games_per_lineup", "deals_per_lineup", "seating", "mode", "run")}
            for r in reports
        ],
        "players": players,
        "lineups": lineups,
        "pairwise": pairwise,
        "rating_method": (
            f"Bradley-Terry as in each run, fitted to the games of {len(reports)} merged runs, anchored at "
            f"{anchor if anchor in names else 'the mean'} = 0; 95 % interval: union of the Wald interval and "
            f"the percentile interval of {BOOTSTRAP} bootstrap resamples of deals (a deal = a deal seed)"
        ),
        "warnings": warnings,
        "games": game_rows,
    }


# --------------------------------------------------------------------------------- outputs
PLAYER_COLUMNS = [
    "name",
    "rating",
    "rating_lo",
    "rating_hi",
    "games",
    "wins",
    "ties",
    "losses",
    "win_rate",
    "win_lo",
    "win_hi",
    "mean_margin",
    "mean_score",
    "seconds_per_move",
    "cpu_seconds_per_move",
]
LINEUP_COLUMNS = [
    "lineup",
    "seats",
    "player",
    "games",
    "wins",
    "ties",
    "losses",
    "win_rate",
    "win_lo",
    "win_hi",
    "mean_margin",
    "mean_score",
]


def write_csv(report: dict[str, Any], players_path: str | Path, lineups_path: str | Path | None = None) -> None:
    """The players' table (ratings, overall results) and, optionally, the line-ups' table."""
    with open(players_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(PLAYER_COLUMNS)
        for p in sorted(report["players"], key=lambda p: -p["rating"]):
            w.writerow(
                [
                    p["name"],
                    p["rating"],
                    *p["rating_ci95"],
                    p["games"],
                    p["wins"],
                    p["ties"],
                    p["losses"],
                    round(p["win_rate"], 4),
                    *p["win_rate_ci95"],
                    round(p["mean_margin"], 2),
                    round(p["mean_score"], 2),
                    p["seconds_per_move"],
                    p.get("cpu_seconds_per_move"),
                ]
            )
    if lineups_path is None:
        return
    with open(lineups_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(LINEUP_COLUMNS)
        for i, lu in enumerate(report["lineups"]):
            for name, st in lu["results"].items():
                w.writerow(
                    [
                        i,
                        " | ".join(lu["seats"]),
                        name,
                        st["games"],
                        st["wins"],
                        st["ties"],
                        st["losses"],
                        round(st["win_rate"], 4),
                        *st["win_rate_ci95"],
                        round(st["mean_margin"], 2),
                        round(st["mean_score"], 2),
                    ]
                )


def write_png(report: dict[str, Any], path: str | Path, title: str | None = None) -> None:
    """A horizontal chart of the ratings with their 95 % intervals (Pillow; no matplotlib needed)."""
    from PIL import Image, ImageDraw, ImageFont

    players = sorted(report["players"], key=lambda p: -p["rating"])
    try:
        font = ImageFont.load_default(size=14)
    except TypeError:  # pragma: no cover - Pillow < 10.1
        font = ImageFont.load_default()
    label_w = max(160, 8 * max(len(p["name"]) for p in players) + 16)
    plot_w, row_h, top, bottom = 520, 30, 44, 44
    w, h = label_w + plot_w + 170, top + row_h * len(players) + bottom
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    vals = [p["rating"] for p in players]
    cis = [x for p in players for x in p["rating_ci95"] if x == x]
    lo, hi = min(vals + cis + [0.0]), max(vals + cis + [0.0])
    pad = max(20.0, 0.08 * (hi - lo))
    lo, hi = lo - pad, hi + pad

    def px(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    d.text(
        (10, 10),
        title or f"Ratings (Elo scale, Bradley-Terry), {report['env'].get('num_players', 2)} players",
        fill="black",
        font=font,
    )
    step = 10 ** math.floor(math.log10(max(hi - lo, 1.0) / 4))
    step *= 5 if (hi - lo) / step > 20 else 2 if (hi - lo) / step > 8 else 1
    v = math.ceil(lo / step) * step
    while v <= hi:
        x = px(v)
        d.line([(x, top - 4), (x, h - bottom)], fill=(225, 225, 225))
        d.text((x - 12, h - bottom + 6), f"{v:g}", fill="gray", font=font)
        v += step
    d.line([(px(0), top - 4), (px(0), h - bottom)], fill=(150, 150, 150))
    for i, p in enumerate(players):
        y = top + i * row_h + row_h // 2
        d.text((10, y - 8), p["name"], fill="black", font=font)
        a, b = p["rating_ci95"]
        if a == a and b == b:
            d.line([(px(a), y), (px(b), y)], fill=(70, 110, 200), width=2)
            d.line([(px(a), y - 6), (px(a), y + 6)], fill=(70, 110, 200), width=2)
            d.line([(px(b), y - 6), (px(b), y + 6)], fill=(70, 110, 200), width=2)
        r = px(p["rating"])
        d.ellipse([(r - 5, y - 5), (r + 5, y + 5)], fill=(200, 60, 40))
        d.text((label_w + plot_w + 10, y - 8), f"{p['rating']:+.0f}  win {p['win_rate']:.2f}", fill="black", font=font)
    img.save(path)


__all__ = [
    "GameTask",
    "PlayerFailed",
    "bradley_terry",
    "make_lineups",
    "merge_reports",
    "plan",
    "play_task",
    "ratings",
    "run_tournament",
    "seatings",
    "summarize",
    "write_csv",
    "write_png",
]
