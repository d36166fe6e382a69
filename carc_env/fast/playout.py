"""Random play-outs on the compiled engine, for tree search (``RolloutGuide(playout=...)``).

Contract
--------
``FastPlayout()`` is a callable ``f(game, rng) -> final scores`` for
:class:`carc_env.search.rollout.RolloutGuide`: it plays the Python
:class:`~carc_env.core.Game` ``game`` (not changed) out to its end with
uniformly random legal decisions (a tile decision: uniform over every legal
``(x, y, rotation)``; a follower decision: uniform over the spots and pass:
the decisions of the Python play-out, ``rollout.random_action``) and returns
the final scores.  The tiles are drawn in ``game``'s own order: what is left
of ``game.draw_order`` (after a search's ``Game.redeal``, the sampled order).

Only for rule sets the compiled engine covers (:func:`covers`); the caller
(the guide) checks.  The random numbers are the kernel's, seeded from
``rng``: the same ``rng`` gives the same play-out, but not the Python
play-out's game (the distribution is the same; ``tests/agents/test_search.py``
checks the state handed over exactly and the scores' distribution).

How a leaf gets to the kernels: :meth:`begin` (called by the search once per
decision, with the root) replays the root's history into slot 0 (the game's
record fields, :data:`carc_env.core.state.RECORD`: seed, draw order, actions); a play-out
copies slot 0 to slot 1, writes the leaf's remaining draw order over slot
1's bag, applies the actions the leaf added to the root's history, and plays
slot 1 out in one kernel call.  A leaf that does not extend the root (or no
:meth:`begin`) makes itself the root first (correct, slower).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Pass, PlaceFollower, PlaceTile
from ..core.config import RuleSet
from . import kernels as K
from .config import EngineConfig
from .engine import direct
from .seam import engine as E
from .tables import (
    P_COLS,
    P_FOL_START,
    P_MAXSEG,
    P_O_BAG,
    P_O_FMASK,
    P_O_RNG,
    P_O_SCORES,
    P_O_SPOTS,
    P_ROWS,
    P_TILE_N,
    rules_coverage,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..core.actions import Action
    from ..core.game import Game


_ROT = np.arange(4, dtype=np.int32)
_PHASES = ("tile", "follower")  # the core's phases by number (K.PH_TILE, K.PH_FOLLOWER)
_PHASE, _OVER, _PLAYER, _CUR, _BAG_N, _BAG_I = K.G_PHASE, K.PH_OVER, K.G_PLAYER, K.G_CUR, K.G_BAG_N, K.G_BAG_I


def covers(rules: RuleSet) -> bool:
    """Whether the compiled engine covers this rule set and Numba imports (then :class:`FastPlayout` works)."""
    from . import available

    return rules_coverage(rules) is None and available()


class _Replay:
    """A stand-in generator making ``Game.redeal`` deal a given order and seed its new generator with a given
    seed (the draws a search made from its own generator)."""

    def __init__(self, order: list[int], seed: int) -> None:
        self.order, self.seed = order, seed

    def shuffle(self, x: list[int]) -> None:
        x[:] = self.order

    def integers(self, high: int) -> int:
        return self.seed


class FastPlayout:
    """``f(game, rng) -> final scores`` on the compiled engine.  See the module docstring.

    ``config``: the engine configuration of the batch (an :class:`EngineConfig` whose rules are the
    games'): what :meth:`observe` encodes (window, action features).  None: the game's rules with the
    default window (play-outs and tree search need no observation)."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        if config is not None and not isinstance(config, EngineConfig):
            raise TypeError(f"FastPlayout(config=...) takes an EngineConfig, got {type(config).__name__}")
        self.config = config
        self._batch: Any = None
        self._config_key: Any = None
        self._root: tuple[int | None, int, Any] | None = None  # (seed, len(history), last action) of slot 0
        self._fns: dict[str, Any] = {}  # machine-code entries of the kernels called per simulation (direct())
        self._gi1: Any = None  # slot 1's row of the state's integers (a view), with the batch
        self._obs: Any = None  # observe()'s arrays and constants, with the batch
        self._noise: Any = None  # GreedyPlayout's tie-breaking numbers (a scratch row)
        self.stop = -1  # play-outs end at a tile decision with at most this many tiles left (-1: the real end)
        self.farmers = 1  # 0: play-outs place no follower on a field
        self.place = 1.0  # below 1: a play-out's follower decision passes 1 - place of the time

    def __getstate__(self) -> dict:  # sent to tournament workers: the batch is rebuilt there
        return {
            "config": self.config,
            "_batch": None,
            "_config_key": None,
            "_root": None,
            "_fns": {},
            "_gi1": None,
            "_obs": None,
            "_noise": None,
            "stop": self.stop,
            "farmers": self.farmers,
            "place": self.place,
        }

    def __setstate__(self, d: dict) -> None:
        d.setdefault("config", None)  # pickled before the configuration existed
        d.setdefault("_obs", None)
        d.setdefault("_noise", None)
        d.setdefault("stop", -1)
        d.setdefault("farmers", 1)
        d.setdefault("place", 1.0)
        self.__dict__.update(d)

    def __repr__(self) -> str:
        return "FastPlayout()" if self.config is None else f"FastPlayout(window={self.config.window})"

    def _ensure_batch(self, game: Game) -> Any:
        key = game.config.key()
        if self._batch is None or self._config_key != key:
            from .engine import FastBatch

            config = self.config
            if config is None:
                config = EngineConfig.for_rules(game.rules)
            elif config.rules.config.key() != key:
                raise ValueError(
                    "FastPlayout(config=...) plays the game configuration its EngineConfig was built for, "
                    "not this game's: build the FastPlayout with EngineConfig(game.rules, ...)"
                )
            self._batch = FastBatch(config, 2)
            self._gi1 = self._batch.state.gi[1]  # a view: slot 1's integers
            self._config_key = key
            self._root = None
            self._fns = {}
            self._obs = None
        return self._batch

    def begin(self, game: Game) -> None:
        """Make ``game`` the root: slot 0 holds its state (its history replayed from its seed)."""
        batch = self._ensure_batch(game)
        batch.reset(0, seed=game.seed, draw_order=game.draw_order)
        for a in game.history:
            batch.apply(0, a)
        drawn = len(game.draw_order) - game.bag_size
        if int(batch.state.gi[0, K.G_BAG_I]) != drawn or batch.scores(0) != list(game.scores):
            raise RuntimeError(
                f"the compiled engine's replay of the search root disagrees with the game (tiles drawn "
                f"{int(batch.state.gi[0, K.G_BAG_I])} vs {drawn}, scores {batch.scores(0)} vs {game.scores})"
            )
        self._root = (game.seed, len(game.history), game.history[-1] if game.history else None)

    def _extends_root(self, game: Game) -> bool:
        root = self._root
        if root is None or root[0] != game.seed:
            return False
        n = root[1]
        if len(game.history) < n:
            return False
        return n == 0 or game.history[n - 1] == root[2]

    def load(self, game: Game) -> int:
        """Put ``game``'s state into slot 1 (for the play-out and the tests); returns the slot."""
        batch = self._ensure_batch(game)
        if not self._extends_root(game):
            self.begin(game)
        S = batch.state
        for a in S:
            a[1] = a[0]
        gi, ls = S.gi, S.ls
        # the remaining order of the leaf's stack, from where the root had drawn to
        start = int(gi[1, K.G_BAG_I])
        index = game.rules.tile_index
        order = game.draw_order
        if len(order) != int(gi[1, K.G_BAG_N]):
            raise RuntimeError(f"draw order of {len(order)} tiles, the compiled root holds {int(gi[1, K.G_BAG_N])}")
        ob = batch._off[P_O_BAG]
        ls[1, ob + start : ob + len(order)] = [index[t] for t in order[start:]]
        for a in game.history[self._root[1] :]:  # type: ignore[index]
            if not self._step(1, self.row(1, a)):
                raise RuntimeError(f"the compiled engine refuses {a!r} of the search's path (please report)")
        return 1

    def row(self, g: int, action: Action) -> tuple[int, int, int, int]:
        """The kernel's move ``(kind, a, b, c)`` (``step_one``) naming ``action`` in game g's open decision (a
        move no decision has, e.g. a core action in a plug-in's phase, gets a row the kernel refuses)."""
        t = type(action)
        if t is PlaceTile:
            return (0, int(action.x), int(action.y), int(action.rotation))  # type: ignore[attr-defined]
        if t is PlaceFollower:
            return (1, int(action.segment), 0, 0)  # type: ignore[attr-defined]
        plug = int(self._batch.state.gi[g, K.G_PHASE]) == K.PH_PLUG
        if t is Pass and not plug:
            return (2, 0, 0, 0)
        if plug:
            a, b, c = self._batch.plugin_row(g, action)
            return (3, int(a), int(b), int(c))
        return (1, -1, 0, 0)

    def _call(self, name: str, *args: Any) -> Any:
        """Kernel ``name`` of the composed engine, through its machine-code entry after the first call."""
        f = self._fns.get(name)
        if f is None:
            fn = getattr(E(), name)
            out = fn(*args)
            self._fns[name] = direct(fn, args)
            return out
        return f(*args)

    def _step(self, g: int, row: Any) -> bool:
        b = self._batch
        k, x, y, r = row
        return bool(self._call("step_one", b.tables, b.state, g, int(k), int(x), int(y), int(r), b._scratch_rewards))

    # ------------------------------------------------------------------ a tree search's simulations
    # The state work of :func:`carc_env.search.mcts.MCTS.search` on compiled state (the tree stays in
    # Python): after :meth:`begin`, :meth:`redeal` makes slot 1 the root with a sampled draw order,
    # :meth:`step` applies one of a node's moves (:meth:`row`, :meth:`moves`), :meth:`key` names the state
    # reached, :meth:`moves` lists the legal moves of a new leaf and :meth:`play_out` finishes the game.

    @property
    def uses_rng(self) -> bool:
        """Whether an enabled plug-in's kernels draw from the game's generator (then :meth:`redeal` sets it)."""
        return bool(self._batch.layout.uses_rng)

    def redeal(self, order: list[int], words: np.ndarray | None = None) -> None:
        """Slot 1 := the root (slot 0) with ``order`` (tile indices, next drawn first) as the tiles left to
        draw, the redealt game of ``Game.redeal``; ``words``: its new generator (:mod:`carc_env.fast.rng`)."""
        S = self._batch.state
        for a in S:
            a[1] = a[0]
        gi, ls = S.gi, S.ls
        start = int(gi[0, K.G_BAG_I])
        if start + len(order) != int(gi[0, K.G_BAG_N]):
            raise RuntimeError(
                f"{len(order)} tiles redealt, the compiled root has {int(gi[0, K.G_BAG_N]) - start} left"
            )
        ob = self._batch._off[P_O_BAG] + start
        ls[1, ob : ob + len(order)] = order
        if words is not None:
            o = int(self._batch.tables.P[P_O_RNG])
            ls[1, o : o + len(words)] = words

    def step(self, row: Any) -> bool:
        """Apply move ``row`` (``(kind, a, b, c)``) in slot 1 and the automatic stages up to the next
        decision; False: refused (the state untouched)."""
        f = self._fns.get("step_one")
        if f is None:
            return self._step(1, row)
        if type(row) is np.ndarray:
            row = row.tolist()
        b = self._batch
        return f(b.tables, b.state, 1, row[0], row[1], row[2], row[3], b._scratch_rewards)

    def key(self) -> tuple[int, ...] | None:
        """What tells slot 1's state from another reached by the same moves (the search's ``state_key``:
        ``(phase, deciding player, drawn tile, tiles left)``, the key the Python game gives), or None when
        the game is over."""
        gi = self._gi1.tolist()
        ph = gi[_PHASE]
        if ph == _OVER:
            return None
        name = self._batch.encoder.phases[gi[K.G_DPHASE]] if ph == K.PH_PLUG else _PHASES[ph]
        return (name, gi[_PLAYER], gi[_CUR], gi[_BAG_N] - gi[_BAG_I])

    def moves(self, canon: Callable[[int], tuple[int, ...]]) -> Any:
        """Slot 1's legal moves in the order of the search's ``node_actions``: tile placements in the
        reference's order with one rotation per geometry (``canon(tile)[r] == r``), the follower spots then
        pass; None for a plug-in's decision (:meth:`plugin_moves`)."""
        S = self._batch.state
        gi = S.gi[1].tolist()
        ph = gi[K.G_PHASE]
        ls = S.ls
        if ph == K.PH_TILE:
            nf = gi[K.G_NF]
            o = self._batch._off[P_O_FMASK]
            can = np.asarray(canon(gi[K.G_CUR])) == np.arange(4)  # the rotations searched
            bits = ((ls[1, o : o + nf, None] >> _ROT) & 1).astype(bool) & can
            ci, ri = np.nonzero(bits)  # cell by cell, rotations in order: the reference's order
            rows = np.zeros((len(ci), 4), dtype=np.int64)
            rows[:, 1:3] = S.fr[1, ci, :2]
            rows[:, 3] = ri
            return rows  # an array: a search converts the few rows it plays (many leaves play one)
        if ph == K.PH_FOLLOWER:
            o = self._batch._off[P_O_SPOTS]
            spots = ls[1, o : o + gi[K.G_NSPOTS]].tolist()
            return [[1, s, 0, 0] for s in spots] + [[2, 0, 0, 0]]
        return None  # a plug-in's decision: plugin_moves() lists its moves in the reference's order

    def plugin_moves(self, root: Game, shuffled: list[int], seed: int) -> list[Any]:
        """The moves of slot 1's open plug-in decision, in the order of the reference's legal actions: the
        Python game ``root.clone()`` redealt to slot 1's draw order (``shuffled``: the order before the
        ``order_unseen`` hooks; ``seed``: the redeal's new generator) and played along slot 1's history
        from the root lists them (a plug-in's order is its own; rare in a search: a few decisions a game);
        each is named by its history row, as the records replay them."""
        return [self.row(1, a) for a in self.python_leaf(root, shuffled, seed).legal_actions()]

    def python_leaf(self, root: Game, shuffled: list[int], seed: int) -> Game:
        """Slot 1's state as a Python game: ``root.clone()`` redealt to slot 1's draw order (``shuffled``, the
        order before the ``order_unseen`` hooks; ``seed``: the redeal's new generator) and played along slot
        1's history from the root (:meth:`plugin_moves`; a guide's evaluation of a plug-in's decision)."""
        leaf = root.clone()
        leaf.redeal(_Replay(shuffled, seed))  # type: ignore[arg-type]
        for a in self._batch.actions(1, len(root.history)):
            leaf.apply(a)
        return leaf

    def play_out(self, seed: int) -> list[int]:
        """Play slot 1 to its end with uniformly random decisions seeded ``seed``; its final scores.  With
        :attr:`stop` >= 0 the play-out ends at the first tile decision with at most ``stop`` tiles left to
        draw, scored as if the bag were empty there (``Game.end_here``); with :attr:`farmers` 0 its follower
        decisions are uniform over the spots not on a field and pass."""
        b = self._batch
        self._call("play_out", b.tables, b.state, 1, seed, self.stop, self.farmers, float(self.place))
        return self.scores()

    # ------------------------------------------------------------------ the whole search compiled
    def tree_covers(self, game: Game) -> bool:
        """Whether :meth:`tree_search` may search from ``game``: every ``order_unseen`` hook of its rule set
        (the Python redeal's) belongs to a plug-in whose fast part gives the compiled ``order_unseen``
        kernel (the River II's), so the kernel's redeal deals what ``Game.redeal`` deals."""
        from .seam import support

        for hook in game.rules.h_order_unseen:
            owner = getattr(hook, "__self__", None)
            sup = support(owner.KEY) if owner is not None else None
            if sup is None or "order_unseen" not in sup.kernels:
                return False
        return True

    def redeal_in_kernel(self, seed: int) -> list[int]:
        """Slot 1 := slot 0 redealt by the compiled tree search's redeal (:func:`carc_env.fast.tree.redeal`,
        its stream seeded ``seed``); the tiles left in slot 1, next drawn first (tests)."""
        b = self._batch
        self._call("redeal_slot", b.tables, b.state, 0, 1, int(seed), int(self.uses_rng))
        gi = b.state.gi[1]
        o = b._off[P_O_BAG]
        return b.state.ls[1, o + int(gi[_BAG_I]) : o + int(gi[_BAG_N])].tolist()

    def tree_search(
        self,
        rows: list[Any],
        order: list[int],
        simulations: float,
        deadline: float,
        c: float,
        utility: str,
        margin_scale: float,
        canon: np.ndarray,
        rng: np.random.Generator,
        full_copy: bool = False,
        initial: tuple[int, int] | None = None,
        halving: bool = False,
    ) -> tuple[list[int], list[float], int, dict[str, Any]]:
        """Plain MCTS from slot 0 (:meth:`begin`) compiled whole (:mod:`carc_env.fast.tree`): the root's
        moves ``rows`` (``(kind, a, b, c)``) tried first in ``order``, then UCT with constant ``c``; random
        play-outs (with :attr:`stop` and :attr:`farmers`) valued by ``utility``; ``canon[t, r]``: whether
        rotation r of tile t is searched.  Runs until ``simulations`` are done or ``time.perf_counter()``
        passes ``deadline`` (checked between chunks of simulations, at least one simulation), the kernels'
        random stream seeded once from ``rng`` (a call after a chunk or after growing the tree continues
        it: the same search from the same seed whatever the arrays' first sizes, ``initial``).  Returns the
        root moves' visits and summed values, the simulations and statistics (nodes, listed moves, plug-in
        decisions listed and those whose action range drops some of their moves, kernel calls).

        ``halving``: sequential halving at the root (below it, UCT as ever).  The budget (simulations, or
        time) is cut into ceil(log2 k) equal rounds; in a round each simulation takes the least visited
        root move still in, so they share the round evenly; after it the better half by mean value stays
        in.  ``stats["choice"]``: the move of best mean among the last ones in; ``stats["cuts"]``: per cut, the
        worst mean kept and the means that went out."""
        import math
        import time

        from . import tree as R

        b = self._batch
        S = b.state
        for a in S:  # slot 1 := the root, every row (the kernel then copies only what a simulation touched)
            a[1] = a[0]
        k = len(rows)
        finite = math.isfinite(simulations)
        first = int(simulations) if finite else 256
        mask = b.empty_obs(1)["action_mask"][0]
        room = len(mask) + 4 * S.fr.shape[1] + 2  # the most moves one node can list (a plug-in's: the mask's)
        nodes, edges = initial if initial is not None else (first + 2, k + room + 8 * first)
        tree = R.Tree(nodes, max(edges, k))
        tree.e0[0], tree.ne[0], tree.player[0] = 0, k, self.player
        tree.move[:k] = np.asarray(rows, dtype=np.int64).reshape(k, 4)
        tree.perm[:k] = order
        tree.counts[R.C_NODES], tree.counts[R.C_EDGES] = 1, k
        canon = np.ascontiguousarray(canon, dtype=np.int8)
        path = np.zeros(2 * R.MAX_DEPTH, dtype=np.int64)
        values = np.zeros(b.num_players, dtype=np.float64)
        kind = R.UTILITY_CODES[utility]
        seed = int(rng.integers(2**31 - 1))  # the kernels' stream, seeded once: the later calls continue it
        alive = np.ones(k, dtype=np.int8)
        rounds = max(1, math.ceil(math.log2(k))) if halving and k > 1 else 1
        cuts: list[tuple[float, list[float]]] = []  # per cut: the worst mean kept, the means that went out
        start = time.perf_counter()
        calls = 0
        chunk = first if not math.isfinite(deadline) else 8
        for r in range(rounds):
            limit = simulations * (r + 1) / rounds if finite else math.inf
            until = start + (deadline - start) * (r + 1) / rounds if math.isfinite(deadline) else math.inf
            while True:
                done = int(tree.counts[R.C_SIMS])
                todo = min(chunk, int(round(limit)) - done) if finite else chunk
                if todo <= 0:
                    break
                t = time.perf_counter()
                status = self._call(
                    "tree_run",
                    b.tables,
                    S,
                    todo,
                    room,
                    seed if calls == 0 else -1,
                    float(c),
                    self.stop,
                    self.farmers,
                    float(self.place),
                    kind,
                    float(margin_scale),
                    int(full_copy),
                    int(self.uses_rng),
                    canon,
                    mask,
                    int(rounds > 1),
                    alive,
                    b._scratch_rewards,
                    path,
                    values,
                    *tree.arrays(),
                )
                calls += 1
                if status == R.REFUSED:
                    raise RuntimeError(
                        "the compiled engine refuses a move of the compiled search's tree (please report)"
                    )
                now = time.perf_counter()
                ran = int(tree.counts[R.C_SIMS]) - done
                if status == R.FULL:
                    nodes, edges = int(tree.counts[R.C_NODES]), int(tree.counts[R.C_EDGES])
                    tree.grow(max(2 * len(tree.player), nodes + 2), max(2 * len(tree.n), edges + 2 * room))
                if now >= until and tree.counts[R.C_SIMS] > 0:
                    break
                if math.isfinite(until) and ran:  # chunks of a fiftieth of a second, or what is left of the time
                    chunk = max(1, min(4096, int(ran * min(0.02, until - now) / max(now - t, 1e-6))))
            if r < rounds - 1:  # the better half by mean value stays in (an unvisited move goes out)
                inside = [i for i in range(k) if alive[i]]
                mean = {i: tree.w[i] / tree.n[i] if tree.n[i] else -math.inf for i in inside}
                ranked = sorted(inside, key=lambda i: -mean[i])  # stable: ties keep the lower index
                keep = (len(inside) + 1) // 2
                cuts.append((mean[ranked[keep - 1]], [mean[i] for i in ranked[keep:]]))
                for i in ranked[keep:]:
                    alive[i] = 0
        stats = {
            "nodes": int(tree.counts[R.C_NODES]),
            "moves": int(tree.counts[R.C_EDGES]),
            "plugin_nodes": int(tree.counts[R.C_PLUG]),
            "dropped": int(tree.counts[R.C_DROPPED]),
            "calls": calls,
        }
        if rounds > 1:
            inside = [i for i in range(k) if alive[i] and tree.n[i]]
            stats["choice"] = (
                max(inside, key=lambda i: (tree.w[i] / tree.n[i], -i)) if inside else int(np.argmax(tree.n[:k]))
            )
            stats["rounds"] = rounds
            stats["cuts"] = cuts
        return tree.n[:k].tolist(), tree.w[:k].tolist(), int(tree.counts[R.C_SIMS]), stats

    @property
    def player(self) -> int:
        """Slot 1's deciding seat."""
        return int(self._gi1[_PLAYER])

    def scores(self) -> list[int]:
        """Slot 1's scores."""
        o = self._batch._off[P_O_SCORES]
        return self._batch.state.ls[1, o : o + self._batch.num_players].tolist()

    # ------------------------------------------------------------------ a network's leaf evaluation
    def _observe_consts(self) -> tuple[Any, ...]:
        c = self._obs
        if c is None:
            from .features import kernels_of

            b = self._batch
            if not getattr(b.options, "action_features", False):
                raise ValueError(
                    "FastPlayout.observe needs the action features: build it with "
                    "FastPlayout(dataclasses.replace(config, action_features=True))"
                )
            n = b.num_players
            P = b.tables.P
            rows, cols = int(P[P_ROWS]), int(P[P_COLS])
            c = self._obs = (
                np.ones(n, dtype=np.int64),  # slot 1 for every seat
                np.arange(n, dtype=np.int64),
                kernels_of(b),
                np.zeros(n, dtype=np.int64),
                rows,
                cols,
                int(P[P_FOL_START]),
                int(P[P_MAXSEG]),
            )
        return c

    def observe(self) -> dict[str, np.ndarray]:
        """Every seat's observation of slot 1 (seat p in row p; fresh arrays): the batch's encoder (the
        config's window) with the action features, as the Python encoder and
        :func:`~carc_env.encoding.placements.placement_features` write them.  Two things the kernels do
        otherwise are made as the Python rows are: the deciding seat's placement rows come in the
        reference's order (the frontier's cells in order, each cell's rotations in order; the kernels
        write them by flat index), and more legal placements in the window than the config's
        ``action_feature_rows`` get more rows (the Python rows have no cap).  ``place_count``: the rows
        written per seat (the real rows come first, zero rows after)."""
        games, seats, fk, counts, rows, cols, _, _ = self._observe_consts()
        b = self._batch
        T, S = b.tables, b.state
        obs = b.empty_obs(len(games))
        self._call(
            "observe_range", T, S, games, seats, obs["board"], obs["globals"], obs["windows"], obs["action_mask"]
        )
        args = (obs["action_mask"], obs["place_index"], obs["place_features"], obs["spots"], counts)
        self._call("features_range", T, S, fk.X, fk.W, games, seats, *args)
        if counts.min() < 0:  # more legal placements in the window than rows: again, with enough rows
            need = obs["place_index"].shape[1] - int(counts.min()) - 1
            obs["place_index"] = np.zeros((len(games), need), dtype=np.int64)
            obs["place_features"] = np.zeros((len(games), need, obs["place_features"].shape[2]), dtype=np.float32)
            args = (obs["action_mask"], obs["place_index"], obs["place_features"], obs["spots"], counts)
            self._call("features_range", T, S, fk.X, fk.W, games, seats, *args)
        gi = self._gi1.tolist()
        p = gi[_PLAYER]
        k = int(counts[p])
        if gi[_PHASE] == K.PH_TILE and k > 1:  # the reference's order: frontier cell by cell, rotations in order
            rc = rows * cols
            fr = S.fr[1, : gi[K.G_NF]]
            col = fr[:, 0] - gi[K.G_X0]
            row = fr[:, 1] - gi[K.G_Y0]
            ok = (col >= 0) & (col < cols) & (row >= 0) & (row < rows)
            slot_of = np.zeros(rc, dtype=np.int64)
            slot_of[(row * cols + col)[ok]] = np.flatnonzero(ok)
            index = obs["place_index"][p, :k]
            perm = np.argsort(slot_of[index % rc] * 4 + index // rc, kind="stable")
            obs["place_index"][p, :k] = index[perm]
            obs["place_features"][p, :k] = obs["place_features"][p, :k][perm]
        obs["place_count"] = counts.copy()
        return obs

    def flat_indices(self, moves: Any) -> list[int]:
        """The flat action index (:class:`~carc_env.encoding.actions.ActionCodec`'s) of each of slot 1's
        moves ``(kind, a, b, c)`` (:meth:`moves` of a tile or follower decision); -1 for a tile placement
        outside the observation window, which no index names (``ActionCodec.encode`` raises for it)."""
        _, _, _, _, rows, cols, fol_start, max_seg = self._observe_consts()
        if type(moves) is np.ndarray:  # tile placements
            gi = self._gi1
            col = moves[:, 1] - gi[K.G_X0]
            row = moves[:, 2] - gi[K.G_Y0]
            flat = moves[:, 3] * (rows * cols) + row * cols + col
            flat[(col < 0) | (col >= cols) | (row < 0) | (row >= rows)] = -1
            return flat.tolist()
        out = []
        for kind, a, _, _ in moves:
            if kind == 1:
                out.append(fol_start + int(a))
            elif kind == 2:
                out.append(fol_start + max_seg)
            else:
                raise ValueError(f"flat_indices: move {(kind, a)} is not a tile or follower move (a plug-in's)")
        return out

    def __call__(self, game: Game, rng: np.random.Generator) -> list[int]:
        g = self.load(game)
        batch = self._batch
        E().play_out(
            batch.tables, batch.state, g, int(rng.integers(2**31 - 1)), self.stop, self.farmers, float(self.place)
        )
        o = batch._off[P_O_SCORES]
        return batch.state.ls[g, o : o + game.num_players].tolist()


class GreedyPlayout(FastPlayout):
    """:class:`FastPlayout` whose play-outs are epsilon-greedy (:func:`carc_env.fast.features.greedy_play_out`):
    :class:`~carc_env.policies.GreedyPolicy`'s decisions, a uniformly random legal one with probability
    ``epsilon``, ``reserve`` followers kept back for strong spots; the greedy baseline's rule with the
    kernel's own tie-breaking numbers (the Python engine's greedy play-out,
    :class:`carc_env.search.rollout.GreedyMover`, also weighs placements outside the observation window).
    About 20 times the time of a random play-out, for play-outs that complete features and place
    followers as a player would.  Where it may run: :func:`greedy_covers`."""

    def __init__(self, config: EngineConfig | None = None, epsilon: float = 0.0, reserve: int = 2) -> None:
        super().__init__(config)
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.reserve = int(reserve)

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "epsilon": self.epsilon, "reserve": self.reserve}

    def __repr__(self) -> str:
        return f"GreedyPlayout(epsilon={self.epsilon})"

    def _greedy(self, g: int, seed: int) -> list[int]:
        from .features import kernels_of

        b = self._batch
        fk = kernels_of(b)
        if self._noise is None:
            self._noise = np.zeros(int(b.tables.P[P_TILE_N]) + fk.max_segments + 1)
        self._call(
            "greedy_play_out",
            b.tables,
            b.state,
            fk.X,
            fk.W,
            g,
            seed,
            self.epsilon,
            self.reserve,
            fk.assets,
            fk.mask,
            self._noise,
            b._scratch_rewards,
        )
        o = b._off[P_O_SCORES]
        return b.state.ls[g, o : o + b.num_players].tolist()

    def play_out(self, seed: int) -> list[int]:
        """Play slot 1 to its end with epsilon-greedy decisions seeded ``seed``; its final scores."""
        return self._greedy(1, seed)

    def __call__(self, game: Game, rng: np.random.Generator) -> list[int]:
        return self._greedy(self.load(game), int(rng.integers(2**31 - 1)))


def greedy_covers(rules: RuleSet) -> bool:
    """Whether :class:`GreedyPlayout` may play this rule set: the compiled engine covers it
    (:func:`covers`) and so do its compiled greedy (:func:`carc_env.fast.tables.features_coverage`)."""
    from .tables import features_coverage

    return covers(rules) and features_coverage(rules) is None


__all__ = ["FastPlayout", "GreedyPlayout", "covers", "greedy_covers"]
