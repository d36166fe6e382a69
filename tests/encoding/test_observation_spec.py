"""The observation spec (carc_env.encoding.spec) and the optional action features in the observation."""

from __future__ import annotations

import numpy as np
import pytest

import carc_env
from carc_env.core import ConfigError
from carc_env.encoding import spec
from carc_env.encoding.placements import N_PLACEMENT_FEATURES, placement_features
from carc_env.encoding.spots import N_SPOT_FEATURES
from carc_env.env import aec
from carc_env.fast.features import N_PLACE, N_SPOT


def test_the_encoder_names_its_core_channels_and_features_from_the_spec():
    env = carc_env.raw_env(num_players=3)
    env.reset(seed=0)
    enc = env.unwrapped.encoder
    rules = env.unwrapped.game.rules
    values = {"S": ["N", "E", "S", "W"], "i": ["0", "1", "2"], "r": ["0", "1", "2", "3"],
              "kind": ["city", "road", "field", "building"]}  # fmt: skip
    dynamic = [n for e in spec.DYNAMIC_CHANNELS for n in spec.expand(e.name, **values)]
    start = enc.n_static  # the base game has no expansion channels: the dynamic ones follow the static ones
    assert list(enc.channel_names[start:]) == dynamic
    assert enc.channel_names[: 1 + 4 * 3] == ["tile"] + spec.expand(
        "edge_{S}_{kind}", S=values["S"], kind=["city", "road", "field"]
    )
    g = [
        n
        for e in spec.GLOBAL_FEATURES
        for n in spec.expand(
            e.name,
            id=[t.id for t in rules.tiles],
            r=values["r"],
            i=values["i"],
            name=list(rules.phases) + ["game_over"],
        )
    ]
    assert list(enc.global_names) == g


def test_the_env_docs_print_the_spec_tables():
    for table in (spec.BOARD_CHANNELS, spec.GLOBAL_FEATURES, spec.PLACEMENT_FEATURES, spec.SPOT_FEATURES):
        for e in table:
            assert f"``{e.name}``" in aec.__doc__
    assert "{BOARD_CHANNELS}" not in aec.__doc__


def test_feature_widths_agree_everywhere():
    assert N_PLACEMENT_FEATURES == N_PLACE == len(spec.PLACEMENT_FEATURES)
    assert N_SPOT_FEATURES == N_SPOT == len(spec.SPOT_FEATURES)


@pytest.mark.parametrize(
    "bad",
    [{"action_features": 1}, {"action_feature_rows": 0}, {"action_feature_rows": True}, {"action_feature_rows": 5000}],
)
def test_bad_action_feature_options_are_refused(bad):
    with pytest.raises(ConfigError, match=next(iter(bad))):
        carc_env.raw_env(**bad)


def test_without_the_option_the_observation_has_no_action_features():
    env = carc_env.raw_env()
    env.reset(seed=0)
    assert set(env.observe(env.agent_selection)) == {"board", "globals", "windows", "action_mask"}


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_action_features_are_in_the_space_and_match_the_placements(engine):
    env = carc_env.raw_env(action_features=True, engine=engine)
    env.reset(seed=1)
    space = env.observation_space("player_0")
    rng = np.random.default_rng(0)
    tile_rows = spot_rows = 0
    for _ in range(40):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        obs = env.observe(agent)
        assert space.contains(obs)
        other = env.observe(env.possible_agents[1 - seat])
        assert not other["place_features"].any() and not other["place_index"].any()
        game = env.unwrapped.game
        if game.phase == "tile":
            idx, feats = placement_features(game, seat, env.unwrapped.codec)
            k = len(idx)
            order = np.argsort(idx)
            assert np.array_equal(obs["place_index"][:k], idx[order])
            assert np.array_equal(obs["place_features"][:k], feats[order])
            assert np.flatnonzero(obs["action_mask"]).tolist() == sorted(idx.tolist())
            assert not obs["place_features"][k:].any()
            tile_rows += k
        else:
            present = obs["spots"][:, 0] > 0
            legal = obs["spots"][:, 1] > 0
            spots = np.flatnonzero(obs["action_mask"])[:-1] - env.unwrapped.codec.follower_range.start
            assert np.flatnonzero(legal).tolist() == spots.tolist()
            assert present.sum() == len(game.rules.tiles[game.placements[-1][2]].segments)
            spot_rows += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert tile_rows > 100 and spot_rows > 5


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_placements_beyond_the_rows_are_reported(engine):
    env = carc_env.raw_env(action_features=True, action_feature_rows=3, engine=engine)
    env.reset(seed=2)
    seen = 0
    rng = np.random.default_rng(1)
    for _ in range(30):
        agent = env.agent_selection
        obs = env.observe(agent)
        legal = np.flatnonzero(obs["action_mask"])
        if env.unwrapped.game.phase == "tile":
            assert (obs["place_features"][:, 0] > 0).sum() == min(3, len(legal))
            assert env.infos[agent].get("placements_without_features", 0) == max(0, len(legal) - 3)
            seen += len(legal) > 3
        env.step(int(rng.choice(legal)))
    assert seen > 3


