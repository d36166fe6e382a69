"""Monte Carlo tree search over the core game, with the hidden tile order sampled per simulation.

What is hidden, and how the search handles it
---------------------------------------------
Everything in Carcassonne is public except the order of the tiles still to
draw (their multiset is public: ``Game.remaining_counts()``).  Each
simulation starts from a fresh copy of the real game whose remaining tiles
are reshuffled (:meth:`Game.redeal`, which keeps the order constraints
expansions impose, such as the river first): a *determinisation* drawn from
exactly what the deciding player knows.  The tree is an information-set
tree with chance branches: a node is reached by a sequence of decisions and
draws, and after a decision the simulation follows (or creates) the child for
the state it actually reached, keyed by ``(phase, deciding player, drawn
tile, tiles left)``.  So a node's statistics never mix two different drawn
tiles, every node's legal actions are the same in every determinisation that
reaches it (they depend only on the board and the drawn tile), and an
action's statistics average over the draws that follow it in the sampled
proportions: the expectation the rules ask for, with no strategy fusion
(the drawn tile is known to everyone when the decision is made).  Sampling a
new order per simulation (rather than searching a few fixed orders) costs one
list shuffle and spreads the samples over all draws.

Every decision of every player is a tree move: tile placements (symmetric
rotations with identical geometry searched once), follower placements and
pass, and the decisions of expansion phases (through ``game.legal_actions()``),
including decisions made outside one's own turn.  Each node maximises the
value of the player deciding there (max-n for 3-5 players).

Selection and leaf evaluation
-----------------------------
New leaves are added one per simulation and evaluated by a *guide*
(:mod:`carc_env.search.rollout`): plain MCTS plays the game out with a random
or greedy rollout policy and backs up the utility of the final scores; a
guide may also give prior weights to a leaf's actions (the network guide of
``agents.search``).  Without priors, selection is UCT: untried actions
first, in a random order, then ``mean + c * sqrt(ln N / n)``.  With priors it
is PUCT: ``q + c * prior * sqrt(N) / (1 + n)``, with ``q`` the mean value
min-max normalised over the tree, and unvisited actions valued at their
node's mean.  A guide with ``defers_priors`` true values a new leaf alone
(``leaf_values(game, rng)``; on the compiled state ``leaf_values_state(sim,
rng)``) and gives its priors when a simulation first comes back to it
(``priors(game, actions)`` / ``priors_state(sim, moves)``): the network
guide with ``playout=1`` (:mod:`agents.search`), where most leaves are never
visited again and so never need a forward.

Where the simulations run
-------------------------
A guide offering ``compiled_state(game)`` (:class:`RolloutGuide` with
``engine`` not ``"python"``, where the compiled engine covers the game and,
for greedy rollouts, its compiled greedy too) gets every simulation's state work done on the compiled engine
(:meth:`MCTS._search_compiled` over :class:`carc_env.fast.playout.FastPlayout`):
the same redeal, moves, keys, move orders and generator draws as the Python
loop, so the same tree from the same seed (``tests/agents/test_search.py``).
Below the root its nodes hold the engine's moves (``(kind, a, b, c)``
rows) and a leaf lists its moves when a simulation first comes back to it
(``actions`` None until then).  A guide with priors offering
``compiled_state`` (the network guide of ``agents.search``) gets the same:
its new leaves are evaluated on the engine's slot (``expand_state(sim,
moves, rng)``, their moves listed at once), a plug-in's decision on the
Python game of that state.  A guide with ``batch`` above 1 has its new
leaves valued that many at a time (:meth:`MCTS._search_compiled_batched`:
virtual losses on the pending paths, ``guide.leaf_state`` captures a leaf,
``guide.evaluate_leaves`` values a batch).  Every other guide runs the loop
below on Python games.

The tree compiled too
---------------------
With ``tree="auto"`` (the default) a guide offering ``tree_state(game)``
(:class:`RolloutGuide` with compiled random play-outs, where the kernel's
redeal deals what ``Game.redeal`` deals) gets the whole search in one kernel
(:meth:`MCTS._search_tree`, :mod:`carc_env.fast.tree`): the same UCT search
with its tree in arrays, alike in distribution and not seed for seed (the
kernel draws its own random numbers, seeded from the search's generator);
``root`` of its result is None.  ``tree="python"`` keeps the Python nodes
above; ``tree="compiled"`` refuses a search it cannot compile.

``root="halving"`` (compiled tree only) replaces UCT at the root by
sequential halving: the budget is cut into ceil(log2 k) rounds for k root
actions, each round shared evenly by the actions still in, the better half
by mean value kept after it; the move is the best mean of the last ones in
(``SearchResult.choice``).  Below the root the search is UCT as ever.

Budget and determinism
----------------------
``simulations`` and/or ``time_per_move`` (seconds): the search stops at the
first one reached (at least one simulation).  With a seed and a simulation
budget only, a move is a pure function of (state, seed, budget): the same
game is played again exactly.  Under ``time_per_move`` the number of
simulations depends on the machine, so moves are not reproducible.

The policy
----------
:class:`MCTSPolicy` has the baseline protocol ``act(obs, env) -> int``
(:mod:`carc_env.baselines`): it searches from ``env.game`` (never changing it)
among the actions enabled in ``obs["action_mask"]`` and returns the flat index
of the most visited one (ties: the better mean value).  ``last_search`` holds
the statistics of the last move (simulations, seconds, visits).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import PlaceTile
from ..fast.rng import generator_words
from .rollout import RolloutGuide, canonical_rotations

if TYPE_CHECKING:  # pragma: no cover
    from ..core.actions import Action
    from ..core.game import Game

DEFAULT_C_UCT = 0.7
DEFAULT_C_PUCT = 1.5
TREES = ("auto", "compiled", "python")
ROOTS = ("uct", "halving")
"""How the root picks a simulation's move: UCT, or sequential halving (compiled tree only)."""
"""Where plain MCTS's tree lives: ``compiled`` (the whole search in one kernel, :mod:`carc_env.fast.tree`),
``python`` (Python nodes, each simulation's state on the compiled engine where it covers the game) or
``auto`` (compiled where it may run: random play-outs on the compiled engine, a redeal the kernel deals)."""


