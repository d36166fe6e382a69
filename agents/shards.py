"""Rollouts on several cores: the games of a rollout split into shards, each played by its own process.

A rollout's work is mostly small forwards whose cost is per call, not per board (see
docs/results/main.md, "Where the time goes"), so it cannot use a second core inside one process.
With ``ppo.rollout_workers: k > 1`` the ``num_envs`` game slots are cut into ``k`` shards of
near-equal size (:func:`shard_sizes`); the training process plays the first shard itself and
``k - 1`` helper processes (:class:`ShardPool`) play the others, all at the same time, each on one
torch thread.  Each helper holds a :class:`~agents.ppo.SelfPlayTrainer` of its shard that only
collects: before every rollout it receives the learner's weights, the update count (imitation or
not) and the snapshots it does not have yet; after it, it sends its part of the rollout, which the
trainer joins column by column (:meth:`agents.ppo.Rollout.join`).  With ``ppo.parallel_update`` (the
default) the helpers keep their part and take part in the update too: for every minibatch the
training process sends the current weights and each helper the positions of its own decisions in it,
and sums their gradients with its own (:meth:`agents.ppo.SelfPlayTrainer.grad_part`); the optimiser
step stays in the training process.

Each shard has its own random streams (its generator seeded from the run's seed and the shard's
index), so a run with ``k`` shards is reproducible (and resumes exactly: a checkpoint holds every
shard's games and generators) but is not the run of the same seed with one process.

The first rollout of a process plays the shards one after the other: the training process's shard
first compiles (or loads) the compiled engine, and only then are the helpers started.  On Linux they
are forked, so they inherit the compiled functions and the imports (a helper is ready in
milliseconds) and set torch to one thread before any torch work (as PyTorch's data-loader workers
do); elsewhere they are spawned and load the engine from Numba's cache that the first shard has
just written (two processes compiling one function at the same time could race on its cache files).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import pickle
import sys
import time
import traceback
import warnings
from typing import Any

import numpy as np


def shard_sizes(num_envs: int, shards: int) -> list[int]:
    """``num_envs`` game slots cut into ``shards`` parts of near-equal size, larger parts first."""
    if shards < 1 or shards > num_envs:
        raise ValueError(
            f"ppo.rollout_workers: {shards} is not allowed with ppo.num_envs: {num_envs}; "
            "it must be between 1 and num_envs (each process plays at least one game)"
        )
    base, extra = divmod(num_envs, shards)
    return [base + (1 if j < extra else 0) for j in range(shards)]


def shard_seed(seed: int, index: int) -> int:
    """The seed of shard ``index`` >= 1 of a run seeded ``seed`` (shard 0 is the run's own)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0] & 0x7FFFFFFF)


def _serve(conn: Any, env_kwargs: dict[str, Any], cfg: Any, seed: int, inherited: list[Any]) -> None:
    """A helper process: build the shard's trainer on ``init`` and answer commands until ``close``.

    ``inherited``: the training process's ends of the pipes, which a forked helper holds copies of;
    closed first, so that the helper reads end-of-file (and ends) when the training process dies."""
    for other in inherited:
        other.close()
    import torch

    torch.set_num_threads(1)
    # a forked helper starts in the inference mode of the rollout that started it; its trainer's tensors must be
    # ordinary ones (its network computes gradients for ppo.parallel_update), and each rollout sets its own mode
    with torch.inference_mode(False), torch.enable_grad():
        _commands(conn, env_kwargs, cfg, seed)


def _commands(conn: Any, env_kwargs: dict[str, Any], cfg: Any, seed: int) -> None:
    """A helper's loop: answer the training process's commands until ``close`` or the end of the pipe."""
    from .ppo import SelfPlayTrainer

    trainer: SelfPlayTrainer | None = None
    while True:
        try:
            cmd, arg = conn.recv()
        except EOFError:  # the training process is gone
            return
        try:
            if cmd == "close":
                conn.send(("ok", time.process_time()))  # this helper's CPU seconds, all of its life
                return
            if cmd == "init":
                trainer = SelfPlayTrainer(env_kwargs, cfg, seed=seed)
                if arg is not None:  # a resumed run: this shard's state from the checkpoint
                    trainer.load_state_dict(pickle.loads(arg))
                conn.send(("ok", sorted(trainer.snapshots)))
            elif trainer is None:
                raise RuntimeError(f"command {cmd!r} before init")
            elif cmd == "collect":
                conn.send(("ok", _collect(trainer, arg)))
            elif cmd == "grad":  # its part of a minibatch's gradient (ppo.parallel_update)
                conn.send(("ok", trainer.grad_part(arg)))
            elif cmd == "state":
                conn.send(("ok", pickle.dumps(trainer.state_dict())))
            else:
                raise RuntimeError(f"unknown command {cmd!r}")
        except Exception:  # noqa: BLE001 - the training process raises it with this traceback
            try:
                conn.send(("error", traceback.format_exc()))
            except OSError:  # the training process is gone
                return


def _collect(trainer: Any, arg: dict[str, Any]) -> dict[str, Any]:
    """One rollout of a helper's shard with the learner's current weights and snapshots."""
    import torch

    trainer.net.load_state_dict({k: torch.from_numpy(v) for k, v in arg["weights"].items()})
    trainer.updates = arg["updates"]
    trainer.set_rung(arg.get("rung", 0))  # the training process moves the ladder; its helpers follow
    for key in list(trainer.snapshots):
        if key not in arg["snapshot_ids"]:
            del trainer.snapshots[key]
            trainer._snapshot_nets.pop(key, None)
    for key, weights in arg["new_snapshots"].items():
        trainer.snapshots[key] = {k: torch.from_numpy(v) for k, v in weights.items()}
    before = (trainer.env_steps, trainer.learner_steps, trainer.episodes)
    roll = trainer.collect()
    trainer.last_roll = roll  # the decisions of its gradient parts in the update that follows (ppo.parallel_update)
    recent = trainer.recent
    trainer.recent = []
    return {
        "roll": roll,
        "env_steps": trainer.env_steps - before[0],
        "learner_steps": trainer.learner_steps - before[1],
        "episodes": trainer.episodes - before[2],
        "recent": recent,
        "opponents": list(trainer.opponent),
        "cpu_seconds": time.process_time(),  # this helper's CPU seconds so far (a forked process starts at 0)
    }


class ShardPool:
    """The helper processes of a sharded trainer: one per shard after the first.

    Started by the trainer's first rollout (:meth:`start`), closed by :meth:`close` (also when the
    training process exits: the helpers are daemons and end when their pipe closes)."""

    def __init__(self, env_kwargs: dict[str, Any], cfg: Any, seed: int, sizes: list[int]) -> None:
        from dataclasses import replace

        self.rounds = math.ceil(cfg.steps_per_update / cfg.num_envs)
        self.sizes = sizes
        # fork on Linux (the compiled engine and the imports come along); spawn elsewhere (macOS's and
        # Windows's default: forking there is unsafe with torch's libraries)
        fork = sys.platform.startswith("linux")
        ctx = mp.get_context("fork" if fork else "spawn")
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        for j, size in enumerate(sizes[1:], start=1):
            shard_cfg = replace(cfg, num_envs=size, steps_per_update=self.rounds * size, rollout_workers=1)
            parent, child = ctx.Pipe()
            inherited = [*self.conns, parent] if fork else []  # a spawned helper inherits no descriptors
            proc = ctx.Process(
                target=_serve,
                args=(child, env_kwargs, shard_cfg, shard_seed(seed, j), inherited),
                name=f"carc-rollout-shard{j}",
                daemon=True,
            )
            with warnings.catch_warnings():
                # Python >= 3.12 warns when forking a process with threads (torch's idle OpenMP team, a
                # progress bar's monitor): the helper uses neither (one torch thread, no OpenMP region)
                warnings.filterwarnings("ignore", message=".*multi-threaded.*fork", category=DeprecationWarning)
                proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        self.have: list[set[int]] = [set() for _ in self.conns]  # the snapshot ids each helper holds
        self.opponents: list[list[Any]] = [[] for _ in self.conns]  # each helper's games' opponents
        self.cpu = [0.0 for _ in self.conns]  # each helper's CPU seconds, as of its last answer that gave them

    def _ask(self, j: int, cmd: str, arg: Any = None) -> Any:
        self._send(j, (cmd, arg))
        return self._answer(j)

    def _ended(self, j: int) -> RuntimeError:
        self.procs[j].join(timeout=1)
        return RuntimeError(
            f"rollout shard {j + 1}'s process ended (exit code {self.procs[j].exitcode}); the run can resume "
            "from its last checkpoint"
        )

    def _send(self, j: int, message: Any) -> None:
        try:
            self.conns[j].send(message)
        except OSError as exc:
            raise self._ended(j) from exc

    def _answer(self, j: int) -> Any:
        try:
            status, value = self.conns[j].recv()
        except (EOFError, OSError) as exc:
            raise self._ended(j) from exc
        if status == "error":
            raise RuntimeError(f"rollout shard {j + 1} failed:\n{value}")
        return value

    def start(self, states: list[bytes] | None) -> None:
        """Build each helper's trainer (from its checkpointed state when resuming)."""
        for j in range(len(self.conns)):
            ids = self._ask(j, "init", None if states is None else states[j])
            self.have[j] = set(ids)

    def send_collect(self, weights: dict[str, Any], updates: int, snapshots: dict[int, Any], rung: int = 0) -> None:
        """Start every helper's rollout (they play while the training process plays its own shard), its pool
        player on ``rung`` of ``ppo.player_ladder``.  Arrays, not tensors: torch would send tensors through
        shared memory."""
        for j in range(len(self.conns)):
            new = {k: {name: t.numpy() for name, t in v.items()} for k, v in snapshots.items() if k not in self.have[j]}
            self._send(
                j,
                (
                    "collect",
                    {
                        "weights": weights,
                        "updates": updates,
                        "snapshot_ids": set(snapshots),
                        "new_snapshots": new,
                        "rung": rung,
                    },
                ),
            )
            self.have[j] = set(snapshots)

    def receive_collect(self) -> list[dict[str, Any]]:
        """Every helper's part of the rollout, in shard order."""
        parts = [self._answer(j) for j in range(len(self.conns))]
        for j, part in enumerate(parts):
            self.opponents[j] = part["opponents"]
            self.cpu[j] = float(part["cpu_seconds"])
        return parts

    def send_grad(self, j: int, arg: dict[str, Any]) -> None:
        """Ask helper ``j`` for its part of a minibatch's gradient (:meth:`agents.ppo.SelfPlayTrainer.grad_part`)."""
        self._send(j, ("grad", arg))

    def receive_grad(self, j: int) -> dict[str, Any]:
        """Helper ``j``'s gradient part: ``{"grads": {parameter name: array or None}, "parts": statistics}``."""
        return self._answer(j)

    def cpu_seconds(self) -> float:
        """The helpers' CPU seconds to their last rollout (or to their end, once closed)."""
        return float(sum(self.cpu))

    def states(self) -> list[bytes]:
        """Each helper's trainer state (pickled), for the checkpoint."""
        return [self._ask(j, "state") for j in range(len(self.conns))]

    def close(self) -> None:
        for j, conn in enumerate(self.conns):
            try:
                conn.send(("close", None))
                status, value = conn.recv()
                if status == "ok" and value is not None:
                    self.cpu[j] = float(value)
            except (EOFError, OSError, BrokenPipeError):
                pass
            conn.close()
            self.procs[j].join(timeout=10)
            if self.procs[j].is_alive():
                self.procs[j].terminate()
                self.procs[j].join(timeout=5)
        self.conns, self.procs = [], []
