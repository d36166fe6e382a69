"""Golden games (``tests/golden/*.json``, written by ``scripts/golden.py --update``): any change of behaviour fails here.

One test per golden game (every built-in expansion alone, the base game and a
few combinations including the map; 2 to 5 players): the game is replayed
with the same seeded choices and its record (every action, the draw order,
the final scores) and the digests of every observation, mask and event list
must equal the checked-in ones.  Where the compiled engine covers the
configuration its observation and mask digests and scores must equal the
Python engine's.  A failure names the game and what changed; if the change is
meant, run ``python scripts/golden.py --update`` and commit the files (the
script prints which games changed).
"""

from __future__ import annotations

import json

import pytest
from _helpers import load_script

from carc_env.core.record import replay

golden = load_script("golden", "golden_script")
GAMES = [(combo, p) for combo in golden.combinations() for p in golden.PLAYERS]
FIX = "if the change is meant, run `python scripts/golden.py --update` and commit tests/golden/"


def _key(combo: tuple[str, ...], players: int) -> str:
    return f"{golden.combo_name(combo)}|{players}p|seed{golden.SEED}"


@pytest.mark.parametrize("combo,players", GAMES, ids=[_key(c, p) for c, p in GAMES])
def test_golden_game(combo: tuple[str, ...], players: int) -> None:
    key = _key(combo, players)
    want_all = golden.load(combo)
    assert want_all is not None, f"{golden.path_of(combo)} is missing; {FIX}"
    assert key in want_all, f"{key}: no golden game in {golden.path_of(combo).name}; {FIX}"
    want = want_all[key]
    got = golden.play(combo, players)
    diff = golden.differences({key: want}, {key: got})
    detail = golden.first_action_difference(want, got) if "record" in diff.get(key, []) else ""
    assert not diff, f"golden game {key}: {', '.join(diff[key])} changed {detail}; {FIX}"
    if got["fast"] is not None:  # both engines: identical observations, masks and scores
        for field in ("obs", "mask", "scores"):
            assert got["fast"][field] == got[field], f"golden game {key}: the compiled engine's {field} differs"
    # the checked-in record is a real game record: it replays to the recorded scores on its own
    assert replay(want["record"]).scores == want["scores"]


def test_golden_files_are_exactly_the_played_games() -> None:
    files = {p.name for p in golden.GOLDEN_DIR.glob("*.json")}
    expected = {golden.path_of(c).name for c in golden.combinations()}
    assert files == expected, f"stale or missing golden files: {sorted(files ^ expected)}; {FIX}"
    for combo in golden.combinations():
        keys = set(json.loads(golden.path_of(combo).read_text()))
        assert keys == {_key(combo, p) for p in golden.PLAYERS}, f"{golden.path_of(combo).name}: {FIX}"


def test_a_changed_game_is_named(tmp_path, monkeypatch, capsys) -> None:
    """The script reports a changed golden by name and exits 1 (without --update)."""
    combo = ("river2",)
    data = golden.load(combo)
    key = _key(combo, 3)
    data[key]["record"]["actions"][5] = "tile 99,99 r0"
    data[key]["obs"] = "0" * 24
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    golden.write(combo, data)
    assert golden.main(["--only", "river2"]) == 1
    out = capsys.readouterr().out
    assert f"{key}: record, obs changed (action 5: golden 'tile 99,99 r0'" in out
    assert "1 game(s) changed" in out
