"""Expansion combinations: whole random games keep the core's invariants.

For each combination of ``tests/_combos.py`` (the base game alone, every
expansion alone, every pair, all together, and a seeded sample of larger
ones), random games with 2 to 5 players: no crash, a legal action always
exists, followers conserved (quarters and guests included), scores never
decrease, the union-find agrees with a brute-force flood fill at the end (its
cities joined by the royal gates' links, ``tests/_linked.py``), and
the JSON record replays to the same scores.  Combinations configuration must
refuse (``REFUSED``) are checked to be refused.
"""

from __future__ import annotations

import itertools
import json

import pytest
from _combos import REFUSED, SAMPLE, _refused, builtin_expansions, combinations, maximal
from _expansion_games import play_random
from _helpers import engine_partition
from _linked import LinkedFeatures

from carc_env.core import ConfigError, GameConfig
from carc_env.core.config import ruleset
from carc_env.core.record import replay, to_record

EXPANSIONS = builtin_expansions()
COMBOS = combinations()


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: "+".join(c) or "base_only")
def test_random_games_keep_the_invariants(combo):
    for k in range(3):
        players = 2 + (len(combo) + k) % 4
        seed = 1000 * len(combo) + 17 * k + sum(map(len, combo))
        game, events = play_random(GameConfig(players, ("base", *combo)), seed=seed, action_seed=seed + 1)
        assert game.over and game.phase == "game_over"
        assert game.bag_size == 0
        assert engine_partition(game) == LinkedFeatures(game).partition()
        again = replay(json.loads(json.dumps(to_record(game))))
        assert again.scores == game.scores
        assert again.history_texts() == game.history_texts()


def test_the_combinations_cover_singles_pairs_all_and_a_fixed_sample():
    chosen = set(COMBOS)
    tops = maximal()
    assert () in chosen and all(t in chosen for t in tops)
    assert (EXPANSIONS in tops) == (not REFUSED)  # "all together", or every largest combination that plays
    assert set(EXPANSIONS) == set().union(*tops)  # every expansion plays in one of them
    assert all((e,) in chosen for e in EXPANSIONS)
    assert all(p in chosen for p in itertools.combinations(EXPANSIONS, 2) if not _refused(p))
    larger = [c for c in COMBOS if 2 < len(c) < len(EXPANSIONS) and c not in tops]
    candidates = [c for r in range(3, len(EXPANSIONS)) for c in itertools.combinations(EXPANSIONS, r)
                  if c not in tops and not _refused(c)]  # fmt: skip
    assert len(larger) == min(SAMPLE, len(candidates))
    assert combinations() == COMBOS  # the same sample on every run
    assert len(combinations(tuple(f"x{i}" for i in range(9)))) == 1 + 9 + 36 + 1 + SAMPLE  # 55 of 512 at 9


@pytest.mark.parametrize("keys", sorted(REFUSED, key=sorted) or [None])
def test_refused_combinations_fail_at_config_time(keys):
    if keys is None:  # nothing is refused among the built-in expansions today
        for combo in COMBOS:
            ruleset(GameConfig(2, ("base", *combo)))
        return
    with pytest.raises(ConfigError, match=REFUSED[keys]):
        ruleset(GameConfig(2, ("base", *sorted(keys))))
