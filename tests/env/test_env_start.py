"""Start anywhere: every env starts from a saved game record, and plays on exactly as the recorded game."""

from __future__ import annotations

import json

import numpy as np
import pytest

from carc_env.baselines import RandomPolicy
from carc_env.core import ConfigError
from carc_env.core.record import RecordError, to_record
from carc_env.env.aec import raw_env
from carc_env.env.gym_env import CarcassonneGymEnv
from carc_env.env.vector import CarcassonneVectorEnv

ENGINES = ("python", "numba")
KW = {"num_players": 3, "reward": "score_delta", "expansions": ("king_robber",)}


def _random_steps(e: raw_env, k: int, rng: np.random.Generator) -> list[int]:
    played = []
    for _ in range(k):
        a = int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))
        e.step(a)
        played.append(a)
    return played


def _same_state(a: raw_env, b: raw_env, where: str) -> None:
    assert a.agent_selection == b.agent_selection, where
    assert a.rewards == b.rewards and a.terminations == b.terminations, where
    for agent in a.possible_agents:
        oa, ob = a.observe(agent), b.observe(agent)
        for k in oa:
            assert oa[k].tobytes() == ob[k].tobytes(), (where, agent, k)
        assert np.array_equal(a.infos[agent]["action_mask"], b.infos[agent]["action_mask"]), where


@pytest.mark.parametrize("played_on", ENGINES)
@pytest.mark.parametrize("started_on", ENGINES)
def test_aec_env_started_from_a_record_plays_on_as_the_recorded_game(played_on, started_on):
    rng = np.random.default_rng(7)
    a = raw_env(engine=played_on, **KW)
    a.reset(seed=21)
    _random_steps(a, 37, rng)
    rec = to_record(a.game)
    b = raw_env(engine=started_on, **KW)
    b.reset(seed=99)  # another game first: the record replaces it entirely
    b.reset(options={"record": rec})
    assert b.engine == started_on
    _same_state(a, b, "start")
    steps = 0
    while not a.match.over:  # the rest of the game, the same moves on both
        act = int(rng.choice(np.flatnonzero(a.observe(a.agent_selection)["action_mask"])))
        a.step(act)
        b.step(act)
        _same_state(a, b, f"step {steps}")
        steps += 1
    assert a.match.scores == b.match.scores and steps > 20
    a.reset()  # an unseeded reset continues the record's seed stream, as after reset(seed=21)
    b.reset()
    _same_state(a, b, "next game")


