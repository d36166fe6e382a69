"""The Count of Carcassonne's action ranges (carc_env.expansions.count.actions): fixed layouts, masks equal
to the core's legal moves, one index per move, text round trips; scripted scenarios from test_count."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _env_expansions import ALL, pick, seed_quarters
from hypothesis import given, settings
from hypothesis import strategies as st
from test_count import count_game, final_setup, in_quarter, steal_setup

from carc_env.core import Game, GameConfig, IllegalActionError, Pass
from carc_env.encoding import ActionCodec, EnumeratedPhaseCodec
from carc_env.env.aec import raw_env
from carc_env.expansions.count import BLACKSMITH, CASTLE, CATHEDRAL, MARKET, CountDeploy, CountSend
from carc_env.expansions.count.actions import (
    CountDeployCodec,
    CountFinalCodec,
    CountLeaveCodec,
    CountMoveCodec,
)

ROWS = COLS = 27
RC = ROWS * COLS


def local(codec: ActionCodec, game: Game) -> set[int]:
    """Enabled indices of the current phase, relative to its range."""
    r = codec.ranges[game.phase]
    return {int(a) - r.start for a in np.flatnonzero(codec.mask(game))}


def test_every_count_phase_has_a_fixed_layout_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the generic fallback would warn
        e = raw_env(num_players=3, expansions=ALL)
        codec = ActionCodec(e.match.rules, strict=True)  # strict: no generic fallback
    types = {p: type(c) for p, c in codec.codecs.items()}
    assert types["count_leave"] is CountLeaveCodec and types["count_final"] is CountFinalCodec
    assert types["count_deploy"] is CountDeployCodec and types["count_move"] is CountMoveCodec
    assert not any(issubclass(t, EnumeratedPhaseCodec) for t in types.values())
    sizes = {p: r.size for p, r in codec.ranges.items()}
    assert sizes == {
        "tile": 4 * RC,
        "follower": 10,
        "count_leave": 4 + 9 + 1,
        "count_deploy": 5,
        "count_move": 5,
        "count_final": 13 * RC + 1,
        "glass_thief": 5,
        "glass_steal": 3 * 13 + 1,
        "glass_window": 11,
    }
    assert codec.n == e.codec.n == 12484
    # the base game's layout is untouched
    assert raw_env().codec.n == 2925 and list(raw_env().codec.ranges) == ["tile", "follower"]


def test_deploy_and_move_ranges():
    g = count_game(["BA-U", "BA-U", "BA-A", "BA-B"])
    codec = ActionCodec(g.rules)
    for a in ["tile 1,-2 r1", "pass", "tile 1,-3 r1", "follower r1", "tile 1,-4 r0", "pass"]:
        g.apply(codec.decode(g, codec.action_from_text(g, a)))
    assert g.phase == "count_deploy"
    start = codec.ranges["count_deploy"].start
    assert local(codec, g) == {0, 1, 2, 3, 4}
    assert [codec.decode(g, start + q) for q in range(5)] == [CountDeploy(q) for q in range(4)] + [Pass()]
    assert codec.action_from_text(g, "count_deploy blacksmith") == start + BLACKSMITH
    assert codec.action_to_text(g, start + CATHEDRAL) == "count_deploy cathedral"
    with pytest.raises(IllegalActionError, match="range"):
        codec.decode(g, codec.ranges["count_move"].start)
    g.apply(codec.decode(g, start + MARKET))
    assert g.phase == "count_move"
    start = codec.ranges["count_move"].start
    assert local(codec, g) == {MARKET, BLACKSMITH, CATHEDRAL, 4}  # not his own quarter (the castle)
    with pytest.raises(IllegalActionError, match="another quarter"):
        g.clone().apply(codec.decode(g, start + CASTLE))
    assert codec.action_from_text(g, "count_move cathedral") == start + CATHEDRAL
    g.apply(codec.decode(g, start + CATHEDRAL))
    assert g.ext["count"].count == CATHEDRAL and g.ext["count"].quarters[MARKET] == [1, 0]


def test_leave_range_names_the_placed_tiles_sides():
    g = steal_setup()  # P0 closes the CO12 city cap with BA-E at (2,1) r3: the city leaves its west side
    codec = ActionCodec(g.rules)
    g.apply("tile 2,1 r3")
    g.apply("follower c1")
    assert g.phase == "count_leave" and g.player == 1
    start = codec.ranges["count_leave"].start
    assert local(codec, g) == {3, 13}  # side W of the placed tile, pass
    assert codec.decode(g, start + 3) == CountSend(2, 1, "c1")
    assert codec.decode(g, start + 13) == Pass()
    # any tile and segment of the feature names it, as in the core: CO12's city cap
    assert codec.action_from_text(g, "count_send 1,1 c1") == start + 3
    assert codec.action_to_text(g, start + 3) == "count_send 2,1 c1"
    for bad in (0, 1, 2, 4, 8, 12):  # no city or road there / no building on those tiles
        with pytest.raises(IllegalActionError):
            g.clone().apply(codec.decode(g, start + bad))
    g.apply(codec.decode(g, start + 3))
    assert g.guests and local(codec, g) == {3, 13}  # P1 still has one in the castle


def test_leave_range_names_buildings_round_the_placed_tile():
    # test_count's cathedral scenario: BA-E at (2,1) completes P0's cloister at (2,0), north of it
    g = count_game(["BA-B", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"])
    in_quarter(g, CATHEDRAL, 1)
    in_quarter(g, CASTLE, 1)
    g.ext["count"].count = MARKET
    for a in ["tile 2,0 r0", "follower m", "tile 2,-1 r0", "pass", "tile 3,-1 r0", "pass", "tile 3,0 r0", "pass",
              "tile 3,1 r2", "pass", "tile 2,1 r3", "pass"]:  # fmt: skip
        g.apply(a)
    codec = ActionCodec(g.rules)
    assert g.phase == "count_leave" and g.player == 1
    n_offset = 3 * (-1 + 1) + (0 + 1)  # (dx, dy) = (0, -1)
    assert local(codec, g) == {4 + n_offset, 13}
    assert codec.action_to_text(g, codec.ranges["count_leave"].start + 4 + n_offset) == "count_send 2,0 m"


def test_final_range_is_spatial_with_one_index_per_feature():
    g = final_setup()  # P1 may send to the CO9 city (with BA-N) or to farm C
    codec = ActionCodec(g.rules)
    assert g.phase == "count_final" and g.player == 1
    view = codec.view(g)
    start = codec.ranges["count_final"].start
    cell = lambda x, y: (y - view.y0) * COLS + (x - view.x0)  # noqa: E731
    city = 2 * RC + cell(-2, 1)  # top-most tile CO9 (-2,1), its city leaves side S (slot 2)
    farm = (4 + 1 + 5) * RC + cell(-2, -1)  # top-most tile CO1 (-2,-1), farm C on half SR (slot 5 + 5)
    assert local(codec, g) == {city, farm, 13 * RC}
    assert codec.action_to_text(g, start + city) == "count_send -2,1 c1"
    assert codec.action_to_text(g, start + farm) == "count_send -2,-1 f2"
    # the core's names (root segments) encode to the same indices
    assert {codec.encode(g, a) - start for a in g.legal_actions()} == {city, farm, 13 * RC}
    # another cell or slot of the same feature is an alias: refused, naming the canonical index
    alias = 0 * RC + cell(-2, 2)  # BA-N's city leaves its north side
    with pytest.raises(IllegalActionError, match=f"canonical index {city}"):
        codec.decode(g, start + alias)
    with pytest.raises(IllegalActionError, match="no tile"):
        codec.decode(g, start + cell(5, 5))
    g.apply(codec.decode(g, start + city))
    assert g.guests and g.phase == "count_final" and local(codec, g) == {farm, 13 * RC}  # the castle is empty


def test_final_moves_outside_a_small_window_are_reported_not_dropped():
    # With only_occupied=False every incomplete feature may receive a follower; a 3 x 3 window
    # cannot show them all: those moves are counted in view.dropped (info["actions_out_of_range"]).
    # The Python engine: the test edits the core's game directly (the compiled engine's count of such
    # moves is compared with this one by the fast differential).
    e = raw_env(
        num_players=2,
        expansions=("base", "count"),
        rules={"count": {"only_occupied": False}},
        window=(3, 3),
        engine="python",
    )
    e.reset(seed=0, options={"draw_order": ["BA-N", "BA-B"]})
    g = e.game
    in_quarter(g, MARKET, 1)
    in_quarter(g, CASTLE, 1)
    g.ext["count"].count = CATHEDRAL
    for a in ["tile -2,2 r0", "follower c1", "tile -1,2 r0"]:
        g.apply(a)  # the core directly: a 3 x 3 window may not show these placements
    e.step(e.action_from_text("follower f1"))
    assert g.phase == "count_final"
    view = e.codec.view(g)
    sends = [a for a in g.legal_actions() if type(a) is CountSend]
    enabled = np.flatnonzero(view.mask)
    assert view.dropped > 0 and len(enabled) - 1 + view.dropped == len(sends)
    assert e.infos[e.agent_selection]["actions_out_of_range"] == view.dropped


def _check_state(codec: ActionCodec, game: Game, rng: np.random.Generator) -> None:
    view = codec.view(game)
    mask = view.mask
    enabled = set(np.flatnonzero(mask).tolist())
    assert enabled, game.phase
    r = codec.ranges[game.phase]
    assert all(r.start <= a < r.stop for a in enabled)
    legal = game.legal_actions()
    coded = set()
    for a in legal:
        try:
            coded.add(codec.encode(game, a))
        except IllegalActionError:
            pass  # outside the window: counted below
    # exactly the legal moves, one index each (those the window cannot show are counted)
    assert coded == enabled, game.phase
    assert len(legal) == len(enabled) + view.outside + view.dropped
    # every enabled index decodes to a legal action and round-trips through the text notation
    # (a sample of the many tile placements, every one of the few Count moves)
    sample = sorted(enabled)
    if len(sample) > 8:
        sample = rng.choice(sample, size=8, replace=False).tolist()
    for a in sample:
        game.clone().apply(codec.decode(game, a))
        assert codec.action_from_text(game, codec.action_to_text(game, a)) == a
    disabled = [a for a in range(r.start, r.stop) if not mask[a]]
    for a in rng.choice(disabled, size=min(30, len(disabled)), replace=False) if disabled else ():
        with pytest.raises(IllegalActionError):
            game.clone().apply(codec.decode(game, int(a)))


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    players=st.integers(2, 5),
    only_occupied=st.booleans(),
    final_scoring=st.sampled_from(["any_district", "market_only"]),
)
def test_count_masks_equal_the_core_legal_moves_over_random_games(seed, players, only_occupied, final_scoring):
    """Every expansion enabled; the Count phases checked at every decision, the others every 7th."""
    rules = {"count": {"only_occupied": only_occupied, "final_scoring": final_scoring}}
    game = Game(GameConfig(players, ALL, rules), seed=seed)
    codec = ActionCodec(game.rules)
    rng = np.random.default_rng(seed)
    seed_quarters(game, rng)
    i = 0
    while not game.over:
        if game.phase.startswith("count") or i % 7 == 0:
            _check_state(codec, game, rng)
        game.apply(codec.decode(game, pick(game, codec, codec.mask(game), rng)))
        assert game.followers_conserved()
        i += 1


def test_random_games_reach_every_count_phase_through_the_codec():
    seen: set[str] = set()
    want = {"count_leave", "count_deploy", "count_move", "count_final"}
    for seed in range(200):
        if want <= seen:
            break
        game = Game(GameConfig(2 + seed % 3, ALL), seed=seed)
        codec = ActionCodec(game.rules)
        rng = np.random.default_rng(seed)
        seed_quarters(game, rng)
        while not game.over:
            seen.add(game.phase)
            game.apply(codec.decode(game, pick(game, codec, codec.mask(game), rng)))
    assert want <= seen
