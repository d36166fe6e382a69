"""The environments refuse bad actions and calls without changing anything, hand out
read-only arrays, and are fully determined by a seeded reset (issue #12, items 2-5, 8-11, 14, 15).

Every test that exercises the env or match behaviour runs on both engines (``engine`` option:
the Python reference and the compiled one, ``_state.ENGINES``), with the same messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch
from _state import ENGINES, freeze, match_state, seed_stream

import carc_env
from carc_env.baselines import RandomPolicy
from carc_env.core import ActionTypeError, ConfigError, IllegalActionError
from carc_env.env import GYM_ID
from carc_env.env.aec import raw_env
from carc_env.env.gym_env import CarcassonneGymEnv
from carc_env.env.vector import CarcassonneVectorEnv

ROOT = Path(__file__).resolve().parents[2]


def _aec_state(e) -> object:
    raw = e.unwrapped
    return freeze(
        {
            "match": match_state(raw.match),
            "rewards": raw.rewards,
            "cumulative": raw._cumulative_rewards,
            "terminations": raw.terminations,
            "truncations": raw.truncations,
            "agent": raw.agent_selection,
            "infos": raw.infos,
            "obs": [raw.observe(a) for a in raw.agents],
        }
    )


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


# ----------------------------------------------------------------- item 4: integer actions only
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("make", [carc_env.env, raw_env])
@pytest.mark.parametrize(
    "bad",
    [
        lambda a: a + 0.7,
        lambda a: float(a),
        lambda a: str(a),
        lambda a: np.float32(a),
        lambda a: torch.tensor(float(a)),
        lambda a: [a],
        lambda a: True,
        lambda a: np.True_,
    ],
)
def test_aec_step_refuses_non_integers_naming_value_and_type(make, bad, engine):
    e = make(engine=engine)
    assert e.unwrapped.engine == engine
    e.reset(seed=0)
    legal = _first_legal(e.unwrapped.match.mask())
    before = _aec_state(e)
    value = bad(legal)
    with pytest.raises(ActionTypeError, match="an action must be an integer") as info:
        e.step(value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, IllegalActionError)
    assert type(value).__name__ in str(info.value) or "bool" in str(info.value)
    assert _aec_state(e) == before  # nothing moved, nothing ended
    e.step(legal)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("good", [np.int64, np.int16, np.uint32, lambda a: np.array(a), lambda a: torch.tensor(a)])
def test_aec_step_accepts_integer_kinds(good, engine):
    a, b = raw_env(engine=engine), raw_env(engine="python")
    a.reset(seed=3)
    b.reset(seed=3)
    legal = _first_legal(a.match.mask())
    a.step(good(legal))
    b.step(legal)
    assert a.game.history == b.game.history


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opponents", [None, RandomPolicy(seed=2)], ids=["self_play", "opponents"])
def test_gym_and_vector_envs_refuse_non_integers(engine, opponents):
    g = CarcassonneGymEnv(engine=engine)
    obs, _ = g.reset(seed=1)
    legal = _first_legal(obs["action_mask"])
    before = match_state(g.aec.match)
    for bad in (None, legal + 0.5, float(legal), str(legal), True):
        with pytest.raises(ActionTypeError, match="must be an integer"):
            g.step(bad)
    assert match_state(g.aec.match) == before
    g.step(np.int64(legal))

    # self-play on the compiled engine is the batched path (one kernel call for the whole batch)
    v = CarcassonneVectorEnv(2, opponents=opponents, engine=engine)
    assert v.engine == engine and v._batched == (engine == "numba" and opponents is None)
    obs, _ = v.reset(seed=1)
    legal = [_first_legal(m) for m in obs["action_mask"]]
    before = freeze([match_state(m) for m in v.matches])
    for bad in (
        np.array(legal, dtype=float),
        np.array(legal, dtype=np.float32),
        [legal[0], str(legal[1])],
        np.array([True, False]),
        [legal[0], None],
        [float(legal[0]), legal[1]],
    ):
        with pytest.raises(ActionTypeError, match="must be an integer|must be integers"):
            v.step(bad)
    assert freeze([match_state(m) for m in v.matches]) == before
    v.step(np.array(legal, dtype=np.int32))


# ----------------------------------------------------------------- item 2: the vector env checks the whole batch first
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("self_play", [False, True], ids=["opponents", "self_play"])
@pytest.mark.parametrize("bad_game", [0, 2, 3])
def test_vector_env_illegal_action_changes_no_game_and_the_retry_works(bad_game, self_play, engine):
    def make() -> CarcassonneVectorEnv:
        return CarcassonneVectorEnv(
            4, reward="score_delta", engine=engine, opponents=None if self_play else RandomPolicy(seed=5)
        )

    v, twin = make(), make()
    assert v._batched == (engine == "numba" and self_play)
    rng = np.random.default_rng(0)
    obs, _ = v.reset(seed=11)
    twin.reset(seed=11)
    for _ in range(6):  # get some pending rewards and some history first
        acts = [int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]]
        obs, *_ = v.step(acts)
        twin.step(acts)
    legal = [int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]]
    bad = list(legal)
    bad[bad_game] = int(np.flatnonzero(obs["action_mask"][bad_game] == 0)[0])
    before = freeze([[match_state(m) for m in v.matches], v._pending, v.seats, v._obs, v._lengths, v._episodes])
    with pytest.raises(
        IllegalActionError,
        match=rf"actions\[{bad_game}\] \(game {bad_game}\): action \d+ "
        rf"\(.*\) is not legal for seat \d in phase '\w+'.*no game was stepped",
    ):
        v.step(bad)
    assert freeze([[match_state(m) for m in v.matches], v._pending, v.seats, v._obs, v._lengths, v._episodes]) == before
    got = v.step(legal)  # the natural retry
    want = twin.step(legal)
    for k in got[0]:
        assert np.array_equal(got[0][k], want[0][k]), k
    assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2]) and np.array_equal(got[3], want[3])
    assert got[4].keys() == want[4].keys() and all(np.array_equal(got[4][k], want[4][k]) for k in got[4])


# ----------------------------------------------------------------- item 3: read-only arrays
@pytest.mark.parametrize("engine", ENGINES)
def test_observation_mask_and_info_arrays_are_read_only(engine):
    e = carc_env.env(engine=engine)
    e.reset(seed=0)
    obs, _, _, _, info = e.last()
    for k, a in obs.items():
        assert not a.flags.writeable, k
    assert not info["action_mask"].flags.writeable
    legal = _first_legal(obs["action_mask"])
    with pytest.raises(ValueError, match="read-only"):
        obs["action_mask"][legal] = 0  # "filtering" the mask in place used to make the legal move illegal
    with pytest.raises(ValueError, match="read-only"):
        obs["globals"] *= 2.0
    again, _, _, _, _ = e.last()
    assert np.array_equal(again["globals"], obs["globals"])
    mine = obs["action_mask"].copy()  # the supported way: copy, then change
    mine[legal] = 0
    e.step(legal)  # still legal for the env, and no -1 termination
    assert not any(e.terminations.values())
    raw = e.unwrapped
    rng = np.random.default_rng(0)
    while not raw.match.over:  # every later observation, mask and info too, to the end of the game
        agent = e.agent_selection
        obs, _, _, _, info = e.last()
        arrays = [
            *obs.values(),
            info["action_mask"],
            raw.match.mask(),
            raw.match.view().mask,
            *raw.observe(raw.possible_agents[0]).values(),
        ]
        assert not any(a.flags.writeable for a in arrays), agent
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert not raw.match.mask().flags.writeable and not raw.match.mask().any()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opponents", [None, RandomPolicy(seed=2)], ids=["self_play", "opponents"])
def test_vector_and_gym_observations_are_read_only(engine, opponents):
    v = CarcassonneVectorEnv(2, engine=engine, opponents=opponents)
    obs, _ = v.reset(seed=0)
    with pytest.raises(ValueError, match="read-only"):
        obs["action_mask"][:] = 0
    assert v.action_masks().any(axis=1).all()
    rng = np.random.default_rng(1)
    for _ in range(60):  # the batched path returns fresh arrays each step: read-only too, resets included
        obs, *_ = v.step([int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]])
        assert not any(a.flags.writeable for a in obs.values())
    with pytest.raises(ValueError, match="read-only"):
        obs["board"][0] = 1
    g = CarcassonneGymEnv(engine=engine)
    obs, info = g.reset(seed=0)
    with pytest.raises(ValueError, match="read-only"):
        obs["action_mask"][0] = 1
    with pytest.raises(ValueError, match="read-only"):
        info["action_mask"][0] = 1
    obs, *_, info = g.step(_first_legal(obs["action_mask"]))
    assert not any(a.flags.writeable for a in [*obs.values(), info["action_mask"]])


@pytest.mark.parametrize("engine", ENGINES)
def test_arrays_stay_read_only_after_pickling(engine):
    """Unpickled numpy arrays come back writable; the envs freeze what they hand out again."""
    import pickle

    e = carc_env.env(engine=engine)
    e.reset(seed=3)
    e.step(_first_legal(e.last()[0]["action_mask"]))
    e.last()
    clone = pickle.loads(pickle.dumps(e))
    obs, _, _, _, info = clone.last()
    raw = clone.unwrapped
    arrays = [
        *obs.values(),
        info["action_mask"],
        raw.match.mask(),
        raw._zero_mask,
        *(i["action_mask"] for i in raw.infos.values()),
    ]
    assert not any(a.flags.writeable for a in arrays)
    v = CarcassonneVectorEnv(2, engine=engine)
    v.reset(seed=0)
    assert not any(a.flags.writeable for a in pickle.loads(pickle.dumps(v))._obs.values())


# ----------------------------------------------------------------- item 5: a rejected action keeps the pending reward
@pytest.mark.parametrize("engine", ENGINES)
def test_rejected_action_keeps_the_pending_score_delta_reward(engine):
    e = raw_env(reward="score_delta", engine=engine)
    rng = np.random.default_rng(0)
    found = False
    for seed in range(20):  # random play: find a turn that starts with points earned since the last one
        e.reset(seed=seed)
        while not e.match.over and not found:
            agent = e.agent_selection
            found = e._cumulative_rewards[agent] != 0
            if not found:
                e.step(int(rng.choice(np.flatnonzero(e.match.mask()))))
        if found:
            break
    assert found, "no pending reward in 20 games"
    pending = e._cumulative_rewards[agent]
    _, r_before, *_ = e.last()
    illegal = int(np.flatnonzero(e.match.mask() == 0)[0])
    for bad in (illegal, float(illegal), -1, e.codec.n):
        with pytest.raises(IllegalActionError):
            e.step(bad)
    assert e._cumulative_rewards[agent] == pending
    _, r_after, *_ = e.last()
    assert r_after == r_before == pending


# ----------------------------------------------------------------- item 8: uint8 planes
@pytest.mark.parametrize("engine", ENGINES)
def test_followers_times_players_over_255_is_refused(engine):
    with pytest.raises(ConfigError, match=r"followers x num_players must be at most 255.*52 x 5 = 260.*at most 51"):
        carc_env.env(num_players=5, followers=52, engine=engine)
    e = raw_env(num_players=5, followers=51, engine=engine)
    e.reset(seed=0)
    space = e.observation_space("player_0")["board"]
    assert int(space.high.max()) == 255
    assert e.observe(e.agent_selection) in e.observation_space(e.agent_selection)


# ----------------------------------------------------------------- item 9: seeding contract
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_a_seeded_gym_reset_determines_everything_after_it(num_players, engine):
    def run(env, prelude):
        for seed in prelude:
            env.reset(seed=seed) if seed is not None else env.reset()
        out = []
        for seed in (123, None, None):
            obs, info = env.reset(seed=seed)
            out.append((info["learner_seat"], freeze(obs), tuple(env.game.draw_order)))
        return out

    def make() -> CarcassonneGymEnv:
        return CarcassonneGymEnv(
            num_players=num_players, opponents=[RandomPolicy(), RandomPolicy(seed=1)], engine=engine
        )

    fresh = run(make(), [])
    used = run(make(), [None, 5, None, None, 9])
    assert fresh == used
    assert [s for s, _, _ in fresh] == [123 % num_players, 124 % num_players, 125 % num_players]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("num_players", [3, 4])
def test_gymnasium_reset_seed_check_passes(num_players, engine):
    from gymnasium.utils.env_checker import check_reset_seed_determinism

    env = gymnasium.make(GYM_ID, num_players=num_players, engine=engine)
    assert env.unwrapped.aec.engine == engine
    assert env.unwrapped.spec is not None and not env.unwrapped.spec.nondeterministic
    env.unwrapped.reset()  # earlier resets must not matter
    check_reset_seed_determinism(env.unwrapped)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opponents", [None, RandomPolicy()], ids=["self_play", "opponents"])
def test_a_seeded_vector_reset_determines_seats_and_games(engine, opponents):
    def run(v, prelude):
        for s in prelude:
            v.reset(seed=s)
            v.step([_first_legal(m) for m in v._obs["action_mask"]])
        obs, infos = v.reset(seed=40)
        return v.learner_seats.tolist(), freeze(obs)

    a = run(CarcassonneVectorEnv(3, num_players=3, opponents=opponents, engine=engine), [])
    b = run(CarcassonneVectorEnv(3, num_players=3, opponents=opponents, engine=engine), [1, 2])
    assert a == b


# ----------------------------------------------------------------- item 10: real checks under python -O
@pytest.mark.parametrize("engine", ENGINES)
def test_range_checks_hold_under_python_O(engine):
    code = """
