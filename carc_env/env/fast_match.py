"""One game of the compiled engine behind :class:`~carc_env.env.match.Match`'s interface.

:func:`make_match` is what the environments call: it returns a
:class:`FastMatch` when the compiled engine (:mod:`carc_env.fast`) covers the
configuration and the ``engine`` option allows it, else the reference
:class:`~carc_env.env.match.Match`.  Both step, observe and reward
identically (``tests/fast/test_fast_differential.py``); ``match.engine`` says
which one runs (``"numba"`` or ``"python"``) and ``match.engine_reason`` why
the Python engine runs when it does.

``FastMatch`` keeps every contract of ``Match``, with the same errors and
messages (``tests/env/test_env_reliability.py``, ``tests/env/test_fuzz.py`` run on both
engines): ``check``/``step`` take integers only (:func:`carc_env.core.as_index`)
and refuse an illegal index before anything changes; the observation and mask
arrays it hands out are read-only; ``reset`` checks the seed and builds the
draw order before it changes anything, so a failing reset leaves the match
(seed stream included) as it was.

``FastMatch.game`` is the reference :class:`~carc_env.core.Game` of the
running game, rebuilt on demand by replaying the game's actions through the
Python engine (what rendering, action text conversion and search-based
baselines read); once built it follows every later step of that game.  The
stepping never needs it: the envs read the cheap accessors ``started``,
``phase``, ``over``, ``player`` and ``scores`` instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..core import Game
from ..fast import select_engine
from ..fast.seam import engine as E
from .match import Match, MatchChecks, _freeze
from .options import EnvOptions


class FastView:
    """What the envs read of the codec's StateView: the mask and what could not be expressed."""

    __slots__ = ("mask", "outside", "dropped", "x0", "y0")

    def __init__(self, mask: np.ndarray, outside: int, x0: int, y0: int, dropped: int = 0) -> None:
        self.mask = mask
        self.outside = outside
        self.dropped = dropped  # legal moves of a plug-in phase its range cannot express (written with the mask)
        self.x0 = x0
        self.y0 = y0


