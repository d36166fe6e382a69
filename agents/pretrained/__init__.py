"""Trained agents shipped inside the package, loadable by name.

Contract
--------
Each shipped agent is two files in this directory: ``NAME.pt`` (the network's weights only:
``{"format", "shapes", "net_config", "state_dict"}``, a few hundred kB, read with
``torch.load(weights_only=True)``) and ``NAME.json`` (its model card: the game it plays as
environment options, how it was trained, what it cost, how strong it is; ``docs/agents.md`` shows
the cards as a table).

* ``available() -> list[str]``: the shipped names;
* ``card(name) -> dict``: a model card;
* ``load(name) -> PPOPolicy``: the agent on the CPU, ready to play (``act(obs, env)``; argmax over
  its masked policy), with ``.card`` and ``.env_kwargs`` (the options of the game it plays:
  ``carc_env.raw_env(**policy.env_kwargs)``);
* ``export(checkpoint, name, card)``: write a training checkpoint's network as a shipped agent;
* the tournament player spec ``pretrained:NAME`` (:mod:`agents.players`).

An unknown name raises :class:`PretrainedError` listing the shipped ones; a damaged file raises it
naming the file.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from ..network import NetConfig, NetShapes, PolicyNet
from ..policy import PPOPolicy

HERE = Path(__file__).resolve().parent
FORMAT = "carc_env-ppo-weights"


class PretrainedError(ValueError):
    """An unknown shipped agent, or a shipped file that cannot be read; the message says which."""


def available(directory: str | Path = HERE) -> list[str]:
    """The names of the shipped agents (those with both a ``.pt`` and a ``.json``)."""
    return sorted(p.stem for p in Path(directory).glob("*.json") if p.with_suffix(".pt").is_file())


def _path(name: str, suffix: str, directory: str | Path) -> Path:
    names = available(directory)
    if not isinstance(name, str) or name not in names:
        raise PretrainedError(f"no shipped agent {name!r}; shipped: {', '.join(names) or 'none'}")
    return Path(directory) / f"{name}{suffix}"


def card(name: str, directory: str | Path = HERE) -> dict[str, Any]:
    """The model card of a shipped agent."""
    path = _path(name, ".json", directory)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PretrainedError(f"{path}: unreadable model card ({exc})") from None


def load_net(name: str, directory: str | Path = HERE) -> PolicyNet:
    """The network of a shipped agent, on the CPU, in eval mode."""
    path = _path(name, ".pt", directory)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        s = data["shapes"]
        shapes = NetShapes(**{**s, "board_high": tuple(s.get("board_high", ())),
                              "windows_high": tuple(s.get("windows_high", ()))})  # fmt: skip
        net = PolicyNet(shapes, NetConfig(**data["net_config"]))
        net.load_state_dict(data["state_dict"])
    except Exception as exc:  # torch and the dataclasses raise many kinds for a damaged file
        raise PretrainedError(f"{path}: not a readable shipped agent ({type(exc).__name__}: {exc})") from None
    return net.eval()


def load(name: str, directory: str | Path = HERE) -> PPOPolicy:
    """A shipped agent as a player (``act(obs, env)``), on the CPU; see the module docstring."""
    info = card(name, directory)
    policy = PPOPolicy(load_net(name, directory), name=f"pretrained:{name}")
    policy.card = info
    policy.env_kwargs = dict(info["game"])
    return policy


def export(checkpoint: str | Path, name: str, info: dict[str, Any], directory: str | Path = HERE) -> Path:
    """Write the network of a training checkpoint as a shipped agent ``NAME.pt`` + ``NAME.json`` in
    ``directory``; ``info`` is the model card (it must say the ``game``: the environment options)."""
    from ..checkpoint import load_checkpoint, net_from_checkpoint

    if "game" not in info or not isinstance(info["game"], dict):
        raise PretrainedError("the model card needs 'game': the environment options of the game it plays")
    data = load_checkpoint(checkpoint)
    net = net_from_checkpoint(data, where=str(checkpoint))
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights = {
        "format": FORMAT,
        "shapes": asdict(net.shapes),
        "net_config": asdict(net.cfg),
        "state_dict": {k: v.detach().clone() for k, v in net.state_dict().items()},
    }
    out = directory / f"{name}.pt"
    torch.save(weights, out)
    (directory / f"{name}.json").write_text(json.dumps(info, indent=1) + "\n")
    return out


__all__ = ["PretrainedError", "available", "card", "export", "load", "load_net"]
