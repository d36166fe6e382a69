"""Random whole games over the King & Robber, Shrines and Darmstadt expansions.

Shared by the property tests of tests/expansions/test_king_robber.py, test_shrines.py and
test_darmstadt.py.  Every action is checked against the invariants every
expansion must keep: no crash, followers conserved, scores never decrease.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from _helpers import play_random_game
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import carc_env  # noqa: F401  (registers the expansions)
from carc_env.core import Game, GameConfig
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
    """Play a whole game with random legal actions (``_helpers.play_random_game``); return it and all
    its events.  ``before(game)`` runs at every decision; after every action no score went down and
    the followers are conserved."""
    events: list[Event] = []
    scores: list[int] = []

    def check_before(g: Game) -> None:
        if before is not None:
            before(g)
        scores[:] = g.scores

    def check_after(_prev: Game | None, g: Game, _action: Any, ev: list[Event]) -> None:
        events.extend(ev)
        assert all(b <= s for b, s in zip(scores, g.scores, strict=True)), f"a score went down: {scores} -> {g.scores}"
        assert g.followers_conserved(), "followers not conserved"

    return play_random_game(config, seed, action_seed, check_before, check_after), events
