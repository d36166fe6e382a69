"""The environments on the compiled engine behave exactly as on the Python engine.

Each test runs the same seeded play through an env with ``engine="numba"``
and one with ``engine="python"`` and compares everything the user sees:
observations (every key, byte-equal), rewards, terminations, infos, rendered
text, and the vector env's stacked outputs across automatic resets (with and
without opponents).  Engine selection, pickling and the no-Numba fallback
(one warning, everything on the Python engine) are tested too.
"""

from __future__ import annotations

import contextlib
import pickle
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import carc_env
from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.core import ConfigError
from carc_env.env.aec import env as make_env
from carc_env.env.gym_env import CarcassonneGymEnv
from carc_env.env.options import EnvOptions
from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.fast import coverage


def _same_obs(a: dict, b: dict, where: str) -> None:
    assert a.keys() == b.keys(), where
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, (where, k)
        assert a[k].tobytes() == b[k].tobytes(), (where, k)


def _same_info(a: dict, b: dict, where: str) -> None:
    assert a.keys() == b.keys(), where
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k]), (where, k)
        else:
            assert a[k] == b[k], (where, k)


@pytest.mark.parametrize(
    "kw", [{}, {"num_players": 3, "reward": "score_delta", "render_mode": "ansi"},
           {"expansions": ("king_robber",), "reward": "score_diff", "window": (9, 9)},
           {"expansions": ("royal_gateways", "sagrada_familia"), "num_players": 3, "reward": "score_delta"}],
)  # fmt: skip
def test_aec_env_is_identical_on_both_engines(kw):
    fast, ref = make_env(engine="numba", **kw), make_env(engine="python", **kw)
    assert fast.unwrapped.engine == "numba" and ref.unwrapped.engine == "python"
    rng = np.random.default_rng(1)
    for game in range(2):
        seed = 30 + game if game == 0 else None
        fast.reset(seed=seed)
        ref.reset(seed=seed)
        steps = 0
        for agent_f, agent_r in zip(fast.agent_iter(), ref.agent_iter(), strict=True):
            assert agent_f == agent_r
            of, rf, tf, trf, inf = fast.last()
            orr, rr, tr, trr, inr = ref.last()
            where = f"game {game} step {steps}"
            _same_obs(of, orr, where)
            assert (rf, tf, trf) == (rr, tr, trr), where
            _same_info(inf, inr, where)
            for other in fast.possible_agents:
                if steps % 17 == 0 and other in fast.agents:
                    _same_obs(fast.observe(other), ref.observe(other), where + f" {other}")
            if kw.get("render_mode") and steps % 25 == 0:
                assert fast.render() == ref.render(), where
            action = None if tf or trf else int(rng.choice(np.flatnonzero(of["action_mask"])))
            fast.step(action)
            ref.step(action)
            assert fast.rewards == ref.rewards and fast.terminations == ref.terminations, where
            steps += 1
        assert steps > 71  # a whole game: at least one decision per tile
        assert fast.unwrapped.game.scores == ref.unwrapped.game.scores


def test_the_game_of_the_compiled_env_stays_current():
    e = make_env(engine="numba")
    e.reset(seed=4)
    game = e.unwrapped.game  # a reference held across steps follows the game, as on the Python engine
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert game is e.unwrapped.game
        assert game.scores == list(e.unwrapped.match.scores)
        assert e.unwrapped.action_to_text(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))


@pytest.mark.parametrize(
    "kw", [{}, {"num_players": 4, "reward": "score_delta", "window": (9, 9)},
           {"expansions": ("king_robber",), "num_players": 3, "reward": "score_diff"},
           {"expansions": ("royal_gateways", "sagrada_familia", "king_robber"), "reward": "score_delta"}],
)  # fmt: skip
def test_vector_env_is_identical_on_both_engines(kw):
    n = 5
    fast = CarcassonneVectorEnv(n, seed=12, engine="numba", threads=2, **kw)
    ref = CarcassonneVectorEnv(n, seed=12, engine="python", **kw)
    assert (fast.engine, ref.engine) == ("numba", "python")
    of, inf = fast.reset()
    orr, inr = ref.reset()
    _same_obs(of, orr, "reset")
    _same_obs(inf, inr, "reset infos")
    rng = np.random.default_rng(2)
    done = 0
    for step in range(330):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in orr["action_mask"]])
        of, rf, df, tf, inf = fast.step(actions)
        orr, rr, dr, tr, inr = ref.step(actions)
        _same_obs(of, orr, f"step {step}")
        assert rf.dtype == rr.dtype and rf.tobytes() == rr.tobytes(), step
        assert np.array_equal(df, dr) and np.array_equal(tf, tr) and not tf.any(), step
        _same_obs(inf, inr, f"step {step} infos")
        assert np.array_equal(fast.seats, ref.seats)
        done += int(dr.sum())
    assert done >= n
    assert np.array_equal(fast.action_masks(), ref.action_masks())
    fast.close()


