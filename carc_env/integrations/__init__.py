"""Adapters for RL frameworks, each an optional extra.

* :mod:`carc_env.integrations.rllib` (``pip install -c constraints.txt -e ".[rllib]"``): Ray RLlib on
  its current API stack: a turn-based ``MultiAgentEnv``, a masking Torch ``RLModule`` over the board
  tensor, self-play policy mappings, a PPO config builder, and :func:`~carc_env.integrations.rllib.load_policy`
  (an RLlib checkpoint as a player with ``act(obs, env)``).  Script: ``scripts/train_rllib.py``;
  cluster how-to: ``docs/rllib.md``.
* :mod:`carc_env.integrations.sb3` (``pip install -c constraints.txt -e ".[sb3]"``):
  Stable-Baselines3 / sb3-contrib ``MaskablePPO`` through the Gymnasium env: a features extractor
  for the dict observation, a vectorised-env builder, and a trained model as a player.
  Script: ``scripts/train_sb3.py``.

Layering: these modules import ``carc_env`` (environments, baselines) and their framework; nothing in
``carc_env`` outside this package imports a framework, and nothing here imports ``agents``.  Importing
this package imports no framework; each submodule raises an ``ImportError`` naming the extra to install
when its framework is missing.
"""

from __future__ import annotations


def missing_extra(framework: str, extra: str, exc: ImportError) -> ImportError:
    """An ImportError that names the extra that installs ``framework``."""
    return ImportError(
        f"carc_env.integrations needs {framework} ({exc}); install it with the project's extra: "
        f'python -m pip install -c constraints.txt -e ".[{extra}]"'
    )


__all__ = ["missing_extra"]
