"""The vector env is a gymnasium.vector.VectorEnv: spaces, autoreset, infos, seeds, and Gymnasium's own wrappers."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.wrappers.vector import (
    DictInfoToList,
    NormalizeReward,
    RecordEpisodeStatistics,
    TransformObservation,
    VectorizeTransformObservation,
)

from carc_env.baselines import GreedyPolicy, RandomPolicy
from carc_env.env.aec import raw_env
from carc_env.env.vector import CarcassonneVectorEnv

ENGINES = ("python", "numba")


class _FirstLegal:
    """A deterministic opponent that draws no random numbers (so rows cannot disturb each other's games)."""

    uses_observation = False

    def act(self, obs: dict, env: object) -> int:
        return int(np.flatnonzero(obs["action_mask"])[0])


def _random_actions(obs: dict, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]], dtype=np.int64)


@pytest.mark.parametrize("engine", ENGINES)
def test_spaces_and_metadata(engine):
    v = CarcassonneVectorEnv(3, engine=engine)
    assert isinstance(v, VectorEnv) and v.num_envs == 3
    assert v.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    single = raw_env().observation_space("player_0")
    assert v.single_observation_space == single
    assert v.single_action_space == spaces.Discrete(single["action_mask"].shape[0])
    assert v.action_space == spaces.MultiDiscrete([v.single_action_space.n] * 3)
    for k, box in v.observation_space.spaces.items():
        assert box.shape == (3, *single[k].shape) and box.dtype == single[k].dtype, k
    obs, infos = v.reset(seed=0)
    assert obs in v.observation_space
    assert infos["seat"].shape == (3,) and infos["_seat"].all()
    obs, rewards, terms, truncs, infos = v.step(_random_actions(obs, np.random.default_rng(0)))
    assert obs in v.observation_space
    assert rewards.shape == terms.shape == truncs.shape == (3,)
    assert terms.dtype == truncs.dtype == np.bool_ and not truncs.any()
    assert all(isinstance(a, np.ndarray) for a in infos.values())
    v.close()
    assert v.closed


@pytest.mark.parametrize("opponents", [None, RandomPolicy(seed=4)], ids=["self_play", "opponents"])
@pytest.mark.parametrize("engine", ENGINES)
def test_same_step_autoreset_never_hands_out_an_all_zero_mask(engine, opponents):
    v = CarcassonneVectorEnv(4, engine=engine, opponents=opponents, num_players=3)
    obs, _ = v.reset(seed=2)
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(450):
        assert obs["action_mask"].any(axis=1).all()
        obs, _, terms, _, infos = v.step(_random_actions(obs, rng))
        ends += int(terms.sum())
        if terms.any():  # the finished rows already show the next game's first decision
            assert np.array_equal(infos["_final_scores"], terms)
            tiles = obs["board"][terms, v.channel_names.index("tile")].sum(axis=(1, 2))
            assert (tiles <= 3).all()  # the start tile and at most the two opponents' first tiles
    assert ends >= 4


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("num_players", [2, 3])
def test_the_documented_reward_is_the_learners_at_game_ends(engine, num_players):
    """Issue 26 item 2: at the step that ends a game, the reward is the finished game's learner's
    (the old recipe read the next game's seat); checked against the final scores, seat by seat."""
    v = CarcassonneVectorEnv(8, engine=engine, num_players=num_players, opponents=GreedyPolicy(0.3, seed=1))
    obs, infos = v.reset(seed=5)
    rng = np.random.default_rng(0)
    checked, seat_changed = 0, 0
    while checked < 24:
        learners = infos["learner_seat"].copy()  # the seat deciding obs[i], i.e. the one this step's reward is for
        obs, rewards, terms, _, infos = v.step(_random_actions(obs, rng))
        for i in np.flatnonzero(terms):
            scores = infos["final_scores"][i]
            seat = int(infos["final_learner_seat"][i])
            assert seat == learners[i]
            best = scores.max()
            expect = (1.0 if (scores == best).sum() == 1 else 0.0) if scores[seat] == best else -1.0
            assert rewards[i] == expect, (i, scores, seat)
            assert rewards[i] == infos["seat_rewards"][i, seat]
            assert infos["winners"][i].tolist() == (scores == best).tolist()
            seat_changed += int(infos["learner_seat"][i] != seat)  # the next game's seat rotates
            checked += 1
        assert not rewards[~terms].any()  # win_loss: nothing before the end
    assert seat_changed == checked  # every one of these ends would have read the wrong seat before


