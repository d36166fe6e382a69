"""Action codec and observation encoder: masks against the core, text round trips, incremental encoding."""

from __future__ import annotations

import numpy as np
import pytest

import carc_env  # noqa: F401  (registers the expansions)
from carc_env.core import Game, GameConfig, IllegalActionError, Pass, PlaceFollower, PlaceTile
from carc_env.core.expansion import Expansion, register, unregister
from carc_env.encoding import (
    CORE_PHASE_CODECS,
    DEFAULT_WINDOW,
    ActionCodec,
    EnumeratedPhaseCodec,
    ObservationEncoder,
    phase_codec_factory,
)
from carc_env.env.aec import raw_env


def _games(seeds, num_players=2):
    """Random games (uniform over the legal actions via the mask); yield (game, codec) at every decision."""
    for seed in seeds:
        game = Game(GameConfig(num_players), seed=seed)
        codec = ActionCodec(game.rules, DEFAULT_WINDOW)
        for _ in _walk(game, codec, seed):
            yield game, codec


def _walk(game, codec, seed):
    """Play ``game`` at random through the codec's mask, yielding the decision count before each decision."""
    rng = np.random.default_rng(seed + 100)
    i = 0
    while not game.over:
        yield i
        legal = np.flatnonzero(codec.mask(game))
        game.apply(codec.decode(game, int(legal[rng.integers(len(legal))])))
        i += 1


def _core_legal_texts(game):
    return {game.action_text(a) for a in game.legal_actions()}


@pytest.mark.parametrize(("num_players", "window"), [(2, DEFAULT_WINDOW), (3, (9, 9)), (2, (5, 7))])
def test_mask_equals_the_core_legal_actions(num_players, window):
    rng = np.random.default_rng(0)
    for seed in range(2):
        game = Game(GameConfig(num_players), seed=seed)
        codec = ActionCodec(game.rules, window)
        for _ in _walk(game, codec, seed):
            view = codec.view(game)
            mask = view.mask
            assert mask.dtype == np.int8 and mask.any()
            enabled = np.flatnonzero(mask)
            texts = {codec.action_to_text(game, int(a)) for a in enabled}
            core = _core_legal_texts(game)
            # every enabled action is legal; every legal action is enabled unless outside the window
            assert texts <= core
            assert len(core) - len(texts) == view.outside
            # every enabled action applies without error
            for a in enabled:
                game.clone().apply(codec.decode(game, int(a)))
            # disabled actions of the current phase are illegal in the core
            pr = codec.ranges[game.phase]
            disabled = [a for a in range(pr.start, pr.stop) if not mask[a]]
            for a in rng.choice(disabled, size=min(25, len(disabled)), replace=False):
                with pytest.raises(IllegalActionError):
                    game.clone().apply(codec.decode(game, int(a)))
            # indices of other phases' ranges never decode in this phase
            other = next(r for p, r in codec.ranges.items() if p != game.phase)
            with pytest.raises(IllegalActionError, match="range"):
                codec.decode(game, other.start)


def test_text_round_trip_on_every_legal_action():
    for game, codec in _games(range(3), num_players=3):
        for a in np.flatnonzero(codec.mask(game)):
            text = codec.action_to_text(game, int(a))
            assert codec.action_from_text(game, text) == a
            # absolute coordinates, via the core's notation
            assert game.action_text(game.parse_action(text)) == text


