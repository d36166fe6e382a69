"""A policy for differential scenarios: it fills holes and puts followers on cities.

``compare_game``'s uniformly random play rarely closes a city around a tile or
completes the Sagrada Familia's city; this policy (``compare_game(...,
policy=fill_holes)``) makes those rules happen: most of the time it places the
drawn tile where it touches the most placed tiles, and puts a follower on a
city when it can.  It reads only public state (the legal actions, the board).
"""

from __future__ import annotations

import numpy as np

from carc_env.core.tiles import CITY, DX, DY


def fill_holes(match, legal: np.ndarray, rng: np.random.Generator) -> int:
    game = match.game
    if rng.random() < 0.2:
        return int(legal[rng.integers(len(legal))])
    pc = match.codec.codecs[game.phase]
    if game.phase == "tile":
        view = match.view()
        best, picks = -1, []
        for a in legal:
            act = pc.decode(game, view, int(a) - pc.start)
            n = sum((act.x + DX[s], act.y + DY[s]) in game.board for s in range(4))
            if n > best:
                best, picks = n, [int(a)]
            elif n == best:
                picks.append(int(a))
        return picks[rng.integers(len(picks))]
    segs = game.rules.tiles[game.placements[-1][2]].segments
    city = [int(a) for a in legal if 0 <= a - pc.start < len(segs) and segs[a - pc.start].kind == CITY]
    pool = city or [int(a) for a in legal]
    return pool[rng.integers(len(pool))]
