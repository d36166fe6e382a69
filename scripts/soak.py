#!/usr/bin/env python
"""Soak test: many random games over random expansion combinations, every invariant checked.

    python scripts/soak.py --games 300 [--seed 0] [--players N]

Plays ``--games`` games with uniformly random legal decisions, alternately
through the core (``Game.apply`` on ``legal_actions()``) and through the
PettingZoo env (``raw_env.step`` on the action mask).  Each game draws a
player count (2 to 5), a combination of the built-in expansions the rules
accept (all of them: the core registry's list), and random values for the boolean rule options.  Checked:

* at every decision: followers are conserved (supply + board + held by
  expansions = followers per player); every score changes by exactly the
  points of the step's scoring events (a variant's penalty may lower it);
* core games: every applied action's text parses back to the same action;
* env games: the mask enables exactly the legal actions the window can
  express (every enabled index decodes to a legal action, and the legal
  actions left out are exactly those reported as outside the window or
  dropped), it is never empty while the game runs, and every 8th
  observation lies in the observation space;
* at the end of every game: the JSON game record replays to an identical
  state (the full state: board, features, followers, expansion state, draw
  bag, random generator), and to the recorded scores.

Prints one JSON line (games, decisions, checks, failures with the first few
described, seconds, games per expansion) and exits 1 if any check failed.
Progress goes to stderr.  Not part of the test suite (``tests/scripts/test_soak.py``
runs two games as a smoke test); run it before a release, under ``nice``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402

_SHARED = {"rules", "config", "tile_infos"}


def snapshot(obj: Any) -> Any:
    """A comparable image of a state: numpy arrays by bytes, generators by state, objects by fields."""
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.generic):
        return (obj.dtype.str, obj.item())
    if isinstance(obj, np.ndarray):
        return (obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, np.random.Generator):
        return snapshot(obj.bit_generator.state)
    if isinstance(obj, dict):
        return tuple((snapshot(k), snapshot(v)) for k, v in obj.items())
    if isinstance(obj, (set, frozenset)):
        return tuple(sorted((snapshot(v) for v in obj), key=repr))
    if isinstance(obj, (list, tuple)):
        return tuple(snapshot(v) for v in obj)
    if dataclasses.is_dataclass(obj):
        return (type(obj).__name__, tuple(snapshot(getattr(obj, f.name)) for f in dataclasses.fields(obj)))
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, tuple((k, snapshot(v)) for k, v in vars(obj).items() if k not in _SHARED))
    return repr(obj)


def _roots(game: Any) -> list[int]:
    """Each node's root: the union-find's partition, whatever paths ``find`` has compressed so far."""
    return [game.find(i) for i in range(len(game.parent))]


def game_snapshot(game: Any) -> Any:
    """The whole game except the shared rule set and the events of the last call; the union-find's
    parent links as roots (reads compress paths, which changes the links but not the features)."""
    state = {k: v for k, v in vars(game).items() if k not in _SHARED and k != "events"}
    state["parent"] = _roots(game)
    return snapshot(state)


def valid_configs(num_players: int | None) -> list[Any]:
    """Every combination of the built-in expansions (the core registry's, base always on) the rules accept."""
    from carc_env.core import ConfigError, GameConfig
    from carc_env.core.config import ruleset
    from carc_env.core.registry import builtin_keys

    expansions = [k for k in builtin_keys() if k != "base"]
    combos = []
    for r in range(len(expansions) + 1):
        for c in itertools.combinations(expansions, r):
            try:
                ruleset(GameConfig(num_players=num_players or 2, expansions=("base", *c)))
            except ConfigError:
                continue
            combos.append(("base", *c))
    return combos


def random_options(rng: np.random.Generator, keys: tuple[str, ...]) -> dict[str, dict[str, bool]]:
    """Random values for every boolean rule option of the enabled expansions."""
    from carc_env.core.expansion import registry

    out: dict[str, dict[str, bool]] = {}
    reg = registry()
    for k in keys:
        opts = reg[k].Options
        bools = {
            f.name: bool(rng.integers(2)) for f in dataclasses.fields(opts) if isinstance(getattr(opts(), f.name), bool)
        }
        if bools:
            out[k] = bools
    return out


def scored(events: list[Any], num_players: int) -> list[int]:
    """Points per player that a step's scoring events carry (a score changes only through them; a
    variant's penalty, e.g. a town on the map, is a negative ``PointsAwarded``)."""
    from carc_env.core import FeatureScored, PointsAwarded

    out = [0] * num_players
    for ev in events:
        if isinstance(ev, FeatureScored):
            out = [o + p for o, p in zip(out, ev.points, strict=True)]
        elif isinstance(ev, PointsAwarded):
            out[ev.player] += ev.points
    return out


class Soak:
    def __init__(self, max_failures: int = 5) -> None:
        self.checks = 0
        self.decisions = 0
        self.failures: list[str] = []
        self.n_failures = 0
        self.max_failures = max_failures

    def check(self, ok: bool, what: str) -> None:
        self.checks += 1
        if not ok:
            self.n_failures += 1
            if len(self.failures) < self.max_failures:
                self.failures.append(what)

    def step_invariants(self, game: Any, before: list[int], events: list[Any], where: str) -> None:
        self.check(game.followers_conserved(), f"{where}: followers not conserved")
        gained = [a - b for a, b in zip(game.scores, before, strict=True)]
        self.check(
            gained == scored(events, len(before)),
            f"{where}: scores {before} -> {game.scores} are not the points of the step's events",
        )

    def end_invariants(self, game: Any, where: str) -> None:
        from carc_env.core.record import replay, to_record

        record = json.loads(json.dumps(to_record(game)))
        try:
            again = replay(record)
        except Exception as exc:  # noqa: BLE001 - reported, not raised: the soak goes on
            self.check(False, f"{where}: record does not replay: {type(exc).__name__}: {exc}")
            return
        self.check(again.scores == game.scores, f"{where}: replayed scores {again.scores} != {game.scores}")
        if game_snapshot(again) != game_snapshot(game):
            diff = [
                k
                for k in vars(game)
                if k not in _SHARED
                and k not in ("events", "parent")
                and snapshot(getattr(game, k)) != snapshot(getattr(again, k, None))
            ]
            diff += ["parent (features)"] if _roots(game) != _roots(again) else []
            self.check(False, f"{where}: replayed state differs in {diff}")
        else:
            self.check(True, "")

    def core_game(self, config: Any, seed: int, rng: np.random.Generator, where: str) -> None:
        from carc_env.core import Game

        game = Game(config, seed=seed)
        while not game.over:
            acts = game.legal_actions()
            self.check(bool(acts), f"{where}: no legal action in phase {game.phase}")
            action = acts[int(rng.integers(len(acts)))]
            text = game.action_text(action)
            self.check(game.parse_action(text) == action, f"{where}: text {text!r} does not parse back to {action!r}")
            before = game.scores[:]
            events = game.apply(action)
            self.decisions += 1
            self.step_invariants(game, before, events, f"{where} turn {game.turn}")
        self.end_invariants(game, where)

    @staticmethod
    def _applies(game: Any, action: Any) -> bool:
        try:
            game.clone().apply(action)
        except Exception:  # noqa: BLE001 - any refusal means the mask enabled an illegal action
            return False
        return True

    def env_game(self, config: Any, seed: int, rng: np.random.Generator, where: str) -> None:
        from carc_env.env.aec import raw_env

        env = raw_env(
            num_players=config.num_players, expansions=config.expansions, rules=config.options, reward="score_delta"
        )
        env.reset(seed=seed)
        game = env.game
        space = env.observation_space(env.possible_agents[0])
        k = 0
        while not game.over:
            view = env.match.view()
            mask = view.mask
            enabled = np.flatnonzero(mask)
            self.check(len(enabled) > 0, f"{where}: empty mask in phase {game.phase}")
            legal = game.legal_actions()
            decoded = [env.codec.decode(game, int(i)) for i in enabled]
            for a in decoded:  # legal, or another name of a legal move (a feature named by another segment)
                self.check(
                    a in legal or self._applies(game, a), f"{where}: the mask enables an illegal {a!r} in {game.phase}"
                )
            self.check(len(set(decoded)) == len(decoded), f"{where}: two indices decode to one action in {game.phase}")
            missing = len(set(legal)) - len(set(decoded))
            self.check(
                missing == view.outside + view.dropped,
                f"{where}: {missing} legal actions missing from the mask, reported {view.outside + view.dropped}",
            )
            if k % 8 == 0:
                obs = env.observe(env.agent_selection)
                self.check(obs in space, f"{where}: observation outside the observation space")
            before = game.scores[:]
            index = int(enabled[int(rng.integers(len(enabled)))])
            events = game.clone().apply(env.codec.decode(game, index))  # the env's step hands out no events
            env.step(index)
            self.decisions += 1
            k += 1
            self.step_invariants(game, before, events, f"{where} step {k}")
        self.end_invariants(game, where)


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(prog="soak.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=cli.int_range(1), default=100, help="games to play (>= 1)")
    ap.add_argument("--seed", type=cli.seed, default=0, help="seed of everything (>= 0)")
    ap.add_argument("--players", type=cli.players, default=None, help="fix the player count (default: random 2-5)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)

    from carc_env.core import GameConfig

    rng = np.random.default_rng(args.seed)
    combos = valid_configs(args.players)
    soak = Soak()
    per_expansion = dict.fromkeys(sorted({k for c in combos for k in c[1:]}), 0)
    t0 = time.perf_counter()
    for g in range(args.games):
        keys = combos[int(rng.integers(len(combos)))]
        players = args.players or int(rng.integers(2, 6))
        config = GameConfig(num_players=players, expansions=keys, options=random_options(rng, keys))
        for k in keys[1:]:
            per_expansion[k] += 1
        via = "core" if g % 2 == 0 else "env"
        where = f"game {g} ({via}, {players}p, {'+'.join(keys)}, seed {args.seed}/{g})"
        try:
            if via == "core":
                soak.core_game(config, int(rng.integers(2**31)), rng, where)
            else:
                soak.env_game(config, int(rng.integers(2**31)), rng, where)
        except Exception as exc:  # noqa: BLE001 - a crash is a failed check; the soak goes on
            soak.check(False, f"{where}: crashed: {type(exc).__name__}: {exc}")
        if not args.quiet and ((g + 1) % 10 == 0 or g + 1 == args.games):
            print(
                f"soak: {g + 1}/{args.games} games, {soak.checks} checks, {soak.n_failures} failures, "
                f"{time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    summary = {
        "games": args.games,
        "seed": args.seed,
        "decisions": soak.decisions,
        "checks": soak.checks,
        "failures": soak.n_failures,
        "first_failures": soak.failures,
        "seconds": round(time.perf_counter() - t0, 1),
        "games_per_expansion": per_expansion,
        "combinations": len(combos),
    }
    print(json.dumps(summary))
    return 1 if soak.n_failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
