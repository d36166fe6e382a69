"""The first compile shares the helper's entry points with a helper process (carc_env.fast.precompile).

One fresh process on an empty cache plays a short workload that calls every entry point of
``precompile.HELPER`` (a batched step, a one-game step, the engine-alone games, a play-out), on a copy of
the package that keeps only the base game's compiled part (as ``test_fast_cache.py`` does: a smaller
engine, a compilation of about 20 s rather than 45-55 s).  Checked:

* the helper started and compiled at least one of them (its claim), the process the rest;
* each was compiled once in all: one loaded from the helper's compilation is a cache hit with no miss, and
  one compiled by the process has exactly one overload, so the argument types of ``signature_args`` are
  those of the call sites (a wrong one would compile a second overload at the call);
* the games played are the games of the same workload in the test's own process, on the whole package's
  engine compiled without the helper's share (a suite has it compiled or cached by then: no second fresh
  compile of the engine here);
* the helper is gone once the process has exited;
* in a second test, the helper of a process killed by SIGKILL (no ``atexit`` hook runs) stops
  mid-compile on its own;
* and in a third, with the helper off (``CARC_ENV_PRECOMPILE=0``) the import that starts it on an empty
  cache leaves no lock and no claim.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numba")


WORK = """
import hashlib, json, os
import numpy as np
from carc_env.env.options import EnvOptions
from carc_env.fast.engine import FastBatch
from carc_env.fast.precompile import HELPER
from carc_env.fast.seam import engine as E

fb = FastBatch(EnvOptions.from_kwargs(num_players=2), 2)
for g in range(2):
    fb.reset(g, 11 + g, prepare_next=True)
digest = hashlib.sha256()
rng = np.random.default_rng(3)
for _ in range(40):
    obs = fb.observe_acting()
    digest.update(obs["board"].tobytes())
    acts = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in obs["action_mask"]]
    fb.step(np.array(acts, dtype=np.int64))
fb.step_game(0, int(np.flatnonzero(fb.mask(0))[0]))
digest.update(fb.observe(0, 1)["board"].tobytes())
played = fb.play_random([5, 6], rng_seed=2, g=1)
fb.reset(0, 21)
E().play_out(fb.tables, fb.state, 0, 9, -1, 1, 1.0)
module = E()
stats = {n: getattr(module, n).stats for n in HELPER}
print(json.dumps({
    "pid": os.getpid(),
    "file": module.__file__,
    "digest": digest.hexdigest(),
    "played": played,
    "out": fb.scores(0),
    "hits": {n: sum(s.cache_hits.values()) for n, s in stats.items()},
    "misses": {n: sum(s.cache_misses.values()) for n, s in stats.items()},
    "overloads": {n: len(getattr(module, n).overloads) for n in HELPER},
}))
"""


def _run(src: Path, cache: Path) -> dict:
    """The workload in a fresh process on ``src``'s package and the cache ``cache``, the helper on."""
    env = {**os.environ, "PYTHONPATH": str(src), "CARC_ENV_CACHE_DIR": str(cache)}
    for key in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "CARC_ENV_PRECOMPILE"):
        env.pop(key, None)
    res = subprocess.run([sys.executable, "-c", WORK], capture_output=True, text=True, env=env, cwd=src)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _in_this_process() -> dict:
    """The workload's result in the test's own process: the installed package's engine (every plug-in's
    kernels; a suite has it compiled or cached by now), which games without expansions play alike."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(WORK, {})  # noqa: S102 - the module's own workload
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")  # (a zombie nobody has reaped yet has stopped too)
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return stat.parent.exists() or not Path("/proc/self").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the helper runs where a process id can be asked if it lives")
def test_the_helper_compiles_its_share_once_and_the_games_are_the_same(tmp_path, base_only_package):
    from carc_env.fast.precompile import HELPER

    src = base_only_package  # a smaller composed engine: the games below enable no expansion
    shared = _run(src, tmp_path / "with")
    module = Path(shared["file"])
    lock = module.with_name(f"{module.stem}.precompile.lock")
    helper = int(lock.read_text())
    assert helper != shared["pid"]
    claims = {n: int(module.with_name(f"{module.stem}.{n}.claim").read_text()) for n in HELPER}
    assert set(claims.values()) <= {helper, shared["pid"]}
    assert helper in claims.values(), claims  # the helper took the first (the batched step) at least
    for name in HELPER:
        assert module.with_name(f"{module.stem}.{name}.compiled").exists(), name
        if claims[name] == helper:  # loaded from the helper's compilation
            assert (shared["hits"][name], shared["misses"][name]) == (1, 0), name
        else:  # compiled here, once: the call site's types were the signature's
            assert (shared["hits"][name], shared["misses"][name]) == (0, 1), name
        assert shared["overloads"][name] == 1, name

    alone = _in_this_process()  # the whole package's engine, compiled without the helper's share
    assert (shared["digest"], shared["played"], shared["out"]) == (alone["digest"], alone["played"], alone["out"])

    deadline = time.monotonic() + 10
    while _alive(helper) and time.monotonic() < deadline:  # (stopped at the caller's exit, reaped by init)
        time.sleep(0.1)
    assert not _alive(helper)


STARTER = """
import time
from pathlib import Path
from carc_env.fast.seam import engine

