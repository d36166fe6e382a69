"""The compiled greedy baseline (carc_env.fast.greedy) decides exactly as the Python GreedyPolicy."""

from __future__ import annotations

import numpy as np
import pytest

import carc_env
from carc_env.baselines import play_match
from carc_env.env.match import Match
from carc_env.env.options import EnvOptions
from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.fast.engine import FastBatch
from carc_env.fast.greedy import greedy_actions
from carc_env.policies import GreedyPolicy, RandomPolicy

CONFIGS = [
    ({}, range(0, 8)),
    ({"num_players": 3, "rules": {"base": {"count_tile_once": False}}, "window": (11, 11)}, range(20, 24)),
    ({"expansions": ("river2", "king_robber"), "num_players": 4}, range(40, 44)),
    ({"num_players": 2, "followers": 2}, range(60, 63)),
    # plug-ins whose hooks the one-ply play-out runs in their kernels (church bonus, Darmstadtium, the
    # shrine veto in the mask and its challenges)
    ({"expansions": ("darmstadt",)}, range(80, 84)),
    ({"expansions": ("shrines",), "num_players": 3, "rules": {"shrines": {"sixth_tile": True}}}, range(90, 93)),
    ({"expansions": ("darmstadt", "shrines", "king_robber"), "rules": {"shrines": {"churches_are_cloisters": False}}},
     range(96, 99)),
]  # fmt: skip


@pytest.mark.parametrize("eps", [0.0, 0.25])
@pytest.mark.parametrize("kw,seeds", CONFIGS, ids=[repr(c[0]) for c in CONFIGS])
def test_same_choices_as_the_python_policy_given_the_same_stream(kw, seeds, eps):
    _same_choices(EnvOptions.from_kwargs(**kw), seeds, eps)


def test_the_church_bonus_is_in_the_greedy_play_out():
    """Greedy games of Darmstadt that complete a church (seeds found by scanning 30): the church-completing
    placement was valued by a one-ply play-out that paid the bonus (the plug-in's kernels), on both engines
    alike."""
    opts = EnvOptions.from_kwargs(expansions=("darmstadt",))

    def paid_a_bonus(fast: FastBatch, g: int, seed: int) -> None:
        bonus = fast.layout.award_codes["church_bonus"]
        assert any(what == bonus for what, *_ in fast.score_log(g)), f"seed {seed} paid no church bonus"

    _same_choices(opts, [81, 88], 0.0, check=paid_a_bonus)


def _same_choices(opts: EnvOptions, seeds, eps: float, check=None) -> set[str]:
    """Play greedy games through both engines, asserting identical choices and scores; ``check(fast, g,
    seed)`` after each game.  Returns the phases decided in."""
    from carc_env.fast import coverage

    assert coverage(opts) is None  # the compiled engine and its greedy cover the configuration
    fast = FastBatch(opts, 3)
    decisions = 0
    phases: set[str] = set()
    for k, seed in enumerate(seeds):
        g = k % 3
        ref = Match(opts)
        ref.reset(seed)
        fast.reset(g, seed)
        py = [GreedyPolicy(epsilon=eps, seed=seed * 10 + p) for p in range(opts.num_players)]
        co = [GreedyPolicy(epsilon=eps, seed=seed * 10 + p) for p in range(opts.num_players)]
        while not ref.game.over:
            p = ref.game.player
            phases.add(ref.game.phase)
            a_py = py[p].act({"action_mask": ref.mask()}, ref)
            a_co = int(greedy_actions(fast, [g], [co[p]])[0])
            assert a_py == a_co, f"seed {seed}, decision {decisions}: python {a_py}, compiled {a_co}"
            ref.step(a_py)
            fast.step_game(g, a_co)
            decisions += 1
        assert ref.game.scores == fast.scores(g)
        assert fast.actions(g) == list(ref.game.history)  # the compiled history held every decision
        if check is not None:
            check(fast, g, seed)
    assert decisions > 60 * len(seeds)
    return phases


def test_a_batch_of_games_in_one_call():
    opts = EnvOptions.from_kwargs(num_players=2)
    fast = FastBatch(opts, 5)
    refs = [Match(opts) for _ in range(5)]
    for g, m in enumerate(refs):
        m.reset(100 + g)
        fast.reset(g, 100 + g)
    py = [GreedyPolicy(epsilon=0.1, seed=g) for g in range(5)]
    co = [GreedyPolicy(epsilon=0.1, seed=g) for g in range(5)]
    for _ in range(60):
        acts = greedy_actions(fast, range(5), co)
        for g, m in enumerate(refs):
            assert py[g].act({"action_mask": m.mask()}, m) == acts[g]
            m.step(int(acts[g]))
            fast.step_game(g, int(acts[g]))


def test_greedy_on_the_compiled_env_plays_the_same_games_without_a_reference_game():
    for seed in range(3):
        res = {}
        for engine in ("python", "numba"):
            res[engine] = play_match(
                [GreedyPolicy(seed=1), GreedyPolicy(epsilon=0.2, seed=2)], seed=seed, engine=engine
            )
        assert res["python"] == res["numba"]
    env = carc_env.raw_env(engine="numba")
    env.reset(seed=4)
    pol = GreedyPolicy(seed=0)
    for _ in range(30):
        env.step(pol.act(env.observe(env.agent_selection), env))
    assert env.unwrapped.match.batch._shadow[0] is None  # no Python Game was replayed for greedy


def test_the_vector_env_with_greedy_opponents_matches_across_engines():
    out = {}
    for engine in ("python", "numba"):
        venv = CarcassonneVectorEnv(3, seed=7, opponents=GreedyPolicy(epsilon=0.1, seed=3), engine=engine, threads=1)
        obs, _ = venv.reset(seed=7)
        rng = np.random.default_rng(0)
        trace = []
        for _ in range(80):
            acts = [int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]]
            obs, r, terminated, truncated, _ = venv.step(acts)
            trace.append(
                (np.asarray(r).tolist(), np.asarray(terminated | truncated).tolist(), obs["globals"].tobytes())
            )
        out[engine] = trace
    assert out["python"] == out["numba"]


def test_the_random_baseline_is_unchanged_by_the_compiled_greedy():
    assert play_match([RandomPolicy(seed=1), GreedyPolicy(seed=2)], seed=3, engine="numba") == play_match(
        [RandomPolicy(seed=1), GreedyPolicy(seed=2)], seed=3, engine="python"
    )
