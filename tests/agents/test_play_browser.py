"""The play page in a real browser: Debian's chromium driven by Playwright, by clicks only.

Needs ``chromium`` (``apt-get install -y chromium``; Playwright's own browser downloads are never
used) and the Python package ``playwright`` (extra [dev]).  Outside CI the tests skip when either
is missing; with ``CI=true`` a missing browser fails them (``.ci/run`` installs chromium).

Screenshots go to ``$CARC_PLAY_SCREENSHOTS`` (default: a temporary directory); the ones in
docs/img/play_*.png were taken by these tests.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def _need_browser() -> None:
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append('the Python package playwright (pip install -c constraints.txt -e ".[dev]")')
    if not Path(CHROMIUM).is_file():
        missing.append("chromium (apt-get install -y chromium)")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        missing.append('starlette and uvicorn (pip install -c constraints.txt -e ".[play]")')
    if missing:
        msg = "the browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true: a missing browser is a failure, not a skip)")
        pytest.skip(msg)


@pytest.fixture(scope="module")
def server():
    _need_browser()
    import uvicorn

    from agents.play.app import create_app
    from agents.pretrained import available, load

    names = available()
    app = create_app(hints=[load(n) for n in names], pretrained=names)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    th = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    t0 = time.time()
    while not srv.started:
        assert time.time() - t0 < 60, "the play server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/", app
    srv.should_exit = True
    th.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = Path(os.environ.get("CARC_PLAY_SCREENSHOTS") or tmp_path_factory.mktemp("play_screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def page(browser, server):
    pg = browser.new_page(viewport={"width": 1500, "height": 900})
    pg.set_default_timeout(120_000)  # a loaded machine: the server may take seconds for a move
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server[0])
    pg.wait_for_selector(".seat .spec")
    yield pg
    pg.close()
    assert not errors, errors  # no script error in the page


def _start(pg, seats, expansions=(), seed=7, delay=0):
    n = len(seats)
    pg.select_option("#nplayers", str(n))
    specs = pg.locator(".seat .spec")
    for i, s in enumerate(seats):
        specs.nth(i).fill(s)
    for e in expansions:
        pg.check(f'.exp[value="{e}"]')
    pg.fill("#seed", str(seed))
    pg.fill("#delay", str(delay))
    pg.click("#start")
    pg.wait_for_function("S && S.id")


def _wait_human(pg):
    pg.wait_for_function("S && !busy && (S.over || !deciderIsAgent())", timeout=120_000)


def _click_cell(pg, loc):
    bb = loc.bounding_box()
    x, y = bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2
    pg.mouse.click(x, y)
    return x, y


def _human_decision(pg, rng, spot_chance=0.4) -> str:
    """One decision by clicks: a tile (click a fitting cell, click it again), a follower spot, an expansion
    choice or pass.  Returns what was clicked."""
    n0 = pg.evaluate("S.n")
    phase = pg.evaluate("S.phase")
    if phase == "tile":
        cells = pg.locator("#boardg .cell.legal.fits")
        k = cells.count()
        assert k, "no highlighted cell for the drawn tile"
        x, y = _click_cell(pg, cells.nth(int(rng.integers(k))))
        pg.wait_for_selector("#overlay .pending", state="attached")
        if rng.random() < 0.5:
            pg.click("#rotr")  # rotate among the rotations that fit there
        pg.mouse.click(x, y)
        what = "tile"
    elif pg.locator("#overlay .spot").count() and rng.random() < spot_chance:
        spots = pg.locator("#overlay .spot")
        _click_cell(pg, spots.nth(int(rng.integers(spots.count()))))
        what = "spot"
    elif pg.locator("#choices .choice").count():
        pg.locator("#choices .choice").first.click()
        what = "choice"
    else:
        pg.click("#pass")
        what = "pass"
    pg.wait_for_function(f"S.n > {n0} || !document.getElementById('error').hidden")
    assert pg.locator("#error").is_hidden(), pg.inner_text("#error")
    return what


def _place_by_clicks(pg, x: int, y: int, r: int) -> None:
    """Place the drawn tile at cell (x, y) turned r by clicks: the cell, the rotate button, the cell again."""
    n0 = pg.evaluate("S.n")
    cell = pg.locator(f'#boardg .cell.legal[data-x="{x}"][data-y="{y}"]')
    cx, cy = _click_cell(pg, cell)
    pg.wait_for_selector("#overlay .pending", state="attached")
    for _ in range(4):
        if pg.evaluate("rot") == r:
            break
        pg.click("#rotr")
    assert pg.evaluate("rot") == r
    pg.mouse.click(cx, cy)
    pg.wait_for_function(f"S.n > {n0} || !document.getElementById('error').hidden")
    assert pg.locator("#error").is_hidden(), pg.inner_text("#error")


def _expansion_phase_placement(game) -> tuple[int, int, int] | None:
    """A legal placement of the drawn tile after which (following a pass) an expansion's phase comes."""
    fx, fy, masks = game.frontier()
    for x, y, m in zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True):
        for r in range(4):
            if m >> r & 1:
                g = game.clone()
                g.apply(f"tile {x},{y} r{r}")
                if not g.over and g.phase == "follower":
                    g.apply("pass")
                if not g.over and g.phase not in ("tile", "follower"):
                    return x, y, r
    return None


