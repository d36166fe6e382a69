"""Expert iteration: the network's policy learns from search visit counts, its value from outcomes.

AlphaZero's loop on top of the PPO network (:class:`agents.network.PolicyNet`, the same
inputs and outputs, so an expert checkpoint is a player like a PPO one, ``ppo-mcts`` included):

1. **Play** ``games_per_iteration`` games.  At each decision of a searched seat with more than one
   legal action (symmetric tile rotations merged, as in :func:`carc_env.search.mcts.root_choices`),
   PUCT search with the network as guide (:class:`agents.search.NetworkGuide`: the network's policy
   as priors, ``score_scale x margin + V`` as values; the tree of :mod:`carc_env.search.mcts`)
   runs ``simulations`` simulations, with Dirichlet noise (``dirichlet_alpha``, ``dirichlet_frac``)
   mixed into the root's priors.  The move is drawn in proportion to the root's visits for the
   first ``temperature_moves`` searched decisions of the game, then it is the most visited one.
   A game is self-play (every seat searched) or, with probability ``p_greedy``, against the greedy
   baseline (one searched seat; greedy's decisions give no samples).
2. **Record** for every searched decision the deciding seat's observation (with the action
   features, as :func:`agents.policy.sample_from_obs` stores it for PPO), the visit distribution
   over the flat actions (the *policy target*) and, once the game is over, the *value target*
   ``z = score_scale x (final margin - margin at the decision) + win_bonus x outcome`` (margin:
   own score minus the best other score; outcome +1 win, 0 shared win, -1 loss): what the PPO
   value head predicts, the rest of the return, so a PPO network can be the starting point
   (``init``) and the guide's values keep their meaning.
3. **Learn**: ``steps_per_iteration`` gradient steps on minibatches of ``batch`` samples drawn from
   a replay buffer of the last ``buffer_size`` samples; the loss is the cross-entropy of the masked
   policy to the visit distribution plus ``value_coef`` x the squared value error; chunks of similar
   board size as in :mod:`agents.ppo`.

Options that sharpen or hold the targets (defaults: the recipe of sessions 6-7, unchanged):
``target_temperature`` T < 1 trains the policy on ``visits ** (1/T)`` normalised
(:func:`policy_target`) instead of the visit distribution; ``dirichlet_frac`` 0 turns the root noise off;
``anchor_coef`` > 0 adds that weight x KL(start policy || network) over each sample's legal actions (the
start: a frozen copy of the ``init`` network), a pull back to the policy the run began with, and
``value_anchor_coef`` that weight x 0.5 (value - the start's value)^2 (with ``value_coef`` 0: the value
head held at the start's while the shared trunk learns the policy); ``p_greedy``
plays a share of the games against greedy (one searched seat, the cheaper games); ``value_view: decider``
(two players) values the search's leaves from the deciding seat's view only (:class:`~agents.search.NetworkGuide`);
``playout`` mixes one random play-out into each leaf's value with that weight (the search of ``ppo-mcts``'s
``playout=F``).

``target: gumbel`` trains the policy on Gumbel MuZero's improved policy instead of the visits
(:func:`improved_policy`): softmax(log prior + (``gumbel_c_visit`` + the most visits) x ``gumbel_c_scale`` x
the root actions' mean values, rescaled to [0, 1] over the actions with at least ``gumbel_min_visits``
visits, the others completed by the prior-weighted mean of those), over every root action: a step from the network's own policy
towards the actions the search valued, as large as the evidence (visits) behind it.

Options that focus the policy's learning on what the search adds: a searched decision *disagrees* when the
search's most visited action is not the network's top prior at the root (before any noise) and its mean
value beats that action's by at least ``min_gap`` (in the guide's value units; an unvisited top prior
counts as beaten).  ``agree_weight`` w < 1 weighs the other decisions' policy cross-entropy by w, the
disagreeing ones by 1, normalised by the minibatch's summed weight (w 0: the policy learns from
disagreements only; the anchors and the value still see every sample).  Defaults (1, 0): every sample
alike, the training of before.

A *search teacher* (``teacher``: a fixed search player's spec) replaces the search on the network being
trained: a *rollout teacher* (``mcts:1000:farmers=0``: plain MCTS on the compiled engine, no network in it) or
a searcher on a frozen network (``ppo-mcts:pretrained:base-2p-160:2000:top=15:root=halving:farmers=0``: plain
MCTS among that network's 15 likeliest root actions, sequential halving at the root).  Its visits are the
policy targets (the same :func:`policy_target`; ``teacher_target: choice``: the move it chose, alone), and
since they do not depend on the network being trained, the teacher's self-play games (:func:`teacher_game`,
game k of a run from :func:`teacher_seed`) are played by ``run.game_workers`` processes ahead of the learning,
the same games with any number of workers.

The games run on the Python engine; the searches on the compiled engine's state where it covers the
game (:class:`~agents.search.NetworkGuide`, ``engine="auto"``): the same trees as on Python games
from the same seed, so the same training, about 2.3x faster per searched decision.

Resumable: :meth:`ExpertTrainer.state_dict` holds the network, the optimiser, the replay buffer
(masks stored as their legal indices) and every random generator; the loop checkpoints between
iterations, so a killed run started again with the same command continues from its last
checkpoint exactly (with a simulation budget the search is a pure function of its seed).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import math
import os
import pickle
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch import nn

from .checkpoint import CheckpointError, load_checkpoint, net_from_checkpoint, save_checkpoint
from .config import TrainConfigError, _fill, read_sections
from .network import NetConfig, NetShapes, PolicyNet, legal_exp, masked_logits
from .policy import PPOPolicy, collate, sample_from_obs, shapes_from_env, with_action_features
from .search import NetworkGuide


@dataclass
class ExpertConfig:
    init: str = ""  # the starting network: a checkpoint path, "pretrained:NAME", or "" (a fresh network)
    simulations: int = 64  # PUCT simulations per searched decision
    c: float = 1.5  # PUCT exploration constant
    dirichlet_alpha: float = 0.3  # root noise (AlphaZero): Dirichlet(alpha) over the root's actions ...
    dirichlet_frac: float = 0.25  # ... mixed in with this weight (0 = no noise)
    temperature_moves: int = 16  # first searched decisions of a game drawn in proportion to the visits
    target_temperature: float = 1.0  # policy target = visits ** (1 / T), normalised (1: the visit distribution)
    target: str = "visits"  # the policy target: the (powered) visits, or "gumbel": the improved policy
    gumbel_c_visit: float = 50.0  # the improved policy's sigma(q) = (c_visit + max visits) x c_scale x q
    gumbel_c_scale: float = 0.1
    gumbel_min_visits: int = 1  # the improved policy's q: only actions with at least this many visits count as seen
    anchor_coef: float = 0.0  # weight of KL(start policy || network) over the legal actions (0: no anchor)
    agree_weight: float = 1.0  # policy-loss weight of a decision where the search did not beat the network's choice
    min_gap: float = 0.0  # a search's choice beats the network's when its mean value is higher by at least this
    value_anchor_coef: float = 0.0  # weight of the squared gap between the value and the start's value (0: none)
    value_view: str = "seat"  # the search's leaf values: each seat's own view, or "decider" (agents/search.py)
    playout: float = 0.0  # weight of one random play-out in a leaf's value (agents/search.py; 0: the network's)
    p_greedy: float = 0.0  # chance a game is against the greedy baseline (else self-play)
    games_per_iteration: int = 4
    buffer_size: int = 8000  # replay buffer (samples)
    batch: int = 256  # samples per gradient step
    steps_per_iteration: int = 8  # gradient steps after each iteration's games
    chunk: int = 64  # gradient-accumulation chunks of similar board size
    lr: float = 3e-4
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    score_scale: float = 0.05  # the value's units: those of the PPO value (agents/ppo.py)
    win_bonus: float = 1.0
    # whose visits are the policy targets: "network" (PUCT on the network being trained, above) or a fixed search
    # player's spec, mcts:... or ppo-mcts:... (its games do not depend on the network being trained, so
    # run.game_workers processes can play them while the network learns)
    teacher: str = "network"
    # a search teacher's policy target: "visits" (its root visits, powered by 1 / target_temperature) or
    # "choice" (its chosen move alone: sequential halving's pick, else the most visited)
    teacher_target: str = "visits"
    net: NetConfig = field(default_factory=NetConfig)  # used only without init


@dataclass
class ExpertRunConfig:
    seed: int = 0
    total_iterations: int = 100
    checkpoint_every: int = 1  # iterations between checkpoints
    eval_every: int = 10  # iterations between quick evaluations against greedy (0 = never)
    eval_games: int = 40
    torch_threads: int = 1
    game_workers: int = 1  # processes playing a search teacher's games (expert.teacher: mcts:... or ppo-mcts:...)
    snapshot_every: int = 0  # iterations between OUT/snapshots/iteration_N.pt (the network only; 0 = none)


@dataclass
class ExpertTrainConfig:
    game: dict[str, Any] = field(default_factory=lambda: {"num_players": 2, "expansions": ["base"]})
    expert: ExpertConfig = field(default_factory=ExpertConfig)
    run: ExpertRunConfig = field(default_factory=ExpertRunConfig)

    def env_kwargs(self) -> dict[str, Any]:
        kw = dict(self.game)
        if "expansions" in kw:
            kw["expansions"] = tuple(kw["expansions"])
        return kw

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_POSITIVE_INT = {
    "expert.simulations",
    "expert.games_per_iteration",
    "expert.buffer_size",
    "expert.batch",
    "expert.steps_per_iteration",
    "expert.chunk",
    "run.total_iterations",
    "run.checkpoint_every",
    "run.eval_games",
    "run.torch_threads",
    "run.game_workers",
}


def expert_config_from_dict(data: Any) -> ExpertTrainConfig:
    """Build and check an expert-iteration config; a bad key or value raises TrainConfigError naming it."""
    if not isinstance(data, dict) or not data:
        raise TrainConfigError("an expert-iteration config must be a non-empty mapping with keys game, expert, run")
    game, ex, net, run = read_sections(data, "expert")
    cfg = ExpertTrainConfig(game=game, expert=_fill(ExpertConfig, ex, "expert"), run=_fill(ExpertRunConfig, run, "run"))
    cfg.expert.net = _fill(NetConfig, net, "expert.net")
    validate_expert(cfg)
    return cfg


def validate_expert(cfg: ExpertTrainConfig) -> None:
    sections = {"expert": cfg.expert, "run": cfg.run}
    for key in sorted(_POSITIVE_INT):
        sec, name = key.split(".")
        v = getattr(sections[sec], name)
        if v < 1:
            raise TrainConfigError(f"{key}: {v!r} is not allowed; it must be an integer >= 1")
    e = cfg.expert
    checks = {
        "expert.c": (e.c, e.c >= 0, "a number >= 0"),
        "expert.dirichlet_alpha": (e.dirichlet_alpha, e.dirichlet_alpha > 0, "a number > 0"),
        "expert.dirichlet_frac": (e.dirichlet_frac, 0 <= e.dirichlet_frac <= 1, "a number in [0, 1]"),
        "expert.temperature_moves": (e.temperature_moves, e.temperature_moves >= 0, "an integer >= 0"),
        "expert.p_greedy": (e.p_greedy, 0 <= e.p_greedy <= 1, "a probability in [0, 1]"),
        "expert.target_temperature": (e.target_temperature, e.target_temperature > 0, "a number > 0"),
        "expert.gumbel_c_visit": (e.gumbel_c_visit, e.gumbel_c_visit >= 0, "a number >= 0"),
        "expert.gumbel_c_scale": (e.gumbel_c_scale, e.gumbel_c_scale >= 0, "a number >= 0"),
        "expert.gumbel_min_visits": (
            e.gumbel_min_visits,
            isinstance(e.gumbel_min_visits, int)
            and not isinstance(e.gumbel_min_visits, bool)
            and e.gumbel_min_visits >= 1,
            "an integer >= 1",
        ),
        "expert.anchor_coef": (e.anchor_coef, e.anchor_coef >= 0, "a number >= 0"),
        "expert.agree_weight": (e.agree_weight, 0 <= e.agree_weight <= 1, "a number in [0, 1]"),
        "expert.min_gap": (e.min_gap, e.min_gap >= 0, "a number >= 0"),
        "expert.value_anchor_coef": (e.value_anchor_coef, e.value_anchor_coef >= 0, "a number >= 0"),
        "expert.playout": (e.playout, 0 <= e.playout <= 1, "a number in [0, 1]"),
        "expert.lr": (e.lr, e.lr > 0, "a number > 0"),
        "expert.value_coef": (e.value_coef, e.value_coef >= 0, "a number >= 0"),
        "expert.max_grad_norm": (e.max_grad_norm, e.max_grad_norm > 0, "a number > 0"),
        "expert.score_scale": (e.score_scale, e.score_scale >= 0, "a number >= 0"),
        "expert.win_bonus": (e.win_bonus, e.win_bonus >= 0, "a number >= 0"),
        "run.seed": (cfg.run.seed, cfg.run.seed >= 0, "an integer >= 0"),
        "run.eval_every": (cfg.run.eval_every, cfg.run.eval_every >= 0, "an integer >= 0"),
        "run.snapshot_every": (cfg.run.snapshot_every, cfg.run.snapshot_every >= 0, "an integer >= 0"),
    }
    for key, (v, ok, allowed) in checks.items():
        if not (ok and (not isinstance(v, float) or math.isfinite(v))):
            raise TrainConfigError(f"{key}: {v!r} is not allowed; it must be {allowed}")
    from .search import VALUE_VIEWS

    if e.value_view not in VALUE_VIEWS:
        raise TrainConfigError(
            f"expert.value_view: {e.value_view!r} is not allowed; it must be one of {list(VALUE_VIEWS)}"
        )
    if e.target not in TARGETS:
        raise TrainConfigError(f"expert.target: {e.target!r} is not allowed; it must be one of {list(TARGETS)}")
    if e.value_view == "decider" and int(cfg.game.get("num_players", 2)) != 2:
        raise TrainConfigError("expert.value_view: 'decider' is for two players; use 'seat' for this game")
    if not isinstance(e.init, str):
        raise TrainConfigError(f"expert.init: {e.init!r} is not allowed; give a checkpoint path, pretrained:NAME or ''")
    from carc_env.core import ConfigError
    from carc_env.env import EnvOptions

    try:
        EnvOptions.from_kwargs(**cfg.env_kwargs())
    except (ConfigError, TypeError) as exc:
        raise TrainConfigError(f"game: {exc}") from None
    _check_teacher(cfg)


def _check_teacher(cfg: ExpertTrainConfig) -> None:
    """``expert.teacher``: "network", or an ``mcts:`` / ``ppo-mcts:`` spec that builds a search player, with the
    options that only the network teacher reads left at their defaults (a set one would silently do nothing)."""
    e = cfg.expert
    if e.teacher_target not in ("visits", "choice"):
        raise TrainConfigError(f"expert.teacher_target: {e.teacher_target!r} is not one of 'visits', 'choice'")
    if e.teacher == "network":
        if e.teacher_target != "visits":
            raise TrainConfigError(
                "expert.teacher_target: it is a search teacher's (expert.teacher: mcts:... or ppo-mcts:...); the "
                "network teacher's policy target is expert.target"
            )
        if cfg.run.game_workers != 1:
            raise TrainConfigError(
                "run.game_workers: the network teacher's games wait for the network's updates and run in the "
                "training process; more game workers are for a search teacher (expert.teacher: mcts:... or ppo-mcts:...)"
            )
        return
    if not isinstance(e.teacher, str) or not e.teacher.startswith(("mcts:", "ppo-mcts:")):
        raise TrainConfigError(
            f"expert.teacher: {e.teacher!r} is not allowed; it must be 'network' or a search player's spec "
            "such as 'mcts:1000:farmers=0' or 'ppo-mcts:pretrained:base-2p-160:2000:top=15:root=halving'"
        )
    from carc_env.search import MCTSPolicy

    from .players import PlayerSpecError, make_player

    try:
        player = make_player(e.teacher, cfg.env_kwargs(), 0)
    except (PlayerSpecError, ValueError, FileNotFoundError) as exc:
        raise TrainConfigError(f"expert.teacher: {exc}") from None
    if not isinstance(player, MCTSPolicy) or player.simulations is None or player.time_per_move is not None:
        raise TrainConfigError(
            f"expert.teacher: {e.teacher!r} must search a fixed number of simulations (a time budget would make "
            "the teacher's games depend on the machine)"
        )
    defaults = ExpertConfig()
    network_only = (
        "simulations",
        "c",
        "target",
        "dirichlet_alpha",
        "dirichlet_frac",
        "p_greedy",
        "agree_weight",
        "min_gap",
        "playout",
        "value_view",
    )
    for name in network_only:
        if getattr(e, name) != getattr(defaults, name):
            raise TrainConfigError(
                f"expert.{name}: {getattr(e, name)!r} is for the search on the network being trained; the "
                f"teacher {e.teacher} is a fixed player: leave it at {getattr(defaults, name)!r}"
            )


def load_expert_config(path: str | Path) -> ExpertTrainConfig:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrainConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        return expert_config_from_dict(data)
    except TrainConfigError as exc:
        raise TrainConfigError(f"{path}: {exc}") from None


def initial_net(init: str, shapes: NetShapes, net_cfg: NetConfig) -> PolicyNet:
    """The starting network: a fresh one (``""``), a shipped agent (``pretrained:NAME``) or a checkpoint's."""
    if not init:
        return PolicyNet(shapes, net_cfg)
    if init.startswith("pretrained:"):
        from .pretrained import load_net

        net = load_net(init.split(":", 1)[1])
        if net.shapes != shapes:
            raise CheckpointError(f"expert.init {init!r} was trained for another game layout than this config's")
        return net
    return net_from_checkpoint(load_checkpoint(init), expect=shapes, where=init)