def test_vector_env_with_opponents_is_identical_on_both_engines():
    kw = {"opponents": [GreedyPolicy(0.3, seed=5)], "seed": 3}
    fast = CarcassonneVectorEnv(3, engine="numba", **kw)
    ref = CarcassonneVectorEnv(3, engine="python", opponents=[GreedyPolicy(0.3, seed=5)], seed=3)
    of, _ = fast.reset()
    orr, _ = ref.reset()
    _same_obs(of, orr, "reset")
    rng = np.random.default_rng(3)
    for step in range(150):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in orr["action_mask"]])
        of, rf, df, _, inf = fast.step(actions)
        orr, rr, dr, _, inr = ref.step(actions)
        _same_obs(of, orr, f"step {step}")
        assert np.array_equal(rf, rr) and np.array_equal(df, dr), step
        _same_obs(inf, inr, f"step {step} infos")
        assert np.array_equal(fast.learner_seats, ref.learner_seats)


def test_gym_env_is_identical_on_both_engines():
    fast = CarcassonneGymEnv(opponents=[RandomPolicy(seed=1)], engine="numba")
    ref = CarcassonneGymEnv(opponents=[RandomPolicy(seed=1)], engine="python")
    rng = np.random.default_rng(4)
    for seed in (7, 8):
        of, inf = fast.reset(seed=seed)
        orr, inr = ref.reset(seed=seed)
        while True:
            _same_obs(of, orr, f"seed {seed}")
            _same_info(inf, inr, f"seed {seed}")
            a = int(rng.choice(np.flatnonzero(orr["action_mask"])))
            of, rf, tf, truf, inf = fast.step(a)
            orr, rr, tr, trur, inr = ref.step(a)
            assert (rf, tf, truf) == (rr, tr, trur)
            if tr:
                _same_info(inf, inr, "end")
                break


def test_illegal_actions_are_refused_on_the_compiled_engine():
    e = make_env(engine="numba")
    raw = e.unwrapped
    raw.reset(seed=0)
    mask = raw.observe(raw.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(carc_env.IllegalActionError, match=f"action {bad} .* is not legal"):
        raw.step(bad)
    venv = CarcassonneVectorEnv(2, seed=0, engine="numba")
    obs, _ = venv.reset()
    actions = np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])
    actions[1] = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    with pytest.raises(
        carc_env.IllegalActionError, match=r"actions\[1\] \(game 1\): action \d+ .* no game was stepped"
    ):
        venv.step(actions)
    obs2, *_ = venv.step(np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]]))  # nothing moved
    assert obs2["board"].shape == obs["board"].shape


def test_engine_selection():
    assert make_env().unwrapped.engine == "numba"
    assert make_env(expansions=("king_robber",), num_players=5).unwrapped.engine == "numba"
    assert make_env(expansions=("river2", "king_robber")).unwrapped.engine == "numba"
    box = ("count", "darmstadt", "king_robber", "river2", "shrines")
    for n in (2, 3, 4, 5):  # the whole box: engine="auto" picks the compiled engine for every combination
        for m in range(1 << len(box)):
            combo = tuple(k for j, k in enumerate(box) if m >> j & 1)
            assert coverage(EnvOptions.from_kwargs(expansions=combo, num_players=n)) is None, (combo, n)
    assert make_env(expansions=box, num_players=4).unwrapped.engine == "numba"
    six = (*box, "royal_gateways", "sagrada_familia")
    assert make_env(expansions=six, num_players=5).unwrapped.engine == "numba"
    for key in ("royal_gateways", "sagrada_familia"):
        assert make_env(expansions=(key,)).unwrapped.engine == "numba"
        assert CarcassonneVectorEnv(2, expansions=(key,)).engine == "numba"
    assert CarcassonneVectorEnv(2, expansions=("count",)).engine == "numba"
    glass = make_env(expansions=("stained_glass", "darmstadt")).unwrapped
    assert glass.engine == "numba" and glass.engine_reason == ""
    assert CarcassonneVectorEnv(2, expansions=("stained_glass",), num_players=3).engine == "numba"
    assert make_env(engine="python").unwrapped.engine == "python"
    with no_fast_plugin():
        with pytest.raises(ConfigError, match="engine='numba' cannot run this configuration: .*test_no_fast"):
            make_env(engine="numba", expansions=("test_no_fast",))
    with pytest.raises(ConfigError, match="option engine must be one of"):
        make_env(engine="cython")


@contextlib.contextmanager
def no_fast_plugin():
    """A user's plug-in without a fast part, registered as ``test_no_fast`` while the block runs (every
    built-in expansion has a fast part since #30)."""
    from carc_env.core.expansion import Expansion, register, unregister

    class NoFast(Expansion):
        KEY = "test_no_fast"
        REQUIRES = ("base",)

    register(NoFast, package="_toy_plugins.panel")
    try:
        yield
    finally:
        unregister("test_no_fast")


