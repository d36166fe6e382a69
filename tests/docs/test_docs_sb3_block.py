"""The documented Stable-Baselines3 example runs when pasted into a script (issue 26 item 3).

SB3's ``SubprocVecEnv`` starts its workers by re-importing the main module (forkserver/spawn), so code
that builds the envs at the top level of a script crashes ("An attempt has been made to start a new
process before the current process has finished its bootstrapping phase"); the block keeps its work under
``if __name__ == "__main__":``.  This test finds the block in README.md or docs/, shrinks its budget (fewer
games and steps: the same calls) and runs it as a script, the way a user pastes it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sb3_block() -> str:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S):
            if "carc_env.integrations.sb3 import" in block and "make_vec_env(" in block and "MaskablePPO(" in block:
                return block
    raise AssertionError("no Stable-Baselines3 example block (make_vec_env + MaskablePPO) in README.md or docs/")


def _shrunk(block: str) -> str:
    small = re.sub(r"\bn_steps=\d+", "n_steps=16", block)
    small = re.sub(r"\bbatch_size=\d+", "batch_size=16", small)
    if "n_steps=16" not in small:  # the block leaves SB3's defaults: give the small ones
        small = small.replace('"MultiInputPolicy", vec_env,', '"MultiInputPolicy", vec_env, n_steps=16, batch_size=16,')
    small = re.sub(r"make_vec_env\(\d+,", "make_vec_env(2,", small)
    small = re.sub(r"\.learn\([\d_]+\)", ".learn(16)", small)
    assert small.count("n_steps=16") == 1 and ".learn(16)" in small, "the block's shape changed: update this test"
    return small


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "pasted.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_the_sb3_block_runs_as_a_script(tmp_path):
    block = _sb3_block()
    assert 'if __name__ == "__main__":' in block
    run = _run(_shrunk(block), tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "carc_sb3.zip").is_file()
