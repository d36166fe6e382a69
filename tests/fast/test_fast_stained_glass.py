"""Stained Glass on the compiled engine against the Python reference, step by step.

``compare_game`` (:mod:`carc_env.env.differential`) plays each game through both engines and raises at the
first difference in masks, observation bytes (the ``windows`` tensor, the thieves' channels, the bag and
steals globals included), rewards, scores and the itemised scoring (every window's ``PointsAwarded``).
The policy here prefers moves over ``pass`` in Stained Glass's phases, so thieves, steals and windows are
played; the tokens are drawn from the game's generator mid-game, so agreeing at all means the kernels
continue the reference's random stream exactly (:mod:`carc_env.fast.rng`, also checked on its own).
``scripts/fast_differential.py --only stained_glass`` runs thousands of games.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from carc_env.core import Game
from carc_env.core.record import replay
from carc_env.env.differential import compare_batch, compare_game
from carc_env.env.options import EnvOptions
from carc_env.fast import coverage

SG = "stained_glass"
BOX = ("count", "darmstadt", "king_robber", "river2", "shrines")
# every option (several at once where they do not interfere), 2-5 players, and combinations
CONFIGS = [
    {"expansions": (SG,)},
    {"expansions": (SG,), "num_players": 3},
    {"expansions": (SG,), "num_players": 4, "reward": "score_delta"},
    {"expansions": (SG,), "num_players": 5, "followers": 3},
    {"expansions": (SG,), "num_players": 3, "rules": {SG: {"token_on": "place"}}},
    {"expansions": (SG, "darmstadt"), "num_players": 4, "rules": {SG: {"churches_are_cloisters": False}}},
    {"expansions": (SG, "shrines", "darmstadt"), "num_players": 3, "rules": {SG: {"shrines_are_cloisters": True}}},
    {"expansions": (SG,), "rules": {SG: {"thieves_need_monk": True}}},
    {"expansions": (SG,), "num_players": 3, "rules": {SG: {"protect_complete_windows": True, "steal_from_self": True}}},
    {"expansions": (SG,), "num_players": 4, "rules": {SG: {"steal_kind": "random"}}},
    {"expansions": (SG,), "rules": {SG: {"window_points": "1,0,5,2", "loose_token_points": 2}}},
    {"expansions": (SG,), "num_players": 3, "rules": {SG: {"final_windows": "none"}}, "reward": "score_diff"},
    {
        "expansions": (SG,),
        "rules": {SG: {"bag_order": "G1a G1b G1c G2a G2b G2c G1a", "start_tokens": "G1b G1c G3a G3b G3c; G2a G4b"}},
    },
    {
        "expansions": (SG,),
        "num_players": 4,
        "rules": {
            SG: {
                "start_tokens": "G1a G1b G1c G2a G2b G2c; G1a G1b G1c; G2a G2b; G3a G3b G3c",
                "steal_kind": "random",
                "protect_complete_windows": True,
            }
        },
    },
    {"expansions": (SG, "count", "king_robber"), "num_players": 3},
    {"expansions": (SG, "royal_gateways", "sagrada_familia"), "num_players": 4},
    {"expansions": (SG, "river2", "king_robber"), "num_players": 2, "window": (9, 9)},
    {"expansions": (SG, *BOX, "royal_gateways", "sagrada_familia"), "num_players": 5, "reward": "score_delta"},
]


def eager(seen: collections.Counter):
    """A policy choosing uniformly among the legal moves, but over ``pass`` in Stained Glass's phases 70 %
    of the time; counts the moves made in each of them."""

    def policy(match, legal: np.ndarray, rng: np.random.Generator) -> int:
        phase = match.game.phase
        if phase.startswith("glass_") and len(legal) > 1 and rng.random() < 0.7:
            legal = legal[:-1]  # pass is the last entry of each of the three ranges
        a = int(legal[rng.integers(len(legal))])
        pc = match.codec.codecs[phase]
        if phase.startswith("glass_") and a != pc.start + pc.size - 1:
            seen[phase] += 1
        return a

    return policy


def test_the_generator_continues_numpys_stream():
    """The kernels' PCG64 and ``integers(n)`` give what ``numpy.random.Generator.integers(n)`` gives, from
    states after a shuffle, with and without a buffered half-output, for small and large ranges (n = 1
    draws nothing), and leave the generator in the same state."""
    from numba import njit

    from carc_env.fast import rng as R

    @njit
    def draw(ls, ns, out):
        for i in range(len(ns)):
            out[i] = R.integers(ls, 0, 0, ns[i])

    for seed in range(12):
        gen = np.random.default_rng(seed)
        gen.permutation(70 + seed)
        if seed % 2:
            gen.integers(7)  # leaves half a 64-bit output buffered
        ls = R.generator_words(gen)[None, :].copy()
        assert R.words_generator(ls[0]).bit_generator.state == gen.bit_generator.state
        hi = 2**32 - 1 if seed == 5 else 40
        ns = np.random.default_rng(seed + 99).integers(1, hi, size=300)
        out = np.zeros(len(ns), dtype=np.int64)
        draw(ls, ns, out)
        assert out.tolist() == [int(gen.integers(int(n))) for n in ns]
        assert R.words_generator(ls[0]).bit_generator.state == gen.bit_generator.state


@pytest.mark.parametrize("i,kw", list(enumerate(CONFIGS)), ids=[repr(c) for c in CONFIGS])
def test_games_are_identical_step_by_step(batches, i, kw):
    opts, fast = batches(kw)
    assert coverage(opts) is None
    seen: collections.Counter = collections.Counter()
    for seed in range(2):
        compare_game(opts, 31000 + 100 * i + seed, fast, g=seed % 2, all_seats_every=4, policy=eager(seen))


def test_thieves_steals_and_windows_are_played_and_identical(batches):
    """Games where every one of Stained Glass's decisions is made (thieves, steals of a chosen and of a
    random token, windows scored), identical on both engines.  Shrines count as cloisters and Darmstadt's
    church has four roads, so thieves come often; the seeds were found by scanning 30."""
    start = "G1a G1b G1c G2a G2b G2c; G3a G3b G3c G4a"
    for kind, seeds in (("choose", (32001, 32011)), ("random", (32006, 32011))):
        rules = {SG: {"start_tokens": start, "steal_kind": kind, "shrines_are_cloisters": True}}
        opts, fast = batches({"expansions": (SG, "shrines", "darmstadt"), "num_players": 3, "rules": rules})
        seen: collections.Counter = collections.Counter()
        for seed in seeds:
            compare_game(opts, seed, fast, all_seats_every=2, policy=eager(seen))
        assert seen["glass_thief"] >= 2 and seen["glass_steal"] >= 2 and seen["glass_window"] >= 2, (kind, seen)


def test_tokens_drawn_mid_game_come_from_the_games_generator(batches):
    """The compiled engine's tokens are the reference's: same seed, same tokens in every hand at the end of
    a game (the windows tensor), though both draw uniformly from a bag that changes as windows are scored."""
    opts, fast = batches({"expansions": (SG,), "rules": {SG: {"final_windows": "none"}}})
    for seed in (3, 4):
        compare_game(opts, seed, fast)
        game = fast.game(0)
        held = game.ext[SG].held
        assert sum(map(sum, held)) > 0  # tokens were drawn
        assert fast.observe(0, 0)["windows"][:, :12].tolist() == [held[0], held[1]]


def test_records_replay_in_the_other_engine(batches):
    opts, fast = batches({"expansions": (SG, "king_robber"), "num_players": 3, "rules": {SG: {"steal_kind": "random"}}})
    seen: collections.Counter = collections.Counter()
    compare_game(opts, 33001, fast, policy=eager(seen))
    record = fast.record(0)
    assert replay(record).scores == fast.scores(0)
    game = Game(opts.game_config(), seed=33002)
    rng = np.random.default_rng(1)
    while not game.over:
        acts = game.legal_actions()
        game.apply(acts[rng.integers(len(acts))])
    from carc_env.core.record import to_record

    fast.replay(1, to_record(game))
    assert fast.scores(1) == list(game.scores) and fast.over(1)


def test_forced_draw_orders_keep_the_generator(batches):
    """A forced draw order leaves the reference's generator where the shuffle left it; so do the kernels."""
    opts, fast = batches({"expansions": (SG,)})
    order = Game(opts.game_config(), seed=7).draw_order[::-1]
    compare_game(opts, 8, fast, draw_order=list(order))


def test_batched_steps_with_auto_reset_are_identical():
    """The vector env's path: successors prepared with their generators, reset inside the kernel."""
    opts = EnvOptions.from_kwargs(expansions=(SG,), num_players=2)
    assert compare_batch(opts, 40, 3, 260) >= 3


def test_random_play_kernel_plays_games_the_reference_replays(batches):
    opts, fast = batches({"expansions": (SG, "count"), "num_players": 3})
    stats = fast.play_random([5, 6], rng_seed=5)
    assert stats["games"] == 2 and fast.over(0) and fast.seeds[0] == 6
    assert replay(fast.record(0)).scores == fast.scores(0)


def test_every_stained_glass_configuration_is_covered():
    for n in (2, 3, 4, 5):
        for extra in ((), BOX, ("royal_gateways", "sagrada_familia"), (*BOX, "royal_gateways", "sagrada_familia")):
            assert coverage(EnvOptions.from_kwargs(expansions=(SG, *extra), num_players=n)) is None
