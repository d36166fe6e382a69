"""Observation planes and features of the expansions (each plug-in's observe part): present only with
their expansion, the base layout kept, and each meaning what the env docstring says."""

from __future__ import annotations

import numpy as np
import pytest
from _env_expansions import ALL, pick, seed_quarters
from test_count import in_quarter

from carc_env.core import PlaceTile
from carc_env.core.tiles import RIVER
from carc_env.env.aec import raw_env
from carc_env.expansions.count import CASTLE, MARKET

BASE = raw_env(num_players=3)
ADDED_CHANNELS = {
    "count": {*(f"edge_{s}_interior" for s in "NESW"), "guests_p0", "guests_p1", "guests_p2", "completing"},
    "darmstadt": {"building_church", "darmstadtium"},
    "king_robber": set(),
    "river2": {*(f"edge_{s}_river" for s in "NESW"), "river_end"},
    "royal_gateways": {"king_gate", "queen_gate", "linked_city", "gate_waiting"},
    "sagrada_familia": {"sagrada_familia", "sagrada_city"},
    "shrines": {"building_shrine"},
}
STATIC_CHANNELS = {"darmstadtium", "king_gate", "queen_gate", "sagrada_familia"}  # looked up per placed tile
ADDED_GLOBALS = {
    "count": {
        *(f"count_in_{q}" for q in ("castle", "market", "blacksmith", "cathedral")),
        *(f"quarter_{q}_p{i}" for q in ("castle", "market", "blacksmith", "cathedral") for i in range(3)),
        *(f"phase_{p}" for p in ("count_leave", "count_deploy", "count_move", "count_final")),
    },
    "darmstadt": set(),
    "king_robber": {
        "king_p0",
        "king_p1",
        "king_p2",
        "robber_p0",
        "robber_p1",
        "robber_p2",
        "king_record",
        "robber_record",
    },  # fmt: skip
    "river2": {"river_tiles_left"},
    "royal_gateways": {"king_gates_placed", "queen_gates_placed"},
    "sagrada_familia": {"sagrada_in_force"},
    "shrines": set(),
}


def _subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(name in it for name in small)


@pytest.mark.parametrize("key", sorted(ADDED_CHANNELS))
def test_each_expansion_adds_only_its_own_channels_and_features(key):
    e = raw_env(num_players=3, expansions=("base", key))
    tile_ids = {t.id for t in e.match.rules.tiles}
    per_tile = {f"{p}{t}" for t in tile_ids for p in ("drawn_tile_", "placed_tile_", "remaining_")}
    assert set(e.channel_names) - set(BASE.channel_names) == ADDED_CHANNELS[key]
    assert set(e.global_names) - set(BASE.global_names) - per_tile == ADDED_GLOBALS[key]
    # the base game's channels and features keep their relative order
    assert _subsequence(BASE.channel_names, e.channel_names)
    base_globals = [g for g in BASE.global_names if g not in per_tile]
    assert _subsequence(base_globals, e.global_names)
    # new dynamic channels follow last_placed, new features follow window_clipped
    last = e.channel_names.index("last_placed")
    for name in ADDED_CHANNELS[key] - STATIC_CHANNELS - {c for c in ADDED_CHANNELS[key] if c.startswith(("edge", "b"))}:
        assert e.channel_names.index(name) > last
    clipped = e.global_names.index("window_clipped")
    for name in ADDED_GLOBALS[key] - {g for g in ADDED_GLOBALS[key] if g.startswith("phase_")}:
        assert e.global_names.index(name) > clipped


def test_base_layout_is_unchanged():
    two = raw_env()
    assert len(two.channel_names) == 54 and len(two.global_names) == 92 and two.codec.n == 2925
    assert two.channel_names[-15:-9] == ["legal_r0", "legal_r1", "legal_r2", "legal_r3", "frontier", "last_placed"]
    assert two.channel_names[-1] == "building_neighbours"
    assert two.global_names[-2:] == ["legal_placements", "window_clipped"]
    assert two.encoder.extensions == []


def _planes(e, agent):
    obs = e.observe(agent)
    ch = {n: i for i, n in enumerate(e.channel_names)}
    g = dict(zip(e.global_names, obs["globals"].tolist(), strict=True))
    return obs["board"], ch, g


