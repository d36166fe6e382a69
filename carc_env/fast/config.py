"""What the compiled engine reads of a configuration: one :class:`EngineConfig`.

The game's rule set, resolved once, plus the environment's choices the
kernels need (observation window, reward mode and scale).  An environment's
options resolve into one (:meth:`carc_env.env.options.EnvOptions.engine_config`,
built once per options object); a search's play-out builds one from a game's
configuration (:meth:`EngineConfig.for_rules`).  Choosing the engine
(:func:`carc_env.fast.select_engine`, :func:`~carc_env.fast.tables.coverage`)
and building it (:func:`~carc_env.fast.tables.build_layout`,
:class:`~carc_env.fast.engine.FastBatch`) read only this object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import RuleSet
from ..encoding.spec import DEFAULT_PLACEMENT_ROWS

REWARD_MODES = ("win_loss", "score_diff", "score_delta")
DEFAULT_WINDOW = (27, 27)


@dataclass(frozen=True)
class EngineConfig:
    """A configuration as the compiled engine reads it (see the module docstring)."""

    rules: RuleSet
    """The resolved rule set (``core.config.ruleset``): the game's configuration and its plug-ins."""
    window: tuple[int, int] = DEFAULT_WINDOW
    """Observation window (rows, cols)."""
    reward: str = "win_loss"
    """Reward mode, one of :data:`REWARD_MODES`."""
    reward_scale: float = 0.01
    """Points -> reward factor of the score rewards."""
    action_features: bool = False
    """Whether observations carry the one-ply action features (their kernels must cover the rules too:
    :func:`~carc_env.fast.tables.features_coverage`)."""
    action_feature_rows: int = DEFAULT_PLACEMENT_ROWS
    """Placement rows of those features (a fixed shape)."""

    def __post_init__(self) -> None:
        if not isinstance(self.rules, RuleSet):
            raise TypeError(
                f"EngineConfig.rules must be a RuleSet (core.config.ruleset(config)), got {type(self.rules).__name__}"
            )
        if self.reward not in REWARD_MODES:
            raise ValueError(f"EngineConfig.reward must be one of {list(REWARD_MODES)}, got {self.reward!r}")

    @classmethod
    def for_rules(cls, rules: RuleSet) -> EngineConfig:
        """The default window and reward (what a play-out needs: neither observations nor rewards)."""
        return cls(rules)

    @property
    def num_players(self) -> int:
        return self.rules.config.num_players

    @property
    def followers(self) -> int:
        """Followers per player: the rule set's (``GameConfig.followers`` unless a plug-in sets them, a map's 9)."""
        return self.rules.followers


def engine_config(options: Any) -> EngineConfig:
    """``options`` itself if it is an :class:`EngineConfig`, else its ``engine_config()`` (env options)."""
    if isinstance(options, EngineConfig):
        return options
    get = getattr(options, "engine_config", None)
    if get is None:
        raise TypeError(
            f"the compiled engine takes an EngineConfig or env options (EnvOptions), got {type(options).__name__}"
        )
    return get()


__all__ = ["EngineConfig", "engine_config"]
