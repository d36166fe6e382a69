"""Plain MCTS compiled whole: the tree, the redeal and the play-outs of every simulation in one kernel call.

Contract
--------
:func:`tree_run` runs simulations of the search of :class:`carc_env.search.mcts.MCTS` over a
:class:`~carc_env.search.rollout.RolloutGuide` with random play-outs (UCT; untried actions first, in a
random order, then ``mean + c * sqrt(ln N / n)``), with its tree in arrays (:class:`Tree`) rather than
Python nodes, and returns to Python only between chunks of simulations (the caller's time budget).  It is
the same search as :meth:`MCTS._search_compiled`, decision for decision:

* a simulation starts from slot 0 (the root, loaded by ``FastPlayout.begin``) copied into slot 1
  (:func:`copy_root`) with the tiles left to draw shuffled uniformly and put in the order everyone knows
  by the plug-ins' ``order_unseen`` kernels (the river first), and a fresh generator where a plug-in
  draws from the game's (:func:`redeal`: ``Game.redeal``'s determinisation; the caller uses this kernel
  only where every Python ``order_unseen`` hook has its kernel: ``FastPlayout.tree_covers``);
* a node is the deciding player's, its children per action keyed by the state reached (phase, the
  plug-in decision's phase, deciding player, drawn tile, tiles left: the search's ``state_key``);
* a new leaf is valued by one random play-out (``play_on``: the decisions of ``play_out``, with its
  ``stop``, ``farmers`` and ``place``), the utility of its final scores (``RolloutGuide.values``: win, margin or
  mixed), and its moves are listed when a simulation first comes back to it: tile placements with one
  rotation per geometry (``canon``), the follower spots then pass, a plug-in decision's moves as the
  action mask's flat indices (``write_mask``; the moves its action range cannot express, counted in
  ``G_DROPPED``, are not searched: ``dropped`` counts such nodes);
* the values are backed up along the path, each node counting its deciding player's value.

What differs from the Python loop: the random numbers (the kernels' stream, seeded once per call, not
the search's generator), so the trees are alike in distribution, not seed for seed
(``tests/fast/test_tree_search.py`` compares the two).

Room: ``tree_run`` stops before a simulation when the node or move arrays might not hold what it adds
(status ``FULL``); the caller grows them (:meth:`Tree.grow`) and calls again.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels as K
from .kernels import (
    G_BAG_I,
    G_BAG_N,
    G_CUR,
    G_DPHASE,
    G_MAXY,
    G_MINY,
    G_NF,
    G_NNODES,
    G_NPL,
    G_NSPOTS,
    G_PHASE,
    G_PLAYER,
    PH_FOLLOWER,
    PH_OVER,
    PH_PLUG,
    PH_TILE,
)
from .seam import kernel
from .tables import (
    P_GOFF,
    P_NPLAYERS,
    P_O_BAG,
    P_O_FMASK,
    P_O_GUEST,
    P_O_HIST,
    P_O_RNG,
    P_O_SCORES,
    P_O_SPOTS,
)

# counters (int64): nodes, moves (edges), simulations done, plug-in decisions whose moves were listed, and
# those among them whose action range dropped moves
C_NODES, C_EDGES, C_SIMS, C_PLUG, C_DROPPED, C_LEN = range(6)
# status of a call
OK, FULL, REFUSED = 0, 1, 2
# utilities (RolloutGuide.utility)
U_WIN, U_MARGIN, U_MIXED = 0, 1, 2
UTILITY_CODES = {"win": U_WIN, "margin": U_MARGIN, "mixed": U_MIXED}
MAX_DEPTH = 8192  # decisions on one simulation's path in the tree (a game has a few hundred)


class Tree:
    """The arrays of one search's tree (grown by :meth:`grow` when a call reports ``FULL``).

    Nodes: ``player``, ``key`` (the packed state key), ``e0`` (first move, -1 until its moves are listed),
    ``ne`` (moves), ``tried`` (untried moves taken so far), ``visits``, ``wsum``, ``sib`` (the next child
    of the same parent move).  Moves (edges): ``move`` (the kernel's ``(kind, a, b, c)``), ``n``, ``w``,
    ``child`` (the first child), ``perm`` (the node's order of trying its moves, by position)."""

    def __init__(self, nodes: int, edges: int) -> None:
        self.player = np.zeros(nodes, dtype=np.int64)
        self.key = np.zeros(nodes, dtype=np.int64)
        self.e0 = np.full(nodes, -1, dtype=np.int64)
        self.ne = np.zeros(nodes, dtype=np.int64)
        self.tried = np.zeros(nodes, dtype=np.int64)
        self.visits = np.zeros(nodes, dtype=np.int64)
        self.wsum = np.zeros(nodes, dtype=np.float64)
        self.sib = np.full(nodes, -1, dtype=np.int64)
        self.move = np.zeros((edges, 4), dtype=np.int64)
        self.n = np.zeros(edges, dtype=np.int64)
        self.w = np.zeros(edges, dtype=np.float64)
        self.child = np.full(edges, -1, dtype=np.int64)
        self.perm = np.zeros(edges, dtype=np.int64)
        self.counts = np.zeros(C_LEN, dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self.player,
            self.key,
            self.e0,
            self.ne,
            self.tried,
            self.visits,
            self.wsum,
            self.sib,
            self.move,
            self.n,
            self.w,
            self.child,
            self.perm,
            self.counts,
        )

    def grow(self, nodes: int, edges: int) -> None:
        """Room for at least ``nodes`` nodes and ``edges`` moves, what is held kept."""
        for name, size, fill in (
            ("player", nodes, 0),
            ("key", nodes, 0),
            ("e0", nodes, -1),
            ("ne", nodes, 0),
            ("tried", nodes, 0),
            ("visits", nodes, 0),
            ("wsum", nodes, 0),
            ("sib", nodes, -1),
            ("n", edges, 0),
            ("w", edges, 0),
            ("child", edges, -1),
            ("perm", edges, 0),
        ):
            old = getattr(self, name)
            if len(old) < size:
                new = np.full(size, fill, dtype=old.dtype)
                new[: len(old)] = old
                setattr(self, name, new)
        if len(self.move) < edges:
            move = np.zeros((edges, 4), dtype=np.int64)
            move[: len(self.move)] = self.move
            self.move = move


@kernel
def copy_root(T, S, src, dst, full):
    """Game ``src`` into slot ``dst``: every row a simulation reads.  The grid rows of both games' played
    areas +- 4 (rows farther off in ``dst`` were written by no simulation since the caller's full copy, so
    they hold ``src``'s), the lists but the history and the score log (the kernels append to them and
    never read them), the pieces, frontier and nodes ``src`` has; ``full`` 1: every row."""
    gi = S.gi
    if full:
        lo, hi = 0, S.grid.shape[1]
    else:
        off = T.P[P_GOFF]
        lo = max(min(gi[src, G_MINY], gi[dst, G_MINY]) - 4 + off, 0)
        hi = min(max(gi[src, G_MAXY], gi[dst, G_MAXY]) + 5 + off, S.grid.shape[1])
    for yy in range(lo, hi):
        for xx in range(S.grid.shape[2]):
            S.grid[dst, yy, xx] = S.grid[src, yy, xx]
    npl = S.pl.shape[1] if full else min(gi[src, G_NPL] + 1, S.pl.shape[1])
    for k in range(npl):
        for c in range(S.pl.shape[2]):
            S.pl[dst, k, c] = S.pl[src, k, c]
    nf = S.fr.shape[1] if full else min(gi[src, G_NF] + 1, S.fr.shape[1])
    for k in range(nf):
        for c in range(S.fr.shape[2]):
            S.fr[dst, k, c] = S.fr[src, k, c]
    nn = S.nd.shape[1] if full else gi[src, G_NNODES]
    for k in range(nn):
        for c in range(S.nd.shape[2]):
            S.nd[dst, k, c] = S.nd[src, k, c]
    if full:
        for i in range(S.ls.shape[1]):
            S.ls[dst, i] = S.ls[src, i]
    else:
        for i in range(T.P[P_O_HIST]):
            S.ls[dst, i] = S.ls[src, i]
        for i in range(T.P[P_O_GUEST], S.ls.shape[1]):
            S.ls[dst, i] = S.ls[src, i]
    for i in range(gi.shape[1]):
        gi[dst, i] = gi[src, i]


@kernel
def shuffle_bag(T, S, g):
    """The tiles left to draw in game g in a uniformly random order (Fisher-Yates on the kernels' stream)."""
    ob = T.P[P_O_BAG]
    lo = S.gi[g, G_BAG_I]
    n = S.gi[g, G_BAG_N] - lo
    for i in range(n - 1, 0, -1):
        j = np.random.randint(0, i + 1)
        a = S.ls[g, ob + lo + i]
        S.ls[g, ob + lo + i] = S.ls[g, ob + lo + j]
        S.ls[g, ob + lo + j] = a


@kernel
def fresh_generator(T, S, g):
    """Game g's generator (the plug-ins draw from it) replaced by a fresh one: a PCG64 state and odd
    increment of uniformly random words from the kernels' stream, no cached half-output (the layout of
    :func:`carc_env.fast.rng.generator_words`).  ``Game.redeal`` seeds a new generator from the search's;
    this draws one as likely as any, without NumPy's seeding."""
    o = T.P[P_O_RNG]
    for i in range(8):
        S.ls[g, o + i] = np.random.randint(-(1 << 31), 1 << 31)
    S.ls[g, o + 4] |= 1  # the increment is odd
    S.ls[g, o + 8] = 0
    S.ls[g, o + 9] = 0


@kernel
def redeal(T, S, src, dst, full, new_rng):
    """A simulation's start: game ``src`` (the root) into slot ``dst`` (:func:`copy_root`), its tiles left
    shuffled uniformly, then ordered as everyone knows them (the plug-ins' ``order_unseen`` kernels: the
    river first), and with ``new_rng`` a fresh generator for the plug-ins drawing from it (Stained Glass):
    ``Game.redeal`` on the compiled state."""
    copy_root(T, S, src, dst, full)
    shuffle_bag(T, S, dst)
    K.H.order_unseen(T, S, dst)
    if new_rng:
        fresh_generator(T, S, dst)


@kernel
def redeal_slot(T, S, src, dst, seed, new_rng):
    """:func:`redeal` from Python, the kernels' stream seeded ``seed`` (the tests: the order it deals)."""
    np.random.seed(seed)
    redeal(T, S, src, dst, 1, new_rng)


@kernel
def state_key(S, g):
    """Game g's state key, packed: (phase, plug-in phase, deciding player, drawn tile, tiles left); -1 when
    the game is over."""
    gi = S.gi
    ph = gi[g, G_PHASE]
    if ph == PH_OVER:
        return -1
    d = gi[g, G_DPHASE] if ph == PH_PLUG else 0
    return (
        (((ph * 256 + d) * 16 + gi[g, G_PLAYER]) * 65536 + gi[g, G_CUR] + 1) * 65536 + gi[g, G_BAG_N] - gi[g, G_BAG_I]
    )


@kernel
def list_moves(T, S, g, canon, mask, move, e0):
    """Game g's legal moves into ``move[e0:]`` (see the module docstring); returns how many."""
    gi, ls = S.gi, S.ls
    ph = gi[g, G_PHASE]
    k = 0
    if ph == PH_TILE:
        ofm = T.P[P_O_FMASK]
        t = gi[g, G_CUR]
        for slot in range(gi[g, G_NF]):
            m = ls[g, ofm + slot]
            for r in range(4):
                if (m >> r) & 1 and canon[t, r]:
                    move[e0 + k, 0] = 0
                    move[e0 + k, 1] = S.fr[g, slot, 0]
                    move[e0 + k, 2] = S.fr[g, slot, 1]
                    move[e0 + k, 3] = r
                    k += 1
    elif ph == PH_FOLLOWER:
        osp = T.P[P_O_SPOTS]
        for i in range(gi[g, G_NSPOTS]):
            move[e0 + k, 0] = 1
            move[e0 + k, 1] = ls[g, osp + i]
            move[e0 + k, 2] = 0
            move[e0 + k, 3] = 0
            k += 1
        move[e0 + k, 0] = 2
        move[e0 + k, 1] = 0
        move[e0 + k, 2] = 0
        move[e0 + k, 3] = 0
        k += 1
    elif ph == PH_PLUG:
        for i in range(len(mask)):
            mask[i] = 0
        K.write_mask(T, S, g, mask)
        for i in range(len(mask)):
            if mask[i]:
                move[e0 + k, 0] = -1
                move[e0 + k, 1] = i
                move[e0 + k, 2] = 0
                move[e0 + k, 3] = 0
                k += 1
    return k


@kernel
def utility_of(T, S, g, p, kind, scale):
    """Player p's utility of game g's scores (``RolloutGuide.values``: win, margin or their mean)."""
    osc = T.P[P_O_SCORES]
    n = T.P[P_NPLAYERS]
    best = S.ls[g, osc]
    for q in range(1, n):
        if S.ls[g, osc + q] > best:
            best = S.ls[g, osc + q]
    k = 0
    second = -(1 << 62)
    for q in range(n):
        s = S.ls[g, osc + q]
        if s == best:
            k += 1
        elif s > second:
            second = s
    if k > 1:
        second = best
    s = S.ls[g, osc + p]
    win = 1.0 / k if s == best else 0.0
    if kind == U_WIN:
        return win
    m = 0.5 + 0.5 * math.tanh((s - (second if s == best else best)) / scale)
    if kind == U_MARGIN:
        return m
    return 0.5 * (win + m)


@kernel
def tree_run(
    T,
    S,
    sims,
    room,
    seed,
    c,
    stop,
    farmers,
    place,
    kind,
    scale,
    full,
    new_rng,
    canon,
    mask,
    spread,
    alive,
    rewards,
    path,
    values,
    player,
    key,
    e0,
    ne,
    tried,
    visits,
    wsum,
    sib,
    move,
    n,
    w,
    child,
    perm,
    counts,
):
    """Up to ``sims`` simulations of the search whose root is game 0 (node 0, its moves listed by the
    caller) on scratch game 1, while the arrays have room for one more node and ``room`` more moves (the
    most one node can list); returns the status (``OK``, ``FULL``: no room for one more simulation,
    ``REFUSED``: the engine refused a move of the tree).  ``counts`` (``C_*``) carries the tree's sizes and
    the simulations done from call to call; ``seed`` >= 0 seeds the kernels' stream (-1: it goes on).
    ``spread`` 1: at the root, each simulation takes the least visited of the moves whose ``alive`` is 1
    (ties: the root's order of trying), not UCT's choice (sequential halving's rounds, :meth:`FastPlayout.tree_search`)."""
    if seed >= 0:
        np.random.seed(seed)
    nplayers = T.P[P_NPLAYERS]
    for _ in range(sims):
        if counts[C_NODES] + 1 > len(player) or counts[C_EDGES] + room > len(n):
            return FULL
        redeal(T, S, 0, 1, full, new_rng)
        node = 0
        depth = 0
        while True:
            # UCT: untried moves first, in the node's random order, then mean + c sqrt(ln N / n)
            first = e0[node]
            k = ne[node]
            if k == 0:  # a plug-in decision none of whose moves has a flat index: played out from here
                K.play_on(T, S, 1, stop, farmers, place)
                break
            if depth == MAX_DEPTH:
                return REFUSED
            if depth == 0 and spread:
                i = -1
                for jj in range(k):
                    j = perm[first + jj]
                    if alive[j] and (i < 0 or n[first + j] < n[first + i]):
                        i = j
            elif tried[node] < k:
                i = perm[first + tried[node]]
                tried[node] += 1
            else:
                logn = math.log(visits[node])
                best_v = -math.inf
                i = 0
                for j in range(k):
                    e = first + j
                    v = w[e] / n[e] + c * math.sqrt(logn / n[e])
                    if v > best_v:
                        best_v = v
                        i = j
            e = first + i
            if not K.step_game(T, S, 1, move[e, 0], move[e, 1], move[e, 2], move[e, 3], rewards):
                return REFUSED
            path[depth] = node
            path[MAX_DEPTH + depth] = e
            depth += 1
            sk = state_key(S, 1)
            if sk < 0:  # the game's end: its scores value the path
                break
            ch = child[e]
            while ch >= 0 and key[ch] != sk:
                ch = sib[ch]
            if ch < 0:  # a new leaf: one play-out values it, its moves are listed when a simulation comes back
                ch = counts[C_NODES]
                counts[C_NODES] += 1
                player[ch] = S.gi[1, G_PLAYER]
                key[ch] = sk
                e0[ch] = -1
                ne[ch] = 0
                tried[ch] = 0
                visits[ch] = 0
                wsum[ch] = 0.0
                sib[ch] = child[e]
                child[e] = ch
                K.play_on(T, S, 1, stop, farmers, place)
                break
            if e0[ch] < 0:  # the second visit: its moves, and their order of trying
                f = counts[C_EDGES]
                m = list_moves(T, S, 1, canon, mask, move, f)
                if S.gi[1, G_PHASE] == PH_PLUG:
                    counts[C_PLUG] += 1
                    if S.gi[1, K.G_DROPPED] > 0:
                        counts[C_DROPPED] += 1
                for j in range(m):
                    n[f + j] = 0
                    w[f + j] = 0.0
                    child[f + j] = -1
                    perm[f + j] = j
                for j in range(m - 1, 0, -1):
                    r = np.random.randint(0, j + 1)
                    a = perm[f + j]
                    perm[f + j] = perm[f + r]
                    perm[f + r] = a
                e0[ch] = f
                ne[ch] = m
                counts[C_EDGES] += m
            node = ch
        for p in range(nplayers):
            values[p] = utility_of(T, S, 1, p, kind, scale)
        for d in range(depth):
            nd = path[d]
            e = path[MAX_DEPTH + d]
            v = values[player[nd]]
            n[e] += 1
            w[e] += v
            visits[nd] += 1
            wsum[nd] += v
        counts[C_SIMS] += 1
    return OK


__all__ = [
    "C_DROPPED",
    "C_EDGES",
    "C_NODES",
    "C_PLUG",
    "C_SIMS",
    "FULL",
    "MAX_DEPTH",
    "OK",
    "REFUSED",
    "Tree",
    "redeal_slot",
    "tree_run",
]
