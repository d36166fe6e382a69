"""A threaded batched step gives exactly what one thread gives.

The threads of :meth:`carc_env.fast.engine.FastBatch.step` take chunks of
games from one counter inside the compiled code (an atomic add,
:mod:`carc_env.fast.atomic`); every game must be stepped exactly once per
call, whatever thread takes it.  Compared here: every output of every step
(observations byte for byte, rewards, ends, final scores, episode lengths,
seats) and the whole state afterwards, across automatic resets.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from carc_env.core import IllegalActionError  # noqa: E402
from carc_env.env.bench import random_legal_actions  # noqa: E402
from carc_env.env.options import EnvOptions  # noqa: E402
from carc_env.fast.atomic import fetch_add  # noqa: E402
from carc_env.fast.engine import FastBatch  # noqa: E402


def _batch(games: int, threads: int, **kw) -> FastBatch:
    fb = FastBatch(EnvOptions.from_kwargs(**kw), games, threads=threads)
    for g in range(games):
        fb.reset(g, 100 + g, prepare_next=True)
    return fb


@pytest.mark.parametrize("games, threads", [(11, 3), (5, 2)])
def test_threaded_step_is_identical_to_one_thread(games, threads):
    one, many = _batch(games, 1), _batch(games, threads)
    assert many.threads == threads
    obs = one.observe_acting()
    rng = np.random.default_rng(7)
    ended = 0
    for step in range(400):  # several games end and restart in the kernel
        actions = random_legal_actions(obs["action_mask"], rng)
        out_one, out_many = one.step(actions), many.step(actions)
        for k in out_one[0]:
            assert out_one[0][k].tobytes() == out_many[0][k].tobytes(), (step, k)
        for a, b in zip(out_one[1:], out_many[1:], strict=True):
            assert np.array_equal(a, b), step
        ended += int(out_one[2].sum())
        obs = out_one[0]
    assert ended >= games  # the comparison covered in-kernel resets
    for a, b in zip(one.state, many.state, strict=True):
        assert np.array_equal(a, b)
    many.close()


def test_threaded_step_names_an_illegal_action():
    fb = _batch(6, 2)
    actions = random_legal_actions(fb.observe_acting()["action_mask"], np.random.default_rng(0))
    mask = fb.mask(4)
    actions[4] = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="game 4"):
        fb.step(actions)
    fb.close()


def test_helpers_that_slept_step_the_same_games(monkeypatch):
    """The helper threads watch for the next step for a while, then sleep on a condition: a step that finds
    them asleep wakes them (no step is lost or stepped twice); the outputs stay those of one thread."""
    import time

    from carc_env.fast import engine

    monkeypatch.setattr(engine._Helpers, "SPIN_NS", 0)  # they go to sleep at once
    monkeypatch.setattr(engine._Helpers, "WAIT_SPINS", 64)  # and the caller yields while it waits
    one, many = _batch(9, 1), _batch(9, 3)
    obs = one.observe_acting()
    rng = np.random.default_rng(3)
    for step in range(120):
        actions = random_legal_actions(obs["action_mask"], rng)
        if step % 10 == 0:
            time.sleep(0.002)  # every helper is asleep now
        out_one, out_many = one.step(actions), many.step(actions)
        for k in out_one[0]:
            assert out_one[0][k].tobytes() == out_many[0][k].tobytes(), (step, k)
        for a, b in zip(out_one[1:], out_many[1:], strict=True):
            assert np.array_equal(a, b), step
        obs = out_one[0]
    threads = many._helpers.threads
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    many.close()
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive()


def test_a_dropped_batch_stops_its_helpers():
    import gc

    fb = _batch(4, 2)
    fb.step(random_legal_actions(fb.observe_acting()["action_mask"], np.random.default_rng(0)))
    (thread,) = fb._helpers.threads
    del fb
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_pickled_threaded_batch_steps_like_the_original():
    import pickle

    fb = _batch(6, 2)
    acts = random_legal_actions(fb.observe_acting()["action_mask"], np.random.default_rng(1))
    fb.step(acts)
    twin = pickle.loads(pickle.dumps(fb))
    acts = random_legal_actions(fb.observe_acting()["action_mask"], np.random.default_rng(2))
    a, b = fb.step(acts), twin.step(acts)
    for k in a[0]:
        assert a[0][k].tobytes() == b[0][k].tobytes()
    for x, y in zip(a[1:], b[1:], strict=True):
        assert np.array_equal(x, y)
    fb.close()
    twin.close()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_steps_with_helpers_of_its_own():
    """A child forked after the helpers started has none of their threads: its batch starts its own
    (instead of waiting for helpers that do not exist) and steps as the parent does."""
    import hashlib
    import os

    fb = _batch(6, 2)
    rng = np.random.default_rng(4)
    fb.step(random_legal_actions(fb.observe_acting()["action_mask"], rng))  # the helpers run now
    acts = random_legal_actions(fb.observe_acting()["action_mask"], rng)

    def digest() -> bytes:
        out = fb.step(acts)
        h = hashlib.sha256()
        for a in (*out[0].values(), *out[1:]):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.digest()

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: step, report, leave at once
        try:
            os.write(write, digest())
        finally:
            os._exit(0)
    import select
    import signal

    os.close(write)
    child = b""
    while len(child) < 32 and select.select([read], [], [], 60)[0]:  # a child that hangs fails the test
        part = os.read(read, 32)
        if not part:
            break
        child += part
    os.close(read)
    if len(child) < 32:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert child == digest()
    fb.close()


def test_fetch_add_returns_the_value_before_the_addition():
    from numba import njit

    @njit
    def take_all(counter, chunk, n):
        got = np.zeros(n, dtype=np.int64)
        k = 0
        while True:
            lo = fetch_add(counter, 0, chunk)
            if lo >= n:
                return got[:k]
            got[k] = lo
            k += 1

    counter = np.zeros(1, dtype=np.int64)
    assert take_all(counter, 3, 10).tolist() == [0, 3, 6, 9]
    assert counter[0] == 15  # every caller's add stays in the counter (the last one past the end too)


def test_a_late_helper_leaves_its_steps_to_the_caller(monkeypatch):
    """A helper that is not on a core when a step opens does not hold the step up: the calling thread takes
    every chunk, closes the step and runs its ``prepare`` (the next draw orders and output arrays) itself.
    Helpers made late at random here (they may miss steps or join later ones, as timing falls); every output
    stays that of one thread, across automatic resets."""
    import time

    from carc_env.fast import vector_kernels

    real = vector_kernels.wait_go
    seen = {"joined": 0, "missed": 0}
    rng = np.random.default_rng(5)

    def late_wait_go(ctl, done, bad, spin_ns):  # (the helpers call this Python function, not machine code)
        if rng.random() < 0.5:
            time.sleep(0.0005)  # descheduled: the caller goes on alone meanwhile
        status, epoch = real(ctl, done, bad, spin_ns)
        if status >= 0:
            seen["joined"] += 1
        elif epoch != done:
            seen["missed"] += 1
        return status, epoch

    monkeypatch.setattr(vector_kernels, "wait_go", late_wait_go)
    one, many = _batch(7, 1), _batch(7, 2)
    obs = one.observe_acting()
    acts = np.random.default_rng(8)
    ended = 0
    # 300 steps, and on (up to 3,000) until a helper has joined one: with the suite's other worker busy on
    # the other core, a CI run saw 300 steps with no helper scheduled in time to join (0 joins, 11 misses)
    for step in range(3000):
        actions = random_legal_actions(obs["action_mask"], acts)
        out_one, out_many = one.step(actions), many.step(actions)
        for k in out_one[0]:
            assert out_one[0][k].tobytes() == out_many[0][k].tobytes(), (step, k)
        for a, b in zip(out_one[1:], out_many[1:], strict=True):
            assert np.array_equal(a, b), step
        ended += int(out_one[2].sum())
        obs = out_one[0]
        if step >= 299 and seen["joined"] > 0:
            break
    assert ended >= 7
    for a, b in zip(one.state, many.state, strict=True):
        assert np.array_equal(a, b)
    many.close()
    # Helpers joined steps; whether a late one also *missed* a step (arrived while one was closing rather than
    # joining the next open one) depends on the machine's timing, so it is counted, not asserted (a CI run had
    # 300 joins and no miss); the closing path itself is walked step by step by the next test.
    assert seen["joined"] > 0, seen


def test_the_handshake_counts_joins_and_closes_steps():
    """The control array's protocol, step by step (:mod:`carc_env.fast.vector_kernels`): a helper joins an
    open step (the first to join claims its ``prepare``), a closed step is never joined, the caller's
    ``finish`` waits for the helpers that joined and claims ``prepare`` when none did."""
    from carc_env.fast.vector_kernels import (
        C_ACTIVE,
        C_BAD,
        C_CLAIM,
        C_COUNTER,
        C_EPOCH,
        C_LEN,
        C_SLEEP,
        finish,
        publish,
        wait_go,
    )

    ctl = np.zeros(C_LEN, dtype=np.int64)
    assert wait_go(ctl, 0, -1, 0) == (-1, 0)  # no step yet: the helper goes to sleep
    assert ctl[C_SLEEP] == 1 and ctl[C_ACTIVE] == 0
    assert publish(ctl, 1) == 1 and ctl[C_EPOCH] == 1  # the caller is told to wake it
    ctl[C_SLEEP] = 0
    ctl[C_COUNTER] = 4  # the caller is in the kernel (a helper joins only then: the GIL is free)
    assert wait_go(ctl, 0, -1, 0) == (1, 1)  # joined, and claimed prepare
    assert wait_go(ctl, 0, -1, 0) == (0, 1)  # a second helper joins without the claim
    assert ctl[C_ACTIVE] == 2 and ctl[C_CLAIM] == 2
    assert finish(ctl, 1, 1) == -1  # two helpers still at work
    assert wait_go(ctl, 1, 3, 0) == (-1, 1)  # one reports (3 illegal actions) and finds no next step
    assert ctl[C_BAD] == 3 and ctl[C_ACTIVE] == 1
    ctl[C_SLEEP] = 0
    assert wait_go(ctl, 1, 0, 0) == (-1, 1)
    assert finish(ctl, 1, 1) == 0  # everyone is done; a helper had the claim
    # step 2: the caller takes every chunk and closes it before any helper looks
    ctl[C_SLEEP] = ctl[C_CLAIM] = 0
    publish(ctl, 2)
    ctl[C_COUNTER] = 9
    assert finish(ctl, 2, 1) == 1  # nobody joined: prepare is the caller's
    assert wait_go(ctl, 1, -1, 0) == (-1, 2)  # a late helper sees step 2 closed: it does not join it
    assert ctl[C_ACTIVE] == 0


def test_a_thread_takes_its_own_games_first_then_the_rest():
    """``take_chunk``: thread ``me`` of ``n`` takes the chunks of its own games (``[me * size // n, ...)``) from
    its own counter, then the chunks the other threads left, each row once; ``lo == hi == size`` at the end."""
    from carc_env.fast.atomic import STRIDE, take_chunk

    def drain(counter, me, n, size, chunk):
        got, k = [], 0
        while True:
            lo, hi, k = take_chunk(counter, me, n, size, chunk, k)
            if lo >= hi:
                assert lo == hi == size
                return got
            got.append((lo, hi))

    counter = np.zeros(STRIDE * 2, dtype=np.int64)
    assert drain(counter, 1, 2, 10, 2) == [(5, 7), (7, 9), (9, 10), (0, 2), (2, 4), (4, 5)]
    assert counter[0] >= 5 and counter[STRIDE] >= 5 and not counter[1:STRIDE].any()
    # three threads taking turns, one chunk each: each first from its own rows, every row exactly once
    counter = np.zeros(STRIDE * 3, dtype=np.int64)
    ks, rows, first = [0, 0, 0], [], {}
    while True:
        progress = False
        for me in range(3):
            lo, hi, ks[me] = take_chunk(counter, me, 3, 11, 1, ks[me])
            if lo < hi:
                progress = True
                rows += range(lo, hi)
                first.setdefault(me, lo)
        if not progress:
            break
    assert sorted(rows) == list(range(11)) and first == {0: 0, 1: 3, 2: 7}


_FAULTS = """
import json, resource
import numpy as np
from carc_env.env.vector import CarcassonneVectorEnv

rng = np.random.default_rng(0)
per_step = {}
for threads in (1, 2):
    env = CarcassonneVectorEnv(64, seed=3, engine="numba", threads=threads, num_players=4)
    env.reset()
    for _ in range(100):  # the arrays' sizes met, the allocator's thresholds settled
        env.step(env.sample_legal_actions(rng))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200):
        env.step(env.sample_legal_actions(rng))
    per_step[threads] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200
    env.close()
print(json.dumps(per_step))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the process's page faults in Linux's rusage")
def test_a_threaded_vector_step_faults_in_no_fresh_pages():
    """Once the arrays' sizes have been met, a threaded step of the vector env reuses memory the process
    holds: it faults in no fresh pages (a few at most, from a restarted game's draw order).  While a helper
    thread allocated the next step's arrays, they came from its malloc arena, which gave their pages back as
    the caller freed the last step's: about 270 page faults a step after a one-thread env had run in the
    process (as in a benchmark's pairs), and the two threads queued on the memory map's lock.  Measured in a
    fresh interpreter: what malloc does depends on what the process allocated and freed before."""
    import json
    import subprocess

    out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, timeout=600, check=True)
    per_step = json.loads(out.stdout.strip().splitlines()[-1])
    assert per_step["1"] < 20 and per_step["2"] < 20, f"page faults a step, by threads: {per_step}"