def test_count_guests_completing_and_quarters():
    # test_count's steal scenario: P0 closes the CO12 city cap (1,1) with BA-E (2,1) and a knight;
    # P1 (left of P0) sends a follower from the castle into it before it scores.  The Python engine:
    # the scenario edits the core's game (the compiled observations are compared by the fast differential).
    e = raw_env(num_players=3, expansions=("base", "count"), engine="python")
    e.reset(seed=0, options={"draw_order": ["BA-E", "BA-B", "BA-B"]})
    g = e.game
    g.ext["count"].count = MARKET
    in_quarter(g, CASTLE, 1, 2)
    in_quarter(g, CASTLE, 2, 1)
    in_quarter(g, CASTLE, 0, 1)
    e.step(e.action_from_text("tile 2,1 r3"))
    e.step(e.action_from_text("follower c1"))
    assert g.phase == "count_leave" and e.agent_selection == "player_1"
    view = e.codec.view(g)
    city = {(1 - view.y0, 1 - view.x0), (1 - view.y0, 2 - view.x0)}  # (row, col) of CO12 and BA-E
    board, ch, glob = _planes(e, "player_0")
    got = {tuple(rc) for rc in np.argwhere(board[ch["completing"]])}
    assert got == city
    assert not board[ch["guests_p0"]].any() and not board[ch["guests_p1"]].any()
    assert glob["count_in_market"] == 1.0 and glob["quarter_castle_p1"] == pytest.approx(2 / 7)
    e.step(e.action_from_text("count_send 2,1 c1"))
    for seat in range(3):
        board, ch, glob = _planes(e, f"player_{seat}")
        rel = (1 - seat) % 3
        assert {tuple(rc) for rc in np.argwhere(board[ch[f"guests_p{rel}"]])} == city
        assert board[ch[f"guests_p{rel}"]].max() == 1
        for other in {0, 1, 2} - {rel}:
            assert not board[ch[f"guests_p{other}"]].any()
        assert glob[f"quarter_castle_p{rel}"] == pytest.approx(1 / 7)
        # a guest occupies the feature like any follower: P0's knight and P1's guest are on it
        r, c = 1 - view.y0, 2 - view.x0
        assert board[ch["mine_W"], r, c] == (1 if seat in (0, 1) else 0)
        assert board[ch["others_W"], r, c] == 1
    e.step(e.action_from_text("count_send 2,1 c1"))
    board, ch, _ = _planes(e, "player_1")
    assert board[ch["guests_p0"]].max() == 2  # two of P1's followers, seen by P1
    while g.phase == "count_leave":
        e.step(e.action_from_text("pass"))
    board, ch, _ = _planes(e, "player_0")
    assert not board[ch["completing"]].any() and not any(board[ch[f"guests_p{i}"]].any() for i in range(3))


def test_river_end_plane_and_river_features():
    e = raw_env(num_players=2, expansions=("base", "river2"))
    e.reset(seed=4)
    g = e.game
    river = [t.id for t in e.match.rules.tiles if any(s.kind == RIVER for s in t.segments)]
    total = sum(t.count for t in e.match.rules.tiles if t.id in river)
    rng = np.random.default_rng(0)
    saw_end = saw_done = False
    while not g.over:
        board, ch, glob = _planes(e, e.agent_selection)
        view = e.codec.view(g)
        counts = dict(zip([t.id for t in e.match.rules.tiles], g.remaining_counts().tolist(), strict=True))
        left = sum(counts[t] for t in river)
        assert glob["river_tiles_left"] == pytest.approx(left / total)
        active = left > 0 or (g.tile_id in river)
        want = set()
        if active:
            want = {(y - view.y0, x - view.x0) for x, y, _, _ in g.ext["river2"].ends if (x, y) not in g.board}
        assert {tuple(rc) for rc in np.argwhere(board[ch["river_end"]])} == want
        saw_end |= bool(want)
        saw_done |= not active
        if g.phase == "tile" and g.tile_id in river:  # the drawn river tile fits only at an open end
            legal = board[[ch[f"legal_r{r}"] for r in range(4)]].any(axis=0)
            assert {tuple(rc) for rc in np.argwhere(legal)} <= want
        e.step(pick(g, e.codec, e.observe(e.agent_selection)["action_mask"], rng))
    assert saw_end and saw_done


def test_darmstadtium_plane():
    e = raw_env(num_players=2, expansions=("base", "darmstadt"))
    e.reset(seed=0, options={"draw_order": ["DA-darmstadtium", "BA-E"]})
    e.step(e.action_from_text("tile 0,-1 r2"))
    board, ch, _ = _planes(e, "player_0")
    view = e.codec.view(e.game)
    assert {tuple(rc) for rc in np.argwhere(board[ch["darmstadtium"]])} == {(-1 - view.y0, 0 - view.x0)}
    assert board[ch["building_church"]].sum() == 0 and board[ch["building_cloister"]].sum() == 0


