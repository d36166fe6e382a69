"""The SVG renderer: the same board as the picture, as vector shapes with the plug-ins' marks; the env's svg mode."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import carc_env
from carc_env.render import render_svg, tile_document
from carc_env.render.svg import SvgDraw, svg_layout

NS = "{http://www.w3.org/2000/svg}"


def _play(env, k: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(k):
        if env.terminations[env.agent_selection]:
            return
        mask = env.infos[env.agent_selection]["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def _by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def test_svg_board_matches_the_game():
    env = carc_env.raw_env(num_players=3, engine="python")
    env.reset(seed=5)
    _play(env, 40)
    game = env.game
    root = ET.fromstring(render_svg(game, highlight_legal=True))
    assert root.tag == NS + "svg"
    tiles = {(int(e.get("data-x")), int(e.get("data-y"))) for e in _by_class(root, "tile")}
    assert tiles == {(p[0], p[1]) for p in game.placements}
    owners = sorted(int(e.get("data-player")) for e in _by_class(root, "follower"))
    assert owners == sorted(game.followers.values())
    assert len(_by_class(root, "last")) == 1
    if game.phase == "tile":
        fx, fy, masks = game.frontier()
        want = {(x, y): ",".join(str(r) for r in range(4) if m >> r & 1)
                for x, y, m in zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True) if m}  # fmt: skip
        got = {(int(e.get("data-x")), int(e.get("data-y"))): e.get("data-rots") for e in _by_class(root, "legal")}
        assert got == want and got


def test_svg_every_cell_is_a_target_with_its_coordinates():
    env = carc_env.raw_env(engine="python")
    env.reset(seed=1)
    _play(env, 10)
    lay = svg_layout(env.game)
    root = ET.fromstring(render_svg(env.game, panel=False))
    cells = _by_class(root, "cell")
    assert len(cells) == (lay.x1 - lay.x0 + 1) * (lay.y1 - lay.y0 + 1)
    for e in cells:
        x, y = int(e.get("data-x")), int(e.get("data-y"))
        ox, oy = lay.cell_origin(x, y)
        assert float(e.get("x")) == pytest.approx(ox, abs=1) and float(e.get("y")) == pytest.approx(oy, abs=1)
    assert int(root.get("width")) == lay.width  # no panel


def test_svg_draws_the_plugins_marks_and_status():
    env = carc_env.raw_env(num_players=2, expansions=("base", "count", "king_robber"), engine="python")
    env.reset(seed=2)
    svg = render_svg(env.game)
    root = ET.fromstring(svg)
    assert len(_by_class(root, "plugins")) == 1  # the City of Carcassonne, drawn by its plug-in
    texts = " ".join(t.text or "" for t in root.iter(NS + "text"))
    assert "Count on the" in texts and "King: nobody yet" in texts


def test_svg_map_shows_the_whole_printed_board():
    env = carc_env.raw_env(expansions=("base", "maps_germany"), engine="python")
    env.reset(seed=0)
    game = env.game
    lay = svg_layout(game)
    bx0, bx1, by0, by1 = game.rules.layout.bounds
    assert (lay.x0, lay.x1, lay.y0, lay.y1) == (bx0 - 1, bx1 + 1, by0 - 1, by1 + 1)
    root = ET.fromstring(render_svg(game, panel=False))
    assert _by_class(root, "plugins")  # sea, towns, large cities


def test_svg_decorations_come_from_the_plugins_hooks():
    # the church (Darmstadt) has a decorate hook written for ImageDraw: it draws here on SvgDraw
    env = carc_env.raw_env(expansions=("base", "darmstadt"), engine="python")
    env.reset(seed=0)
    rules = env.game.rules
    from carc_env.expansions.darmstadt.draw import CHURCH_ROOF

    church = [t for t in rules.tiles if any(s.building == "church" for s in t.segments)]
    assert church
    doc = tile_document(church[0], 1, 64)
    ET.fromstring(doc)
    assert "rgb({},{},{})".format(*CHURCH_ROOF) in doc
    plain = SvgDraw()
    plain.rectangle([0, 0, 2, 3], fill=(1, 2, 3, 128), outline=(0, 0, 0))
    plain.polygon([(0, 0), (1, 0), (0, 1)], fill=None)
    plain.text((1, 2), "a<b", fill=(9, 9, 9))
    out = plain.svg()
    assert 'width="2" height="3"' in out and 'fill-opacity="0.502"' in out and "a&lt;b" in out and 'fill="none"' in out


def test_env_svg_mode_and_notebook_display():
    e = carc_env.env(render_mode="svg")
    with pytest.raises(RuntimeError):
        e.unwrapped.to_svg()
    assert e.unwrapped._repr_svg_() is None
    e.reset(seed=3)
    out = e.render()
    assert isinstance(out, str) and out.startswith("<svg")
    assert e._repr_svg_() == out == e.unwrapped.to_svg()
    raw = carc_env.raw_env(render_mode="ansi")  # any mode can still give the SVG
    raw.reset(seed=3)
    assert raw.to_svg() == out


def test_svg_bad_arguments_are_named():
    env = carc_env.raw_env(engine="python")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="tile_px"):
        render_svg(env.game, tile_px=4)
    with pytest.raises(ValueError, match="view"):
        render_svg(env.game, view=(2, 1, 0, 0))
