"""Every combination of the five expansions: whole random games keep the core's invariants.

For each of the 32 combinations (with the base game), random games with 2 to 5
players: no crash, a legal action always exists, followers conserved (quarters
and guests included), scores never decrease, the union-find agrees with a
brute-force flood fill at the end, and the JSON record replays to the same
scores.
"""

from __future__ import annotations

import itertools
import json

import pytest
from _expansion_games import play_random
from _helpers import BruteFeatures, engine_partition

from carc_env.core import GameConfig
from carc_env.core.record import replay, to_record

EXPANSIONS = ("king_robber", "count", "river2", "shrines", "darmstadt")
COMBOS = [c for r in range(len(EXPANSIONS) + 1) for c in itertools.combinations(EXPANSIONS, r)]


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: "+".join(c) or "base_only")
def test_random_games_keep_the_invariants(combo):
    for k in range(3):
        players = 2 + (len(combo) + k) % 4
        seed = 1000 * len(combo) + 17 * k + sum(map(len, combo))
        game, events = play_random(GameConfig(players, ("base", *combo)), seed=seed, action_seed=seed + 1)
        assert game.over and game.phase == "game_over"
        assert game.bag_size == 0
        assert engine_partition(game) == BruteFeatures(game).features()
        again = replay(json.loads(json.dumps(to_record(game))))
        assert again.scores == game.scores
        assert again.history_texts() == game.history_texts()