class Node:
    """A decision point: the deciding player, its legal actions and per-action statistics."""

    __slots__ = ("player", "actions", "n", "w", "children", "visits", "prior", "order", "tried", "wsum")

    def __init__(self, player: int, actions: Any, prior: Sequence[float] | None = None) -> None:
        self.player = player
        self.actions = actions  # None: a leaf whose moves are not listed yet (the compiled-state search)
        k = len(actions) if actions is not None else 0
        self.n = [0] * k  # visits per action
        self.w = [0.0] * k  # summed value (for ``player``) per action
        self.children: list[dict[tuple, Node] | None] = [None] * k  # per action: reached state key -> node
        self.visits = 0
        self.wsum = 0.0
        self.prior: list[float] | None = None  # None: no priors (UCT), or not asked for yet (deferred priors)
        self.set_prior(prior)
        self.order: list[int] | None = None  # UCT: the order untried actions are tried in
        self.tried = 0

    def set_prior(self, prior: Sequence[float] | None) -> None:
        """The guide's prior weights of the actions, normalised (all zero: uniform)."""
        if prior is None:
            self.prior = None
            return
        k = len(self.actions) if self.actions is not None else 0
        if len(prior) != k:
            raise ValueError(f"a guide gave {len(prior)} prior weights for {k} actions")
        total = float(sum(prior))
        self.prior = [float(p) / total for p in prior] if total > 0 else [1.0 / max(k, 1)] * k

    def open(self, actions: Any, prior: Sequence[float] | None = None) -> None:
        """List the moves of a leaf made without them (``actions`` None; no visit yet), with their priors."""
        k = len(actions)
        self.actions = actions
        self.n = [0] * k
        self.w = [0.0] * k
        self.children = [None] * k
        self.set_prior(prior)


def state_key(game: Game) -> tuple:
    """What distinguishes two states reached by the same decisions: the draws in between."""
    return (game.phase, game.player, game.current_tile, game.bag_size)


def node_actions(game: Game, canon_cache: dict) -> list[Action]:
    """The deciding player's legal actions, symmetric rotations of a tile placement once."""
    if game.phase == "tile":
        canon = canonical_rotations(game, game.current_tile, canon_cache)
        rows = game.legal_tile_placements().tolist()
        acts: list[Action] = [PlaceTile(x, y, r) for x, y, r in rows if canon[r] == r]
        return acts
    return game.legal_actions()


def _utility_vector(values: Sequence[float], n: int) -> list[float]:
    if len(values) != n:
        raise ValueError(f"a guide returned {len(values)} values for {n} players")
    return [float(v) for v in values]


@dataclass
class SearchResult:
    """Root statistics of one search."""

    actions: list[Any]
    visits: list[int]
    values: list[float]  # mean value for the deciding player (nan: unvisited)
    simulations: int
    seconds: float
    root: Node | None = None  # the searched tree (for inspection)
    extra: dict[str, Any] = field(default_factory=dict)
    choice: int | None = None  # the search's own pick (sequential halving's), else the most visited

    def best(self) -> int:
        """:attr:`choice` where the search made one, else the index of the most visited action (ties: the
        better mean, then the first)."""
        if self.choice is not None:
            return self.choice
        return max(
            range(len(self.visits)),
            key=lambda i: (self.visits[i], -math.inf if math.isnan(self.values[i]) else self.values[i], -i),
        )