@pytest.mark.parametrize(
    "expansions",
    [
        ("test_no_fast",),
        ("royal_gateways", "sagrada_familia", "test_no_fast"),
        ("river2", "king_robber", "stained_glass", "test_no_fast"),
    ],
)
def test_expansions_without_compiled_rules_run_on_the_python_engine_and_say_why(expansions):
    """A plug-in without a fast part (a user's: every built-in one has a fast part): their configurations
    select the Python engine with a reason naming the plug-in, in every env, and engine='numba' refuses them."""
    with no_fast_plugin():
        _runs_on_python(expansions)


def _runs_on_python(expansions):
    key = expansions[-1]
    why = f"expansion {key!r} has no compiled rules (its plug-in has no fast part)"
    raw = make_env(expansions=expansions).unwrapped
    assert (raw.engine, raw.engine_reason) == ("python", why)
    venv = CarcassonneVectorEnv(2, expansions=expansions)
    assert (venv.engine, venv.engine_reason, venv._batch) == ("python", why, None)
    gym = CarcassonneGymEnv(expansions=expansions)
    assert gym.aec.engine == "python"
    raw.reset(seed=1)
    raw.step(int(np.flatnonzero(raw.match.mask())[0]))  # and it plays
    with pytest.raises(ConfigError, match=re.escape(f"engine='numba' cannot run this configuration: {why}")):
        make_env(engine="numba", expansions=expansions)


def test_stepping_never_rebuilds_the_reference_game():
    """The envs read the compiled match's cheap accessors (over, player, scores, phase) while stepping;
    the reference game is rebuilt only when someone reads ``.game`` (a render, a search); a greedy opponent
    decides on the compiled engine (carc_env.fast.greedy)."""
    e = make_env(engine="numba", num_players=3)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raw = e.unwrapped
    assert raw.match.over and raw.match.batch._shadow[0] is None
    gym = CarcassonneGymEnv(engine="numba", num_players=3, opponents=RandomPolicy(seed=1))
    obs, _ = gym.reset(seed=4)
    done = False
    while not done:
        obs, _, done, _, _ = gym.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert gym.aec.match.batch._shadow[0] is None
    venv = CarcassonneVectorEnv(3, engine="numba", opponents=RandomPolicy(seed=1))
    obs, _ = venv.reset(seed=5)
    for _ in range(200):
        obs, *_ = venv.step([int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]])
    assert venv._batch._shadow == [None] * 3
    greedy = CarcassonneGymEnv(engine="numba", opponents=GreedyPolicy(seed=1), learner_seat=1)
    obs, _ = greedy.reset(seed=4)  # seat 0 (greedy) moves first, on the compiled engine
    obs, *_ = greedy.step(int(np.flatnonzero(obs["action_mask"])[0]))
    batch = greedy.aec.match.batch
    assert batch._shadow[0] is None
    assert greedy.aec.unwrapped.game.history == batch.actions(0)  # reading .game builds it
    greedy.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert batch._shadow[0] is not None and batch._shadow[0].history == batch.actions(0)  # and it follows


def test_compiled_env_pickles_mid_game():
    e = make_env(engine="numba", num_players=3)
    e.reset(seed=9)
    rng = np.random.default_rng(9)
    for _ in range(50):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    e.unwrapped.game  # noqa: B018  (a reference game exists: it must survive pickling too)
    clone = pickle.loads(pickle.dumps(e))
    assert clone.unwrapped.engine == "numba"
    for agent_a, agent_b in zip(e.agent_iter(), clone.agent_iter(), strict=True):
        oa, ra, ta, tra, _ = e.last()
        ob, rb, tb, trb, _ = clone.last()
        assert agent_a == agent_b and (ra, ta) == (rb, tb)
        _same_obs(oa, ob, "after unpickling")
        a = None if ta or tra else int(rng.choice(np.flatnonzero(oa["action_mask"])))
        e.step(a)
        clone.step(a)
    assert e.unwrapped.game.scores == clone.unwrapped.game.scores


def test_without_numba_everything_runs_on_python_with_one_warning():
    code = textwrap.dedent(
        """
        import sys, warnings
        sys.modules["numba"] = None  # as if numba had no wheel for this platform
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            import numpy as np
            import carc_env
            from carc_env.env.vector import CarcassonneVectorEnv
            e = carc_env.env()
            e.reset(seed=0)
            for agent in e.agent_iter():
                obs, _, term, trunc, _ = e.last()
                e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
            v = CarcassonneVectorEnv(2, seed=0)
            obs, _ = v.reset()
            v.step(np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]]))
            carc_env.env(num_players=3).reset(seed=1)
        ours = [w for w in caught if "numba" in str(w.message)]
        print(e.unwrapped.engine, v.engine, len(ours), ours[0].category.__name__)
        print(e.unwrapped.engine_reason)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "python python 1 FastEngineWarning"
    assert out[1].startswith("numba is not available")
