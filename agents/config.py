"""Training-run configuration, read from YAML (see configs/default.yaml).

Every key is checked before anything runs: an unknown key, a value of the wrong
type or out of its range (``ppo.minibatch: 0``, a negative ``lr``, all opponent
probabilities 0, ``run.torch_threads: 0``, a ``game`` section the env refuses)
raises :class:`TrainConfigError` with one line naming the key, the value and
what is allowed.  A key left out takes its default, and the defaults are those
of ``configs/default.yaml`` (a test keeps them equal); an empty file is an
error, not a silent default run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
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
    total_updates: int = 170  # PPO updates (each steps_per_update learner decisions)
    eval_every: int = 20  # updates between quick evaluations (0 = never)
    eval_games: int = 40  # seat-swapped games per quick evaluation and opponent
    checkpoint_every: int = 1  # updates between checkpoints
    torch_threads: int = 2
    final_eval_games: int = 400  # games per opponent in the evaluation after training
    init_weights: str = ""  # "" = a fresh network; pretrained:NAME or a checkpoint path: start from its weights
    # > 0: stop at the last update inside this many CPU seconds of the run (progress.csv's cpu_seconds, the rollout
    # helpers included): before each update, stop when the CPU so far plus the dearest of the last three updates'
    # would pass it (the stop is checkpointed; resumed, the run stops again at once).  0: no budget
    cpu_budget: float = 0.0


@dataclass
class TrainConfig:
    game: dict[str, Any] = field(default_factory=lambda: {"num_players": 2, "expansions": ["base"], "engine": "auto"})
    ppo: PPOConfig = field(default_factory=PPOConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def env_kwargs(self) -> dict[str, Any]:
        kw = dict(self.game)
        if "expansions" in kw:
            kw["expansions"] = tuple(kw["expansions"])
        if isinstance(kw.get("num_players"), list):
            kw["num_players"] = tuple(kw["num_players"])
        return kw

    def player_counts(self) -> list[int]:
        """The player counts the run trains on (one, or the list of a mixed run)."""
        n = self.game.get("num_players", 2)
        return [int(c) for c in n] if isinstance(n, (list, tuple)) else [int(n)]

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
        raise TrainConfigError(f"unknown key(s) {sorted(map(str, unknown))} in {where}; allowed: {sorted(fields)}")
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
            hint = ""
            if isinstance(v, str) and isinstance(cur, float):
                try:
                    float(v)
                    hint = f" (YAML reads {v} as a string: write it with a dot, e.g. {float(v)!r})"
                except ValueError:
                    pass
            raise TrainConfigError(f"{where}.{k}: {v!r} is not allowed; it must be {type(cur).__name__}{hint}")
        kw[k] = v
    return cls(**kw)


def _int_at_least(lo: int) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v >= lo), f"an integer >= {lo}"


def _float(test: Callable[[float], bool], what: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: math.isfinite(v) and test(v)), what


# What each numeric key allows (checked after the types).
RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "ppo.num_envs": _int_at_least(1),
    "ppo.steps_per_update": _int_at_least(1),
    "ppo.epochs": _int_at_least(1),
    "ppo.minibatch": _int_at_least(1),
    "ppo.lr": _float(lambda v: v > 0, "a number > 0"),
    "ppo.lr_decay_updates": _int_at_least(0),
    "ppo.lr_final": _float(lambda v: v > 0, "a number > 0"),
    "ppo.gamma": _float(lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "ppo.gae_lambda": _float(lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "ppo.clip": _float(lambda v: v > 0, "a number > 0"),
    "ppo.value_coef": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.entropy_coef": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.max_grad_norm": _float(lambda v: v > 0, "a number > 0"),
    "ppo.score_scale": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.win_bonus": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.anchor_coef": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.p_random": _float(lambda v: v >= 0, "a probability weight >= 0"),
    "ppo.p_greedy": _float(lambda v: v >= 0, "a probability weight >= 0"),
    "ppo.p_self": _float(lambda v: v >= 0, "a probability weight >= 0"),
    "ppo.p_snapshot": _float(lambda v: v >= 0, "a probability weight >= 0"),
    "ppo.p_player": _float(lambda v: v >= 0, "a probability weight >= 0"),
    "ppo.ladder_win_rate": _float(lambda v: 0 < v <= 1, "a win rate in (0, 1]"),
    "ppo.ladder_window": _int_at_least(1),
    "ppo.imitate_player": _float(lambda v: v >= 0, "a number >= 0"),
    "ppo.rollout_workers": _int_at_least(1),
    "ppo.snapshot_every": _int_at_least(1),
    "ppo.max_snapshots": _int_at_least(1),
    "ppo.net.channels": _int_at_least(1),
    "ppo.net.blocks": _int_at_least(0),
    "ppo.net.hidden": _int_at_least(1),
    "run.seed": _int_at_least(0),
    "run.total_updates": _int_at_least(1),
    "run.eval_every": _int_at_least(0),
    "run.eval_games": _int_at_least(1),
    "run.checkpoint_every": _int_at_least(1),
    "run.torch_threads": _int_at_least(1),
    "run.final_eval_games": _int_at_least(1),
    "run.cpu_budget": _float(lambda v: v >= 0, "a number of CPU seconds >= 0 (0: no budget)"),
}


def _check_pool_player(cfg: TrainConfig) -> None:
    """``ppo.player`` (with ``ppo.p_player`` > 0): a player spec that builds, for one count of players (on
    either engine: ``agents.games`` gives it each game's env or match to decide from)."""
    kw = cfg.env_kwargs()
    if isinstance(kw.get("num_players", 2), (list, tuple)):
        raise TrainConfigError(
            "ppo.p_player: the pool's player sits at one count of players; game.num_players is a list"
        )
    from .players import PlayerSpecError, make_player

    if not isinstance(cfg.ppo.player, str) or not cfg.ppo.player:
        raise TrainConfigError(
            f"ppo.player: {cfg.ppo.player!r} is not allowed with ppo.p_player > 0; give a player spec such as 'mcts:1000'"
        )
    try:
        make_player(cfg.ppo.player, kw, 0)
    except (PlayerSpecError, ValueError, FileNotFoundError) as exc:
        raise TrainConfigError(f"ppo.player: {exc}") from None
    ladder = cfg.ppo.player_ladder
    if not isinstance(ladder, list):
        raise TrainConfigError(f"ppo.player_ladder: {ladder!r} is not allowed; give a list of player specs")
    for k, spec in enumerate(ladder):
        if not isinstance(spec, str) or not spec:
            raise TrainConfigError(
                f"ppo.player_ladder[{k}]: {spec!r} is not allowed; give a player spec such as 'mcts:1000'"
            )
        try:
            make_player(spec, kw, 0)
        except (PlayerSpecError, ValueError, FileNotFoundError) as exc:
            raise TrainConfigError(f"ppo.player_ladder[{k}]: {exc}") from None


def validate(cfg: TrainConfig) -> None:
    """Check every value's range and the game section; raise TrainConfigError naming the first bad key."""
    sections = {"ppo": cfg.ppo, "ppo.net": cfg.ppo.net, "run": cfg.run}
    for key, (ok, allowed) in RANGES.items():
        section, name = key.rsplit(".", 1)
        v = getattr(sections[section], name)
        if not ok(v):
            raise TrainConfigError(f"{key}: {v!r} is not allowed; it must be {allowed}")
    c = cfg.ppo
    if c.p_random + c.p_greedy + c.p_self + c.p_player <= 0:
        raise TrainConfigError(
            "ppo.p_random + ppo.p_greedy + ppo.p_self + ppo.p_player: "
            f"{c.p_random + c.p_greedy + c.p_self + c.p_player!r} is not allowed; "
            "at least one must be > 0 (snapshot opponents exist only after the first snapshot)"
        )
    if c.p_player > 0:
        _check_pool_player(cfg)
    elif c.player:
        raise TrainConfigError(
            f"ppo.player: {c.player!r} would never play: ppo.p_player is 0 (give it a weight > 0, or leave player '')"
        )
    elif c.player_ladder:
        raise TrainConfigError(
            f"ppo.player_ladder: {c.player_ladder!r} would never play: ppo.p_player is 0 (give it a weight > 0)"
        )
    elif c.imitate_player > 0:
        raise TrainConfigError(
            f"ppo.imitate_player: {c.imitate_player!r} has nothing to learn from: ppo.p_player is 0 (no games "
            "against a pool player); give ppo.p_player a weight > 0 and a ppo.player, or set imitate_player: 0.0"
        )
    if c.rollout_workers > c.num_envs:
        raise TrainConfigError(
            f"ppo.rollout_workers: {c.rollout_workers!r} is not allowed with ppo.num_envs: {c.num_envs!r}; it must "
            "be at most num_envs (each process plays at least one game)"
        )
    if c.anchor_coef > 0 and not cfg.run.init_weights:
        raise TrainConfigError(
            f"ppo.anchor_coef: {c.anchor_coef!r} needs run.init_weights (the anchor is the network the run "
            "starts from); set run.init_weights or ppo.anchor_coef: 0.0"
        )
    if not isinstance(cfg.game, dict):
        raise TrainConfigError(f"game: {cfg.game!r} is not allowed; it must be a mapping of env options")
    from carc_env.core import ConfigError
    from carc_env.env import EnvOptions

    kw = cfg.env_kwargs()
    counts = kw.get("num_players", 2)
    if isinstance(counts, (list, tuple)):  # a mix of tables: one seat-padded network (agents/seats.py)
        if not counts or len(set(counts)) != len(counts) or not all(isinstance(c, int) for c in counts):
            raise TrainConfigError(
                f"game.num_players: {counts!r} is not allowed; give one count or a list of distinct counts "
                "such as [2, 3, 4, 5]"
            )
    else:
        counts = [counts]
    _check_count_weights(cfg.ppo.count_weights, kw.get("num_players", 2))
    anchored = cfg.ppo.anchor_counts
    if not isinstance(anchored, (list, tuple)) or not all(isinstance(n, int) and n in counts for n in anchored):
        raise TrainConfigError(
            f"ppo.anchor_counts: {anchored!r} is not allowed; it must be a list of counts of game.num_players "
            f"{list(counts)!r} ([] = every decision)"
        )
    for c in counts:
        try:
            EnvOptions.from_kwargs(**{**kw, "num_players": c})
        except (ConfigError, TypeError) as exc:
            raise TrainConfigError(f"game: {exc}") from None


def _check_count_weights(weights: Any, counts: Any) -> None:
    """``ppo.count_weights``: empty, or one positive number per count of a list ``game.num_players``."""
    if isinstance(weights, (list, tuple)) and not weights:
        return
    mixed = isinstance(counts, (list, tuple))
    ok = (
        mixed
        and isinstance(weights, (list, tuple))
        and len(weights) == len(counts)
        and all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w > 0 for w in weights)
    )
    if not ok:
        want = f"one number > 0 per count of game.num_players {list(counts)!r}" if mixed else "[] (one player count)"
        raise TrainConfigError(f"ppo.count_weights: {weights!r} is not allowed; it must be {want}, or [] for all alike")


