"""Stained Glass in the environment: the windows tensor, thieves on the board, the action ranges, drawing.

PettingZoo's ``api_test`` / ``seed_test`` / ``render_test`` with ``stained_glass``
alone and with every expansion run in ``tests/env/test_env_expansions.py``
(``test_*_on_expansions[stained_glass]`` and ``[count+...+stained_glass]``).
Scenario board reminders as in ``tests/expansions/test_stained_glass.py``: ``BA-A`` at
``1,0 r1`` has its road facing west, joined to the start tile's road.
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import play

import carc_env
from carc_env.core import Game, GameConfig, IllegalActionError, Pass
from carc_env.env.aec import raw_env
from carc_env.expansions.stained_glass import (
    SHAPES,
    TOKEN_KINDS,
    TOTAL_TOKENS,
    PlaceThief,
    ScoreWindow,
    Steal,
    bag_tokens,
    thieves,
    tokens_held,
)
from carc_env.render import render_image, render_text

SG = ("base", "stained_glass")


def env_with(order: list[str], n: int = 2, **options) -> raw_env:
    e = raw_env(num_players=n, expansions=SG, rules={"stained_glass": options} if options else {})
    e.reset(seed=0, options={"draw_order": order})
    return e


def expected_windows(game: Game, seat: int) -> np.ndarray:
    """The windows tensor recomputed from the game: row i = relative seat i."""
    n = game.num_players
    out = np.zeros((n, 22), dtype=np.uint8)
    for i in range(n):
        held = tokens_held(game, (seat + i) % n)
        for t in held:
            out[i, TOKEN_KINDS.index(t)] += 1
        for j, s in enumerate(SHAPES):
            out[i, 12 + j] = min(held.count(k) for k in s.tokens)
    return out


def do(e: raw_env, text: str) -> None:
    e.step(e.action_from_text(text))


# ------------------------------------------------------------ the windows tensor
def test_windows_tensor_columns_and_space():
    e = env_with(["BA-U"])
    assert e.window_names == [f"token_{k}" for k in TOKEN_KINDS] + [f"window_{s.name}" for s in SHAPES]
    space = e.observation_space("player_0")["windows"]
    assert space.shape == (2, 22) and space.dtype == np.uint8 and int(space.high.max()) == 2


def test_the_base_game_keeps_twelve_zero_columns():
    e = raw_env()
    e.reset(seed=1)
    assert e.window_names == []
    obs = e.observe("player_0")["windows"]
    assert obs.shape == (2, 12) and not obs.any()


def test_windows_rows_are_player_relative_tokens_and_complete_windows():
    e = env_with(["BA-U", "BA-U"], n=3, start_tokens="G1a G1b G1c G2a; G2b G2b; G4c")
    w0 = e.observe("player_0")["windows"]
    w1 = e.observe("player_1")["windows"]
    k = TOKEN_KINDS.index
    assert w0[0, [k("G1a"), k("G1b"), k("G1c"), k("G2a")]].tolist() == [1, 1, 1, 1]
    assert w0[0, 12:].tolist() == [1] + [0] * 9  # W1 complete, once
    assert w0[1, k("G2b")] == 2 and w0[2, k("G4c")] == 1  # the next players
    assert np.array_equal(w1, np.roll(w0, -1, axis=0))  # player_1 sees itself first, then player_2, then player_0
    for seat in range(3):
        assert np.array_equal(e.observe(f"player_{seat}")["windows"], expected_windows(e.game, seat))


def test_two_full_sets_complete_a_window_twice():
    e = env_with(["BA-U"], start_tokens=" ".join(TOKEN_KINDS * 2))
    w = e.observe("player_0")["windows"]
    assert w[0, :12].tolist() == [2] * 12 and w[0, 12:].tolist() == [2] * 10


def test_the_bag_count_is_a_global_feature():
    e = env_with(["BA-U", "BA-A", "BA-U"], start_tokens="G1a G1b; G2a")
    i = e.global_names.index("glass_bag")
    assert e.observe("player_0")["globals"][i] == pytest.approx(21 / TOTAL_TOKENS)  # 24 - 3 handed out
    do(e, "tile 1,0 r0")
    do(e, "pass")  # P1 draws the cloister tile BA-A and with it a token (token_on="draw")
    assert e.observe("player_1")["globals"][i] == pytest.approx(20 / TOTAL_TOKENS)


def test_thieves_show_on_the_board_planes_relative_to_the_observer():
    e = env_with(["BA-A", "BA-U", "BA-U"], start_tokens="; G1a")
    for text in ("tile 1,0 r1", "follower m", "thief r1"):
        do(e, text)
    assert thieves(e.game) == [(0, 1, 0, "r1")]
    view = e.codec.view(e.game)
    col, row = 1 - view.x0, 0 - view.y0
    ch = e.channel_names
    b0 = e.observe("player_0")["board"]
    b1 = e.observe("player_1")["board"]
    assert b0[ch.index("thieves_p0"), row, col] == 1 and b0[ch.index("thieves_p1")].sum() == 0
    assert b1[ch.index("thieves_p1"), row, col] == 1 and b1[ch.index("thieves_p0")].sum() == 0
    assert b0[ch.index("thieves_p0")].sum() == 1  # the monk on the same tile is no thief
    assert b0[ch.index("followers_p0"), row, col] == 2
    steals = e.global_names.index("glass_steals_left")
    assert e.observe("player_0")["globals"][steals] == pytest.approx(0.25)


# ------------------------------------------------------------ action ranges
def test_thief_range_names_the_road_by_its_side():
    e = env_with(["BA-A", "BA-U"])
    do(e, "tile 1,0 r1")
    do(e, "pass")
    r = e.codec.ranges["glass_thief"]
    assert r.size == 5
    mask = e.observe("player_0")["action_mask"]
    assert np.flatnonzero(mask).tolist() == [r.start + 3, r.start + 4]  # the road leaves west; pass
    assert e.action_to_text(r.start + 3) == "thief r1"
    assert e.codec.encode(e.game, PlaceThief("r1")) == r.start + 3
    with pytest.raises(IllegalActionError):
        e.codec.decode(e.game, r.start + 0)  # no road leaves north


def test_steal_range_is_relative_victim_times_kind_and_masked_to_the_legal_steals():
    e = env_with(["BA-A", "BA-U", "BA-U"], n=3, start_tokens="; G1a G2b; G4c")
    for text in ("tile 1,0 r1", "follower m", "thief r1"):
        do(e, text)
    r = e.codec.ranges["glass_steal"]
    assert r.size == 3 * 13 + 1
    k = TOKEN_KINDS.index
    enabled = (np.flatnonzero(e.observe("player_0")["action_mask"]) - r.start).tolist()
    assert enabled == [13 + k("G1a"), 13 + k("G2b"), 26 + k("G4c"), 39]
    assert e.codec.decode(e.game, r.start + 26 + k("G4c")) == Steal(2, "G4c")
    assert e.codec.decode(e.game, r.start + 39) == Pass()
    do(e, "steal 2 G4c")
    assert tokens_held(e.game, 0)[-1] == "G4c" and tokens_held(e.game, 2) == []


def test_steal_range_random_kind_column():
    e = env_with(["BA-A", "BA-U"], start_tokens="; G1a", steal_kind="random")
    for text in ("tile 1,0 r1", "follower m", "thief r1"):
        do(e, text)
    r = e.codec.ranges["glass_steal"]
    enabled = (np.flatnonzero(e.observe("player_0")["action_mask"]) - r.start).tolist()
    assert enabled == [13 + 12, 26]
    assert e.action_to_text(r.start + 25) == "steal 1"


def test_window_range_is_one_entry_per_shape_and_keep_building():
    e = env_with(["BA-U", "BA-U"], start_tokens="G2a G2b G2c G3a G3b G3c")
    do(e, "tile 1,0 r0")
    do(e, "pass")
    r = e.codec.ranges["glass_window"]
    assert r.size == 11 and e.game.phase == "glass_window"
    names = [s.name for s in SHAPES]
    enabled = (np.flatnonzero(e.observe("player_0")["action_mask"]) - r.start).tolist()
    assert enabled == [names.index("W2"), names.index("W3"), names.index("W2+W3"), 10]
    assert e.codec.decode(e.game, r.start + names.index("W2+W3")) == ScoreWindow("W2+W3")
    e.step(r.start + names.index("W2+W3"))
    assert e.game.scores == [18, 0]
    assert e.observe("player_0")["windows"].sum() == 0


# ------------------------------------------------------------ a full game
def test_a_full_game_through_carc_env_env_moves_tokens_in_the_observation():
    env = carc_env.env(expansions=("stained_glass",), render_mode="ansi")
    env.reset(seed=5)
    raw = env.unwrapped
    rng = np.random.default_rng(5)
    bag_i = raw.global_names.index("glass_bag")
    seen_tokens, seen_bag, steps = set(), set(), 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = raw.seat_of(agent)
        assert np.array_equal(obs["windows"], expected_windows(raw.game, seat))
        assert obs["globals"][bag_i] == pytest.approx(len(bag_tokens(raw.game)) / TOTAL_TOKENS)
        seen_tokens.add(int(obs["windows"][:, :12].sum()))
        seen_bag.add(len(bag_tokens(raw.game)))
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    assert raw.game.over and steps > 70
    assert len(seen_tokens) > 3 and len(seen_bag) > 3  # tokens moved out of the bag and between players
    assert "Stained glass: bag" in env.render()


# ------------------------------------------------------------ drawing
def test_text_header_shows_every_players_windows():
    g = Game(
        GameConfig(2, SG, {"stained_glass": {"start_tokens": "G1a G1b G1c G1a G2c; G4b", "bag_order": "G3a"}}),
        seed=0,
        draw_order=["BA-A", "BA-U"],
    )
    play(g, ["tile 1,0 r1", "follower m", "thief r1", "pass"])
    lines = render_text(g).splitlines()
    assert "Stained glass: bag 17 tokens; thieves: P0 at (1,0) r1" in lines
    assert "P0 glass: W1 [Abc] W2 [..c] W3 [a..] W4 [...] | complete: W1" in lines
    assert "P1 glass: W1 [...] W2 [...] W3 [...] W4 [.b.] | complete: -" in lines


def test_the_picture_shows_the_windows_beside_the_board_and_rings_thieves():
    from carc_env.expansions.stained_glass.draw import GLASS, GOLD, THIEF_RING

    g = Game(
        GameConfig(2, SG, {"stained_glass": {"start_tokens": "G1a G1b G1c; G4b"}}),
        seed=0,
        draw_order=["BA-A", "BA-U", "BA-U"],
    )
    before = render_image(g, tile_px=48)
    play(g, ["tile 1,0 r1", "follower m", "thief r1", "pass"])
    after = render_image(g, tile_px=48)
    colours = {tuple(c) for c in after.reshape(-1, 3)}
    assert GLASS[0][0] in colours and GLASS[3][1] in colours  # P0's W1 and P1's G4b panes
    assert GOLD in colours  # P0's finished W1
    assert THIEF_RING in colours
    assert THIEF_RING not in {tuple(c) for c in before.reshape(-1, 3)}
    # the panel's height depends only on the configuration (animations pad the width)
    view = (-2, 2, -2, 2)
    assert (
        render_image(g, tile_px=48, view=view).shape[0]
        == render_image(Game(g.config, seed=1), tile_px=48, view=view).shape[0]
    )


# ------------------------------------------------------------ the greedy baseline
def greedy_text(e: raw_env) -> str:
    from carc_env.baselines import GreedyPolicy

    return e.action_to_text(GreedyPolicy(seed=0).act(e.observe(e.agent_selection), e))


def test_greedy_values_the_token_of_a_completed_cloister():
    # P0's unoccupied cloister at (0,1) lacks one neighbour, (1,2): completing it earns no point
    # but a token; every other placement of P1's BA-V earns nothing.
    from test_stained_glass import COMPLETE_CLOISTER_MOVES, COMPLETE_CLOISTER_ORDER

    e = env_with(COMPLETE_CLOISTER_ORDER, bag_order="G1a G2a G3a")
    for text in COMPLETE_CLOISTER_MOVES:
        do(e, "pass" if text == "follower m" else text)
    assert e.game.player == 1 and e.game.phase == "tile"
    assert greedy_text(e).startswith("tile 1,2 ")


def test_greedy_scores_a_finished_window_unless_one_token_finishes_a_bigger_one():
    e = env_with(["BA-U", "BA-U"], start_tokens="G1a G1b G1c G3a")
    do(e, "tile 1,0 r0")
    do(e, "pass")
    assert e.game.phase == "glass_window" and greedy_text(e) == "window W1"
    e = env_with(["BA-U", "BA-U"], start_tokens="G1a G1b G1c G2a G2b")
    do(e, "tile 1,0 r0")
    do(e, "pass")
    assert greedy_text(e) == "pass"  # keep building: one more token makes W1+W2 (18, not 6)
    e = env_with(["BA-U", "BA-U"], start_tokens="G1a G1b G1c G2a G2b G2c G3a G3b")
    do(e, "tile 1,0 r0")
    do(e, "pass")
    assert greedy_text(e) == "pass"  # W1+W2 is finished and W3 two thirds built
    e = env_with(["BA-U"], start_tokens="G1a G1b G1c G2a G2b")
    do(e, "tile 1,0 r0")
    do(e, "pass")
    assert greedy_text(e) == "window W1"  # the last tile: no time left to build


def test_greedy_places_a_thief_only_when_there_is_something_to_steal():
    e = env_with(["BA-A", "BA-U"], start_tokens="; G2a")
    do(e, "tile 1,0 r1")
    do(e, "follower m")
    assert greedy_text(e) == "thief r1"
    e = env_with(["BA-A", "BA-U"])
    do(e, "tile 1,0 r1")
    do(e, "follower m")
    assert e.game.phase == "glass_thief" and greedy_text(e) == "pass"


def test_greedy_steals_the_token_that_finishes_its_window():
    e = env_with(["BA-A", "BA-U"], bag_order="G4b", start_tokens="G1a G1b; G1c G4a G3c")
    for text in ("tile 1,0 r1", "follower m", "thief r1"):
        do(e, text)
    assert greedy_text(e) == "steal 1 G1c"
