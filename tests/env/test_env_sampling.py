"""Random legal actions from masks: :mod:`carc_env.env.sampling` (numpy) and the vector env's
``sample_legal_actions`` (compiled on the env's threads where the compiled engine runs).

Both pick row ``i``'s ``floor(u_i k_i)``-th enabled entry; checked here against a row-by-row reading of
the masks, against each other, and in the env's loop (every pick legal, the same actions as the numpy
policy from the same generator).  Speed is measured by ``scripts/bench.py``, never here."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from carc_env.env.sampling import nth_enabled, random_legal_actions
from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.fast import available

NUMBA = [] if available() else [pytest.mark.skip(reason="numba is not available")]

BOX = ["king_robber", "count", "river2", "shrines", "darmstadt"]


def _by_rows(masks: np.ndarray, u: np.ndarray) -> list[int]:
    out = []
    for row, x in zip(masks, u, strict=True):
        on = np.flatnonzero(row)
        out.append(int(on[int(x * len(on))]) if len(on) else -1)
    return out


@pytest.mark.parametrize("shape", [(64, 2925), (5, 17), (3, 1), (9, 4096)])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_nth_enabled_picks_the_floor_u_k_th_enabled_entry_and_minus_one_for_an_empty_row(shape, density):
    rng = np.random.default_rng(3)
    masks = (rng.random(shape) < density).astype(np.int8)
    masks[::3] = 0  # some rows enable nothing
    for u in (rng.random(shape[0]), np.zeros(shape[0]), np.full(shape[0], 1 - 2**-53)):
        assert nth_enabled(masks, u).tolist() == _by_rows(masks, u)


def _env(engine: str, threads: int | None = None, **kw) -> CarcassonneVectorEnv:
    return CarcassonneVectorEnv(6, seed=11, threads=threads, engine=engine, num_players=3, **kw)


@pytest.mark.parametrize(
    ("engine", "threads", "kw"),
    [
        pytest.param("numba", 1, {}, marks=NUMBA),
        pytest.param("numba", 2, {"expansions": BOX}, marks=NUMBA),
        ("python", None, {}),
    ],
)
def test_sample_legal_actions_are_the_numpy_policys_picks_and_legal(engine, threads, kw):
    env = _env(engine, threads, **kw)
    assert env.engine == engine
    obs, _ = env.reset()
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    ended = 0
    for _ in range(300 if engine == "numba" else 40):
        actions = env.sample_legal_actions(ours)
        assert actions.dtype == np.int64 and actions.shape == (6,)
        assert np.array_equal(actions, random_legal_actions(obs["action_mask"], theirs))
        assert obs["action_mask"][np.arange(6), actions].all()
        obs, _, dones, _, _ = env.step(actions)
        ended += int(dones.sum())
    assert engine == "python" or ended  # the numba runs cover games restarted in the kernel
    env.close()


@pytest.mark.parametrize("engine", [pytest.param("numba", marks=NUMBA), "python"])
def test_sample_legal_actions_in_next_step_mode_gives_0_for_a_finished_games_row(engine):
    env = CarcassonneVectorEnv(2, seed=2, engine=engine, autoreset_mode=AutoresetMode.NEXT_STEP)
    obs, _ = env.reset()
    rng = np.random.default_rng(0)
    seen_final = False
    for _ in range(400):
        ended = ~obs["action_mask"].any(axis=1)
        actions = env.sample_legal_actions(rng)
        assert (actions[ended] == 0).all()
        assert obs["action_mask"][~ended][np.arange(int((~ended).sum())), actions[~ended]].all()
        seen_final |= bool(ended.any())
        obs, *_ = env.step(actions)
    assert seen_final
    env.close()


def test_sample_legal_actions_refuses_what_is_not_a_generator_and_a_call_before_reset():
    env = _env("python")
    with pytest.raises(RuntimeError, match="reset"):
        env.sample_legal_actions(np.random.default_rng(0))
    env.reset()
    with pytest.raises(TypeError, match="default_rng"):
        env.sample_legal_actions(0)  # type: ignore[arg-type]
