"""Rendering: text board, image drawn from the tile data, PNG/GIF export and the replay script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import carc_env  # noqa: F401  (registers the base game)
from carc_env.core import new_game
from carc_env.core.record import RecordError, save_record, to_record
from carc_env.core.tiles import parse_tile_data
from carc_env.render import (
    cell_box,
    frames_from_record,
    player_colour,
    render_image,
    render_text,
    save_gif,
    save_png,
    tile_image,
)
from carc_env.render.image import CITY_COLOUR, FIELD_COLOUR, RIVER_COLOUR, ROAD_COLOUR, building_roof
from carc_env.render.text import LABEL_W

ROOT = Path(__file__).resolve().parents[2]
ORDER = ["BA-E", "BA-U", "BA-B", "BA-U", "BA-V", "BA-A"]
# P0 closes a 2-tile city (4 points), P1 takes a road, P0 a cloister, P1 a field.
SCRIPT = ["tile 0,-1 r2", "follower c1", "tile 1,0 r0", "follower r1", "tile 0,1 r0", "follower m",
          "tile -1,0 r0", "follower f1"]  # fmt: skip


def scripted_game():
    g = new_game(2, draw_order=ORDER)
    for a in SCRIPT:
        g.apply(a)
    return g


def finished_game():
    g = scripted_game()
    while not g.over:
        g.apply(g.legal_actions()[0])
    return g


def board_lines(text: str) -> list[str]:
    """The board part of render_text's output (after the header's blank line and the x-axis line)."""
    lines = text.splitlines()
    return lines[lines.index("") + 2 :]


# ---------------------------------------------------------------------- text
def test_text_header_has_scores_supply_and_tile():
    g = scripted_game()
    text = render_text(g)
    assert g.scores == [4, 0]
    assert "P0: 4 points, 6 followers in supply" in text
    assert "P1: 0 points, 5 followers in supply" in text
    head = text.splitlines()[0]
    assert "turn 5" in head and "phase tile" in head and "player 0 to move" in head
    assert "drawn BA-V" in head and f"tiles left {g.bag_size}" in head
    assert "\x1b" not in text


def test_text_labels_absolute_coordinates():
    g = scripted_game()
    text = render_text(g)
    lines = text.splitlines()
    xaxis = lines[lines.index("") + 1]
    assert re.findall(r"-?\d+", xaxis) == [str(x) for x in range(-2, 3)]
    ylabels = [int(ln[:LABEL_W]) for ln in board_lines(text) if ln[:LABEL_W].strip()]
    assert ylabels == list(range(-2, 3))


def test_text_one_marker_per_follower():
    g = scripted_game()
    board = "".join(ln[LABEL_W:] for ln in board_lines(render_text(g)))
    per_player = [0, 0]
    for p, *_ in g.follower_positions():
        per_player[p] += 1
    assert per_player == [1, 2]
    assert board.count("0") == 1 and board.count("1") == 2
    assert sum(c.isdigit() for c in board) == len(g.followers)


def test_text_tiles_follow_rotation_and_legal_cells():
    g = scripted_game()
    lines = board_lines(render_text(g))
    # BA-E turned twice at (0,-1): its city faces south, the north side is field.
    col = LABEL_W + 2 * 7  # x = 0 is the third column (x from -2)
    row = 3 * 1  # y = -1 is the second row (y from -2)
    assert lines[row][col : col + 7] == "+.....+"
    assert lines[row + 2][col : col + 7] == "+#####+"
    # start tile: city north, straight road west-east through the centre
    assert lines[3 * 2][col : col + 7] == "+#####+"
    assert lines[3 * 2 + 1][col : col + 7] == "-------"
    n_legal = int((g.frontier()[2] > 0).sum())
    assert "".join(lines).count("?") == n_legal
    assert "?" not in "".join(board_lines(render_text(g, show_legal=False)))


def test_text_game_over():
    g = finished_game()
    text = render_text(g)
    assert "game over" in text.splitlines()[0]
    assert sum(c.isdigit() for c in "".join(ln[LABEL_W:] for ln in board_lines(text))) == 0


# --------------------------------------------------------------------- image
def test_image_is_uint8_rgb_and_grows_with_the_board():
    g = new_game(2, draw_order=ORDER)
    a0, b0 = render_image(g, tile_px=32), render_image(g, tile_px=32, panel=False)
    assert a0.dtype == np.uint8 and a0.ndim == 3 and a0.shape[2] == 3
    g.apply("tile 0,-1 r2")  # one row more
    g.apply("pass")
    g.apply("tile 1,0 r0")  # one column more
    a1, b1 = render_image(g, tile_px=32), render_image(g, tile_px=32, panel=False)
    assert a1.shape[1] == a0.shape[1] + 32 and a1.shape[0] >= a0.shape[0]  # the panel may be the taller part
    assert b1.shape[1] == b0.shape[1] + 32 and b1.shape[0] == b0.shape[0] + 32
    a2 = render_image(g, tile_px=64)
    assert a2.shape[0] > a1.shape[0] and a2.shape[1] > a1.shape[1]


def _has_colour(a: np.ndarray, colour) -> bool:
    return bool((a.reshape(-1, 3) == np.array(colour, dtype=np.uint8)).all(axis=1).any())


@pytest.mark.parametrize("tile_px", [32, 64])
def test_image_shows_followers_in_player_colours(tile_px):
    before = render_image(new_game(2, draw_order=ORDER), tile_px=tile_px, panel=False)
    g = scripted_game()
    after = render_image(g, tile_px=tile_px, panel=False)
    for p in (0, 1):
        assert not _has_colour(before, player_colour(p))
        assert _has_colour(after, player_colour(p)), f"player {p}'s colour is missing"
    # each follower's colour is on its own tile
    for p, x, y, _ in g.follower_positions():
        left, top, right, bottom = cell_box(g, x, y, tile_px)
        assert _has_colour(after[top - tile_px // 8 : bottom, left:right], player_colour(p))


def test_image_city_and_road_pixels_of_known_tiles():
    g = new_game(2, draw_order=ORDER)
    g.apply("tile 0,-1 r2")  # BA-E, city turned to the south
    g.apply("pass")
    g.apply("tile 1,0 r0")  # BA-U, road west-east
    g.apply("pass")
    tp = 64
    a = render_image(g, tile_px=tp)

    def px(x, y, fx, fy):
        left, top, _, _ = cell_box(g, x, y, tp)
        return tuple(int(v) for v in a[top + int(fy * tp), left + int(fx * tp)])

    # start tile BA-D at (0,0): city on the north edge, road through the centre
    assert px(0, 0, 0.5, 0.08) == CITY_COLOUR
    assert px(0, 0, 0.5, 0.5) == ROAD_COLOUR
    assert px(0, 0, 0.5, 0.85) == FIELD_COLOUR
    # BA-E turned twice: city on its south edge, field on its north edge
    assert px(0, -1, 0.5, 0.92) == CITY_COLOUR
    assert px(0, -1, 0.5, 0.1) == FIELD_COLOUR
    # BA-U: road centre and road arm
    assert px(1, 0, 0.5, 0.5) == ROAD_COLOUR
    assert px(1, 0, 0.9, 0.5) == ROAD_COLOUR
    assert px(1, 0, 0.5, 0.2) == FIELD_COLOUR


def test_image_highlights_and_last_tile_outline():
    g = scripted_game()
    plain = render_image(g, tile_px=48)
    lit = render_image(g, tile_px=48, highlight_legal=True)
    assert plain.shape == lit.shape
    fx, fy, m = g.frontier()
    x, y = int(fx[m > 0][0]), int(fy[m > 0][0])
    left, top, right, bottom = cell_box(g, x, y, 48)
    assert not np.array_equal(plain[top:bottom, left:right], lit[top:bottom, left:right])
    lx, ly = g.placements[-1][:2]
    left, top, _, _ = cell_box(g, lx, ly, 48)
    assert tuple(plain[top + 24, left]) == (255, 255, 255)


def test_full_game_renders():
    g = finished_game()
    a = render_image(g, tile_px=24)
    assert a.dtype == np.uint8 and a.shape[2] == 3


SYNTHETIC = {
    "set": "synthetic",
    "buildings": ["shrine", "church"],
    "tile": [
        {"id": "SY-R", "count": 1, "edges": "IFIF", "features": [{"id": "i1", "kind": "river", "edges": ["N", "S"]}],
         "fields": [{"halves": ["NL", "SR", "WL", "WR"]}, {"halves": ["NR", "EL", "ER", "SL"]}]},
        {"id": "SY-S", "count": 1, "edges": "FFRF",
         "features": [{"id": "r1", "kind": "road", "edges": ["S"]}, {"id": "s", "kind": "shrine"}],
         "fields": [{"halves": ["NL", "NR", "EL", "ER", "SL", "SR", "WL", "WR"]}]},
        {"id": "SY-C", "count": 1, "edges": "CRCR",
         "features": [{"id": "c1", "kind": "city", "edges": ["N"]}, {"id": "c2", "kind": "city", "edges": ["S"]},
                      {"id": "r1", "kind": "road", "edges": ["E", "W"]}],
         "fields": [{"halves": ["EL", "WR"], "cities": ["c1"]}, {"halves": ["ER", "WL"], "cities": ["c2"]}]},
    ],
}  # fmt: skip


def test_expansion_like_tiles_are_drawn_from_their_data():
    tiles = {t.id: t for t in parse_tile_data(SYNTHETIC, "synthetic").tiles}
    river = np.array(tile_image(tiles["SY-R"], 0, 64))
    assert tuple(river[4, 32]) == RIVER_COLOUR and tuple(river[60, 32]) == RIVER_COLOUR
    turned = np.array(tile_image(tiles["SY-R"], 1, 64))
    assert tuple(turned[32, 60]) == RIVER_COLOUR and tuple(turned[4, 32]) == FIELD_COLOUR
    shrine = np.array(tile_image(tiles["SY-S"], 0, 64))
    assert _has_colour(shrine, building_roof("shrine"))
    two = np.array(tile_image(tiles["SY-C"], 0, 64))
    assert tuple(two[5, 32]) == CITY_COLOUR and tuple(two[58, 32]) == CITY_COLOUR
    assert tuple(two[32, 32]) == ROAD_COLOUR


# -------------------------------------------------------------------- export
def test_save_png_and_gif(tmp_path):
    g = scripted_game()
    a = render_image(g, tile_px=32)
    save_png(a, tmp_path / "b.png")
    with Image.open(tmp_path / "b.png") as im:
        assert im.size == (a.shape[1], a.shape[0])
        assert np.array_equal(np.array(im.convert("RGB")), a)
    save_gif([a, render_image(scripted_game(), tile_px=32, highlight_legal=True)], tmp_path / "a.gif", duration_ms=100)
    with Image.open(tmp_path / "a.gif") as im:
        assert im.n_frames == 2
    with pytest.raises(ValueError):
        save_png(a.astype(np.float32), tmp_path / "x.png")


def test_frames_from_record():
    g = finished_game()
    rec = to_record(g)
    frames = frames_from_record(rec, tile_px=16)
    assert len(frames) == len(g.placements)  # the start position + one per placed tile
    assert len({f.shape for f in frames}) == 1
    every2 = frames_from_record(rec, every=2, tile_px=16)
    assert len(every2) == (len(frames) + 1) // 2 + ((len(frames) - 1) % 2)
    assert np.array_equal(every2[-1], frames[-1])
    bad = dict(rec, actions=rec["actions"][:2] + ["tile 9,9 r0"])
    with pytest.raises(RecordError):
        frames_from_record(bad)


def _run_replay(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "replay.py"), *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def test_replay_script_round_trip(tmp_path):
    g = finished_game()
    rec = tmp_path / "game.json"
    save_record(g, rec)
    png, gif = tmp_path / "final.png", tmp_path / "game.gif"
    res = _run_replay(str(rec), "--png", str(png), "--gif", str(gif), "--tile-px", "24", "--every", "1")
    assert res.returncode == 0, res.stderr
    assert "frame" in res.stdout
    with Image.open(png) as im:
        assert im.format == "PNG" and im.mode == "RGB"
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == len(g.placements)


def test_replay_script_rejects_bad_records(tmp_path):
    res = _run_replay(str(tmp_path / "missing.json"), "--png", str(tmp_path / "x.png"))
    assert res.returncode == 2 and "no such record file" in res.stderr
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    res = _run_replay(str(corrupt), "--png", str(tmp_path / "x.png"))
    assert res.returncode == 2 and "not valid JSON" in res.stderr
    wrong = tmp_path / "wrong.json"
    data = to_record(finished_game())
    data["actions"][1] = "tile 40,40 r0"
    wrong.write_text(json.dumps(data))
    res = _run_replay(str(wrong), "--gif", str(tmp_path / "x.gif"))
    assert res.returncode == 2 and "does not replay" in res.stderr
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.gif").exists()
