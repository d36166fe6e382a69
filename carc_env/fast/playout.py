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

from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Pass, PlaceFollower, PlaceTile
from ..core.config import RuleSet
from . import kernels as K
from .config import EngineConfig
from .seam import engine as E
from .tables import P_O_BAG, P_O_SCORES, rules_coverage

if TYPE_CHECKING:  # pragma: no cover
    from ..core.game import Game


def covers(rules: RuleSet) -> bool:
    """Whether the compiled engine covers this rule set and Numba imports (then :class:`FastPlayout` works)."""
    from . import available

    return rules_coverage(rules) is None and available()


class FastPlayout:
    """``f(game, rng) -> final scores`` on the compiled engine.  See the module docstring."""

    def __init__(self) -> None:
        self._batch: Any = None
        self._config_key: Any = None
        self._root: tuple[int | None, int, Any] | None = None  # (seed, len(history), last action) of slot 0

    def __getstate__(self) -> dict:  # sent to tournament workers: the batch is rebuilt there
        return {"_batch": None, "_config_key": None, "_root": None}

    def __repr__(self) -> str:
        return "FastPlayout()"

    def _ensure_batch(self, game: Game) -> Any:
        key = game.config.key()
        if self._batch is None or self._config_key != key:
            from .engine import FastBatch

            self._batch = FastBatch(EngineConfig.for_rules(game.rules), 2)
            self._config_key = key
            self._root = None
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
        rewards = batch._scratch_rewards
        for a in game.history[self._root[1] :]:  # type: ignore[index]
            t = type(a)
            if t is PlaceTile:
                ok = E().step_one(batch.tables, S, 1, 0, a.x, a.y, a.rotation, rewards)
            elif t is PlaceFollower:
                ok = E().step_one(batch.tables, S, 1, 1, a.segment, 0, 0, rewards)
            elif t is Pass and S.gi[1, K.G_PHASE] != K.PH_PLUG:
                ok = E().step_one(batch.tables, S, 1, 2, 0, 0, 0, rewards)
            elif S.gi[1, K.G_PHASE] == K.PH_PLUG:  # a plug-in's decision: the move its history row names
                ok = E().step_one(batch.tables, S, 1, 3, *batch.plugin_row(1, a), rewards)
            else:
                ok = False
            if not ok:
                raise RuntimeError(f"the compiled engine refuses {a!r} of the search's path (please report)")
        return 1

    def __call__(self, game: Game, rng: np.random.Generator) -> list[int]:
        g = self.load(game)
        batch = self._batch
        E().play_out(batch.tables, batch.state, g, int(rng.integers(2**31 - 1)))
        o = batch._off[P_O_SCORES]
        return batch.state.ls[g, o : o + game.num_players].tolist()


__all__ = ["FastPlayout", "covers"]
