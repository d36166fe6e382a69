"""The games behind the play page: one :class:`GameSession` per game, one :class:`ReplaySession` per loaded record.

Contract
--------
A game runs on the project's own environment (``carc_env.raw_env`` on the Python engine, so every
rule and expansion is playable) and every decision goes through it: a human's action arrives in
the text notation (``tile 1,-2 r3``, ``follower c1``, ``pass``, an expansion's action), is turned
into the flat action with ``env.action_from_text`` and checked against the action mask before
``env.step``; an agent seat (any player spec of :mod:`agents.players`) acts through ``act(obs, env)``.
Every request that would change a game names the number of decisions it has seen (``expect``): a
request made on an older state (a second tab, a double click) is refused, so nothing is applied
twice.  Every refusal is a :class:`PlayError` whose message is shown in the page; it changes nothing.

:meth:`GameSession.state` is everything the page draws: the board as SVG elements
(:mod:`carc_env.render.svg`) with its layout, the drawn tile in its four rotations, the legal
placements (cell -> rotations, from the game's frontier, the same set as the action mask), the
follower spots with their positions, the other legal actions as text, scores, followers, tiles
left, the expansions' status lines, the itemised score events and, at the end, each player's points
by feature kind.

The policy inspector (:meth:`GameSession.inspect`) runs a network (the deciding agent's, or the
hint network for a human) on the deciding seat's observation: the probability of every legal action
(softmax over the masked logits), the top placements summed over nothing (each placement is one
action) and the value head's estimate for the deciding seat.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import carc_env
from carc_env.core.actions import IllegalActionError, Pass, PlaceFollower
from carc_env.core.events import FeatureScored, PointsAwarded
from carc_env.core.expansion import ConfigError
from carc_env.core.record import RecordError, check_record, to_record
from carc_env.core.tiles import KIND_NAMES
from carc_env.render.expansions import decision, status_lines
from carc_env.render.image import player_colour
from carc_env.render.svg import (
    board_canvas,
    board_svg,
    follower_spot_centre,
    panel_documents,
    svg_layout,
    svg_view,
    tile_svg,
)

from ..players import PlayerSpecError, make_player

TILE_PX = 64
HUMAN = "human"


class PlayError(ValueError):
    """A request the page cannot carry out (illegal action, stale state, bad record, ...); changes nothing."""


def _colour(p: int) -> str:
    r, g, b = player_colour(p)
    return f"rgb({r},{g},{b})"


@dataclass
class LogEntry:
    turn: int
    text: str
    points: list[int]
    items: list[str] = field(default_factory=list)
    final: bool = False


def score_log(events: list[Any], turn: int, n: int) -> list[LogEntry]:
    """The score events among ``events`` as log entries (who got what and why, itemised)."""
    out = []
    for ev in events:
        if isinstance(ev, FeatureScored) and any(ev.points):
            who = ", ".join(f"P{p}" for p in ev.winners)
            out.append(LogEntry(turn, f"{ev.kind} {ev.value} pts to {who}" + (" (final)" if ev.final else ""),
                                list(ev.points), [f"{i.label}: {i.points}" for i in ev.items], ev.final))  # fmt: skip
        elif isinstance(ev, PointsAwarded) and ev.points:
            pts = [0] * n
            pts[ev.player] = ev.points
            label = ", ".join(i.label for i in ev.items) or "points"
            out.append(LogEntry(turn, f"P{ev.player} +{ev.points}: {label}" + (" (final)" if ev.final else ""), pts,
                                [f"{i.label}: {i.points}" for i in ev.items], ev.final))  # fmt: skip
    return out


def _kind_points(events: list[Any], table: list[dict[str, int]]) -> None:
    for ev in events:
        if isinstance(ev, FeatureScored):
            key = ev.kind + (" (final)" if ev.final else "")
            for p, pts in enumerate(ev.points):
                if pts:
                    table[p][key] = table[p].get(key, 0) + pts
        elif isinstance(ev, PointsAwarded) and ev.points:
            key = (ev.items[0].kind if ev.items else "bonus") + (" (final)" if ev.final else "")
            table[ev.player][key] = table[ev.player].get(key, 0) + ev.points


def env_kwargs_for(num_players: int, expansions: list[str], rules: dict | None = None, followers: int = 7) -> dict:
    return {"num_players": num_players, "expansions": tuple(expansions), "rules": rules or {},
            "followers": followers, "engine": "python"}  # fmt: skip


class Inspector:
    """A network's view of a position: probabilities of the legal actions and the value estimate."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.net = policy.net

    def view(self, env: Any) -> dict[str, Any]:
        import torch

        from ..policy import obs_to_tensors, shapes_from_env, with_action_features

        if self.net.shapes != shapes_from_env(env):
            raise PlayError(f"the network {getattr(self.policy, 'name', '?')} was trained for another game layout")
        agent = env.agent_selection
        obs = with_action_features(env.observe(agent), env)
        batch = obs_to_tensors([obs])
        with torch.no_grad():
            logits, value = self.net(*batch.inputs())
            ml = logits[0].masked_fill(~batch.mask[0], float("-inf"))
            probs = torch.softmax(ml, dim=0).numpy()
        legal = np.flatnonzero(np.asarray(obs["action_mask"]))
        ranked = sorted(legal.tolist(), key=lambda i: -probs[i])
        top = [{"action": env.action_to_text(int(i)), "p": float(probs[i])} for i in ranked[:8]]
        # placements grouped by cell (a cell's rotations together), most likely cells first
        cells: dict[tuple[int, int], dict[str, Any]] = {}
        if env.game.phase == "tile":
            for i in ranked:
                x, y, r = _placement(env.action_to_text(int(i)))
                c = cells.setdefault((x, y), {"x": x, "y": y, "p": 0.0, "best": r})
                c["p"] += float(probs[i])
        return {"model": getattr(self.policy, "name", "network"), "value": float(value.reshape(-1)[0]),
                "seat": env.possible_agents.index(agent), "top": top, "legal": int(len(legal)),
                "cells": [c for c in sorted(cells.values(), key=lambda c: -c["p"])[:5] if c["p"] >= 0.005]}  # fmt: skip


