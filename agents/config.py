"""Training-run configuration, read from YAML (see configs/default.yaml).

Every key is checked: an unknown key or a value of the wrong type raises
:class:`TrainConfigError` naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .network import NetConfig
from .ppo import PPOConfig


class TrainConfigError(ValueError):
    """A training config is invalid; the message names the key."""


@dataclass
class RunConfig:
    seed: int = 0
    total_updates: int = 100  # PPO updates (each steps_per_update learner decisions)
    eval_every: int = 20  # updates between quick evaluations (0 = never)
    eval_games: int = 40  # seat-swapped games per quick evaluation and opponent
    checkpoint_every: int = 10  # updates between checkpoints
    torch_threads: int = 2
    final_eval_games: int = 200  # games per opponent in the evaluation after training


@dataclass
class TrainConfig:
    game: dict[str, Any] = field(default_factory=lambda: {"num_players": 2, "expansions": ["base"]})
    ppo: PPOConfig = field(default_factory=PPOConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def env_kwargs(self) -> dict[str, Any]:
        kw = dict(self.game)
        if "expansions" in kw:
            kw["expansions"] = tuple(kw["expansions"])
        return kw

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _fill(cls: type, data: Any, where: str) -> Any:
    if data is None:
        return cls()
    if not isinstance(data, dict):
        raise TrainConfigError(f"{where} must be a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        raise TrainConfigError(f"unknown key(s) {sorted(unknown)} in {where}; allowed: {sorted(fields)}")
    default = cls()
    kw = {}
    for k, v in data.items():
        cur = getattr(default, k)
        if dataclasses.is_dataclass(cur):
            kw[k] = _fill(type(cur), v, f"{where}.{k}")
            continue
        if isinstance(cur, bool):
            ok = isinstance(v, bool)
        elif isinstance(cur, float):
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            v = float(v) if ok else v
        elif isinstance(cur, int):
            ok = isinstance(v, int) and not isinstance(v, bool)
        else:
            ok = True
        if not ok:
            raise TrainConfigError(f"{where}.{k} must be {type(cur).__name__}, got {v!r}")
        kw[k] = v
    return cls(**kw)


def config_from_dict(data: dict[str, Any]) -> TrainConfig:
    if not isinstance(data, dict):
        raise TrainConfigError("a training config must be a mapping with keys game, ppo, run")
    unknown = set(data) - {"game", "ppo", "run"}
    if unknown:
        raise TrainConfigError(f"unknown top-level key(s) {sorted(unknown)}; allowed: game, ppo, run")
    ppo = dict(data.get("ppo") or {})
    net = ppo.pop("net", None)
    cfg = TrainConfig(
        game=dict(data.get("game") or {"num_players": 2, "expansions": ["base"]}),
        ppo=_fill(PPOConfig, ppo, "ppo"),
        run=_fill(RunConfig, data.get("run"), "run"),
    )
    cfg.ppo.net = _fill(NetConfig, net, "ppo.net")
    return cfg


def load_config(path: str | Path) -> TrainConfig:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise TrainConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{path}: not valid YAML: {exc}") from None
    return config_from_dict(data or {})