@pytest.mark.parametrize("self_play", [True, False])
def test_the_vector_env_hands_out_the_same_action_features_on_both_engines(self_play):
    from carc_env.env.vector import CarcassonneVectorEnv
    from carc_env.policies import RandomPolicy

    traces = {}
    for engine in ("numba", "python"):
        opp = None if self_play else RandomPolicy(seed=0)
        venv = CarcassonneVectorEnv(2, seed=0, engine=engine, action_features=True, opponents=opp)
        obs, _ = venv.reset(seed=0)
        assert sorted(obs) == sorted(venv.single_observation_space.spaces)
        trace = []
        for _ in range(30):
            assert venv.single_observation_space.contains({k: v[0] for k, v in obs.items()})
            obs, *_ = venv.step([int(np.flatnonzero(m)[-1]) for m in obs["action_mask"]])
            trace.append(b"".join(obs[k].tobytes() for k in sorted(obs)))
        traces[engine] = trace
    assert traces["numba"] == traces["python"]


def test_the_compiled_features_refuse_what_they_do_not_model(monkeypatch):
    """A plug-in overriding a hook the one-ply scan reads that its fast part does not declare keeps the
    action features on the Python engine; the Royal Gateways' links are in the compiled scan, and so is a
    printed board."""
    import dataclasses

    from carc_env.core.config import ruleset
    from carc_env.env.options import EnvOptions
    from carc_env.expansions.royal_gateways import fast as gateways_fast
    from carc_env.fast import coverage, features_coverage
    from carc_env.fast.tables import FEATURE_HOOKS

    covered = EnvOptions.from_kwargs(expansions=("king_robber", "river2"), action_features=True)
    assert coverage(covered) is None and features_coverage(ruleset(covered.game_config())) is None
    assert "placement_links" in FEATURE_HOOKS and "building_target" in FEATURE_HOOKS
    for expansions in [("royal_gateways",), ("maps_germany",)]:  # links, a printed board: compiled
        env = carc_env.raw_env(expansions=expansions, action_features=True)
        assert env.unwrapped.engine == "numba", env.unwrapped.engine_reason
    undeclared = dataclasses.replace(gateways_fast.SUPPORT, features=frozenset())
    monkeypatch.setattr(gateways_fast, "SUPPORT", undeclared)
    env = carc_env.raw_env(expansions=("royal_gateways",), action_features=True)
    assert env.unwrapped.engine == "python" and "placement_links" in env.unwrapped.engine_reason


def test_a_plugin_whose_channel_highs_do_not_match_its_channels_is_refused(monkeypatch):
    from carc_env.expansions.count.observe import Observation

    monkeypatch.setattr(Observation, "channel_high", lambda self: [1])
    with pytest.raises(ValueError, match=r"observation channels \[.*\] but 1 largest values"):
        carc_env.raw_env(num_players=2, expansions=("count",))


def test_darmstadt_and_shrines_keep_the_action_features_compiled():
    """Their hooks change what a placement scores (church bonus, Darmstadtium, challenges) or may be (the
    shrine veto), not what it joins: the play-out runs their kernels and the mask holds the veto."""
    for expansions in [("darmstadt",), ("shrines",), ("darmstadt", "shrines", "king_robber", "river2")]:
        env = carc_env.raw_env(expansions=expansions, action_features=True)
        assert env.unwrapped.engine == "numba", env.unwrapped.engine_reason
