"""Smoke test of scripts/soak.py (the full soak, hundreds of games, is run by hand before a release)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_soak_script_plays_games_through_core_and_env_and_reports_one_json_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "soak.py"), "--games", "2", "--seed", "3"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1
    summary = json.loads(lines[0])
    assert summary["games"] == 2 and summary["failures"] == 0 and summary["first_failures"] == []
    assert summary["decisions"] > 100 and summary["checks"] > 4 * summary["decisions"]
    assert "2/2 games" in res.stderr  # progress


def test_soak_snapshot_sees_a_changed_generator():
    """The replay check compares the generator too (a replay used to leave it in another state)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from soak import game_snapshot
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    from carc_env.core import Game, GameConfig
    from carc_env.core.record import replay, to_record

    game = Game(GameConfig(), seed=9)
    for _ in range(5):
        game.apply(game.legal_actions()[-1])
    assert game_snapshot(replay(to_record(game))) == game_snapshot(game)
    changed = Game(GameConfig(), seed=9)
    changed.rng.random()  # the same game, its generator one draw further
    assert game_snapshot(changed) != game_snapshot(Game(GameConfig(), seed=9))
    # a forced draw order leaves the generator as the shuffle does (plug-ins draw from it in play)
    forced = Game(GameConfig(), seed=9, draw_order=game.draw_order)
    assert game_snapshot(forced) == game_snapshot(Game(GameConfig(), seed=9))
