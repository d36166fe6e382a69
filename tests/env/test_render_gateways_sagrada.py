"""What the text board and the picture show of The Royal Gateways and the Sagrada Familia: the gates
(K / Q on their city, crowns), the links between the parts of a linked city, the Sagrada Familia
(S, its towers) and its city, and one status line per gate type and for the Sagrada Familia."""

from __future__ import annotations

import numpy as np
from _helpers import play

from carc_env.core import Game, GameConfig
from carc_env.expansions.royal_gateways.draw import KING_COLOUR
from carc_env.expansions.sagrada_familia.draw import FRAME
from carc_env.render import cell_box, render_image, render_text
from carc_env.render.expansions import status_lines

BOTH = ("base", "royal_gateways", "sagrada_familia")
# The Sagrada Familia at (0,-1) on the start city (P0's knight); the King's Gate caps its east edge;
# RG-king-2 south of the start opens a city to the south and links it; the Queen's Gate stands alone
# at (2,-1); a cap closes the west edge.
ORDER = ["SF-sagrada-familia", "RG-king-1", "RG-king-2", "RG-queen-1", "BA-E", "BA-E", "BA-U"]
MOVES = [
    "tile 0,-1 r0", "follower c1",
    "tile 1,-1 r3", "pass",
    "tile 0,1 r2", "pass",
    "tile 2,-1 r0", "pass",
    "tile -1,-1 r1", "pass",
]  # fmt: skip


def played() -> Game:
    g = Game(GameConfig(2, BOTH), seed=0, draw_order=ORDER)
    play(g, MOVES)
    return g


def test_status_lines_name_the_gates_links_and_the_sagrada_familia_city():
    fresh = Game(GameConfig(2, BOTH), seed=0, draw_order=ORDER)
    assert [s.text for s in status_lines(fresh)] == [
        "King's Gates: none placed",
        "Queen's Gates: none placed",
        "Sagrada Familia: not placed",
    ]
    g = played()
    assert [s.text for s in status_lines(g)] == [
        "King's Gates: (1,-1) + (0,1), linked",
        "Queen's Gates: (2,-1), waiting for the other",
        "Sagrada Familia: city at (0,-1), 5 tiles, 2 open edges: may not be closed",
    ]
    lines = render_text(g).splitlines()
    assert lines[2:5] == [s.text for s in status_lines(g)]


def test_same_city_gates_and_a_removed_sagrada_familia_in_the_status_lines():
    g = Game(GameConfig(2, BOTH), seed=0, draw_order=["BA-R", "RG-king-1", "RG-king-2", "BA-E"])
    play(g, ["tile 0,-1 r2", "follower c1", "tile 1,-1 r3", "pass", "tile -1,-1 r1", "pass"])
    assert status_lines(g)[0].text == "King's Gates: (1,-1) + (-1,-1), same city"
    g = Game(GameConfig(2, BOTH), seed=0, draw_order=["BA-E", "SF-sagrada-familia", "BA-E"])
    play(g, ["tile 0,-1 r2", "pass"])  # the start city is closed: the Sagrada Familia fits nowhere
    assert status_lines(g)[-1].text == "Sagrada Familia: removed (no legal placement)"


def test_text_board_marks_gates_and_the_sagrada_familia_with_their_letters():
    text = render_text(played())
    board = text.splitlines()[text.splitlines().index("") + 2 :]
    assert sum(row.count("K") for row in board) == 2
    assert sum(row.count("Q") for row in board) == 1
    assert sum(row.count("S") for row in board) == 1


def _colour_pixels(img: np.ndarray, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> int:
    x0, y0, x1, y1 = box
    patch = img[y0:y1, x0:x1, :3].astype(int)
    return int((np.abs(patch - np.array(colour)).sum(axis=2) < 30).sum())


def test_picture_draws_the_link_and_frames_the_sagrada_familia_city():
    g = played()
    img = render_image(g, tile_px=64)
    # the dashed link runs from (1,-1) to (0,1) across (0,0)'s east half
    box = cell_box(g, 0, 0, tile_px=64)
    assert _colour_pixels(img, box, KING_COLOUR) > 0
    # without the partner gate there is no link: no gold across (0,0)
    g2 = Game(GameConfig(2, BOTH), seed=0, draw_order=ORDER[:2])
    play(g2, MOVES[:4])
    img2 = render_image(g2, tile_px=64)
    assert _colour_pixels(img2, cell_box(g2, 0, 0, tile_px=64), KING_COLOUR) == 0
    # the Sagrada Familia city's tiles are framed; a tile outside it (the Queen's Gate) is not
    assert _colour_pixels(img, cell_box(g, 0, 1, tile_px=64), FRAME) > 0
    assert _colour_pixels(img, cell_box(g, 2, -1, tile_px=64), FRAME) == 0
