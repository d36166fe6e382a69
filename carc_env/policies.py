"""Baseline policies: uniform random and one-ply greedy.

This module sits below the environments (it imports the core and the
encoding layer only), so the environments can use it for opponents;
:mod:`carc_env.baselines` re-exports it with :func:`~carc_env.baselines.play_match`.

Policy protocol
---------------
A policy is any object with ``act(obs, env) -> int``:

* ``obs``: the acting agent's observation dict (at least ``"action_mask"``;
  a policy whose ``uses_observation`` attribute is False may be given only the
  mask, which saves encoding the board for it);
* ``env``: the unwrapped environment (:class:`carc_env.env.aec.raw_env`) or
  any object exposing ``.game`` (the core :class:`~carc_env.core.Game`) and
  ``.codec`` (the :class:`~carc_env.encoding.ActionCodec`), such as the
  :class:`~carc_env.env.match.Match` the vector env passes;
* returns a flat action index enabled in ``obs["action_mask"]``.

A policy may also have ``seed(seed)``; the environments call it on every
seeded reset (with a seed derived from the reset's) so that games against
random or epsilon-greedy opponents replay exactly.

Policies never change ``env.game``; search happens on clones.

``RandomPolicy(seed)`` picks uniformly among the legal actions.

``GreedyPolicy(epsilon=0.0, seed=None)`` looks one ply ahead:

* tile phase: every legal placement is scored by what it earns right now,
  own points minus the best opponent's points, including the points of a
  follower that could be put on a feature the placement completes.  A cheap
  exact test (open edges of the features a placement joins, cloisters around
  it) finds the placements that complete something; only those are played
  out on a clone of the game (with the last tile, every placement is: its
  play-out includes the final scoring).  Ties (most placements earn nothing) are
  broken by a small positional heuristic (extend features where I lead,
  avoid extending the opponents'), then at random;
* follower phase: take a spot whose feature is already complete (it scores at
  once and the follower comes back); otherwise value the spots (city 2 x
  tiles + pennants - open edges, cloister 1 + neighbours, road tiles, fields
  only late in the game for 3 x completed cities they border), keep
  ``reserve`` followers back for strong spots only, and pass when nothing is
  worth a follower;
* expansion phases: the choice of the plug-in's ``heuristics`` part when it
  has one (Stained Glass: thieves when someone holds a token to steal, the
  steal that helps most, score the best combination of windows unless one
  more token would finish a bigger window), otherwise uniformly random;
* plug-ins' assets: with a plug-in whose ``heuristics`` part values what a
  player holds (Stained Glass: a glass token, a finished window), the tile
  phase counts the change of every player's holdings as points too (a
  completed cloister's token), less what every placement of the tile brings
  anyway (the token for placing a cloister tile);
* ``epsilon``: the probability of a uniformly random legal action instead
  (the strength knob: 0 = greedy, 1 = random).

It makes several hundred decisions per second (``scripts``/tests measure it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .core.tiles import BUILDING, CITY, FIELD, ROAD
from .encoding.lookahead import has_assets, immediate_points, leads, one_ply_gain, plugin_action


@runtime_checkable
class Policy(Protocol):
    """``act(obs, env) -> int``: see the module docstring."""

    def act(self, obs: Mapping[str, np.ndarray], env: Any) -> int: ...


def _unwrap(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


class RandomPolicy:
    """Uniformly random over the legal actions."""

    uses_observation = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the random stream (environments call it on a seeded reset)."""
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Mapping[str, np.ndarray], env: Any = None) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        if not len(legal):
            raise ValueError("RandomPolicy.act: the action mask is all zero (is it this agent's turn?)")
        return int(legal[self.rng.integers(len(legal))])

    def __repr__(self) -> str:
        return "RandomPolicy()"


