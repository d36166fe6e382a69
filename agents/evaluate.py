"""Seat-swapped evaluation with paired seeds.

For every seed the same deal (draw order) is played once with the candidate
in each seat and the opponent policy in every other seat, so luck of the draw
cancels out between the pair.  Results: wins, shared wins and losses of the
candidate, win rate with a 95 % Wilson interval, mean score margin (own score
minus the best opponent's).

A seedable opponent (``seed(s)``) is restarted for every game from the deal and
the seat, so each game's result depends on them only, not on the order the
games are played in; a network candidate (``act_envs``) plays up to 64 games
side by side with one batched forward per round.

An :class:`EvalHelper` (a second process) can play part of the games of an
order-free evaluation (:func:`order_free`) while this process plays the rest:
the same groups of games, hence the same forwards and the same report, in about
half the wall time on two idle cores (``scripts/main.py`` and the quick
evaluations of ``agents.train.train`` use one).
"""

from __future__ import annotations

import copy
import math
import os
import pickle
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np


def play_game(env_kwargs: dict[str, Any], policies: Sequence[Any], seed: int, keep_env: bool = False) -> Any:
    """Play one game; ``policies[seat]`` acts for each seat.  Returns the final scores (or the env)."""
    import carc_env

    env = carc_env.raw_env(**env_kwargs)
    env.reset(seed=seed)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        env.step(int(policies[seat].act(env.observe(agent), env)))
    return env if keep_env else list(env.game.scores)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def _fresh(policy: Any, seed: int) -> Any:
    """A copy of ``policy`` restarted at ``seed`` (if it is seedable), so a game's result depends on its deal
    and seat only, not on which games were played before it or alongside it."""
    if not hasattr(policy, "seed"):
        return policy
    fresh = copy.deepcopy(policy)
    fresh.seed(seed)
    return fresh


def _groups(jobs: list[tuple[int, int]], batched: bool) -> list[list[int]]:
    """The games played side by side: runs of 64 jobs for a batched (network) candidate, whose forwards
    then see the same boards together however the groups are shared out, else one game each."""
    step = 64 if batched else 1
    return [list(range(lo, min(lo + step, len(jobs)))) for lo in range(0, len(jobs), step)]


def _play_group(
    candidate: Any, opponent: Any, jobs: Sequence[tuple[int, int]], env_kwargs: dict[str, Any]
) -> list[list[int]]:
    """Final scores of the ``(deal seed, candidate seat)`` games ``jobs``, played side by side.  A
    candidate with ``act_envs(envs)`` (a network) decides in all the games waiting for it at once, one
    batched forward; others play game by game."""
    import carc_env

    n = int(env_kwargs.get("num_players", 2))
    batched = hasattr(candidate, "act_envs")
    scores: list[list[int]] = [[] for _ in jobs]
    envs, policies = [], []
    for deal, seat in jobs:
        env = carc_env.raw_env(**env_kwargs)
        env.reset(seed=deal)
        opp = _fresh(opponent, deal * 8 + seat)
        envs.append(env)
        policies.append([candidate if p == seat else opp for p in range(n)])
    active = list(range(len(jobs)))
    while active:
        waiting = []
        for j in active:
            env = envs[j]
            seat = jobs[j][1]
            while not all(env.terminations.values()):
                agent = env.agent_selection
                p = env.possible_agents.index(agent)
                if p == seat and batched:
                    waiting.append(j)
                    break
                env.step(int(policies[j][p].act(env.observe(agent), env)))
            else:
                scores[j] = list(env.game.scores)
        if waiting:
            for j, a in zip(waiting, candidate.act_envs([envs[j] for j in waiting]), strict=True):
                envs[j].step(int(a))
        active = waiting
    return scores


def order_free(candidate: Any, opponent: Any) -> bool:
    """Whether each game's result depends on its deal and seat alone, so the games may be shared out
    between processes: a candidate that never draws at random (``sample`` is False, e.g. a
    :class:`~agents.policy.PPOPolicy` playing its most likely action) against a seedable opponent
    (restarted per game) or another such player."""
    return getattr(candidate, "sample", True) is False and (
        callable(getattr(opponent, "seed", None)) or getattr(opponent, "sample", True) is False
    )


def _jobs(games: int, seed: int, env_kwargs: dict[str, Any]) -> list[tuple[int, int]]:
    n = int(env_kwargs.get("num_players", 2))
    deals = max(1, math.ceil(games / n))
    return [(seed + d, seat) for d in range(deals) for seat in range(n)]


