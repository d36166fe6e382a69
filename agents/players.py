"""Build players from names: ``random``, ``greedy``, ``greedy:EPS`` or a checkpoint path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from carc_env.baselines import GreedyPolicy, RandomPolicy

from .checkpoint import CheckpointError, load_checkpoint, net_from_checkpoint
from .policy import PPOPolicy, shapes_from_env


def make_player(spec: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    """A policy with ``act(obs, env)`` from its name; checkpoints are checked against the env."""
    if spec == "random":
        p: Any = RandomPolicy(seed=seed)
        p.name = "random"
        return p
    if spec == "greedy" or spec.startswith("greedy:"):
        try:
            eps = float(spec.split(":", 1)[1]) if ":" in spec else 0.0
        except ValueError:
            eps = float("nan")
        if not 0.0 <= eps <= 1.0:
            raise ValueError(f"player {spec!r}: greedy:EPS needs a number 0 <= EPS <= 1 (the chance of a random move)")
        p = GreedyPolicy(epsilon=eps, seed=seed)
        p.name = spec
        return p
    path = Path(spec)
    if not path.exists():
        raise CheckpointError(f"{spec!r} is neither 'random', 'greedy[:EPS]' nor an existing checkpoint file")
    import carc_env

    env = carc_env.raw_env(**env_kwargs)
    net = net_from_checkpoint(load_checkpoint(path), expect=shapes_from_env(env), where=str(path))
    return PPOPolicy(net, name=path.stem)