def _server_game(server, pg):
    return server[1].state.games[pg.evaluate("S.id")]


def test_whole_game_against_random_by_clicks(page, server, shots):
    pg = page
    _start(pg, ["human", "random"], seed=7)
    rng = np.random.default_rng(0)
    clicked = {"tile": 0, "spot": 0, "pass": 0, "choice": 0}
    for i in range(400):
        _wait_human(pg)
        if pg.evaluate("S.over"):
            break
        clicked[_human_decision(pg, rng)] += 1
        if i == 40:
            pg.screenshot(path=shots / "play_game.png")
    assert pg.evaluate("S.over")
    game = _server_game(server, pg).env.game
    # every other tile of the game was placed by a click (the start tile is placed by the rules)
    assert game.over and clicked["tile"] == len(game.placements) // 2
    assert clicked["spot"] > 0 and clicked["pass"] > 0
    final = pg.locator("#final")
    final.wait_for()
    total = [int(t) for t in final.locator("tr").last.locator("td").all_inner_texts()[1:]]
    assert total == game.scores
    shown = [int(t) for t in pg.locator("#players .score").all_inner_texts()]
    assert shown == game.scores
    assert pg.locator("#log li").count() > 0
    pg.screenshot(path=shots / "play_game_over.png")
    # same deck, seats swapped
    old = pg.evaluate("S.id")
    pg.click("#swap")
    pg.wait_for_function(f"S.id !== {json.dumps(old)}")
    assert pg.locator(".seat .spec").count() == 2
    assert [s["spec"] for s in pg.evaluate("S.seats")] == ["random", "human"]


def test_expansion_game_by_clicks(page, server, shots):
    pg = page
    _start(pg, ["human", "human"], ("count", "king_robber", "darmstadt", "royal_gateways"), seed=4)
    rng = np.random.default_rng(1)
    clicked = {"tile": 0, "spot": 0, "pass": 0, "choice": 0}
    sess = _server_game(server, pg)
    for _ in range(300):
        _wait_human(pg)
        if pg.evaluate("S.over") or clicked["choice"] >= 2:
            break
        # the test picks, with the server's game as an oracle, a placement that brings an expansion's phase
        # (the Count's), and plays it by clicks
        target = _expansion_phase_placement(sess.env.game) if pg.evaluate("S.phase") == "tile" else None
        if target is not None:
            _place_by_clicks(pg, *target)
            if pg.evaluate("S.phase") == "follower":
                pg.click("#pass")
                pg.wait_for_function("S.phase !== 'follower'")
            _wait_human(pg)
            assert pg.locator("#choices .choice").count() > 0 and pg.locator("#pass").count() == 1
            assert pg.evaluate("S.phase") not in ("tile", "follower")
        clicked[_human_decision(pg, rng)] += 1
    assert clicked["choice"] > 0, clicked  # an expansion phase was decided in the page (the Count's)
    game = _server_game(server, pg).env.game
    assert pg.locator('#boardg g.plugin[data-plugin="count"] .count-quarter').count() == 4  # the City, as vectors
    assert "Count on the" in pg.inner_text("#status")
    assert [int(t) for t in pg.locator("#players .score").all_inner_texts()] == game.scores
    pg.screenshot(path=shots / "play_expansions.png")


