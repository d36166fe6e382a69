"""The SVG renderer: the same board as the picture, as vector shapes with the plug-ins' marks; the env's svg mode."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import carc_env
from carc_env.render import render_svg, tile_document
from carc_env.render.expansions import drawings
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
    (count,) = _by_class(root, "plugin")  # the City of Carcassonne, drawn by its plug-in as vector shapes
    assert count.get("data-plugin") == "count" and len(_by_class(count, "count-quarter")) == 4
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
    assert [e.get("data-plugin") for e in _by_class(root, "plugin")] == ["maps_germany"]  # sea, towns, large cities


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


# ----------------------------------------------------------------------------- the plug-ins' marks as vectors
def _until(expansions, pred, seeds=range(40), steps=400, rules=None):
    """A random game (2 players) of ``expansions`` played until ``pred(game)`` holds."""
    for seed in seeds:
        env = carc_env.raw_env(num_players=2, expansions=expansions, engine="python", rules=rules or {})
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            if env.game.over:
                break
            if pred(env.game):
                return env.game
            mask = env.infos[env.agent_selection]["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    raise AssertionError(f"no random game of {expansions} reached the state")


def _linked(game) -> bool:
    from carc_env.expansions.royal_gateways.rules import GATE_TAGS, linked_cities

    return any(len({p for t, _, _, p in c.gates if t == tag}) >= 2 for c in linked_cities(game) for tag in GATE_TAGS)


def _plugin(root: ET.Element, key: str) -> ET.Element:
    found = [e for e in _by_class(root, "plugin") if e.get("data-plugin") == key]
    assert len(found) == 1, f"no vector group of {key}"
    assert found[0].tag == NS + "g"
    return found[0]


def test_svg_plugin_marks_are_vector_elements_for_each_expansion():
    from carc_env.expansions.count.rules import QUARTERS
    from carc_env.expansions.sagrada_familia.rules import in_force

    # the Count: four quarters, the Count's crown in his quarter, a meeple per player in a quarter
    game = _until(("count",), lambda g: any(any(q) for q in g.ext["count"].quarters))
    root = ET.fromstring(render_svg(game))
    quarters = _by_class(_plugin(root, "count"), "count-quarter")
    assert [q.get("data-quarter") for q in quarters] == list(QUARTERS)
    st = game.ext["count"]
    assert [q.get("data-count") for q in quarters] == ["1" if i == st.count else "0" for i in range(4)]
    assert len(_by_class(quarters[st.count], "count-figure")) == 1
    for q, el in enumerate(quarters):
        shown = sorted(int(m.get("data-player")) for m in _by_class(el, "meeple"))
        assert shown == [p for p, k in enumerate(st.quarters[q]) if k]
    # the map: sea, towns with their names, coats of arms, large-city walls and names, start squares
    game = _until(("maps_germany",), lambda g: len(g.placements) > 5)
    root = ET.fromstring(render_svg(game, panel=False))
    marks = _plugin(root, "maps_germany")
    drawing = next(d for d in drawings(game.rules) if d.key == "maps_germany")
    towns = {e.get("data-name") for e in _by_class(marks, "map-town")}
    assert towns == {n for c, n in drawing.town_names.items() if c not in game.board} and towns
    assert {e.get("data-name") for e in _by_class(marks, "map-city-name")} == {c.name for c in drawing.map.large_cities}
    assert (
        _by_class(marks, "map-sea")
        and _by_class(marks, "map-coats")
        and len(_by_class(marks, "map-start")) == len(drawing.start_cells)
    )
    # Stained Glass: a thief's dark ring on the board, the windows drawn in the panel as vectors
    game = _until(("stained_glass",), lambda g: bool(g.ext["stained_glass"].thieves))
    root = ET.fromstring(render_svg(game))
    rings = _by_class(_plugin(root, "stained_glass"), "glass-thief")
    thieves = game.ext["stained_glass"].thieves
    assert sorted(int(e.get("data-player")) for e in rings) == sorted(thieves.values())
    (block,) = _by_class(root, "panel-block")
    assert block.tag == NS + "g" and len(list(block.iter(NS + "rect"))) >= 4 * 7 * game.num_players
    # the Royal Gateways: a dashed link between the gates of a linked city
    game = _until(("royal_gateways",), _linked)
    root = ET.fromstring(render_svg(game))
    links = _by_class(_plugin(root, "royal_gateways"), "gate-link")
    assert links and all(len(list(e.iter(NS + "polyline"))) >= 1 for e in links)
    # the Sagrada Familia: a frame inside every tile of its city while its rule is in force
    game = _until(("sagrada_familia",), lambda g: g.ext["sagrada_familia"].node >= 0 and in_force(g))
    root = ET.fromstring(render_svg(game))
    frames = {
        (int(e.get("data-x")), int(e.get("data-y")))
        for e in _by_class(_plugin(root, "sagrada_familia"), "sagrada-frame")
    }
    assert frames == set(game.feature_tiles(game.find(game.ext["sagrada_familia"].node)))


def test_svg_has_no_embedded_picture_with_every_expansion():
    combos = [("count", "darmstadt", "king_robber"), ("maps_germany", "shrines"), ("stained_glass", "river2"),
              ("royal_gateways", "sagrada_familia")]  # fmt: skip
    for k, ex in enumerate(combos):
        env = carc_env.raw_env(num_players=3, expansions=ex, engine="python")
        env.reset(seed=k)
        _play(env, 60, seed=k)
        svg = render_svg(env.game, highlight_legal=True)
        root = ET.fromstring(svg)
        assert not list(root.iter(NS + "image")) and "data:image/png" not in svg, ex
        keys = {e.get("data-plugin") for e in _by_class(root, "plugin")}
        assert keys <= set(ex), keys


def test_svg_and_picture_share_the_tile_painter():
    # one painter draws both: the SVG's tile has the polygons the picture's ImageDraw receives
    from PIL import ImageDraw

    from carc_env.render.geometry import tile_geometry
    from carc_env.render.paint import paint_tile

    env = carc_env.raw_env(expansions=("base", "darmstadt"), engine="python")
    env.reset(seed=0)
    calls: list[str] = []

    class Spy:
        def __getattr__(self, name):
            def rec(*a, **k):
                calls.append(name)

            return rec

    for tile in env.game.rules.tiles[:12]:
        g = tile_geometry(tile, 1)
        calls.clear()
        paint_tile(Spy(), g, 64, lambda f: f * 64)
        pen = SvgDraw()
        paint_tile(pen, g, 64, lambda f: f * 64)
        tags = [p.split(" ", 1)[0][1:] for p in pen.parts]
        want = {"rectangle": "rect", "rounded_rectangle": "rect", "polygon": "polygon", "line": "polyline",
                "ellipse": "ellipse", "text": "text"}  # fmt: skip
        assert tags == [want[c] for c in calls]
    assert ImageDraw  # the picture's pen is Pillow's ImageDraw (render.image.draw_tile)


def test_svg_embeds_what_a_plugin_draws_on_the_picture_only():
    # a user's plug-in written for Pillow (its panel block draws on the picture, not with a pen) still shows in
    # the SVG: as an embedded picture, the only case that has one
    from carc_env.core import Game, GameConfig
    from carc_env.core.expansion import Expansion, register, unregister

    class PanelPlugin(Expansion):
        KEY = "test_panel_svg"
        REQUIRES = ("base",)

    register(PanelPlugin, package="_toy_plugins.panel")
    try:
        svg = render_svg(Game(GameConfig(2, ("base", "test_panel_svg")), seed=0), tile_px=32)
    finally:
        unregister("test_panel_svg")
    (block,) = _by_class(ET.fromstring(svg), "panel-block")
    assert block.tag == NS + "image" and block.get("href").startswith("data:image/png;base64,")
    assert (block.get("width"), block.get("height")) == ("40", "30")