def inspector_marks(view: dict[str, Any]) -> list[tuple[int, int, str, float]]:
    """Board labels of an inspector view: per cell the probability of placing there and the likeliest rotation."""
    return [(c["x"], c["y"], f"{100 * c['p']:.0f}% r{c['best']}", c["p"]) for c in view.get("cells", [])]


def fitting_hint(hints: Any, env: Any) -> Any:
    """The first of ``hints`` (policies with a ``net``) whose network fits ``env``'s game, else None."""
    from ..policy import shapes_from_env

    if not hints:
        return None
    want = shapes_from_env(env)
    for h in hints if isinstance(hints, (list, tuple)) else [hints]:
        if getattr(h, "net", None) is not None and h.net.shapes == want:
            return h
    return None


def _placement(text: str) -> tuple[int, int, int] | None:
    """(x, y, rotation) of ``tile X,Y rR``, else None."""
    if not text.startswith("tile "):
        return None
    xy, r = text[5:].split(" r")
    x, y = xy.split(",")
    return int(x), int(y), int(r)


def board_state(
    env: Any, marks: list[tuple[int, int, str, float]] | None = None, interactive: bool = True
) -> dict[str, Any]:
    """What the page draws of ``env``'s current position (see the module docstring)."""
    game = env.game
    lay = svg_layout(game, TILE_PX, svg_view(game))
    n = game.num_players
    out: dict[str, Any] = {
        "svg": board_svg(game, lay, highlight_legal=interactive, marks=marks or []),
        "layout": {
            "x0": lay.x0,
            "x1": lay.x1,
            "y0": lay.y0,
            "y1": lay.y1,
            "tile_px": lay.tile_px,
            "left": lay.left,
            "top": lay.top,
            "width": lay.width,
            "height": lay.height,
        },  # fmt: skip
        "n": len(game.history),
        "over": game.over,
        "phase": None if game.over else game.phase,
        "player": None if game.over else game.player,
        "turn": game.turn + 1,
        "turn_player": getattr(game, "turn_player", None),
        "scores": list(game.scores),
        "supply": list(game.supply),
        "followers": game.rules.followers,
        "tiles_left": game.bag_size,
        "drawn": game.tile_id,
        "colours": [_colour(p) for p in range(n)],
        "status": [{"text": s.text, "player": s.player} for s in status_lines(game)],
        "panels": panel_documents(game),
        "legal": {},
        "drawn_svg": [],
        "spots": [],
        "actions": [],
        "can_pass": False,
        "decision": None,
    }
    if game.over or not interactive:
        return out
    if game.phase == "tile":
        fx, fy, masks = game.frontier()
        out["legal"] = {f"{x},{y}": [q for q in range(4) if m >> q & 1]
                        for x, y, m in zip(fx.tolist(), fy.tolist(), masks.tolist(), strict=True) if m}  # fmt: skip
        tile = game.rules.tiles[game.rules.tile_index[game.tile_id]]
        out["drawn_svg"] = [tile_svg(tile, r, TILE_PX) for r in range(4)]
        return out
    dec = decision(game, board_canvas(lay))
    if dec is not None:
        out["decision"] = controls = decision_controls(env, dec)
        out["can_pass"] = "pass" in controls["other"] or any(c["action"] == "pass" for c in controls["choices"])
        return out
    x, y = game.placements[-1][:2] if game.placements else (0, 0)
    for a in game.legal_actions():
        text = game.action_text(a)
        if type(a) is Pass:
            out["can_pass"] = True
        elif type(a) is PlaceFollower and game.phase == "follower":
            px, py = follower_spot_centre(game, lay, x, y, a.segment)
            seg = game.rules.tiles[game.placements[-1][2]].segments[a.segment]
            kind = seg.building or KIND_NAMES[seg.kind]
            tip = f"Put a follower on the {kind} ({seg.name})" + (" as a farmer" if kind == "field" else "")
            out["spots"].append({"action": text, "x": px, "y": py, "tip": tip})
        else:
            out["actions"].append(text)
    return out


