"""Leaf evaluation for tree search: utilities, play-out (rollout) policies and the guide protocol.

Guide protocol
--------------
:class:`~carc_env.search.mcts.MCTS` asks a *guide* two things:

* ``guide.expand(game, actions, rng) -> (priors, values)`` for every new leaf:
  ``game`` is the simulation's private copy (the guide may play it on, it is
  thrown away afterwards), ``actions`` the leaf's legal actions (the tree's
  own list, in its order).  ``priors`` is None (plain UCT) or one
  non-negative weight per action (PUCT); ``values`` is one number per player,
  higher is better for that player, on any scale the guide likes as long as
  ``terminal`` uses the same one.
* ``guide.terminal(game) -> values`` for a finished game.

A guide with priors may defer them (``defers_priors = True``): the search then
asks ``guide.leaf_values(game, rng) -> values`` at a new leaf and
``guide.priors(game, actions) -> priors`` when a simulation first selects
from that node (on the compiled state ``leaf_values_state(sim, rng)`` and
``priors_state(sim, moves)``), see :mod:`carc_env.search.mcts`.

:class:`RolloutGuide` is the guide of plain MCTS: no priors; the value of a
leaf is the utility of the final scores after playing the game out with a
rollout policy.  A faster engine drops in as ``RolloutGuide(playout=f)``:
``f(game, rng) -> final scores`` plays the (private, redealt) copy out its own
way, e.g. after converting it to the engine's state; or as a guide of its own.
If ``f`` has ``begin(game)``, the guide's ``begin`` (which the search calls
once per decision with its root) passes the root on.

``engine`` picks where the play-outs run when no ``playout`` is given:
``"auto"`` (default) plays them on the compiled engine where it covers the
rule set and Numba imports, else on the Python engine; ``"python"`` always on
the Python engine; ``"numba"`` on the compiled one or a ``ValueError`` naming
why not.  Random rollouts on the compiled engine
(:class:`carc_env.fast.playout.FastPlayout`) make the same random decisions,
about ten times faster.  Greedy rollouts on the compiled engine
(:class:`carc_env.fast.playout.GreedyPlayout`, where its compiled greedy
covers the rule set too) decide as the greedy baseline
(:class:`carc_env.policies.GreedyPolicy`: the placements inside the
observation window, a plug-in's heuristic in its phases) with the kernel's
own random numbers, 30-50 times the Python engine's simulations per second;
on the Python engine :class:`GreedyMover` decides (every legal placement, a
plug-in's decisions at random).

Utilities (``utility``), per player ``p``, from the final scores:

* ``"win"``: 1 for the only winner, ``1/k`` to each of ``k`` players sharing
  the best score, 0 otherwise;
* ``"margin"``: ``0.5 + 0.5 * tanh((own - best opponent's) / margin_scale)``;
* ``"mixed"`` (default): the mean of the two: winning matters most, and the
  margin breaks the ties between won (or lost) play-outs, which random
  play-outs produce in long runs.

Rollout policies (``rollout``):

* ``"random"``: uniformly random legal actions (tile placements, follower
  spots and pass; expansion phases through ``game.legal_actions()``);
* ``"greedy"``: the one-ply greedy baseline's choices
  (:class:`carc_env.policies.GreedyPolicy`: the same placement score, the
  same follower heuristic), made on the core game directly without the action
  codec; ``epsilon`` mixes in uniformly random actions (ε-greedy).  About ten
  times as costly as random play-outs.

Cut-short play-outs (``horizon``, random rollouts): a play-out from a search
whose root has B tiles left to draw ends at the first tile decision with at
most B - H tiles left, and the utility is that of the scores the game's end
would give there (``Game.end_here``: incomplete features and fields scored
as at the real end; the drawn tile and the rest of the bag never played).  A
search heuristic, not a rule: every leaf of one search is valued at the same
point of the game, after fewer random moves (cheaper, less noisy, blind to
what the last H tiles would complete).  Where the root has H tiles or fewer
left, play-outs run to the real end.

Play-outs without farmers (``farmers=False``, random rollouts): a follower
decision of the play-out is uniform over the legal spots not on a field, and
pass.  Also a search heuristic: the tree's own decisions still include
every field.

Sparing play-outs (``place=P`` below 1, random rollouts): a follower decision
of the play-out passes 1 - P of the time, else is made as above.  A random
play-out otherwise places a follower at most of its follower decisions (pass
is one choice among the spots), so its followers run out early and the rest
of the play-out scores little; a search heuristic too, the tree's own
decisions unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Pass, PlaceFollower, PlaceTile
from ..core.tiles import (
    FIELD,
    _geometry_key,  # the same geometry test as TileType.distinct_rotations
)
from ..encoding.lookahead import immediate_points, leads, one_ply_gain, scan_placement
from ..fast import ENGINES  # declared once, by the engine selection
from ..policies import GreedyPolicy

if TYPE_CHECKING:  # pragma: no cover
    from ..core.actions import Action
    from ..core.game import Game

UTILITIES = ("win", "margin", "mixed")
ROLLOUTS = ("random", "greedy")


def utilities(scores: Sequence[int], kind: str = "mixed", margin_scale: float = 20.0) -> list[float]:
    """Per-player utility in [0, 1] of final ``scores`` (see the module docstring)."""
    n = len(scores)
    best = max(scores)
    k = sum(1 for s in scores if s == best)
    out = []
    for p in range(n):
        s = scores[p]
        if kind == "win":
            out.append(1.0 / k if s == best else 0.0)
            continue
        other = max(scores[q] for q in range(n) if q != p)
        m = 0.5 + 0.5 * math.tanh((s - other) / margin_scale)
        if kind == "margin":
            out.append(m)
        else:
            out.append(0.5 * ((1.0 / k if s == best else 0.0) + m))
    return out


def canonical_rotations(game: Game, t: int, cache: dict[tuple[Any, int], tuple[int, ...]]) -> tuple[int, ...]:
    """Per rotation of tile type ``t``, the lowest rotation with identical geometry (cached per rule set).

    Identical geometry up to the segments' local numbering (a crossroads looks the same in every
    rotation), as in ``TileType.distinct_rotations``: the same placement, searched once."""
    key = (game.rules, t)  # the object itself (not its id, which a new rule set could reuse)
    canon = cache.get(key)
    if canon is None:
        tile = game.rules.tiles[t]
        segs = list(tile.segments)
        seen: dict[tuple, int] = {}
        canon = tuple(
            seen.setdefault(_geometry_key(segs, tile.edge_codes[r], tile.center[r], tile.half[r]), r) for r in range(4)
        )
        cache[key] = canon
    return canon


def random_action(game: Game, rng: np.random.Generator) -> Action:
    """A uniformly random legal action of the deciding player."""
    phase = game.phase
    if phase == "tile":
        rows = game.legal_tile_placements()
        x, y, r = rows[int(rng.integers(len(rows)))]
        return PlaceTile(int(x), int(y), int(r))
    if phase == "follower":
        spots = game._follower_spots
        k = int(rng.integers(len(spots) + 1))
        return Pass() if k == len(spots) else PlaceFollower(spots[k])
    acts = game.legal_actions()
    return acts[int(rng.integers(len(acts)))]


def follower_off_fields(game: Game, rng: np.random.Generator) -> Action:
    """A follower decision uniform over the legal spots whose feature is not a field, and pass."""
    base = game.placements[-1][4]
    kind = game.kind
    spots = [s for s in game._follower_spots if kind[base + s] != FIELD]
    k = int(rng.integers(len(spots) + 1))
    return Pass() if k == len(spots) else PlaceFollower(spots[k])


class GreedyMover:
    """The one-ply greedy baseline's decision, on the core game (no action codec).

    Same scores as :class:`carc_env.policies.GreedyPolicy` (own minus best
    opponent's immediate points, positional tie-break, follower heuristic with
    ``reserve`` followers kept for strong spots); ties are broken at random.
    """

    def __init__(self, reserve: int = 2) -> None:
        self.reserve = int(reserve)
        self._canon: dict[tuple[Any, int], tuple[int, ...]] = {}

    def __getstate__(self) -> dict:  # the per-rule-set cache is not pickled
        return {**self.__dict__, "_canon": {}}

    def __call__(self, game: Game, rng: np.random.Generator) -> Action:
        phase = game.phase
        if phase == "tile":
            return self._tile(game, rng)
        if phase == "follower":
            return self._follower(game, rng)
        acts = game.legal_actions()
        return acts[int(rng.integers(len(acts)))]

    def _tile(self, game: Game, rng: np.random.Generator) -> Action:
        me, t = game.player, game.current_tile
        canon = canonical_rotations(game, t, self._canon)
        rows = game.legal_tile_placements().tolist()
        last = not game.bag_size
        noise = rng.random(len(rows)) * 1e-3
        best_v, best = -1e18, rows[0]
        for j, (x, y, r) in enumerate(rows):
            if canon[r] != r:
                continue  # the same placement as its canonical rotation (also legal: same geometry)
            scan = scan_placement(game, t, x, y, r)
            v = one_ply_gain(game, PlaceTile(x, y, r), me) if scan.completes or last else 0.0
            v += sum(0.2 if leads(jn.counts, me) else -0.2 for jn in scan.joined if jn.counts)
            v += noise[j]
            if v > best_v:
                best_v, best = v, (x, y, r)
        return PlaceTile(*best)

    def _follower(self, game: Game, rng: np.random.Generator) -> Action:
        spots = game._follower_spots
        me = game.player
        base = game.placements[-1][4]
        progress = len(game.placements) / max(1, len(game.placements) + game.bag_size)
        best_v, best = -1e18, -1
        for spot in spots:
            node = base + spot
            now = immediate_points(game, node)
            v = 100.0 + now if now else GreedyPolicy._spot_value(game, node, progress)  # the baseline's values
            v += rng.random() * 1e-3
            if v > best_v:
                best_v, best = v, spot
        need = 2.0 if game.supply[me] > self.reserve else 6.0
        if best < 0 or best_v < need:
            return Pass()
        return PlaceFollower(best)


class RolloutGuide:
    """Plain MCTS's guide: no priors; a leaf's value is the utility after a play-out to the end."""

    def __init__(
        self,
        rollout: str = "random",
        epsilon: float = 0.0,
        utility: str = "mixed",
        margin_scale: float = 20.0,
        playout: Callable[[Game, np.random.Generator], Sequence[int]] | None = None,
        engine: str = "auto",
        horizon: int | None = None,
        farmers: bool = True,
        place: float = 1.0,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {rollout!r}")
        if utility not in UTILITIES:
            raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"rollout epsilon must be in [0, 1], got {epsilon!r}")
        if not margin_scale > 0:
            raise ValueError(f"margin_scale must be > 0, got {margin_scale!r}")
        if horizon is not None:
            if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
                raise ValueError(
                    f"horizon must be an integer >= 1 (tiles drawn after the root) or None, got {horizon!r}"
                )
            if rollout != "random" or playout is not None:
                raise ValueError(
                    "horizon cuts the guide's own random play-outs short (rollout='random', no playout given)"
                )
        if not farmers and (rollout != "random" or playout is not None):
            raise ValueError(
                "farmers=False keeps the guide's own random play-outs off the fields (rollout='random', no playout "
                "given; greedy play-outs place followers by the baseline's heuristic)"
            )
        if not 0.0 < float(place) <= 1.0:
            raise ValueError(f"place must be in (0, 1] (the play-outs' chance to decide a follower), got {place!r}")
        if float(place) < 1.0 and (rollout != "random" or playout is not None):
            raise ValueError(
                "place < 1 spares the guide's own random play-outs' followers (rollout='random', no playout given)"
            )
        self.rollout = rollout
        self.epsilon = float(epsilon)
        self.utility = utility
        self.margin_scale = float(margin_scale)
        self._greedy = GreedyMover() if rollout == "greedy" else None
        self._playout = playout
        self.engine = engine
        self.horizon = None if horizon is None else int(horizon)
        self.farmers = bool(farmers)
        self.place = float(place)
        self._stop = -1  # this search's cut (begin): end play-outs at a tile decision with this many tiles left
        self._fast: dict[Any, Any] = {}  # rule set -> FastPlayout, or None where it does not cover them

    def __getstate__(self) -> dict:  # sent to tournament workers: the compiled play-outs are rebuilt there
        return {**self.__dict__, "_fast": {}}

    def _playout_for(self, game: Game) -> Callable[[Game, np.random.Generator], Sequence[int]] | None:
        """The play-out function for ``game``: the one given, else the compiled engine's where it may run."""
        if self._playout is not None or self.engine == "python":
            return self._playout
        rules = game.rules
        try:
            return self._fast[rules]
        except KeyError:
            pass
        from ..fast import rules_coverage
        from ..fast.playout import FastPlayout, GreedyPlayout, covers, greedy_covers
        from ..fast.tables import features_coverage

        if self.rollout == "random" and covers(rules):
            f: Any = FastPlayout()
        elif self.rollout == "greedy" and greedy_covers(rules):
            f = GreedyPlayout(epsilon=self.epsilon, reserve=self._greedy.reserve if self._greedy else 2)
        elif self.engine == "numba":
            why = rules_coverage(rules) or ("numba is not available" if not covers(rules) else None)
            if why is None and self.rollout == "greedy":
                why = f"its compiled greedy does not: {features_coverage(rules)}"
            raise ValueError(
                f"engine='numba': the compiled engine cannot play this game out ({why}); use engine='auto'"
            )
        else:
            f = None
        self._fast[rules] = f
        return f

    def compiled_state(self, game: Game) -> Any:
        """The compiled engine that plays this guide's whole simulations from ``game`` (the tree search's
        state work too, not only the play-out), or None.  Only where the guide picked the compiled
        play-outs itself (random rollouts, ``engine`` not ``"python"``, no ``playout`` given): a given
        ``playout`` keeps the Python game per simulation (the reference the tests compare with)."""
        if self._playout is not None:
            return None
        f = self._playout_for(game)
        return f if hasattr(f, "redeal") else None

    def tree_state(self, game: Game) -> Any:
        """The compiled engine that runs this guide's whole search from ``game`` in one kernel (the tree too:
        :meth:`FastPlayout.tree_search <carc_env.fast.playout.FastPlayout.tree_search>`), or None: random
        rollouts on the compiled state (:meth:`compiled_state`, not greedy ones) where the kernel deals what
        ``Game.redeal`` deals (``FastPlayout.tree_covers``).  Call after :meth:`begin`."""
        f = self.compiled_state(game)
        if f is None or self.rollout != "random" or not f.tree_covers(game):
            return None
        return f

    def values(self, scores: list[int]) -> list[float]:
        """The utility of final ``scores`` (what :meth:`expand` and :meth:`terminal` return): the floats of
        :func:`utilities`, bit for bit, computed once per score (the compiled-state search's leaves)."""
        best = max(scores)
        k = scores.count(best)
        kind, scale = self.utility, self.margin_scale
        if k == 1:
            rest = list(scores)
            rest.remove(best)
            second = max(rest)
        else:
            second = best
        out = []
        for s in scores:
            win = 1.0 / k if s == best else 0.0
            if kind == "win":
                out.append(win)
                continue
            m = 0.5 + 0.5 * math.tanh((s - (second if s == best else best)) / scale)
            out.append(m if kind == "margin" else 0.5 * (win + m))
        return out

    def begin(self, game: Game) -> None:
        """Called by the search once per decision with its root (a compiled play-out loads it once).  With a
        ``horizon`` H, this search's play-outs end when the bag holds H tiles fewer than at the root (at
        that tile decision, the drawn tile not played), scored as the game's end (``Game.end_here``); where
        fewer than H + 1 tiles are left, they play to the real end."""
        stop = game.bag_size - self.horizon if self.horizon is not None else -1
        self._stop = stop if stop > 0 else -1
        f = self._playout_for(game)
        if f is not None and hasattr(f, "stop"):
            f.stop = self._stop
            f.farmers = int(self.farmers)
            f.place = self.place
        begin = getattr(f, "begin", None)
        if begin is not None:
            begin(game)

    def __repr__(self) -> str:
        eps = f", epsilon={self.epsilon}" if self.epsilon else ""
        eng = f", engine={self.engine!r}" if self.engine != "auto" else ""
        hor = f", horizon={self.horizon}" if self.horizon is not None else ""
        hor += ", farmers=False" if not self.farmers else ""
        hor += f", place={self.place}" if self.place < 1.0 else ""
        return f"RolloutGuide({self.rollout!r}{eps}, utility={self.utility!r}{hor}{eng})"

    def playout(self, game: Game, rng: np.random.Generator) -> None:
        """Play ``game`` to its end with the rollout policy (changes ``game``)."""
        greedy, eps, stop = self._greedy, self.epsilon, self._stop
        if greedy is None:
            farmers, place = self.farmers, self.place
            while not game.over:
                if stop >= 0 and game.phase == "tile" and game.bag_size <= stop:
                    game.end_here()  # (a plug-in may still decide before final scoring)
                    continue
                if place < 1.0 and game.phase == "follower" and rng.random() >= place:
                    game.apply(Pass())
                    continue
                if not farmers and game.phase == "follower":
                    game.apply(follower_off_fields(game, rng))
                    continue
                game.apply(random_action(game, rng))
            return
        while not game.over:
            if eps and rng.random() < eps:
                game.apply(random_action(game, rng))
            else:
                game.apply(greedy(game, rng))

    def expand(self, game: Game, actions: Sequence[Any], rng: np.random.Generator) -> tuple[None, list[float]]:
        f = self._playout_for(game)
        if f is not None:
            return None, utilities(f(game, rng), self.utility, self.margin_scale)
        self.playout(game, rng)
        return None, self.terminal(game)

    def terminal(self, game: Game) -> list[float]:
        return utilities(game.scores, self.utility, self.margin_scale)


__all__ = [
    "ENGINES",
    "ROLLOUTS",
    "UTILITIES",
    "GreedyMover",
    "RolloutGuide",
    "canonical_rotations",
    "random_action",
    "utilities",
]