class _RootNoise:
    """A guide wrapper mixing Dirichlet noise into the priors of each search's root (its first expand)."""

    uses_priors = True

    def __init__(self, guide: NetworkGuide, alpha: float, frac: float, rng: np.random.Generator) -> None:
        self.guide, self.alpha, self.frac, self.rng = guide, alpha, frac, rng
        self._root = False
        self.root_priors: list[float] | None = None  # the last search root's priors before the noise

    def begin(self, game: Any) -> None:
        self._root = True
        self.root_priors = None  # (never a previous search's)
        self.guide.begin(game)

    def compiled_state(self, game: Any) -> Any:  # the search's simulations where the guide runs them
        return self.guide.compiled_state(game)

    def expand(self, game: Any, actions: Any, rng: Any) -> tuple[list[float], list[float]]:
        priors, values = self.guide.expand(game, actions, rng)
        if self._root:
            self.root_priors = list(priors)
        if self._root and self.frac > 0 and len(actions) > 1:
            noise = self.rng.dirichlet([self.alpha] * len(actions))
            priors = [(1 - self.frac) * p + self.frac * float(q) for p, q in zip(priors, noise, strict=True)]
        self._root = False
        return priors, values

    def expand_state(self, sim: Any, moves: Any, rng: Any) -> tuple[list[float], list[float]]:
        self._root = False  # (never the root: the search evaluates its root with expand)
        return self.guide.expand_state(sim, moves, rng)

    def values(self, scores: list[int]) -> list[float]:
        return self.guide.values(scores)

    def terminal(self, game: Any) -> list[float]:
        return self.guide.terminal(game)


