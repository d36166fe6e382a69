"""Stable-Baselines3 and sb3-contrib's ``MaskablePPO`` through the Gymnasium env.

Install: ``python -m pip install -c constraints.txt -e ".[sb3]"``.  Train:
``python scripts/train_sb3.py`` (an opponent pool of baselines, ``SubprocVecEnv`` workers).

Pieces
------
:func:`make_vec_env`
    SB3's ``make_vec_env`` over the registered id ``carc_env/Carcassonne-v0``
    (:class:`carc_env.env.gym_env.CarcassonneGymEnv`): ``n_envs`` games in ``SubprocVecEnv`` worker
    processes (``subprocess=False``: ``DummyVecEnv``, in this process), each with a ``Monitor``;
    ``opponents`` is the pool every opponent seat draws from at each reset.  sb3-contrib reads the
    learner's legal actions through the env's ``action_masks()``
    (``sb3_contrib.common.maskable.utils.get_action_masks(vec_env)``), in worker processes too.
:class:`CarcassonneFeaturesExtractor`
    A features extractor for the dict observation (``policy_kwargs={"features_extractor_class":
    CarcassonneFeaturesExtractor}``; :func:`policy_kwargs` builds that): a convolutional trunk over
    ``board`` (channels scaled by their maximum; SB3 does not treat it as an image), its mean and
    max pools, ``globals`` and ``windows``, into ``features_dim`` features.  ``action_mask`` is not
    a feature: ``MaskablePPO`` applies it to the action distribution.  With the env option
    ``action_features=True`` (:mod:`carc_env.encoding.spec`) it also reads the one-ply action
    features: each placement row through a small shared MLP, pooled (mean and max over the real
    rows), and the follower spots' rows flattened.
:func:`load_policy` / :class:`SB3Policy`
    A saved ``MaskablePPO`` model as a player with ``act(obs, env) -> int`` (the baselines'
    protocol), so ``agents/evaluate.py`` plays it against the baselines like any other player.  It
    samples from the masked policy by default (seeded: ``seed(s)``); ``deterministic=True`` plays
    the argmax.

Nothing here imports ``agents``; ``carc_env`` outside :mod:`carc_env.integrations` never imports SB3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core import ConfigError, IllegalActionError
from ..env.aec import raw_env
from ..registration import GYM_ID
from . import missing_extra

try:
    import torch
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env as _sb3_make_vec_env
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv
    from torch import nn
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("stable-baselines3, sb3-contrib and torch", "sb3", exc) from exc

WINDOWS_SCALE = 0.25  # stained-glass token counts are small integers
PLACE_HIDDEN = 32  # width of the per-placement MLP (with the action features)
OBS_KEYS = ("board", "globals", "windows", "action_mask")


class CarcassonneFeaturesExtractor(BaseFeaturesExtractor):
    """Conv trunk over the board plus globals and windows.  See the module docstring."""

    def __init__(
        self, observation_space: spaces.Dict, conv_channels: Sequence[int] = (32, 32), features_dim: int = 256
    ) -> None:
        if not isinstance(observation_space, spaces.Dict) or any(k not in observation_space.spaces for k in OBS_KEYS):
            raise ConfigError(
                f"CarcassonneFeaturesExtractor needs carc_env's Dict observation space with keys {list(OBS_KEYS)}, "
                f"got {observation_space} (obs_format='classic' flattens it: leave that option out to use this "
                "extractor, or use SB3's default extractor on the classic observation)"
            )
        if (
            isinstance(conv_channels, int)
            or not conv_channels
            or not all(isinstance(c, int) and c > 0 for c in conv_channels)
        ):
            raise ConfigError(f"conv_channels must be a non-empty list of positive ints, got {conv_channels!r}")
        if not isinstance(features_dim, int) or features_dim < 1:
            raise ConfigError(f"features_dim must be a positive int, got {features_dim!r}")
        super().__init__(observation_space, features_dim)
        board = observation_space["board"]
        c = board.shape[0]
        high = np.asarray(board.high, dtype=np.float32).reshape(c, -1).max(axis=1)
        self.register_buffer("board_scale", torch.from_numpy(1.0 / np.maximum(high, 1.0)).view(1, c, 1, 1))
        layers: list[nn.Module] = []
        prev = c
        for width in conv_channels:
            layers += [nn.Conv2d(prev, width, 3, padding=1), nn.ReLU()]
            prev = width
        self.trunk = nn.Sequential(*layers)
        n_in = 2 * prev + int(np.prod(observation_space["globals"].shape))
        n_in += int(np.prod(observation_space["windows"].shape))
        self.action_features = "place_features" in observation_space.spaces and "spots" in observation_space.spaces
        if self.action_features:  # the env's option action_features=True
            self.place_mlp = nn.Sequential(
                nn.Linear(observation_space["place_features"].shape[1], PLACE_HIDDEN), nn.ReLU()
            )
            n_in += 2 * PLACE_HIDDEN + int(np.prod(observation_space["spots"].shape))
        self.head = nn.Sequential(nn.Linear(n_in, features_dim), nn.ReLU())

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        fmap = self.trunk(observations["board"].float() * self.board_scale)
        vec = torch.cat(
            [
                fmap.mean(dim=(2, 3)),
                fmap.amax(dim=(2, 3)),
                observations["globals"].float(),
                observations["windows"].float().flatten(1) * WINDOWS_SCALE,
                *self._action_parts(observations),
            ],
            dim=1,
        )
        return self.head(vec)

    def _action_parts(self, observations: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        if not self.action_features:
            return []
        rows = observations["place_features"].float()
        present = rows[..., :1]  # column "present": 1 on the real rows, 0 on the padding
        h = self.place_mlp(rows) * present
        mean = h.sum(dim=1) / present.sum(dim=1).clamp(min=1.0)
        return [mean, h.amax(dim=1), observations["spots"].float().flatten(1)]


def policy_kwargs(
    conv_channels: Sequence[int] = (32, 32), features_dim: int = 256, net_arch: Any = None
) -> dict[str, Any]:
    """``policy_kwargs`` for ``MaskablePPO("MultiInputPolicy", ...)`` with :class:`CarcassonneFeaturesExtractor`."""
    kwargs: dict[str, Any] = {
        "features_extractor_class": CarcassonneFeaturesExtractor,
        "features_extractor_kwargs": {"conv_channels": tuple(conv_channels), "features_dim": features_dim},
    }
    if net_arch is not None:
        kwargs["net_arch"] = net_arch
    return kwargs


def make_vec_env(
    n_envs: int = 2,
    *,
    opponents: Any = None,
    seed: int | None = None,
    subprocess: bool = True,
    monitor_dir: str | None = None,
    **env_options: Any,
) -> VecEnv:
    """``n_envs`` Gymnasium envs (``carc_env/Carcassonne-v0``) for SB3; see the module docstring."""
    if not isinstance(n_envs, int) or isinstance(n_envs, bool) or n_envs < 1:
        raise ConfigError(f"n_envs must be a positive int, got {n_envs!r}")
    # fail here, in this process, on a bad option rather than in every worker
    raw_env(**{k: v for k, v in env_options.items() if k not in ("learner_seat", "illegal_action", "illegal_reward")})
    env_kwargs = dict(env_options)
    if opponents is not None:
        env_kwargs["opponents"] = opponents
    return _sb3_make_vec_env(
        GYM_ID,
        n_envs=n_envs,
        seed=seed,
        env_kwargs=env_kwargs,
        monitor_dir=monitor_dir,
        vec_env_cls=SubprocVecEnv if subprocess else DummyVecEnv,
    )


class SB3Policy:
    """A ``MaskablePPO`` model as a player: ``act(obs, env) -> int``.

    It samples from the masked policy (``deterministic=False``, the default: the policy as it was
    trained, with its own seeded generator, so ``seed(s)`` makes its games repeatable), or plays the
    masked argmax (``deterministic=True``).  A briefly trained policy's argmax can be much weaker than
    its samples (e.g. the same never-chosen move everywhere), so evaluate with samples unless you mean
    the greedy policy."""

    uses_observation = True

    def __init__(self, model: MaskablePPO, name: str = "sb3", deterministic: bool = False, seed: int = 0) -> None:
        self.model = model
        self.name = name
        self.deterministic = deterministic
        self._keys = tuple(model.observation_space.spaces)
        self.gen = torch.Generator().manual_seed(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the sampling stream (the evaluation calls it before every game)."""
        self.gen = torch.Generator().manual_seed(0 if seed is None else int(seed))

    def act(self, obs: Mapping[str, np.ndarray], env: Any = None) -> int:
        mask = np.asarray(obs["action_mask"]).astype(bool)
        if any(k not in obs for k in self._keys):  # a model trained with action_features, an env without
            match = getattr(getattr(env, "unwrapped", env), "match", None)
            if match is None or not hasattr(match, "action_features"):
                missing = [k for k in self._keys if k not in obs]
                raise ConfigError(f"{self.name} reads {missing}: create the env with action_features=True")
            obs = {**obs, **match.action_features(match.player)}
        features = {k: np.asarray(obs[k]) for k in self._keys}
        if self.deterministic:
            action, _ = self.model.predict(features, action_masks=mask, deterministic=True)
        else:
            policy = self.model.policy
            tensors, _ = policy.obs_to_tensor(features)
            with torch.no_grad():
                probs = policy.get_distribution(tensors, action_masks=mask[None]).distribution.probs[0]
            action = torch.multinomial(probs, 1, generator=self.gen).item()
        action = int(action)
        if not mask[action]:  # cannot happen: MaskablePPO masks the distribution
            raise IllegalActionError(f"{self.name} chose action {action}, which the mask disables")
        return action

    def __repr__(self) -> str:
        return f"SB3Policy({self.name!r})"


def load_policy(
    path: str | Path,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    deterministic: bool = False,
    name: str | None = None,
) -> SB3Policy:
    """A saved ``MaskablePPO`` (``model.save(path)``) as a player (sampling; ``deterministic=True``: argmax).
    With ``env_kwargs``, it must fit that env."""
    path = Path(path)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.is_file():
        raise FileNotFoundError(f"SB3 model {path} does not exist (a .zip written by model.save)")
    model = MaskablePPO.load(str(path), device="cpu")
    if env_kwargs is not None:
        env = raw_env(**dict(env_kwargs))
        want = env.observation_space(env.possible_agents[0])
        for key in OBS_KEYS:
            have = model.observation_space[key].shape
            if want[key].shape != have:
                raise ConfigError(
                    f"SB3 model {path} was trained on observations with {key} of shape {have}, this env gives "
                    f"{want[key].shape}: evaluate it with the env options it was trained with"
                )
    return SB3Policy(model, name=name or path.stem, deterministic=deterministic)


__all__ = [
    "CarcassonneFeaturesExtractor",
    "SB3Policy",
    "load_policy",
    "make_vec_env",
    "policy_kwargs",
]