class MCTS:
    """The search itself, over any guide (see the module docstring)."""

    def __init__(
        self,
        guide: Any,
        c: float | None = None,
        rng: np.random.Generator | None = None,
        tree: str = "auto",
        root: str = "uct",
    ) -> None:
        if tree not in TREES:
            raise ValueError(f"tree must be one of {TREES}, got {tree!r}")
        if root not in ROOTS:
            raise ValueError(f"root must be one of {ROOTS}, got {root!r}")
        if root == "halving" and tree == "python":
            raise ValueError("root='halving' runs in the compiled tree only; use tree='auto' or 'compiled'")
        self.guide = guide
        self.root = root
        self.c = c
        self.rng = rng if rng is not None else np.random.default_rng()
        self.tree = tree
        self._canon: dict = {}
        self._canon_tables: dict = {}

    def __setstate__(self, d: dict) -> None:
        d.setdefault("tree", "auto")  # pickled before the compiled tree existed
        d.setdefault("root", "uct")
        d.setdefault("_canon_tables", {})
        self.__dict__.update(d)

    def __getstate__(self) -> dict:  # pickled to tournament workers: the per-rule-set cache stays behind
        return {**self.__dict__, "_canon": {}, "_canon_tables": {}}

    def search(
        self,
        game: Game,
        root_actions: list[Action] | None = None,
        simulations: int | None = 1000,
        time_per_move: float | None = None,
    ) -> SearchResult:
        """Search from ``game`` (unchanged) over ``root_actions`` (default: all legal actions)."""
        if simulations is None and time_per_move is None:
            raise ValueError("give simulations, time_per_move or both")
        if game.over:
            raise ValueError("the game is over: nothing to search")
        rng, guide = self.rng, self.guide
        n_players = game.num_players
        actions = list(root_actions) if root_actions is not None else node_actions(game, self._canon)
        if not actions:
            raise ValueError("no legal action to search")
        t0 = time.perf_counter()
        begin = getattr(guide, "begin", None)
        if begin is not None:
            begin(game)
        compiled = getattr(guide, "compiled_state", None)
        sim = compiled(game) if compiled is not None else None
        if sim is not None and self.tree != "python" and not getattr(guide, "uses_priors", False):
            tree_state = getattr(guide, "tree_state", None)
            whole = tree_state(game) if tree_state is not None else None
            if whole is not None:
                return self._search_tree(whole, game, actions, simulations, time_per_move, t0)
            if self.tree == "compiled" or self.root != "uct":
                raise ValueError(
                    f"tree='compiled' (or root='{self.root}'): {guide!r} cannot run its whole search compiled from this game (it needs "
                    "random play-outs on the compiled engine, and a compiled order_unseen kernel for every "
                    "plug-in with a Python order_unseen hook); use tree='auto'"
                )
        elif self.tree == "compiled" or self.root != "uct":
            raise ValueError(
                f"tree='compiled' (and root='halving') runs plain MCTS with compiled random play-outs, not {guide!r}; use tree='auto'"
            )
        if sim is not None:
            if getattr(guide, "batch", 1) > 1:
                return self._search_compiled_batched(sim, game, actions, simulations, time_per_move, t0)
            return self._search_compiled(sim, game, actions, simulations, time_per_move, t0)
        prior, _ = guide.expand(game.clone(), actions, rng) if getattr(guide, "uses_priors", False) else (None, None)
        root = Node(game.player, actions, prior)
        puct = root.prior is not None
        lazy = puct and getattr(guide, "defers_priors", False)
        c = self.c if self.c is not None else (DEFAULT_C_PUCT if puct else DEFAULT_C_UCT)
        bounds = [math.inf, -math.inf]  # PUCT: smallest and largest value backed up
        sims = 0
        deadline = t0 + time_per_move if time_per_move is not None else math.inf
        limit = simulations if simulations is not None else math.inf
        canon = self._canon
        while sims < limit and (sims == 0 or time.perf_counter() < deadline):
            g = game.clone()
            g.redeal(rng)
            node = root
            path: list[tuple[Node, int]] = []
            while True:
                if lazy and node.prior is None:  # deferred priors: asked for when a simulation first comes back
                    node.set_prior(guide.priors(g, node.actions))
                i = self._select_puct(node, c, bounds) if puct else self._select_uct(node, c, rng)
                g.apply(node.actions[i])
                path.append((node, i))
                if g.over:
                    values = _utility_vector(guide.terminal(g), n_players)
                    break
                key = state_key(g)
                branches = node.children[i]
                if branches is None:
                    branches = node.children[i] = {}
                child = branches.get(key)
                if child is None:
                    acts = node_actions(g, canon)
                    player = g.player
                    if lazy:
                        prior, values = None, guide.leaf_values(g, rng)
                    else:
                        prior, values = guide.expand(g, acts, rng)
                    values = _utility_vector(values, n_players)
                    branches[key] = Node(player, acts, prior)
                    break
                node = child
            _backup(path, values, bounds if puct else None)
            sims += 1
        seconds = time.perf_counter() - t0
        means = [root.w[i] / root.n[i] if root.n[i] else math.nan for i in range(len(actions))]
        return SearchResult(actions, list(root.n), means, sims, seconds, root)

    def _search_tree(
        self,
        sim: Any,
        game: Game,
        actions: list[Action],
        simulations: int | None,
        time_per_move: float | None,
        t0: float,
    ) -> SearchResult:
        """:meth:`search` compiled whole (:meth:`FastPlayout.tree_search
        <carc_env.fast.playout.FastPlayout.tree_search>`, :mod:`carc_env.fast.tree`): the same UCT search
        as :meth:`_search_compiled` over a plain random-play-out guide, its tree in arrays and every
        simulation in the kernel.  The root's order of trying its actions comes from the search's
        generator, the kernel's random numbers from seeds drawn from it: alike in distribution to the
        Python tree, not seed for seed.  ``root`` of the result is None (no Python nodes)."""
        rng, guide = self.rng, self.guide
        rows = [sim.row(0, a) for a in actions]
        k = len(actions)
        order = rng.permutation(k).tolist() if k > 1 else [0]
        canon = self._canon_table(game)
        c = self.c if self.c is not None else DEFAULT_C_UCT
        deadline = t0 + time_per_move if time_per_move is not None else math.inf
        limit = simulations if simulations is not None else math.inf
        n, w, sims, stats = sim.tree_search(
            rows,
            order,
            limit,
            deadline,
            c,
            guide.utility,
            guide.margin_scale,
            canon,
            rng,
            halving=self.root == "halving",
        )
        seconds = time.perf_counter() - t0
        means = [w[i] / n[i] if n[i] else math.nan for i in range(k)]
        choice = stats.pop("choice", None)
        extra = {"state": "compiled", "tree": "compiled", "root": self.root, **stats}
        return SearchResult(actions, n, means, sims, seconds, None, extra, choice)

    def _canon_table(self, game: Game) -> np.ndarray:
        """Per tile type and rotation, 1 where the rotation is searched (:func:`canonical_rotations`)."""
        table = self._canon_tables.get(game.rules)
        if table is None:
            table = np.zeros((len(game.rules.tiles), 4), dtype=np.int8)
            for t in range(len(game.rules.tiles)):
                canon = canonical_rotations(game, t, self._canon)
                for r in range(4):
                    table[t, r] = canon[r] == r
            self._canon_tables[game.rules] = table
        return table

    def _search_compiled(
        self,
        sim: Any,
        game: Game,
        actions: list[Action],
        simulations: int | None,
        time_per_move: float | None,
        t0: float,
    ) -> SearchResult:
        """:meth:`search` with each simulation's state on the compiled engine (``sim``: a
        :class:`~carc_env.fast.playout.FastPlayout` the guide's ``begin`` loaded with ``game``).

        The same search as the Python loop, step for step: the same redeal (the remaining tiles shuffled
        by ``rng`` as ``Game.redeal`` shuffles them, the ``order_unseen`` hooks, the new game generator
        drawn), the same selection, the same node keys (in the engine's numbers), the same legal moves in
        the same order (:meth:`FastPlayout.moves`), the same play-out seed drawn from ``rng``: with the
        compiled step equal to the Python one (the differential), the same visits from the same seed.

        A guide with priors (``uses_priors``) evaluates the root as the Python loop does
        (``expand(game.clone(), ...)``) and every new leaf on the compiled state
        (``expand_state(sim, moves, rng)``; a plug-in's decision, rare, on the Python game
        :meth:`FastPlayout.python_leaf` makes of it): PUCT selection, the leaf's moves listed at once."""
        rng, guide = self.rng, self.guide
        n_players = game.num_players
        prior, _ = guide.expand(game.clone(), actions, rng) if getattr(guide, "uses_priors", False) else (None, None)
        root = Node(game.player, actions, prior)
        puct = root.prior is not None
        lazy = puct and getattr(guide, "defers_priors", False)
        c = self.c if self.c is not None else (DEFAULT_C_PUCT if puct else DEFAULT_C_UCT)
        bounds = [math.inf, -math.inf]  # PUCT: smallest and largest value backed up
        expand_state = getattr(guide, "expand_state", None)
        if puct and expand_state is None:
            raise TypeError(
                f"{guide!r} gives priors and offers compiled_state but has no expand_state(sim, moves, rng): "
                "give it one (the leaf's priors and values on the compiled state) or return None from compiled_state"
            )
        root_rows = [sim.row(0, a) for a in actions]
        redeal = _redealer(game, sim, rng)
        canon_cache = self._canon

        def canon(t: int) -> tuple[int, ...]:
            return canonical_rotations(game, t, canon_cache)

        step, key_of, values_of = sim.step, sim.key, guide.values
        select, select_puct = self._select_uct, self._select_puct
        sims = 0
        deadline = t0 + time_per_move if time_per_move is not None else math.inf
        limit = simulations if simulations is not None else math.inf
        while sims < limit and (sims == 0 or time.perf_counter() < deadline):
            shuffled, seed = redeal()
            node = root
            path: list[tuple[Node, int]] = []
            while True:
                i = select_puct(node, c, bounds) if puct else select(node, c, rng)
                row = root_rows[i] if node is root else node.actions[i]
                if not step(row):
                    raise RuntimeError(f"the compiled engine refuses move {row} of the search's tree (please report)")
                path.append((node, i))
                key = key_of()
                if key is None:
                    values = values_of(sim.scores())
                    break
                branches = node.children[i]
                if branches is None:
                    branches = node.children[i] = {}
                child = branches.get(key)
                if child is None and lazy:  # a new leaf valued alone: its moves and priors when a simulation comes back
                    values = _utility_vector(guide.leaf_values_state(sim, rng), n_players)
                    branches[key] = Node(key[1], None)
                    break
                if child is None and puct:  # a new leaf, evaluated by the guide: its moves and priors now
                    acts = sim.moves(canon)
                    if acts is None:  # a plug-in's decision: the Python game of this state evaluates it
                        leaf = sim.python_leaf(game, shuffled, seed)
                        py_acts = leaf.legal_actions()
                        prior, values = guide.expand(leaf, py_acts, rng)
                        acts = [sim.row(1, a) for a in py_acts]
                    else:
                        prior, values = expand_state(sim, acts, rng)  # type: ignore[misc]
                    values = _utility_vector(values, n_players)
                    branches[key] = Node(key[1], acts, prior)
                    break
                if child is None:  # a new leaf: its moves are listed when a simulation comes back to it
                    values = values_of(sim.play_out(int(rng.integers(2**31 - 1))))
                    branches[key] = Node(key[1], None)
                    break
                if child.actions is None:  # (most leaves are never visited again: 3 in 4 at 1,000 simulations)
                    acts = sim.moves(canon)
                    if not lazy:
                        child.open(acts if acts is not None else sim.plugin_moves(game, shuffled, seed))
                    elif acts is None:  # a plug-in's decision: its priors on the Python game of this state
                        leaf = sim.python_leaf(game, shuffled, seed)
                        py_acts = leaf.legal_actions()
                        child.open([sim.row(1, a) for a in py_acts], guide.priors(leaf, py_acts))
                    else:
                        child.open(acts, guide.priors_state(sim, acts))
                node = child
            _backup(path, values, bounds if puct else None)
            sims += 1
        seconds = time.perf_counter() - t0
        means = [root.w[i] / root.n[i] if root.n[i] else math.nan for i in range(len(actions))]
        return SearchResult(actions, list(root.n), means, sims, seconds, root, {"state": "compiled"})

    def _search_compiled_batched(
        self,
        sim: Any,
        game: Game,
        actions: list[Action],
        simulations: int | None,
        time_per_move: float | None,
        t0: float,
    ) -> SearchResult:
        """:meth:`_search_compiled` for a guide that values its new leaves in batches (``guide.batch``
        leaves a call of ``guide.evaluate_leaves``; the network guide of ``agents.search`` with ``batch``).

        Each simulation descends as in :meth:`_search_compiled` (PUCT) and adds a *virtual loss* to every
        (node, action) of its path: a visit valued at the worst value backed up so far, so the next descents
        of the batch see the path as more visited and worse, and spread over other actions.  A new leaf's moves are listed and its evaluation
        captured (``guide.leaf_state(sim, moves)``: what the batched forward reads) and the simulation stops
        there, pending.  When ``batch`` leaves are pending, or the budget is reached, or a descent arrives at
        a pending leaf (whose priors are not known yet; that descent is withdrawn, its virtual visits taken
        back, and does not count), one call evaluates them; each leaf gets its priors and its path the
        leaf's values in place of the virtual losses (a visit's count stays, its value becomes the
        leaf's).  A terminal state or a plug-in's decision is valued at once, as :meth:`_search_compiled`
        values it.  With ``batch`` 1 every leaf is evaluated before the next descent: the same tree as
        :meth:`_search_compiled` (tested)."""
        rng, guide = self.rng, self.guide
        n_players = game.num_players
        size = int(guide.batch)
        prior, _ = guide.expand(game.clone(), actions, rng)
        root = Node(game.player, actions, prior)
        c = self.c if self.c is not None else DEFAULT_C_PUCT
        bounds = [math.inf, -math.inf]
        root_rows = [sim.row(0, a) for a in actions]
        redeal = _redealer(game, sim, rng)
        canon_cache = self._canon

        def canon(t: int) -> tuple[int, ...]:
            return canonical_rotations(game, t, canon_cache)

        step, key_of, values_of, select_puct = sim.step, sim.key, guide.values, self._select_puct
        pending: list[tuple[list[tuple[Node, int]], Node, float]] = []
        captured: list[Any] = []
        flushes = withdrawn = 0

        def flush() -> int:
            nonlocal flushes
            if not pending:
                return 0
            flushes += 1
            for (path, leaf, loss), (priors, values) in zip(pending, guide.evaluate_leaves(captured), strict=True):
                leaf.set_prior(priors)
                _settle(path, _utility_vector(values, n_players), bounds, loss)
            done = len(pending)
            pending.clear()
            captured.clear()
            return done

        sims = 0
        deadline = t0 + time_per_move if time_per_move is not None else math.inf
        limit = simulations if simulations is not None else math.inf
        while sims + len(pending) < limit and (sims + len(pending) == 0 or time.perf_counter() < deadline):
            shuffled, seed = redeal()
            node = root
            path: list[tuple[Node, int]] = []
            values = None
            # the virtual visit's value: the worst value backed up so far (0 before any, and with batch 1)
            loss = bounds[0] if size > 1 and math.isfinite(bounds[0]) else 0.0
            while True:
                if node.prior is None:  # a leaf of this batch, not evaluated yet: withdraw this descent
                    for nd, i in path:
                        nd.n[i] -= 1
                        nd.visits -= 1
                        nd.w[i] -= loss
                        nd.wsum -= loss
                    withdrawn += 1
                    path = []
                    break
                i = select_puct(node, c, bounds)
                row = root_rows[i] if node is root else node.actions[i]
                if not step(row):
                    raise RuntimeError(f"the compiled engine refuses move {row} of the search's tree (please report)")
                node.n[i] += 1  # the virtual visit, settled when the simulation's value comes back
                node.visits += 1
                node.w[i] += loss
                node.wsum += loss
                path.append((node, i))
                key = key_of()
                if key is None:
                    values = values_of(sim.scores())
                    break
                branches = node.children[i]
                if branches is None:
                    branches = node.children[i] = {}
                child = branches.get(key)
                if child is None:
                    acts = sim.moves(canon)
                    if acts is None:  # a plug-in's decision: the Python game of this state, evaluated now
                        leaf = sim.python_leaf(game, shuffled, seed)
                        py_acts = leaf.legal_actions()
                        prior, values = guide.expand(leaf, py_acts, rng)
                        branches[key] = Node(key[1], [sim.row(1, a) for a in py_acts], prior)
                        break
                    child = branches[key] = Node(key[1], acts)
                    captured.append(guide.leaf_state(sim, acts))
                    pending.append((path, child, loss))
                    break
                node = child
            if values is not None:
                _settle(path, _utility_vector(values, n_players), bounds, loss)
                sims += 1
            if len(pending) >= size or (not path and pending):
                sims += flush()
        sims += flush()
        seconds = time.perf_counter() - t0
        means = [root.w[i] / root.n[i] if root.n[i] else math.nan for i in range(len(actions))]
        extra = {"state": "compiled", "batches": flushes, "withdrawn": withdrawn}
        return SearchResult(actions, list(root.n), means, sims, seconds, root, extra)

    @staticmethod
    def _select_uct(node: Node, c: float, rng: np.random.Generator) -> int:
        k = len(node.actions)
        if node.tried < k:
            if node.order is None:
                node.order = rng.permutation(k).tolist() if k > 1 else [0]
            i = node.order[node.tried]
            node.tried += 1
            return i
        n, w = node.n, node.w
        logn = math.log(node.visits)
        best_v, best = -math.inf, 0
        for i in range(k):
            ni = n[i]
            v = w[i] / ni + c * math.sqrt(logn / ni)
            if v > best_v:
                best_v, best = v, i
        return best

    @staticmethod
    def _select_puct(node: Node, c: float, bounds: list[float]) -> int:
        lo, hi = bounds
        span = hi - lo if hi > lo else 1.0
        if not math.isfinite(lo):
            lo = 0.0
        n, w, p = node.n, node.w, node.prior
        fpu = ((node.wsum / node.visits) - lo) / span if node.visits else 0.5
        sq = math.sqrt(node.visits + 1)
        best_v, best = -math.inf, 0
        for i in range(len(node.actions)):
            ni = n[i]
            q = ((w[i] / ni) - lo) / span if ni else fpu
            v = q + c * p[i] * sq / (1 + ni)
            if v > best_v:
                best_v, best = v, i
        return best