class GreedyPolicy:
    """One-ply greedy with an epsilon-random strength knob.  See the module docstring."""

    uses_observation = False

    def __init__(self, epsilon: float = 0.0, seed: int | None = None, reserve: int = 2) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.reserve = int(reserve)
        self.rng = np.random.default_rng(seed)
        self._canon: dict[int, dict[int, list[int]]] = {}

    def __repr__(self) -> str:
        return f"GreedyPolicy(epsilon={self.epsilon})"

    def seed(self, seed: int | None) -> None:
        """Restart the random stream (environments call it on a seeded reset)."""
        self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ entry point
    def draws(self, phase: str, n_legal: int) -> tuple[int, np.ndarray | None]:
        """The random numbers one decision takes from the policy's generator, in :meth:`act`'s order.

        ``(k, None)``: the epsilon branch, play the ``k``-th legal action; ``(-1, noise)``: decide greedily
        with ``noise`` (tile phase: one number per legal placement; follower phase: one per follower spot,
        i.e. per legal action but pass); ``(-1, None)`` in an expansion phase (its draws come later).
        The compiled greedy (:mod:`carc_env.fast.greedy`) takes the same draws, so both decide alike."""
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(self.rng.integers(n_legal)), None
        if phase == "tile":
            return -1, self.rng.random(n_legal) * 1e-3
        if phase == "follower":
            return -1, self.rng.random(max(0, n_legal - 1)) * 1e-3
        return -1, None

    def act(self, obs: Mapping[str, np.ndarray], env: Any) -> int:
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        if not len(legal):
            raise ValueError("GreedyPolicy.act: the action mask is all zero (is it this agent's turn?)")
        env = _unwrap(env)
        match = getattr(env, "match", env)
        compiled = getattr(match, "greedy_action", None)  # a game on the compiled engine decides there
        if compiled is not None:
            a = compiled(self)
            if a is not None:
                return int(a)
        game, codec = env.game, env.codec
        pick, noise = self.draws(game.phase, len(legal))
        if pick >= 0:
            return int(legal[pick])
        if game.phase == "tile":
            return self._tile(game, codec, legal, noise)
        if game.phase == "follower":
            return self._follower(game, codec, legal, noise)
        action = plugin_action(game)
        if action is not None:
            index = codec.encode(game, action)
            if mask[index]:
                return int(index)
        return int(legal[self.rng.integers(len(legal))])

    # ------------------------------------------------------------------ tile phase
    def _rotation_classes(self, game: Any, t: int) -> dict[int, list[int]]:
        """Per rotation, the canonical rotation with identical geometry (computed once per tile type)."""
        key = id(game.rules) * 1000 + t
        canon = self._canon.get(key)
        if canon is None:
            tile = game.rules.tiles[t]
            seen: dict[tuple, int] = {}
            canon = {}
            for r in range(4):
                k = (tile.edge_codes[r], tile.center[r], tile.half[r])
                canon[r] = seen.setdefault(k, r)
            self._canon[key] = canon
        return canon

    def _tile(self, game: Any, codec: Any, legal: np.ndarray, noise: np.ndarray) -> int:
        me = game.player
        t = game.current_tile
        canon = self._rotation_classes(game, t)
        tr = codec.tile_range
        pc = codec.codecs["tile"]
        view = codec.view(game)
        best_v, best = -1e18, int(legal[0])
        memo: dict[tuple[int, int, int], float] = {}
        assets = has_assets(game.rules)
        anyway: list[float] = []  # holdings every placement of this tile brings (computed when needed)
        for j, a in enumerate(legal):
            a = int(a)
            if not tr.start <= a < tr.stop:
                continue
            act = pc.decode(game, view, a - tr.start)
            key = (act.x, act.y, canon[act.rotation])
            v = memo.get(key)
            if v is None:
                scan = game.scan_placement(t, act.x, act.y, act.rotation)
                # the last tile's play-out includes the final scoring: play every placement out
                if scan.completes or not game.bag_size:
                    v = one_ply_gain(game, act, me, assets)
                    if assets:
                        if not anyway:
                            anyway.append(self._holdings_anyway(game, pc, tr, view, legal, me))
                        v -= anyway[0]
                else:
                    v = 0.0
                # a small positional term: extend features where I lead, avoid the opponents'
                v += sum(0.2 if leads(j.counts, me) else -0.2 for j in scan.joined if j.counts)
                memo[key] = v
            v += noise[j]
            if v > best_v:
                best_v, best = v, a
        return best

    @staticmethod
    def _holdings_anyway(game: Any, pc: Any, tr: Any, view: Any, legal: np.ndarray, me: int) -> float:
        """The change of holdings (own less the best opponent's) a placement completing nothing brings:
        what every placement of the drawn tile brings (0 if every placement completes something)."""
        for a in legal:
            if not tr.start <= int(a) < tr.stop:
                continue
            act = pc.decode(game, view, int(a) - tr.start)
            if not game.scan_placement(game.current_tile, act.x, act.y, act.rotation).completes:
                return one_ply_gain(game, act, me, True) - one_ply_gain(game, act, me, False)
        return 0.0

    # ------------------------------------------------------------------ follower phase
    def _follower(self, game: Any, codec: Any, legal: np.ndarray, noise: np.ndarray) -> int:
        fr = codec.follower_range
        pass_index = fr.start + fr.size - 1
        spots = [int(a) - fr.start for a in legal if fr.start <= a < pass_index]
        if not spots:
            return pass_index
        me = game.player
        base = game.placements[-1][4]
        supply = game.supply[me]
        progress = len(game.placements) / max(1, len(game.placements) + game.bag_size)
        best_v, best = -1e18, pass_index
        for spot, u in zip(spots, noise, strict=True):
            node = base + spot
            now = immediate_points(game, node)
            if now:
                v = 100.0 + now
            else:
                v = self._spot_value(game, node, progress)
            v += u
            if v > best_v:
                best_v, best = v, fr.start + spot
        need = 2.0 if supply > self.reserve else 6.0
        if best_v < need:
            return pass_index
        return best

    @staticmethod
    def _spot_value(game: Any, node: int, progress: float) -> float:
        root = game.find(node)
        kind = game.kind[root]
        if kind == CITY:
            n = len(game.tiles[root])
            return 2.0 * n + 2.0 * game.pennants[root] - 0.5 * game.open[root] + 1.0
        if kind == ROAD:
            return float(len(game.tiles[root])) + 0.5
        if kind == BUILDING:
            return 1.0 + game.building_neighbours.get(root, 0)
        if kind == FIELD:
            if progress < 0.6:
                return -1.0
            find = game.find
            cities = {find(c) for c in game.adjacent_cities.get(root, ())}
            done = sum(1 for c in cities if c in game.completed)
            return 3.0 * done * (0.5 + progress)
        return 0.0


__all__ = ["Policy", "RandomPolicy", "GreedyPolicy"]
