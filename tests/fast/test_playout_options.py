"""The play-outs' options on both engines.  Cut-short play-outs (``horizon``): the compiled play-out's end at a
tile decision is ``Game.end_here`` on the reference, scored alike, in every part of the box; the search's option is
checked and changes nothing where the game ends first.  Play-outs without farmers (``farmers=False``): no follower
on a field, the rest legal and scored alike.  Sparing play-outs (``place=P``): a follower decision passes 1 - P of
the time, on both engines, the rest legal and scored alike."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import env_after_random_moves

from agents.players import PlayerSpecError, make_player
from carc_env.core import PlaceFollower, PlaceTile
from carc_env.core.tiles import FIELD
from carc_env.fast.playout import FastPlayout
from carc_env.search import MCTSPolicy, RolloutGuide

CONFIGS = [
    ({}, 3),
    ({"num_players": 3}, 11),
    ({"expansions": ("king_robber", "count", "darmstadt")}, 5),
    ({"expansions": ("king_robber", "count", "darmstadt", "shrines"), "num_players": 5}, 9),
    ({"expansions": ("stained_glass", "royal_gateways", "sagrada_familia"), "num_players": 3}, 13),
    ({"expansions": ("maps_germany",)}, 15),
    ({"expansions": ("shrines", "river2"), "num_players": 4}, 7),
]


_root = env_after_random_moves


@pytest.mark.parametrize("kw,seed", CONFIGS, ids=[repr(c[0]) for c in CONFIGS])
def test_a_cut_play_out_ends_where_the_reference_ends_here_and_scores_alike(kw, seed):
    """From a position mid-game, play slot 1 out at random with a cut; replay its actions on the Python game:
    each is legal, the play-out stopped at the first tile decision with at most ``stop`` tiles left, and
    ``Game.end_here`` there (then the same plug-in decisions, if any, before final scoring) gives the same final
    scores.  Several cuts and seeds, so incomplete roads, cities, monasteries and fields are all scored."""
    env = _root(kw, seed, 12)
    root = env.unwrapped.game
    f = FastPlayout()
    f.begin(root)
    bag = root.bag_size
    checked = 0
    for stop in (bag - 3, bag - 20, bag // 3, 1):
        for k in range(3):
            f.stop = stop
            f.redeal(list(root._bag[::-1]))
            scores = f.play_out(100 * seed + k)
            game = root.clone()
            ended = False
            for a in f._batch.actions(1, len(root.history)):
                if not ended and game.phase == "tile" and game.bag_size <= stop:
                    game.end_here()
                    ended = True
                game.apply(a)  # raises on an illegal action: one past the cut, where the game is over or ending
            if not ended and not game.over:
                assert game.phase == "tile" and game.bag_size <= stop
                game.end_here()
                ended = True
            assert ended and game.over
            assert list(game.scores) == scores
            checked += 1
    assert checked == 12


def test_without_a_cut_the_play_out_is_the_whole_game():
    """stop -1 (the default) plays to the real end: the same game as a cut below every tile decision."""
    env = _root({}, 4, 10)
    root = env.unwrapped.game
    f = FastPlayout()
    f.begin(root)
    order = list(root._bag[::-1])
    f.redeal(order)
    whole = f.play_out(17)
    n = len(f._batch.actions(1, len(root.history)))
    f.stop = 0  # at most 0 tiles left: the last tile's decision is cut
    f.redeal(order)
    cut = f.play_out(17)
    assert len(f._batch.actions(1, len(root.history))) < n
    assert sum(cut) <= sum(whole) + 60  # (a sanity bound, not the point: the point is the length)
    f.stop = -1
    f.redeal(order)
    assert f.play_out(17) == whole


def test_end_here_only_at_a_tile_decision():
    env = _root({}, 2, 1)  # after the first tile: the follower decision
    game = env.unwrapped.game.clone()
    assert game.phase == "follower"
    with pytest.raises(ValueError, match="tile decision"):
        game.end_here()


def test_the_python_play_out_cuts_at_the_same_point():
    """engine='python': RolloutGuide's own play-out ends at the first tile decision with at most B - H tiles
    left (B: the root's), and a horizon past the bag's end plays the whole game."""
    env = _root({"expansions": ("king_robber", "count", "darmstadt")}, 6, 20)
    root = env.unwrapped.game
    guide = RolloutGuide(engine="python", horizon=10)
    guide.begin(root)
    assert guide._stop == root.bag_size - 10
    rng = np.random.default_rng(0)
    for _ in range(3):
        g = root.clone()
        g.redeal(rng)
        guide.playout(g, rng)
        assert g.over
        placed = sum(type(a) is PlaceTile for a in g.history[len(root.history) :])
        assert 8 <= placed <= 10  # 10 tiles drawn after the root's (fewer placed where one fit nowhere)
    far = RolloutGuide(engine="python", horizon=root.bag_size)
    far.begin(root)
    assert far._stop == -1


def test_a_horizon_beyond_the_bag_is_the_same_search():
    """Where the root has no more than H tiles left the play-outs run to the end: the same tree, seed for seed."""
    env = _root({}, 8, 70)
    obs = env.observe(env.agent_selection)
    bag = env.unwrapped.game.bag_size
    runs = []
    for horizon in (None, bag, bag + 5):
        p = MCTSPolicy(60, seed=3, horizon=horizon)
        runs.append((p.act(obs, env), list(p.last_search.visits)))
        assert p.last_search.extra.get("state") == "compiled"
    assert runs[0] == runs[1] == runs[2]
    cut = MCTSPolicy(60, seed=3, horizon=max(1, bag - 4))
    cut.act(obs, env)
    assert cut.last_search.simulations == 60


def test_the_options_are_checked():
    env_kwargs = {"num_players": 2}
    p = make_player("mcts:30:horizon=12", env_kwargs, seed=0)
    assert p.guide.horizon == 12 and "horizon=12" in repr(p.guide)
    for bad in ("mcts:30:horizon=0", "mcts:30:horizon=x", "mcts:30:horizon=-2"):
        with pytest.raises(PlayerSpecError, match="horizon"):
            make_player(bad, env_kwargs, seed=0)
    with pytest.raises(ValueError, match="random play-outs"):
        make_player("mcts:30:greedy:horizon=5", env_kwargs, seed=0)
    with pytest.raises(ValueError, match="horizon"):
        RolloutGuide(horizon=0)
    with pytest.raises(PlayerSpecError, match="horizon is an option of mcts"):
        make_player("ppo-mcts:pretrained:base-2p-160:30:horizon=5", env_kwargs, seed=0)
    pruned = make_player(
        "ppo-mcts:pretrained:base-2p-160:30:top=5:horizon=5:utility=margin:scale=10", env_kwargs, seed=0
    )
    assert pruned.guide.horizon == 5 and pruned.guide.utility == "margin" and pruned.guide.margin_scale == 10.0


def _field_followers(root, actions) -> tuple[int, int]:
    """Replay ``actions`` from ``root`` (a clone): (followers placed on fields, followers placed elsewhere)."""
    game = root.clone()
    fields = others = 0
    for a in actions:
        if game.phase == "follower" and type(a) is PlaceFollower:
            if game.kind[game.placements[-1][4] + a.segment] == FIELD:
                fields += 1
            else:
                others += 1
        game.apply(a)
    return fields, others


@pytest.mark.parametrize("kw,seed", CONFIGS[:5], ids=[repr(c[0]) for c in CONFIGS[:5]])
def test_compiled_play_outs_without_farmers_place_none_and_score_alike(kw, seed):
    """farmers 0: over 12 play-outs from mid-game no follower goes on a field, followers still go elsewhere, and
    the replay on the Python engine is legal and ends with the same scores; farmers 1 (the default) on the same
    draws does put followers on fields (what the option removes)."""
    env = _root(kw, seed, 8)
    root = env.unwrapped.game
    f = FastPlayout()
    f.begin(root)
    totals = {0: [0, 0], 1: [0, 0]}
    for farmers in (0, 1):
        f.farmers = farmers
        for k in range(12):
            f.redeal(list(root._bag[::-1]))
            scores = f.play_out(7 * seed + k)
            actions = f._batch.actions(1, len(root.history))
            fields, others = _field_followers(root, actions)
            totals[farmers][0] += fields
            totals[farmers][1] += others
            game = root.clone()
            for a in actions:
                game.apply(a)
            assert game.over and list(game.scores) == scores
    assert totals[0][0] == 0 and totals[0][1] > 0, totals
    assert totals[1][0] > 0, totals


def _python_play_outs(root, guide, rng, n, count) -> tuple[int, int]:
    """``n`` play-outs of ``guide`` on the Python engine from redeals of ``root``: ``count(dealt, actions)`` summed."""
    guide.begin(root)
    x = y = 0
    for _ in range(n):
        dealt = root.clone()
        dealt.redeal(rng)
        g = dealt.clone()
        guide.playout(g, rng)
        assert g.over
        a, b = count(dealt, g.history[len(root.history) :])
        x, y = x + a, y + b
    return x, y


def test_the_python_play_out_without_farmers_places_none():
    env = _root({}, 12, 6)
    root = env.unwrapped.game
    rng = np.random.default_rng(1)
    totals = {}
    for farmers in (False, True):
        guide = RolloutGuide(engine="python", farmers=farmers)
        totals[farmers] = _python_play_outs(root, guide, rng, 6, _field_followers)
    assert totals[False][0] == 0 and totals[False][1] > 0, totals
    assert totals[True][0] > 0, totals


def test_the_farmers_option_is_checked():
    env_kwargs = {"num_players": 2}
    p = make_player("mcts:30:farmers=0:horizon=8", env_kwargs, seed=0)
    assert not p.guide.farmers and "farmers=False" in repr(p.guide)
    assert make_player("mcts:30", env_kwargs, seed=0).guide.farmers
    with pytest.raises(PlayerSpecError, match="farmers must be 0 or 1"):
        make_player("mcts:30:farmers=2", env_kwargs, seed=0)
    with pytest.raises(ValueError, match="farmers=False"):
        make_player("mcts:30:greedy:farmers=0", env_kwargs, seed=0)
    with pytest.raises(PlayerSpecError, match="farmers is an option of mcts"):
        make_player("ppo-mcts:pretrained:base-2p-160:30:farmers=0", env_kwargs, seed=0)
    pruned = make_player("ppo-mcts:pretrained:base-2p-160:30:top=5:farmers=0", env_kwargs, seed=0)
    assert not pruned.guide.farmers
    env = _root({}, 3, 10)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][p.act(obs, env)] and p.last_search.extra.get("state") == "compiled"


def _decisions(root, actions) -> tuple[int, int]:
    """Replay ``actions`` from ``root`` (a clone): (follower decisions with a spot to take, followers placed)."""
    game = root.clone()
    decided = placed = 0
    for a in actions:
        if game.phase == "follower" and game._follower_spots:
            decided += 1
            placed += type(a) is PlaceFollower
        game.apply(a)
    return decided, placed


@pytest.mark.parametrize("kw,seed", CONFIGS[:3], ids=[repr(c[0]) for c in CONFIGS[:3]])
def test_sparing_play_outs_place_fewer_followers_on_both_engines(kw, seed):
    """place=P: of the follower decisions with a spot to take, a compiled play-out places a follower at about P
    times the rate of the default (uniform over the spots and pass), the Python play-out alike; the compiled
    play-out's replay on the Python engine is legal and ends with the same scores."""
    env = _root(kw, seed, 8)
    root = env.unwrapped.game
    f = FastPlayout()
    f.begin(root)
    rate = {}
    for place in (1.0, 0.3):
        f.place = place
        decided = placed = 0
        for k in range(40):
            f.redeal(list(root._bag[::-1]))
            scores = f.play_out(11 * seed + k)
            actions = f._batch.actions(1, len(root.history))
            d, p = _decisions(root, actions)
            decided, placed = decided + d, placed + p
            if k < 8:
                game = root.clone()
                for a in actions:
                    game.apply(a)
                assert game.over and list(game.scores) == scores
        rate[place] = placed / decided
    assert 0.18 < rate[0.3] / rate[1.0] < 0.45, rate
    guide = RolloutGuide(engine="python", place=0.3)
    decided, placed = _python_play_outs(root, guide, np.random.default_rng(2), 25, _decisions)
    assert abs(placed / decided - rate[0.3]) < 0.1, (placed / decided, rate)


def test_the_place_option_is_checked():
    env_kwargs = {"num_players": 2}
    p = make_player("mcts:30:place=0.4", env_kwargs, seed=0)
    assert p.guide.place == 0.4 and "place=0.4" in repr(p.guide)
    assert make_player("mcts:30", env_kwargs, seed=0).guide.place == 1.0
    for bad in ("0", "1.5", "x"):
        with pytest.raises(PlayerSpecError, match="place"):
            make_player(f"mcts:30:place={bad}", env_kwargs, seed=0)
    with pytest.raises(ValueError, match="place < 1"):
        make_player("mcts:30:greedy:place=0.5", env_kwargs, seed=0)
    with pytest.raises(PlayerSpecError, match="place is an option of mcts"):
        make_player("ppo-mcts:pretrained:base-2p-160:30:place=0.5", env_kwargs, seed=0)
    assert make_player("ppo-mcts:pretrained:base-2p-160:30:top=5:place=0.5", env_kwargs, seed=0).guide.place == 0.5
    env = _root({}, 3, 10)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][p.act(obs, env)] and p.last_search.extra.get("tree") == "compiled"
