"""docs/examples/masked_ppo.py (the CleanRL-style masked PPO loop on the vector env) runs as documented."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_masked_ppo_example_runs_a_few_iterations():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "docs/examples/masked_ppo.py", "--num-envs", "2", "--num-steps", "8", "--iterations", "2"]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [
        dict(kv.split("=") for kv in line.split()) for line in out.stdout.splitlines() if line.startswith("iteration=")
    ]
    assert [r["iteration"] for r in rows] == ["1", "2"]
    for r in rows:
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
            assert math.isfinite(float(r[key])), (key, r)
        assert float(r["entropy"]) > 0  # a masked softmax over at least one legal action per row