def _summary(jobs: list[tuple[int, int]], results: list[list[int]], seed: int) -> dict[str, Any]:
    total = len(jobs)
    wins = ties = losses = 0
    margins = []
    scores_c = []
    for (_, seat), scores in zip(jobs, results, strict=True):
        best_other = max(s for p, s in enumerate(scores) if p != seat)
        margins.append(scores[seat] - best_other)
        scores_c.append(scores[seat])
        if scores[seat] > best_other:
            wins += 1
        elif scores[seat] == best_other:
            ties += 1
        else:
            losses += 1
    lo, hi = wilson(wins, total)
    return {
        "games": total,
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "win_rate": wins / total,
        "win_rate_ci95": [round(lo, 4), round(hi, 4)],
        "mean_margin": float(np.mean(margins)),
        "mean_score": float(np.mean(scores_c)),
        "seed": seed,
    }


def evaluate(
    candidate: Any,
    opponent: Any,
    games: int,
    seed: int,
    env_kwargs: dict[str, Any],
    progress: Callable[[int, int], None] | None = None,
    helper: EvalHelper | None = None,
) -> dict[str, Any]:
    """Play ``games`` games (rounded up to a multiple of the player count): deals ``seed``, ``seed + 1``,
    ..., each once with the candidate in every seat and the opponent in the others.  A seedable opponent
    (``seed(s)``) is restarted per game from the deal and seat.  ``helper``: an :class:`EvalHelper` that
    plays some of the games in a second process (the same result, see :func:`evaluate_many`)."""
    return evaluate_many([(candidate, opponent, games, seed, env_kwargs)], helper=helper, progress=progress)[0]


Match = tuple[Any, Any, int, int, dict[str, Any]]
"""One evaluation: ``(candidate, opponent, games, seed, env_kwargs)`` as :func:`evaluate` takes them."""


def evaluate_many(
    matches: Sequence[Match],
    helper: EvalHelper | None = None,
    progress: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[], Any] | None = None,
) -> list[dict[str, Any]]:
    """:func:`evaluate` of each match, the reports in order.

    With a started ``helper``, the games of every match whose results cannot depend on the order they
    are played in (:func:`order_free`) are shared with it: this process and the helper take the next
    group of games (:func:`_groups`: the same groups, hence the same batched forwards, as one process
    plays) from one queue until none is left; the helper plays with this process's torch thread count
    and inference mode.  The reports are the same as without a helper, game for game.  ``meanwhile``:
    called in this process once the helper has the games, before this process starts on them (e.g. to
    render a game while the helper plays)."""
    tasks: list[tuple[int, list[int]]] = []
    plans = []
    for m, (candidate, _opponent, games, seed, env_kwargs) in enumerate(matches):
        jobs = _jobs(games, seed, env_kwargs)
        plans.append(jobs)
        tasks += [(m, g) for g in _groups(jobs, hasattr(candidate, "act_envs"))]
    results: list[list[list[int]]] = [[[] for _ in jobs] for jobs in plans]
    total = sum(len(jobs) for jobs in plans)
    done = 0

    def store(task: tuple[int, list[int]], scores: list[list[int]]) -> None:
        nonlocal done
        m, group = task
        for j, s in zip(group, scores, strict=True):
            results[m][j] = s
            done += 1
            if progress:
                progress(done, total)

    def play(task: tuple[int, list[int]]) -> list[list[int]]:
        m, group = task
        candidate, opponent, _, _, env_kwargs = matches[m]
        return _play_group(candidate, opponent, [plans[m][j] for j in group], env_kwargs)

    shared = [t for t in tasks if order_free(*matches[t[0]][:2])]
    if helper is not None and helper.started and len(shared) > 1:
        # the big groups first, so that the queue ends on short ones and neither process waits long
        shared.sort(key=lambda t: -len(t[1]))
        batch = helper.share(matches, [(m, [plans[m][j] for j in g]) for m, g in shared])
        if meanwhile:
            meanwhile()
            meanwhile = None
        for i, scores in batch.run():
            store(shared[i], scores)
        rest = [t for t in tasks if not order_free(*matches[t[0]][:2])]
    else:
        rest = tasks
    if meanwhile:
        meanwhile()
    for task in rest:
        store(task, play(task))
    return [_summary(jobs, res, matches[m][3]) for m, (jobs, res) in enumerate(zip(plans, results, strict=True))]


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _helper_main(conn: Any, state: Any) -> None:
    """The helper process: for each batch it is sent, take the next group of games from the shared
    counter (while the batch is current), play it and send its scores back."""
    import importlib

    for module in ("torch", "carc_env.baselines", "agents.policy"):  # what the usual players need, imported
        try:  # now (while the caller starts up) rather than when the first games arrive
            importlib.import_module(module)
        except ImportError:  # pragma: no cover - torch is in the [train] extra
            pass
    conn.send(("ready", 0, None, None))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        if msg is None:
            return
        batch_id, payload = msg
        try:
            players, tasks, threads, inference = pickle.loads(payload)
        except BaseException:  # noqa: BLE001 - reported to the parent, which plays the batch itself
            conn.send(("error", batch_id, None, traceback.format_exc()))
            continue
        torch = sys.modules.get("torch")
        if torch is not None and threads:
            torch.set_num_threads(threads)  # the parent's count: the same forwards, bit for bit
        while True:
            with state.get_lock():
                if state[0] != batch_id or state[1] >= len(tasks):
                    break
                i = state[1]
                state[1] = i + 1
            m, jobs = tasks[i]
            candidate, opponent, env_kwargs = players[m]
            try:
                if torch is not None and inference:
                    with torch.inference_mode():
                        scores = _play_group(candidate, opponent, jobs, env_kwargs)
                else:
                    scores = _play_group(candidate, opponent, jobs, env_kwargs)
            except BaseException:  # noqa: BLE001 - the parent plays this group itself
                conn.send(("error", batch_id, i, traceback.format_exc()))
                continue
            try:
                conn.send(("done", batch_id, i, scores))
            except (BrokenPipeError, OSError):
                return


