"""Environment options: parsing and validation.

Every environment of :mod:`carc_env.env` takes the same keyword options,
validated here; an unknown key or a bad value raises
:class:`~carc_env.core.ConfigError` (a ``ValueError``) naming the option and
what is allowed.

=========================  ==========================  =============================================================
option                     default                     meaning
=========================  ==========================  =============================================================
``num_players``            ``2``                       2 to 5 players (agents ``player_0`` ..)
``expansions``             ``("base",)``               expansion keys (tuple/list of str; the base game is added if missing)
``rules``                  ``{}``                      rule options per expansion key, passed to ``GameConfig.options``
``followers``              ``7``                       followers per player; ``followers * num_players`` at most 255
                                                       (the observation counts followers in ``uint8`` planes)
``reward``                 ``"win_loss"``              ``"win_loss"``, ``"score_diff"`` or ``"score_delta"`` (see aec)
``reward_scale``           ``0.01``                    points -> reward factor of the score rewards
``window``                 ``None``                    observation window ``(rows, cols)``, each 3..255; ``None``: the
                                                       rule set's :func:`~carc_env.encoding.default_window`
                                                       (``DEFAULT_WINDOW``, 27 x 27; on a printed board, the board)
``render_mode``            ``None``                    ``None``, ``"ansi"``, ``"rgb_array"``, ``"human"`` or ``"svg"``
``tile_px``                ``64``                      pixels per tile of ``rgb_array`` renders
``engine``                 ``"auto"``                  ``"auto"``: the compiled engine (:mod:`carc_env.fast`) where it
                                                       covers the configuration, else the Python one; ``"python"``:
                                                       always the Python reference; ``"numba"``: the compiled engine or
                                                       a ConfigError saying why not
``obs_format``             ``"dict"``                  ``"dict"``: observations are ``{board, globals, windows, action_mask}``;
                                                       ``"classic"``: PettingZoo's classic convention, ``{"observation":
                                                       float32 vector, "action_mask": int8}`` (the vector is ``board ++
                                                       globals ++ windows`` flattened, :func:`~carc_env.env.wrappers.flat_layout`
                                                       slices it), for tools written for the classic games
``action_features``        ``False``                   add the one-ply action features to every observation
                                                       (``place_index``, ``place_features``, ``spots``:
                                                       :mod:`carc_env.encoding.spec`), from either engine
``action_feature_rows``    ``128``                     placement rows of those features (fixed shape; a legal
                                                       placement beyond them is counted in
                                                       ``info["placements_without_features"]``), 1..4096
``render_max_px``          ``2048``                    cap on the board part of an ``rgb_array`` frame, in pixels per
                                                       side: on a board too large for ``tile_px`` the tiles are
                                                       drawn smaller (down to 8 px), so a frame stays bounded
                                                       (256..16384)
=========================  ==========================  =============================================================

Integer options must be Python ints (bools are refused).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import ConfigError, GameConfig
from ..core.config import DEFAULT_EXPANSIONS, MAX_PLAYERS, MIN_PLAYERS, RuleSet, ruleset, with_default_expansions
from ..encoding import default_window
from ..encoding.spec import DEFAULT_PLACEMENT_ROWS
from ..fast import ENGINES  # declared once, by the engine selection
from ..fast.config import EngineConfig

REWARD_MODES = ("win_loss", "score_diff", "score_delta")
OBS_FORMATS = ("dict", "classic")
RENDER_MODES = ("ansi", "rgb_array", "human", "svg")


def _int_in(name: str, value: Any, lo: int, hi: int) -> None:
    """ConfigError unless ``value`` is a Python int (not a bool) from ``lo`` to ``hi``."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ConfigError(f"option {name} must be an integer from {lo} to {hi}, got {value!r}")


