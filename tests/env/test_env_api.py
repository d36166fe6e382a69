"""The PettingZoo AEC env: PettingZoo's own tests, terminal protocol, pickling, options, registration."""

from __future__ import annotations

import pickle
import re
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import carc_env
from carc_env.core import ConfigError, IllegalActionError
from carc_env.env import aec
from carc_env.env.aec import env as make_env
from carc_env.env.aec import raw_env


def _random_action(obs: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_pettingzoo_api_test(num_players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test warns on dict observations and on its own reset option
        api_test(make_env(num_players=num_players), num_cycles=300)


def test_pettingzoo_seed_test():
    seed_test(make_env, num_cycles=60)


def test_pettingzoo_render_test():
    render_test(make_env)


def test_render_modes_return_text_and_image():
    e = make_env(render_mode="ansi")
    e.reset(seed=1)
    text = e.render()
    assert isinstance(text, str) and text
    e = make_env(render_mode="rgb_array", tile_px=16)
    e.reset(seed=1)
    img = e.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3


def test_metadata_and_spaces():
    e = raw_env()
    assert e.metadata["name"] == "carcassonne_v0"
    assert e.metadata["is_parallelizable"] is False
    assert {"ansi", "rgb_array"} <= set(e.metadata["render_modes"])
    assert e.possible_agents == ["player_0", "player_1"]
    space = e.observation_space("player_0")
    assert set(space.spaces) == {"board", "globals", "windows", "action_mask"}
    assert space["board"].dtype == np.uint8 and space["board"].shape[0] == len(e.channel_names)
    assert space["globals"].shape == (len(e.global_names),)
    assert space["windows"].shape == (2, 12)
    assert e.action_space("player_0").n == e.codec.n == space["action_mask"].shape[0]


def test_mask_in_obs_and_info_and_never_empty():
    e = make_env()
    rng = np.random.default_rng(0)
    for seed in range(3):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            assert obs["action_mask"].dtype == np.int8
            assert obs["action_mask"].any()
            assert np.array_equal(obs["action_mask"], info["action_mask"])
            for other in e.agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
                    assert not e.infos[other]["action_mask"].any()
            e.step(_random_action(obs, rng))


@pytest.mark.parametrize("reward", ["win_loss", "score_diff", "score_delta"])
def test_terminal_protocol_and_rewards(reward):
    e = make_env(num_players=3, reward=reward)
    rng = np.random.default_rng(5)
    e.reset(seed=11)
    game = e.unwrapped.game
    total = dict.fromkeys(e.possible_agents, 0.0)
    seen_terminal = set()
    final_scores = None
    for agent in e.agent_iter():
        obs, cum, term, trunc, info = e.last()
        assert not trunc
        if term:
            if final_scores is None:
                # every agent is terminated at the same step
                assert all(e.terminations[a] for a in e.agents)
                final_scores = info["final_scores"]
            seen_terminal.add(agent)
            e.step(None)
            continue
        e.step(_random_action(obs, rng))
        for a, r in e.rewards.items():
            total[a] += r
    assert seen_terminal == set(e.possible_agents)
    assert e.agents == []
    scores = list(game.scores)
    assert list(final_scores) == scores
    n = 3
    for i, a in enumerate(e.possible_agents):
        others = [scores[j] for j in range(n) if j != i]
        if reward == "win_loss":
            best = max(scores)
            expect = (1.0 if scores.count(best) == 1 else 0.0) if scores[i] == best else -1.0
        elif reward == "score_diff":
            expect = 0.01 * (scores[i] - max(others))
        else:
            expect = 0.01 * (scores[i] - sum(others) / (n - 1))
        assert total[a] == pytest.approx(expect, abs=1e-9)


def test_last_returns_cumulative_reward():
    e = make_env(reward="score_delta")
    rng = np.random.default_rng(2)
    e.reset(seed=4)
    pending = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, cum, term, trunc, _ = e.last()
        assert cum == pytest.approx(pending[agent])
        pending[agent] = 0.0
        e.step(None if term or trunc else _random_action(obs, rng))
        for a, r in e.rewards.items():
            pending[a] += r


def test_pickle_mid_game_restores_and_continues_identically():
    e = make_env()
    rng = np.random.default_rng(0)
    e.reset(seed=7)
    for _ in range(41):
        obs, *_ = e.last()
        e.step(_random_action(obs, rng))
    e2 = pickle.loads(pickle.dumps(e))
    while True:
        o1, r1, t1, _, i1 = e.last()
        o2, r2, t2, _, i2 = e2.last()
        assert all(np.array_equal(o1[k], o2[k]) for k in o1)
        assert (r1, t1, e.agent_selection) == (r2, t2, e2.agent_selection)
        assert np.array_equal(i1["action_mask"], i2["action_mask"])
        if t1:
            break
        a = _random_action(o1, rng)
        e.step(a)
        e2.step(a)
    assert e.unwrapped.game.scores == e2.unwrapped.game.scores


def test_reset_seed_and_draw_order():
    e = raw_env()
    e.reset(seed=3)
    order = list(e.game.draw_order)
    e.reset(seed=3)
    assert e.game.draw_order == order
    e.reset(seed=4)
    assert e.game.draw_order != order
    forced = ["BA-U", "BA-V", "BA-E"]
    e.reset(seed=0, options={"draw_order": forced})
    assert e.game.tile_id == "BA-U"
    # unseeded resets continue the seeded stream deterministically
    a, b = raw_env(), raw_env()
    a.reset(seed=9)
    b.reset(seed=9)
    a.reset()
    b.reset()
    assert a.game.draw_order == b.game.draw_order
    with pytest.warns(UserWarning, match="ignores unknown option"):
        e.reset(seed=0, options={"bogus": 1})


def test_acting_agent_follows_the_core():
    e = raw_env(num_players=4)
    rng = np.random.default_rng(1)
    e.reset(seed=2)
    while not e.game.over:
        assert e.agent_selection == f"player_{e.game.player}"
        e.step(_random_action(e.observe(e.agent_selection), rng))


def test_illegal_action_raw_env_raises_and_wrapped_env_terminates():
    e = raw_env()
    e.reset(seed=0)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="not legal"):
        e.step(bad)
    w = make_env()
    w.reset(seed=0)
    agent = w.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w.step(bad)
    assert all(w.terminations.values())
    assert w.rewards[agent] == -1


def test_text_conversion_helpers():
    e = raw_env()
    e.reset(seed=0, options={"draw_order": ["BA-E"]})
    a = e.action_from_text("tile 0,-1 r2")
    assert e.action_to_text(a) == "tile 0,-1 r2"
    e.step(a)
    assert e.action_to_text(e.action_from_text("follower c1")) == "follower c1"
    assert e.action_to_text(e.action_from_text("pass")) == "pass"


BAD_OPTIONS = [
    ({"num_players": 1}, "num_players"),
    ({"num_players": 6}, "num_players"),
    ({"num_players": "2"}, "num_players"),
    ({"expansions": "base"}, "expansions"),
    ({"expansions": ("no_such_expansion",)}, "no_such_expansion"),
    ({"reward": "points"}, "reward"),
    ({"reward_scale": 0}, "reward_scale"),
    ({"window": (2, 2)}, "window"),
    ({"window": (9,)}, "window"),
    ({"window": (300, 300)}, "window"),
    ({"render_mode": "video"}, "render_mode"),
    ({"followers": 0}, "followers"),
    ({"rules": {"no_such_expansion": {}}}, "no_such_expansion"),
    ({"rules": {"base": {"bogus": True}}}, "bogus"),
    ({"colour": "red"}, "colour"),
]


@pytest.mark.parametrize(("options", "name"), BAD_OPTIONS)
def test_bad_options_raise_clear_errors(options, name):
    with pytest.raises(ConfigError, match=re.escape(name)):
        make_env(**options)
    assert issubclass(ConfigError, ValueError)


def test_unknown_option_lists_allowed_options():
    with pytest.raises(ConfigError, match="allowed options: .*num_players"):
        raw_env(speed=3)


def test_registration():
    assert "carc_env/Carcassonne-v0" in gymnasium.registry
    g = gymnasium.make("carc_env/Carcassonne-v0")
    obs, info = g.reset(seed=0)
    assert "action_mask" in obs and "action_mask" in info
    assert hasattr(pettingzoo, "aec_registry"), "PettingZoo >= 1.27 has a registry; update this test if it moved"
    p = pettingzoo.make("aec", "carc_env/carcassonne-v0", num_players=3)
    p.reset(seed=0)
    assert p.num_agents == 3
    assert type(p.unwrapped) is raw_env


def test_package_level_names():
    e = carc_env.env(num_players=2)  # callable package or lazy function: both work
    e.reset(seed=0)
    assert isinstance(e.unwrapped, carc_env.raw_env)
    assert carc_env.raw_env is aec.raw_env


def _documented(doc: str) -> list[re.Pattern]:
    patterns = []
    for m in re.finditer(r"``([A-Za-z0-9_{}]+)``", doc):
        pat = re.sub(r"\\\{[^}]*\\\}", r"[A-Za-z0-9_+-]+", re.escape(m.group(1)))
        patterns.append(re.compile(pat + r"$"))
    return patterns


def test_every_channel_and_global_is_documented():
    """The core's channels and globals in the env docstring, each plug-in's in its observe module."""
    from _env_expansions import MAXIMAL

    from carc_env.expansions import part

    core = _documented(aec.__doc__)
    for n, exps in ((2, ()), (5, ()), *((3, m) for m in MAXIMAL)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # generic codecs of expansion phases
            e = raw_env(num_players=n, expansions=("base", *exps))
        enc = e.match.encoder
        owned = {}
        for exp in e.match.rules.expansions:
            module = part(exp.KEY, "observe")
            if module is None:
                continue
            ext = next(x for x in enc.extensions if type(x) is module.Observation)
            for name in (*ext.static_channels, *ext.dynamic_channels, *ext.global_names, *ext.window_columns):
                owned[name] = (exp.KEY, _documented(module.__doc__))
        for name in e.channel_names + e.global_names + e.window_names:
            key, patterns = owned.get(name, ("the core", core))
            where = "carc_env.env.aec" if key == "the core" else f"the observe module of plug-in {key!r}"
            assert any(p.match(name) for p in patterns), f"{name} is not documented in {where}"
    e = raw_env()
    assert len(e.channel_names) == 54 and len(e.global_names) == 92  # the counts the docstring gives


def test_wrapper_stack_is_the_classic_one():
    from pettingzoo.utils import wrappers

    e = make_env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper)
    assert str(e) == "carcassonne_v0"
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agents
    e.reset(seed=0)
    assert e.agents == e.unwrapped.agents and e.agent_selection == e.unwrapped.agent_selection
    # a real check (not PettingZoo's assert, which python -O removes): see test_input_validation
    with pytest.raises(IllegalActionError, match="outside the action space"):
        e.step(e.action_space(e.agent_selection).n)
