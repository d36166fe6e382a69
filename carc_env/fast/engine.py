"""The compiled engine's Python face: a batch of games stepped by the Numba kernels.

Contract
--------
``FastBatch(options, num_games, threads=1)`` holds ``num_games`` games of one
configuration (an :class:`~carc_env.fast.config.EngineConfig`, or validated
:class:`~carc_env.env.options.EnvOptions`, that :func:`~carc_env.fast.tables.coverage` accepts) as arrays with a leading game
axis.  It reproduces :class:`~carc_env.env.match.Match` exactly:

* seeds: :meth:`reset` ``(g, seed)`` seeds game ``g``'s stream as
  ``Match.next_seed`` does (``seed`` itself, then ``SeedSequence([seed,
  0x5EED])``; unseeded: a fresh stream), and a game's draw order is the
  shuffle ``Game.__init__`` makes of its seed (:meth:`bag_of`; the same numpy
  ``Generator.permutation``, checked against ``Game.draw_order`` by the tests);
  a forced ``draw_order`` goes through the reference ``Game`` (which validates it);
* :meth:`step` applies one flat action per game (the codec's layout), runs the
  automatic stages, writes rewards, and with ``auto_reset`` starts the next
  game of a finished one at once from its prepared draw order (the next seed of
  that game's stream, as the vector env's reset without a seed), then writes
  the acting seat's observation (board, globals, windows, action mask) into
  fresh arrays, byte-identical to :class:`~carc_env.encoding.ObservationEncoder`;
* :meth:`step_game` / :meth:`observe` / :meth:`mask` do the same for one game
  (the AEC env and the vector env's opponents);
* :meth:`game` is the reference :class:`~carc_env.core.Game` of game ``g``,
  rebuilt on demand by replaying its actions through the Python engine (for
  ``env.game``, rendering, baselines that search, records); a replay that
  disagrees with the compiled engine raises, so it is a check too.

The kernels release the GIL; with ``threads > 1`` a batched step runs on that
many threads over disjoint ranges of games: the calling thread and helper
threads started on the first threaded step, which wait for the next step in
compiled code (``_Helpers``; :meth:`close` stops them, and so does dropping the
batch).
"""

from __future__ import annotations

import copy
import os
import time
from typing import Any

import numpy as np

from ..core import ActionTypeError, Game, GameConfig, IllegalActionError, Pass, PlaceFollower, PlaceTile, as_index
from ..core.actions import checked_action, parse_action
from ..core.expansion import overrides
from . import kernels as K
from .config import engine_config
from .deal import shuffle
from .rng import WORDS as RNG_WORDS
from .rng import generator_words
from .seam import engine as E
from .seam import plugin_index, support
from .tables import (
    HIST_W,
    LOG_W,
    P_GOFF,
    P_LS_LEN,
    P_O_BAG,
    P_O_FMASK,
    P_O_HIST,
    P_O_LOG,
    P_O_NEXTBAG,
    P_O_NEXTRNG,
    P_O_SCORES,
    P_O_SPOTS,
    P_O_SUPPLY,
    Layout,
    build_layout,
)

_COORD_LIMIT = 1 << 40


def direct(fn: Any, args: tuple[Any, ...]) -> Any:
    """The machine-code entry of the overload of Numba dispatcher ``fn`` that a call ``fn(*args)`` has just
    run (``fn`` itself where there is none, e.g. without Numba).

    Calling a dispatcher first types every argument to pick the overload: with the tables and the state
    (two named tuples of arrays) that costs more than 2 us a call, as much as a one-game kernel's work.
    The per-step paths (the AEC env's step and observation, the vector env's batched step) keep the
    entry this returns and call it with arguments of the same types (the same tables and state, arrays
    they made with the same dtypes and dimensions): it unboxes them and releases the GIL as the
    dispatcher's call does, without the typing.  Only for such fixed call sites: an array of another
    dimension would not be refused."""
    try:
        sig = tuple(fn.typeof_pyval(a) for a in args)
        return fn.overloads[sig].entry_point
    except (AttributeError, KeyError, TypeError):
        return fn


def alloc_state(lay: Layout, G: int) -> K.State:
    """Zeroed state arrays for G games (layout in :mod:`carc_env.fast.kernels`).

    32-bit integers: a game's state is then about 40 KB, so a batch's states stay in the caches longer
    (observations of 64 games at once cost a third more with 64-bit state)."""
    nt = lay.total_tiles + lay.printed  # placements: the printed pieces of a printed board, then the game's tiles
    return K.State(
        gi=np.zeros((G, K.G_LEN), dtype=np.int64),
        grid=np.full((G, lay.grid_w, lay.grid_w), K.EMPTY, dtype=np.int16),
        pl=np.zeros((G, nt + 1, 5), dtype=np.int32),
        fr=np.zeros((G, lay.frontier_cap, 3), dtype=np.int32),
        nd=np.zeros((G, lay.node_cap, K.N_LEN), dtype=np.int32),
        ls=np.zeros((G, int(lay.tables.P[P_LS_LEN])), dtype=np.int32),
    )


class ReadOnlyGameError(AttributeError):
    """An edit of the reference game of a compiled game (``env.unwrapped.game`` on the compiled engine)."""


def _read_only(what: str) -> ReadOnlyGameError:
    return ReadOnlyGameError(
        f"{what}: this game is read-only; it is the compiled engine's game replayed by the Python engine, and "
        'an edit of it would never reach the engine that steps (make the env with engine="python" to edit '
        "its game, or clone() it to play on a copy)"
    )


def _ordinary_game(state: dict[str, Any]) -> Game:
    game = Game.__new__(Game)
    game.__dict__.update(state)
    return game