@pytest.mark.parametrize("engine", ENGINES)
def test_reset_seeds_int_list_and_none(engine):
    a = CarcassonneVectorEnv(3, engine=engine)
    b = CarcassonneVectorEnv(3, engine=engine)
    oa, _ = a.reset(seed=10)
    ob, _ = b.reset(seed=[10, 11, 12])
    assert all(np.array_equal(oa[k], ob[k]) for k in oa)
    rng = np.random.default_rng(0)
    for _ in range(3):  # game i of a seed list steps like a single env with that seed
        c = CarcassonneVectorEnv(3, engine=engine)
        oc, _ = c.reset(seed=[7, None, 3])
        e = raw_env(engine=engine)
        e.reset(seed=3)
        for _ in range(30):
            want = e.observe(e.agent_selection)
            assert all(np.array_equal(oc[k][2], want[k]) for k in want)
            acts = _random_actions(oc, rng)
            oc, *_ = c.step(acts)
            e.step(int(acts[2]))
    with pytest.raises(ValueError, match="one entry per game"):
        a.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"seed\[1\] must be a non-negative integer"):
        a.reset(seed=[1, -2, 3])
    with pytest.raises(ValueError, match="unknown reset option"):
        a.reset(options={"colour": 1})


@pytest.mark.parametrize("engine", ENGINES)
def test_record_episode_statistics_and_normalize_reward(engine):
    v = CarcassonneVectorEnv(4, engine=engine, reward="score_delta", opponents=RandomPolicy(seed=3))
    stats = RecordEpisodeStatistics(v)
    env = NormalizeReward(stats, gamma=0.99)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(2)
    returns = np.zeros(4)
    lengths = np.zeros(4, dtype=np.int64)
    seen = 0
    for _ in range(300):
        learners = v.learner_seats.copy()
        obs, normed, terms, truncs, infos = env.step(_random_actions(obs, rng))
        returns += infos["seat_rewards"][np.arange(4), learners]  # the unnormalised learner rewards
        lengths += 1
        assert np.isfinite(normed).all() and normed.shape == (4,)
        if terms.any():
            ep = infos["episode"]
            assert np.array_equal(infos["_episode"], terms)
            assert np.allclose(ep["r"][terms], returns[terms], atol=1e-4)  # the learner's own return
            assert np.array_equal(ep["l"][terms], lengths[terms])  # the learner's decisions
            returns[terms] = 0
            lengths[terms] = 0
            seen += int(terms.sum())
    assert seen >= 4 and len(stats.return_queue) == seen