def test_map_game_by_clicks(page, server, shots):
    pg = page
    _start(pg, ["human", "greedy"], ("maps_germany",), seed=5)
    rng = np.random.default_rng(3)
    for _ in range(30):
        _wait_human(pg)
        _human_decision(pg, rng)
    _wait_human(pg)
    game = _server_game(server, pg).env.game
    assert len(game.placements) > 25
    assert "Map: germany" in pg.inner_text("#status")
    assert pg.locator('#boardg g.plugin[data-plugin="maps_germany"] .map-town').count() > 0
    assert pg.locator("#boardg image").count() == 0  # no embedded picture: the map is vector shapes
    # pan and zoom change the view, "fit" restores it
    before = pg.get_attribute("#board", "viewBox")
    pg.click("#zin")
    assert pg.get_attribute("#board", "viewBox") != before
    pg.click("#zfit")
    assert pg.get_attribute("#board", "viewBox") == before
    pg.screenshot(path=shots / "play_map.png")


def test_inspector_hints_and_replay(page, server, shots, tmp_path):
    from agents.pretrained import available

    assert "base-2p" in available()
    pg = page
    _start(pg, ["human", "pretrained:base-2p"], seed=11, delay=300)
    rng = np.random.default_rng(4)
    for _ in range(12):
        _wait_human(pg)
        _human_decision(pg, rng)
    _wait_human(pg)
    pg.check("#inspect")
    pg.wait_for_selector("#value")
    marks = pg.locator("#boardg .mark")
    assert marks.count() >= 1 and "%" in marks.first.text_content()
    view = pg.evaluate("S.inspector")
    probs = [r["p"] for r in view["top"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert view["model"] == "pretrained:base-2p" and view["seat"] == 0  # a hint for the human seat
    pg.screenshot(path=shots / "play_inspector.png")
    # the agent's own view while it is deciding (the inspector stays on; the agent waits the delay)
    pg.fill("#delay", "3000")
    while pg.evaluate("S.player") == 0:
        _human_decision(pg, rng)
    pg.wait_for_function("S.inspector && S.inspector.seat === 1 && S.player === 1")
    pg.screenshot(path=shots / "play_inspector_agent.png")
    pg.fill("#delay", "300")
    # a saved game, stepped through with the network's view
    gid = pg.evaluate("S.id")
    with urllib.request.urlopen(f"{server[0]}api/games/{gid}/record") as r:
        rec = json.loads(r.read())
    path = tmp_path / "game.json"
    path.write_text(json.dumps(rec))
    pg.click("#replaybox summary")
    pg.set_input_files("#recordfile", str(path))
    pg.wait_for_function("S && S.replay")
    total = len(rec["actions"])
    assert pg.inner_text("#rpos") == f"0 / {total}"
    for _ in range(3):
        pg.click("#rfwd")
        pg.wait_for_function("!busy")
    pg.click("#rback")
    pg.wait_for_function("!busy && S.pos === 2")
    assert pg.inner_text("#rpos") == f"2 / {total}"
    assert rec["actions"][2] in pg.inner_text("#rnext")
    pg.wait_for_selector("#value")
    pg.click("#rlast")
    pg.wait_for_function(f"!busy && S.pos === {total}")
    pg.click("#rback")
    pg.wait_for_function(f"!busy && S.pos === {total - 1}")
    pg.screenshot(path=shots / "play_replay.png")
    # a malformed record: a clear message, the replay shown stays
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**rec, "actions": rec["actions"][:3] + ["tile 99,99 r0"]}))
    pg.set_input_files("#recordfile", str(bad))
    pg.wait_for_selector("#error:not([hidden])")
    assert "does not replay" in pg.inner_text("#error")
    assert pg.evaluate("S.pos") == total - 1


def test_stale_page_gets_a_message_and_changes_nothing(page, server):
    pg = page
    _start(pg, ["human", "human"], seed=9)
    _wait_human(pg)
    sess = _server_game(server, pg)
    st = pg.evaluate("S")
    cell = sorted(st["legal"])[0]
    sess.act(f"tile {cell} r{st['legal'][cell][0]}", 0)  # played elsewhere (another tab)
    n = len(sess.env.game.history)
    pg.click("#rotr")
    cells = pg.locator("#boardg .cell.legal.fits")
    x, y = _click_cell(pg, cells.first)
    pg.wait_for_selector("#overlay .pending", state="attached")
    pg.mouse.click(x, y)
    pg.wait_for_selector("#error:not([hidden])")
    assert "older state" in pg.inner_text("#error")
    assert len(sess.env.game.history) == n  # nothing applied
    pg.wait_for_function(f"S.n === {n}")  # the page shows the server's state again


