"""Differential check: the compiled engine (:mod:`carc_env.fast`) against the Python reference, step by step.

:func:`compare_game` plays one seeded game through both engines with the same
random masked actions and raises :class:`Mismatch` (naming the game's seed,
the step and what differs) at the first difference in: the draw order, the
legal placements (in order) and follower spots, the action mask (and the legal
moves of a plug-in's phase its range cannot express), the window
and the placements outside it, the observation arrays (board, globals,
windows, action mask; with the option ``action_features`` also the action
features ``place_index``, ``place_features`` and ``spots``; byte-equal) of the
acting seat at every step and of every seat at some steps, the rewards of every seat, the scores and supplies,
and the itemised scoring (every ``FeatureScored`` / ``PointsAwarded`` event
against the compiled engine's score log).  Used by
``tests/fast/test_fast_differential.py`` (hundreds of games) and
``scripts/fast_differential.py`` (thousands).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ..core import FeatureScored, PointsAwarded
from ..core.tiles import KIND_NAMES
from ..fast.engine import FastBatch
from .match import Match

_KIND_CODE = {name: code for code, name in KIND_NAMES.items()}


class Mismatch(AssertionError):
    """The two engines disagree; the message says where."""


def _expected_log(events: list[Any], num_players: int, award_codes: dict[str, int]) -> list[tuple[int, ...]]:
    rows: list[tuple[int, ...]] = []
    for ev in events:
        if isinstance(ev, FeatureScored):
            kind = _KIND_CODE.get(ev.kind, 3)  # every building kind is scored as a building
            players = sum(1 << p for p in ev.winners)
            items = {it.kind: it.points for it in ev.items}
            per = 1 if ev.final else 2
            if not items.keys() & {"tiles", "pennants", "cities", ev.kind}:
                a, b = 0, 0  # a plug-in's override gave the whole value (score_override): no counts logged
            elif kind == 0:
                a, b = items["tiles"] // per, items.get("pennants", 0) // per
            elif kind == 1:
                a, b = items["tiles"], 0
            elif kind == 2:
                a, b = items["cities"] // 3, 0
            else:
                a, b = ev.value - 1, 0
            rows.append((kind, int(ev.final), a, b, ev.value, players))
        elif isinstance(ev, PointsAwarded):
            what = award_codes[ev.items[0].kind]  # the code the awarding plug-in's kernels log
            rows.append((what, int(ev.final), ev.points, 0, ev.points, 1 << ev.player))
    return rows


def _same(name: str, ref: Any, fast: Any, where: str) -> None:
    if isinstance(ref, np.ndarray):
        if ref.shape != fast.shape or ref.dtype != fast.dtype or ref.tobytes() != fast.tobytes():
            detail = ""
            if ref.shape == fast.shape:
                diff = np.argwhere(ref != fast)
                detail = (
                    f"; first differing index {tuple(diff[0])}: {ref[tuple(diff[0])]} vs {fast[tuple(diff[0])]}"
                    if len(diff)
                    else "; equal values, different bytes"
                )
            raise Mismatch(
                f"{where}: {name} differs (reference {ref.dtype}{ref.shape}, compiled {fast.dtype}{fast.shape}){detail}"
            )
    elif ref != fast:
        raise Mismatch(f"{where}: {name} differs: reference {ref!r}, compiled {fast!r}")


def compare_game(
    options: Any,
    seed: int,
    fast: FastBatch,
    g: int = 0,
    all_seats_every: int = 8,
    action_seed: int | None = None,
    draw_order: list[str] | None = None,
    avoid_pass: float = 0.0,
    policy: Callable[[Match, np.ndarray, np.random.Generator], int] | None = None,
) -> int:
    """Play game ``seed`` (optionally with a forced draw order) through both engines; return the number
    of decisions compared.  The actions are uniformly random among the legal ones, or ``policy(match,
    legal flat actions, generator)``'s choice (a scenario steering the game towards a rule).
    ``avoid_pass``: in the plug-ins' decision phases, the probability of choosing among the legal
    actions but the last (``pass`` in every such phase), which plays more of their moves."""
    ref = Match(options)
    ref.reset(seed, draw_order)
    fast.reset(g, seed, draw_order)
    game = ref.game
    n = ref.num_players
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    where = f"seed {seed}, start"
    _same("draw order", list(game.draw_order), fast.draw_order(g), where)
    step = 0
    log_ref: list[tuple[int, ...]] = []
    while True:
        where = f"seed {seed}, step {step} (phase {game.phase}, player {game.player})"
        _same("phase", game.phase, fast.phase(g), where)
        _same("deciding player", game.player, fast.player(g), where)
        _same("turn player", game.turn_player, fast.turn_player(g), where)
        _same("scores", list(game.scores), fast.scores(g), where)
        _same("supply", list(game.supply), fast.supply(g), where)
        _same("score log", log_ref, fast.score_log(g), where)
        lp = game.legal_tile_placements().astype(np.int64)
        _same("legal placements", lp, fast.legal_tile_placements(g).astype(np.int64), where)
        _same("follower spots", game.legal_follower_spots(), fast.legal_follower_spots(g), where)
        view = ref.view()
        _same("window", (view.x0, view.y0), fast.window(g), where)
        _same("placements outside the window", view.outside, fast.outside(g), where)
        mask = view.mask
        _same("action mask", mask, fast.mask(g), where)
        _same("actions out of the range", view.dropped, fast.dropped(g), where)  # read with the mask
        seats = range(n) if (game.over or step % all_seats_every == 0) else [game.player]
        for seat in seats:
            o_ref = ref.encoder.encode(game, seat, view)
            o_fast = fast.observe(g, seat)
            if options.action_features:
                o_ref.update(ref.action_features(seat))
            for key in o_ref:
                _same(f"observation[{key!r}] of seat {seat}", o_ref[key], o_fast[key], where)
            _same("observation keys", sorted(o_ref), sorted(o_fast), where)
        if game.over:
            break
        legal = np.flatnonzero(mask)
        if avoid_pass and game.phase not in ("tile", "follower") and len(legal) > 1 and rng.random() < avoid_pass:
            legal = legal[:-1]
        a = int(legal[rng.integers(len(legal))]) if policy is None else int(policy(ref, legal, rng))
        pc = ref.codec.codecs[game.phase]
        before = game.scores[:]
        events = game.apply(pc.decode(game, view, a - pc.start))
        r_ref = ref.rewards(before)
        log_ref += _expected_log(events, n, fast.layout.award_codes)
        r_fast = fast.step_game(g, a)
        _same("rewards", r_ref, r_fast, where + f", action {a}")
        step += 1
    _same("final scores", list(game.scores), fast.scores(g), f"seed {seed}, end")
    _same("actions", list(game.history), fast.actions(g), f"seed {seed}, end")
    return step


def compare_batch(options: Any, seed: int, num_games: int, steps: int, threads: int = 1) -> int:
    """Step ``num_games`` games in lockstep through :meth:`FastBatch.step` (auto-reset, observations of the
    acting seat) and through one reference Match per game with the vector env's seeding (game ``i`` seeded
    ``seed + i``, then its own stream); compare every row of every output.  Returns the games finished."""
    fast = FastBatch(options, num_games, threads=threads)
    refs = [Match(options) for _ in range(num_games)]
    for i, m in enumerate(refs):
        m.reset(seed + i)
        fast.reset(i, seed + i, prepare_next=True)
    rng = np.random.default_rng(seed)
    finished = 0
    lengths = [0] * num_games
    masks = np.stack([m.view().mask for m in refs])
    for step in range(steps):
        actions = np.array([int(rng.choice(np.flatnonzero(row))) for row in masks])
        maybe_obs, rewards, dones, final, eplen, seats = fast.step(actions)
        obs = cast(dict[str, np.ndarray], maybe_obs)  # observe=True: always observations
        masks = obs["action_mask"]
        for i, m in enumerate(refs):
            where = f"batch seed {seed}, step {step}, game {i}"
            r = m.step(int(actions[i]))
            lengths[i] += 1
            _same("rewards", r, [float(v) for v in rewards[i]], where)
            _same("done", m.game.over, bool(dones[i]), where)
            if m.game.over:
                finished += 1
                _same("final scores", list(m.game.scores), [int(v) for v in final[i]], where)
                _same("episode length", lengths[i], int(eplen[i]), where)
                lengths[i] = 0
                m.reset(None)
            _same("acting seat", m.game.player, int(seats[i]), where)
            o = m.encoder.encode(m.game, m.game.player, m.view())
            if options.action_features:
                o.update(m.action_features(m.game.player))
            for key in o:
                _same(f"observation[{key!r}]", o[key], obs[key][i], where)
    fast.close()
    return finished


__all__ = ["Mismatch", "compare_batch", "compare_game"]
