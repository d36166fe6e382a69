"""Atomic checkpoints with validation.

A checkpoint is one ``torch.save`` file holding the training config, the
network's shapes (taken from the env it was trained on), the trainer state
(network, optimiser, snapshots, generators, running games) and the training
history.  It is written to a temporary file and renamed, so an interruption
never leaves a half-written checkpoint.

Loading checks the format, the version and, when an env is given, that the
env's observation and action shapes match the network's; every failure is a
:class:`CheckpointError` that says what is wrong.  Checkpoints contain pickled
game states: load only checkpoints you trust.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .network import NetConfig, NetShapes, PolicyNet

FORMAT = "carc_env-ppo-checkpoint"
VERSION = 2  # 2: cropped boards, masked trunk (version 1 networks computed other outputs)


class CheckpointError(ValueError):
    """A checkpoint is missing, corrupt, of another format, or does not fit the env."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "version": VERSION, **payload}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(data, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"{path}: corrupt or not a carc_env checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(
            f"{path}: not a carc_env PPO checkpoint (format {data.get('format') if isinstance(data, dict) else None!r})"
        )
    if data.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {data.get('version')!r}, this code reads version {VERSION}")
    for key in ("shapes", "net_config", "trainer", "config"):
        if key not in data:
            raise CheckpointError(f"{path}: checkpoint has no {key!r}")
    return data


def net_from_checkpoint(data: dict[str, Any], expect: NetShapes | None = None, where: str = "checkpoint") -> PolicyNet:
    shapes = NetShapes(
        **{
            **data["shapes"],
            "board_high": tuple(data["shapes"].get("board_high", ())),
            "windows_high": tuple(data["shapes"].get("windows_high", ())),
        }
    )
    if expect is not None and shapes != expect:
        diff = {k: (v, getattr(expect, k)) for k, v in asdict(shapes).items() if getattr(expect, k) != v}
        raise CheckpointError(
            f"{where} was trained for another game layout: (checkpoint, env) differ in {diff}; "
            "use the game options (players, expansions, window) it was trained with"
        )
    net = PolicyNet(shapes, NetConfig(**data["net_config"]))
    try:
        net.load_state_dict(data["trainer"]["net"])
    except (RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{where}: network weights do not match its own config: {exc}") from None
    return net.eval()
