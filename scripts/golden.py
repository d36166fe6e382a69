#!/usr/bin/env python
"""Golden games: seeded games whose records, digests and final scores are checked in.

``tests/golden/<combination>.json`` holds, per combination of expansions
(the base game, every built-in expansion alone, and a few combinations
including the map), one seeded game for each player count from 2 to 5: its
game record (configuration, seed, draw order, every action in text notation,
final scores) and digests of every observation (each seat's, at every
decision), every action mask and every action's events.  Games pick uniformly
among the legal actions with a generator seeded from the game seed, so a
golden file is a function of the code alone.

Where the compiled engine (:mod:`carc_env.fast`) covers a configuration, the
same actions are replayed through it and its observation and mask digests and
final scores must be those of the Python engine.

    python scripts/golden.py            # check: print the games that changed, exit 1 if any
    python scripts/golden.py --update   # rewrite tests/golden/ and print the games that changed

``tests/core/test_golden.py`` runs the check, one test per game.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from carc_env.core.expansion import builtin_keys  # noqa: E402
from carc_env.core.record import to_record  # noqa: E402
from carc_env.env.match import Match  # noqa: E402
from carc_env.env.options import EnvOptions  # noqa: E402

GOLDEN_DIR = ROOT / "tests" / "golden"
PLAYERS = (2, 3, 4, 5)
SEED = 2028
FIELDS = ("record", "obs", "mask", "events", "scores", "fast")
EXTRA_COMBOS: tuple[tuple[str, ...], ...] = (
    ("king_robber", "river2"),
    ("count", "darmstadt"),
    ("royal_gateways", "sagrada_familia"),
    ("shrines", "stained_glass", "king_robber"),
    ("maps_germany", "king_robber"),
    ("maps_germany", "darmstadt", "royal_gateways", "sagrada_familia", "shrines", "stained_glass"),
)
"""Combinations played besides the base game and each expansion alone (the map with and without others)."""


def combinations() -> list[tuple[str, ...]]:
    """The combinations with a golden file: base alone, each built-in expansion alone, EXTRA_COMBOS."""
    return [(), *((k,) for k in builtin_keys() if k != "base"), *EXTRA_COMBOS]


def combo_name(combo: tuple[str, ...]) -> str:
    return "+".join(combo) or "base"


def _digest() -> Any:
    return hashlib.sha256()


def _obs_bytes(obs: dict[str, np.ndarray]) -> bytes:
    return b"".join(np.ascontiguousarray(obs[k]).tobytes() for k in ("board", "globals", "windows", "action_mask"))


def play(combo: tuple[str, ...], players: int, seed: int = SEED) -> dict[str, Any]:
    """One golden game on the Python engine (and, where it covers it, the compiled one)."""
    options = EnvOptions.from_kwargs(num_players=players, expansions=combo, engine="python")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # generic codecs of phases without one
        match = Match(options)
    match.reset(seed)
    game = match.game
    if game is None:  # pragma: no cover - reset makes one
        raise RuntimeError("Match.reset made no game")
    rng = np.random.default_rng(seed + players)
    h_obs, h_mask, h_events = _digest(), _digest(), _digest()
    h_obs.update(repr((match.encoder.channel_names, match.encoder.global_names, match.codec.n)).encode())
    actions: list[int] = []
    while True:
        view = match.view()
        for seat in range(players):
            h_obs.update(_obs_bytes(match.encoder.encode(game, seat, view)))
        h_mask.update(view.mask.tobytes())
        if game.over:
            break
        legal = np.flatnonzero(view.mask)
        a = int(legal[rng.integers(len(legal))])
        actions.append(a)
        pc = match.codec.codecs[game.phase]
        h_events.update(repr(game.apply(pc.decode(game, view, a - pc.start))).encode())
    record = to_record(game)
    out = {
        "record": record,
        "obs": h_obs.hexdigest()[:24],
        "mask": h_mask.hexdigest()[:24],
        "events": h_events.hexdigest()[:24],
        "scores": list(game.scores),
        "fast": _fast(combo, players, seed, actions),
    }
    if out["fast"] is not None:
        for k in ("obs", "mask", "scores"):
            if out["fast"][k] != out[k]:
                out["fast"]["differs"] = True  # recorded, so the golden test fails naming the game
    return out


def _fast(combo: tuple[str, ...], players: int, seed: int, actions: list[int]) -> dict[str, Any] | None:
    """The compiled engine's digests of the same game, or None where it does not cover the configuration."""
    from carc_env.fast import select_engine

    options = EnvOptions.from_kwargs(num_players=players, expansions=combo)
    if select_engine(options)[0] != "numba":
        return None
    from carc_env.fast.engine import FastBatch

    fast = FastBatch(options, 1)
    fast.reset(0, seed)
    h_obs, h_mask = _digest(), _digest()
    match = Match(EnvOptions.from_kwargs(num_players=players, expansions=combo, engine="python"))
    h_obs.update(repr((match.encoder.channel_names, match.encoder.global_names, match.codec.n)).encode())
    i = 0
    while True:
        for seat in range(players):
            h_obs.update(_obs_bytes(fast.observe(0, seat)))
        h_mask.update(fast.mask(0).tobytes())
        if fast.over(0) or i == len(actions):
            break
        fast.step_game(0, actions[i])
        i += 1
    return {"obs": h_obs.hexdigest()[:24], "mask": h_mask.hexdigest()[:24], "scores": fast.scores(0),
            "actions": i}  # fmt: skip