def decision_controls(env: Any, dec: Any) -> dict[str, Any]:
    """A plug-in's :class:`~carc_env.render.expansions.Decision` as the page's controls, driven by the
    action mask: a choice whose action the mask does not enable is dropped, and an enabled action no
    choice covers is listed in ``other`` (shown as a plain button), so the controls are exactly the
    legal actions."""
    mask = np.asarray(env.infos[env.agent_selection]["action_mask"])
    covered: set[int] = set()
    choices = []
    for c in dec.choices:
        try:
            index = env.action_from_text(c.action)
        except (IllegalActionError, ValueError):
            continue
        if not mask[index] or index in covered:
            continue
        covered.add(index)
        # the action as the mask names it (a feature has several names; the codec's canonical one)
        choices.append({"action": env.action_to_text(int(index)), "label": c.label, "tip": c.tip, "icon": c.icon, "group": c.group,
                        "passes": c.passes, "area": c.area, "point": c.point})  # fmt: skip
    other = [env.action_to_text(int(i)) for i in np.flatnonzero(mask) if int(i) not in covered]
    return {"phase": dec.phase, "prompt": dec.prompt, "choices": choices, "other": other}


class GameSession:
    """One game in the page: its env, seats (``human`` or a player spec), score log and breakdown."""

    def __init__(self, players: list[str], expansions: list[str], seed: int | None = None,
                 rules: dict | None = None, hint: Any = None) -> None:  # fmt: skip
        if not isinstance(players, list) or not 2 <= len(players) <= 5:
            raise PlayError(f"a game needs 2 to 5 seats, got {players!r}")
        if not isinstance(expansions, list) or not all(isinstance(e, str) for e in expansions):
            raise PlayError(f"expansions must be a list of expansion keys, got {expansions!r}")
        self.id = secrets.token_hex(8)
        self.lock = threading.Lock()
        self.players = [str(p).strip() or HUMAN for p in players]
        self.expansions = list(expansions)
        self.rules = rules or {}
        self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**31)
        self.env_kwargs = env_kwargs_for(len(players), self.expansions, self.rules)
        try:
            self.env = carc_env.raw_env(**self.env_kwargs)
            self.env.reset(seed=self.seed)
        except (ConfigError, ValueError) as exc:
            raise PlayError(f"cannot set up this game: {exc}") from None
        self.agents: list[Any] = []
        for i, spec in enumerate(self.players):
            if spec == HUMAN:
                self.agents.append(None)
                continue
            try:
                self.agents.append(make_player(spec, self.env_kwargs, seed=self.seed + 1 + i))
            except (PlayerSpecError, ValueError) as exc:
                raise PlayError(f"seat {i}: {exc}") from None
        self.hint = fitting_hint(hint, self.env)
        n = len(players)
        self.log: list[LogEntry] = []
        self.kinds: list[dict[str, int]] = [{} for _ in range(n)]

    # -------------------------------------------------------------- moves
    def _check(self, expect: Any) -> None:
        if self.env.game.over:
            raise PlayError("the game is over; start a new one or play the same deck with the seats swapped")
        n = len(self.env.game.history)
        if isinstance(expect, bool) or not isinstance(expect, int) or expect != n:
            raise PlayError(f"this page shows an older state of the game (decision {expect!r}, the game is at {n}); "
                            "it has been refreshed, try again")  # fmt: skip

    def _step(self, index: int) -> str:
        env = self.env
        game = env.game
        text = env.action_to_text(index)
        events = game.clone().apply(text)  # the same action on a copy, for the itemised events
        turn = game.turn + 1
        env.step(index)
        self.log.extend(score_log(events, turn, game.num_players))
        _kind_points(events, self.kinds)
        return text

    def act(self, text: Any, expect: Any) -> str:
        """A human's action (text notation) for the deciding seat; returns its text."""
        self._check(expect)
        seat = self.env.game.player
        if self.agents[seat] is not None:
            raise PlayError(f"seat {seat} is played by {self.players[seat]}, not by you")
        if not isinstance(text, str) or not text.strip():
            raise PlayError(f"an action must be text such as 'tile 0,1 r2', 'follower c1' or 'pass', got {text!r}")
        try:
            index = self.env.action_from_text(text.strip())
        except (IllegalActionError, ValueError) as exc:
            raise PlayError(f"illegal action {text!r}: {exc}") from None
        mask = self.env.infos[self.env.agent_selection]["action_mask"]
        if not mask[index]:
            raise PlayError(f"illegal action {text!r} in phase {self.env.game.phase!r}")
        return self._step(index)

    def agent_move(self, expect: Any) -> str:
        """One decision of the deciding seat's agent; returns its text."""
        self._check(expect)
        env = self.env
        seat = env.game.player
        agent = self.agents[seat]
        if agent is None:
            raise PlayError(f"seat {seat} is yours to play")
        index = int(agent.act(env.observe(env.agent_selection), env))
        return self._step(index)

    # -------------------------------------------------------------- views
    def inspect(self) -> dict[str, Any]:
        """The deciding agent's network view (its own, else the hint network's)."""
        if self.env.game.over:
            raise PlayError("the game is over: nothing to inspect")
        seat = self.env.game.player
        policy = self.agents[seat] if getattr(self.agents[seat], "net", None) is not None else self.hint
        if policy is None:
            raise PlayError("no network to inspect: this seat's player has none and no hint network fits this game "
                            "(hints need a shipped agent for these players and expansions, or --hint CHECKPOINT)")  # fmt: skip
        return Inspector(policy).view(self.env)

    def state(self, inspect: bool = False) -> dict[str, Any]:
        view = None
        marks: list[tuple[int, int, str, float]] = []
        if inspect and not self.env.game.over:
            view = self.inspect()
            marks = inspector_marks(view)
        out = board_state(self.env, marks)
        game = self.env.game
        out.update(
            id=self.id,
            seed=self.seed,
            seats=[{"spec": s, "human": a is None} for s, a in zip(self.players, self.agents, strict=True)],
            expansions=self.expansions,
            rules=self.rules,
            log=[e.__dict__ for e in self.log[-200:]],
            inspector=view,
            hint=self.hint is not None or any(getattr(a, "net", None) is not None for a in self.agents),
        )
        if game.over:
            best = max(game.scores)
            out["final"] = {"scores": list(game.scores), "winners": [p for p, s in enumerate(game.scores) if s == best],
                            "kinds": self.kinds}  # fmt: skip
        return out

    def record(self) -> dict[str, Any]:
        return to_record(self.env.game)

    def swapped(self) -> GameSession:
        """A new game on the same deck (seed) with the seats rotated by one."""
        players = self.players[1:] + self.players[:1]
        return GameSession(players, self.expansions, self.seed, self.rules, [self.hint] if self.hint else None)


