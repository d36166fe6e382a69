"""Test folders mirror the package (core, expansions, encoding, env, fast, agents, integrations, scripts).

The shared helper modules (``tests/_helpers.py`` and the other ``tests/_*.py``, ``tests/_toy_plugins``)
stay in ``tests/``: this file puts that folder on ``sys.path`` so every test imports them by name, and
the test folders too, for the few tests that reuse another test module's scenario (``from test_count
import in_quarter``).  Test module names stay unique across the folders (pytest imports them by name).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
for folder in [TESTS, *sorted(p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))]:
    if str(folder) not in sys.path:
        sys.path.append(str(folder))


def pytest_configure(config):
    """Under pytest-xdist (pyproject's ``-n 2``), one torch and BLAS thread per worker process and its
    children unless the caller chose otherwise: two workers of two threads each on a 2-core machine only
    spin against each other (tiny networks).  Set before any test module imports torch; tests that need
    threads set them themselves."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