def policy_target(visits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """The policy target of a search's root ``visits`` (the visited actions' counts, all > 0):
    ``visits ** (1 / temperature)`` normalised to sum 1 (``temperature`` 1: the visit distribution; below 1
    sharper, towards the most visited action), computed in log space so that a small temperature cannot
    overflow; float32."""
    v = np.asarray(visits, dtype=np.float64)
    if temperature == 1.0:
        return (v / v.sum()).astype(np.float32)
    logits = np.log(v) / temperature
    w = np.exp(logits - logits.max())
    return (w / w.sum()).astype(np.float32)


TARGETS = ("visits", "gumbel")


def improved_policy(
    priors: Any, visits: Any, values: Any, c_visit: float = 50.0, c_scale: float = 0.1, min_visits: int = 1
) -> np.ndarray:
    """Gumbel MuZero's improved policy at a search root: softmax(log ``priors`` + sigma(completed q)) over
    every root action, float32.  q: the actions' mean ``values`` (nan: unvisited), rescaled to [0, 1] over
    the seen actions (those with at least ``min_visits`` visits; all 0.5 when they are equal), an unseen
    action's completed by the seen ones' prior-weighted mean; sigma(q) = (``c_visit`` + the most ``visits``)
    x ``c_scale`` x q.  A ``min_visits`` above 1 keeps the means of one or two random play-outs out of it."""
    p = np.maximum(np.asarray(priors, dtype=np.float64), 1e-12)
    n = np.asarray(visits, dtype=np.float64)
    seen = n >= max(1, min_visits)
    q = np.asarray(values, dtype=np.float64).copy()
    if not seen.any():
        return (p / p.sum()).astype(np.float32)
    lo, hi = q[seen].min(), q[seen].max()
    q[seen] = (q[seen] - lo) / (hi - lo) if hi > lo else 0.5
    q[~seen] = float((p[seen] * q[seen]).sum() / p[seen].sum())
    logits = np.log(p) + (c_visit + n.max()) * c_scale * q
    w = np.exp(logits - logits.max())
    return (w / w.sum()).astype(np.float32)


def disagreement(priors: Any, visits: Any, values: Any, best: int, min_gap: float = 0.0) -> tuple[bool, float]:
    """Whether a search's choice ``best`` beats the network's at a root with ``priors`` (the network's, over
    the same actions as ``visits`` and the mean ``values``; nan: unvisited), and by how much: the value gap
    from the network's top prior to ``best`` (inf if that action was never visited; 0 if it is ``best``).
    It disagrees when the actions differ and the gap is at least ``min_gap``."""
    top = int(np.argmax(np.asarray(priors, dtype=np.float64)))
    if top == best:
        return False, 0.0
    gap = math.inf if visits[top] == 0 or math.isnan(values[top]) else float(values[best]) - float(values[top])
    return gap >= min_gap, gap


def _margins(scores: list[int]) -> list[int]:
    return [s - max(t for q, t in enumerate(scores) if q != p) for p, s in enumerate(scores)]


def _sample(obs: Any, env: Any, indices: list[int], visits: np.ndarray, temperature: float) -> dict[str, Any]:
    """A searched decision's sample: the deciding seat's observation as PPO stores it (legal actions as their
    indices) and the policy target over the visited actions (:func:`policy_target`)."""
    sample = sample_from_obs(with_action_features(obs, env), crop=True)
    sample["mask"] = np.flatnonzero(sample["mask"]).astype(np.int32)  # legal indices: compact
    keep = visits > 0
    sample["pi_index"] = np.asarray(indices, dtype=np.int64)[keep]
    sample["pi"] = policy_target(visits[keep], temperature)
    return sample


def _search_points(env: Any, canon: dict, searched: Any = None, others: Any = None) -> Any:
    """Walk ``env``'s game to its end, yielding ``(seat, obs, actions, indices)`` at each decision to search: a
    seat in ``searched`` (every seat if None) with more than one root choice (:func:`root_choices`, symmetric
    rotations merged).  The caller steps ``env`` after each; a single choice is stepped here, and the other
    seats' decisions are ``others(agent)``."""
    from carc_env.search.mcts import root_choices

    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        if searched is not None and seat not in searched:
            env.step(int(others(agent)))
            continue
        obs = env.observe(agent)
        actions, indices = root_choices(env.game, env.codec, obs["action_mask"], canon)
        if len(actions) == 1:
            env.step(int(indices[0]))
            continue
        yield seat, obs, actions, indices


def _visit_entropy(visits: np.ndarray) -> float:
    p = visits[visits > 0] / visits.sum()
    return float(-(p * np.log(p)).sum())


def _label(pending: list[tuple[dict[str, Any], int, int]], scores: list[int], c: ExpertConfig) -> list[dict[str, Any]]:
    """The value targets ``z`` of a finished game's ``pending`` (sample, seat, margin at the decision)."""
    final = _margins(scores)
    best = max(scores)
    shared = scores.count(best) > 1
    out = []
    for sample, seat, margin in pending:
        won = scores[seat] == best
        outcome = 0.0 if (won and shared) else (1.0 if won else -1.0)
        sample["z"] = np.float32(c.score_scale * (final[seat] - margin) + c.win_bonus * outcome)
        out.append(sample)
    return out


_TEACHERS: dict[Any, Any] = {}  # per process: (env options, spec) -> (env, the teacher: an MCTSPolicy)


def teacher_game(env_kwargs: dict[str, Any], c: ExpertConfig, seed: int) -> dict[str, Any]:
    """One self-play game of a search teacher (``c.teacher``, an ``mcts:`` or ``ppo-mcts:`` spec: a fixed
    player) from ``seed`` alone (the deal, the searches and the move draws), so the games are the same in any
    process and in any order: its samples, with the value targets, and the searches' statistics.  The
    teacher searches the root actions it keeps (``root_cut``: all, or a ``top=K`` network's short list); the
    policy target is over those (``c.teacher_target``: the visits, or the search's choice alone)."""
    import carc_env

    from .players import make_player

    key = (repr(sorted(env_kwargs.items())), c.teacher)
    if key not in _TEACHERS:
        _TEACHERS[key] = (carc_env.raw_env(**env_kwargs), make_player(c.teacher, env_kwargs, 0))
    env, teacher = _TEACHERS[key]
    cpu0 = time.process_time()
    rng = np.random.default_rng(seed)
    env.reset(seed=int(rng.integers(2**31)))
    teacher.seed(int(rng.integers(2**31)))
    pending: list[tuple[dict[str, Any], int, int]] = []
    seconds = 0.0
    entropies = []
    moves = 0
    for seat, obs, actions, indices in _search_points(env, teacher.mcts._canon):
        game = env.game
        t0 = time.perf_counter()
        actions, indices = teacher.root_cut(obs, env, actions, indices)
        if len(actions) == 1:  # a short list of one (top=1): nothing searched
            seconds += time.perf_counter() - t0
            env.step(int(indices[0]))
            continue
        res = teacher.mcts.search(game, actions, teacher.simulations, teacher.time_per_move)
        seconds += time.perf_counter() - t0
        visits = np.asarray(res.visits, dtype=np.float64)
        pick = int(rng.choice(len(visits), p=visits / visits.sum())) if moves < c.temperature_moves else res.best()
        moves += 1
        entropies.append(_visit_entropy(visits))
        if c.teacher_target == "choice":
            target = np.zeros_like(visits)
            target[res.best()] = 1.0
        else:
            target = visits
        pending.append(
            (_sample(obs, env, indices, target, c.target_temperature), seat, _margins(list(game.scores))[seat])
        )
        env.step(int(indices[pick]))
    return {
        "samples": _label(pending, list(env.game.scores), c),
        "scores": list(env.game.scores),
        "decisions": len(pending),
        "search_seconds": seconds,
        "visit_entropy": entropies,
        "cpu_seconds": time.process_time() - cpu0,
    }


def teacher_seed(run_seed: int, game: int) -> int:
    """The seed of a search teacher's game number ``game`` (from 0) in the run of ``run_seed``."""
    return int(np.random.SeedSequence([run_seed, game]).generate_state(1)[0])


def _teacher_job(args: tuple[dict[str, Any], ExpertConfig, int]) -> dict[str, Any]:
    return teacher_game(*args)


def _worker_start() -> None:
    """A game worker's torch runs on one thread (a ppo-mcts teacher's network; the cores are the workers')."""
    torch.set_num_threads(1)


class ExpertTrainer:
    """Expert iteration (see the module docstring): :meth:`play` one game, :meth:`iteration` = games + update."""

    def __init__(self, env_kwargs: dict[str, Any], cfg: ExpertConfig, seed: int = 0, game_workers: int = 1) -> None:
        import carc_env
        from carc_env.baselines import GreedyPolicy
        from carc_env.search import MCTS

        self.env_kwargs = {**env_kwargs, "engine": "python"}
        self.cfg = cfg
        self.seed = seed
        torch.manual_seed(seed)
        self.rng = np.random.default_rng(seed)  # deals, seats, opponents, move draws
        self.search_rng = np.random.default_rng(seed + 1)  # the tree's determinisations and the root noise
        self.env = carc_env.raw_env(**self.env_kwargs)
        self.shapes = shapes_from_env(self.env)
        self.net = initial_net(cfg.init, self.shapes, cfg.net)
        # the anchor: a frozen copy of the starting network (rebuilt the same way on resume: init is a file,
        # a shipped agent, or a fresh network from the seeded torch generator)
        anchored = cfg.anchor_coef > 0 or cfg.value_anchor_coef > 0
        self.anchor = copy.deepcopy(self.net).eval().requires_grad_(False) if anchored else None
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.guide = NetworkGuide(
            self.net, self.env_kwargs, cfg.score_scale, cfg.win_bonus, value_view=cfg.value_view, playout=cfg.playout
        )
        self.mcts = MCTS(_RootNoise(self.guide, cfg.dirichlet_alpha, cfg.dirichlet_frac, self.search_rng), cfg.c)
        self.mcts.rng = self.search_rng
        self.greedy = GreedyPolicy(seed=seed + 2)
        self.buffer: list[dict[str, Any]] = []
        self.iterations = 0
        self.games = 0
        self.samples = 0
        self.decisions = 0  # searched decisions
        self.search_seconds = 0.0
        self.recent: list[dict[str, float]] = []
        self.visit_entropy: list[float] = []  # the root visits' entropy of this iteration's searches
        self.disagreements: list[float] = []  # 1 / 0 per searched decision of this iteration
        self.game_workers = game_workers
        self.worker_cpu = 0.0  # CPU seconds of the game workers' games consumed so far (not in this process's)
        self._pool: Any = None
        self._ahead: Any = None  # the workers' pending games, in game order (game self.games first)

    # ---------------------------------------------------------------- games
    def play(self) -> list[dict[str, Any]]:
        """One game; returns its samples (also appended to the buffer)."""
        c = self.cfg
        env = self.env
        env.reset(seed=int(self.rng.integers(2**31)))
        n = len(env.possible_agents)
        vs_greedy = bool(self.rng.random() < c.p_greedy)
        searched = {int(self.rng.integers(n))} if vs_greedy else set(range(n))
        pending: list[tuple[dict[str, Any], int, int]] = []  # (sample, seat, margin at the decision)
        moves = 0
        self.net.eval()
        others = lambda agent: self.greedy.act(env.infos[agent], env)  # noqa: E731
        for seat, obs, actions, indices in _search_points(env, self.mcts._canon, searched, others):
            game = env.game
            t0 = time.perf_counter()
            res = self.mcts.search(game, actions, c.simulations, None)
            self.search_seconds += time.perf_counter() - t0
            self.decisions += 1
            visits = np.asarray(res.visits, dtype=np.float64)
            noise = self.mcts.guide
            disagrees, _ = (
                disagreement(noise.root_priors, res.visits, res.values, res.best(), c.min_gap)
                if noise.root_priors is not None and len(noise.root_priors) == len(visits)
                else (False, 0.0)
            )
            self.disagreements.append(float(disagrees))
            if moves < c.temperature_moves:
                pick = int(self.rng.choice(len(visits), p=visits / visits.sum()))
            else:
                pick = res.best()
            moves += 1
            sample = _sample(obs, env, indices, visits, c.target_temperature)
            if c.target == "gumbel":
                if noise.root_priors is None or len(noise.root_priors) != len(visits):
                    raise RuntimeError("the improved policy needs the root's priors; the search gave none")
                sample["pi_index"] = np.asarray(indices, dtype=np.int64)
                sample["pi"] = improved_policy(
                    noise.root_priors,
                    res.visits,
                    res.values,
                    c.gumbel_c_visit,
                    c.gumbel_c_scale,
                    c.gumbel_min_visits,
                )
            sample["disagrees"] = disagrees
            self.visit_entropy.append(_visit_entropy(visits))
            pending.append((sample, seat, _margins(list(game.scores))[seat]))
            env.step(int(indices[pick]))
        scores = list(env.game.scores)
        out = _label(pending, scores, c)
        best = max(scores)
        shared = scores.count(best) > 1
        final = _margins(scores)
        if vs_greedy:
            seat = next(iter(searched))
            self.recent.append({"win": float(scores[seat] == best and not shared), "margin": float(final[seat])})
        self.games += 1
        self.samples += len(out)
        self.buffer.extend(out)
        del self.buffer[: max(0, len(self.buffer) - c.buffer_size)]
        return out

    def _teacher_games(self) -> list[dict[str, Any]]:
        """The iteration's games of a search teacher (:func:`teacher_game`): game ``k`` of the run from
        :func:`teacher_seed` (run seed, k), so the run is the same with any number of game workers.  With
        ``game_workers`` > 1 a pool of that many processes plays them, up to two iterations' games ahead (the
        teacher does not wait for the network), and this process keeps the learning."""
        import collections
        import multiprocessing as mp

        n = self.cfg.games_per_iteration
        if self.game_workers == 1:
            results = [
                teacher_game(self.env_kwargs, self.cfg, teacher_seed(self.seed, self.games + i)) for i in range(n)
            ]
        else:
            if self._pool is None:
                ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
                self._pool = ctx.Pool(self.game_workers, initializer=_worker_start)
                self._ahead = collections.deque()
            while len(self._ahead) < 3 * n:  # this iteration's games and the next two iterations'
                job = (self.env_kwargs, self.cfg, teacher_seed(self.seed, self.games + len(self._ahead)))
                self._ahead.append(self._pool.apply_async(_teacher_job, (job,)))
            results = [self._ahead.popleft().get() for _ in range(n)]  # first in, first out: in game order
            for r in results:
                self.worker_cpu += r["cpu_seconds"]
        new: list[dict[str, Any]] = []
        for r in results:
            self.games += 1
            self.decisions += r["decisions"]
            self.search_seconds += r["search_seconds"]
            self.visit_entropy += r["visit_entropy"]
            new += r["samples"]
        self.samples += len(new)
        self.buffer.extend(new)
        del self.buffer[: max(0, len(self.buffer) - self.cfg.buffer_size)]
        return new

    def close(self) -> None:
        """Stop the game workers (if any); games they played ahead are dropped (a resumed run plays them again)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            self._ahead = None

    # --------------------------------------------------------------- update
    def _expand(self, s: dict[str, Any]) -> dict[str, Any]:
        mask = np.zeros(self.shapes.n_actions, dtype=bool)
        mask[s["mask"]] = True
        return {**s, "mask": mask}

    def _focus(self, sample: dict[str, Any]) -> float:
        """A sample's policy-loss weight: 1 where the search disagreed with the network, else ``agree_weight``."""
        return 1.0 if sample.get("disagrees", False) else self.cfg.agree_weight

    def update(self) -> dict[str, float]:
        """``steps_per_iteration`` gradient steps on minibatches drawn from the buffer."""
        c = self.cfg
        buf = self.buffer
        if not buf:
            return {}
        self.net.train()
        stats: dict[str, list[float]] = {
            "policy_loss": [],
            "value_loss": [],
            "policy_accuracy": [],
            "anchor_kl": [],
            "value_anchor": [],
        }
        for _ in range(c.steps_per_iteration):
            mb = self.rng.choice(len(buf), size=min(c.batch, len(buf)), replace=False)
            total = None if c.agree_weight == 1.0 else float(sum(self._focus(buf[k]) for k in mb))
            area = np.array([buf[k]["board"].shape[1] * buf[k]["board"].shape[2] for k in mb])
            order = mb[np.argsort(area, kind="stable")]
            chunks = [order[j : j + c.chunk] for j in range(0, len(order), c.chunk)]
            self.opt.zero_grad()
            parts = {
                "policy_loss": 0.0,
                "value_loss": 0.0,
                "policy_accuracy": 0.0,
                "anchor_kl": 0.0,
                "value_anchor": 0.0,
            }
            for ch in chunks:
                w = len(ch) / len(mb)
                rows = [buf[k] for k in ch]
                batch = collate([self._expand(s) for s in rows])
                logits, v = self.net(*batch.inputs())
                logp = torch.log_softmax(masked_logits(logits, batch.mask), dim=1)
                k = max(len(s["pi_index"]) for s in rows)
                idx = torch.zeros((len(rows), k), dtype=torch.int64)
                pi = torch.zeros((len(rows), k), dtype=torch.float32)
                for j, s in enumerate(rows):
                    idx[j, : len(s["pi_index"])] = torch.from_numpy(s["pi_index"])
                    pi[j, : len(s["pi"])] = torch.from_numpy(s["pi"])
                ce = -(pi * logp.gather(1, idx)).sum(dim=1)
                if total is None:
                    p_loss = ce.mean()
                else:  # the chunk's share of the minibatch's weighted mean (0 when nothing in it weighs)
                    fw = torch.tensor([self._focus(s) for s in rows], dtype=torch.float32)
                    p_loss = (ce * fw).sum() / (total * w) if total > 0 else ce.sum() * 0.0
                z = torch.tensor([float(s["z"]) for s in rows])
                v_loss = 0.5 * (v - z).pow(2).mean()
                loss = p_loss + c.value_coef * v_loss
                if self.anchor is not None:
                    kl, v_gap = self.anchor_terms(batch, logp, v)
                    loss = loss + c.anchor_coef * kl + c.value_anchor_coef * v_gap
                    parts["anchor_kl"] += w * float(kl.detach())
                    parts["value_anchor"] += w * float(v_gap.detach())
                (loss * w).backward()
                with torch.no_grad():
                    top = idx.gather(1, pi.argmax(dim=1, keepdim=True)).squeeze(1)
                    parts["policy_accuracy"] += w * float((logp.argmax(dim=1) == top).float().mean())
                parts["policy_loss"] += w * float(p_loss.detach())
                parts["value_loss"] += w * float(v_loss.detach())
            nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
            self.opt.step()
            for key, val in parts.items():
                stats[key].append(val)
        self.net.eval()
        return {k: float(np.mean(v)) for k, v in stats.items()}

    def anchor_terms(self, batch: Any, logp: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The anchors on ``batch``, ``logp`` and ``v`` the network's masked log-policy and value there: the mean
        KL(start policy || network) over each row's legal actions, and the mean of 0.5 x (value - the start's
        value) ** 2.  Both 0 while the network has the start's weights."""
        if self.anchor is None:
            raise RuntimeError("anchor_terms needs the start network: set anchor_coef or value_anchor_coef > 0")
        with torch.no_grad():
            logits0, v0 = self.anchor(*batch.inputs())
            logp0 = torch.log_softmax(masked_logits(logits0, batch.mask), dim=1)
        p0 = legal_exp(logp0, batch.mask)
        terms = torch.where(batch.mask.bool(), p0 * (logp0 - logp), torch.zeros_like(logp))
        return terms.sum(dim=1).mean(), 0.5 * (v - v0).pow(2).mean()

    def iteration(self) -> dict[str, float]:
        """Play ``games_per_iteration`` games, then update; return the iteration's statistics."""
        new = []
        if self.cfg.teacher == "network":
            for _ in range(self.cfg.games_per_iteration):
                new += self.play()
        else:
            new = self._teacher_games()
        stats = self.update()
        self.iterations += 1
        ent = [-(s["pi"] * np.log(np.maximum(s["pi"], 1e-12))).sum() for s in new]
        stats["target_entropy"] = float(np.mean(ent)) if ent else float("nan")
        stats["new_samples"] = float(len(new))
        vh, self.visit_entropy = self.visit_entropy, []
        dis, self.disagreements = self.disagreements, []
        stats["disagreement_rate"] = float(np.mean(dis)) if dis else float("nan")
        stats["visit_entropy"] = float(np.mean(vh)) if vh else float("nan")
        rec, self.recent = self.recent, []
        if rec:
            stats["train_win_rate_vs_greedy"] = float(np.mean([r["win"] for r in rec]))
        return stats

    # ------------------------------------------------------------ state i/o
    def state_dict(self) -> dict[str, Any]:
        rest = {
            "iterations": self.iterations,
            "games": self.games,
            "samples": self.samples,
            "decisions": self.decisions,
            "search_seconds": self.search_seconds,
            "rng": self.rng.bit_generator.state,
            "search_rng": self.search_rng.bit_generator.state,
            "greedy_rng": self.greedy.rng.bit_generator.state,
            "buffer": self.buffer,
        }
        return {
            "net": self.net.state_dict(),
            "opt": self.opt.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "blob": torch.frombuffer(bytearray(pickle.dumps(rest)), dtype=torch.uint8),
        }

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        rest = pickle.loads(sd["blob"].numpy().tobytes())
        self.net.load_state_dict(sd["net"])
        self.opt.load_state_dict(sd["opt"])
        torch.set_rng_state(sd["torch_rng"])
        for k in ("iterations", "games", "samples", "decisions", "search_seconds", "buffer"):
            setattr(self, k, rest[k])
        self.rng.bit_generator.state = rest["rng"]
        self.search_rng.bit_generator.state = rest["search_rng"]
        self.greedy.rng.bit_generator.state = rest["greedy_rng"]


PROGRESS_FIELDS = [
    "iteration",
    "games",
    "samples",
    "decisions",
    "buffer",
    "seconds",
    "cpu_seconds",
    "search_seconds_per_decision",
    "policy_loss",
    "value_loss",
    "policy_accuracy",
    "target_entropy",
    "new_samples",
    "train_win_rate_vs_greedy",
    "eval_win_rate_vs_greedy",
    "visit_entropy",
    "anchor_kl",
    "value_anchor",
    "disagreement_rate",
]


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _payload(
    trainer: ExpertTrainer, cfg: ExpertTrainConfig, seconds: float, cpu: float, state: dict[str, Any] | None = None
) -> dict[str, Any]:
    d = cfg.to_dict()
    # the PPO section's reward scales: what PPOSearchPolicy.from_checkpoint reads for its values
    d["ppo"] = {"score_scale": cfg.expert.score_scale, "win_bonus": cfg.expert.win_bonus}
    return {
        "config": d,
        "shapes": dataclasses.asdict(trainer.shapes),
        "net_config": dataclasses.asdict(trainer.net.cfg),
        "trainer": trainer.state_dict() if state is None else state,
        "train_seconds": seconds,
        "train_cpu_seconds": cpu,
        "kind": "expert-iteration",
    }


def train_expert(
    cfg: ExpertTrainConfig,
    out: str | Path,
    resume: bool = True,
    progress: bool = True,
    max_iterations: int | None = None,
) -> ExpertTrainer:
    """Run expert iteration to ``cfg.run.total_iterations`` (or ``max_iterations`` more), checkpointing
    ``OUT/checkpoint.pt`` (atomic) and logging ``OUT/progress.csv``; resumes from the checkpoint."""
    validate_expert(cfg)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.run.torch_threads)
    trainer = ExpertTrainer(cfg.env_kwargs(), cfg.expert, seed=cfg.run.seed, game_workers=cfg.run.game_workers)
    try:
        _train_loop(trainer, cfg, out, resume, progress, max_iterations)
    finally:
        trainer.close()
    return trainer


