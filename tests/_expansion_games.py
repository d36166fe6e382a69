"""Random whole games over the King & Robber, Shrines and Darmstadt expansions.

Shared by the property tests of tests/test_king_robber.py, test_shrines.py and
test_darmstadt.py.  Every action is checked against the invariants every
expansion must keep: no crash, followers conserved, scores never decrease.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import carc_env  # noqa: F401  (registers the expansions)
from carc_env.core import Game, GameConfig, Pass, PlaceFollower
from carc_env.core.events import Event

EXPANSIONS = ("king_robber", "shrines", "darmstadt")
COMBOS = [c for r in range(1, 4) for c in itertools.combinations(EXPANSIONS, r)]

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**32 - 1)
players = st.integers(min_value=2, max_value=5)


@st.composite
def configs(draw: Callable, must: str | None = None) -> GameConfig:
    """A game config with some of the three expansions (always ``must``) and random options."""
    combos = [c for c in COMBOS if must is None or must in c]
    combo = draw(st.sampled_from(combos))
    options: dict[str, dict[str, Any]] = {}
    if "shrines" in combo:
        options["shrines"] = {
            "sixth_tile": draw(st.booleans()),
            "strict_pairing": draw(st.booleans()),
            "churches_are_cloisters": draw(st.booleans()),
        }
    if "darmstadt" in combo:
        options["darmstadt"] = {
            "remove_base_cloisters": draw(st.booleans()),
            "church_bonus_unoccupied": draw(st.booleans()),
        }
    return GameConfig(draw(players), ("base", *combo), options)


def play_random(
    config: GameConfig,
    seed: int,
    action_seed: int,
    before: Callable[[Game], None] | None = None,
) -> tuple[Game, list[Event]]:
    """Play a whole game with random legal actions; return it and all its events.

    ``before(game)`` runs at every decision.  Followers are placed with
    probability 0.6 when offered, so that supplies run out.
    """
    g = Game(config, seed=seed)
    rng = np.random.default_rng(action_seed)
    events: list[Event] = []
    while not g.over:
        if before is not None:
            before(g)
        actions = g.legal_actions()
        assert actions, f"no legal action in phase {g.phase}"
        if g.phase == "follower":
            spots = [a for a in actions if isinstance(a, PlaceFollower)]
            a = spots[rng.integers(len(spots))] if spots and rng.random() < 0.6 else Pass()
        else:
            a = actions[rng.integers(len(actions))]
        scores = g.scores[:]
        events.extend(g.apply(a))
        assert all(b <= s for b, s in zip(scores, g.scores, strict=True)), f"a score went down: {scores} -> {g.scores}"
        assert g.followers_conserved(), "followers not conserved"
    return g, events