# ------------------------------------------------------------------ every expansion decision, by its own control
def _path_to(kwargs: dict, phase: str, seeds=range(80), steps=400) -> tuple[int, list[str]]:
    """A seed and the actions (random legal ones) after which ``phase`` is asked, found on a copy of the game."""
    import carc_env

    for seed in seeds:
        env = carc_env.raw_env(**kwargs)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        played: list[str] = []
        for _ in range(steps):
            if env.game.over:
                break
            if env.game.phase == phase:
                return seed, played
            mask = env.infos[env.agent_selection]["action_mask"]
            i = int(rng.choice(np.flatnonzero(mask)))
            played.append(env.action_to_text(i))
            env.step(i)
    raise AssertionError(f"no game reached {phase}")


def _at_decision(pg, server, expansions, phase, rules=None):
    """Start a two-human game in the page (by clicks), play it on the server up to ``phase``, reload the page
    (it keeps the game through its address) and return the server's session."""
    from agents.play.session import env_kwargs_for

    seed, played = _path_to(env_kwargs_for(2, ["base", *expansions], rules), phase)
    if rules:
        pg.fill("#rules", json.dumps(rules))
    _start(pg, ["human", "human"], expansions, seed=seed)
    sess = _server_game(server, pg)
    for text in played:
        sess.act(text, len(sess.env.game.history))
    assert sess.env.game.phase == phase
    pg.reload()
    pg.wait_for_function(f"S && S.phase === {json.dumps(phase)} && !busy")
    assert pg.evaluate("S.id") == sess.id and pg.inner_text("#choices .prompt")
    return sess


def _click(pg, loc) -> None:
    n0 = pg.evaluate("S.n")
    if loc.evaluate("e => e instanceof SVGElement"):
        _click_cell(pg, loc)  # a board target: a click on the board at its centre
    else:
        loc.click()
    pg.wait_for_function(f"S.n > {n0} || !document.getElementById('error').hidden")
    assert pg.locator("#error").is_hidden(), pg.inner_text("#error")


def test_count_decisions_by_their_controls(page, server, shots):
    from carc_env.expansions.count.rules import QUARTERS

    pg = page
    sess = _at_decision(pg, server, ("count",), "count_deploy")
    game = sess.env.game
    p = game.player
    # the four quarters are clickable areas on the board, each with its button; click the cathedral's area
    assert pg.locator("#overlay .target.area").count() == 4
    assert pg.locator("#choices button.decision").count() == 4 and pg.inner_text("#pass") == "Keep your follower"
    tip = pg.get_attribute('#choices button[data-action="count_deploy cathedral"]', "title")
    assert "cathedral" in tip and "cloister" in tip
    pg.screenshot(path=shots / "play_count_deploy.png")
    before, supply = game.ext["count"].quarters[3][p], game.supply[p]
    _click(pg, pg.locator('#overlay .target.area[data-action="count_deploy cathedral"]'))
    assert game.ext["count"].quarters[3][p] == before + 1 and game.supply[p] == supply - 1
    assert game.action_text(game.history[-1]) == "count_deploy cathedral"
    # then the Count may move: the other three quarters are targets; click the market's
    pg.wait_for_function("S.phase === 'count_move'")
    count = game.ext["count"].count
    areas = pg.locator("#overlay .target.area")
    assert areas.count() == 3
    assert f"count_move {QUARTERS[count]}" not in [areas.nth(i).get_attribute("data-action") for i in range(3)]
    target = next(q for q in (1, 2, 0, 3) if q != count)
    _click(pg, pg.locator(f'#overlay .target.area[data-action="count_move {QUARTERS[target]}"]'))
    assert game.ext["count"].count == target
    assert pg.locator(f'#boardg .count-quarter[data-quarter="{QUARTERS[target]}"][data-count="1"]').count() == 1