def _train_loop(
    trainer: ExpertTrainer,
    cfg: ExpertTrainConfig,
    out: Path,
    resume: bool,
    progress: bool,
    max_iterations: int | None,
) -> None:
    ckpt = out / "checkpoint.pt"
    seconds = cpu_total = 0.0
    if resume and ckpt.exists():
        data = load_checkpoint(ckpt)
        old, new = data["config"], cfg.to_dict()
        if data.get("kind") != "expert-iteration":
            raise CheckpointError(f"{ckpt} is not an expert-iteration checkpoint; use another --out")
        old_expert = {**dataclasses.asdict(ExpertConfig()), **old["expert"]}  # (a key added since: its default)
        if old["game"] != new["game"] or old_expert != new["expert"] or old["run"]["seed"] != new["run"]["seed"]:
            raise CheckpointError(
                f"{ckpt} belongs to a run with another config (game, expert or seed differ); use another --out, "
                "or --no-resume to start over (only the run's length and logging may change on resume)"
            )
        trainer.load_state_dict(data["trainer"])
        seconds = float(data.get("train_seconds", 0.0))
        cpu_total = float(data.get("train_cpu_seconds", 0.0))
        if progress:
            print(f"resuming {out} at iteration {trainer.iterations} ({trainer.games} games)", flush=True)
        _cut_log(out / "progress.csv", trainer.iterations)
    else:
        ckpt.unlink(missing_ok=True)
        (out / "progress.csv").unlink(missing_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    goal = cfg.run.total_iterations
    if max_iterations is not None:
        goal = min(goal, trainer.iterations + max_iterations)
    while trainer.iterations < goal:
        t0, c0, w0 = time.perf_counter(), _cpu(), trainer.worker_cpu
        stats = trainer.iteration()
        seconds += time.perf_counter() - t0
        cpu_total += _cpu() - c0 + trainer.worker_cpu - w0  # this process's and its game workers' games
        row: dict[str, Any] = {
            "iteration": trainer.iterations,
            "games": trainer.games,
            "samples": trainer.samples,
            "decisions": trainer.decisions,
            "buffer": len(trainer.buffer),
            "seconds": round(seconds, 1),
            "cpu_seconds": round(cpu_total, 1),
            "search_seconds_per_decision": round(trainer.search_seconds / max(trainer.decisions, 1), 4),
            **stats,
        }
        if cfg.run.eval_every and trainer.iterations % cfg.run.eval_every == 0:
            from carc_env.baselines import GreedyPolicy

            from .evaluate import evaluate

            res = evaluate(
                PPOPolicy(trainer.net, name="expert"),
                GreedyPolicy(seed=cfg.run.seed + 12),
                cfg.run.eval_games,
                seed=10_000_000 + cfg.run.seed,
                env_kwargs=cfg.env_kwargs(),
            )
            row["eval_win_rate_vs_greedy"] = res["win_rate"]
        path = out / "progress.csv"
        new_file = not path.exists()
        with path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=PROGRESS_FIELDS, extrasaction="ignore")
            if new_file:
                w.writeheader()
            w.writerow(row)
        if progress:
            print(
                f"iteration {trainer.iterations}: {trainer.games} games, buffer {len(trainer.buffer)}, "
                f"policy loss {stats.get('policy_loss', float('nan')):.3f}, value loss "
                f"{stats.get('value_loss', float('nan')):.3f}, {row['cpu_seconds']} CPU-s"
                + (f", vs greedy {row['eval_win_rate_vs_greedy']:.3f}" if "eval_win_rate_vs_greedy" in row else ""),
                flush=True,
            )
        if trainer.iterations % cfg.run.checkpoint_every == 0 or trainer.iterations == goal:
            save_checkpoint(ckpt, _payload(trainer, cfg, seconds, cpu_total))
        if cfg.run.snapshot_every and trainer.iterations % cfg.run.snapshot_every == 0:
            snap = _payload(trainer, cfg, seconds, cpu_total, state={"net": trainer.net.state_dict()})
            snap["kind"] = "expert-iteration-snapshot"  # a player, not a point to resume from
            save_checkpoint(out / "snapshots" / f"iteration_{trainer.iterations}.pt", snap)


def _cut_log(path: Path, upto: int) -> None:
    """Drop the rows written after the checkpoint a run resumes from (they are about to be written again)."""
    if not path.exists():
        return
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("iteration", "").isdigit() and int(r["iteration"]) <= upto]
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=PROGRESS_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


__all__ = [
    "ExpertConfig",
    "ExpertRunConfig",
    "ExpertTrainConfig",
    "ExpertTrainer",
    "expert_config_from_dict",
    "load_expert_config",
    "policy_target",
    "improved_policy",
    "train_expert",
]