import carc_env
from carc_env.core import IllegalActionError
assert False, "this assert must be stripped"
"""
    script = r"""
import sys
import carc_env
from carc_env.core import IllegalActionError
if __debug__:
    sys.exit("not running under -O")
e = carc_env.env(engine=ENGINE)
if e.unwrapped.engine != ENGINE:
    sys.exit(f"engine {e.unwrapped.engine}")
e.reset(seed=0)
for bad in (-1, 10**9, True, 2.5):
    try:
        e.step(bad)
    except IllegalActionError as exc:
        print("refused", repr(bad), exc)
    else:
        sys.exit(f"step({bad!r}) was accepted under -O")
    if any(e.terminations.values()) or e.unwrapped.game.history:
        sys.exit(f"step({bad!r}) changed the game under -O")
from carc_env.env.vector import CarcassonneVectorEnv
v = CarcassonneVectorEnv(2, engine=ENGINE)
obs, _ = v.reset(seed=0)
legal = [int(m.nonzero()[0][0]) for m in obs["action_mask"]]
for bad in ([legal[0], -1], [legal[0], 10**9], [2.5, legal[1]]):
    try:
        v.step(bad)
    except IllegalActionError as exc:
        print("refused", repr(bad), exc)
    else:
        sys.exit(f"vector step({bad!r}) was accepted under -O")
