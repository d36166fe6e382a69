"""A batched Gymnasium vector env stepping N games at once: :class:`CarcassonneVectorEnv`.

It is a real :class:`gymnasium.vector.VectorEnv` (batched ``observation_space``
and ``action_space``, ``single_observation_space`` / ``single_action_space``,
the 5-tuple ``step``, infos as a dict of arrays with ``_key`` masks,
``metadata["autoreset_mode"]``), so Gymnasium's vector wrappers
(``RecordEpisodeStatistics``, ``NormalizeReward``, ``VectorizeTransformObservation``,
``DictInfoToList`` ...) work on it (``tests/env/test_env_vector_gymnasium.py``).

Contract
--------
``CarcassonneVectorEnv(num_envs, seed=None, opponents=None, learner_seat=None, threads=None,
autoreset_mode=AutoresetMode.SAME_STEP, **options)`` (options as in :mod:`carc_env.env.options`;
``threads``: the compiled engine's threads, see Engines; ``autoreset_mode``: see Autoreset).

Every game has, at every moment, one *acting seat*: the seat that must decide
now.  Observations are returned from that seat's point of view (the encoding
is player-relative, so one policy network serves every seat).  Two modes:

* **single-agent** (``opponents`` given, a policy or a list as in the
  Gymnasium env): the env plays every seat except a learner seat itself and
  returns only the learner's decisions.  The learner seat is ``learner_seat``
  if given, else it rotates with the episode number of each game.
  ``rewards[i]`` is the learner's reward: everything its seat earned since its
  previous decision (terminal rewards included).
* **self-play** (no ``opponents``): every decision of every seat is returned.
  ``rewards[i]`` is the reward of the seat that chose ``actions[i]``; what
  every seat earned is in ``infos["seat_rewards"]`` (``float32 (N, players)``,
  absolute seats), so a self-play learner credits ``infos["seat_rewards"][i, s]``
  to seat ``s``'s latest transition in game ``i`` (the other seats' terminal
  rewards arrive in a step they did not act in).

API:

* ``reset(seed=None, options=None) -> (obs, infos)``: ``seed`` an int (game
  ``i`` gets ``seed + i``), a list of ``num_envs`` ints or Nones (game ``i``
  gets ``seed[i]``; None continues its stream), or None (a fresh stream, or
  the continuation of the last seeded one).  A seeded reset also restarts the
  episode counters that rotate the learner seat, so it fully determines what
  follows.  ``options``: ``{"record": rec}`` (and ``"upto": k``) starts every
  game at a saved position, ``{"record": [rec or None, ...]}`` game by game
  (:mod:`carc_env.env.start`; a game started from a record takes no seed);
  ``"learner_seat"`` (single-agent mode) fixes this reset's learner seats.
  Seeds, options and the records' format and configuration are checked
  before any game is reset; a record whose actions do not replay (or that
  ends the game) raises when its game is reached, after the games before it
  were reset: reset again.
* ``obs`` is a dict of stacked arrays: ``board (N, C, H, W) uint8``,
  ``globals (N, G) float32``, ``windows (N, P, W) uint8``,
  ``action_mask (N, A) int8`` (``observation_space`` is the batched
  ``single_observation_space``); with ``obs_format="classic"``
  ``{"observation": (N, F) float32, "action_mask": (N, A) int8}``.
* ``step(actions) -> (obs, rewards, terminations, truncations, infos)``:
  ``actions[i]`` is the acting seat's action in game ``i`` (an integer enabled
  in its mask; ``action_space`` is ``MultiDiscrete([A] * N)``).  The whole
  batch is checked before any game moves: one ill-typed or illegal action
  raises (``ActionTypeError`` / ``IllegalActionError`` naming ``actions[i]``)
  and changes nothing, so the call can be retried.  ``rewards`` is ``float32
  (N,)`` (see the modes), ``terminations[i]`` is True when game ``i`` ended in
  this step, ``truncations`` is always False (a game always ends by its rules).
* ``infos`` is a dict of arrays, each with a boolean ``_key`` array saying
  which rows hold a value (Gymnasium's convention): always ``seat`` (the
  acting seat of ``obs[i]``) and ``seat_rewards``; in single-agent mode
  ``learner_seat`` (the learner seat of ``obs[i]``'s game); in the rows of games
  that ended in this step ``final_scores`` (``int64 (N, players)``),
  ``winners`` (``bool (N, players)``), ``episode_length`` (decisions of every
  seat) and, single-agent, ``final_learner_seat`` (the finished game's learner
  seat: ``rewards[i]`` is that seat's; ``learner_seat`` already names the next
  game's); ``placements_outside_window`` / ``actions_out_of_range`` where
  nonzero (see :mod:`carc_env.env.aec`).
* ``seats`` / ``learner_seats`` (``int64 (N,)``) mirror ``infos["seat"]`` /
  ``infos["learner_seat"]``; ``action_masks()`` returns the masks as bool.
* ``sample_legal_actions(rng)``: one uniformly random legal action per game
  (``int64 (N,)``, from ``rng``, a numpy ``Generator``), the random masked
  policy of a loop; on the compiled engine the masks are scanned on the env's
  threads.

Autoreset: ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP`` by
default.  A game that ends in a step is reset in that same step and
``obs[i]`` is the first decision of the next game (the next game's seed
continues game ``i``'s seed stream; in single-agent mode the opponents' moves
before the learner's first decision are played too).  Why same-step: every
row of every observation is then a live decision whose mask enables at least
one action, so a masked policy can sample every row of every batch; in
next-step mode each finished game hands out a terminal row whose mask is all
zero (a masked softmax over it is NaN) and whose action is thrown away.  The
final observation is not returned (no ``final_obs``): a game never truncates,
so a finished game's value is 0 and is never bootstrapped.

``autoreset_mode=AutoresetMode.NEXT_STEP`` (constructor) is there for
Gymnasium's observation wrappers: every
:class:`~gymnasium.vector.VectorObservationWrapper` (``TransformObservation``,
``VectorizeTransformObservation``, ``NormalizeObservation`` ...) refuses
same-step envs.  Then the step that ends game ``i`` returns its final
observation (from the learner's seat, in self-play from the seat that made the
last decision; its mask is all zero: nothing is legal), and the next step
ignores ``actions[i]``, starts the next game and returns its first decision
with reward 0.  Self-play on the compiled engine then steps game by game
instead of in one kernel call.

Game ``i`` steps exactly like a :class:`carc_env.env.aec.raw_env` reset with
the same seed and then reset without a seed after each game (tested).

Engines: where the compiled engine (:mod:`carc_env.fast`) covers the
configuration (option ``engine``, default ``"auto"``), self-play steps the
whole batch in one kernel call that decodes, applies, auto-resets and writes
the stacked observations (on ``threads`` threads, default: the cores this
process may use); with ``opponents`` each game steps on the compiled engine
one decision at a time.  ``engine`` says which runs (``"numba"`` or
``"python"``), ``engine_reason`` why the Python engine does.  The outputs are
identical either way (tested).

The returned observation arrays are read-only (``action_masks()`` is computed
from them); copy them to modify.

Version history: the first version (before issue 26) was not a
``VectorEnv``: its ``step`` returned ``(obs, rewards (N, players), dones,
infos as a list of dicts)`` and ``reset`` took only an int seed.  The per-seat
rewards are now ``infos["seat_rewards"]``, ``dones`` is ``terminations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..core import ActionTypeError, ConfigError, IllegalActionError, as_index
from ..encoding.action_features import action_feature_shapes
from ..fast import select_engine
from .fast_match import FastMatch
from .gym_env import _policies
from .match import Match
from .options import EnvOptions
from .start import START_OPTIONS, check_config, position_record
from .wrappers import classic_batch, classic_space

VECTOR_RESET_OPTIONS = (*START_OPTIONS, "learner_seat")


def _step_outputs(N: int, n: int) -> tuple[np.ndarray, ...]:
    """Fresh arrays a batched step fills (:func:`carc_env.fast.vector_kernels.post_step`) and hands out: the
    rewards, the seat rewards, the next seats, the winners (zeroed), the placements outside the window,
    two all-True row masks of the infos, the truncations (all False)."""
    return (
        np.empty(N, dtype=np.float32),
        np.empty((N, n), dtype=np.float32),
        np.empty(N, dtype=np.int64),
        np.zeros((N, n), dtype=np.bool_),
        np.empty(N, dtype=np.int64),
        np.ones(N, dtype=np.bool_),
        np.ones(N, dtype=np.bool_),
        np.zeros(N, dtype=np.bool_),
    )


def _info(infos: dict[str, np.ndarray], key: str, value: np.ndarray, rows: np.ndarray) -> None:
    """Gymnasium's dict-of-arrays info: ``infos[key]`` and its row mask ``infos["_" + key]``."""
    infos[key] = value
    infos["_" + key] = rows