@dataclass(frozen=True)
class EnvOptions:
    """Validated environment options (see the module docstring)."""

    num_players: int = 2
    expansions: tuple[str, ...] = DEFAULT_EXPANSIONS
    rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    followers: int = 7
    reward: str = "win_loss"
    reward_scale: float = 0.01
    window: tuple[int, int] | None = None
    render_mode: str | None = None
    tile_px: int = 64
    engine: str = "auto"
    render_max_px: int = 2048
    obs_format: str = "dict"
    action_features: bool = False
    action_feature_rows: int = DEFAULT_PLACEMENT_ROWS

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> EnvOptions:
        """Validate keyword options; raise ConfigError naming any bad one."""
        allowed = cls.names()
        unknown = sorted(set(kwargs) - set(allowed))
        if unknown:
            raise ConfigError(f"unknown environment option(s) {unknown}; allowed options: {allowed}")
        opts = cls(**kwargs)
        opts.validate()
        return opts

    def validate(self) -> None:
        self._validate_game()
        self._validate_env()

    def _validate_game(self) -> None:
        """The options that make the game: players, expansions, rules, followers."""
        n = self.num_players
        _int_in("num_players", n, MIN_PLAYERS, MAX_PLAYERS)
        exps = self.expansions
        if not isinstance(exps, (tuple, list)) or not all(isinstance(e, str) for e in exps):
            raise ConfigError(
                f"option expansions must be a tuple of expansion keys (str), e.g. ('base',), got {exps!r}"
            )
        object.__setattr__(self, "expansions", with_default_expansions(tuple(exps)))
        if not isinstance(self.rules, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) for k, v in self.rules.items()
        ):
            raise ConfigError(
                f"option rules must map expansion keys to option dicts, e.g. {{'base': {{}}}}, got {self.rules!r}"
            )
        object.__setattr__(self, "rules", {k: dict(v) for k, v in self.rules.items()})
        f = self.followers
        if not isinstance(f, int) or isinstance(f, bool) or f < 1:
            raise ConfigError(f"option followers must be a positive integer, got {f!r}")
        if f * n > 255:
            raise ConfigError(
                f"option followers x num_players must be at most 255 (the observation counts followers in uint8 "
                f"planes), got {f} x {n} = {f * n}; use at most {255 // n} followers for {n} players"
            )

    def _validate_env(self) -> None:
        """The env's own options, then the game as the core validates it (which fixes the window)."""
        if self.reward not in REWARD_MODES:
            raise ConfigError(f"option reward must be one of {list(REWARD_MODES)}, got {self.reward!r}")
        rs = self.reward_scale
        if isinstance(rs, bool) or not isinstance(rs, (int, float)) or not rs > 0:
            raise ConfigError(f"option reward_scale must be a positive number, got {rs!r}")
        w = self.window
        if w is not None and (
            not isinstance(w, (tuple, list))
            or len(w) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 3 <= v <= 255 for v in w)
        ):
            raise ConfigError(f"option window must be (rows, cols) with integers from 3 to 255, got {w!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise ConfigError(
                f"option render_mode must be None or one of {list(RENDER_MODES)}, got {self.render_mode!r}"
            )
        _int_in("tile_px", self.tile_px, 8, 512)
        if self.engine not in ENGINES:
            raise ConfigError(f"option engine must be one of {list(ENGINES)}, got {self.engine!r}")
        if self.obs_format not in OBS_FORMATS:
            raise ConfigError(f"option obs_format must be one of {list(OBS_FORMATS)}, got {self.obs_format!r}")
        _int_in("render_max_px", self.render_max_px, 256, 16384)
        if not isinstance(self.action_features, bool):
            raise ConfigError(f"option action_features must be True or False, got {self.action_features!r}")
        _int_in("action_feature_rows", self.action_feature_rows, 1, 4096)
        # The core validates the game itself (expansion keys, combinations, rule options); the rule set
        # it resolves is kept: the engines read it (rule_set, engine_config) instead of resolving it again.
        rules = ruleset(self.game_config())
        object.__setattr__(self, "_rule_set", rules)
        if w is None:
            w = default_window(rules)
        elif rules.layout is not None and (w[0] < rules.layout.height or w[1] < rules.layout.width):
            raise ConfigError(
                f"option window {tuple(w)} is smaller than the printed board {rules.layout.name!r} "
                f"({rules.layout.height} x {rules.layout.width}); leave window out to fit the board"
            )
        object.__setattr__(self, "window", (int(w[0]), int(w[1])))

    def game_config(self) -> GameConfig:
        return GameConfig(self.num_players, tuple(self.expansions), self.rules, self.followers)

    def rule_set(self) -> RuleSet:
        """The game's rule set, resolved once (by :meth:`validate`)."""
        rules = self.__dict__.get("_rule_set")
        if rules is None:  # options made without validate (dataclasses.replace)
            rules = ruleset(self.game_config())
            object.__setattr__(self, "_rule_set", rules)
        return rules

    def engine_config(self) -> EngineConfig:
        """What the compiled engine reads of these options: choosing and building an engine read this."""
        cfg = self.__dict__.get("_engine_config")
        if cfg is None:
            rows, cols = self.window or default_window(self.rule_set())  # validate() always sets the window
            cfg = EngineConfig(
                self.rule_set(),
                (int(rows), int(cols)),
                self.reward,
                float(self.reward_scale),
                self.action_features,
                self.action_feature_rows,
            )
            object.__setattr__(self, "_engine_config", cfg)
        return cfg


__all__ = ["EnvOptions", "ENGINES", "OBS_FORMATS", "REWARD_MODES", "RENDER_MODES"]