@pytest.mark.parametrize("engine", ENGINES)
def test_observation_wrappers_on_the_next_step_mode(engine):
    # every VectorObservationWrapper refuses same-step envs, by Gymnasium's design: the next-step mode is for them
    with pytest.raises(ValueError, match="NEXT_STEP or DISABLED"):
        TransformObservation(CarcassonneVectorEnv(2, engine=engine), func=lambda o: o)
    v = CarcassonneVectorEnv(2, engine=engine, autoreset_mode=AutoresetMode.NEXT_STEP)
    assert v.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert CarcassonneVectorEnv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP  # the class default stays
    only_board = spaces.Dict(
        {"board": v.single_observation_space["board"], "action_mask": v.single_observation_space["action_mask"]}
    )
    batched = TransformObservation(
        v, func=lambda o: {"board": o["board"], "action_mask": o["action_mask"]}, single_observation_space=only_board
    )
    each = VectorizeTransformObservation(
        CarcassonneVectorEnv(2, engine=engine, autoreset_mode="NextStep"),
        wrapper=gymnasium.wrappers.TransformObservation,
        func=lambda o: {"board": o["board"], "action_mask": o["action_mask"]},
        observation_space=only_board,
    )
    ob, _ = batched.reset(seed=0)
    oe, _ = each.reset(seed=0)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(250):
        assert set(ob) == {"board", "action_mask"} and ob in batched.observation_space
        assert all(np.array_equal(ob[k], oe[k]) for k in ob)
        mask = ob["action_mask"]
        live = mask.any(axis=1)
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])  # 0: ignored
        ob, rb, tb, _, _ = batched.step(acts)
        oe, *_ = each.step(acts)
        assert not ob["action_mask"][tb].any()  # the final observation: nothing is legal
        assert (rb[~live] == 0).all()  # the step that starts the next game
        ends += int(tb.sum())
    assert ends >= 2


@pytest.mark.parametrize("self_play", [True, False], ids=["self_play", "opponents"])
@pytest.mark.parametrize("engine", ENGINES)
def test_next_step_mode_plays_the_same_games_as_same_step(engine, self_play):
    """Row by row (one random stream per row), both modes play the same games: same final scores, and the
    next game starts the same (the next-step mode just shows the end one step longer)."""
    results = []
    for mode in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
        v = CarcassonneVectorEnv(3, engine=engine, autoreset_mode=mode, opponents=None if self_play else _FirstLegal())
        obs, _ = v.reset(seed=9)
        rngs = [np.random.default_rng(i) for i in range(3)]
        finals: list[list] = [[], [], []]
        starts: list[list] = [[], [], []]
        while min(len(f) for f in finals) < 2:
            acts = np.array(
                [r.choice(np.flatnonzero(m)) if m.any() else 0 for r, m in zip(rngs, obs["action_mask"], strict=True)]
            )
            was_over = ~obs["action_mask"].any(axis=1)
            obs, _, terms, _, infos = v.step(acts)
            for i in range(3):
                if terms[i]:
                    finals[i].append(infos["final_scores"][i].tolist())
                if (mode is AutoresetMode.SAME_STEP and terms[i]) or was_over[i]:
                    starts[i].append(obs["board"][i].tobytes())
        results.append(([f[:2] for f in finals], [s_[:1] for s_ in starts]))
    assert results[0] == results[1]


def test_dict_info_to_list_gives_per_game_dicts():
    env = DictInfoToList(CarcassonneVectorEnv(3, opponents=RandomPolicy(seed=0)))
    obs, infos = env.reset(seed=4)
    assert isinstance(infos, list) and [i["seat"] for i in infos] == list(env.unwrapped.seats)
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs, _, terms, _, infos = env.step(_random_actions(obs, rng))
        for i in np.flatnonzero(terms):
            assert {"final_scores", "final_learner_seat", "episode_length"} <= set(infos[i])
        for i in np.flatnonzero(~terms):
            assert "final_scores" not in infos[i]


def test_gymnasium_make_vec_gives_the_vector_env_with_the_single_agent_defaults():
    envs = gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=3, num_players=3)
    assert isinstance(envs.unwrapped, CarcassonneVectorEnv) and envs.num_envs == 3
    assert [type(p).__name__ for p in envs.unwrapped.opponents] == ["RandomPolicy"]  # as gymnasium.make's env
    obs, infos = envs.reset(seed=0)
    assert obs["action_mask"].any(axis=1).all() and "learner_seat" in infos
    with pytest.raises(ValueError, match="illegal_action is the single-agent env's"):
        gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=2, illegal_action="raise")
    sync = gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=2, vectorization_mode="sync")
    assert not isinstance(sync.unwrapped, CarcassonneVectorEnv)  # N single envs, Gymnasium's next-step autoreset