class ReplaySession:
    """A saved game (JSON record) stepped forward and back, with a network's view at each decision."""

    def __init__(self, record: Any, hint: Any = None) -> None:
        try:
            actions, _ = check_record(record)
            cfg = record["config"]
            kw = env_kwargs_for(cfg.get("num_players", 2), list(cfg.get("expansions", ["base"])),
                                cfg.get("options", {}), cfg.get("followers", 7))  # fmt: skip
            self.env = carc_env.raw_env(**kw)
        except (RecordError, ConfigError, ValueError, TypeError, AttributeError) as exc:
            raise PlayError(f"not a game record this page can load: {exc}") from None
        self.id = secrets.token_hex(8)
        self.lock = threading.Lock()
        self.record = record
        self.actions = actions
        self.env_kwargs = kw
        self.hint = fitting_hint(hint, self.env)
        self.pos = 0
        self._goto(len(actions))  # replays the whole game once: a record that does not replay is refused here
        self._goto(0)

    def _goto(self, k: int) -> None:
        env = self.env
        try:
            env.reset(seed=self.record["seed"], options={"draw_order": list(self.record["draw_order"])})
            log: list[LogEntry] = []
            for i, text in enumerate(self.actions[:k]):
                try:
                    index = env.action_from_text(text)
                    game = env.game
                    turn = game.turn + 1
                    events = game.clone().apply(text) if env.infos[env.agent_selection]["action_mask"][index] else []
                    env.step(index)
                    log.extend(score_log(events, turn, game.num_players))
                except (IllegalActionError, ValueError) as exc:
                    raise PlayError(f"the record's action {i} ({text!r}) does not replay: {exc}") from None
        except (ConfigError, ValueError, TypeError) as exc:
            if isinstance(exc, PlayError):
                raise
            raise PlayError(f"the record's seed or draw order is invalid: {exc}") from None
        self.pos = k
        self.log = log

    def goto(self, k: Any) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= len(self.actions):
            raise PlayError(f"step must be 0..{len(self.actions)}, got {k!r}")
        self._goto(k)

    def state(self) -> dict[str, Any]:
        game = self.env.game
        view = None
        marks: list[tuple[int, int, str, float]] = []
        if self.hint is not None and not game.over:
            view = Inspector(self.hint).view(self.env)
            marks = inspector_marks(view)
        out = board_state(self.env, marks, interactive=False)
        nxt = self.actions[self.pos] if self.pos < len(self.actions) else None
        out.update(id=self.id, replay=True, pos=self.pos, total=len(self.actions), next=nxt,
                   played=self.actions[self.pos - 1] if self.pos else None, inspector=view,
                   log=[e.__dict__ for e in self.log[-200:]])  # fmt: skip
        return out


__all__ = ["GameSession", "Inspector", "PlayError", "ReplaySession", "board_state", "score_log"]