def config_from_dict(data: dict[str, Any]) -> TrainConfig:
    if not isinstance(data, dict):
        raise TrainConfigError(
            f"a training config must be a mapping with keys game, ppo, run, got {type(data).__name__}"
        )
    if not data:
        raise TrainConfigError(
            "the training config is empty; give at least one of game, ppo, run (start from configs/default.yaml)"
        )
    game, ppo, net, run = read_sections(data, "ppo")
    cfg = TrainConfig(game=game, ppo=_fill(PPOConfig, ppo, "ppo"), run=_fill(RunConfig, run, "run"))
    cfg.ppo.net = _fill(NetConfig, net, "ppo.net")
    validate(cfg)
    return cfg


def read_sections(data: dict, section: str) -> tuple[dict, dict, Any, Any]:
    """A run config's top level checked (keys ``game``, ``section``, ``run``): the game's env options (the
    2-player base game by default), the section without its ``net``, the ``net`` and the ``run`` mapping."""
    unknown = set(data) - {"game", section, "run"}
    if unknown:
        raise TrainConfigError(f"unknown top-level key(s) {sorted(map(str, unknown))}; allowed: game, {section}, run")
    body = data.get(section)
    if body is not None and not isinstance(body, dict):
        raise TrainConfigError(f"{section} must be a mapping, got {type(body).__name__}")
    body = dict(body or {})
    net = body.pop("net", None)
    game = data.get("game")
    if game is not None and not isinstance(game, dict):
        raise TrainConfigError(f"game: {game!r} is not allowed; it must be a mapping of env options")
    return dict(game or {"num_players": 2, "expansions": ["base"]}), body, net, data.get("run")


def load_config(path: str | Path) -> TrainConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TrainConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise TrainConfigError(f"{path}: is a directory; give a YAML file such as configs/default.yaml") from None
    except UnicodeDecodeError:
        raise TrainConfigError(
            f"{path}: not a text (UTF-8) file; give a YAML file such as configs/default.yaml"
        ) from None
    except OSError as exc:
        raise TrainConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        raise TrainConfigError(f"{path}: the config file is empty; start from configs/default.yaml")
    try:
        return config_from_dict(data)
    except TrainConfigError as exc:
        raise TrainConfigError(f"{path}: {exc}") from None
