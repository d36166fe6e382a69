"""The first compile of the engine on two cores: a helper process compiles entry points meanwhile.

A process that finds the composed engine uncompiled (:func:`carc_env.fast.seam.engine`: an entry point of
:data:`HELPER` not marked compiled in its cache) starts one helper process, ``python -m
carc_env.fast.precompile MODULE``, and goes on.  The entry points of :data:`HELPER` are then shared out:
whoever needs one first *claims* it (a file beside the composed module, holding the process id), compiles
it for the argument types its call site passes (a :class:`~carc_env.fast.engine.FastBatch`'s tables,
state and arrays: :func:`signature_args`) into the shared disk cache and *marks* it done; a process that
needs one claimed by another waits for its mark, then loads it from the cache (Numba's dispatcher looks
there before it compiles).  The helper takes them
in order from the first (the batched step), while the calling process compiles what it needs first (a
reset, an observation) as it always did: the two compilations overlap on the machine's two cores.  On the
project's 2-core machine the helper cut the first process's compile of ``scripts/bench.py``'s workload
by about a fifth (``docs/results/compile.md``, "Session 14", has the pairs).

Nothing else changes: the code compiled is the same, and a process the helper cannot help (one CPU,
Windows, ``CARC_ENV_PRECOMPILE=0``) compiles every entry point itself, as before; a claim whose process
died is taken over.  One helper per cache: a lock file holds its process id, and another process that finds
it alive shares the claims rather than starting a second (the pytest workers, a tournament's worker
processes).  The helper is stopped when the process that started it exits (no compiler outlives the
program that needed it; what it finished stays cached, and the next process claims the rest): by an
``atexit`` hook at a normal exit, and by the helper itself when it finds its parent gone (a process killed
by a signal runs no hook).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HELPER = ("step_chunks", "step_one", "play_random", "play_out")
"""The entry points the helper compiles, in this order (:data:`carc_env.fast.seam.ENTRY_POINTS`): the
batched step, the one-game step, the engine-alone benchmark's games and the search's play-outs.  The
calling process compiles the rest as it reaches them: a reset and an observation come first in every
use, and together they take about as long (28-30 s on the project's machine) as the batched step does
alone in the helper (37 s, every kernel it calls typed from scratch); after it, the helper has typed the
step's kernels, which the others call too (``docs/results/compile.md``, "Session 14", has the split)."""

ENV = "CARC_ENV_PRECOMPILE"
"""``0``: no helper (this process compiles every entry point it calls); the helper runs with it."""

PARENT_POLL_S = 0.25
"""How often the helper asks whether the process that started it still runs."""

WAIT_S = 600.0
"""The longest a process waits for one mark of a live helper before it compiles the entry point itself."""

_started: list[subprocess.Popen] = []


def _mark(module_path: Path, name: str) -> Path:
    return module_path.with_name(f"{module_path.stem}.{name}.compiled")


def _lock(module_path: Path) -> Path:
    return module_path.with_name(f"{module_path.stem}.precompile.lock")


def _alive(pid: int) -> bool:
    for proc in _started:  # this process's own helper: reaped once it exits (a zombie still answers kill 0)
        if proc.pid == pid:
            return proc.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # (another user's process)
        return True
    return True


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def arrange(module: ModuleType, module_path: Path) -> None:
    """Called by :func:`carc_env.fast.seam.engine` once per process with the composed module: start the
    helper if an entry point of :data:`HELPER` is not marked compiled in this cache and no helper is
    running, and route this process's first use of each unmarked one through :func:`obtain`."""
    if os.environ.get(ENV, "1") == "0" or sys.platform == "win32":  # (Windows: no kill 0 to ask if a pid lives)
        return
    pending = [n for n in HELPER if not _mark(module_path, n).exists()]
    if not pending:
        return
    if _holder(_lock(module_path)) is None:
        if _cpus() < 2:
            return
        _start(module_path)
    entries = {n: getattr(module, n) for n in HELPER}
    held = {n: entries[n] for n in pending}
    for n in pending:
        delattr(module, n)

    lock = threading.Lock()

    def __getattr__(name: str) -> Any:  # (PEP 562: only the names taken out above reach it)
        with lock:  # (two threads: the second finds the name set by the first)
            fn = module.__dict__.get(name) or held.pop(name, None)
            if fn is None:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            setattr(module, name, fn)
        obtain(entries, module_path, name)
        return fn

    module.__getattr__ = __getattr__  # type: ignore[method-assign]


def obtain(entries: dict[str, Any], module_path: Path, name: str) -> None:
    """Make entry point ``name`` of :data:`HELPER` (``entries``: the composed module's dispatchers of
    them) compiled and marked in the cache: compile it here if no live process has claimed it, else wait
    for its mark (a claim whose process has died is taken over).

    The process that waits does not compile another entry point meanwhile: tried, it made the first
    process slower, since what is cheap for the helper after the batched step (the one-game step, the
    play-outs: their kernels typed by then) costs a process that has not typed them 17 s or more."""
    deadline = time.monotonic() + WAIT_S
    while not _mark(module_path, name).exists():
        if _claim(module_path, name):
            _compile(entries, module_path, name)
            return
        if time.monotonic() > deadline:  # pragma: no cover - a helper stuck for ten minutes
            return
        time.sleep(0.02)


def _holder(path: Path) -> int | None:
    """The live process whose id the file at ``path`` (a claim or the lock) holds, or None."""
    try:
        pid = int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and _alive(pid) else None


def _create(path: Path) -> int | None:
    """A file descriptor of ``path`` newly created for writing, taking over a file whose process has died;
    None if a live process holds it (or it cannot be made)."""
    for _ in range(2):
        try:
            return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if _holder(path) is not None:
                return None
            try:  # its process died: take the file over
                path.unlink()
            except OSError:
                return None
        except OSError:
            return None
    return None


def _claim(module_path: Path, name: str) -> bool:
    """Claim the compilation of ``name`` for this process (a file holding its id); False if it is marked
    done or a live process holds the claim (this one's other thread included)."""
    if _mark(module_path, name).exists():
        return False
    fd = _create(module_path.with_name(f"{module_path.stem}.{name}.claim"))
    if fd is None:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    return True


_batch: list[Any] = []


def _compile(entries: dict[str, Any], module_path: Path, name: str) -> None:
    """Compile entry point ``name`` for the argument types of its call site (:func:`signature_args`): it
    is saved to the disk cache; then mark it."""
    if not _batch:
        from ..core.config import GameConfig, ruleset
        from .config import EngineConfig
        from .engine import FastBatch

        _batch.append(signature_args(FastBatch(EngineConfig(ruleset(GameConfig())), 2)))
    fn = entries[name]
    fn.compile(tuple(fn.typeof_pyval(a) for a in _batch[0][name]))
    _mark(module_path, name).touch()


def _start(module_path: Path) -> int | None:
    """Start the helper, holding the lock; its process id, or None if a live process holds the lock."""
    fd = _create(_lock(module_path))
    if fd is None:
        return None
    env = dict(os.environ, **{ENV: "0"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "carc_env.fast.precompile", str(module_path), str(os.getpid())],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with os.fdopen(fd, "w") as f:
        f.write(str(proc.pid))
    if not _started:
        atexit.register(_stop)
    _started.append(proc)
    return proc.pid


def _stop() -> None:
    for proc in _started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a compiler that ignores SIGTERM
                proc.kill()


def signature_args(batch: Any) -> dict[str, tuple[Any, ...]]:
    """For each entry point of :data:`HELPER`, arguments of the types its call site passes, made from
    ``batch`` (a :class:`~carc_env.fast.engine.FastBatch`): what :meth:`FastBatch.step`,
    :meth:`FastBatch.step_legal`, :meth:`FastBatch.play_random` and :meth:`FastPlayout.play_out` call
    them with.  ``tests/fast/test_fast_precompile.py`` checks that a process after the helper compiles none
    of them again."""
    import numpy as np

    from .rng import WORDS as RNG_WORDS

    T, S, G = batch.tables, batch.state, batch.num_games
    rewards, dones, final, eplen, seats, obs = batch._outputs(G)
    actions = np.zeros(G, dtype=np.int64)
    step: tuple[Any, ...] = (actions, True, rewards, dones, final, eplen, True)
    step += (obs["board"], obs["globals"], obs["windows"], obs["action_mask"], seats)
    bags = np.stack([batch.bag_of(0)])
    words = np.zeros((0, RNG_WORDS), dtype=np.int32)
    stats = np.zeros(5, dtype=np.int64)
    return {
        "step_chunks": (T, S, batch._counter, G, 0, 1, *step),
        "step_one": (T, S, 0, -1, 0, 0, 0, batch._scratch_rewards),
        "play_random": (T, S, 0, bags, words, 0, stats),
        "play_out": (T, S, 1, 0, -1, 1, 1.0),
    }


def _follow(parent: int) -> None:
    """End this process as soon as it is no longer the child of ``parent`` (the process that started it
    died: it was re-parented).  A daemon thread: the compiler holds the interpreter between short releases,
    and ``os._exit`` ends it mid-compile, as the ``atexit`` hook's SIGTERM does."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="precompile-parent", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """The helper: compile :data:`HELPER` into the cache of the composed module at ``argv[0]``; with
    ``argv[1]``, the process id of the process that started it, stop when that process is gone."""
    args = sys.argv[1:] if argv is None else argv
    module_path = Path(args[0])
    if len(args) > 1:
        _follow(int(args[1]))
    from .seam import engine

    module = engine()
    if Path(module.__file__ or "").resolve() != module_path.resolve():  # another source: nothing to help with
        return 1
    entries = {n: getattr(module, n) for n in HELPER}
    for name in HELPER:
        obtain(entries, module_path, name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