class ReferenceGame(Game):
    """The reference :class:`~carc_env.core.Game` of a game of the compiled engine (:meth:`FastBatch.game`):
    read it freely; only the batch moves it (``apply``, attribute writes and deletes raise
    :class:`ReadOnlyGameError`).  Its clones, copies and unpickled twins are ordinary games."""

    def apply(self, action: Any) -> Any:
        if "_following" in self.__dict__:
            return Game.apply(self, action)
        raise _read_only(f"apply({action!r})")

    def __setattr__(self, name: str, value: Any) -> None:
        if "_following" not in self.__dict__:
            raise _read_only(f"setting {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if "_following" not in self.__dict__:
            raise _read_only(f"deleting {name!r}")
        object.__delattr__(self, name)

    def __reduce_ex__(self, protocol: Any) -> Any:  # copy, deepcopy and pickle give an ordinary Game
        return _ordinary_game, (self.__dict__.copy(),)

    def follow(self, action: Any) -> Any:
        """Apply ``action`` (the batch's call: the compiled game took it)."""
        d = self.__dict__
        d["_following"] = True
        try:
            return Game.apply(self, action)
        finally:
            del d["_following"]


class _RulesOnly:
    """What an expansion's ``build_bag`` reads of the game: its rules."""

    def __init__(self, rules: Any) -> None:
        self.rules = rules


class FastBatch:
    """``num_games`` games stepped by the compiled kernels.  See the module docstring."""

    def __init__(self, options: Any, num_games: int, threads: int = 1, layout: Layout | None = None) -> None:
        if not isinstance(num_games, int) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.options = engine_config(options)
        self.layout = layout or build_layout(self.options)
        self.tables = self.layout.tables
        self.num_games = num_games
        self.num_players = self.layout.num_players
        self.threads = min(threads, num_games)
        self.state = alloc_state(self.layout, num_games)
        self.seeds: list[int | None] = [None] * num_games
        self.draw_orders: list[list[str] | None] = [None] * num_games
        self._seed_rngs: list[np.random.Generator | None] = [None] * num_games
        self._next_seeds: list[int | None] = [None] * num_games
        self._shadow: list[Game | None] = [None] * num_games
        self._helpers: _Helpers | None = None  # the helper threads of a threaded step, started on its first
        self._counter = np.zeros(1, dtype=np.int64)  # (the first argument types of step_chunks, whatever threads)
        self._epoch = 0  # bumped by every batched step (all games change)
        self._vers = [0] * num_games  # bumped by every change of one game
        self._unprepared: list[int] = []  # games restarted by the last step whose successor is not loaded yet
        self.extra_outputs: Any = None  # a caller's own arrays for each step (take_extra)
        lay = self.layout
        self._off = {
            k: int(self.tables.P[k])
            for k in (
                P_O_BAG,
                P_O_FMASK,
                P_O_HIST,
                P_O_LOG,
                P_O_NEXTBAG,
                P_O_NEXTRNG,
                P_O_SCORES,
                P_O_SPOTS,
                P_O_SUPPLY,
            )
        }
        self.codec = lay.codec
        self.encoder = lay.encoder
        self._scratch_rewards = np.zeros(8, dtype=np.float64)
        # machine-code entries of the per-step kernels (direct()), by name, found on their first call
        self._entries: dict[str, Any] = {}

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        self._flush()
        d = self.__dict__.copy()
        d["_helpers"] = None
        d.pop("_feature_kernels", None)  # scratch arrays of carc_env.fast.features, rebuilt on use
        d["_entries"] = {}  # machine-code entries (direct()), found again on use
        d["_shadow"] = [None] * self.num_games
        for k in ("layout", "tables", "codec", "encoder"):
            d.pop(k)
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        d.setdefault("_unprepared", [])  # pickled before the deferred preparation existed
        for k in ("_spare", "_spare_next", "_extra"):  # pickled when a helper allocated the next step's arrays
            d.pop(k, None)
        d.setdefault("extra_outputs", None)
        d["_entries"] = {}
        d.pop("_pool", None)  # pickled when a thread pool ran the threads
        d.setdefault("_helpers", None)
        d.setdefault("_counter", np.zeros(1, dtype=np.int64))
        self.__dict__.update(d)
        self.layout = build_layout(self.options)
        self.state = K.State(*self.state)
        self.tables = self.layout.tables
        self.codec = self.layout.codec
        self.encoder = self.layout.encoder

    # ------------------------------------------------------------------ seeds and bags
    def _seed_stream(self, g: int, seed: Any) -> tuple[int, np.random.Generator]:
        """The game seed of a reset of game g and its seed stream after it, without changing anything
        (``Match``'s rule: ``seed`` itself and a new stream, else the next seed of the last stream)."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(
                    f"seed must be a non-negative integer or None, got {seed!r} of type {type(seed).__name__}"
                )
            return int(seed), np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED]))
        rng = self._seed_rngs[g]
        stream = np.random.default_rng() if rng is None else copy.deepcopy(rng)
        return int(stream.integers(2**62)), stream

    def next_seed(self, g: int, seed: int | None) -> int:
        """The game seed of game g's next reset; its seed stream moves on (Match's seed rule)."""
        self._flush()
        return self._next_seed(g, seed)

    def _next_seed(self, g: int, seed: int | None) -> int:
        rng = self._seed_rngs[g]
        if seed is None and rng is not None:  # what _seed_stream returns, without its copy of the stream
            return int(rng.integers(2**62))  # (a deepcopy of a Generator costs more than the rest of a reset)
        s, self._seed_rngs[g] = self._seed_stream(g, seed)
        return s

    def bag_of(self, seed: int) -> np.ndarray:
        """The draw order (after the start tile) ``Game(config, seed=seed)`` shuffles: same generator, same call."""
        return self._deal(seed)[0]

    def _deal(self, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`bag_of`, and the words of the game's generator after the shuffle (``game.rng`` as the
        reference's setup leaves it, :mod:`carc_env.fast.rng`) when an enabled plug-in draws from it."""
        return self._deals([seed])[0]

    def _deals(self, seeds: list[int]) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """:meth:`_deal` of each seed.  Without plug-in setup draws the shuffles (``default_rng(seed)`` and
        its ``permutation``) run compiled, all seeds in one call (:func:`carc_env.fast.deal.shuffle`:
        building NumPy's generator costs more than a base game's rules); the expansions' ``build_bag``
        then runs on each order in Python."""
        lay = self.layout
        if lay.draw_hooks or any(s >= 1 << 63 for s in seeds):  # the plug-ins' setup draws come first
            return [self._deal_numpy(s) for s in seeds]  # (or a seed beyond the compiled deal's int64)
        bags, words = shuffle(seeds, lay.base_bag, lay.uses_rng)
        bags = self._build_bags(bags)
        return [(bags[i], None if words is None else words[i]) for i in range(len(seeds))]

    def _deal_numpy(self, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`_deal` through NumPy's generator itself."""
        lay = self.layout
        rng = np.random.default_rng(seed)
        draws = [v for hook in lay.draw_hooks for v in hook(rng)]  # the plug-ins' setup draws come first
        bag = self._build_bag(lay.base_bag[rng.permutation(len(lay.base_bag))])
        words = generator_words(rng) if lay.uses_rng else None
        if draws:
            bag = np.concatenate([np.array(draws, dtype=np.int64), bag])
        return bag, words

    def _build_bag(self, bag: np.ndarray) -> np.ndarray:
        """The expansions' own build_bag (the river first) on one shuffled order."""
        return self._build_bags(bag[None, :])[0] if self.layout.bag_hooks else bag

    def _build_bags(self, bags: np.ndarray) -> np.ndarray:
        """The expansions' own build_bag, in expansion order, on every row of ``bags`` (shuffled orders):
        a plug-in's vectorised ``FastSupport.build_bags`` where it has one, else its Python hook per row
        (they read only game.rules)."""
        if not self.layout.bag_hooks:
            return bags
        rules = self.layout.rules
        for exp in rules.expansions:
            if not overrides(exp, "build_bag"):
                continue
            fast = support(exp.KEY)
            if fast is not None and fast.build_bags is not None:
                bags = fast.build_bags(rules, exp, bags)
            else:
                shim = _RulesOnly(rules)
                bags = np.array([exp.build_bag(shim, row.tolist()) for row in bags], dtype=np.int64)
        return bags

    def _with_draws(self, seed: int, bag: np.ndarray) -> np.ndarray:
        """The plug-ins' setup draws of game ``seed`` (``FastSupport.setup_draws``) before its draw order:
        what the kernels load (``T.P[P_NDRAWS]`` of them; the reference draws them before its shuffle)."""
        rng = np.random.default_rng(seed)
        draws = [v for hook in self.layout.draw_hooks for v in hook(rng)]
        return np.concatenate([np.array(draws, dtype=np.int64), bag]) if draws else bag

    def _bag_of_order(self, seed: int, draw_order: Any) -> np.ndarray:
        game = Game(self.layout.rules.config, seed=seed, draw_order=draw_order)  # validates the order
        index = self.layout.rules.tile_index
        return self._with_draws(seed, np.array([index[t] for t in game.draw_order], dtype=np.int64))

    def _load_next(self, g: int, bag: np.ndarray, words: np.ndarray | None = None) -> None:
        o = self._off[P_O_NEXTBAG]
        self.state.ls[g, o : o + len(bag)] = bag
        self.state.gi[g, K.G_NEXTBAG_N] = len(bag)
        if words is not None:
            o = self._off[P_O_NEXTRNG]
            self.state.ls[g, o : o + len(words)] = words

    def reset(self, g: int, seed: int | None = None, draw_order: Any = None, prepare_next: bool = False) -> None:
        """Start game g (seed semantics of Match.reset); ``prepare_next`` readies its auto-reset successor.

        The seed is checked and the draw order built (a forced one validated by the reference ``Game``)
        before anything changes: a reset that raises leaves game g, its seed stream included, as it was."""
        self._flush()
        s, stream = self._seed_stream(g, seed)
        bag, words = self._deal(s)
        if draw_order is not None:  # the generator is where the shuffle left it either way (Game._shuffled_bag)
            bag = self._bag_of_order(s, draw_order)
        order = None if draw_order is None else list(draw_order)
        # nothing raises from here on
        self._seed_rngs[g] = stream
        self._load_next(g, bag, words)
        E().reset_range(self.tables, self.state, np.array([g], dtype=np.int64), np.array([len(bag)], dtype=np.int64))
        self._vers[g] += 1
        self.seeds[g] = s
        self.draw_orders[g] = order
        self._shadow[g] = None
        self._next_seeds[g] = None
        if prepare_next:
            self.prepare_next(g)

    def prepare_next(self, g: int) -> None:
        """Draw the next seed of game g's stream and load its draw order for an in-kernel reset."""
        self._flush()
        self._prepare(g)

    def _prepare(self, g: int) -> None:
        s = self._next_seed(g, None)
        self._load_next(g, *self._deal(s))
        self._next_seeds[g] = s

    def _prepare_all(self, games: list[int]) -> int:
        for g in games:
            self._prepare(g)
        return 0

    def _outputs(self, rows: int) -> tuple[Any, ...]:
        """Fresh output arrays of a step: rewards, dones, final scores, episode lengths, seats (zeroed: the
        kernel writes only what changes) and the observations of ``rows`` games."""
        G, n = self.num_games, self.num_players
        return (
            np.zeros((G, n), dtype=np.float64),
            np.zeros(G, dtype=np.bool_),
            np.zeros((G, n), dtype=np.int64),
            np.zeros(G, dtype=np.int64),
            np.zeros(G, dtype=np.int64),
            self.empty_obs(rows),
        )

    def _ahead(self, games: list[int]) -> int:
        """What a step does for the next one while the games are stepped (with threads, in the first
        helper to join the step while the other threads step games, else after the step; Python, which
        holds the GIL that the kernels release): the draw orders of the games the last step restarted
        (:meth:`_prepare_all`).

        It allocates nothing: a step's output arrays are allocated by the thread that calls :meth:`step`
        (:meth:`_outputs`, :meth:`take_extra`).  Allocated in a helper thread, they came from that thread's
        malloc arena, which gave their pages back to the system as the caller freed the last step's
        arrays: every threaded step then faulted in about 270 fresh pages (a megabyte at 64 games, the
        base game with 4 players) and the two threads queued on the process's memory map lock; allocated
        by the caller, no step faults a page once the arrays' sizes have been met (docs/benchmark.md,
        "Session 11")."""
        return self._prepare_all(games)

    def take_extra(self) -> Any:
        """``extra_outputs()`` (a function of no argument that a caller of :meth:`step` sets: the fresh arrays
        it fills after each step), allocated now, by the calling thread (see :meth:`_ahead`)."""
        return self.extra_outputs()

    def _flush(self) -> None:
        """Prepare the successors a step deferred (see :meth:`step`): what a reset, a pickle or a saved copy
        of a game sees is then what it saw when every step prepared them at once."""
        if self._unprepared:
            games, self._unprepared = self._unprepared, []
            self._prepare_all(games)

    # ------------------------------------------------------------------ batched step
    def empty_obs(self, rows: int) -> dict[str, np.ndarray]:
        enc = self.encoder
        obs = {
            "board": np.empty((rows, *enc.board_shape), dtype=np.uint8),
            "globals": np.empty((rows, enc.n_globals), dtype=np.float32),
            "windows": np.empty((rows, *enc.windows_shape), dtype=np.uint8),
            "action_mask": np.empty((rows, self.codec.n), dtype=np.int8),
        }
        if getattr(self.options, "action_features", False):
            from ..encoding.action_features import action_feature_shapes

            for key, shape in action_feature_shapes(self.codec, self.options.action_feature_rows).items():
                obs[key] = np.zeros((rows, *shape), dtype=np.int64 if key == "place_index" else np.float32)
        return obs

    def add_action_features(self, obs: dict[str, np.ndarray], games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Write the action features (option ``action_features``) of ``games[j]`` seen by ``seats[j]`` into row j
        of ``obs`` (whose ``action_mask`` rows are already written); return, per row, the legal placements
        that did not fit in the rows (``info["placements_without_features"]``)."""
        from .features import kernels_of

        fk = kernels_of(self)
        counts = np.zeros(len(games), dtype=np.int64)
        E().features_range(
            self.tables,
            self.state,
            fk.X,
            fk.W,
            np.asarray(games, dtype=np.int64),
            np.asarray(seats, dtype=np.int64),
            obs["action_mask"],
            obs["place_index"],
            obs["place_features"],
            obs["spots"],
            counts,
        )
        return np.where(counts < 0, -counts - 1, 0)

    @property
    def _chunk(self) -> int:
        """Games per chunk of a threaded step: about 32 chunks per thread (each thread steps its own games
        first, :func:`~carc_env.fast.atomic.take_chunk`; one that finishes early takes the others' chunks
        that are left, so the threads' finishing times differ by a chunk at most: one game each when there
        are few, a game's step costs microseconds, the atomic add that hands out a chunk nanoseconds)."""
        return max(1, -(-self.num_games // (32 * self.threads)))

    def step(
        self, actions: np.ndarray, auto_reset: bool = True, observe: bool = True, checked: bool = False
    ) -> tuple[dict[str, np.ndarray] | None, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game.  Returns ``(obs, rewards float64 (G, P), dones, final_scores, episode_lengths,
        seats)``; ``obs`` (acting seat of each game) is None without ``observe``.

        Ill-typed or out-of-range actions raise before any game moves; the legality of each action is
        the caller's to check against the masks first (the vector env does, for the whole batch): an
        illegal one found by the kernels raises after the other games moved, its own game unchanged.
        ``checked=True``: ``actions`` is a C-contiguous int64 array of shape (G,) whose every entry the
        caller has found enabled in its game's mask (the vector env's path; the type and range checks are
        skipped)."""
        G = self.num_games
        if not checked:
            arr = np.asarray(actions)
            if arr.shape != (G,):
                raise ValueError(f"actions must have shape ({G},), got {arr.shape}")
            if arr.dtype.kind not in "iu":  # never truncate floats (or bools) into actions
                raise ActionTypeError(f"actions must be integers, got an array of dtype {arr.dtype}")
            if ((arr < 0) | (arr >= self.codec.n)).any():
                g = int(np.flatnonzero((arr < 0) | (arr >= self.codec.n))[0])
                raise IllegalActionError(f"game {g}: action {arr[g]} is outside the action space 0..{self.codec.n - 1}")
            actions = np.ascontiguousarray(arr, dtype=np.int64)
        # fresh output arrays, allocated by this thread (see _ahead)
        rewards, dones, final, eplen, seats, obs = self._outputs(G if observe else 1)
        # reference games someone holds follow the step (decoded before the kernel moves the window)
        follow = []
        if self._shadow.count(None) < G:
            follow = [
                (g, self.codec.decode(sh, int(actions[g]))) for g, sh in enumerate(self._shadow) if sh is not None
            ]
        args = (
            actions,
            auto_reset,
            rewards,
            dones,
            final,
            eplen,
            observe,
            obs["board"],
            obs["globals"],
            obs["windows"],
            obs["action_mask"],
            seats,
        )
        T, S = self.tables, self.state
        self._epoch += 1
        counter = self._counter
        counter[0] = 0
        # The games the last step restarted get their successors' draw orders now (Python work: a seed and
        # a shuffle each).  A game that has just started cannot end in this step (its draw order has
        # dozens of tiles), and the kernel reads a game's prepared draw order only when the game ends, so
        # with threads this runs in a worker while the other threads step the games (checked below).
        unprepared, self._unprepared = self._unprepared, []
        step_chunks = self._entries.get("step_chunks")
        first = step_chunks is None  # the first call types the arguments (the dispatcher); later ones do not
        if first:
            step_chunks = E().step_chunks
        if self.threads == 1:
            self._ahead(unprepared)
            bad = step_chunks(T, S, counter, G, 0, 1, *args)
        else:
            # One kernel call per thread; the threads take chunks of games from one counter inside the
            # compiled code (an atomic add), so they come back to Python (and the GIL) once per step, not
            # once per chunk, and a thread the OS deschedules leaves its chunks to the others.  The helper
            # threads wait for the step in compiled code (_Helpers); the first to join it prepares the draw
            # orders first (_ahead), holding the GIL while the calling thread has released it in its kernel
            # (if none joins, the calling thread does after the step).
            helpers = self._started_helpers()
            job = (T, S, helpers.ctl, self._chunk, 0, helpers.n + 1, *args)
            bad = helpers.step(self._ahead, unprepared, step_chunks, job, me=4)
            if unprepared and True in dones[unprepared].tolist():  # pragma: no cover - a game of fewer than two tiles
                raise RuntimeError("a game restarted by the last step ended before its successor was prepared")
        if first:
            self._entries["step_chunks"] = direct(step_chunks, (T, S, counter, G, 0, 1, *args))
        refused = np.flatnonzero(S.gi[:, K.G_ERR]).tolist() if bad else []
        # the games that moved are accounted for even when another game's action was refused (their
        # reference games follow, a restarted game's seed and successor are booked): the error below
        # leaves the batch as consistent as a step without it
        for g, action in follow:
            if g not in refused:
                shadow = self._shadow[g]
                shadow.follow(action)  # type: ignore[union-attr]
        for g in dones.nonzero()[0].tolist():  # (the method: np.flatnonzero costs 10x more in Python)
            if auto_reset:
                self._shadow[g] = None
                self.seeds[g] = self._next_seeds[g]
                self.draw_orders[g] = None
                self._unprepared.append(g)  # its successor is prepared at the start of the next step
        if refused:
            g = refused[0]
            raise IllegalActionError(f"game {g}: action {int(actions[g])} is not legal (see the action mask)")
        if observe and "spots" in obs:
            self.add_action_features(obs, np.arange(G, dtype=np.int64), seats)
        return (obs if observe else None), rewards, dones, final, eplen, seats

    def _started_helpers(self) -> _Helpers:
        """The helper threads of a threaded call, started on the first (a forked child has none of them)."""
        helpers = self._helpers
        if helpers is None or helpers.pid != os.getpid():
            helpers = self._helpers = _Helpers(self.threads - 1)
        return helpers

    def sample_rows(self, mask: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, int]:
        """Row ``i``'s ``floor(u[i] k_i)``-th enabled entry (``k_i`` of them) for every row of ``mask``, int64
        (N,), -1 for a row that enables nothing; and the number of such rows.  ``mask``: (N, A) of one-byte
        entries, each 0 or 1 (the batch's masks, int8, or bool); ``u``: float64 (N,) in [0, 1).  The rows
        are scanned by compiled code on this batch's threads
        (:func:`carc_env.fast.vector_kernels.sample_chunks`), like a step's games."""
        if not mask.flags.c_contiguous or mask.dtype.itemsize != 1 or mask.ndim != 2:
            mask = np.ascontiguousarray(mask, dtype=np.uint8).reshape(len(mask), -1)
        if u.dtype != np.float64 or not u.flags.c_contiguous:
            u = np.ascontiguousarray(u, dtype=np.float64)
        out = np.empty(len(u), dtype=np.int64)
        return out, self._sample(mask, u, out)

    def _sample(self, mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> int:
        """:meth:`sample_rows`'s compiled call (on every thread); the rows that enable nothing."""
        key = ("sample_chunks", mask.dtype.char, mask.flags.writeable, u.flags.writeable)  # (each its overload)
        fn = self._entries.get(key)
        first = fn is None  # the first call types the arguments; later ones call the machine-code entry
        if first:
            from .vector_kernels import sample_chunks as fn
        N = len(u)
        if self.threads == 1:
            counter = self._counter
            counter[0] = 0
            args = (counter, N, 0, 1, mask, u, out)
            empty = fn(*args)
        else:  # chunks of a few rows, taken by the calling thread and the helpers as a step's games are
            helpers = self._started_helpers()
            args = (helpers.ctl, max(1, -(-N // (8 * self.threads))), 0, helpers.n + 1, mask, u, out)
            empty = helpers.step(None, [], fn, args, me=2)
        if first:
            self._entries[key] = direct(fn, args)
        return empty

    def observe_acting(self) -> dict[str, np.ndarray]:
        """Every game's observation for its acting seat, stacked (fresh arrays)."""
        G = self.num_games
        obs = self.empty_obs(G)
        games = np.arange(G, dtype=np.int64)
        seats = self.state.gi[:, K.G_PLAYER].copy()
        E().observe_range(
            self.tables, self.state, games, seats, obs["board"], obs["globals"], obs["windows"], obs["action_mask"]
        )
        if "spots" in obs:
            self.add_action_features(obs, games, seats)
        return obs

    def observe_games(self, games: Any, seats: Any) -> dict[str, np.ndarray]:
        """Observations of ``games[j]`` for absolute seat ``seats[j]``, stacked (fresh arrays; with the action
        features when the option ``action_features`` is on)."""
        games = np.asarray(games, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        obs = self.empty_obs(len(games))
        E().observe_range(
            self.tables, self.state, games, seats, obs["board"], obs["globals"], obs["windows"], obs["action_mask"]
        )
        if "spots" in obs:
            self.add_action_features(obs, games, seats)
        return obs

    def masks_of(self, games: Any) -> np.ndarray:
        """The deciding seats' masks of ``games`` (int8 (len, N), fresh; zero rows for finished games)."""
        games = np.asarray(games, dtype=np.int64)
        m = np.empty((len(games), self.codec.n), dtype=np.int8)
        E().masks_range(self.tables, self.state, games, m)
        return m

    def step_games(self, games: Any, actions: Any) -> np.ndarray:
        """One flat action in each of ``games`` (no auto-reset, no observation); the rewards of every seat
        (float64 (len, players)).  An illegal action raises IllegalActionError naming its game (the games
        before it in the list have stepped, its own is unchanged): check the masks first."""
        games = np.asarray(games, dtype=np.int64)
        actions = np.asarray(actions, dtype=np.int64)
        rewards = np.zeros((len(games), 8), dtype=np.float64)
        bad = E().step_games(self.tables, self.state, games, actions, rewards)
        for g in games[: bad if bad >= 0 else len(games)].tolist():
            self._vers[g] += 1
            if self._shadow[g] is not None:
                self._sync(g)
        if bad >= 0:
            raise IllegalActionError(f"game {int(games[bad])}: action {int(actions[bad])} is not legal (see the mask)")
        return rewards[:, : self.num_players]

    def over_all(self) -> np.ndarray:
        """Per game, whether it is over (bool (G,))."""
        return self.state.gi[:, K.G_PHASE] == K.PH_OVER

    def players_all(self) -> np.ndarray:
        """Per game, the deciding seat (int64 (G,); meaningless once over)."""
        return self.state.gi[:, K.G_PLAYER].astype(np.int64)

    def outside_all(self) -> np.ndarray:
        """Legal placements outside the window, per game (int64 (G,))."""
        return self.state.gi[:, K.G_OUTSIDE].copy()

    def version(self, g: int) -> tuple[int, int]:
        """A value that changes whenever game g's state does (for callers' caches of its observations)."""
        return self._epoch, self._vers[g]

    # ------------------------------------------------------------------ one game
    def step_game(self, g: int, action: int) -> list[float]:
        """Apply flat ``action`` (an integer) in game g (no auto-reset); the rewards of every seat.
        An illegal action raises IllegalActionError and leaves the game as it was."""
        action = as_index(action, "an action")
        if self.over(g):
            raise IllegalActionError(f"action {action}: the game is over; no action is legal")
        if not 0 <= action < self.codec.n:
            raise IllegalActionError(f"action {action} is outside the action space 0..{self.codec.n - 1}")
        return self.step_legal(g, action)

    def step_legal(self, g: int, action: int) -> list[float]:
        """:meth:`step_game` for a Python int the caller has checked against game g's mask (the AEC env's
        path); the kernel still refuses an illegal one (IllegalActionError, the game unchanged)."""
        r = self._scratch_rewards
        step_one = self._entries.get("step_one")
        if step_one is None:
            args = (self.tables, self.state, g, -1, action, 0, 0, r)
            ok = E().step_one(*args)
            self._entries["step_one"] = direct(E().step_one, args)
        else:
            ok = step_one(self.tables, self.state, g, -1, action, 0, 0, r)
        if not ok:
            raise IllegalActionError(f"action {action} is not legal in phase {self.phase(g)!r} (see the mask)")
        self._vers[g] += 1
        if self._shadow[g] is not None:
            self._sync(g)
        return r[: self.num_players].tolist()

    def apply(self, g: int, action: PlaceTile | PlaceFollower | Pass) -> list[float]:
        """Apply a core action (absolute coordinates) in game g; the rewards of every seat.

        Checked like ``Game.apply``: the action's field types first (``ActionTypeError``), then its
        legality (``IllegalActionError``); a refused action leaves the game as it was."""
        if self.over(g):
            raise IllegalActionError("the game is over; no action is legal")
        action = checked_action(action)
        t = type(action)
        if t is PlaceTile:
            args = (0, action.x, action.y, action.rotation)
        elif t is PlaceFollower:
            args = (1, action.segment, 0, 0)
        elif t is Pass and self.phase(g) == "follower":
            args = (2, 0, 0, 0)
        elif t is Pass and int(self.state.gi[g, K.G_PHASE]) != K.PH_PLUG:
            raise IllegalActionError(f"'pass' is not legal in phase {self.phase(g)!r}")
        elif int(self.state.gi[g, K.G_PHASE]) == K.PH_PLUG:
            return self._apply_plugin(g, action)
        else:
            raise IllegalActionError(f"the compiled engine has no action {action!r} in phase {self.phase(g)!r}")
        if any(abs(v) > _COORD_LIMIT for v in args[1:]):  # far off any board (and beyond the kernels' int64)
            raise IllegalActionError(f"{action.to_text()!r} is not legal in phase {self.phase(g)!r}")
        r = self._scratch_rewards
        if not E().step_one(self.tables, self.state, g, *args, r):
            raise IllegalActionError(f"{action.to_text()!r} is not legal in phase {self.phase(g)!r}")
        self._vers[g] += 1
        if self._shadow[g] is not None:
            self._sync(g)
        return [float(v) for v in r[: self.num_players]]

    def plugin_row(self, g: int, action: Any) -> tuple[int, int, int]:
        """The history row ``(a, b, c)`` naming ``action`` in game g's open plug-in decision (its fast part's
        ``history_row``); IllegalActionError if it names nothing."""
        key = self._plugin_key(int(self.state.gi[g, K.G_DPLUG]))
        return support(key).history_row(self.layout.rules, action, self._tile_at(g))

    def _apply_plugin(self, g: int, action: Any) -> list[float]:
        """A plug-in phase's action (records, play-outs): its history row, applied by the plug-in's kernel."""
        a, b, c = self.plugin_row(g, action)
        if any(abs(v) > _COORD_LIMIT for v in (a, b, c)):
            raise IllegalActionError(f"{action.to_text()!r} is not legal in phase {self.phase(g)!r}")
        r = self._scratch_rewards
        if not E().step_one(self.tables, self.state, g, 3, a, b, c, r):
            raise IllegalActionError(f"{action.to_text()!r} is not legal in phase {self.phase(g)!r}")
        self._vers[g] += 1
        if self._shadow[g] is not None:
            self._sync(g)
        return [float(v) for v in r[: self.num_players]]

    def _plugin_key(self, i: int) -> str:
        return next(k for k, j in plugin_index().items() if j == i)

    def _tile_at(self, g: int) -> Any:
        off = int(self.tables.P[P_GOFF])
        grid, pl = self.state.grid, self.state.pl
        w = grid.shape[1]

        def tile_at(x: int, y: int) -> int:
            if not (0 <= x + off < w and 0 <= y + off < w) or grid[g, y + off, x + off] < 0:
                return -1
            return int(pl[g, int(grid[g, y + off, x + off]), 2])

        last = int(self.state.gi[g, K.G_NPL]) - 1
        tile_at.last = (int(pl[g, last, 0]), int(pl[g, last, 1]))  # type: ignore[attr-defined]  # the tile just placed
        return tile_at

    def record(self, g: int) -> dict[str, Any]:
        """The JSON game record of game g (:mod:`carc_env.core.record`'s format), written by this engine."""
        from ..core.record import FORMAT, VERSION

        tiles = self.layout.rules.tiles
        texts: list[str] = []
        actions = self.actions(g)
        # the placement of the last tile action: the setup's placements (the start tile, a plug-in's start
        # layout) come first
        placed = int(self.state.gi[g, K.G_NPL]) - 1 - sum(1 for a in actions if type(a) is PlaceTile)
        for action in actions:
            if type(action) is PlaceTile:
                placed += 1
                texts.append(action.to_text())
            elif type(action) is PlaceFollower:
                t = int(self.state.pl[g, placed, 2])
                texts.append(f"follower {tiles[t].segments[action.segment].name}")
            else:
                texts.append(action.to_text())
        return {
            "format": FORMAT,
            "version": VERSION,
            "config": self.layout.rules.config.to_dict(),
            "seed": self.seeds[g],
            "draw_order": self.draw_order(g),
            "actions": texts,
            "scores": self.scores(g),
            "over": self.over(g),
        }

    def _parse(self, g: int, text: Any) -> PlaceTile | PlaceFollower | Pass:
        k = int(self.state.gi[g, K.G_NPL]) - 1
        last = self.layout.rules.tiles[int(self.state.pl[g, k, 2])] if k >= 0 else None
        return parse_action(text, last, self.layout.rules.action_parsers)  # type: ignore[return-value]

    def replay(self, g: int, record: Any) -> None:
        """Load a JSON game record (written by either engine) into game g and replay its actions here.

        Raises ``RecordError`` (the reference's checks and words, :func:`carc_env.core.record.check_record`)
        if the record is malformed or not of this configuration, names the first action that does not
        replay, or if the replay ends with other scores than the record's; game g is then left as it was."""
        from ..core.record import RecordError, check_record

        actions, scores = check_record(record)
        mine = self.layout.rules.config
        try:
            same = GameConfig.from_dict(record["config"]).key() == mine.key()
        except (ValueError, TypeError) as exc:
            raise RecordError(f"record config, seed or draw order is invalid: {exc}") from None
        if not same:
            raise RecordError(f"the record's config {record['config']} is not this engine's {mine.to_dict()}")
        saved = self._save(g)
        try:
            try:
                self.reset(g, seed=record["seed"], draw_order=record["draw_order"])
            except (ValueError, TypeError) as exc:  # ConfigError is a ValueError
                raise RecordError(f"record config, seed or draw order is invalid: {exc}") from None
            for i, text in enumerate(actions):
                try:
                    self.apply(g, self._parse(g, text))
                except IllegalActionError as exc:
                    raise RecordError(f"action {i} ({text!r}) does not replay: {exc}") from None
            if scores is not None and scores != self.scores(g):
                raise RecordError(f"replay ends with scores {self.scores(g)}, the record says {scores}")
        except BaseException:
            self._restore(g, saved)
            raise

    def _save(self, g: int) -> tuple[Any, ...]:
        """Everything of game g (state rows and Python-side fields), for :meth:`_restore`."""
        self._flush()
        rows = tuple(a[g].copy() for a in self.state)
        return (
            rows,
            self.seeds[g],
            self.draw_orders[g],
            copy.deepcopy(self._seed_rngs[g]),
            self._next_seeds[g],
            self._shadow[g],
        )

    def _restore(self, g: int, saved: tuple[Any, ...]) -> None:
        rows, self.seeds[g], self.draw_orders[g], self._seed_rngs[g], self._next_seeds[g], self._shadow[g] = saved
        for a, row in zip(self.state, rows, strict=True):
            a[g] = row
        self._vers[g] += 1  # observations cached meanwhile are stale

    def observe(self, g: int, seat: int) -> dict[str, np.ndarray]:
        """Observation of game g for absolute ``seat`` (fresh arrays)."""
        obs = self.empty_obs(1)
        games, seats = np.array([g], dtype=np.int64), np.array([seat], dtype=np.int64)
        E().observe_range(
            self.tables, self.state, games, seats, obs["board"], obs["globals"], obs["windows"], obs["action_mask"]
        )
        if "spots" in obs:
            self.add_action_features(obs, games, seats)
        return {k: v[0] for k, v in obs.items()}

    def mask(self, g: int) -> np.ndarray:
        """The deciding seat's int8 action mask of game g (fresh array; all zero once the game is over)."""
        m = np.empty((1, self.codec.n), dtype=np.int8)
        E().masks_range(self.tables, self.state, np.array([g], dtype=np.int64), m)
        return m[0]

    # ------------------------------------------------------------------ inspection
    def phase(self, g: int) -> str:
        ph = int(self.state.gi[g, K.G_PHASE])
        if ph == K.PH_PLUG:  # a plug-in's decision: its phase's position in the encoder's phases
            return self.encoder.phases[int(self.state.gi[g, K.G_DPHASE])]
        return ("tile", "follower", "game_over")[ph]

    def dropped(self, g: int) -> int:
        """Legal moves of the open plug-in decision its action range cannot express, as of the last mask
        written (``info["actions_out_of_range"]``; 0 in the core's phases)."""
        return int(self.state.gi[g, K.G_DROPPED]) if int(self.state.gi[g, K.G_PHASE]) == K.PH_PLUG else 0

    def over(self, g: int) -> bool:
        return int(self.state.gi[g, K.G_PHASE]) == K.PH_OVER

    def player(self, g: int) -> int:
        return int(self.state.gi[g, K.G_PLAYER])

    def turn_player(self, g: int) -> int:
        return int(self.state.gi[g, K.G_TURNP])

    def scores(self, g: int) -> list[int]:
        o = self._off[P_O_SCORES]
        return [int(v) for v in self.state.ls[g, o : o + self.num_players]]

    def supply(self, g: int) -> list[int]:
        o = self._off[P_O_SUPPLY]
        return [int(v) for v in self.state.ls[g, o : o + self.num_players]]

    def draw_order(self, g: int) -> list[str]:
        """Tile ids of game g's draw order (after the start tile)."""
        o = self._off[P_O_BAG]
        tiles = self.layout.rules.tiles
        return [tiles[t].id for t in self.state.ls[g, o : o + int(self.state.gi[g, K.G_BAG_N])]]

    def outside(self, g: int) -> int:
        """Legal placements outside the observation window (``info["placements_outside_window"]``)."""
        return int(self.state.gi[g, K.G_OUTSIDE])

    def window(self, g: int) -> tuple[int, int]:
        return int(self.state.gi[g, K.G_X0]), int(self.state.gi[g, K.G_Y0])

    def steps(self, g: int) -> int:
        return int(self.state.gi[g, K.G_STEPS])

    def legal_tile_placements(self, g: int) -> np.ndarray:
        """All legal placements (x, y, rotation) of the drawn tile, in the reference's order."""
        S = self.state
        if self.phase(g) != "tile":
            return np.zeros((0, 3), dtype=np.int64)
        nf = int(S.gi[g, K.G_NF])
        o = self._off[P_O_FMASK]
        m = S.ls[g, o : o + nf].astype(np.uint8)
        bits = (m[:, None] >> np.arange(4, dtype=np.uint8)[None, :]) & 1
        ci, ri = np.nonzero(bits)
        return np.stack([S.fr[g, ci, 0], S.fr[g, ci, 1], ri], axis=1)

    def legal_follower_spots(self, g: int) -> list[int]:
        if self.phase(g) != "follower":
            return []
        o = self._off[P_O_SPOTS]
        return [int(v) for v in self.state.ls[g, o : o + int(self.state.gi[g, K.G_NSPOTS])]]

    def score_log(self, g: int) -> list[tuple[int, ...]]:
        """Scoring rows of the running game: ``(what, final, a, b, value, players bitmask)``.

        ``what`` is the feature kind (0 city, 1 road, 2 field, 3 building) with ``a`` its tiles (city, road),
        neighbours (building) or completed cities (field) and ``b`` the pennants (city); or a plug-in's award
        code (``layout.award_codes``) with ``a`` what its kernel logs.  ``players``: who scored ``value``.
        """
        n = int(self.state.gi[g, K.G_NLOG])
        o = self._off[P_O_LOG]
        rows = self.state.ls[g, o : o + LOG_W * n].reshape(n, LOG_W)
        return [tuple(int(v) for v in row) for row in rows]

    def actions(self, g: int, start: int = 0) -> list[PlaceTile | PlaceFollower | Pass]:
        """The core actions applied in the running game, in order (from the ``start``-th)."""
        S = self.state
        n = int(S.gi[g, K.G_NHIST])
        o = self._off[P_O_HIST]
        out: list[PlaceTile | PlaceFollower | Pass] = []
        for kind, a, b, c in S.ls[g, o + HIST_W * start : o + HIST_W * n].reshape(-1, HIST_W).tolist():
            if kind == K.H_TILE:
                out.append(PlaceTile(a, b, c))
            elif kind == K.H_FOLLOWER:
                out.append(PlaceFollower(a))
            elif kind >= K.H_PLUG:  # a plug-in's decision: its fast part reads its row
                out.append(self._plugin_action(g, kind - K.H_PLUG, a, b, c))
            else:
                out.append(Pass())
        return out

    def _plugin_action(self, g: int, i: int, a: int, b: int, c: int) -> Any:
        return support(self._plugin_key(i)).history_action(self.layout.rules, a, b, c, self._tile_at(g))

    def game(self, g: int) -> Game:
        """The reference Game of game g in its current state, replayed through the Python engine.

        Built on first access; from then on it follows every step of game g (so a reference to it stays
        current, as the Python engine's game does) until the game is reset.  A replay that disagrees with
        the compiled engine raises, so it is a check too."""
        shadow = self._shadow[g]
        if shadow is None:
            shadow = Game(self.layout.rules.config, seed=self.seeds[g], draw_order=self.draw_orders[g])
            shadow.__class__ = ReferenceGame  # read-only from here on: an edit would not reach this engine
            self._shadow[g] = shadow
        self._sync(g)
        return shadow

    def _sync(self, g: int) -> None:
        shadow = self._shadow[g]
        if shadow is None:
            return
        for a in self.actions(g, len(shadow.history)):
            shadow.follow(a)  # type: ignore[attr-defined]  # a ReferenceGame (game())
        if shadow.scores != self.scores(g) or shadow.over != self.over(g):
            raise RuntimeError(
                f"the reference engine disagrees with the compiled one after {len(shadow.history)} actions "
                f"(scores {shadow.scores} vs {self.scores(g)}): if the reference game (env.unwrapped.game) was "
                f'edited in place, make the env with engine="python" to edit it; else please report this game '
                f"(seed {self.seeds[g]})"
            )

    def play_random(self, seeds: Any, rng_seed: int = 0, g: int = 0) -> dict[str, float]:
        """Play one whole game per seed in slot g with uniformly random legal decisions, no observations.

        The "engine alone" measurement (``scripts/bench.py``): the draw orders are shuffled here (the
        reference's shuffle of each seed), the games are played by one kernel call.  Returns counts:
        games, tile decisions, legal placements summed and their maximum, points scored."""
        self._flush()
        seeds = [int(s) for s in seeds]
        deals = self._deals(seeds)
        bags = np.stack([bag for bag, _ in deals])
        stats = np.zeros(5, dtype=np.int64)
        if self.layout.uses_rng:  # each game's own generator (a plug-in draws from it), its decisions seeded apart
            words = np.stack([w for _, w in deals])  # type: ignore[misc]
        else:
            words = np.zeros((0, RNG_WORDS), dtype=np.int32)
        E().play_random(self.tables, self.state, g, bags, words, int(rng_seed), stats)
        self.seeds[g] = seeds[-1]  # slot g holds the last game played
        self.draw_orders[g] = None
        self._seed_rngs[g] = None
        self._shadow[g] = None
        self._vers[g] += 1
        keys = ("games", "decisions", "legal", "max_legal", "points")
        return {k: int(v) for k, v in zip(keys, stats, strict=True)}

    def close(self) -> None:
        if self._helpers is not None:
            self._helpers.close()
            self._helpers = None

    def __del__(self) -> None:
        helpers = self.__dict__.get("_helpers")
        if helpers is not None:
            try:
                helpers.close()
            except Exception:  # noqa: BLE001, S110 - at interpreter exit the modules may be gone; the threads are daemons
                pass


class _Helpers:
    """The helper threads of a threaded batched step, started once and kept: between steps each waits in
    compiled code that releases the GIL (:func:`carc_env.fast.vector_kernels.wait_go`: a short watch of
    the control array ``ctl``, then a sleep on a condition), so a step wakes no thread through the
    operating system and never waits for the GIL on a helper (the protocol is in that module's
    docstring).  A helper that is not on a core when a step opens (the operating system gave its core to
    another job) does not hold the step up: the calling thread takes every chunk, closes the step and
    waits only for the helpers that joined it (:func:`~carc_env.fast.vector_kernels.finish`).  The
    threads hold this object, not the batch: a batch that is dropped is collected (and closes its
    helpers)."""

    SPIN_NS = 300_000
    """Nanoseconds a helper watches for the next step (spinning on the processor's hint, its core kept)
    before it sleeps: 0.3 ms, many times the Python work between two steps of a loop with a random policy
    (the benchmark's); a loop that spends longer between steps (a network's forward pass) finds the
    helpers asleep and wakes them, as a thread pool would, and its own threads (a network's) do not share
    their cores with a watch for long."""
    WAIT_SPINS = 200
    """Rounds of watching the calling thread makes between two yields of the GIL while it waits for the
    helpers that joined a step."""

    def __init__(self, n: int) -> None:
        import threading

        from .atomic import STRIDE
        from .vector_kernels import C_BAD, C_CLAIM, C_LEN, finish, publish

        self.n = n
        self.slots = (C_BAD, C_CLAIM)
        self.pid = os.getpid()
        # the control slots and the calling thread's chunk counter (slot 0) in the first line, each helper's
        # counter in a line of its own (STRIDE slots apart: atomic.take_chunk)
        self.ctl = np.zeros(max(C_LEN, STRIDE * (n + 1)), dtype=np.int64)
        self.counters = slice(0, STRIDE * (n + 1), STRIDE)
        # the machine-code entries of the calling thread's handshake (each step calls them: no import
        # statement and no dispatcher's typing on the one core's path); a first call compiles or loads them
        publish(self.ctl, 0)
        finish(self.ctl, 0, 1)
        self._publish = direct(publish, (self.ctl, 0))
        self._finish = direct(finish, (self.ctl, 0, 1))
        self.ctl[C_CLAIM] = 0
        self.cond = threading.Condition()
        self.job: tuple[Any, ...] | None = None
        self.errors: list[BaseException] = []
        self.stop = False
        self.epoch = 0
        self.threads = [
            threading.Thread(target=_helper_loop, args=(self, i), name=f"carc_fast_{i}", daemon=True) for i in range(n)
        ]
        for t in self.threads:
            t.start()

    def step(self, prepare: Any, games: list[int], step_chunks: Any, args: tuple[Any, ...], me: int) -> int:
        """One threaded step: the calling thread runs ``step_chunks(*args)`` and each helper that joins it
        the same with its own thread number (``i + 1`` for helper ``i``) at ``args[me]`` (the caller's is
        0; ``args`` hold ``ctl``, whose chunk counters are reset here); ``prepare(games)`` (unless
        ``prepare`` is None) runs once, in the first helper that joins, else in the calling thread after the
        step.  Returns the illegal actions met."""
        ctl = self.ctl
        bad_slot, claim_slot = self.slots
        ctl[self.counters] = 0
        ctl[bad_slot] = 0
        ctl[claim_slot] = 0
        self.job = (prepare, games, step_chunks, args, me)
        self.epoch += 1
        if self._publish(ctl, self.epoch):  # a helper sleeps: wake it
            with self.cond:
                self.cond.notify_all()
        try:
            bad = step_chunks(*args)
        finally:
            while (mine := self._finish(ctl, self.epoch, self.WAIT_SPINS)) < 0:
                time.sleep(0)  # a helper that joined is descheduled: let it run
            self.job = None
        if self.errors:
            raise self.errors.pop()
        if mine and prepare is not None:  # no helper joined the step: its prepare is the caller's
            prepare(games)
        return bad + int(ctl[bad_slot])

    def close(self) -> None:
        """Stop the threads (they leave at their next look at the control array)."""
        from .vector_kernels import C_COUNTER, publish

        if self.stop:
            return
        self.stop = True
        self.ctl[C_COUNTER] = 1
        publish(self.ctl, self.epoch + 1)
        with self.cond:
            self.cond.notify_all()


def _helper_loop(h: _Helpers, i: int) -> None:
    """A helper thread of :class:`_Helpers`."""
    from .vector_kernels import C_EPOCH, awake, wait_go

    seen, bad = 0, -1
    watch = wait_go
    while True:
        status, epoch = watch(h.ctl, seen, bad, h.SPIN_NS)
        if watch is wait_go:  # its machine-code entry from now on (the report reaches the caller sooner)
            watch = direct(wait_go, (h.ctl, seen, bad, h.SPIN_NS))
        bad = -1
        seen = epoch
        if status < 0:  # asleep until the next step (or the end)
            with h.cond:
                while int(h.ctl[C_EPOCH]) == seen and not h.stop:
                    h.cond.wait()
            awake(h.ctl)
            continue
        if h.stop:
            return
        job = h.job
        bad = 0
        try:
            prepare, games, step_chunks, args, me = job  # type: ignore[misc]
            if status == 1 and prepare is not None:
                prepare(games)
            bad = step_chunks(*args[:me], i + 1, *args[me + 1 :])
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
            h.errors.append(exc)
        job = prepare = args = step_chunks = None  # noqa: F841 - hold nothing of the batch between steps


def default_threads() -> int:
    """Threads a batched env uses by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


__all__ = ["FastBatch", "ReadOnlyGameError", "ReferenceGame", "alloc_state", "default_threads", "direct"]
