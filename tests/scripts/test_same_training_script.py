"""scripts/same_training.py (two source trees train bit for bit the same?): it says SAME for the same
code, DIFFERENT for code that learns otherwise, and refuses bad arguments in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

from _helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
TINY = """\
game: {num_players: 2, expansions: [base]}
ppo:
  num_envs: 2
  steps_per_update: 16
  minibatch: 8
  chunk: 4
  imitation_updates: 1
  snapshot_every: 1
  net: {channels: 4, blocks: 1, hidden: 8}
run: {seed: 1, eval_games: 2, torch_threads: 1}
"""


def _load():
    return load_script("same_training", "same_training_script")


def test_same_code_is_same_and_other_learning_is_different(tmp_path, capsys):
    st = _load()
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY)
    args = ["--config", str(cfg), "--updates", "2", "--eval-every", "1"]
    assert st.main(["--against", str(ROOT), *args]) == 0
    out = capsys.readouterr().out
    assert "SAME: every run learned" in out and out.count("round 1 ") == 2

    other = tmp_path / "other"  # this tree's agents with another learning rate: it must be caught
    shutil.copytree(ROOT / "agents", other / "agents", ignore=shutil.ignore_patterns("__pycache__", "pretrained"))
    (other / "carc_env").symlink_to(ROOT / "carc_env")  # the same engine
    ppo = other / "agents" / "ppo.py"
    text = ppo.read_text()
    assert 'group["lr"] = lr\n' in text  # each update sets the rate it steps with
    ppo.write_text(text.replace('group["lr"] = lr\n', 'group["lr"] = lr * 2\n'))
    assert st.main(["--against", str(other), *args]) == 1
    assert "DIFFERENT" in capsys.readouterr().out


def test_refuses_bad_arguments_in_one_line(tmp_path, capsys):
    st = _load()
    assert st.main(["--against", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no agents/ package there" in err and err.count("\n") == 1
    assert st.main(["--against", str(ROOT), "--updates", "0"]) == 2
    assert "--updates and --rounds must be >= 1" in capsys.readouterr().err
    assert st.main(["--against", str(ROOT), "--config", str(tmp_path / "none.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
