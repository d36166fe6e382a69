"""One game with its action codec, observation encoder and rewards.

:class:`Match` is the engine room shared by every environment of this
package (the PettingZoo AEC env, the Gymnasium single-agent env and the
vector env), so all of them step, observe and reward identically.  It knows
nothing of agents or wrappers.

Rewards (``EnvOptions.reward``), per seat, for one applied action:

* ``"win_loss"`` (default): 0 until the game ends; then +1 to the single
  winner and -1 to everyone else.  If several players tie for the best
  score, each of them gets 0 (a shared draw) and the others -1.
* ``"score_diff"``: 0 until the game ends; then ``reward_scale * (own final
  score - best opponent's final score)``.
* ``"score_delta"``: every step, ``reward_scale * (own points gained - mean of
  the opponents' points gained)`` during that step (final scoring included in
  the last step); a seat's rewards sum to ``reward_scale * (own final score -
  mean opponent final score)``.

What a match hands out is read-only: the mask (``mask()``, ``view().mask``)
is the array ``step`` validates against, and ``observe()`` returns the same
cached dict until the next step, so a caller writing into either would change
what the env sees (``ValueError: assignment destination is read-only``
instead).  Copy an array to change it.

``step(index)`` takes an integer (Python or numpy, never a bool or a float:
:func:`carc_env.core.as_index`) and checks it against the mask before the
game changes; ``reset`` builds the new game before it replaces the old one,
so a reset that fails (a bad draw order) leaves the match as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core import Game, IllegalActionError, as_index
from ..encoding import ActionCodec, ObservationEncoder, StateView
from ..encoding.action_features import action_feature_shapes, encode_action_features
from .options import EnvOptions


def _freeze(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


class MatchChecks:
    """The checks both engines' matches make, with the same messages (:class:`Match`,
    :class:`~carc_env.env.fast_match.FastMatch`): they read only ``started``, ``over``, ``player``,
    ``phase``, ``mask()``, ``codec`` and, on an error path, ``game``."""

    def check(self, index: object) -> int:
        """``index`` as an int if it is a legal action now; else raise IllegalActionError (an
        ``ActionTypeError`` for a non-integer) saying why.  Changes nothing."""
        m: Any = self  # either engine's match (the accessors in the class docstring)
        if not m.started:
            raise IllegalActionError("the match has not been reset; call reset() first")
        index = as_index(index, "an action")
        if m.over:
            raise IllegalActionError(f"action {index}: the game is over; no action is legal")
        mask = m.mask()
        if not 0 <= index < len(mask) or not mask[index]:
            raise IllegalActionError(
                f"action {index} ({m._describe(index)}) is not legal for seat {m.player} in phase "
                f"{m.phase!r}; legal: {int(np.count_nonzero(mask))} action(s), see the action mask"
            )
        return index

    def _describe(self, index: int) -> str:
        """What ``index`` means now, or why it means nothing (outside the space, another phase's range)."""
        m: Any = self
        codec = m.codec
        if not 0 <= index < codec.n:
            return f"outside the action space 0..{codec.n - 1}"
        phase = codec.phase_of(index)
        if phase != m.phase:
            r = codec.ranges[phase]
            return f"in the {phase!r} range {r.start}..{r.stop - 1}, not the current phase's"
        try:
            return codec.action_to_text(m.game, index)  # the reference game (rebuilt on the compiled engine)
        except (IllegalActionError, ValueError) as exc:
            return f"not a legal {phase} action here: {exc}"


class Match(MatchChecks):
    """A game plus codec, encoder and reward bookkeeping.  See the module docstring."""

    engine = "python"
    """The engine that runs the game (:class:`~carc_env.env.fast_match.FastMatch` says ``"numba"``)."""
    engine_reason = ""
    """Why the Python engine runs when the environments asked for the automatic choice (empty otherwise)."""

    def __init__(self, options: EnvOptions) -> None:
        self.options = options
        self.rules = options.rule_set()  # resolved once, by the options' validation
        self.config = self.rules.config
        self.num_players = options.num_players
        self.codec = ActionCodec(self.rules, options.window)
        self.encoder = ObservationEncoder(self.rules, self.num_players, self.codec, self.rules.followers)
        self.game: Game = None  # type: ignore[assignment]  # None until reset(); ``started`` says which
        self._seed_rng: np.random.Generator | None = None
        self._obs: dict[int, dict[str, np.ndarray]] = {}

    def __setstate__(self, state: dict) -> None:
        # unpickled arrays come back writable: hand out read-only ones again
        self.__dict__.update(state)
        _freeze(*(a for obs in self._obs.values() for a in obs.values()))
        if self.game is not None:
            _freeze(self.codec.view(self.game).mask)

    # ------------------------------------------------------------------ state
    # Cheap accessors of the running game that both engines answer without a core Game (on the compiled
    # engine, FastMatch.game is rebuilt by replay): what the envs read on every step.
    @property
    def started(self) -> bool:
        """Whether a game has been started (``reset`` succeeded once)."""
        return self.game is not None

    @property
    def phase(self) -> str:
        """The current decision phase (``"game_over"`` at the end)."""
        return self.game.phase

    @property
    def over(self) -> bool:
        return self.game.over

    @property
    def player(self) -> int:
        """The deciding seat."""
        return self.game.player

    @property
    def scores(self) -> list[int]:
        return self.game.scores

    @property
    def seed(self) -> int | None:
        return self.game.seed

    # ------------------------------------------------------------------ lifecycle
    def _next_seed(self, seed: int | None) -> tuple[int, np.random.Generator]:
        """The game seed of a reset and the seed stream after it, without changing the match:
        ``seed`` itself (and a new stream), else the next seed of the last seeded stream."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(
                    f"seed must be a non-negative integer or None, got {seed!r} of type {type(seed).__name__}"
                )
            return int(seed), np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED]))
        stream = np.random.default_rng() if self._seed_rng is None else copy.deepcopy(self._seed_rng)
        return int(stream.integers(2**62)), stream

    def reset(self, seed: int | None = None, draw_order: Sequence[str] | None = None) -> None:
        """Start a new game; on any error (bad seed, bad draw order) the match is unchanged."""
        game_seed, stream = self._next_seed(seed)
        game = Game(self.config, seed=game_seed, draw_order=draw_order)
        self.game = game
        self._seed_rng = stream
        self._obs = {}

    def start_from(self, record: dict) -> None:
        """Start at the position a game record reached (:mod:`carc_env.env.start`); the seed stream
        continues from the record's seed.  On any error (a RecordError) the match is unchanged."""
        from ..core.record import replay
        from .start import check_config, game_over_error

        check_config(record, self.config)
        game = replay(record)
        if game.over:
            raise game_over_error(len(game.history))
        seed = record["seed"]
        self._seed_rng = None if seed is None else self._next_seed(seed)[1]
        self.game = game
        self._obs = {}

    # ------------------------------------------------------------------ stepping
    def mask(self) -> np.ndarray:
        """The deciding seat's legal-action mask (int8, read-only: ``step`` validates against it)."""
        return self.codec.view(self.game).mask

    def outside(self) -> int:
        """Legal placements outside the observation window in the current state."""
        return self.codec.view(self.game).outside

    def view(self) -> StateView:
        """The codec's view of the current state (window, mask, legal placements)."""
        return self.codec.view(self.game)

    def step(self, index: int) -> list[float]:
        """Apply flat action ``index`` for the deciding seat; return the reward of every seat.

        An illegal or ill-typed ``index`` raises (see :meth:`check`) before anything changes."""
        index = self.check(index)
        game = self.game
        codec = self.codec
        view = codec.view(game)
        pc = codec.codecs[game.phase]
        before = game.scores[:]
        game.apply(pc.decode(game, view, index - pc.start))
        self._obs = {}
        return self.rewards(before)

    def rewards(self, before: Sequence[int]) -> list[float]:
        game = self.game
        n = self.num_players
        mode = self.options.reward
        scale = float(self.options.reward_scale)
        scores = game.scores
        r = [0.0] * n
        if mode == "score_delta":
            gains = [scores[i] - before[i] for i in range(n)]
            total = sum(gains)
            if total:
                r = [(gains[i] - (total - gains[i]) / (n - 1)) * scale for i in range(n)]
        if game.over:
            if mode == "win_loss":
                best = max(scores)
                winners = [i for i in range(n) if scores[i] == best]
                win = 1.0 if len(winners) == 1 else 0.0
                r = [win if scores[i] == best else -1.0 for i in range(n)]
            elif mode == "score_diff":
                r = [(scores[i] - max(scores[j] for j in range(n) if j != i)) * scale for i in range(n)]
        return r

    # ------------------------------------------------------------------ observing
    def observe(self, seat: int) -> dict[str, np.ndarray]:
        """Observation of the current state for absolute ``seat`` (cached until the next step; every
        array read-only, so a caller cannot change what the next ``observe`` returns)."""
        obs = self._obs.get(seat)
        if obs is None:
            if self.game is None:
                raise RuntimeError("the match has not been reset; call reset() before observe()")
            view = self.codec.view(self.game)
            obs = self.encoder.encode(self.game, seat, view)
            if self.options.action_features:
                obs.update(self.action_features(seat))
            for a in obs.values():
                a.setflags(write=False)  # (half the cost of flags.writeable = False)
            self._obs[seat] = obs
        return obs

    def observe_into(self, seat: int, out: dict[str, np.ndarray]) -> None:
        """Write the observation for ``seat`` into the given arrays (e.g. rows of a batch)."""
        self.encoder.encode(self.game, seat, self.codec.view(self.game), out=out)
        if "spots" in out:
            for key, arr in self.action_features(seat).items():
                out[key][...] = arr

    def action_features(self, seat: int) -> dict[str, np.ndarray]:
        """The action-feature arrays (option ``action_features``, :mod:`carc_env.encoding.spec`) for ``seat``."""
        feats, _ = encode_action_features(
            self.game, seat, self.codec, self.codec.view(self.game), self.options.action_feature_rows
        )
        return feats

    def acting_info(self) -> tuple[np.ndarray, int, int, int]:
        """What the AEC env's infos carry, in one call: the deciding seat's mask, the legal placements outside
        the window, the plug-in moves out of range and the placements without action features."""
        view = self.codec.view(self.game)
        return view.mask, view.outside, view.dropped, self.features_missing()

    def features_missing(self) -> int:
        """Legal in-window placements the action features have no row for (0 when they all fit)."""
        if not self.options.action_features or self.phase != "tile":
            return 0
        return max(0, len(self.codec.view(self.game).tile_index) - self.options.action_feature_rows)

    def observation_space(self) -> spaces.Dict:
        """The observation space of one seat (identical for every seat)."""
        enc, codec = self.encoder, self.codec
        return spaces.Dict(
            {
                "board": spaces.Box(
                    low=0,
                    high=np.broadcast_to(enc.channel_high[:, None, None], enc.board_shape).copy(),
                    shape=enc.board_shape,
                    dtype=np.uint8,
                ),
                "globals": spaces.Box(low=-100.0, high=100.0, shape=(enc.n_globals,), dtype=np.float32),
                "windows": spaces.Box(
                    low=0,
                    high=np.broadcast_to(enc.window_high[None, :], enc.windows_shape).copy(),
                    shape=enc.windows_shape,
                    dtype=np.uint8,
                ),
                "action_mask": spaces.Box(low=0, high=1, shape=(codec.n,), dtype=np.int8),
                **self._feature_spaces(),
            }
        )

    def _feature_spaces(self) -> dict[str, spaces.Box]:
        if not self.options.action_features:
            return {}
        shapes = action_feature_shapes(self.codec, self.options.action_feature_rows)
        return {
            "place_index": spaces.Box(low=0, high=self.codec.n - 1, shape=shapes["place_index"], dtype=np.int64),
            # gain / 20 is the only signed column; a turn's points stay far inside +-50 x 20
            "place_features": spaces.Box(low=-50.0, high=50.0, shape=shapes["place_features"], dtype=np.float32),
            "spots": spaces.Box(low=0.0, high=50.0, shape=shapes["spots"], dtype=np.float32),
        }


__all__ = ["Match"]
