"""What the greedy baseline knows about Stained Glass (the plug-in's heuristics part).

Not rules: a one-ply player's estimates, used by :class:`carc_env.policies.GreedyPolicy`.

* :func:`asset_value`: what a player's glass tokens are worth in points: the
  best combination of finished windows at ``KEPT`` of their table value (a
  finished window can still be broken by a thief) plus ``TOKEN_VALUE`` for
  every other token (a third of a basic window, a step towards a bigger one).
* :func:`greedy_action` in Stained Glass's phases:

  - ``glass_thief``: a thief on the first road that takes one while another
    player holds a token that can be stolen and the player keeps a follower
    in supply; otherwise ``pass``;
  - ``glass_steal``: the steal worth the most: what it adds to the thief's
    owner's tokens plus what it takes from the victim's (:func:`asset_value`),
    the leading victim on ties;
  - ``glass_window``: keep building while one more token would finish a bigger
    window (a basic window next to the biggest finished run is two thirds
    built), tokens are left in the bag and more than ``LATE`` of the land
    tiles; otherwise score the first window of the best combination (the
    biggest first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.actions import Action, Pass
from .rules import KEY, STEAL_PHASE, THIEF_PHASE, WINDOW_PHASE, GlassState, PlaceThief, ScoreWindow, Steal
from .tokens import basic_copies, best_windows

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEPT = 0.85
TOKEN_VALUE = 1.5
LATE = 0.15  # share of the land tiles left below which a player scores rather than keeps building


def _exp(game: Game):
    return game.rules.by_key[KEY]


def asset_value(game: Game, player: int) -> float:
    """Points-equivalent of ``player``'s unscored glass tokens (see the module docstring)."""
    held = game.ext[KEY].held[player]
    n = sum(held)
    if not n:
        return 0.0
    exp = _exp(game)
    points, shapes = best_windows(exp.tokens, held, exp.points)
    used = sum(len(exp.tokens.shapes[i].kinds) for i in shapes)
    return KEPT * points + TOKEN_VALUE * (n - used)


def greedy_action(game: Game) -> Action | None:
    """A one-ply choice in Stained Glass's phases (None in other phases)."""
    phase = game.phase
    if phase == THIEF_PHASE:
        return _thief(game)
    if phase == STEAL_PHASE:
        return _steal(game)
    if phase == WINDOW_PHASE:
        return _window(game)
    return None


def _thief(game: Game) -> Action:
    exp = _exp(game)
    p = game.player
    targets = [v for v in range(game.num_players) if v != p and any(exp.stealable(game, v))]
    thieves = [a for a in game.legal_actions() if type(a) is PlaceThief]
    if thieves and targets and game.supply[p] > 1:
        return thieves[0]
    return Pass()


def _steal(game: Game) -> Action:
    p = game.player
    before = [asset_value(game, q) for q in range(game.num_players)]
    best: tuple[float, float] | None = None
    choice: Action = Pass()
    for a in game.legal_actions():
        if type(a) is not Steal or a.victim == p:
            continue
        g = game.clone()
        g.apply(a)
        gain = asset_value(g, p) - before[p] + before[a.victim] - asset_value(g, a.victim)
        key = (gain, float(game.scores[a.victim]))
        if best is None or key > best:
            best, choice = key, a
    return choice


def _window(game: Game) -> Action:
    exp = _exp(game)
    ts = exp.tokens
    st: GlassState = game.ext[KEY]
    p = game.player
    held = st.held[p]
    _, shapes = best_windows(ts, held, exp.points)
    if not shapes:
        return Pass()
    tiles_left = game.bag_size / max(1, game.bag_size + len(game.placements))
    if (st.forced or st.pool) and tiles_left > LATE:
        run = ts.shapes[shapes[0]].windows
        done = basic_copies(ts, held)
        for w in (run[0] - 1, run[-1] + 1):
            if 0 <= w < len(ts.windows) and not done[w]:
                kinds = [k for k in range(len(ts.kinds)) if ts.window_of[k] == w]
                if sum(1 for k in kinds if held[k]) == len(kinds) - 1:
                    return Pass()  # one more token finishes a bigger window: keep building
    return ScoreWindow(ts.shapes[shapes[0]].name)