def _backup(path: list, values: Sequence[float], bounds: list[float] | None) -> None:
    """Add a simulation's values to every (node, action) of its path (each node counts its deciding
    player's value); with PUCT, widen the tree's min-max ``bounds`` by them."""
    for nd, i in path:
        v = values[nd.player]
        nd.n[i] += 1
        nd.w[i] += v
        nd.visits += 1
        nd.wsum += v
    if bounds is not None:
        for v in values:
            if v < bounds[0]:
                bounds[0] = v
            if v > bounds[1]:
                bounds[1] = v


def _redealer(game: Game, sim: Any, rng: np.random.Generator) -> Any:
    """The compiled-state searches' redeal of a simulation: ``redeal()`` shuffles the tiles left (next drawn
    first: what ``Game.redeal`` shuffles) with ``rng``, applies the ``order_unseen`` hooks (they read the
    root's public state), draws the new game generator's seed and loads slot 1 of ``sim`` with that order;
    it returns the order before the hooks and the seed (what a Python leaf of this state is redealt with)."""
    base = game._bag[::-1]
    hooks = game.rules.h_order_unseen
    hook_game = game.clone() if hooks else None
    counts = sorted(base) if hooks else None
    new_rng = sim.uses_rng

    def redeal() -> tuple[list[int], Any]:
        order = list(base)
        rng.shuffle(order)
        shuffled = order
        for hook in hooks:
            order = hook(hook_game, order if order is not shuffled else list(order))
        if counts is not None and sorted(order) != counts:
            raise ValueError("an order_unseen hook changed which tiles are left to draw")
        seed = rng.integers(2**63)
        sim.redeal(order, generator_words(np.random.default_rng(seed)) if new_rng else None)
        return shuffled, seed

    return redeal


