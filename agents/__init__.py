"""Example agents: masked PPO with self-play (torch), evaluation, checkpoints.

Uses only the public ``carc_env`` API.  Entry points: ``scripts/train.py``,
``scripts/evaluate.py`` and ``scripts/main.py``.

Importing this package before torch sets ``OMP_WAIT_POLICY=PASSIVE`` (unless
the variable is already set): torch's OpenMP worker threads then sleep between
parallel regions instead of spinning.  Spinning threads are a few per cent
faster on an idle machine, but on a busy one (2 cores and any other process)
they fight for the cores and training fell from about 100 to 19 env steps/s;
with the passive policy two threads degrade like one (figures in
``docs/agents.md``).  OpenMP reads the variable once, when torch is imported,
so import ``agents`` (or run the scripts) first; ``agents.train.train`` warns
when it trains with several threads and the policy was left unset.
"""

from __future__ import annotations

import os as _os
import sys as _sys

if "torch" not in _sys.modules:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