class EvalHelper:
    """A second process that plays evaluation games beside this one (:func:`evaluate_many`).

    ``with EvalHelper() as helper: evaluate(..., helper=helper)``.  :meth:`start` spawns it (it
    imports in the background; games are shared out only once it asks for them, so a helper still
    starting costs this process nothing); it is reused for every evaluation until :meth:`close`.  It
    is not started on a machine with one usable core (``start`` returns False).  If it fails or
    stops answering, this process plays its games: the reports never change."""

    def __init__(self, patience: float = 30.0) -> None:
        self.patience = float(patience)
        """Seconds (at least; or five times this process's slowest group) to wait, once this process
        has nothing left to play, for the groups the helper took before playing them here too (a
        helper that stopped answering, or one compiling the engine where no compile cache is kept)."""
        self._proc: Any = None
        self._conn: Any = None
        self._state: Any = None
        self._batch = 0
        self.ready = False
        """Whether the helper has said it is up (its imports done)."""
        self.groups_played = 0
        """Groups of games the helper has played and returned so far (all batches)."""

    @property
    def started(self) -> bool:
        return self._proc is not None

    def start(self) -> bool:
        """Spawn the helper process (once); False where this machine has a single usable core."""
        if self._proc is not None:
            return True
        if usable_cores() < 2:
            return False
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding torch's threads
        self._state = ctx.Array("q", 2)  # [current batch, next group to take]
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_helper_main, args=(child, self._state), daemon=True, name="eval-helper")
        # The helper needs nothing from the caller's main module (the games travel pickled by
        # :meth:`share`, and a player it cannot unpickle is played here), so it is spawned without
        # running that module again: no guard against re-running a script is needed, and less to import.
        main: Any = sys.modules.get("__main__")
        spec, missing = getattr(main, "__spec__", None), object()
        path = main.__dict__.pop("__file__", missing) if main is not None else missing
        try:
            if main is not None:
                main.__spec__ = None
            self._proc.start()
        finally:
            if main is not None:
                main.__spec__ = spec
                if path is not missing:
                    main.__file__ = path
        child.close()
        return True

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the started helper is up (at most ``timeout`` seconds); whether it is."""
        deadline = time.perf_counter() + timeout
        while self._proc is not None and not self.ready and time.perf_counter() < deadline:
            try:
                if self._conn.poll(0.05):
                    kind, *_ = self._conn.recv()
                    self.ready = self.ready or kind == "ready"
            except (EOFError, OSError):
                return False
        return self.ready

    def cpu_seconds(self) -> float:
        """CPU seconds the running helper has used so far (0.0 when none runs or where ``/proc`` cannot
        tell; once closed, the operating system counts it among this process's children)."""
        if self._proc is None or self._proc.pid is None:
            return 0.0
        try:
            with open(f"/proc/{self._proc.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            self._conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self._proc.join(timeout=10)
        if self._proc.is_alive():  # pragma: no cover - a helper stuck in a game
            self._proc.terminate()
            self._proc.join()
        self._conn.close()
        self._proc = None

    def __enter__(self) -> EvalHelper:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def share(self, matches: Sequence[Match], tasks: list[tuple[int, list[tuple[int, int]]]]) -> _SharedBatch:
        """Hand the groups ``tasks`` (``(match index, jobs)``) to the helper; :meth:`_SharedBatch.run`
        then plays the groups it has not taken in this process."""
        self._batch += 1
        batch = _SharedBatch(self, self._batch, matches, tasks)
        torch = sys.modules.get("torch")
        inference = bool(torch is not None and torch.is_inference_mode_enabled())
        threads = torch.get_num_threads() if torch is not None else None
        used = sorted({m for m, _ in tasks})
        try:
            payload = pickle.dumps(
                ({m: (matches[m][0], matches[m][1], matches[m][4]) for m in used}, tasks, threads, inference)
            )
        except Exception as exc:  # noqa: BLE001 - players that cannot travel: this process plays every game
            warnings.warn(f"evaluation helper unused: the players cannot be pickled ({exc})", stacklevel=3)
            batch.solo = True
            return batch
        with self._state.get_lock():
            self._state[0] = self._batch
            self._state[1] = 0
        try:
            self._conn.send((self._batch, payload))
        except (BrokenPipeError, OSError):
            batch.solo = True
        return batch


class _SharedBatch:
    """One batch of groups shared between this process and the helper."""

    def __init__(self, helper: EvalHelper, batch_id: int, matches: Sequence[Match], tasks: list) -> None:
        self.helper = helper
        self.id = batch_id
        self.matches = matches
        self.tasks = tasks
        self.solo = False
        self.results: dict[int, list[list[int]]] = {}
        self.slowest = 0.0

    def _play(self, i: int) -> list[list[int]]:
        m, jobs = self.tasks[i]
        candidate, opponent, _, _, env_kwargs = self.matches[m]
        t = time.perf_counter()
        scores = _play_group(candidate, opponent, jobs, env_kwargs)
        self.slowest = max(self.slowest, time.perf_counter() - t)
        return scores

    def _take(self) -> int | None:
        state = self.helper._state
        with state.get_lock():
            i = state[1]
            if state[0] != self.id or i >= len(self.tasks):
                return None
            state[1] = i + 1
        return i

    def _receive(self, timeout: float) -> list[tuple[int, list[list[int]]]]:
        """The helper's finished groups of this batch that arrive within ``timeout`` seconds."""
        out = []
        conn = self.helper._conn
        try:
            while conn.poll(timeout):
                kind, batch_id, i, data = conn.recv()
                timeout = 0
                if kind == "ready":
                    self.helper.ready = True
                    continue
                if batch_id != self.id:  # a late answer to an earlier batch
                    continue
                if kind == "error":
                    warnings.warn(f"evaluation helper failed; this process plays its games:\n{data}", stacklevel=4)
                    self.solo = True
                    self._stop()
                    continue
                self.helper.groups_played += 1
                if i not in self.results:
                    self.results[i] = data
                    out.append((i, data))
        except (EOFError, OSError):
            self.solo = True
        return out

    def _stop(self) -> None:
        """Let the helper take no more groups of this batch."""
        with self.helper._state.get_lock():
            if self.helper._state[0] == self.id:
                self.helper._state[1] = len(self.tasks)

    def run(self) -> Iterator[tuple[int, list[list[int]]]]:
        """Yield ``(group index, scores)`` of every group, each once, in the order they are finished."""
        if self.solo:
            self._stop()
            for i in range(len(self.tasks)):
                yield i, self._play(i)
            return
        while (k := self._take()) is not None:
            self.results[k] = self._play(k)
            yield k, self.results[k]
            yield from self._receive(0)
        waited_since = time.perf_counter()
        while len(self.results) < len(self.tasks):
            if self.solo or not self.helper._proc.is_alive():
                break
            yield from self._receive(0.05)
            if time.perf_counter() - waited_since > max(self.helper.patience, 5 * self.slowest):
                warnings.warn("evaluation helper too slow; this process plays the games it had taken", stacklevel=3)
                break
        self._stop()
        for i in range(len(self.tasks)):
            if i not in self.results:
                self.results[i] = self._play(i)
                yield i, self.results[i]
