"""The play page's server: games on the env through the JSON API, refusals that change nothing, replays.

(The page itself is driven in a real browser by tests/agents/test_play_browser.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from carc_env.core.tiles import KIND_NAMES

try:
    from starlette.testclient import TestClient
except ImportError:  # the extra [play] (in [dev]); in CI its absence is a failure, not a skip
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(
        'the play server needs the extra [play]: pip install -c constraints.txt -e ".[dev]"', allow_module_level=True
    )

import carc_env  # noqa: E402
from agents.play.app import create_app  # noqa: E402
from carc_env.core.record import replay  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client():
    app = create_app(hints=[], pretrained=[])
    with TestClient(app) as c:
        c.app_state = app.state
        yield c


def _new(client, players=("human", "random"), expansions=(), seed=11):
    r = client.post("/api/games", json={"players": list(players), "expansions": list(expansions), "seed": seed})
    assert r.status_code == 200, r.text
    return r.json()


def _mask_placements(env) -> set[tuple[int, int, int]]:
    mask = env.infos[env.agent_selection]["action_mask"]
    out = set()
    for i in np.flatnonzero(mask):
        text = env.action_to_text(int(i))
        xy, r = text[5:].split(" r")
        x, y = xy.split(",")
        out.add((int(x), int(y), int(r)))
    return out


def test_legal_placements_are_the_action_mask(client):
    st = _new(client)
    env = client.app_state.games[st["id"]].env
    got = {(*map(int, k.split(",")), r) for k, rots in st["legal"].items() for r in rots}
    assert got == _mask_placements(env) and got
    assert len(st["drawn_svg"]) == 4 and st["phase"] == "tile" and st["n"] == 0


def _human_move(client, st, rng):
    if st["phase"] == "tile":
        cells = sorted(st["legal"])
        cell = cells[rng.integers(len(cells))]
        action = f"tile {cell} r{st['legal'][cell][0]}"
    elif st["spots"] and rng.random() < 0.4:
        action = st["spots"][0]["action"]
    elif st["decision"]:
        offered = [c["action"] for c in st["decision"]["choices"]] + st["decision"]["other"]
        action = offered[rng.integers(len(offered))]
    elif st["actions"]:
        action = st["actions"][0]
    else:
        action = "pass"
    r = client.post(f"/api/games/{st['id']}/act", json={"action": action, "expect": st["n"]})
    assert r.status_code == 200, r.text
    return r.json()


def _play_out(client, st, rng, limit=2000):
    for _ in range(limit):
        if st["over"]:
            return st
        if st["seats"][st["player"]]["human"]:
            st = _human_move(client, st, rng)
        else:
            r = client.post(f"/api/games/{st['id']}/agent", json={"expect": st["n"]})
            assert r.status_code == 200, r.text
            st = r.json()
    raise AssertionError("the game did not end")


def test_whole_game_through_the_api_and_its_record_replays(client):
    st = _play_out(client, _new(client), np.random.default_rng(0))
    game = client.app_state.games[st["id"]].env.game
    assert st["over"] and st["scores"] == game.scores
    final = st["final"]
    assert [sum(k.values()) for k in final["kinds"]] == final["scores"] == game.scores  # the breakdown adds up
    assert sum(sum(e["points"]) for e in st["log"]) == sum(game.scores)  # every point is in the log
    rec = client.get(f"/api/games/{st['id']}/record").json()
    assert replay(rec).scores == game.scores
    # same deck, seats swapped: the human now sits second, the first tile is the same
    sw = client.post(f"/api/games/{st['id']}/swap").json()
    assert [s["spec"] for s in sw["seats"]] == ["random", "human"] and sw["seed"] == st["seed"]
    assert client.app_state.games[sw["id"]].env.game.draw_order[:5] == game.draw_order[:5]


def test_refused_requests_change_nothing(client):
    st = _new(client)
    gid = st["id"]
    game = client.app_state.games[gid].env.game
    before = json.dumps(client.get(f"/api/games/{gid}").json(), sort_keys=True)

    def refused(path, body, status=400, match=""):
        r = client.post(path, json=body) if body is not None else client.get(path)
        assert r.status_code == status, r.text
        assert match in r.json()["error"]
        assert json.dumps(client.get(f"/api/games/{gid}").json(), sort_keys=True) == before

    refused(f"/api/games/{gid}/act", {"action": "tile 40,40 r0", "expect": 0}, match="illegal action")
    refused(f"/api/games/{gid}/act", {"action": "follower c1", "expect": 0}, match="illegal action")
    refused(f"/api/games/{gid}/act", {"action": "fly away", "expect": 0}, match="illegal action")
    refused(f"/api/games/{gid}/act", {"action": 3, "expect": 0}, match="must be text")
    refused(f"/api/games/{gid}/act", {"action": "pass", "expect": 5}, match="older state")
    refused(f"/api/games/{gid}/act", {"action": "pass"}, match="older state")
    refused(f"/api/games/{gid}/agent", {"expect": 0}, match="yours to play")
    refused("/api/games/0123456789abcdef/act", {"action": "pass", "expect": 0}, 404, "start a new game")
    refused("/api/games/nope", None, 404, "start a new game")
    r = client.post(f"/api/games/{gid}/act", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    assert len(game.history) == 0
    # the same action applied twice (a double click) is refused the second time
    cell = sorted(st["legal"])[0]
    action = f"tile {cell} r{st['legal'][cell][0]}"
    assert client.post(f"/api/games/{gid}/act", json={"action": action, "expect": 0}).status_code == 200
    r = client.post(f"/api/games/{gid}/act", json={"action": action, "expect": 0})
    assert r.status_code == 400 and "older state" in r.json()["error"] and len(game.history) == 1


@pytest.mark.parametrize(
    "body, match",
    [
        ({"players": ["human"], "expansions": []}, "2 to 5 seats"),
        ({"players": ["human", "alphago"], "expansions": []}, "seat 1"),
        ({"players": ["human", "random"], "expansions": ["nope"]}, "cannot set up"),
        ({"players": ["human", "random"], "expansions": [], "seed": -1}, "seed"),
        ({"players": ["human", "greedy:2"], "expansions": []}, "epsilon"),
    ],
)
def test_bad_new_games_are_named(client, body, match):
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and match in r.json()["error"], r.text
    assert not client.app_state.games


def test_expansion_phases_are_offered_as_actions(client):
    # every decision of a Count game through the API: the offered actions are exactly the legal ones
    st = _new(client, ("human", "human"), ("count", "king_robber", "shrines"), seed=4)
    gid = st["id"]
    env = client.app_state.games[gid].env
    rng = np.random.default_rng(1)
    phases = set()
    for _ in range(400):
        if st["over"]:
            break
        phases.add(st["phase"])
        if st["phase"] != "tile":
            offered = {s["action"] for s in st["spots"]} | set(st["actions"]) | ({"pass"} if st["can_pass"] else set())
            if st["decision"]:
                offered |= {c["action"] for c in st["decision"]["choices"]} | set(st["decision"]["other"])
            mask = env.infos[env.agent_selection]["action_mask"]
            assert offered == {env.action_to_text(int(i)) for i in np.flatnonzero(mask)}
        st = _human_move(client, st, rng)
    assert any(p not in ("tile", "follower") for p in phases), phases  # an expansion phase was played
    assert any("Count" in s["text"] for s in st["status"])


@pytest.mark.parametrize(
    ("expansions", "rules", "phases"),
    [
        (("count",), {}, {"count_deploy", "count_move", "count_leave", "count_final"}),
        (("stained_glass",), {}, {"glass_thief", "glass_steal", "glass_window"}),
        (("maps_germany",), {"maps_germany": {"town_extra_turn": True}}, {"map_extra_turn"}),
    ],
)
def test_expansion_decisions_come_as_labelled_controls(client, expansions, rules, phases):
    # each plug-in phase is offered as the plug-in's controls: one per legal action (the mask), each with a
    # label, a tooltip and, for a choice made on the board, an area or point inside the board
    seen: set[str] = set()
    for seed in range(30):
        r = client.post("/api/games", json={"players": ["human", "human"], "expansions": list(expansions),
                                            "seed": seed, "rules": rules})  # fmt: skip
        assert r.status_code == 200, r.text
        st = r.json()
        env = client.app_state.games[st["id"]].env
        rng = np.random.default_rng(seed)
        while not st["over"]:
            if st["phase"] in phases:
                seen.add(st["phase"])
                dec = st["decision"]
                assert dec["phase"] == st["phase"] and dec["prompt"] and not st["actions"] and not dec["other"]
                mask = env.infos[env.agent_selection]["action_mask"]
                assert sorted(c["action"] for c in dec["choices"]) == sorted(
                    env.action_to_text(int(i)) for i in np.flatnonzero(mask)
                )
                lay = st["layout"]
                for c in dec["choices"]:
                    assert c["label"] and c["tip"]
                    assert c["passes"] == (c["action"] == "pass")
                    if not c["passes"]:
                        assert c["icon"].startswith("<")
                    for px, py in [c["point"]] if c["point"] else []:
                        assert lay["left"] <= px <= lay["width"] and lay["top"] <= py <= lay["height"]
                    if c["area"]:
                        x, y, w, h = c["area"]
                        assert w > 0 and h > 0 and lay["left"] <= x and x + w <= lay["width"]
                on_board = [c for c in dec["choices"] if c["area"] or c["point"]]
                if st["phase"] in ("count_deploy", "count_move", "count_leave", "count_final", "glass_thief",
                                   "map_extra_turn"):  # fmt: skip
                    assert on_board, dec
            mask = env.infos[env.agent_selection]["action_mask"]  # any legal action, as a random player
            action = env.action_to_text(int(rng.choice(np.flatnonzero(mask))))
            r = client.post(f"/api/games/{st['id']}/act", json={"action": action, "expect": st["n"]})
            assert r.status_code == 200, r.text
            st = r.json()
        if seen == phases:
            break
    assert seen == phases


def test_replay_steps_forward_and_back(client):
    st = _play_out(client, _new(client, ("random", "greedy")), np.random.default_rng(0))
    rec = client.get(f"/api/games/{st['id']}/record").json()
    r = client.post("/api/replays", json={"record": rec})
    assert r.status_code == 200, r.text
    rp = r.json()
    assert rp["pos"] == 0 and rp["total"] == len(rec["actions"]) and rp["next"] == rec["actions"][0]
    k = 37
    s = client.get(f"/api/replays/{rp['id']}?step={k}").json()
    assert s["pos"] == k and s["played"] == rec["actions"][k - 1] and s["scores"] == replay(rec, upto=k).scores
    back = client.get(f"/api/replays/{rp['id']}?step=3").json()
    assert back["n"] == 3 and back["svg"] == client.get(f"/api/replays/{rp['id']}?step=3").json()["svg"]
    end = client.get(f"/api/replays/{rp['id']}?step={rp['total']}").json()
    assert end["over"] and end["scores"] == rec["scores"]
    assert [sum(e["points"][p] for e in end["log"]) for p in range(2)] == rec["scores"]  # the replay's score log
    assert client.get(f"/api/replays/{rp['id']}?step={rp['total'] + 1}").status_code == 400
    assert client.get(f"/api/replays/{rp['id']}?step=x").status_code == 400
    assert client.get(f"/api/replays/{rp['id']}").json()["pos"] == rp["total"]  # a refused step moved nothing


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda r: [1, 2], "must be a JSON object"),
        (lambda r: {**r, "format": "x"}, "not a carc_env game record"),
        (lambda r: {**r, "actions": r["actions"][:5] + ["tile 99,99 r0"]}, "does not replay"),
        (lambda r: {**r, "actions": [1, 2]}, "list of action texts"),
        (lambda r: {**r, "config": {**r["config"], "expansions": ["nope"]}}, "not a game record"),
    ],
)
def test_malformed_records_are_refused(client, mutate, match):
    env = carc_env.raw_env(engine="python")
    env.reset(seed=0)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
    from carc_env.core.record import to_record

    r = client.post("/api/replays", json={"record": mutate(to_record(env.game))})
    assert r.status_code == 400 and match in r.json()["error"], r.text
    assert not client.app_state.replays
    r = client.post("/api/replays", json={"record": "{broken"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]


def test_play_script_prints_the_url_and_serves_on_localhost_only():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "play.py"), "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)  # fmt: skip
    try:
        line = p.stdout.readline()
        assert line.startswith("play page: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/options", timeout=30) as r:
            opts = json.loads(r.read())
        assert "count" in opts["expansions"] and "pretrained" in opts["kinds"]
        with urllib.request.urlopen(url, timeout=30) as r:
            assert b"play against the agents" in r.read()
    finally:
        p.terminate()
        p.wait(timeout=30)


def test_inspector_probabilities_and_value():
    from agents.pretrained import load

    app = create_app(hints=[load("base-2p")], pretrained=["base-2p"])
    with TestClient(app) as c:
        st = _new(c, ("human", "random"), seed=2)
        gid = st["id"]
        v = c.get(f"/api/games/{gid}?inspect=1").json()["inspector"]
        assert v["model"] == "pretrained:base-2p" and v["seat"] == 0 and np.isfinite(v["value"])
        probs = [r["p"] for r in v["top"]]
        assert probs == sorted(probs, reverse=True)
        env = app.state.games[gid].env
        assert v["legal"] == int(env.infos[env.agent_selection]["action_mask"].sum())
        # a cell's probability is the sum over its rotations; over all cells it is 1
        top = {r["action"]: r["p"] for r in v["top"]}
        c0 = v["cells"][0]
        rots = [p for a, p in top.items() if a.startswith(f"tile {c0['x']},{c0['y']} ")]
        assert c0["p"] >= sum(rots) - 1e-6 and c0["p"] >= max(rots) - 1e-6
        assert c0["p"] <= 1 + 1e-6
        # 3 players: no shipped network fits, so a human seat gets a clear message
        st3 = _new(c, ("human", "random", "random"), seed=2)
        r = c.get(f"/api/games/{st3['id']}?inspect=1")
        assert r.status_code == 400 and "no network to inspect" in r.json()["error"]


def test_concurrent_requests_apply_one_action_once(client):
    from concurrent.futures import ThreadPoolExecutor

    st = _new(client, ("human", "greedy"))
    cell = sorted(st["legal"])[0]
    body = {"action": f"tile {cell} r{st['legal'][cell][0]}", "expect": 0}
    with ThreadPoolExecutor(4) as ex:
        codes = sorted(ex.map(lambda _: client.post(f"/api/games/{st['id']}/act", json=body).status_code, range(4)))
    assert codes == [200, 400, 400, 400]
    assert len(client.app_state.games[st["id"]].env.game.history) == 1


def test_follower_spots_say_which_feature_they_are(client):
    # Darmstadt's churches and the shrines are follower spots: the page's tooltip names them
    seen = set()
    for seed in range(20):
        st = _new(client, ("human", "human"), ("darmstadt", "shrines"), seed=seed)
        env = client.app_state.games[st["id"]].env
        rng = np.random.default_rng(seed)
        while not st["over"] and seen != {"church", "shrine"}:
            if st["phase"] == "follower":
                tile = env.game.rules.tiles[env.game.placements[-1][2]]
                for s in st["spots"]:
                    seg = tile.segments[tile.segment_index(s["action"].split()[1])]
                    kind = seg.building or KIND_NAMES[seg.kind]
                    assert s["tip"].startswith(f"Put a follower on the {kind} ({seg.name})"), s
                    if kind in ("church", "shrine"):
                        seen.add(kind)
            mask = env.infos[env.agent_selection]["action_mask"]
            action = env.action_to_text(int(rng.choice(np.flatnonzero(mask))))
            r = client.post(f"/api/games/{st['id']}/act", json={"action": action, "expect": st["n"]})
            assert r.status_code == 200, r.text
            st = r.json()
        if seen == {"church", "shrine"}:
            return
    raise AssertionError(f"only {seen} met")