module = Path(engine().__file__)  # an empty cache: this starts the helper and returns
print(module, flush=True)
time.sleep(300)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the helper runs where a process id can be asked if it lives")
def test_the_helper_of_a_killed_process_stops_on_its_own(tmp_path, base_only_package):
    env = {**os.environ, "PYTHONPATH": str(base_only_package), "CARC_ENV_CACHE_DIR": str(tmp_path / "cache")}
    for key in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "CARC_ENV_PRECOMPILE"):
        env.pop(key, None)
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True, env=env, cwd=base_only_package
    )
    try:
        module = Path(starter.stdout.readline().strip())
        helper = int(module.with_name(f"{module.stem}.precompile.lock").read_text())
        claim = module.with_name(f"{module.stem}.step_chunks.claim")
        deadline = time.monotonic() + 60
        while not claim.exists() and time.monotonic() < deadline:  # the helper is compiling the batched step
            time.sleep(0.05)
        assert claim.exists() and int(claim.read_text()) == helper
        assert _alive(helper)
        starter.send_signal(signal.SIGKILL)  # no atexit hook runs
        starter.wait(10)
        deadline = time.monotonic() + 5  # the batched step alone takes about 20 s to compile here
        while _alive(helper) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(helper)
        assert not module.with_name(f"{module.stem}.step_chunks.compiled").exists()  # stopped mid-compile
    finally:
        if starter.poll() is None:
            starter.kill()
        starter.wait(10)


def test_the_switch_off_starts_no_helper_on_an_empty_cache(tmp_path, base_only_package):
    """``CARC_ENV_PRECOMPILE=0``: the import that would start the helper on an empty cache (see the test
    above) leaves no lock and no claim; the process compiles everything itself when it plays."""
    env = {**os.environ, "PYTHONPATH": str(base_only_package), "CARC_ENV_CACHE_DIR": str(tmp_path / "cache")}
    for key in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT"):
        env.pop(key, None)
    env["CARC_ENV_PRECOMPILE"] = "0"
    quick = STARTER.replace("time.sleep(300)", "time.sleep(2)")  # time for a helper to show, were one started
    res = subprocess.run([sys.executable, "-c", quick], capture_output=True, text=True, env=env, cwd=base_only_package)
    assert res.returncode == 0, res.stderr[-3000:]
    module = Path(res.stdout.strip().splitlines()[-1])
    assert (tmp_path / "cache") in module.parents  # the composed module, where a helper's lock would be
    assert not list(module.parent.glob("*.claim")) and not list(module.parent.glob("*.lock"))
    # (with the helper on, the same import leaves the lock the killed-process test reads)