def test_count_send_by_clicking_the_feature(page, server, shots):
    from carc_env.expansions.count.rules import QUARTERS

    pg = page
    sess = _at_decision(pg, server, ("count",), "count_leave")
    game = sess.env.game
    p = game.player
    targets = pg.locator("#overlay .target.point")
    assert targets.count() >= 1 and targets.count() == pg.locator("#choices button.decision.onboard").count()
    action = targets.first.get_attribute("data-action")
    x, y = map(int, action.split()[1].split(","))
    k = game.board[(x, y)]
    _, _, t, _, base = game.placements[k]
    root = game.find(base + game.rules.tiles[t].segment_index(action.split()[2]))
    q = game.rules.by_key["count"].quarter_of(game, root)
    before = game.ext["count"].quarters[q][p]
    tip = pg.get_attribute(f'#choices button[data-action="{action}"]', "title")
    assert f"from the {QUARTERS[q]}" in tip
    pg.screenshot(path=shots / "play_count_send.png")
    _click(pg, targets.first)
    assert game.action_text(game.history[-1]) == action
    assert game.ext["count"].quarters[q][p] == before - 1  # the follower left its quarter for the feature


def test_stained_glass_decisions_by_their_controls(page, server, shots):
    pg = page
    sess = _at_decision(pg, server, ("stained_glass",), "glass_thief")
    game = sess.env.game
    st = game.ext["stained_glass"]
    p = game.player
    # every player's windows beside the board (the plug-in's panel block, vector)
    assert pg.locator("#panels svg g.panel-block rect").count() >= 4 * 7 * game.num_players
    # the thief: click the road's mark on the board
    road = pg.locator("#overlay .target.point").first
    action = road.get_attribute("data-action")
    assert action.startswith("thief ")
    thieves = dict(st.thieves)
    pg.screenshot(path=shots / "play_glass_thief.png")
    _click(pg, road)
    new = {n: o for n, o in st.thieves.items() if n not in thieves}
    assert list(new.values()) == [p] and game.action_text(game.history[-1]) == action
    # the steal: the tokens are pickers with the token drawn; take the first
    pg.wait_for_function("S.phase !== 'glass_thief'")
    while pg.evaluate("S.phase") == "glass_thief":  # more roads: no more thieves
        _click(pg, pg.locator("#pass"))
    if pg.evaluate("S.phase") == "glass_steal":
        token = pg.locator("#choices button.decision").first
        steal = token.get_attribute("data-action")
        assert token.locator("svg rect").count() >= 2 and "Steal glass token" in token.get_attribute("title")
        _, v, kind = steal.split()
        k = game.rules.by_key["stained_glass"].tokens.kinds.index(kind)
        mine, theirs = st.held[p][k], st.held[int(v)][k]
        pg.screenshot(path=shots / "play_glass_steal.png")
        _click(pg, token)
        assert st.held[p][k] == mine + 1 and st.held[int(v)][k] == theirs - 1


def test_stained_glass_window_by_its_control(page, server, shots):
    pg = page
    sess = _at_decision(pg, server, ("stained_glass",), "glass_window")
    game = sess.env.game
    p = game.player
    win = pg.locator("#choices button.decision").first
    action, label = win.get_attribute("data-action"), win.inner_text()
    pts = int(label.split(":")[1].split()[0])
    assert win.locator("svg rect").count() >= 4  # the window drawn: its frame and panes
    score = game.scores[p]
    pg.screenshot(path=shots / "play_glass_window.png")
    _click(pg, win)
    assert game.action_text(game.history[-1]) == action and game.scores[p] == score + pts


def test_map_extra_turn_by_its_control(page, server, shots):
    pg = page
    sess = _at_decision(pg, server, ("maps_germany",), "map_extra_turn", {"maps_germany": {"town_extra_turn": True}})
    game = sess.env.game
    p = game.player
    x, y = game.placements[-1][:2]
    assert pg.input_value(".seat .spec >> nth=1") == "human"  # the form shows the game, its rule options too
    assert json.loads(pg.input_value("#rules")) == {"maps_germany": {"town_extra_turn": True}}
    area = pg.locator('#overlay .target.area[data-action="extra_turn"]')
    assert area.count() == 1 and pg.inner_text("#pass") == "Decline"
    assert "Take the extra turn" in pg.inner_text("#choices") and f"({x},{y})" in area.locator("title").text_content()
    pg.screenshot(path=shots / "play_map_extra_turn.png")
    turns = game.turn
    _click(pg, area)
    assert game.action_text(game.history[-1]) == "extra_turn"
    assert game.phase == "tile" and game.player == p and game.turn_player == p and game.turn == turns + 1
