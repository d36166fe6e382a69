"""The compiled engine's on-disk cache never outlives a kernel change.

The action features' and greedy's entry points call the engine's kernels, which are compiled against the
composed plug-in module (carc_env.fast.seam): a copy cached beside their own file outlived a change to
kernels.py once.  They are now composed and cached with the engine's entry points, keyed by the sources'
hash.  This test plays the same game in three fresh processes on a copy of the package, with one cache
directory: as it is (compiled), with a kernel changed in kernels.py only (must compile afresh and show
the change in the action features), and as it was (must load the first compilation from disk).

The copy keeps the base game's compiled part only: the composed engine holds every plug-in that has a
``fast`` part, and the game played here enables none, so the expansions' kernels would only lengthen the
two compilations the test needs (about 20 s each rather than 45-55 s on the project's 2-core machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GAME = """
import hashlib, json
import numpy as np
from carc_env.env.options import EnvOptions
from carc_env.fast.engine import FastBatch
from carc_env.fast.features import kernels_of
from carc_env.fast.seam import engine as E

batch = FastBatch(EnvOptions.from_kwargs(num_players=2, action_features=True), 1)
batch.reset(0, 7)
fk = kernels_of(batch)
digest = hashlib.sha256()
games, decisions = np.zeros(1, dtype=np.int64), 0
while not batch.over(0):
    mask = batch.masks_of(games)
    feats, _ = fk.features(games, np.array([batch.player(0)], dtype=np.int64), mask, 40)
    for key in sorted(feats):
        digest.update(feats[key].tobytes())
    batch.step_games(games, [int(np.flatnonzero(mask[0])[0])])
    decisions += 1
stats = {n: getattr(E(), n).stats for n in ("features_range", "step_games")}
print(json.dumps({
    "module": E().__name__, "decisions": decisions, "scores": batch.scores(0), "digest": digest.hexdigest(),
    "hits": {n: sum(s.cache_hits.values()) for n, s in stats.items()},
    "misses": {n: sum(s.cache_misses.values()) for n, s in stats.items()},
}))
"""

CHANGE = """

_unchanged_counts = field_city_counts


@kernel
def field_city_counts(T, S, g, root):  # the test's kernel change: one completed city more
    done, total = _unchanged_counts(T, S, g, root)
    return done + 1, total
"""


def _play(src: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "CARC_ENV_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    res = subprocess.run([sys.executable, "-c", GAME], capture_output=True, text=True, env=env, cwd=src)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_a_kernel_change_compiles_afresh_and_an_unchanged_engine_loads_from_disk(tmp_path, base_only_package):
    src = base_only_package  # a smaller composed engine: the game below enables no expansion
    cache = tmp_path / "cache"
    kernels = src / "carc_env" / "fast" / "kernels.py"
    original = kernels.read_text()
    assert "def field_city_counts(" in original

    first = _play(src, cache)
    assert first["decisions"] > 60
    assert first["misses"]["features_range"] >= 1 and first["hits"]["features_range"] == 0

    kernels.write_text(original + CHANGE)  # kernels.py only: features.py is the file it was
    changed = _play(src, cache)
    assert changed["module"] != first["module"]
    assert changed["misses"]["features_range"] >= 1 and changed["hits"]["features_range"] == 0
    assert changed["digest"] != first["digest"], "the action features were computed by the stale kernels"
    assert changed["decisions"] == first["decisions"]  # the same moves (first legal action): only values differ

    kernels.write_text(original)
    again = _play(src, cache)
    assert again["module"] == first["module"]
    assert again["hits"]["features_range"] >= 1 and again["misses"]["features_range"] == 0
    assert again["hits"]["step_games"] >= 1 and again["misses"]["step_games"] == 0
    assert (again["digest"], again["scores"]) == (first["digest"], first["scores"])