@pytest.mark.parametrize("engine", ENGINES)
def test_record_as_json_text_as_a_file_and_cut_with_upto(engine, tmp_path):
    rng = np.random.default_rng(3)
    a = raw_env(engine=engine)
    a.reset(seed=4)
    _random_steps(a, 12, rng)
    early = raw_env(engine=engine)
    early.reset(seed=4)
    rec_early = to_record(early.game)
    _random_steps(a, 9, rng)
    rec = to_record(a.game)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(rec))
    for value in (json.dumps(rec), str(path), path):
        b = raw_env(engine=engine)
        b.reset(options={"record": value})
        _same_state(a, b, repr(value)[:40])
    c = raw_env(engine=engine)
    c.reset(options={"record": rec, "upto": 0})  # the position before the first action: the seeded start
    _same_state(early, c, "upto 0")
    d = raw_env(engine=engine)
    d.reset(options={"record": rec, "upto": 12})
    assert to_record(d.game)["actions"] == rec["actions"][:12]
    assert rec_early["actions"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_records_are_named_and_change_nothing(engine):
    rng = np.random.default_rng(0)
    a = raw_env(engine=engine)
    a.reset(seed=1)
    _random_steps(a, 5, rng)
    rec = to_record(a.game)
    b = raw_env(engine=engine)
    b.reset(seed=2)
    before = to_record(b.game)
    cases = [
        ({"record": rec, "upto": 99}, RecordError, "upto must be an integer from 0 to 5"),
        ({"upto": 2}, ConfigError, "upto needs a record"),
        ({"record": "{not json"}, RecordError, "not valid JSON"),
        ({"record": "/no/such/record.json"}, RecordError, "no such record file"),
        ({"record": 5}, RecordError, "must be a game record"),
        ({"record": dict(rec, actions=[*rec["actions"], "tile 40,40 r0"])}, RecordError, "does not replay"),
    ]
    for options, exc, words in cases:
        with pytest.raises(exc, match=words):
            b.reset(options=options)
        assert to_record(b.game) == before, options
    with pytest.raises(ConfigError, match="carries its own seed"):
        b.reset(seed=3, options={"record": rec})
    with pytest.raises(RecordError, match="played with .* this env plays"):
        raw_env(engine=engine, num_players=3).reset(options={"record": rec})
    while not a.match.over:
        _random_steps(a, 1, rng)
    with pytest.raises(RecordError, match="the recorded game is over .*upto"):
        b.reset(options={"record": to_record(a.game)})
    assert to_record(b.game) == before


@pytest.mark.parametrize("engine", ENGINES)
def test_gym_env_starts_from_a_record_at_the_learners_decision(engine):
    rng = np.random.default_rng(5)
    a = raw_env(engine=engine)
    a.reset(seed=8)
    _random_steps(a, 20, rng)
    seat = a.seat_of(a.agent_selection)
    g = CarcassonneGymEnv(engine=engine, opponents=RandomPolicy(seed=0))
    obs, info = g.reset(options={"record": to_record(a.game), "learner_seat": seat})
    assert info["learner_seat"] == seat
    want = a.observe(a.agent_selection)
    for k in want:
        assert np.array_equal(obs[k], want[k]), k
    assert np.array_equal(g.action_masks(), want["action_mask"].astype(bool))
    act = int(np.flatnonzero(want["action_mask"])[0])
    g.step(act)
    a.step(act)
    assert to_record(g.game)["actions"][: len(a.game.history)] == to_record(a.game)["actions"]


@pytest.mark.parametrize("opponents", [None, RandomPolicy(seed=3)], ids=["self_play", "opponents"])
@pytest.mark.parametrize("engine", ENGINES)
def test_vector_env_game_started_from_a_record_plays_on_as_the_recorded_game(engine, opponents):
    rng = np.random.default_rng(11)
    a = raw_env(engine=engine)
    a.reset(seed=30)
    _random_steps(a, 25, rng)
    rec = to_record(a.game)
    seat = a.seat_of(a.agent_selection)
    v = CarcassonneVectorEnv(2, engine=engine, opponents=opponents)
    twin = raw_env(engine=engine)  # game 1: an ordinary seeded game
    twin.reset(seed=6)
    options = {"record": [rec, None]}
    mine = RandomPolicy(seed=0)  # plays the opponents' moves here as the env's plays them there
    if opponents is not None:
        options["learner_seat"] = seat
        opponents.seed(0)
    obs, infos = v.reset(seed=[None, 6], options=options)
    assert v._batched == (engine == "numba" and opponents is None)
    finished = 0
    for step in range(400):
        for i, e in enumerate((a, twin)):
            want = e.observe(e.agent_selection)
            for k in want:
                assert np.array_equal(obs[k][i], want[k]), (step, i, k)
        acts = [int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]]
        obs, rewards, terms, _, infos = v.step(acts)
        for i, e in enumerate((a, twin)):
            e.step(acts[i])
            if opponents is not None:  # the env's opponent plays the same moves here
                while not e.match.over and e.seat_of(e.agent_selection) != seat:
                    e.step(int(mine.act(e.observe(e.agent_selection), e.match)))
            assert terms[i] == e.match.over, (step, i)
            if terms[i]:
                assert infos["final_scores"][i].tolist() == e.match.scores
                finished += 1
                e.reset()  # the vector env continues the game's seed stream
                if opponents is not None:
                    while e.seat_of(e.agent_selection) != int(v.learner_seats[i]):
                        e.step(int(mine.act(e.observe(e.agent_selection), e.match)))
        if finished >= 1 and opponents is not None:
            break
    assert finished >= 1


def test_vector_env_record_for_every_game():
    rng = np.random.default_rng(2)
    a = raw_env()
    a.reset(seed=3)
    _random_steps(a, 10, rng)
    v = CarcassonneVectorEnv(3)
    obs, _ = v.reset(options={"record": to_record(a.game)})
    want = a.observe(a.agent_selection)
    for i in range(3):
        assert np.array_equal(obs["board"][i], want["board"]) and np.array_equal(
            obs["action_mask"][i], want["action_mask"]
        )
    with pytest.raises(ConfigError, match="carries its own seed"):
        v.reset(seed=[1, None, None], options={"record": [to_record(a.game), None, None]})
    with pytest.raises(ValueError, match="one entry per game"):
        v.reset(options={"record": [to_record(a.game)]})
