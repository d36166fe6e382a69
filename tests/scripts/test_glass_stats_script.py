"""scripts/glass_stats.py: Stained Glass's tokens, thieves, steals and windows per player, from the events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _helpers import load_script

from agents.evaluate import play_game
from carc_env.baselines import GreedyPolicy

ROOT = Path(__file__).resolve().parents[2]
glass = load_script("glass_stats", "script_glass_stats")


@pytest.mark.parametrize("seed", [30002, 30004])
def test_the_counts_of_a_game_agree_with_its_state_and_scores(seed):
    """Greedy against greedy on a deal with a window scored (30002) and one with a steal (30004): each steal is
    the other player's loss, and the tokens a player holds at the end are those it got minus those it lost
    and scored."""
    from carc_env.expansions.stained_glass.rules import WindowScored, tokens_held

    players = [GreedyPolicy(seed=1), GreedyPolicy(seed=2)]
    game = play_game(glass.ENV, players, seed, keep_env=True).game
    events, start = glass.replayed(game)
    t = [glass.tally(events, start, game.scores, s) for s in (0, 1)]
    key = "windows_scored" if seed == 30002 else "steals"
    assert sum(c[key] for c in t) > 0  # the deal exercises what it is chosen for
    assert t[0]["steals"] == t[1]["tokens_lost"] and t[1]["steals"] == t[0]["tokens_lost"]
    for s in (0, 1):
        scored = sum(len(ev.tokens) for ev in events if isinstance(ev, WindowScored) and ev.player == s)
        held = len(tokens_held(game, s))
        assert held == t[s]["tokens_drawn"] + t[s]["steals"] - t[s]["tokens_lost"] - scored
        assert t[s]["score"] == game.scores[s] >= t[s]["window_points"] + t[s]["final_window_points"]
    assert sum(c["window_points"] for c in t) == 6 * (seed == 30002)  # one W-window: 6 points by the table


def test_the_script_writes_both_players_figures(tmp_path, capsys):
    out = tmp_path / "stats.json"
    assert glass.main(["greedy", "--opponent", "random", "--deals", "1", "--seed", "30001", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["per_game"]["player"].keys() == data["per_game"]["opponent"].keys() == set(glass.COUNTS)
    assert data["per_game"]["player"]["score"] > data["per_game"]["opponent"]["score"]  # greedy beats random
    assert "| greedy |" in capsys.readouterr().out


def test_bad_arguments_end_with_one_line(tmp_path, capsys):
    for argv, needle in (
        (["greedy", "--deals", "0"], "--deals"),
        (["no_such_player"], "no_such_player"),
        (["greedy", "--json", str(tmp_path / "missing" / "x.json")], "--json"),
    ):
        try:
            rc = glass.main(argv)
        except SystemExit as exc:
            rc = exc.code
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1 and needle in err, err
