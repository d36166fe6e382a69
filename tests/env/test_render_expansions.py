"""What the text board and the picture show of the expansions: King and Robber Baron holders, the
Count's quarters and followers, followers sent from the quarters, the river, the Darmstadtium."""

from __future__ import annotations

import numpy as np
import pytest
from _env_expansions import ALL, pick, seed_quarters
from test_count import in_quarter, steal_setup

from carc_env.core import Game, GameConfig, new_game
from carc_env.encoding import ActionCodec
from carc_env.expansions.count import BLACKSMITH, CASTLE, CATHEDRAL, MARKET
from carc_env.expansions.count.draw import COUNT_COLOUR
from carc_env.expansions.darmstadt.draw import ELEMENT_COLOUR
from carc_env.render import cell_box, player_colour, render_image, render_text
from carc_env.render.expansions import guests, status_lines
from carc_env.render.text import CELL_H, CELL_W, LABEL_W


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _board_rows(text: str) -> list[str]:
    lines = _lines(text)
    return lines[lines.index("") + 2 :]


def quarters_game() -> Game:
    g = Game(GameConfig(3, ("base", "count", "king_robber", "river2")), seed=1)
    in_quarter(g, CASTLE, 0)
    in_quarter(g, CASTLE, 2, 2)
    in_quarter(g, CATHEDRAL, 1, 3)
    g.ext["count"].count = MARKET
    return g


def test_text_header_names_holders_quarters_and_river():
    g = quarters_game()
    lines = _lines(render_text(g))
    assert lines[2:11] == [  # each plug-in's lines, in expansion order
        "Count on the market",
        "  castle: P0 x1, P2 x2",
        "  market (Count): -",
        "  blacksmith: -",
        "  cathedral: P1 x3",
        "Sent from the quarters: -",
        "King: nobody yet",
        "Robber Baron: nobody yet",
        "River: 11 tiles to place, open ends (3,-1)",
    ]
    # the number of expansion lines depends on the configuration only
    assert len(status_lines(g)) == 9
    assert len(status_lines(Game(GameConfig(2), seed=0))) == 0


def test_text_king_and_robber_holders():
    g = new_game(2, expansions=("base", "king_robber"), draw_order=["BA-E"])
    g.apply("tile 0,-1 r2")  # P0 closes the start tile's city: the King
    g.apply("pass")
    assert "King: P0 (city of 2 tiles)" in render_text(g)


def test_text_quarters_inside_the_city_block():
    g = quarters_game()
    rows = _board_rows(render_text(g))
    x_min = min(p[0] for p in g.placements)
    y_min = min(p[1] for p in g.placements)
    col0 = LABEL_W + (-2 - x_min) * CELL_W + 2
    row0 = (-1 - y_min) * CELL_H + 3
    got = [rows[row0 + q][col0 : col0 + 24].rstrip() for q in range(4)]
    assert got == ["castle       022", "market     C", "blacksmith", "cathedral    111"]


def test_text_marks_the_darmstadtium():
    g = new_game(2, expansions=("base", "darmstadt"), draw_order=["DA-darmstadtium"])
    g.apply("tile 0,-1 r2")
    rows = _board_rows(render_text(g))
    assert "D" in rows[1] and "D" not in "".join(rows[3:])  # y = -1 is the first board row


def test_guests_are_shown_in_text_and_picture():
    g = steal_setup()
    g.apply("tile 2,1 r3")
    g.apply("follower c1")
    g.apply("count_send 2,1 c1")  # P1 sends a follower from the castle into P0's city
    (gst,) = guests(g)
    assert (gst.player, gst.kind, gst.x, gst.y) == (1, "city", 2, 1)  # not drawn on CO12, inside the walls
    assert "Sent from the quarters: P1 on the city at (2,1)" in render_text(g)
    a = render_image(g, tile_px=64, panel=False)
    left, top, right, bottom = cell_box(g, 2, 1, 64)
    cell = a[top:bottom, left:right].reshape(-1, 3)
    assert (cell == np.array(player_colour(1), dtype=np.uint8)).all(axis=1).any()


def _gold_centre(a: np.ndarray, box: tuple[int, int, int, int]) -> tuple[float, float]:
    left, top, right, bottom = box
    ys, xs = np.nonzero((a[top:bottom, left:right] == np.array(COUNT_COLOUR, dtype=np.uint8)).all(axis=2))
    assert len(xs) > 20, "the Count is not drawn"
    return (xs.mean() / (right - left), ys.mean() / (bottom - top))


