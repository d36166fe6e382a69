"""Ray RLlib on its current ("new") API stack: multi-agent self-play PPO over the board tensor.

Install: ``python -m pip install -c constraints.txt -e ".[rllib]"``.  Train:
``python scripts/train_rllib.py --env-runners 2`` (a local Ray) or ``--address HOST:PORT`` (an
existing Ray cluster, ``docs/rllib.md``).

Pieces
------
:class:`CarcassonneMultiAgentEnv`
    RLlib ``MultiAgentEnv`` over :class:`carc_env.env.aec.raw_env`, turn-based: every ``reset`` /
    ``step`` returns an observation for the one agent that decides now (agents ``player_0`` ..,
    RLlib sends back an action for exactly that agent).  ``rewards`` names *every* agent at every
    step (the reward mode's per-step reward, 0.0 mostly), so RLlib's episode credits each agent what
    it earned while others moved: its ``MultiAgentEpisode`` holds an agent's reward until that agent
    observes again or the game ends.  When the game ends every agent gets a final observation,
    ``terminateds[agent] = True`` and ``"__all__": True``; their infos carry ``final_scores``
    (absolute seats) and ``winners`` (agent names).  Options (``env_config``) are the env options
    of :mod:`carc_env.env.options` plus ``illegal_action`` / ``illegal_reward``, as in the
    Gymnasium env: by default (``"loss"``, PettingZoo's classic convention) an action the mask
    disables ends the episode, the offender gets ``illegal_reward`` (-1.0), the others 0, and every
    info holds ``illegal_action`` and ``illegal_reason``; RLlib's own environment check steps with
    unmasked samples, which is why this is the default.  ``"raise"`` raises
    :class:`carc_env.IllegalActionError` instead.  The module below masks, so in training neither
    happens.  An action outside ``Discrete(N)``, or one for an agent that does not decide now,
    always raises.
:class:`CarcassonneRLModule`
    A ``TorchRLModule`` with RLlib's ``ValueFunctionAPI`` (what PPO needs) that reads the
    observation dict itself: a convolutional trunk over ``board`` (channels scaled by their maximum),
    a vector from the trunk's mean and max pools, ``globals`` and ``windows``; a fully convolutional
    placement head whose ``(4, rows, cols)`` output flattens onto the tile range of the action space
    (index ``rot*rows*cols + row*cols + col``, as the codec lays it out), conditioned on the vector;
    a dense head for the other actions (follower, pass, expansion phases); a value head.  Masking is
    inside the module: logits of disabled actions are set to :data:`MASKED_LOGIT` (-1e9, finite, so
    an all-zero mask on a final observation gives no NaN).  With the env option
    ``action_features=True`` (:mod:`carc_env.encoding.spec`) a shared MLP scores each legal
    placement's row of ``place_features`` and adds the score to that placement's logit (at
    ``place_index``), as the example agents' network does.  ``model_config`` keys (all optional):
    ``conv_channels`` (default ``(32, 32)``, the example agents' width), ``hidden`` (128).
Self-play
    :func:`self_play_mapping`: every seat maps to the one shared module ``"main"``.
    :func:`frozen_opponent_mapping` (``num_players``): one seat per episode (a stable hash of the
    episode id) plays ``"main"``, the others a frozen copy ``"frozen"`` that
    :class:`FrozenOpponentUpdate` refreshes from ``"main"`` every ``update_every`` iterations.
:func:`ppo_config`
    A ready ``PPOConfig`` (new API stack, torch) wiring all of the above; tune it further with the
    usual ``config.training(...)`` / ``config.env_runners(...)`` calls.
:func:`load_policy` / :class:`RLlibPolicy`
    A trained module as a player with ``act(obs, env) -> int`` (the baselines' protocol), loaded from
    an algorithm checkpoint directory (``Algorithm.save_to_path``), a ``MultiRLModule`` directory or
    a single ``RLModule`` directory, without starting Ray.  ``agents/evaluate.py`` and
    ``scripts/evaluate.py`` play it like any other player.

Nothing here imports ``agents``; ``carc_env`` outside :mod:`carc_env.integrations` never imports Ray.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..core import ConfigError, IllegalActionError
from ..env.aec import raw_env
from ..env.gym_env import ILLEGAL_ACTION_MODES
from ..env.options import EnvOptions
from . import missing_extra

try:
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule, MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from torch import nn
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("Ray RLlib and torch", "rllib", exc) from exc

MAIN = "main"
FROZEN = "frozen"
MASKED_LOGIT = -1e9
DEFAULT_MODEL_CONFIG: dict[str, Any] = {"conv_channels": (32, 32), "hidden": 128}
WINDOWS_SCALE = 0.25  # stained-glass token counts are small integers


# ---------------------------------------------------------------------------------------------- env
class CarcassonneMultiAgentEnv(MultiAgentEnv):
    """Turn-based RLlib ``MultiAgentEnv`` over the AEC env.  See the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        options = dict(config or {})  # RLlib passes an EnvContext (a dict with worker indices as attributes)
        self.illegal_action = options.pop("illegal_action", "loss")
        self.illegal_reward = options.pop("illegal_reward", -1.0)
        if self.illegal_action not in ILLEGAL_ACTION_MODES:
            raise ConfigError(
                f"option illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {self.illegal_action!r}"
            )
        r = self.illegal_reward
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r):
            raise ConfigError(f"option illegal_reward must be a finite number, got {r!r}")
        self.aec = raw_env(**options)
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        space = self.aec.observation_space(self.possible_agents[0])
        act = self.aec.action_space(self.possible_agents[0])
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act)
        self._over = False

    @property
    def game(self) -> Any:
        return self.aec.game

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        # the env's cached arrays are shared between callers: RLlib keeps these in its episodes
        return {k: np.array(v) for k, v in self.aec.observe(agent).items()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._over = False
        if self.aec.match.over:  # only with an empty forced draw order: nothing to decide
            raise ConfigError("the forced draw order leaves no decision to make; give at least one tile")
        agent = self.aec.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        aec = self.aec
        match = aec.match  # its cheap accessors: on the compiled engine aec.game is rebuilt by replay
        if not match.started:
            raise IllegalActionError("call reset() before step()")
        if match.over or self._over:
            raise IllegalActionError("the episode is over; call reset()")
        agent = aec.agent_selection
        if agent not in action_dict or len(action_dict) != 1:
            raise IllegalActionError(
                f"turn-based: exactly one action, for {agent!r} (who decides now), expected; got {sorted(action_dict)}"
            )
        raw = np.asarray(action_dict[agent])
        if raw.shape != () or raw.dtype.kind not in "iu" or not 0 <= int(raw) < aec.codec.n:
            raise IllegalActionError(
                f"{agent}'s action {action_dict[agent]!r} is outside the action space Discrete({aec.codec.n})"
            )
        action = int(raw)
        if not aec.match.mask()[action]:
            reason = (
                f"{agent} chose action {action}, which its action mask disables (phase {match.phase!r}, "
                f"{int(aec.match.mask().sum())} legal action(s)); mask the logits (CarcassonneRLModule does) or "
                "sample from obs['action_mask']"
            )
            if self.illegal_action == "raise":
                raise IllegalActionError(reason)
            rewards = dict.fromkeys(self.possible_agents, 0.0)
            rewards[agent] = float(self.illegal_reward)
            return self._end(rewards, {"illegal_action": action, "illegal_reason": reason})
        aec.step(action)
        rewards = {a: float(aec.rewards[a]) for a in self.possible_agents}
        if match.over:
            scores = match.scores
            best = max(scores)
            return self._end(
                rewards,
                {
                    "final_scores": tuple(scores),
                    "winners": tuple(self.possible_agents[i] for i, s in enumerate(scores) if s == best),
                },
            )
        nxt = aec.agent_selection
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {nxt: {}}

    def _end(
        self, rewards: dict[str, float], info: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """The episode's last step: a final observation, terminated and ``info`` for every agent."""
        obs = {a: self._observe(a) for a in self.possible_agents}
        terminateds = dict.fromkeys(self.possible_agents, True)
        terminateds["__all__"] = True
        self._over = True
        return obs, rewards, terminateds, {"__all__": False}, {a: dict(info) for a in self.possible_agents}

    def render(self) -> Any:
        return self.aec.render()


# ---------------------------------------------------------------------------------------------- module
def _model_config(raw: Any) -> dict[str, Any]:
    """Our keys from RLlib's model_config (a dict or RLlib's DefaultModelConfig; other keys are RLlib's)."""
    if raw is None:
        raw = {}
    elif not isinstance(raw, Mapping):
        raw = getattr(raw, "__dict__", {})
    cfg = dict(DEFAULT_MODEL_CONFIG)
    for key in DEFAULT_MODEL_CONFIG:
        if key in raw and raw[key] is not None:
            cfg[key] = raw[key]
    channels = cfg["conv_channels"]
    if isinstance(channels, int) or not channels or not all(isinstance(c, int) and c > 0 for c in channels):
        raise ConfigError(f"model_config conv_channels must be a non-empty list of positive ints, got {channels!r}")
    if not isinstance(cfg["hidden"], int) or cfg["hidden"] < 1:
        raise ConfigError(f"model_config hidden must be a positive int, got {cfg['hidden']!r}")
    return cfg


class CarcassonneRLModule(TorchRLModule, ValueFunctionAPI):
    """Masking conv policy/value module over the carc_env observation dict.  See the module docstring."""

    def setup(self) -> None:
        space = self.observation_space
        keys = ("board", "globals", "windows", "action_mask")
        if not hasattr(space, "spaces") or any(k not in space.spaces for k in keys):
            raise ConfigError(
                f"CarcassonneRLModule needs carc_env's Dict observation space with keys {list(keys)}, got {space}"
            )
        cfg = _model_config(self.model_config)
        c, rows, cols = space["board"].shape
        n_actions = int(self.action_space.n)
        self.tile_actions = 4 * rows * cols
        if n_actions < self.tile_actions or space["action_mask"].shape != (n_actions,):
            raise ConfigError(
                f"action space Discrete({n_actions}) does not start with the 4 x {rows} x {cols} tile range of the "
                "board window (carc_env's codec layout)"
            )
        high = np.asarray(space["board"].high, dtype=np.float32).reshape(c, -1).max(axis=1)
        self.register_buffer("board_scale", torch.from_numpy(1.0 / np.maximum(high, 1.0)).view(1, c, 1, 1))
        layers: list[nn.Module] = []
        prev = c
        for width in cfg["conv_channels"]:
            layers += [nn.Conv2d(prev, width, 3, padding=1), nn.ReLU()]
            prev = width
        self.trunk = nn.Sequential(*layers)
        hidden = cfg["hidden"]
        n_vec = 2 * prev + int(np.prod(space["globals"].shape)) + int(np.prod(space["windows"].shape))
        self.vector = nn.Sequential(nn.Linear(n_vec, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.place_bias = nn.Linear(hidden, prev)
        self.place_head = nn.Conv2d(prev, 4, 1)
        self.other_head = nn.Linear(hidden, n_actions - self.tile_actions)
        self.value_head = nn.Linear(hidden, 1)
        self.action_features = "place_features" in space.spaces and "place_index" in space.spaces
        if self.action_features:  # the env's option action_features=True
            self.place_scorer = nn.Sequential(
                nn.Linear(space["place_features"].shape[1], hidden), nn.ReLU(), nn.Linear(hidden, 1)
            )

    # -------------------------------------------------------------------------------- forward passes
    def _encode(self, obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        board = obs["board"].float() * self.board_scale
        fmap = self.trunk(board)
        vec = torch.cat(
            [
                fmap.mean(dim=(2, 3)),
                fmap.amax(dim=(2, 3)),
                obs["globals"].float(),
                obs["windows"].float().flatten(1) * WINDOWS_SCALE,
            ],
            dim=1,
        )
        return fmap, self.vector(vec)

    def _masked_logits(self, obs: Mapping[str, torch.Tensor], fmap: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
        tiles = self.place_head(fmap + self.place_bias(vec)[:, :, None, None]).flatten(1)
        if self.action_features:
            rows = obs["place_features"].float()
            score = self.place_scorer(rows).squeeze(-1) * rows[..., 0]  # padding rows (present 0) add nothing
            tiles = tiles.scatter_add(1, obs["place_index"].long(), score)
        logits = torch.cat([tiles, self.other_head(vec)], dim=1)
        legal = obs["action_mask"] > 0
        return torch.where(legal, logits, torch.full_like(logits, MASKED_LOGIT))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        fmap, vec = self._encode(obs)
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(obs, fmap, vec)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        fmap, vec = self._encode(obs)
        # the embeddings let PPO's value loss reuse this pass (compute_values(batch, embeddings))
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(obs, fmap, vec), Columns.EMBEDDINGS: vec}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            _, embeddings = self._encode(batch[Columns.OBS])
        return self.value_head(embeddings).squeeze(-1)


# ---------------------------------------------------------------------------------------------- self-play
def self_play_mapping(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared, trained module ``"main"``."""
    return MAIN


def frozen_opponent_mapping(num_players: int) -> Callable[..., str]:
    """One seat per episode plays ``"main"``; the others play ``"frozen"`` (see :class:`FrozenOpponentUpdate`).

    The ``"main"`` seat rotates with the episodes this process has seen (episode k: seat ``k % num_players``),
    so a seeded run picks the same seats again (RLlib's episode ids are random); every call for one episode
    gets the same answer."""
    seen: OrderedDict[str, int] = OrderedDict()  # episode id -> its number in this process
    numbers = itertools.count()

    def mapping(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
        key = str(getattr(episode, "id_", ""))
        if key not in seen:
            seen[key] = next(numbers)
            if len(seen) > 4096:  # long finished episodes: forget them
                seen.popitem(last=False)
        learner = seen[key] % num_players
        seat = int(str(agent_id).rsplit("_", 1)[-1])
        return MAIN if seat == learner else FROZEN

    return mapping


class FrozenOpponentUpdate:
    """``on_train_result`` callback: copy ``"main"``'s weights into ``"frozen"`` every ``update_every`` iterations."""

    def __init__(self, update_every: int) -> None:
        if not isinstance(update_every, int) or update_every < 1:
            raise ConfigError(f"update_every must be a positive int, got {update_every!r}")
        self.update_every = update_every

    def __call__(self, *, algorithm: Any, result: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if algorithm.iteration % self.update_every:
            return
        state = algorithm.learner_group.get_state(components=f"learner/rl_module/{MAIN}")
        main_state = state["learner"]["rl_module"][MAIN]
        # Algorithm.set_state also pushes the learner's weights to every EnvRunner
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {FROZEN: main_state}}}})
        if result is not None:
            result["frozen_opponent_updated"] = algorithm.iteration


# ---------------------------------------------------------------------------------------------- config
def ppo_config(
    env_options: Mapping[str, Any] | None = None,
    *,
    env_runners: int = 2,
    envs_per_runner: int = 1,
    frozen_opponent_every: int | None = None,
    model_config: Mapping[str, Any] | None = None,
    train_batch_size: int = 4000,
    minibatch_size: int = 256,
    num_epochs: int = 3,
    lr: float = 3e-4,
    entropy_coeff: float = 0.01,
    seed: int | None = None,
) -> PPOConfig:
    """Self-play PPO on the new API stack (see the module docstring); options are validated here."""
    env_options = dict(env_options or {})
    parsed = EnvOptions.from_kwargs(**env_options)  # bad options fail now, not in a worker
    num_players = parsed.num_players
    if parsed.obs_format != "dict":
        raise ConfigError(
            f"the RLlib module reads the dict observation (board, globals, ...); obs_format={parsed.obs_format!r} "
            "is for tools of PettingZoo's classic convention: leave obs_format out"
        )
    _model_config(model_config)
    for name, value in (("env_runners", env_runners),):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{name} must be an int >= 0 (0 samples in the driver), got {value!r}")
    for name, value in (("envs_per_runner", envs_per_runner), ("train_batch_size", train_batch_size),
                        ("minibatch_size", minibatch_size), ("num_epochs", num_epochs)):  # fmt: skip
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive int, got {value!r}")
    spec = RLModuleSpec(module_class=CarcassonneRLModule, model_config=dict(model_config or {}))
    specs = {MAIN: spec}
    mapping: Callable[..., str] = self_play_mapping
    if frozen_opponent_every is not None:
        specs[FROZEN] = RLModuleSpec(module_class=CarcassonneRLModule, model_config=dict(model_config or {}))
        mapping = frozen_opponent_mapping(num_players)
    config = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .framework("torch")
        .environment(CarcassonneMultiAgentEnv, env_config=env_options)
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            entropy_coeff=entropy_coeff,
        )
    )
    if frozen_opponent_every is not None:
        config = config.callbacks(on_train_result=FrozenOpponentUpdate(frozen_opponent_every))
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


# ---------------------------------------------------------------------------------------------- players
class RLlibPolicy:
    """An RLModule as a player: ``act(obs, env) -> int``, a sample of the masked policy (the default:
    the policy as trained, from its own generator, so ``seed(s)`` makes its games repeatable) or its
    argmax (``deterministic=True``)."""

    uses_observation = True

    def __init__(self, module: RLModule, name: str = "rllib", deterministic: bool = False, seed: int = 0) -> None:
        self.module = module
        self.name = name
        self.deterministic = deterministic
        self.gen = torch.Generator().manual_seed(seed)
        if isinstance(module, nn.Module):
            module.eval()

    def seed(self, seed: int | None) -> None:
        self.gen = torch.Generator().manual_seed(0 if seed is None else int(seed))

    @torch.no_grad()
    def act_batch(self, observations: list[Mapping[str, np.ndarray]]) -> list[int]:
        keys = tuple(self.module.observation_space.spaces)
        obs = {k: torch.from_numpy(np.stack([np.asarray(o[k]) for o in observations])) for k in keys}
        logits = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        if self.deterministic:
            return logits.argmax(dim=1).tolist()
        return torch.multinomial(torch.softmax(logits, dim=1), 1, generator=self.gen).squeeze(1).tolist()

    def act(self, obs: Mapping[str, np.ndarray], env: Any = None) -> int:
        if any(k not in obs for k in self.module.observation_space.spaces):  # trained with action_features
            match = getattr(getattr(env, "unwrapped", env), "match", None)
            if match is None or not hasattr(match, "action_features"):
                raise ConfigError(f"{self.name} reads the action features: create the env with action_features=True")
            obs = {**obs, **match.action_features(match.player)}
        action = self.act_batch([obs])[0]
        if not obs["action_mask"][action]:  # cannot happen with CarcassonneRLModule's masking
            raise IllegalActionError(f"{self.name} chose action {action}, which the mask disables")
        return int(action)

    def __repr__(self) -> str:
        return f"RLlibPolicy({self.name!r})"


def _module_dir(path: Path, module_id: str) -> Path:
    """The RLModule directory for ``module_id`` inside an algorithm or MultiRLModule checkpoint (or path itself)."""
    candidates = [
        path / "learner_group" / "learner" / "rl_module" / module_id,  # Algorithm.save_to_path
        path / "rl_module" / module_id,  # a Learner checkpoint
        path / module_id,  # a MultiRLModule checkpoint
        path,  # a single RLModule checkpoint
    ]
    for cand in candidates:
        if (cand / "class_and_ctor_args.pkl").is_file() and any(cand.glob("module_state.*")):
            return cand
    found = sorted({p.parent.name for p in path.glob("**/module_state.*")} - {"rl_module"})
    raise FileNotFoundError(
        f"{path} holds no RLModule {module_id!r} (looked for an RLlib algorithm checkpoint, a MultiRLModule or an "
        f"RLModule directory); modules found: {found or 'none'}"
    )


def load_policy(
    path: str | Path,
    module_id: str = MAIN,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    deterministic: bool = False,
    name: str | None = None,
) -> RLlibPolicy:
    """An RLlib checkpoint as a player (no Ray needed), sampling its masked policy (``deterministic=True``:
    the argmax).  With ``env_kwargs``, the module must fit that env."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"RLlib checkpoint {path} does not exist")
    module = RLModule.from_checkpoint(_module_dir(path.resolve(), module_id))
    if isinstance(module, MultiRLModule):
        raise FileNotFoundError(
            f"{path} is a MultiRLModule without {module_id!r}; its modules: {sorted(module.keys())}"
        )
    if env_kwargs is not None:
        env = raw_env(**dict(env_kwargs))
        agent = env.possible_agents[0]
        want, have = env.observation_space(agent), module.observation_space
        for key in ("board", "globals", "windows", "action_mask"):
            if want[key].shape != have[key].shape:
                raise ConfigError(
                    f"RLlib checkpoint {path} was trained on observations with {key} of shape {have[key].shape}, "
                    f"this env gives {want[key].shape}: evaluate it with the env options it was trained with"
                )
    return RLlibPolicy(module, name=name or path.name, deterministic=deterministic)


__all__ = [
    "CarcassonneMultiAgentEnv",
    "CarcassonneRLModule",
    "FROZEN",
    "FrozenOpponentUpdate",
    "MAIN",
    "MASKED_LOGIT",
    "RLlibPolicy",
    "frozen_opponent_mapping",
    "load_policy",
    "ppo_config",
    "self_play_mapping",
]
