"""A user's first contact: ids registered on a plain ``import carc_env``, Gymnasium's and SB3's checkers,
and the Gymnasium env's illegal-action policy."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import carc_env
from carc_env.baselines import GreedyPolicy
from carc_env.core import ActionTypeError, ConfigError, IllegalActionError
from carc_env.env.gym_env import CarcassonneGymEnv

ROOT = Path(__file__).resolve().parents[2]


def _run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing imported or registered beforehand)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout


def test_plain_import_registers_both_ids():
    out = _run_fresh(
        "import sys\n"
        "import carc_env\n"
        "assert 'carc_env.env' not in sys.modules, 'registration must not import the env modules'\n"
        "import gymnasium, pettingzoo\n"
        "g = gymnasium.make('carc_env/Carcassonne-v0', num_players=3)\n"
        "obs, info = g.reset(seed=1)\n"
        "assert obs['action_mask'].any() and info['learner_seat'] == 1\n"
        "print(type(g.unwrapped).__name__, g.unwrapped.num_players, g.spec.id)\n"
        "p = pettingzoo.make('aec', 'carc_env/carcassonne-v0', num_players=2)\n"
        "p.reset(seed=0)\n"
        "obs, rew, term, trunc, info = p.last()\n"
        "print(p.metadata['name'], p.unwrapped.__class__.__name__, int(obs['action_mask'].sum()) > 0)\n"
    )
    assert out.split("\n")[:2] == ["CarcassonneGymEnv 3 carc_env/Carcassonne-v0", "carcassonne_v0 raw_env True"]


def test_gymnasium_module_form_needs_no_import():
    out = _run_fresh(
        "import sys, gymnasium\n"
        "assert 'carc_env' not in sys.modules\n"
        "env = gymnasium.make('carc_env:Carcassonne-v0', num_players=2)\n"
        "obs, info = env.reset(seed=3)\n"
        "print(type(env.unwrapped).__module__, info['learner_seat'], env.action_space.n)\n"
    )
    assert out.strip() == "carc_env.env.gym_env 1 2925"


def test_registration_is_idempotent_and_versioned():
    import pettingzoo

    from carc_env import registration

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second registration must neither warn nor override
        registration.register()
    for env_id in (registration.GYM_ID, registration.GYM_MODULE_ID):
        spec = gymnasium.spec(env_id)
        assert spec.version == 0 and spec.entry_point == registration.GYM_ENTRY_POINT
    assert pettingzoo.aec_registry[registration.PETTINGZOO_ID].version == 0
    assert carc_env.env.GYM_ID == registration.GYM_ID  # the old names keep working


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_gymnasium_check_env_passes_with_default_options(num_players):
    from gymnasium.utils.env_checker import check_env

    # with a spec, the checker also tries every render mode; 3+ players exercise the seeding contract
    # (a seeded reset determines the learner seat whatever resets came before)
    kwargs = {} if num_players == 2 else {"num_players": num_players}
    env = gymnasium.make("carc_env/Carcassonne-v0", **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_sb3_check_env_passes_with_default_options():
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(CarcassonneGymEnv())
    # SB3 only advises on the observation layout (its default CNN expects images; our extractor reads the
    # dict itself, carc_env.integrations.sb3); nothing else may come up
    for w in caught:
        msg = str(w.message)
        assert "image" in msg or "unconventional shape" in msg, msg


def _illegal_action(env: CarcassonneGymEnv) -> int:
    return int(np.flatnonzero(env.action_masks() == 0)[0])


def test_illegal_action_ends_the_episode_with_a_loss_by_default():
    env = CarcassonneGymEnv(opponents=GreedyPolicy(seed=0))
    obs, info = env.reset(seed=4)
    placed = len(env.game.placements)
    bad = _illegal_action(env)
    obs2, reward, terminated, truncated, info2 = env.step(bad)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info2["illegal_action"] == bad
    assert f"action {bad} " in info2["illegal_reason"] and "'tile'" in info2["illegal_reason"]
    assert len(env.game.placements) == placed and not env.game.over  # the game was not touched
    for key in obs:
        assert np.array_equal(obs[key], obs2[key]) and obs[key] is not obs2[key]
    with pytest.raises(IllegalActionError, match="episode is over"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    obs, info = env.reset(seed=4)  # a reset starts over normally
    assert "illegal_action" not in info
    obs, reward, terminated, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert not terminated


def test_illegal_reward_adds_to_what_the_learner_had_earned():
    env = CarcassonneGymEnv(reward="score_delta", learner_seat=1, illegal_reward=-5, opponents=GreedyPolicy(seed=0))
    # seat 0 (greedy) moves first, inside reset: the city cap closes the start tile's city and greedy's follower
    # scores it at once (4 points), which score_delta charges to the learner with its first step: 0.01 * (0 - 4)
    env.reset(seed=0, options={"draw_order": ["BA-E", "BA-D", "BA-U"]})
    assert env.game.scores == [4, 0]
    _, reward, terminated, _, _ = env.step(_illegal_action(env))
    assert terminated and reward == pytest.approx(-0.04 - 5.0)


def test_illegal_action_raise_mode_keeps_the_old_behaviour():
    env = CarcassonneGymEnv(illegal_action="raise")
    env.reset(seed=2)
    placed = len(env.game.placements)
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(_illegal_action(env))
    assert len(env.game.placements) == placed
    _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))  # the episode goes on
    assert not terminated and len(env.game.placements) >= placed + 1


@pytest.mark.parametrize("mode", ["loss", "raise"])
def test_actions_outside_the_space_always_raise(mode):
    env = CarcassonneGymEnv(illegal_action=mode)
    env.reset(seed=0)
    for bad in (-1, env.action_space.n):
        with pytest.raises(IllegalActionError, match="outside the action space"):
            env.step(bad)
    # a non-integer is a type error in both modes, never a move (and never a lost episode)
    with pytest.raises(ActionTypeError, match="must be an integer"):
        env.step(1.5)
    assert not env.game.over


def test_illegal_action_options_are_validated():
    with pytest.raises(ConfigError, match="illegal_action"):
        CarcassonneGymEnv(illegal_action="ignore")
    with pytest.raises(ConfigError, match="illegal_reward"):
        CarcassonneGymEnv(illegal_reward=float("nan"))
    with pytest.raises(ConfigError, match="illegal_reward"):
        gymnasium.make("carc_env/Carcassonne-v0", illegal_reward="-1")
