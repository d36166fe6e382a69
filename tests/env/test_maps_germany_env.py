"""Maps - Germany in the environments: the window is the board, the map planes, the drawing.

PettingZoo's api_test, seed_test and render_test, masks against the core and
observations inside their spaces run with ``maps_germany`` alone and with every
expansion it plays with in tests/env/test_env_expansions.py (SHOWCASE); here are the
checks that belong to a printed board.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from carc_env.core import ConfigError, Game, GameConfig, PointsAwarded, ScoreItem
from carc_env.env.aec import env as make_env
from carc_env.env.aec import raw_env
from carc_env.env.vector import CarcassonneVectorEnv
from carc_env.expansions.maps_germany.mapfile import load_map_file
from carc_env.render import render_image, render_text

MAP = ("base", "maps_germany")
GERMANY = load_map_file("germany")


def channels(e, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    obs = e.observe(e.agent_selection)
    return {n: obs["board"][e.channel_names.index(n)] for n in names}


def test_the_window_is_the_whole_board_at_a_fixed_origin():
    e = raw_env(num_players=3, expansions=MAP)
    codec = e.match.codec
    assert (codec.rows, codec.cols) == (19, 15) and codec.origin == (-1, -1)
    assert e.action_space("player_0").n == 4 * 19 * 15 + e.match.rules.max_segments + 1
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    while not e.game.over:
        view = codec.view(e.game)
        assert (view.x0, view.y0) == (-1, -1) and view.outside == 0 and view.inside
        if e.game.phase == "tile":
            cells = {(int(x), int(y)) for x, y, _ in e.game.legal_tile_placements()}
            assert cells <= GERMANY.squares
            legal = view.legal_placements(19, 15)
            assert {tuple(int(v) for v in row) for row in legal} == {
                tuple(int(v) for v in row) for row in e.game.legal_tile_placements()
            }
        legal_idx = np.flatnonzero(view.mask)
        e.step(int(legal_idx[rng.integers(len(legal_idx))]))


def test_a_window_smaller_than_the_board_is_refused_and_a_larger_one_centres_it():
    with pytest.raises(ConfigError, match="smaller than the printed board 'germany' \\(19 x 15\\)"):
        raw_env(expansions=MAP, window=(27, 12))
    e = raw_env(expansions=MAP, window=(21, 21))
    assert e.match.codec.origin == (-4, -2)  # 3 columns and 1 row of void on each side
    e.reset(seed=0)
    assert e.observation_space("player_0").contains(e.observe("player_0"))
    assert raw_env().match.codec.origin is None and (raw_env().match.codec.rows, raw_env().match.codec.cols) == (27, 27)


def test_the_map_planes():
    e = raw_env(expansions=MAP)
    e.reset(seed=0)
    p = channels(e, ("map_playable", "map_void", "map_large_city", "map_town", "map_border_feature",
                     "map_coats_of_arms", "tile"))  # fmt: skip
    assert p["map_playable"].sum() == 135 and (p["map_void"] == 1).sum() == 19 * 15 - 159
    assert (p["map_large_city"] == 1).sum() == 24 and (p["map_large_city"] == 2).sum() == 0
    assert (p["map_town"] == 1).sum() == 11 and (p["map_town"] == 2).sum() == 3
    assert (p["map_border_feature"] == 1).sum() == 7 and (p["map_border_feature"] == 2).sum() == 2
    assert p["map_coats_of_arms"].sum() == 24 + 11
    assert p["map_border_feature"][-1 + 1, 4 + 1] == 1  # Denmark's road at (4,-1): row y+1, column x+1
    assert p["map_coats_of_arms"][-1 + 1, 4 + 1] == 2
    assert p["tile"][5 + 1, 10 + 1] == 1  # Berlin's printed square is a tile for the core's planes
    assert not (p["map_playable"] & p["map_void"]).any()


FIXED = {"start_orientation": "fixed"}
"""Scenarios worked out with Rostock's start tile unrotated (BA-D r0, field south): the default
before issue 23 turned it that way; the default now turns its field to the Baltic (r2)."""


def test_a_large_city_plane_shows_its_connection():
    e = raw_env(expansions=MAP, rules={"maps_germany": FIXED})
    e.reset(seed=0, options={"draw_order": ["BA-U", "BA-B", "BA-B", "BA-B", "BA-E", "BA-E"]})
    for text in ["tile 8,3 r0", "pass", "tile 8,4 r0", "pass", "tile 8,5 r0", "pass", "tile 9,5 r1", "pass"]:
        e.step(e.action_from_text(text))
    plane = channels(e, ("map_large_city",))["map_large_city"]
    assert plane[5 + 1, 10 + 1] == 2 and plane[3 + 1, 5 + 1] == 1  # Berlin connected, Hamburg not
    assert e.action_to_text(e.action_from_text("tile 11,7 r0")) == "tile 11,7 r0"  # now legal


def test_nine_followers_fit_the_observation_space():
    e = raw_env(num_players=2, expansions=MAP)
    e.reset(seed=1)
    space = e.observation_space("player_0")
    obs = e.observe("player_0")
    assert space.contains(obs)
    assert obs["globals"][e.global_names.index("followers_in_hand_p0")] == 1.0  # 9 of 9


def test_pettingzoo_tests_with_town_variants_and_three_start_squares():
    rules = {"maps_germany": {"town_extra_turn": True, "town_penalty": True, "town_road_bonus": True,
                              "start_squares": "Erfurt,Rostock,Stuttgart", "start_orientation": "random"}}  # fmt: skip
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(observation|action_mask|Action mask|seed|reset).*")
        api_test(make_env(num_players=3, expansions=MAP, rules=rules), num_cycles=80)
        seed_test(functools.partial(make_env, num_players=2, expansions=MAP, rules=rules), num_cycles=40)


def test_the_extra_turn_of_a_town_keeps_the_agent():
    e = raw_env(expansions=MAP, rules={"maps_germany": {"town_extra_turn": True, **FIXED}})
    e.reset(seed=0, options={"draw_order": ["BA-U", "BA-B", "BA-B", "BA-B", "BA-B", "BA-B"]})
    for text in ["tile 8,3 r0", "pass", "tile 8,4 r0", "pass", "tile 8,5 r0", "pass"]:
        e.step(e.action_from_text(text))
    assert e.agent_selection == "player_1"
    e.step(e.action_from_text("tile 8,6 r0"))  # Magdeburg, a town
    e.step(e.action_from_text("pass"))
    # the player decides (town_extra_turn_optional): a 2-entry range, both legal, same agent
    rng = e.match.codec.ranges["map_extra_turn"]
    assert rng.size == 2 and e.agent_selection == "player_1" and e.game.phase == "map_extra_turn"
    mask = e.observe("player_1")["action_mask"]
    assert mask.sum() == 2 and mask[rng.start] == 1 and mask[rng.start + 1] == 1
    assert e.action_from_text("extra_turn") == rng.start and e.action_from_text("pass") == rng.start + 1
    e.step(e.action_from_text("extra_turn"))
    assert e.agent_selection == "player_1" and e.game.phase == "tile"


def test_the_vector_env_plays_on_the_map():
    venv = CarcassonneVectorEnv(2, seed=5, num_players=2, expansions=MAP)
    obs, _ = venv.reset()
    assert obs["board"].shape[2:] == (19, 15)
    rng = np.random.default_rng(0)
    for _ in range(300):
        keys = rng.random(obs["action_mask"].shape) * obs["action_mask"]
        obs, *_ = venv.step(keys.argmax(axis=1))


def test_the_text_board_and_the_picture_draw_the_map():
    e = raw_env(expansions=MAP, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert "Map: germany (approximation), 0/6 large cities connected" in text
    for word in ("DENMARK", "##BERLIN##", "MUENCHEN", "~ ~ ~", ": : :", "Kiel"):
        assert word in text, word
    lines = text.splitlines()
    board = lines[lines.index(next(ln for ln in lines if ln.lstrip().startswith("-1 "))) - 1 :]
    assert "?" in "".join(board)  # legal cells still show over the map's background
    g = e.game
    img = render_image(g, tile_px=32)
    x0, y0 = min(p[0] for p in g.placements) - 1, min(p[1] for p in g.placements) - 1

    def pixel(x: int, y: int) -> tuple[int, ...]:
        from carc_env.render.image import cell_box

        left, top, right, bottom = cell_box(g, x, y, 32)
        return tuple(int(v) for v in img[(top + bottom) // 2, (left + right) // 2])

    assert pixel(0, 0) == (96, 146, 196)  # the North Sea
    assert pixel(12, 3) == (170, 165, 150)  # Poland, no square
    assert pixel(7, 7) not in ((96, 146, 196), (170, 165, 150))  # an empty square of Germany
    assert x0 == -2 and y0 == -2
    assert render_text(g).count("T      ") >= 8  # the empty towns


# --------------------------------------------------------------- the engines (#17)


@pytest.mark.parametrize("expansions", [MAP, ("base", "king_robber", "maps_germany")])
def test_the_map_runs_on_the_compiled_engine(expansions):
    """Issue 30: engine='auto' (the default) picks the compiled engine for the map, in every env, and the
    Python engine still plays it when asked."""
    from carc_env.env.gym_env import CarcassonneGymEnv

    raw = raw_env(expansions=expansions)
    assert (raw.engine, raw.engine_reason) == ("numba", "")
    venv = CarcassonneVectorEnv(2, expansions=expansions)
    assert (venv.engine, venv.engine_reason) == ("numba", "")
    assert CarcassonneGymEnv(expansions=expansions).aec.engine == "numba"
    raw.reset(seed=3)
    raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))  # and it plays
    assert raw.match.game.history
    py = raw_env(engine="python", expansions=expansions)
    assert py.engine == "python"


def test_the_board_layout_hooks_keep_a_plugin_off_the_compiled_engine(monkeypatch):
    """Were the map's fast part to reproduce only its ordinary game hooks, the hooks that make a printed
    board (board_layout, tile_counts, setup_from_bag, followers_per_player) would keep it on the Python
    engine; with every hook claimed it is covered (the engine plays any printed board)."""
    from carc_env.core.config import GameConfig, ruleset
    from carc_env.fast import tables
    from carc_env.fast.support import FastSupport

    real = tables._support
    ordinary = frozenset({"setup", "score_items", "after_placement", "next_player"})
    fake = {"maps_germany": FastSupport(hooks=ordinary)}
    monkeypatch.setattr(tables, "_support", lambda key: fake.get(key) or real(key))
    rules = ruleset(GameConfig(2, MAP))
    why = tables.rules_coverage(rules)
    assert why is not None and why.startswith("expansion 'maps_germany' overrides hook(s) ")
    for hook in ("board_layout", "tile_counts", "setup_from_bag", "followers_per_player"):
        assert repr(hook) in why, hook
    fake.clear()
    assert tables.rules_coverage(rules) is None


def test_the_map_picture_shows_coats_abroad_gates_towns_and_keeps_labels_off_the_shields():
    """Issue 23: shields on the features abroad (Denmark 2, France 2), a gate at each open edge of a
    large city, a town drawn as houses (not a cloister's red roof), every large-city shield visible."""
    from carc_env.core import Game, GameConfig
    from carc_env.expansions.maps_germany import draw
    from carc_env.render.image import cell_box

    g = Game(GameConfig(2, MAP), seed=0)
    tp = 48
    img = render_image(g, tile_px=tp)

    def px(x: float, y: float) -> tuple[int, ...]:
        return tuple(int(v) for v in img[int(y), int(x)])[:3]

    germany_map = g.rules.by_key["maps_germany"].map
    step = tp * 0.18
    for a in germany_map.abroad:  # n shields along the bottom of the piece, centred
        left, top, _, _ = cell_box(g, *a.cell, tp)
        centres = [left + tp / 2 - step * (a.coats_of_arms - 1) / 2 + step * i for i in range(a.coats_of_arms)]
        assert [px(cx, top + tp * 0.8) for cx in centres] == [draw.SHIELD] * a.coats_of_arms, a.name
    for city in germany_map.large_cities:  # the name along the top of the block covers no shield
        for x, y in city.cells:
            left, top, _, _ = cell_box(g, x, y, tp)
            assert px(left + tp / 2, top + tp * 0.8) == draw.SHIELD, (city.name, x, y)
    # Berlin: gates west of (10,5) and south of (11,6); a closed side is wall all along
    left, top, _, _ = cell_box(g, 10, 5, tp)
    assert px(left, top + tp / 2) == draw.GATE and px(left, top + tp / 6) == draw.WALL
    assert px(left + tp / 2, top) == draw.WALL  # north of (10,5): closed
    left, top, _, _ = cell_box(g, 11, 6, tp)
    assert px(left + tp / 2, top + tp) == draw.GATE
    # Bremen (4,4), an empty town: slate-blue roof and light walls, not a cloister's red roof
    bremen = next(t.cell for t in germany_map.towns if t.name == "Bremen")
    left, top, _, _ = cell_box(g, *bremen, tp)
    cx, eaves = left + tp * 0.63, top + tp * 0.30
    assert px(cx, eaves - tp * 0.04) == draw.TOWN_ROOF and px(cx, top + tp * 0.42) == draw.TOWN_WALLS


def test_the_text_board_writes_whole_country_names_and_their_coats_of_arms():
    """Issue 23: "NETHERL" and "LUXEMBO" were cut; now a long name is split over two rows with a
    hyphen, on the rows that do not lead into Germany, and ``*`` per coat of arms in a corner."""
    from carc_env.core import Game, GameConfig
    from carc_env.expansions.maps_germany.draw import Drawing, _name_lines

    g = Game(GameConfig(2, MAP), seed=0)
    blocks: dict = {}
    Drawing(g.rules).draw_text(g, blocks)
    rows = {a.name: ["".join(r) for r in blocks[a.cell]] for a in g.rules.by_key["maps_germany"].map.abroad}
    assert rows["Netherlands"][0] == "NETHER-" and "LANDS" in rows["Netherlands"][2]  # Germany east
    assert "LUXEM-" in rows["Luxembourg"][0] and "BOURG" in rows["Luxembourg"][2]
    assert "SWIT-" in rows["Switzerland"][1] and "ZERLAND" in rows["Switzerland"][2]  # Germany is north
    assert "DENMARK" in rows["Denmark"][0] and rows["Denmark"][2].startswith("**")  # 2 coats, Germany south
    assert "FRANCE" in rows["France"][0] and rows["France"][1].startswith("**")
    assert rows["Poland"][1].endswith("*")  # Germany west of Poland's piece: the east end
    for name, lines in rows.items():
        parts = _name_lines(name.upper())
        joined = parts[0] if len(parts) == 1 else parts[0][:-1] + parts[1]
        assert joined == name.upper() and all(any(p in ln for ln in lines) for p in parts), name
    assert _name_lines("Regensburg") == ["Regens-", "burg"] and _name_lines("Kiel") == ["Kiel"]


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_a_city_closed_at_setup_counts_for_the_king_on_both_engines(engine):
    """docs/rules/maps_germany.md: Rostock's start city, closed by the Baltic at setup, is a completed city on
    the board, so the King's holder scores it at the end; it gives nobody the King.  BA-U goes on Stuttgart,
    P0 lays BA-U east of Rostock, P1 closes a one-tile city against the sea at (9,1) with a knight (2 points)
    and takes the King (the first city a player completes); the bag is empty: the King scores 2 completed
    cities (Rostock's and P1's), so 0 - 4."""
    e = raw_env(expansions=(*MAP, "king_robber"), rules={"maps_germany": FIXED}, engine=engine)
    e.reset(seed=0, options={"draw_order": ["BA-U", "BA-U", "BA-E"]})
    assert e.unwrapped.match.scores == [0, 0]
    for text in ["tile 9,2 r0", "pass", "tile 9,1 r0", "follower c1"]:
        e.step(e.action_from_text(text))
    assert e.unwrapped.match.over and e.unwrapped.match.scores == [0, 4]
    # the King's award, itemised (the reference engine's events)
    g = Game(GameConfig(2, (*MAP, "king_robber"), {"maps_germany": FIXED}), seed=0, draw_order=["BA-U", "BA-U", "BA-E"])
    g.apply(g.parse_action("tile 9,2 r0"))
    g.apply(g.parse_action("pass"))
    g.apply(g.parse_action("tile 9,1 r0"))
    king = [ev for ev in g.apply(g.parse_action("follower c1")) if isinstance(ev, PointsAwarded)]
    assert [(ev.player, ev.items) for ev in king] == [(1, (ScoreItem("king", "2 completed cities x 1", 2),))]
