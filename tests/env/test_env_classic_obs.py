"""obs_format="classic": PettingZoo's classic observation convention, read by tools written for it."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import carc_env
from carc_env.baselines import RandomPolicy
from carc_env.core import ConfigError
from carc_env.env.gym_env import CarcassonneGymEnv
from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.env.wrappers import flat_layout, flatten_observation

ENGINES = ("python", "numba")


def _play_twins(engine: str, steps: int, seed: int = 3):
    """A classic env and a dict env on one game: yield both observations of each decision."""
    classic, plain = carc_env.env(obs_format="classic", engine=engine), carc_env.env(engine=engine)
    classic.reset(seed=seed)
    plain.reset(seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        agent = plain.agent_selection
        assert classic.agent_selection == agent
        c, d = classic.observe(agent), plain.observe(agent)
        yield c, d
        a = int(rng.choice(np.flatnonzero(d["action_mask"])))
        classic.step(a)
        plain.step(a)


@pytest.mark.parametrize("engine", ENGINES)
def test_classic_observation_is_the_flat_features_beside_the_mask(engine):
    space = carc_env.env(obs_format="classic", engine=engine).observation_space("player_0")
    inner = carc_env.env(engine=engine).observation_space("player_0")
    assert set(space.spaces) == {"observation", "action_mask"}
    layout = flat_layout(inner)
    for c, d in _play_twins(engine, 30):
        assert set(c) == {"observation", "action_mask"}
        assert c["observation"].dtype == np.float32 and c in space
        assert np.array_equal(c["observation"], flatten_observation(d))
        assert np.array_equal(c["observation"][layout["board"]].reshape(d["board"].shape), d["board"])
        assert np.array_equal(c["action_mask"], d["action_mask"]) and c["action_mask"].any()
        assert not c["observation"].flags.writeable and not c["action_mask"].flags.writeable


def test_pettingzoo_api_test_reads_the_classic_observation():
    # api_test unwraps obs["observation"] and checks it against the space (PettingZoo's own convention)
    api_test(carc_env.env(obs_format="classic"), num_cycles=300)


@pytest.mark.parametrize("engine", ENGINES)
def test_tianshou_pettingzoo_env_plays_a_whole_game(engine):
    from tianshou.env import PettingZooEnv

    env = PettingZooEnv(carc_env.env(obs_format="classic", engine=engine))
    plain = carc_env.env(engine=engine)
    obs, info = env.reset(seed=5)
    plain.reset(seed=5)
    rng = np.random.default_rng(1)
    steps, done = 0, False
    while not done:
        agent = plain.agent_selection
        d = plain.observe(agent)
        assert obs["agent_id"] == agent
        assert np.array_equal(obs["obs"], flatten_observation(d))
        assert np.array_equal(np.asarray(obs["mask"]), d["action_mask"].astype(bool))
        a = int(rng.choice(np.flatnonzero(obs["mask"])))
        obs, rew, term, trunc, info = env.step(a)
        plain.step(a)
        steps += 1
        done = term or trunc
    assert plain.unwrapped.match.over and steps > 71
    assert list(rew) == [plain.rewards[a] for a in plain.possible_agents] and sorted(rew) in ([-1, 1], [0, 0])


def test_tianshou_cannot_read_the_default_dict_observation():
    """Why the option exists: a tool of the classic convention finds no "observation" in the default."""
    from tianshou.env import PettingZooEnv

    with pytest.raises(KeyError, match="observation"):
        PettingZooEnv(carc_env.env()).reset(seed=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_gym_and_vector_envs_give_the_classic_observation_too(engine):
    g = CarcassonneGymEnv(obs_format="classic", engine=engine, opponents=RandomPolicy(seed=1))
    obs, _ = g.reset(seed=2)
    assert set(obs) == {"observation", "action_mask"} and obs in g.observation_space
    v = CarcassonneVectorEnv(3, obs_format="classic", engine=engine, seed=4)
    w = CarcassonneVectorEnv(3, engine=engine, seed=4)
    ov, _ = v.reset()
    ow, _ = w.reset()
    for _ in range(40):
        assert ov in v.observation_space
        for i in range(3):
            assert np.array_equal(ov["observation"][i], flatten_observation({k: a[i] for k, a in ow.items()}))
        assert np.array_equal(ov["action_mask"], ow["action_mask"])
        acts = [int(np.flatnonzero(m)[-1]) for m in ow["action_mask"]]
        ov, *_ = v.step(acts)
        ow, *_ = w.step(acts)


def test_bad_obs_format_is_named():
    with pytest.raises(ConfigError, match="obs_format must be one of"):
        carc_env.env(obs_format="flat")