def compute(combo: tuple[str, ...]) -> dict[str, Any]:
    """The golden file's content for one combination: game key -> golden game."""
    return {f"{combo_name(combo)}|{p}p|seed{SEED}": play(combo, p) for p in PLAYERS}


def path_of(combo: tuple[str, ...]) -> Path:
    return GOLDEN_DIR / f"{combo_name(combo)}.json"


def load(combo: tuple[str, ...]) -> dict[str, Any] | None:
    p = path_of(combo)
    return json.loads(p.read_text()) if p.exists() else None


def differences(want: dict[str, Any] | None, got: dict[str, Any]) -> dict[str, list[str]]:
    """Game key -> the fields that differ (``["missing"]`` for a game without a golden)."""
    out: dict[str, list[str]] = {}
    for key, game in got.items():
        old = (want or {}).get(key)
        if old is None:
            out[key] = ["missing"]
            continue
        diff = [f for f in FIELDS if old.get(f) != game.get(f)]
        if diff:
            out[key] = diff
    for key in want or {}:
        if key not in got:
            out[key] = ["no longer played"]
    return out


def first_action_difference(want: dict[str, Any], got: dict[str, Any]) -> str:
    """Where two records' actions first part, in words."""
    a, b = want["record"]["actions"], got["record"]["actions"]
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"action {i}: golden {x!r}, now {y!r}"
    return f"golden has {len(a)} actions, now {len(b)}" if len(a) != len(b) else "actions identical"


def write(combo: tuple[str, ...], data: dict[str, Any]) -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, sort_keys=True)
    path_of(combo).write_text(text + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="rewrite the golden files")
    ap.add_argument("--only", help="one combination, e.g. 'count' or 'king_robber+river2'")
    args = ap.parse_args(argv)
    combos = combinations()
    if args.only:
        combos = [c for c in combos if combo_name(c) == args.only]
        if not combos:
            ap.error(f"no golden combination {args.only!r}; known: {[combo_name(c) for c in combinations()]}")
    changed = 0
    for combo in combos:
        got = compute(combo)
        want = load(combo)
        for key, fields in differences(want, got).items():
            changed += 1
            extra = ""
            if want and key in want and key in got and "record" in fields:
                extra = f" ({first_action_difference(want[key], got[key])})"
            print(f"{key}: {', '.join(fields)} changed{extra}")
        if args.update:
            write(combo, got)
    print(f"{len(combos)} combinations, {changed} game(s) changed" + (", files rewritten" if args.update else ""))
    return 1 if changed and not args.update else 0


if __name__ == "__main__":
    raise SystemExit(main())
