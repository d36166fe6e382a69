"""The environment on every expansion combination: PettingZoo's api_test, masks against the core,
incremental encoding against a fresh one."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

from carc_env.core.expansion import registry
from carc_env.encoding import ObservationEncoder
from carc_env.env.aec import env as make_env
from carc_env.env.aec import raw_env

EXPANSIONS = sorted(k for k in registry() if k != "base")
COMBOS = [c for r in range(len(EXPANSIONS) + 1) for c in itertools.combinations(EXPANSIONS, r)]
SHOWCASE = [(k,) for k in EXPANSIONS] + [tuple(EXPANSIONS)]


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")  # generic-codec notices, api_test's dict-observation notes
    return w


@pytest.mark.parametrize("expansions", SHOWCASE, ids=lambda c: "+".join(c))
def test_api_test_on_expansions(expansions):
    w = _quiet()
    try:
        api_test(make_env(num_players=3, expansions=("base", *expansions)), num_cycles=120)
    finally:
        w.__exit__(None, None, None)


@pytest.mark.parametrize("expansions", SHOWCASE, ids=lambda c: "+".join(c))
def test_masks_and_incremental_encoding_on_expansions(expansions):
    w = _quiet()
    try:
        e = raw_env(num_players=3, expansions=("base", *expansions))
    finally:
        w.__exit__(None, None, None)
    rng = np.random.default_rng(0)
    e.reset(seed=3)
    game, codec = e.game, e.codec
    step = 0
    while not game.over:
        view = codec.view(game)
        mask = view.mask
        assert mask.any(), game.phase
        enabled = np.flatnonzero(mask)
        texts = {codec.action_to_text(game, int(a)) for a in enabled}
        core = {game.action_text(a) for a in game.legal_actions()}
        assert texts <= core, game.phase
        assert len(core) - len(texts) == view.outside + view.dropped
        for a in rng.choice(enabled, size=min(4, len(enabled)), replace=False):
            game.clone().apply(codec.decode(game, int(a)))
        if step % 5 == 0:
            seat = int(rng.integers(3))
            inc = e.match.encoder.encode(game, seat)
            fresh = ObservationEncoder(game.rules, 3, codec, e.options.followers).encode(game, seat)
            for k in inc:
                assert np.array_equal(inc[k], fresh[k]), (k, game.phase, step)
        e.step(int(enabled[rng.integers(len(enabled))]))
        step += 1


@pytest.mark.parametrize("expansions", COMBOS, ids=lambda c: "+".join(c) or "base")
def test_every_combination_plays_a_game(expansions):
    w = _quiet()
    try:
        e = make_env(num_players=2, expansions=("base", *expansions))
    finally:
        w.__exit__(None, None, None)
    rng = np.random.default_rng(1)
    e.reset(seed=7)
    n = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        assert obs["action_mask"].any() and np.array_equal(obs["action_mask"], info["action_mask"])
        assert e.observation_space(agent).contains(obs)
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
        n += 1
    assert n > 50