def _settle(path: list, values: Sequence[float], bounds: list[float], loss: float) -> None:
    """:func:`_backup` of a simulation whose path already holds its visits (the batched search's virtual
    visits, each valued ``loss``): the values in place of ``loss``, the min-max ``bounds`` widened."""
    for nd, i in path:
        v = values[nd.player] - loss if loss else values[nd.player]
        nd.w[i] += v
        nd.wsum += v
    for v in values:
        if v < bounds[0]:
            bounds[0] = v
        if v > bounds[1]:
            bounds[1] = v


def _unwrap(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


def root_choices(game: Game, codec: Any, mask: np.ndarray, canon_cache: dict) -> tuple[list[Action], list[int]]:
    """The legal actions of ``mask`` as core actions, symmetric rotations merged, with their flat indices."""
    legal = np.flatnonzero(mask)
    view = codec.view(game)
    actions: list[Action] = []
    indices: list[int] = []
    seen: set = set()
    canon = canonical_rotations(game, game.current_tile, canon_cache) if game.phase == "tile" else None
    for a in legal.tolist():
        pc = codec.codecs[codec.phase_of(a)]
        act = pc.decode(game, view, a - pc.start)
        if canon is not None and type(act) is PlaceTile:
            key: Any = (act.x, act.y, canon[act.rotation])
            if key in seen:
                continue
            seen.add(key)
        actions.append(act)
        indices.append(a)
    return actions, indices


def _check_budget(simulations: int | None, time_per_move: float | None) -> None:
    if simulations is None and time_per_move is None:
        raise ValueError("MCTS needs a budget: simulations, time_per_move or both")
    if simulations is not None and (
        isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) or simulations < 1
    ):
        raise ValueError(f"simulations must be a positive integer or None, got {simulations!r}")
    if time_per_move is not None and not (isinstance(time_per_move, (int, float)) and time_per_move > 0):
        raise ValueError(f"time_per_move must be a positive number of seconds or None, got {time_per_move!r}")