@pytest.mark.parametrize("tile_px", [32, 64])
def test_picture_shows_the_count_and_the_followers_in_quarters(tile_px):
    g = quarters_game()
    block = (*cell_box(g, -2, -1, tile_px)[:2], *cell_box(g, 1, 1, tile_px)[2:])
    a = render_image(g, tile_px=tile_px, panel=False)
    fx, fy = _gold_centre(a, block)
    assert fx > 0.5 and fy < 0.5  # the market is the north-east quarter
    for count, (east, south) in ((CASTLE, (False, False)), (BLACKSMITH, (False, True)), (CATHEDRAL, (True, True))):
        g.ext["count"].count = count
        fx, fy = _gold_centre(render_image(g, tile_px=tile_px, panel=False), block)
        assert (fx > 0.5, fy > 0.5) == (east, south), count
    left, top, right, bottom = block
    inside = a[top:bottom, left:right].reshape(-1, 3)
    for p in range(3):  # one meeple (or more) per player with a follower in a quarter
        assert (inside == np.array(player_colour(p), dtype=np.uint8)).all(axis=1).any(), p


def test_picture_panel_lists_the_expansions_with_a_fixed_height():
    g = quarters_game()
    plain = Game(GameConfig(3), seed=1)
    assert render_image(g, tile_px=32).shape[0] > render_image(plain, tile_px=32).shape[0]
    codec = ActionCodec(g.rules)
    rng = np.random.default_rng(0)
    heights = set()
    while not g.over:  # the panel's height never depends on the state
        heights.add(render_image(g, tile_px=8, view=(-20, 20, -20, 20)).shape[0])
        for _ in range(25):
            if g.over:
                break
            g.apply(codec.decode(g, pick(g, codec, codec.mask(g), rng)))
    assert len(heights) == 1


def test_picture_shows_the_darmstadtium():
    g = new_game(2, expansions=("base", "darmstadt"), draw_order=["DA-darmstadtium"])
    g.apply("tile 0,-1 r2")
    a = render_image(g, tile_px=64, panel=False)
    left, top, right, bottom = cell_box(g, 0, -1, 64)
    cell = a[top:bottom, left:right].reshape(-1, 3)
    assert (cell == np.array(ELEMENT_COLOUR, dtype=np.uint8)).all(axis=1).sum() > 20


@pytest.mark.parametrize("tile_px", [8, 16, 48])
def test_random_games_with_every_expansion_render(tile_px):
    g = Game(GameConfig(4, ALL), seed=tile_px)
    codec = ActionCodec(g.rules)
    rng = np.random.default_rng(tile_px)
    seed_quarters(g, rng)
    k = 0
    while not g.over:
        if k % 40 == 0 or g.guests:
            text = render_text(g)
            assert "Count on the" in text and "King:" in text and "River:" in text
            a = render_image(g, tile_px=tile_px, highlight_legal=True)
            assert a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3
        g.apply(codec.decode(g, pick(g, codec, codec.mask(g), rng)))
        k += 1
    assert render_image(g, tile_px=tile_px).shape[2] == 3


def test_a_plug_in_draws_a_block_in_the_side_panel():
    from _toy_plugins.panel.draw import COLOUR

    from carc_env.core import Game, GameConfig
    from carc_env.core.expansion import Expansion, register, unregister
    from carc_env.render import render_image

    class PanelPlugin(Expansion):
        KEY = "test_panel"
        REQUIRES = ("base",)

    view = (-1, 1, -1, 1)
    plain = render_image(Game(GameConfig(2), seed=0), tile_px=32, view=view)
    register(PanelPlugin, package="_toy_plugins.panel")
    try:
        img = render_image(Game(GameConfig(2, ("base", "test_panel")), seed=0), tile_px=32, view=view)
    finally:
        unregister("test_panel")
    hits = np.argwhere((img == COLOUR).all(axis=2))
    assert len(hits) == 40 * 30  # the whole block, once
    panel_x = int(np.argmax((img[0] == (40, 45, 55)).all(axis=1)))  # the panel's background starts here
    assert panel_x > 3 * 32 and hits[:, 1].min() > panel_x  # in the side panel, right of the board
    assert img.shape[0] >= plain.shape[0] and not (plain == COLOUR).all(axis=2).any()