def test_action_layout():
    game = Game(GameConfig(2), seed=0)
    codec = ActionCodec(game.rules, (7, 9))
    rows, cols = 7, 9
    assert codec.tile_range.start == 0 and codec.tile_range.size == 4 * rows * cols
    fr = codec.follower_range
    assert fr.start == 4 * rows * cols and fr.size == game.rules.max_segments + 1
    view = codec.view(game)
    for a in np.flatnonzero(view.mask):
        act = codec.decode(game, int(a))
        rot, rem = divmod(int(a), rows * cols)
        row, col = divmod(rem, cols)
        assert (act.x, act.y, act.rotation) == (view.x0 + col, view.y0 + row, rot)
    # the window is centred on the frontier of the start tile
    assert (view.x0, view.y0) == (-(cols // 2), -(rows // 2))
    assert codec.decode(game, int(np.flatnonzero(view.mask)[0])).__class__ is PlaceTile
    game.apply(codec.decode(game, int(np.flatnonzero(view.mask)[0])))
    if game.phase == "follower":
        assert codec.decode(game, fr.stop - 1) == Pass()
        assert codec.decode(game, fr.start + 1) == PlaceFollower(1)


def test_unknown_phase_needs_a_registered_codec():
    assert {"tile", "follower"} <= set(CORE_PHASE_CODECS)
    game = Game(GameConfig(2), seed=0)

    class FakeRules:
        phases = ["tile", "follower", "no_codec_phase"]
        max_segments = game.rules.max_segments
        phase_owner: dict[str, str] = {}

    with pytest.raises(ValueError, match="PHASE_CODECS"):
        ActionCodec(FakeRules(), (5, 5), strict=True)
    with pytest.warns(UserWarning, match="no registered action codec"):
        generic = ActionCodec(FakeRules(), (5, 5))
    assert isinstance(generic.codecs["no_codec_phase"], EnumeratedPhaseCodec)

    class TwoWayPlugin(Expansion):  # its phase's codec comes from its package's actions part
        KEY = "test_two_way"

    register(TwoWayPlugin, package="_toy_plugins.two_way")
    try:

        class Rules2(FakeRules):
            phases = ["tile", "follower", "two_way_test_phase"]
            phase_owner = {"two_way_test_phase": "test_two_way"}

        assert phase_codec_factory(Rules2(), "two_way_test_phase").__name__ == "TwoWay"
        codec = ActionCodec(Rules2(), (5, 5))
        assert list(codec.ranges) == ["tile", "follower", "two_way_test_phase"]
        assert codec.ranges["two_way_test_phase"].start == 4 * 25 + game.rules.max_segments + 1
        assert codec.n == codec.ranges["two_way_test_phase"].stop
    finally:
        unregister("test_two_way")


@pytest.mark.parametrize(("num_players", "window"), [(2, DEFAULT_WINDOW), (4, (11, 11)), (2, (5, 5))])
def test_incremental_encoding_equals_fresh_encoding(num_players, window):
    for seed in range(2):
        game = Game(GameConfig(num_players), seed=seed)
        codec = ActionCodec(game.rules, window)
        enc = ObservationEncoder(game.rules, num_players, codec)
        for _ in _walk(game, codec, seed):
            for seat in range(num_players):
                inc = enc.encode(game, seat)
                fresh_codec = ActionCodec(game.rules, window)
                fresh = ObservationEncoder(game.rules, num_players, fresh_codec).encode(game, seat)
                for k in inc:
                    assert inc[k].dtype == fresh[k].dtype
                    assert np.array_equal(inc[k], fresh[k]), (k, seat, len(game.history))
    # a clone or a new game is encoded from scratch, not from the old cache
    g2 = game.clone()
    assert np.array_equal(
        enc.encode(g2, 0)["board"], ObservationEncoder(g2.rules, num_players, codec).encode(g2, 0)["board"]
    )


def _brute_board(game, codec, enc, seat):
    """Board planes recomputed cell by cell with the core's public helpers (slow, for reference)."""
    view = codec.view(game)
    names = enc.channel_names
    ch = {n: i for i, n in enumerate(names)}
    board = np.zeros(enc.board_shape, dtype=np.int64)
    rules = game.rules
    n = game.num_players
    occupied = {}
    for root, nodes in game.occupants.items():
        occupied[root] = {game.followers[nd] for nd in nodes}
    for k, (x, y, t, r, base) in enumerate(game.placements):
        row, col = y - view.y0, x - view.x0
        if not (0 <= row < codec.rows and 0 <= col < codec.cols):
            continue
        tile = rules.tiles[t]
        board[ch["tile"], row, col] = 1
        for s, side in enumerate("NESW"):
            code = tile.edge_codes[r][s]
            kind = {1: "city", 2: "road", 3: "field"}[code]
            board[ch[f"edge_{side}_{kind}"], row, col] = 1
            i = tile.center[r][s]
            if i >= 0:
                root = game.find(base + i)
                if root in game.completed:
                    board[ch[f"complete_{side}"], row, col] = 1
                owners = occupied.get(root, set())
                if seat in owners:
                    board[ch[f"mine_{side}"], row, col] = 1
                if owners - {seat}:
                    board[ch[f"others_{side}"], row, col] = 1
                if tile.segments[i].kind in (0, 1):
                    board[ch[f"open_{side}"], row, col] = min(game.open[root], 3)
                    board[ch[f"size_{side}"], row, col] = min(len(game.feature_tiles(root)), 15)
        for i, segm in enumerate(tile.segments):
            root = game.find(base + i)
            owners = occupied.get(root, set())
            if segm.kind == 2:
                if seat in owners:
                    board[ch["field_mine"], row, col] = 1
                if owners - {seat}:
                    board[ch["field_others"], row, col] = 1
            if segm.kind == 3:
                board[ch[f"building_{segm.building}"], row, col] = 1
                if root in game.completed:
                    board[ch["complete_building"], row, col] = 1
                else:
                    board[ch["building_neighbours"], row, col] = sum(
                        (x + dx, y + dy) in game.board for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy
                    )
        board[ch["cities"], row, col] = sum(1 for s in tile.segments if s.kind == 0)
        board[ch["roads"], row, col] = sum(1 for s in tile.segments if s.kind == 1)
        board[ch["fields"], row, col] = sum(1 for s in tile.segments if s.kind == 2)
        board[ch["pennants"], row, col] = sum(s.pennants for s in tile.segments)
        if k == len(game.placements) - 1:
            board[ch["last_placed"], row, col] = 1
    kinds = ["city", "road", "field", "building"]
    for p, x, y, i in game.follower_positions():
        row, col = y - view.y0, x - view.x0
        board[ch[f"followers_p{(p - seat) % n}"], row, col] += 1
        x_, y_, t, r, base = game.placements[game.board[(x, y)]]
        board[ch[f"follower_on_{kinds[game.kind[base + i]]}"], row, col] += 1
    fx, fy, _ = game.frontier()
    for x, y in zip(fx, fy, strict=True):
        if 0 <= y - view.y0 < codec.rows and 0 <= x - view.x0 < codec.cols:
            board[ch["frontier"], y - view.y0, x - view.x0] = 1
    if game.phase == "tile":
        for x, y, r in game.legal_tile_placements():
            if 0 <= y - view.y0 < codec.rows and 0 <= x - view.x0 < codec.cols:
                board[ch[f"legal_r{r}"], y - view.y0, x - view.x0] = 1
    return board


def test_board_channels_mean_what_the_docstring_says():
    for seed in (1, 2):
        game = Game(GameConfig(3), seed=seed)
        codec = ActionCodec(game.rules, DEFAULT_WINDOW)
        enc = ObservationEncoder(game.rules, 3, codec)
        for i in _walk(game, codec, seed):
            if i % 7:
                continue
            for seat in range(3):
                got = enc.encode(game, seat)["board"]
                want = _brute_board(game, codec, enc, seat)
                for c, name in enumerate(enc.channel_names):
                    assert np.array_equal(got[c], want[c]), (name, seat, len(game.history))
                # the legal planes are the tile range of the mask
                if seat == game.player:
                    legal = got[enc.ch_legal : enc.ch_legal + 4].reshape(-1)
                    assert np.array_equal(legal, codec.mask(game)[: codec.tile_range.size])


def test_globals_mean_what_the_docstring_says():
    game = Game(GameConfig(3), seed=3)
    codec = ActionCodec(game.rules, DEFAULT_WINDOW)
    enc = ObservationEncoder(game.rules, 3, codec)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = np.flatnonzero(codec.mask(game))
        game.apply(codec.decode(game, int(legal[rng.integers(len(legal))])))
    g = dict(zip(enc.global_names, enc.encode(game, 1)["globals"], strict=True))
    assert g[f"drawn_tile_{game.tile_id}"] == 1.0 if game.phase == "tile" else True
    x, y, t, r, _ = game.placements[-1]
    assert g[f"placed_tile_{game.rules.tiles[t].id}"] == 1.0 and g[f"placed_rotation_{r}"] == 1.0
    counts = game.remaining_counts()
    for i, tile in enumerate(game.rules.tiles):
        assert g[f"remaining_{tile.id}"] == pytest.approx(counts[i] / tile.count)
    assert g["score_p0"] == pytest.approx(game.scores[1] / 100)
    assert g["score_p1"] == pytest.approx(game.scores[2] / 100)
    assert g["score_p2"] == pytest.approx(game.scores[0] / 100)
    assert g["followers_in_hand_p0"] == pytest.approx(game.supply[1] / 7)
    assert g[f"phase_{game.phase}"] == 1.0
    assert g[f"deciding_p{(game.player - 1) % 3}"] == 1.0
    assert g[f"turn_p{(game.turn_player - 1) % 3}"] == 1.0
    assert g["score_lead"] == pytest.approx((game.scores[1] - max(game.scores[0], game.scores[2])) / 100)


def test_followers_are_player_relative():
    e = raw_env(num_players=3)
    e.reset(seed=0, options={"draw_order": ["BA-E", "BA-U", "BA-B"]})
    e.step(e.action_from_text("tile 0,-1 r2"))
    e.step(e.action_from_text("follower c1"))  # player 0 closes a 2-tile city: scores at once
    e.step(e.action_from_text("tile 1,0 r0"))
    e.step(e.action_from_text("follower r1"))  # player 1's road
    ch = {n: i for i, n in enumerate(e.channel_names)}
    view = e.codec.view(e.game)
    row, col = 0 - view.y0, 1 - view.x0
    for seat in range(3):
        board = e.observe(f"player_{seat}")["board"]
        rel = (1 - seat) % 3
        assert board[ch[f"followers_p{rel}"], row, col] == 1
        assert sum(board[ch[f"followers_p{i}"]].sum() for i in range(3)) == 1
        assert board[ch["follower_on_road"], row, col] == 1
        assert board[ch["mine_E"], row, col] == (seat == 1)
        assert board[ch["others_E"], row, col] == (seat != 1)
    # the start tile's city was completed (and scored) by player 0
    b0 = e.observe("player_0")["board"]
    assert b0[ch["complete_N"], 0 - view.y0, 0 - view.x0] == 1
    g0 = dict(zip(e.global_names, e.observe("player_0")["globals"], strict=True))
    assert g0["score_p0"] == pytest.approx(0.04)


def test_placements_outside_a_small_window_are_reported_not_dropped():
    e = raw_env(window=(3, 3))
    rng = np.random.default_rng(0)
    e.reset(seed=1)
    reported = 0
    while not e.game.over:
        agent = e.agent_selection
        info = e.infos[agent]
        view = e.codec.view(e.game)
        if e.game.phase == "tile":
            core = len(e.game.legal_tile_placements())
            assert core - int(view.mask.sum()) == view.outside
            g = dict(zip(e.global_names, e.observe(agent)["globals"], strict=True))
            assert g["window_clipped"] == (1.0 if view.outside else 0.0)
        if view.outside:
            assert info["placements_outside_window"] == view.outside
            reported += 1
        else:
            assert "placements_outside_window" not in info
        obs = e.observe(agent)
        assert obs["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    assert reported > 10