class MCTSPolicy:
    """MCTS as a player (``act(obs, env) -> int``).  See the module docstring.

    ``simulations`` / ``time_per_move``: the budget per decision.
    ``rollout`` (``"random"`` or ``"greedy"``), ``epsilon`` (random actions in
    greedy rollouts), ``utility`` and ``margin_scale``: the play-outs
    (:class:`carc_env.search.rollout.RolloutGuide`); ``engine`` (``"auto"``,
    ``"python"``, ``"numba"``): where the play-outs run (auto: the compiled
    engine where it covers the game); ``horizon`` (random rollouts): the
    play-outs end H tiles after the root's, scored as the game's end there;
    ``farmers`` False (random rollouts): the play-outs place no follower on
    a field; ``place`` below 1 (random rollouts): a play-out's follower
    decision passes 1 - place of the time; or pass any ``guide``.
    ``c``: the exploration constant (default 0.7 for UCT, 1.5 for PUCT).
    ``tree`` (``"auto"``, ``"compiled"``, ``"python"``): where the tree lives (:data:`TREES`; auto:
    random play-outs on the compiled engine run the whole search compiled, :mod:`carc_env.fast.tree`).
    ``root`` (``"uct"``, ``"halving"``): how the root shares the budget (:data:`ROOTS`; halving: the
    compiled tree only).
    """

    uses_observation = False

    def __init__(
        self,
        simulations: int | None = 1000,
        time_per_move: float | None = None,
        rollout: str = "random",
        epsilon: float = 0.0,
        utility: str = "mixed",
        margin_scale: float = 20.0,
        c: float | None = None,
        seed: int | None = None,
        guide: Any = None,
        name: str | None = None,
        engine: str = "auto",
        horizon: int | None = None,
        farmers: bool = True,
        tree: str = "auto",
        root: str = "uct",
        place: float = 1.0,
    ) -> None:
        _check_budget(simulations, time_per_move)
        if c is not None and not (isinstance(c, (int, float)) and c >= 0):
            raise ValueError(f"c must be a non-negative number, got {c!r}")
        self.simulations = None if simulations is None else int(simulations)
        self.time_per_move = None if time_per_move is None else float(time_per_move)
        self.guide = (
            guide
            if guide is not None
            else RolloutGuide(
                rollout, epsilon, utility, margin_scale, engine=engine, horizon=horizon, farmers=farmers, place=place
            )
        )
        self.c = c
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self.mcts = MCTS(self.guide, c, self.rng, tree=tree, root=root)
        self.last_search: SearchResult | None = None
        self.name = name or f"mcts:{simulations}"

    def __repr__(self) -> str:
        budget = f"simulations={self.simulations}" if self.simulations else ""
        if self.time_per_move:
            budget += f"{', ' if budget else ''}time_per_move={self.time_per_move}"
        return f"MCTSPolicy({budget}, guide={self.guide!r})"

    def seed(self, seed: int | None) -> None:
        """Restart the random stream (environments call it on every seeded reset)."""
        self.rng = np.random.default_rng(seed)
        self.mcts.rng = self.rng

    def __getstate__(self) -> dict:
        return {**self.__dict__, "last_search": None}

    def act(self, obs: Mapping[str, np.ndarray], env: Any) -> int:
        base = _unwrap(env)
        actions, indices = root_choices(base.game, base.codec, obs["action_mask"], self.mcts._canon)
        actions, indices = self.root_cut(obs, env, actions, indices)
        return self._search_root(base.game, actions, indices)

    def root_cut(
        self, obs: Mapping[str, np.ndarray], env: Any, actions: list[Action], indices: list[int]
    ) -> tuple[list[Action], list[int]]:
        """The root actions this player searches among the root's ``actions`` (flat ``indices``), in their
        order, ``env`` as :meth:`act` got it: all of them here; a subclass may keep fewer
        (``agents.search.PrunedSearchPolicy``: its network's likeliest)."""
        return actions, indices

    def _search_root(self, game: Game, actions: list[Action], indices: list[int]) -> int:
        """The search's move among the root's ``actions`` (flat ``indices``), as :func:`root_choices` lists them."""
        if not actions:
            raise ValueError("MCTSPolicy.act: the action mask is all zero (is it this agent's turn?)")
        if len(actions) == 1:
            self.last_search = SearchResult(actions, [0], [math.nan], 0, 0.0)
            return indices[0]
        res = self.mcts.search(game, actions, self.simulations, self.time_per_move)
        self.last_search = res
        return indices[res.best()]


__all__ = ["MCTS", "ROOTS", "TREES", "MCTSPolicy", "Node", "SearchResult", "node_actions", "root_choices", "state_key"]
