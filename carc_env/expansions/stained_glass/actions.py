"""Fixed action layouts of Stained Glass's decision phases (the plug-in's codec part).

:data:`PHASE_CODECS` maps each phase to its codec; the action codec
(:mod:`carc_env.encoding.actions`) finds it through the plug-in registry.  The
ranges follow the tile and follower ranges in the order of ``rules.phases``
(``glass_thief``, ``glass_steal``, ``glass_window``).  Rules and action texts:
``docs/rules/stained_glass.md`` and :mod:`carc_env.expansions.stained_glass.rules`.

Layouts
-------
``glass_thief`` (5 entries)
    ``s`` (0..3): ``thief NAME``, a thief on the road leaving side ``s`` (N, E,
    S, W) of the tile just placed, in its placed rotation (the ``mine_{S}`` /
    ``others_{S}`` planes use the same sides); 4: ``pass`` (no more thieves).
    A road leaving through two sides is named by its lowest side only.
``glass_steal`` (``num_players * (K + 1) + 1`` entries; 27 for 2 players, K = 12 kinds)
    ``v * (K + 1) + k``: ``steal P TOKEN``, the token of kind ``k`` (token order
    ``G1a`` .. ``G4c``, the ``windows`` columns' order) from the player at
    relative seat ``v`` (0 = the thief's owner: only with ``steal_from_self``;
    1 = the next player ...); ``v * (K + 1) + K``: ``steal P``, a random token of
    that player (option ``steal_kind="random"``); last: ``pass`` (give this
    steal up).
``glass_window`` (``S + 1`` entries; 11 with the 10 shapes)
    ``i``: ``window SHAPE``, score shape ``i`` (shape order ``W1 W2 W3 W4 W1+W2
    W2+W3 W3+W4 W1+W2+W3 W2+W3+W4 W1+W2+W3+W4``, the ``windows`` columns'
    order); last: ``pass`` (keep building).

Every legal action has exactly one index, and every enabled index decodes to a
legal action; ``pass`` is always legal in these phases, so the mask is never
empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.actions import Action, IllegalActionError, Pass
from ...encoding.actions import PhaseCodec, StateView
from .rules import STEAL_PHASE, THIEF_PHASE, WINDOW_PHASE, PlaceThief, ScoreWindow, Steal, check_token, token_set

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

THIEF_PASS = 4


def _road_side(game: Game, segment: str) -> int:
    """The lowest side (in the placed rotation) the named road of the tile just placed leaves through."""
    _, _, t, r, _ = game.placements[-1]
    tile = game.rules.tiles[t]
    try:
        seg = tile.segment_index(segment)
    except KeyError as exc:
        raise IllegalActionError(f"'thief {segment}': {exc.args[0]}") from None
    sides = [s for s in range(4) if tile.center[r][s] == seg]
    if not sides:
        raise IllegalActionError(f"'thief {segment}': {segment} of {tile.id} is not a road leaving through a side")
    return min(sides)


class ThiefCodec(PhaseCodec):
    """5 entries: the road leaving side N, E, S, W of the placed tile, then ``pass``."""

    phase = THIEF_PHASE

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.size = THIEF_PASS + 1

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        for a in game.legal_actions():
            out[THIEF_PASS if type(a) is Pass else _road_side(game, a.segment)] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        if local == THIEF_PASS:
            return Pass()
        _, _, t, r, _ = game.placements[-1]
        seg = game.rules.tiles[t].center[r][local]
        if seg < 0:
            raise IllegalActionError(f"no road leaves side {'NESW'[local]} of the placed tile")
        return PlaceThief(game.rules.tiles[t].segments[seg].name)

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return THIEF_PASS
        if type(action) is PlaceThief:
            return _road_side(game, action.segment)
        raise IllegalActionError(f"the {self.phase} phase needs 'thief NAME' or 'pass', got {action.to_text()!r}")


class StealCodec(PhaseCodec):
    """``num_players * (K + 1) + 1`` entries: relative victim x (kind or random), then ``pass``."""

    phase = STEAL_PHASE

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.kinds = token_set().kinds
        self.width = len(self.kinds) + 1
        self.n = rules.config.num_players
        self.size = self.n * self.width + 1

    def _index(self, game: Game, a: Steal) -> int:
        if not isinstance(a.victim, int) or not 0 <= a.victim < self.n:
            raise IllegalActionError(f"{a.to_text()!r}: no player {a.victim!r}")
        check_token(a.to_text(), a.token)
        v = (a.victim - game.player) % self.n
        k = len(self.kinds) if a.token is None else self.kinds.index(a.token)
        return v * self.width + k

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        for a in game.legal_actions():
            out[self.size - 1 if type(a) is Pass else self._index(game, a)] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        if local == self.size - 1:
            return Pass()
        v, k = divmod(local, self.width)
        victim = (game.player + v) % self.n
        return Steal(victim, None if k == len(self.kinds) else self.kinds[k])

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return self.size - 1
        if type(action) is Steal:
            return self._index(game, action)
        raise IllegalActionError(
            f"the {self.phase} phase needs 'steal PLAYER TOKEN' or 'pass', got {action.to_text()!r}"
        )


class WindowCodec(PhaseCodec):
    """``S + 1`` entries: score shape ``i``, then ``pass`` (keep building)."""

    phase = WINDOW_PHASE

    def __init__(self, rules: RuleSet, rows: int, cols: int) -> None:
        self.shapes = [s.name for s in token_set().shapes]
        self.size = len(self.shapes) + 1

    def fill_mask(self, game: Game, view: StateView, out: np.ndarray) -> None:
        for a in game.legal_actions():
            out[self.size - 1 if type(a) is Pass else self.shapes.index(a.shape)] = 1

    def decode(self, game: Game, view: StateView, local: int) -> Action:
        return Pass() if local == self.size - 1 else ScoreWindow(self.shapes[local])

    def encode(self, game: Game, view: StateView, action: Action) -> int:
        if type(action) is Pass:
            return self.size - 1
        if type(action) is ScoreWindow and action.shape in self.shapes:
            return self.shapes.index(action.shape)
        raise IllegalActionError(f"the {self.phase} phase needs 'window SHAPE' or 'pass', got {action.to_text()!r}")


PHASE_CODECS = {THIEF_PHASE: ThiefCodec, STEAL_PHASE: StealCodec, WINDOW_PHASE: WindowCodec}
"""The codec factory ``factory(rules, rows, cols) -> PhaseCodec`` of each of Stained Glass's phases."""

__all__ = ["PHASE_CODECS", "StealCodec", "ThiefCodec", "WindowCodec"]
