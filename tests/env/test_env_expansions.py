"""The environment on every expansion combination: PettingZoo's api_test, seed_test and render_test with
each expansion alone and all together, masks against the core, incremental encoding against a fresh one
on every combination, the vector env with every expansion."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from _env_expansions import ALL, COMBOS, SHOWCASE, pick, seed_quarters
from pettingzoo.test import api_test, render_test, seed_test

from carc_env.core import Game, GameConfig, IllegalActionError
from carc_env.encoding import ActionCodec, ObservationEncoder
from carc_env.env.aec import env as make_env
from carc_env.env.aec import raw_env
from carc_env.env.vector import CarcassonneVectorEnv


def ids(combo: tuple[str, ...]) -> str:
    return "+".join(combo) or "base"


@pytest.fixture(autouse=True)
def _no_codec_warnings():
    """Every built-in phase has a codec: constructing an env must not warn (api_test's own notes on
    dict observations are silenced inside the tests that call it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*no registered action codec.*")
        yield


def _pz(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(observation|action_mask|Action mask|seed|reset).*")
        fn(*args, **kw)


@pytest.mark.parametrize("expansions", SHOWCASE, ids=ids)
def test_api_test_on_expansions(expansions):
    _pz(api_test, make_env(num_players=3, expansions=("base", *expansions)), num_cycles=60)


@pytest.mark.parametrize("expansions", SHOWCASE, ids=ids)
def test_seed_test_on_expansions(expansions):
    _pz(seed_test, functools.partial(make_env, num_players=3, expansions=("base", *expansions)), num_cycles=40)


@pytest.mark.parametrize("expansions", SHOWCASE, ids=ids)
def test_render_test_on_expansions(expansions, capsys):
    _pz(render_test, functools.partial(make_env, num_players=2, expansions=("base", *expansions), tile_px=16))
    capsys.readouterr()  # the "human" mode prints the board


@pytest.mark.parametrize("expansions", SHOWCASE, ids=ids)
def test_masks_equal_the_core_and_observations_fit_on_expansions(expansions):
    # The Python engine: seed_quarters edits the core's game (the compiled engine's masks are compared
    # with the core's by tests/fast/test_fast_differential.py).
    e = raw_env(num_players=3, expansions=("base", *expansions), engine="python")
    rng = np.random.default_rng(0)
    e.reset(seed=3)
    game, codec = e.game, e.codec
    seed_quarters(game, rng)
    space = e.observation_space("player_0")
    step = 0
    while not game.over:
        view = codec.view(game)
        mask = view.mask
        enabled = set(np.flatnonzero(mask).tolist())
        assert enabled, game.phase
        coded = set()
        for a in game.legal_actions():
            try:
                coded.add(codec.encode(game, a))
            except IllegalActionError:
                pass  # outside the window, counted in view.outside / view.dropped
        assert coded == enabled, game.phase
        assert len(game.legal_actions()) == len(enabled) + view.outside + view.dropped
        if step % 5 == 0 or game.phase.startswith("count"):
            for a in rng.choice(sorted(enabled), size=min(4, len(enabled)), replace=False):
                game.clone().apply(codec.decode(game, int(a)))
            obs = e.observe(e.agent_selection)
            assert space.contains(obs), game.phase
        e.step(pick(game, codec, mask, rng))
        step += 1


@pytest.mark.parametrize("expansions", COMBOS, ids=ids)
def test_incremental_encoding_equals_fresh_encoding_on_every_combination(expansions):
    n = 3
    game = Game(GameConfig(n, ("base", *expansions)), seed=len(expansions))
    codec = ActionCodec(game.rules)
    enc = ObservationEncoder(game.rules, n, codec)
    rng = np.random.default_rng(7)
    seed_quarters(game, rng)
    i = 0
    while not game.over:
        if i % 4 == 0 or game.guests or game.phase.startswith("count"):
            seat = i % n
            inc = enc.encode(game, seat)
            fresh = ObservationEncoder(game.rules, n, ActionCodec(game.rules)).encode(game, seat)
            for k in inc:
                assert inc[k].dtype == fresh[k].dtype
                assert np.array_equal(inc[k], fresh[k]), (k, game.phase, i)
        game.apply(codec.decode(game, pick(game, codec, codec.mask(game), rng)))
        i += 1


def test_every_combination_plays_a_game_through_the_wrapped_env():
    rng = np.random.default_rng(1)
    for expansions in COMBOS:
        e = make_env(num_players=2, expansions=("base", *expansions))
        e.reset(seed=7)
        n = 0
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            assert obs["action_mask"].any() and np.array_equal(obs["action_mask"], info["action_mask"])
            if n % 10 == 0:
                assert e.observation_space(agent).contains(obs)
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            n += 1
        assert n > 50, expansions


def test_vector_env_with_every_expansion_matches_single_envs():
    n_envs, seed, n = 2, 11, 3
    venv = CarcassonneVectorEnv(n_envs, seed=seed, num_players=n, expansions=ALL, reward="score_delta")
    singles = [raw_env(num_players=n, expansions=ALL, reward="score_delta") for _ in range(n_envs)]
    for i, e in enumerate(singles):
        e.reset(seed=seed + i)
    obs, infos = venv.reset()
    assert obs["board"].shape[1] == len(singles[0].channel_names)
    rng = np.random.default_rng(0)
    done_games = 0
    phases = set()
    for _step in range(250):
        actions = np.zeros(n_envs, dtype=np.int64)
        for i, e in enumerate(singles):
            single = e.observe(e.agent_selection)
            assert venv.seats[i] == e.seat_of(e.agent_selection)
            for k in single:
                assert np.array_equal(obs[k][i], single[k]), (k, i, _step)
            actions[i] = pick(e.game, e.codec, single["action_mask"], rng)
            phases.add(e.game.phase)
        obs, _, dones, _, infos = venv.step(actions)
        for i, e in enumerate(singles):
            e.step(int(actions[i]))
            assert np.allclose(infos["seat_rewards"][i], [e.rewards[a] for a in e.possible_agents])
            assert dones[i] == e.game.over
            if dones[i]:
                done_games += 1
                e.reset()
    assert done_games >= 1
    assert {"tile", "follower"} <= phases
    assert set(ALL) - {"base"} == {
        "count",
        "darmstadt",
        "king_robber",
        "river2",
        "royal_gateways",
        "sagrada_familia",
        "shrines",
        "stained_glass",
    }