class CarcassonneVectorEnv(VectorEnv):
    """N games in lockstep with stacked observations.  See the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": [], "name": "carcassonne_v0"}

    def __init__(
        self,
        num_envs: int,
        seed: int | None = None,
        opponents: Any = None,
        learner_seat: int | None = None,
        threads: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        **options: Any,
    ) -> None:
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ConfigError(
                f"autoreset_mode must be AutoresetMode.SAME_STEP (the default) or AutoresetMode.NEXT_STEP, got "
                f"{autoreset_mode!r}"
            )
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive integer, got {num_envs!r}")
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be None or a positive integer, got {threads!r}")
        self.options = EnvOptions.from_kwargs(**options)
        self.num_envs = num_envs
        self.num_players = n = self.options.num_players
        self.engine, self.engine_reason = select_engine(self.options.engine_config(), self.options.engine)
        self._batch: Any = None  # a FastBatch on the compiled engine (carc_env.fast imports numba lazily)
        if self.engine == "numba":
            from ..fast.engine import FastBatch, default_threads

            self.threads = threads or min(default_threads(), num_envs)
            self._batch = FastBatch(self.options, num_envs, threads=self.threads)
            self._batch.extra_outputs = partial(_step_outputs, num_envs, n)  # (take_extra: one set a step)
            from ..fast.kernels import G_OUTSIDE

            self._outside_col = G_OUTSIDE
            self.matches: list[Any] = [FastMatch(self.options, self._batch, i) for i in range(num_envs)]
        else:
            self.threads = 1
            self.matches = [Match(self.options) for _ in range(num_envs)]
        self.self_play = opponents is None
        # self-play on the compiled engine: the whole batch steps in one kernel call (same-step mode)
        self._batched = self._batch is not None and self.self_play and mode is AutoresetMode.SAME_STEP
        self.opponents = [] if opponents is None else _policies(opponents)
        if learner_seat is not None and (not isinstance(learner_seat, int) or not 0 <= learner_seat < n):
            raise ConfigError(f"learner_seat must be None or a seat 0..{n - 1}, got {learner_seat!r}")
        self.learner_seat = learner_seat
        m0 = self.matches[0]
        enc, codec = m0.encoder, m0.codec
        self.codec = codec
        self.encoder = enc
        self.channel_names = enc.channel_names
        self.global_names = enc.global_names
        self.window_names = enc.window_names
        self._classic = self.options.obs_format == "classic"
        single = m0.observation_space()
        self.single_observation_space = classic_space(single) if self._classic else single
        self.single_action_space = spaces.Discrete(codec.n)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self.seats = np.zeros(num_envs, dtype=np.int64)
        self.learner_seats = np.zeros(num_envs, dtype=np.int64)
        self._episodes = np.zeros(num_envs, dtype=np.int64)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._seat_policies: list[dict[int, Any]] = [{} for _ in range(num_envs)]
        self._seed = seed
        self._pending = np.zeros((num_envs, n), dtype=np.float32)
        self._ended = np.zeros(num_envs, dtype=bool)  # next-step mode: the game ended, the next step resets it
        self._obs: dict[str, np.ndarray] | None = None  # the engine's dict batch (masks read from it)

    # ------------------------------------------------------------------ internals
    def _empty_batch(self) -> dict[str, np.ndarray]:
        enc, N = self.encoder, self.num_envs
        batch = {
            "board": np.empty((N, *enc.board_shape), dtype=np.uint8),
            "globals": np.empty((N, enc.n_globals), dtype=np.float32),
            "windows": np.empty((N, *enc.windows_shape), dtype=np.uint8),
            "action_mask": np.empty((N, self.codec.n), dtype=np.int8),
        }
        if self.options.action_features:  # the optional action features (carc_env.encoding.spec)
            for key, shape in action_feature_shapes(self.codec, self.options.action_feature_rows).items():
                batch[key] = np.zeros((N, *shape), dtype=np.int64 if key == "place_index" else np.float32)
        return batch

    @property
    def _first_illegal(self) -> Any:
        kernels = self.__dict__.get("_vector_kernels")
        if kernels is None:
            kernels = self._load_vector_kernels()
        return kernels[0]

    @property
    def _post_step(self) -> Any:
        kernels = self.__dict__.get("_vector_kernels")
        if kernels is None:
            kernels = self._load_vector_kernels()
        return kernels[1]

    def _load_vector_kernels(self) -> tuple[Any, Any]:
        """The compiled helpers of the batched step, imported once (an import statement per step cost a
        microsecond or two next to the one core's share of the step)."""
        from ..fast.vector_kernels import first_illegal, post_step

        self._vector_kernels = (first_illegal, post_step)
        return self._vector_kernels

    def _start(self, i: int, seed: int | None, record: dict[str, Any] | None = None, seat: int | None = None) -> None:
        m = self.matches[i]
        if record is not None:
            if self._batched:
                m.start_from(record, prepare_next=True)
            else:
                m.start_from(record)
        elif self._batched:
            m.reset(seed, prepare_next=True)  # the next game's draw order is ready for the in-kernel reset
        else:
            m.reset(seed)
        n = self.num_players
        if not self.self_play:
            if seat is None:
                seat = self.learner_seat if self.learner_seat is not None else int(self._episodes[i] % n)
            self.learner_seats[i] = seat
            others = [s for s in range(n) if s != seat]
            if len(self.opponents) == n - 1:
                self._seat_policies[i] = dict(zip(others, self.opponents, strict=True))
            else:
                rng = np.random.default_rng(np.random.SeedSequence([m.seed or 0, 0x0770]))
                picks = rng.integers(len(self.opponents), size=len(others))
                self._seat_policies[i] = {s: self.opponents[int(k)] for s, k in zip(others, picks, strict=True)}
        self._episodes[i] += 1
        self._lengths[i] = len(record["actions"]) if record is not None else 0

    def _advance(self, i: int, rewards: np.ndarray) -> None:
        """Play opponents' decisions of game i until the learner decides or the game ends."""
        if self.self_play:
            return
        m = self.matches[i]
        learner = self.learner_seats[i]
        while not m.over and m.player != learner:
            policy = self._seat_policies[i][m.player]
            if getattr(policy, "uses_observation", True):
                obs = m.observe(m.player)
            else:
                obs = {"action_mask": m.mask()}
            rewards += m.step(int(policy.act(obs, m)))
            self._lengths[i] += 1

    def _write_obs(self, i: int, batch: dict[str, np.ndarray], seat: int | None = None) -> None:
        m = self.matches[i]
        seat = m.player if seat is None else seat
        self.seats[i] = seat
        m.observe_into(seat, {k: v[i] for k, v in batch.items()})

    def _checked_actions(self, actions: Any) -> Any:
        """The batch as ints (a list; on the batched compiled path an int64 array), each legal in its game;
        raise naming the first bad one.  Changes nothing.

        Each game's own ``check`` says what is wrong (the same words on both engines).  On the batched
        compiled path the legality of the whole batch is first looked up at once in the published masks
        (the acting seats' masks, read-only, what each game's ``check`` reads too) by one compiled call
        (:func:`carc_env.fast.vector_kernels.first_illegal`: this runs on one core between the threaded
        kernel calls), so only a bad action costs a per-game check."""
        published = self._obs if self._batched else None
        if (  # the usual batch (a policy's int64 array): one compiled lookup, nothing else
            published is not None
            and type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == (self.num_envs,)
            and actions.flags.c_contiguous
            and self._first_illegal(published["action_mask"], actions) < 0
        ):
            return actions
        try:
            arr = np.asarray(actions)
        except ValueError as exc:  # ragged nesting
            raise ValueError(f"actions must be a sequence of {self.num_envs} integers: {exc}") from None
        if arr.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {arr.shape}")
        if arr.dtype == object:
            arr = np.array([as_index(a, f"actions[{i}]") for i, a in enumerate(arr.tolist())], dtype=object)
        elif not np.issubdtype(arr.dtype, np.integer):
            raise ActionTypeError(f"actions must be integers, got an array of dtype {arr.dtype}: {arr.tolist()!r:.200}")
        batched = published is not None
        if published is not None:
            first_illegal = self._first_illegal
            mask = published["action_mask"]
            if arr.dtype == object:  # Python ints that as_index accepted (of any size): looked up here
                vals = arr.tolist()
                n = mask.shape[1]
                suspects = [i for i, a in enumerate(vals) if not (0 <= a < n and mask[i, a])][:1]
                checked = None if suspects else np.array(vals, dtype=np.int64)
            else:
                checked = np.ascontiguousarray(arr, dtype=np.int64)  # no copy for an int64 batch
                if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:  # uint64 beyond int64 would wrap
                    checked = np.where(arr > np.iinfo(np.int64).max, -1, checked)
                bad = first_illegal(mask, checked)
                suspects = [] if bad < 0 else [bad]
        else:
            suspects = np.flatnonzero(~self._ended).tolist()  # an ended game's action is ignored
        ints = arr.tolist() if suspects or not batched else []
        for i in suspects:
            try:
                self.matches[i].check(ints[i])
            except IllegalActionError as exc:
                raise type(exc)(f"actions[{i}] (game {i}): {exc}; no game was stepped") from None
        if batched and suspects:  # pragma: no cover - the published mask and the game disagree: a bug
            raise RuntimeError(f"actions[{suspects[0]}]: the published mask and game {suspects[0]}'s check disagree")
        return checked if batched else ints

    def _game_seeds(self, seed: Any) -> list[int | None]:
        """One seed per game from ``reset(seed=...)``: a list (one each), an int (``seed + i``) or None."""
        N = self.num_envs
        if isinstance(seed, Sequence) and not isinstance(seed, str):
            if len(seed) != N:
                raise ValueError(f"seed as a list must have one entry per game ({N}), got {len(seed)}")
            seeds = list(seed)
        elif seed is None:
            seeds = [None if self._seed is None else self._seed + i for i in range(N)]
        else:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(
                    f"seed must be a non-negative integer, a list of them or None, got {seed!r} of type {type(seed).__name__}"
                )
            seeds = [int(seed) + i for i in range(N)]
        for i, s in enumerate(seeds):
            if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0):
                raise ValueError(f"seed[{i}] must be a non-negative integer or None, got {s!r}")
        return seeds

    def _game_records(
        self, options: dict[str, Any], listed_seeds: list[int | None] | None
    ) -> list[dict[str, Any] | None]:
        """One position record (or None) per game from the reset options ``record`` / ``upto``, checked
        against the configuration; ``listed_seeds``: the seeds given as a list (a record has its own)."""
        N = self.num_envs
        records: list[dict[str, Any] | None] = [None] * N
        if "upto" in options and "record" not in options:
            raise ConfigError("reset option upto needs a record: options={'record': rec, 'upto': k}")
        if "record" not in options:
            return records
        rec = options["record"]
        per_game = rec if isinstance(rec, list) else [rec] * N
        if len(per_game) != N:
            raise ValueError(f"reset option record as a list must have one entry per game ({N}), got {len(per_game)}")
        for i, r in enumerate(per_game):
            if r is None:
                continue
            if listed_seeds is not None and listed_seeds[i] is not None:
                raise ConfigError(f"game {i}: a record carries its own seed; pass None as seed[{i}]")
            records[i] = record = position_record(r, options.get("upto"))
            check_config(record, self.options.game_config())
        return records

    def _reset_args(self, seed: Any, options: Any) -> tuple[list[int | None], list[dict[str, Any] | None], int | None]:
        """Per-game seeds and records and the learner seat of a reset, all checked before anything changes."""
        if options is not None and not isinstance(options, dict):
            raise ConfigError(
                f"reset options must be a dict (keys {list(VECTOR_RESET_OPTIONS)}) or None, got {options!r}"
            )
        options = dict(options or {})
        unknown = sorted(set(options) - set(VECTOR_RESET_OPTIONS), key=repr)
        if unknown:
            raise ConfigError(f"unknown reset option(s) {unknown}; known: {list(VECTOR_RESET_OPTIONS)}")
        if isinstance(seed, np.ndarray):
            seed = seed.tolist()
        seeds = self._game_seeds(seed)
        records = self._game_records(options, seeds if isinstance(seed, Sequence) else None)
        learner = options.get("learner_seat")
        n = self.num_players
        if learner is not None and (
            isinstance(learner, bool) or not isinstance(learner, (int, np.integer)) or not 0 <= learner < n
        ):
            raise ConfigError(f"reset option learner_seat must be a seat 0..{n - 1}, got {learner!r}")
        return seeds, records, None if learner is None else int(learner)

    def _publish(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Hand out the batch read-only (in the configured format); keep it for the masks."""
        for a in batch.values():
            a.setflags(write=False)  # (half the cost of flags.writeable = False)
        self._obs = batch
        return classic_batch(batch) if self._classic else batch

    def _base_infos(self, rewards: np.ndarray | None = None) -> dict[str, np.ndarray]:
        N = self.num_envs
        everywhere = np.ones(N, dtype=bool)
        infos: dict[str, np.ndarray] = {}
        _info(infos, "seat", self.seats.copy(), everywhere)
        if rewards is not None:
            _info(infos, "seat_rewards", rewards, everywhere.copy())
        if not self.self_play:
            _info(infos, "learner_seat", self.learner_seats.copy(), everywhere.copy())
        return infos

    def _final_infos(
        self,
        infos: dict[str, np.ndarray],
        dones: np.ndarray,
        final: np.ndarray,
        lengths: np.ndarray,
        learners: np.ndarray | None,
    ) -> None:
        if not dones.any():
            return
        best = final.max(axis=1, keepdims=True)
        _info(infos, "final_scores", final, dones)
        _info(infos, "winners", (final == best) & dones[:, None], dones.copy())
        _info(infos, "episode_length", lengths, dones.copy())
        if learners is not None:
            _info(infos, "final_learner_seat", learners, dones.copy())

    # ------------------------------------------------------------------ API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Reset every game; see the module docstring for ``seed`` and ``options``."""
        seeds, records, learner = self._reset_args(seed, options)
        if seed is not None:
            # an int is remembered (later unseeded resets restart from it, as the constructor's seed does);
            # after a list, unseeded resets continue each game's own seed stream
            self._seed = int(seed) if isinstance(seed, (int, np.integer)) else None
            self._episodes[:] = 0  # the learner-seat rotation restarts too: a seeded reset determines everything
        batch = self._empty_batch()
        self._pending[:] = 0
        self._ended[:] = False
        for i in range(self.num_envs):
            self._start(i, seeds[i], records[i], learner)
            self._advance(i, self._pending[i])
            if not self._batched:
                self._write_obs(i, batch)
        if self._batched:
            batch = self._batch.observe_acting()
            self.seats[:] = [m.player for m in self.matches]
        obs = self._publish(batch)
        return obs, self._base_infos()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_vector_kernels", None)  # compiled functions: imported again on use
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "_batched" not in state:  # pickled when it was a property
            batched = state["_batch"] is not None and state["self_play"]
            state["_batched"] = batched and state["autoreset_mode"] is AutoresetMode.SAME_STEP
        self.__dict__.update(state)
        if self._obs is not None:  # unpickled arrays come back writable
            for a in self._obs.values():
                a.flags.writeable = False

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Step every game; see the module docstring."""
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        actions = self._checked_actions(actions)  # the whole batch, before any game moves
        if self._batched:
            return self._step_batched(actions)
        acting = self.seats.copy()  # the seats whose decisions these actions are
        N, n = self.num_envs, self.num_players
        seat_rewards = self._pending
        self._pending = np.zeros_like(seat_rewards)
        dones = np.zeros(N, dtype=bool)
        final = np.zeros((N, n), dtype=np.int64)
        lengths = np.zeros(N, dtype=np.int64)
        finished_learners = self.learner_seats.copy()
        batch = self._empty_batch()
        outside = np.zeros(N, dtype=np.int64)
        dropped = np.zeros(N, dtype=np.int64)
        for i in range(N):
            m = self.matches[i]
            if self._ended[i]:  # next-step mode: this step starts the next game; actions[i] is ignored
                self._ended[i] = False
                self._start(i, None)
                self._advance(i, self._pending[i])
                self._write_obs(i, batch)
                continue
            seat_rewards[i] += m.step(actions[i])
            self._lengths[i] += 1
            self._advance(i, seat_rewards[i])
            if m.over:
                dones[i] = True
                final[i] = m.scores
                lengths[i] = self._lengths[i]
                if self.autoreset_mode is AutoresetMode.NEXT_STEP:  # the final observation, no legal action
                    self._ended[i] = True
                    self._write_obs(i, batch, int(acting[i] if self.self_play else finished_learners[i]))
                    continue
                self._start(i, None)
                self._advance(i, self._pending[i])  # opponents' moves before the learner's first decision
            self._write_obs(i, batch)
            view = m.view()
            outside[i] = view.outside
            dropped[i] = view.dropped
        rewards = self._rewards(seat_rewards, acting, finished_learners)
        infos = self._base_infos(seat_rewards)
        self._final_infos(infos, dones, final, lengths, None if self.self_play else finished_learners)
        if outside.any():
            _info(infos, "placements_outside_window", outside, outside > 0)
        if dropped.any():
            _info(infos, "actions_out_of_range", dropped, dropped > 0)
        obs = self._publish(batch)
        return obs, rewards, dones, np.zeros(N, dtype=bool), infos

    def _rewards(self, seat_rewards: np.ndarray, acting: np.ndarray, learners: np.ndarray) -> np.ndarray:
        """Each row's reward: the acting seat's (self-play) or the learner's (single-agent)."""
        cols = acting if self.self_play else learners
        return seat_rewards[np.arange(self.num_envs), cols].astype(np.float32)

    def _step_batched(
        self, acts: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Self-play on the compiled engine: one kernel call for the whole batch (actions checked already),
        then one compiled pass for the rewards, seats and infos (:mod:`carc_env.fast.vector_kernels`: this part
        runs on one core whatever the threads)."""
        fb = self._batch
        batch, rewards64, dones, final, eplen, seats = fb.step(acts, checked=True)
        own, seat_rewards, nxt, winners, outside, rows_a, rows_b, trunc = fb.take_extra()  # (fresh arrays)
        ended, clipped = self._post_step(
            rewards64,
            dones,
            final,
            seats,
            self.seats,
            self._episodes,
            fb.state.gi,
            self._outside_col,
            own,
            seat_rewards,
            nxt,
            winners,
            outside,
        )
        # infos as _base_infos and _final_infos write them, in the same order
        infos: dict[str, np.ndarray] = {}
        _info(infos, "seat", nxt, rows_a)
        _info(infos, "seat_rewards", seat_rewards, rows_b)
        if ended:
            _info(infos, "final_scores", final, dones)
            _info(infos, "winners", winners, dones.copy())
            _info(infos, "episode_length", eplen, dones.copy())
        if clipped:
            _info(infos, "placements_outside_window", outside, outside > 0)
        obs = self._publish(batch)  # fresh arrays each step, handed out read-only like the Python path's
        return obs, own, dones, trunc, infos

    def sample_legal_actions(self, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per game from the current observations' masks, int64 ``(N,)``
        (a random masked policy for a loop: ``env.step(env.sample_legal_actions(rng))``).

        Game ``i`` takes its ``floor(u_i k_i)``-th enabled action (``k_i`` of them) with ``u =
        rng.random(N)`` (one draw per game): the actions
        :func:`carc_env.env.sampling.random_legal_actions` picks from ``obs["action_mask"]`` with the same
        generator.  On the compiled engine the masks are scanned by compiled code on the env's threads
        (the threads of its batched step), not by numpy on one core.  In next-step mode the row of a game
        that ended in the last step (its mask enables nothing; its action is ignored) gets 0."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, e.g. np.random.default_rng(0), got {type(rng).__name__}")
        if self._obs is None:
            raise RuntimeError("call reset() first")
        mask = self._obs["action_mask"]
        u = rng.random(self.num_envs)
        if self._batch is not None:  # (the published mask: C-contiguous int8; u: fresh float64)
            actions = np.empty(self.num_envs, dtype=np.int64)
            empty = self._batch._sample(mask, u, actions)
        else:
            from .sampling import nth_enabled

            actions = nth_enabled(mask, u)
            empty = int((actions < 0).sum())
        if empty:
            rows = np.flatnonzero(actions < 0)
            live = rows[~self._ended[rows]]
            if live.size:  # pragma: no cover - a live game always has a legal action
                raise RuntimeError(f"game {int(live[0])}'s mask enables no action")
            actions[rows] = 0
        return actions

    def action_masks(self) -> np.ndarray:
        """Masks of the current observations as bool ``(N, A)``."""
        if self._obs is None:
            raise RuntimeError("call reset() first")
        return self._obs["action_mask"].astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        if self._batch is not None:
            self._batch.close()


def make_vec(
    num_envs: int, opponents: Any = None, learner_seat: int | None = None, **options: Any
) -> CarcassonneVectorEnv:
    """``gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=N, **options)``: the single-agent env's
    batched form, with the same default opponents (``[RandomPolicy()]``).  The Gymnasium env's
    ``illegal_action`` options have no vector counterpart: an illegal action raises here."""
    for name in ("illegal_action", "illegal_reward"):
        if name in options:
            raise ConfigError(
                f"option {name} is the single-agent env's; the vector env raises on an illegal action (use the "
                "masks). For the single-agent env's behaviour use gymnasium.make_vec(..., vectorization_mode='sync')"
            )
    options.pop("max_episode_steps", None)  # Gymnasium passes the spec's (None: a game always ends)
    return CarcassonneVectorEnv(num_envs, opponents=_policies(opponents), learner_seat=learner_seat, **options)


__all__ = ["CarcassonneVectorEnv", "VECTOR_RESET_OPTIONS", "make_vec"]