class FastMatch(MatchChecks):
    """Game ``g`` of a :class:`~carc_env.fast.engine.FastBatch` (its own one-game batch by default)."""

    engine = "numba"
    engine_reason = ""

    def __init__(self, options: EnvOptions, batch: Any = None, g: int = 0, started: bool = False) -> None:
        """Game ``g`` of ``batch`` (a new one-game batch when None).  ``started``: the batch's owner has
        already started game ``g`` (``FastBatch.reset``), so this match reads and steps it from now on
        without a :meth:`reset` of its own (a view of a game someone else runs: ``agents.games``)."""
        from ..fast.engine import FastBatch

        self.options = options
        self.batch = batch if batch is not None else FastBatch(options, 1)
        self.g = g
        lay = self.batch.layout
        self.config = lay.rules.config
        self.rules = lay.rules
        self.num_players = options.num_players
        self.codec = lay.codec
        self.encoder = lay.encoder
        self._started = started
        self._obs: dict[int, dict[str, np.ndarray]] = {}
        self._obs_version: tuple[int, int] = (-1, -1)
        # the acting seat's (observation, placements outside the window, moves out of range), or None
        # once over, at _act_version (computed once per state: the AEC env reads it three times a step)
        self._act: tuple[dict[str, np.ndarray], int, int] | None = None
        self._act_version: tuple[int, int] = (-1, -1)
        self._no_actions = np.zeros(self.codec.n, dtype=np.int8)  # the mask once the game is over
        self._no_actions.flags.writeable = False
        from ..fast import kernels as K

        self._gi_keys = (K.G_PHASE, K.G_PLAYER, K.G_OUTSIDE, K.G_DROPPED, K.PH_OVER, K.PH_PLUG)
        # the arguments of the one-game observation kernel, made once (the kernel only reads them)
        self._games = np.array([g], dtype=np.int64)
        self._seats = [np.array([s], dtype=np.int64) for s in range(self.num_players)]
        self._observe_range: Any = None  # the observation kernel's machine-code entry (engine.direct), on use

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_observe_range"] = None  # a machine-code entry: found again on use
        return state

    def __setstate__(self, state: dict) -> None:
        # unpickled arrays come back writable: hand out read-only ones again
        state.setdefault("_observe_range", None)
        self.__dict__.update(state)
        _freeze(self._no_actions, *(a for obs in self._obs.values() for a in obs.values()))

    # ------------------------------------------------------------------ state
    @property
    def game(self) -> Game:
        """The reference Game in the current state (replayed on demand; read it, do not change it);
        None before the first reset, as ``Match.game``."""
        return self.batch.game(self.g) if self._started else None  # type: ignore[return-value]

    @property
    def started(self) -> bool:
        """Whether a game has been started (``reset`` succeeded once)."""
        return self._started

    @property
    def phase(self) -> str:
        """The current decision phase (``"game_over"`` at the end)."""
        return self.batch.phase(self.g)

    @property
    def over(self) -> bool:
        return self.batch.over(self.g)

    @property
    def player(self) -> int:
        """The deciding seat."""
        return self.batch.player(self.g)

    @property
    def scores(self) -> list[int]:
        return self.batch.scores(self.g)

    @property
    def seed(self) -> int | None:
        return self.batch.seeds[self.g]

    # ------------------------------------------------------------------ lifecycle
    def reset(self, seed: int | None = None, draw_order: Any = None, prepare_next: bool = False) -> None:
        """Start a new game; on any error (bad seed, bad draw order) the match is unchanged."""
        self.batch.reset(self.g, seed, draw_order, prepare_next=prepare_next)
        self._started = True

    def start_from(self, record: dict, prepare_next: bool = False) -> None:
        """Start at the position a game record reached, replayed on the compiled engine (as
        :meth:`Match.start_from`); on any error (a RecordError) the match is unchanged."""
        from .start import check_config, game_over_error

        check_config(record, self.config)
        batch, g = self.batch, self.g
        saved = batch._save(g)
        batch.replay(g, record)
        if batch.over(g):
            batch._restore(g, saved)
            raise game_over_error(len(record["actions"]))
        if prepare_next:
            batch.prepare_next(g)
        self._started = True

    # ------------------------------------------------------------------ stepping
    def _acting(self) -> tuple[dict[str, np.ndarray], int, int] | None:
        """The acting seat's observation (computed with its mask in one kernel call), the legal placements
        outside the window and the plug-in moves out of range (read after the mask is written); None once
        over.  Computed once per state of the game."""
        b = self.batch
        version = (b._epoch, b._vers[self.g])
        if version == self._act_version:
            return self._act
        phase_k, player_k, outside_k, dropped_k, over, plug = self._gi_keys
        gi = b.state.gi[self.g]
        act = None
        if int(gi[phase_k]) != over:
            obs = self.observe(int(gi[player_k]))
            phase = int(gi[phase_k])
            act = (obs, int(gi[outside_k]), int(gi[dropped_k]) if phase == plug else 0)
        self._act = act
        self._act_version = version
        return act

    def _acting_obs(self) -> dict[str, np.ndarray] | None:
        """The acting seat's observation (computed with its mask in one kernel call), None once over."""
        act = self._acting()
        return None if act is None else act[0]

    def mask(self) -> np.ndarray:
        """The deciding seat's legal-action mask (int8, read-only: ``step`` validates against it)."""
        act = self._acting()
        return act[0]["action_mask"] if act is not None else self._no_actions

    def outside(self) -> int:
        return self.batch.outside(self.g)

    def view(self) -> FastView:
        x0, y0 = self.batch.window(self.g)
        mask = self.mask()
        return FastView(mask, self.batch.outside(self.g), x0, y0, self.batch.dropped(self.g))

    def acting_info(self) -> tuple[np.ndarray, int, int, int]:
        """What the AEC env's infos carry, in one call: the deciding seat's mask, the legal placements outside
        the window, the plug-in moves out of range and the placements without action features."""
        act = self._acting()
        if act is None:
            return self._no_actions, self.batch.outside(self.g), 0, 0
        missing = self.features_missing() if self.options.action_features else 0
        return act[0]["action_mask"], act[1], act[2], missing

    def step(self, index: int) -> list[float]:
        """Apply flat action ``index`` for the deciding seat; return the reward of every seat.

        An illegal or ill-typed ``index`` raises (see :meth:`check`) before anything changes."""
        if type(index) is int and self._started:  # the common case, checked here without the full path
            act = self._acting()
            if act is not None and 0 <= index < len(self._no_actions) and act[0]["action_mask"][index]:
                return self.batch.step_legal(self.g, index)
        return self.batch.step_game(self.g, self.check(index))

    # ------------------------------------------------------------------ observing
    def observe(self, seat: int) -> dict[str, np.ndarray]:
        """Observation of the current state for absolute ``seat`` (cached until the next step; every
        array read-only, so a caller cannot change what the next ``observe`` returns)."""
        if not self._started:
            raise RuntimeError("the match has not been reset; call reset() before observe()")
        version = self.batch.version(self.g)
        if version != self._obs_version:
            self._obs = {}
            self._obs_version = version
        obs = self._obs.get(seat)
        if obs is None:
            obs = self._fresh_obs(seat)
            for a in obs.values():
                a.setflags(write=False)  # (half the cost of flags.writeable = False)
            self._obs[seat] = obs
        return obs

    def _fresh_obs(self, seat: int) -> dict[str, np.ndarray]:
        """``FastBatch.observe(g, seat)`` without its per-call set-up (fresh arrays: what was handed out
        before stays as it was)."""
        b = self.batch
        if self.options.action_features or not 0 <= seat < self.num_players:
            return b.observe(self.g, seat)
        enc = self.encoder
        board = np.empty((1, *enc.board_shape), dtype=np.uint8)
        glob = np.empty((1, enc.n_globals), dtype=np.float32)
        windows = np.empty((1, *enc.windows_shape), dtype=np.uint8)
        mask = np.empty((1, self.codec.n), dtype=np.int8)
        observe_range = self._observe_range
        if observe_range is None:  # the first call types its arguments; later ones have the same types
            args = (b.tables, b.state, self._games, self._seats[seat], board, glob, windows, mask)
            E().observe_range(*args)
            from ..fast.engine import direct

            self._observe_range = direct(E().observe_range, args)
        else:
            observe_range(b.tables, b.state, self._games, self._seats[seat], board, glob, windows, mask)
        return {"board": board[0], "globals": glob[0], "windows": windows[0], "action_mask": mask[0]}

    def observe_into(self, seat: int, out: dict[str, np.ndarray]) -> None:
        """Write the observation for ``seat`` into the given arrays (e.g. rows of a batch)."""
        obs = self.observe(seat)
        for key, arr in out.items():
            arr[...] = obs[key]

    def observation_space(self) -> spaces.Dict:
        return Match.observation_space(self)  # type: ignore[arg-type]  # reads only encoder and codec

    _feature_spaces = Match._feature_spaces

    def action_features(self, seat: int) -> dict[str, np.ndarray]:
        """The action-feature arrays (:mod:`carc_env.encoding.spec`) for ``seat``, from the compiled kernels
        (whether or not the option ``action_features`` adds them to the observations)."""
        from ..fast.features import kernels_of

        rows = self.options.action_feature_rows
        out, _ = kernels_of(self.batch).features(
            np.array([self.g]), np.array([seat]), self.batch.mask(self.g)[None], rows
        )
        return {k: v[0] for k, v in out.items()}

    def greedy_action(self, policy: Any) -> int | None:
        """``policy``'s (a GreedyPolicy) decision in this game, made by the compiled greedy
        (:mod:`carc_env.fast.greedy`; identical to the Python policy's, no reference Game built); None where
        it does not cover the configuration (:func:`carc_env.fast.tables.features_coverage`: a plug-in's greedy
        heuristics, a printed board ...; the Python policy decides then)."""
        from ..fast.greedy import greedy_actions
        from ..fast.tables import features_coverage

        covered = self.rules.cache("fast.greedy_covered", lambda: features_coverage(self.rules) is None)
        if not covered:  # a plug-in's heuristics, a printed board...: the Python policy decides
            return None
        if not self._started or self.over:
            raise ValueError("greedy_action: no decision to make (the game is not running)")
        return int(greedy_actions(self.batch, [self.g], [policy])[0])

    def features_missing(self) -> int:
        """Legal in-window placements the action features have no row for (0 when they all fit)."""
        if not self.options.action_features or self.phase != "tile":
            return 0
        from ..fast import kernels as K

        return max(0, int(self.batch.state.gi[self.g, K.G_NLEGAL]) - self.options.action_feature_rows)


def make_match(options: EnvOptions) -> Match | FastMatch:
    """The compiled engine's match where it covers ``options`` (and ``options.engine`` allows), else Match."""
    engine, reason = select_engine(options.engine_config(), options.engine)
    if engine == "numba":
        return FastMatch(options)
    m = Match(options)
    m.engine_reason = reason
    return m


__all__ = ["FastMatch", "FastView", "make_match"]