def test_king_robber_and_building_features_over_a_random_game():
    e = raw_env(num_players=3, expansions=ALL, engine="python")  # seed_quarters edits the game
    e.reset(seed=2)
    g = e.game
    rng = np.random.default_rng(2)
    seed_quarters(g, rng)
    kinds = {"cloister", "shrine", "church"}
    seen = set()
    while not g.over:
        seat = int(rng.integers(3))
        board, ch, glob = _planes(e, f"player_{seat}")
        kr = g.ext["king_robber"]
        for name, holder, size in (("king", kr.king, kr.king_size), ("robber", kr.robber, kr.robber_size)):
            hot = [i for i in range(3) if glob[f"{name}_p{i}"]]
            assert hot == ([] if holder < 0 else [(holder - seat) % 3])
            assert glob[f"{name}_record"] == pytest.approx(size * 0.1)
        st = g.ext["count"]
        assert [glob[f"count_in_{q}"] for q in ("castle", "market", "blacksmith", "cathedral")] == [
            float(q == st.count) for q in range(4)
        ]
        view = e.codec.view(g)
        for x, y, t, _r, _ in g.placements:
            row, col = y - view.y0, x - view.x0
            if 0 <= row < 27 and 0 <= col < 27:
                tile = g.rules.tiles[t]
                for k in kinds:
                    has = any(s.building == k for s in tile.segments)
                    assert board[ch[f"building_{k}"], row, col] == has
                    seen |= {k} if has else set()
        e.step(pick(g, e.codec, e.observe(e.agent_selection)["action_mask"], rng))
    assert g.ext["king_robber"].king >= 0 and seen == kinds


def _cells(board, ch, name: str) -> set[tuple[int, int]]:
    return {tuple(int(v) for v in rc) for rc in np.argwhere(board[ch[name]])}


def test_gate_linked_city_and_waiting_planes():
    # test_royal_gateways' L1 layout: A = start city + BA-R (P0's knight), B = P1's cap south.
    e = raw_env(num_players=2, expansions=("base", "royal_gateways"))
    e.reset(seed=0, options={"draw_order": ["BA-R", "BA-E", "RG-king-1", "RG-king-2", "BA-E"]})
    for text in ("tile 0,-1 r2", "follower c1", "tile 0,1 r2", "follower c1", "tile 1,-1 r3", "pass"):
        e.step(e.action_from_text(text))
    view = e.codec.view(e.game)

    def rc(*cells):
        return {(y - view.y0, x - view.x0) for x, y in cells}

    board, ch, glob = _planes(e, "player_1")
    assert _cells(board, ch, "king_gate") == rc((1, -1)) and not board[ch["queen_gate"]].any()
    assert _cells(board, ch, "gate_waiting") == rc((0, 0), (0, -1), (1, -1))  # A waits for the other gate
    assert not board[ch["linked_city"]].any()
    assert (glob["king_gates_placed"], glob["queen_gates_placed"]) == (0.5, 0.0)
    e.step(e.action_from_text("tile 0,2 r0"))  # P1: the King's Gate closes B and links it to A
    e.step(e.action_from_text("pass"))
    view = e.codec.view(e.game)
    board, ch, glob = _planes(e, "player_0")
    assert _cells(board, ch, "king_gate") == rc((1, -1), (0, 2))
    assert _cells(board, ch, "linked_city") == rc((0, 0), (0, -1), (1, -1), (0, 1), (0, 2))
    assert not board[ch["gate_waiting"]].any()
    assert glob["king_gates_placed"] == 1.0
    # the open-edge planes count every part: A's west edge is the linked city's only open edge
    r, c = -1 - view.y0, 0 - view.x0
    assert board[ch["open_W"], r, c] == 1


def test_sagrada_familia_planes_and_legal_placements():
    # test_sagrada_familia's closing layout: the city is open north only; BA-E at (0,-2) is refused.
    e = raw_env(num_players=2, expansions=("base", "sagrada_familia"))
    e.reset(seed=0, options={"draw_order": ["SF-sagrada-familia", "BA-E", "BA-E", "BA-E"]})
    board, ch, glob = _planes(e, "player_0")
    assert not board[ch["sagrada_city"]].any() and glob["sagrada_in_force"] == 0.0
    for text in ("tile 0,-1 r0", "follower c1", "tile 1,-1 r3", "pass", "tile -1,-1 r1", "pass"):
        e.step(e.action_from_text(text))
    view = e.codec.view(e.game)
    board, ch, glob = _planes(e, "player_1")
    assert _cells(board, ch, "sagrada_familia") == {(-1 - view.y0, 0 - view.x0)}
    city = {(y - view.y0, x - view.x0) for x, y in ((0, 0), (0, -1), (1, -1), (-1, -1))}
    assert _cells(board, ch, "sagrada_city") == city and glob["sagrada_in_force"] == 1.0
    # the closing placement is neither in the legal planes nor in the mask
    assert board[ch["legal_r2"], -2 - view.y0, 0 - view.x0] == 0
    mask = e.observe("player_1")["action_mask"]
    assert mask[e.codec.encode(e.game, PlaceTile(0, -2, 2))] == 0
    assert mask[e.codec.encode(e.game, PlaceTile(0, 1, 2))] == 1  # the same cap south of the start
