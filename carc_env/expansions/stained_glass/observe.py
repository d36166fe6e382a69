"""Stained Glass's observation (the plug-in's encoder part): the ``windows`` tensor, thieves, the bag.

Seats are relative to the observer (row / ``p0`` = me, then the next players in
turn order).  Token kinds in token order ``G1a G1b G1c`` (basic window W1) ..
``G4a G4b G4c`` (W4); shapes in shape order ``W1 W2 W3 W4 W1+W2 W2+W3 W3+W4
W1+W2+W3 W2+W3+W4 W1+W2+W3+W4`` (the order of the ``glass_steal`` and
``glass_window`` action ranges).

The ``windows`` tensor, ``uint8 (num_players, 22)``, one row per relative seat:

* ``token_{kind}`` (12 columns): copies of that token kind the seat holds,
  unscored (0..2; everyone's tokens are public);
* ``window_{shape}`` (10 columns): how many disjoint copies of that window the
  seat's tokens complete now (0..2): the windows they could score (the active
  player at the end of their turn) or that a thief could break.

Global features:

* ``glass_bag``: tokens in the bag / tokens in the game (24); 0 means no token
  can be drawn until a window is scored;
* ``glass_steals_left``: steals the turn's player has left this turn / 4 (only
  during ``glass_thief`` and ``glass_steal``).

Dynamic board channels:

* ``thieves_p{i}``: thieves of relative seat i on the tile (they also count in
  the core's ``followers_p{i}`` and ``follower_on_road``; these channels say
  which road followers are thieves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.tiles import ROAD
from ...encoding.observation import ObsContext, ObservationExtension
from .rules import KEY, GlassState, token_set

if TYPE_CHECKING:  # pragma: no cover
    from ...core.config import RuleSet
    from ...core.game import Game

MAX_STEALS = 4


class Observation(ObservationExtension):
    """Tokens and complete windows per seat (``windows``), thieves on the board, the bag."""

    global_names = ("glass_bag", "glass_steals_left")

    def __init__(self, rules: RuleSet, num_players: int) -> None:
        ts = token_set()
        self.n = num_players
        self.n_kinds = len(ts.kinds)
        self.total = ts.total
        self.copies = ts.copies
        # kinds are grouped by basic window in token order: a window's kinds start at these columns
        self.window_starts = np.array([ts.window_of.index(w) for w in range(len(ts.windows))], dtype=np.intp)
        self.window_columns = (*(f"token_{k}" for k in ts.kinds), *(f"window_{s.name}" for s in ts.shapes))
        self.dynamic_channels = tuple(f"thieves_p{i}" for i in range(num_players))
        self.max_roads = max([1, *(sum(1 for s in t.segments if s.kind == ROAD) for t in rules.tiles)])

    def channel_high(self) -> list[int]:
        return [self.max_roads] * self.n

    def window_high(self) -> list[int]:
        return [self.copies] * len(self.window_columns)

    def fill_windows(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        held = game.ext[KEY].held  # [player][kind], absolute seats
        me, k = ctx.me, self.n_kinds
        out[:, :k] = held[me:] + held[:me]  # row i = relative seat i
        rows = out[:, :k]
        # finished copies of each basic window, then of each run of them (a window's copies are the
        # fewest of its basic windows'): one sliding minimum per window size
        basic = np.minimum.reduceat(rows, self.window_starts, axis=1)
        col, run = k, basic
        for size in range(1, basic.shape[1] + 1):
            if size > 1:
                run = np.minimum(run[:, :-1], basic[:, size - 1 :])
            out[:, col : col + run.shape[1]] = run
            col += run.shape[1]

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        st: GlassState = game.ext[KEY]
        out[0] = (len(st.forced) + len(st.pool)) / self.total
        out[1] = st.steals / MAX_STEALS

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        st: GlassState = game.ext[KEY]
        if not st.thieves:
            return
        followers = game.followers
        for node, p in st.thieves.items():
            if followers.get(node) != p:
                continue
            x, y = game.placements[game.node_tile[node]][:2]
            col, row = x - ctx.x0, y - ctx.y0
            if 0 <= col < ctx.cols and 0 <= row < ctx.rows:
                board[ctx.rel(p), row, col] += 1