print("ok")
""".replace("ENGINE", repr(engine))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    assert code  # (the first snippet documents what -O strips)
    out = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("ok")
    assert out.stdout.count("refused") == 7


def test_no_assert_statements_validate_anything_in_the_library():
    """Every check in carc_env, agents and scripts is a real ``if``/``raise`` (``python -O`` strips asserts)."""
    import ast

    found = []
    for base in ("carc_env", "agents", "scripts"):
        for path in sorted((ROOT / base).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            found += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    assert found == []


# ----------------------------------------------------------------- item 11: bounded frames
@pytest.mark.parametrize("engine", ENGINES)
def test_rgb_frames_are_capped_by_render_max_px(engine):
    from carc_env.render import render_image
    from carc_env.render.image import board_view

    e = raw_env(render_mode="rgb_array", tile_px=512, render_max_px=1024, engine=engine)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    while not e.match.over:
        e.step(int(rng.choice(np.flatnonzero(e.match.mask()))))
    x0, x1, y0, y1 = board_view(e.game)
    cells = max(x1 - x0 + 1, y1 - y0 + 1)
    assert cells * 512 > 4000  # unbounded, this frame would be huge
    tp = e.render_tile_px()
    assert tp == max(8, 1024 // cells) and tp * cells <= 1024
    frame = e.render()
    assert np.array_equal(frame, render_image(e.game, tile_px=tp))
    assert frame.shape[0] < 1024 + 200  # board part plus axis labels
    small = raw_env(render_mode="rgb_array", tile_px=16)
    small.reset(seed=2)
    assert small.render_tile_px() == 16  # the cap never enlarges tiles
    with pytest.raises(ConfigError, match="render_max_px"):
        raw_env(render_max_px=10)


# ----------------------------------------------------------------- items 14, 15: messages
@pytest.mark.parametrize("engine", ENGINES)
def test_index_of_another_phase_is_named_not_called_out_of_range(engine):
    e = raw_env(engine=engine)
    e.reset(seed=0)
    start = e.codec.follower_range.start
    with pytest.raises(
        IllegalActionError, match=r"in the 'follower' range \d+\.\.\d+, not the current phase's.*phase 'tile'"
    ):
        e.step(start)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        e.step(e.codec.n + 5)


@pytest.mark.parametrize("engine", ENGINES)
def test_step_true_names_the_bool(engine):
    e = carc_env.env(engine=engine)
    e.reset(seed=0)
    with pytest.raises(ActionTypeError, match="got the bool True"):
        e.step(True)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("make", [carc_env.env, raw_env])
def test_failed_reset_leaves_the_env_as_it_was(make, engine):
    e = make(engine=engine)
    with pytest.raises(ConfigError, match="unknown tile id"):
        e.reset(seed=0, options={"draw_order": ["NOPE"]})
    with pytest.raises((RuntimeError, AttributeError), match="reset"):
        e.last()
    e.reset(seed=1)
    legal = _first_legal(e.unwrapped.match.mask())
    e.step(legal)
    before = _aec_state(e)
    for opts in ({"draw_order": ["NOPE"]}, {"draw_order": 5}, "draw_order", [1], 42):
        with pytest.raises(ConfigError, match="draw_order|reset options must be a dict"):
            e.reset(seed=2, options=opts)
        assert _aec_state(e) == before  # still the previous game, seed stream included
    assert seed_stream(e.unwrapped.match) is not None
    for seed in (-1, 2.0, "3", True):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            e.reset(seed=seed)
        assert _aec_state(e) == before
    e.step(_first_legal(e.unwrapped.match.mask()))
    # the seed stream did not move: the next unseeded reset deals what it deals in an env that never failed
    twin = make(engine=engine)
    twin.reset(seed=1)
    e.reset()
    twin.reset()
    assert e.unwrapped.match.seed == twin.unwrapped.match.seed
    assert e.unwrapped.game.draw_order == twin.unwrapped.game.draw_order


@pytest.mark.parametrize("engine", ENGINES)
def test_observe_before_reset_says_so(engine):
    e = raw_env(engine=engine)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before observe\(\)"):
        e.observe("player_0")
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        e.last()
    with pytest.raises(ValueError, match="unknown agent"):
        e.observe("player_9")


@pytest.mark.parametrize("engine", ENGINES)
def test_gym_reset_options_of_the_wrong_type(engine):
    g = CarcassonneGymEnv(engine=engine)
    for opts in ("draw_order", [1], 42):
        with pytest.raises(ConfigError, match="reset options must be a dict"):
            g.reset(seed=0, options=opts)
    with pytest.raises(ConfigError, match="learner_seat"):
        g.reset(seed=0, options={"learner_seat": True})
    g.reset(seed=0, options={"learner_seat": 1})


# ----------------------------------------------------------------- both engines: the same words
def _refusal(call: Any) -> tuple[str, str]:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test compares what is raised
        return type(exc).__name__, str(exc)
    raise AssertionError("the call was accepted")


@pytest.mark.parametrize("num_players", [2, 4])
def test_both_engines_refuse_with_the_same_errors_and_messages(num_players):
    """At every state of a game played on both engines, the same bad actions get the same error type and
    the same message, from raw_env, from the match, from the Gymnasium env and from the vector env."""
    py, nb = (raw_env(num_players=num_players, reward="score_delta", engine=e) for e in ENGINES)
    assert (py.engine, nb.engine) == ENGINES
    for e in (py, nb):
        e.reset(seed=7)
    rng = np.random.default_rng(7)
    n = py.codec.n
    compared = 0
    while not py.match.over:
        mask = py.match.mask()
        assert np.array_equal(mask, nb.match.mask())
        off = np.flatnonzero(mask == 0)
        bads = [
            int(off[0]),
            int(off[-1]),
            int(rng.choice(off)),
            -1,
            n,
            10**12,
            float(off[0]),
            str(off[0]),
            True,
            None,
            [1],
            np.float32(1.0),
        ]
        bads += [r.start for r in py.codec.ranges.values() if not mask[r.start]]  # other phases' ranges
        for bad in bads:
            assert _refusal(lambda b=bad: py.step(b)) == _refusal(lambda b=bad: nb.step(b)), bad
            assert _refusal(lambda b=bad: py.match.check(b)) == _refusal(lambda b=bad: nb.match.check(b)), bad
            compared += 1
        a = int(rng.choice(np.flatnonzero(mask)))
        py.step(a)
        nb.step(a)
        assert (py.rewards, py.agent_selection) == (nb.rewards, nb.agent_selection)
    for bad in (0, -1, 2.5):  # the game is over
        assert _refusal(lambda b=bad: py.match.check(b)) == _refusal(lambda b=bad: nb.match.check(b))
    assert compared > 500

    vp, vn = (CarcassonneVectorEnv(3, num_players=num_players, engine=e) for e in ENGINES)
    op, _ = vp.reset(seed=3)
    on, _ = vn.reset(seed=3)
    for k in op:
        assert np.array_equal(op[k], on[k]), k
    legal = [_first_legal(m) for m in op["action_mask"]]
    for i in range(3):
        for bad in (int(np.flatnonzero(op["action_mask"][i] == 0)[0]), -1, n + 1, 1.5, "2", None):
            acts: list[Any] = list(legal)
            acts[i] = bad
            assert _refusal(lambda a=acts: vp.step(a)) == _refusal(lambda a=acts: vn.step(a)), (i, bad)
    for bad in (np.array(legal, dtype=np.float64), np.array(legal[:2]), np.array([legal, legal])):
        assert _refusal(lambda a=bad: vp.step(a)) == _refusal(lambda a=bad: vn.step(a))

    gp, gn = (CarcassonneGymEnv(num_players=num_players, illegal_action="raise", engine=e) for e in ENGINES)
    gp.reset(seed=5)
    gn.reset(seed=5)
    off = int(np.flatnonzero(gp.action_masks() == 0)[0])
    for bad in (off, -1, n, 1.5, "2", None, True):
        assert _refusal(lambda b=bad: gp.step(b)) == _refusal(lambda b=bad: gn.step(b)), bad
