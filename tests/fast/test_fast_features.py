"""The compiled action features and greedy on the expansions (carc_env.fast.features, fast.greedy).

``features_coverage`` admits a configuration only where the compiled action features and greedy are
proven identical to the Python ones: the features byte for byte in every observation of differential
games (``compare_game`` with ``action_features``), the greedy decision for decision against
``GreedyPolicy`` (``test_fast_greedy._same_choices``).  Here: which configurations are admitted and why
the others are not; the plug-ins' decisions inside the one-ply play-out (the Count's phases are passed as
the reference passes them); and the greedy in the plug-ins' phases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_fast_greedy import _same_choices

from carc_env.core.registry import plugins
from carc_env.encoding import placements
from carc_env.env.differential import compare_game
from carc_env.env.options import EnvOptions
from carc_env.fast import coverage, features_coverage
from carc_env.fast.greedy import greedy_actions
from carc_env.fast.seam import support
from carc_env.policies import GreedyPolicy

BOX = ("count", "king_robber", "darmstadt")

# what features_coverage says of each expansion alone and of the box (None: admitted; every built-in now)
REFUSED: dict[str, str] = {}


def test_features_coverage_admits_exactly_the_proven_configurations():
    keys = sorted(k for k in plugins() if k != "base" and support(k) is not None)
    assert set(REFUSED) <= set(keys) and {"count", "stained_glass", "maps_germany"} <= set(keys)
    for key in keys:
        why = features_coverage(EnvOptions.from_kwargs(expansions=(key,)).rule_set())
        if key in REFUSED:
            assert why is not None and why.startswith(REFUSED[key]), (key, why)
        else:
            assert why is None, (key, why)
    assert features_coverage(EnvOptions.from_kwargs(expansions=BOX).rule_set()) is None
    opts = EnvOptions.from_kwargs(expansions=BOX, action_features=True)
    assert coverage(opts) is None  # the env with action features (the trainer's) runs on the compiled engine


def test_a_plug_in_overriding_a_feature_hook_it_does_not_declare_is_refused(monkeypatch):
    import dataclasses

    from carc_env.expansions.count import fast as count_fast

    sup = dataclasses.replace(count_fast.SUPPORT, features=frozenset({"extra_completed"}))
    monkeypatch.setattr(count_fast, "SUPPORT", sup)
    why = features_coverage(EnvOptions.from_kwargs(expansions=("count",)).rule_set())
    assert why == "expansion 'count' overrides ['field_cities'], which the compiled action features do not model"
    kernels = {k: v for k, v in count_fast.SUPPORT.kernels.items() if k != "decision_pass"}
    full = dataclasses.replace(sup, kernels=kernels, features=sup.features | {"field_cities"})
    monkeypatch.setattr(count_fast, "SUPPORT", full)
    why = features_coverage(EnvOptions.from_kwargs(expansions=("count",)).rule_set())
    assert why is not None and "no 'decision_pass' kernel" in why


def _passing_play_outs(monkeypatch) -> list[str]:
    """Record, for every placement the Python features play out, the plug-in phases its play-out passed
    (a replica of one_ply_gain's loop, run beside the real one)."""
    seen: list[str] = []
    real = placements.one_ply_gain

    def spy(game, act, me, assets=False):
        from carc_env.core import Pass

        g = game.clone()
        turn = g.turn
        g.apply(act)
        if g.phase == "follower" and g.player == me:
            g.apply(Pass())
        while not g.over and g.turn == turn and g.phase != "tile" and Pass() in g.legal_actions():
            seen.append(g.phase)
            g.apply(Pass())
        return real(game, act, me, assets)

    monkeypatch.setattr(placements, "one_ply_gain", spy)
    return seen


# (env options, seeds, compare_game's avoid_pass, the Count's phases their play-outs pass): the Count's
# followers go to the quarters and leave them (avoid_pass), so a placement completing a feature opens
# count_leave in its play-out, and a turn where an opponent scores opens count_deploy (seed 6: found by
# scanning seeds 0-6 for a play-out passing count_leave)
FEATURE_GAMES = [
    ({"expansions": ("count",), "num_players": 3, "rules": {"count": {"only_occupied": False}}}, [6, 0], 0.9,
     {"count_leave", "count_deploy"}),
    ({"expansions": BOX, "num_players": 4, "rules": {"count": {"leave_order": "active_first"}}}, range(10, 12), 0.9,
     {"count_deploy"}),
    ({"expansions": BOX, "num_players": 2, "reward": "score_delta"}, range(20, 22), 0.0, set()),
    ({"expansions": ("count", "king_robber"), "num_players": 5, "followers": 3, "window": (9, 9),
      "rules": {"count": {"final_scoring": "market_only"}}}, range(30, 32), 0.9, {"count_deploy"}),
]  # fmt: skip


@pytest.mark.parametrize("kw,seeds,avoid,passed", FEATURE_GAMES, ids=[repr(c[0]) for c in FEATURE_GAMES])
def test_count_features_are_identical_and_pass_its_decisions(batches, monkeypatch, kw, seeds, avoid, passed):
    opts, fast = batches({**kw, "action_features": True})
    assert coverage(opts) is None
    seen = _passing_play_outs(monkeypatch)
    for i, seed in enumerate(seeds):
        compare_game(opts, seed, fast, g=i % 2, all_seats_every=3, avoid_pass=avoid)
    assert passed <= set(seen), sorted(set(seen))  # the play-outs compared passed the Count's decisions


GATES_AND_SAGRADA = [
    ({"expansions": ("royal_gateways",)}, range(40, 44)),
    ({"expansions": ("royal_gateways", "king_robber"), "num_players": 3,
      "rules": {"royal_gateways": {"unpaired_gate_blocks_completion": False, "follower_on_gate": True}}},
     range(50, 53)),
    ({"expansions": ("sagrada_familia",), "num_players": 3,
      "rules": {"sagrada_familia": {"exception_city_counts_for_farmers": True, "may_close": True}}}, range(60, 64)),
    ({"expansions": ("sagrada_familia", "royal_gateways", "count"), "num_players": 4}, range(70, 73)),
]  # fmt: skip


# seeds of the box whose epsilon-greedy games (eps 0.25) open the Count's phases: found by scanning 110-133
GREEDY = [
    ({"expansions": ("count",), "num_players": 3}, range(100, 103)),
    ({"expansions": BOX, "num_players": 2}, [113, 115]),
    ({"expansions": BOX, "num_players": 4, "rules": {"count": {"only_occupied": False}}}, [128, 133]),
    ({"expansions": ("royal_gateways", "king_robber")}, range(130, 133)),
    ({"expansions": ("sagrada_familia",), "num_players": 3,
      "rules": {"sagrada_familia": {"exception_city_counts_for_farmers": True}}}, range(140, 143)),
]  # fmt: skip


@pytest.mark.parametrize("eps", [0.0, 0.25])
@pytest.mark.parametrize("kw,seeds", GREEDY, ids=[repr(c[0]) for c in GREEDY])
def test_greedy_chooses_as_the_python_policy(kw, seeds, eps):
    phases = _same_choices(EnvOptions.from_kwargs(**kw), seeds, eps)
    if eps and "count" in kw["expansions"]:  # the greedy decided in the Count's phases too (where a random
        # placement gave an opponent points: greedy ones rarely do)
        assert "count_deploy" in phases, sorted(phases)


# Stained Glass: the play-outs pass its thief, steal and window decisions; the greedy values the tokens a
# placement brings (asset_value) and decides in its phases with its heuristics (greedy_decision)
# both start with a complete window (start_tokens), so the play-outs of their placements pass glass_window
# while they keep it; a placed cloister's roads open glass_thief
GLASS_FEATURES = [
    ({"expansions": ("stained_glass",), "rules": {"stained_glass": {"start_tokens": "G1a G1b G1c G2a; G4a G4b G4c"}}},
     [200]),
    ({"expansions": ("stained_glass", "count"), "num_players": 4,
      "rules": {"stained_glass": {"steal_kind": "random", "protect_complete_windows": True,
                                  "start_tokens": "G2a G2b G2c; ; G3a G3b G3c"}}}, range(210, 212)),
]  # fmt: skip


@pytest.mark.parametrize("kw,seeds", GLASS_FEATURES, ids=[repr(c[0]) for c in GLASS_FEATURES])
def test_stained_glass_features_are_identical(batches, monkeypatch, kw, seeds):
    opts, fast = batches({**kw, "action_features": True})
    assert coverage(opts) is None
    seen = _passing_play_outs(monkeypatch)
    for i, seed in enumerate(seeds):
        compare_game(opts, seed, fast, g=i % 2, all_seats_every=3)
    assert {"glass_thief", "glass_window"} <= set(seen), sorted(set(seen))


# (options, seeds, the phases the epsilon-greedy games decide in): start_tokens give complete windows (the
# window heuristic decides) and tokens worth stealing; seeds whose eps-0.25 games place a thief and steal
# (the steal heuristic, a random kind's draw included): found by scanning 300-315 and 310-315
GLASS = ("glass_thief", "glass_steal", "glass_window")
GLASS_GREEDY = [
    ({"expansions": ("stained_glass",), "rules": {"stained_glass": {"start_tokens": "G1a G1b G1c G2a; G4a G4b G4c"}}},
     [303, 305], set(GLASS)),
    ({"expansions": ("stained_glass",), "num_players": 3,
      "rules": {"stained_glass": {"steal_kind": "random", "steal_from_self": True, "token_on": "place",
                                  "start_tokens": "G1a G1b; G2a G2b G2c; G3a G4a"}}}, [311, 314], set(GLASS)),
    ({"expansions": ("stained_glass", "darmstadt", "shrines"), "num_players": 4,
      "rules": {"stained_glass": {"protect_complete_windows": True, "window_points": "1,0,5,2",
                                  "loose_token_points": 1, "shrines_are_cloisters": True}}}, range(320, 322), set()),
    ({"expansions": ("stained_glass", "count", "king_robber"), "num_players": 3}, range(330, 332), set()),
]  # fmt: skip


@pytest.mark.parametrize("eps", [0.0, 0.25])
@pytest.mark.parametrize("kw,seeds,phases", GLASS_GREEDY, ids=[repr(c[0]) for c in GLASS_GREEDY])
def test_stained_glass_greedy_chooses_as_the_python_policy(kw, seeds, phases, eps):
    decided = _same_choices(EnvOptions.from_kwargs(**kw), seeds, eps)
    if eps:
        assert phases <= decided, sorted(decided)


def test_a_long_stained_glass_history_fits():
    """A greedy player keeping a complete window is asked every turn (it passes to build a bigger one):
    with the bag order and start tokens of this game (the differential's seed 700000) the history outgrew
    the engine's former two rows a tile, and the compiled record was cut.  The plug-in's ``history_rows``
    now sizes it: every decision is in the compiled history (``_same_choices`` compares it)."""
    from carc_env.fast import kernels as K
    from carc_env.fast.engine import FastBatch

    opts = EnvOptions.from_kwargs(
        expansions=("stained_glass",),
        num_players=3,
        rules={"stained_glass": {"bag_order": "G1a G1b G1c G2a", "start_tokens": "G2b G2c G3a G3b G3c; G4a G4b"}},
    )
    _same_choices(opts, [700000], 0.1)
    fast = FastBatch(opts, 1)
    fast.reset(0, 700000)
    rules = opts.rule_set()
    tiles = sum(t.count for t in rules.tiles)
    pol = [GreedyPolicy(epsilon=0.1, seed=7000000 + p) for p in range(3)]
    while not fast.over(0):
        fast.step_game(0, int(greedy_actions(fast, [0], [pol[fast.player(0)]])[0]))
    assert int(fast.state.gi[0, K.G_NHIST]) > 2 * tiles + 8  # more rows than the former capacity


# Maps - Germany: the printed board's closed sides and squares in the scan, its buildings' targets; the
# optional extra turn passed in the play-outs and taken by the greedy (its heuristics)
MAP = "maps_germany"
MINI = str(Path(__file__).resolve().parents[1] / "data" / "maps" / "mini.toml")
EXTRA = {"town_extra_turn": True, "town_extra_turn_optional": True}
MAP_FEATURES = [
    ({"expansions": (MAP,), "rules": {MAP: EXTRA}}, [0]),
    ({"expansions": (MAP, "royal_gateways", "sagrada_familia", "darmstadt"), "num_players": 3,
      "rules": {MAP: {"large_city_closed_edges": "border", "start_orientation": "random"}}}, [1]),
    ({"expansions": (MAP, "shrines", "king_robber"), "num_players": 4,
      "rules": {MAP: {"map_file": MINI, "start_squares": "A,B", **EXTRA}}}, [2, 3]),
]  # fmt: skip


@pytest.mark.parametrize(
    "kw,seeds", GATES_AND_SAGRADA + MAP_FEATURES, ids=[repr(c[0]) for c in GATES_AND_SAGRADA + MAP_FEATURES]
)
def test_gateways_sagrada_and_map_features_are_identical(batches, kw, seeds):
    opts, fast = batches({**kw, "action_features": True})
    assert coverage(opts) is None
    for i, seed in enumerate(seeds):
        compare_game(opts, seed, fast, g=i % 2, all_seats_every=3)


MAP_GREEDY = [
    ({"expansions": (MAP,), "rules": {MAP: EXTRA}}, [10, 11]),
    ({"expansions": (MAP, "royal_gateways", "king_robber"), "num_players": 3,
      "rules": {MAP: {"start_squares": "Rostock,Erfurt,Stuttgart", **EXTRA}}}, [12]),
]  # fmt: skip


@pytest.mark.parametrize("eps", [0.0, 0.25])
@pytest.mark.parametrize("kw,seeds", MAP_GREEDY, ids=[repr(c[0]) for c in MAP_GREEDY])
def test_map_greedy_chooses_as_the_python_policy(kw, seeds, eps):
    assert "map_extra_turn" in _same_choices(EnvOptions.from_kwargs(**kw), seeds, eps)
