#!/usr/bin/env python
"""Fingerprint seeded random games: hashes of every observation, mask, event list and render.

For refactors that must not change behaviour: run it before and after, then
compare the two files::

    python scripts/fingerprint.py before.json            # on the old tree
    python scripts/fingerprint.py after.json             # on the new tree
    python scripts/fingerprint.py --compare before.json after.json

Per expansion combination (the base game with every subset of the built-in
expansions that configures, or those given with ``--combos``) and per seed, one random game
(uniform over the action mask, 2 to 5 players): a hash of every seat's
observation at every decision (board, globals, windows, mask), of the masks,
of the events of every action, and of the text board (every 7th decision and
at the end) with the final picture.  ``--compare`` prints which fields differ
and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from carc_env.core import ConfigError, Game, GameConfig  # noqa: E402
from carc_env.core.config import ruleset  # noqa: E402
from carc_env.core.registry import builtin_keys  # noqa: E402
from carc_env.encoding import ActionCodec, ObservationEncoder  # noqa: E402
from carc_env.render import render_image, render_text  # noqa: E402

FIELDS = ("obs", "mask", "events", "render")


def fingerprint(combo: tuple[str, ...], seed: int, players: int) -> dict:
    cfg = GameConfig(players, ("base", *combo))
    g = Game(cfg, seed=seed)
    rules = ruleset(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # generic codecs of phases without one
        codec = ActionCodec(rules)
    enc = ObservationEncoder(rules, players, codec, rules.followers)
    rng = np.random.default_rng(seed + 7)
    h = {f: hashlib.sha256() for f in FIELDS}
    h["obs"].update(repr((enc.channel_names, enc.global_names, codec.n)).encode())
    steps = 0
    while not g.over:
        for seat in range(players):
            o = enc.encode(g, seat)
            for k in ("board", "globals", "windows", "action_mask"):
                h["obs"].update(np.ascontiguousarray(o[k]).tobytes())
        mask = codec.mask(g)
        h["mask"].update(mask.tobytes())
        legal = np.flatnonzero(mask)
        a = int(legal[rng.integers(len(legal))])
        if steps % 7 == 0:
            h["render"].update(render_text(g).encode())
        h["render"].update(codec.action_to_text(g, a).encode())
        h["events"].update(repr(g.apply(codec.decode(g, a))).encode())
        steps += 1
    h["render"].update(render_text(g).encode())
    h["render"].update(render_image(g, tile_px=24).tobytes())
    return {**{f: h[f].hexdigest()[:16] for f in FIELDS}, "steps": steps, "scores": list(g.scores)}


def _plays(combo: tuple[str, ...]) -> bool:
    """The combination configures (some expansions refuse each other, e.g. two start layouts)."""
    try:
        ruleset(GameConfig(2, ("base", *combo)))
    except ConfigError:
        return False
    return True


def compare(a_path: str, b_path: str) -> int:
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    bad = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key}: only in {'the first' if key in a else 'the second'} file")
            bad += 1
            continue
        diff = [f for f in (*FIELDS, "steps", "scores") if a[key][f] != b[key][f]]
        if diff:
            print(f"{key}: {', '.join(diff)} differ")
            bad += 1
    print(f"{len(a)} games, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", help="JSON file to write")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two fingerprint files")
    ap.add_argument("--seeds", type=int, default=4, help="games per combination")
    ap.add_argument("--combos", help="semicolon-separated combinations, e.g. 'count;count,river2' (default: all)")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        ap.error("give an output file, or --compare A B")
    if args.combos:
        combos = [tuple(c.split(",")) if c else () for c in args.combos.split(";")]
    else:
        exps = [k for k in builtin_keys() if k != "base"]
        combos = [c for r in range(len(exps) + 1) for c in itertools.combinations(exps, r) if _plays(c)]
    result = {}
    for i, combo in enumerate(combos):
        for k in range(args.seeds):
            seed, players = 11 + k, 2 + (len(combo) + k) % 4
            key = f"{'+'.join(combo) or 'base'}|{seed}|{players}"
            result[key] = fingerprint(combo, seed, players)
        print(f"[{i + 1}/{len(combos)}] {'+'.join(combo) or 'base'}", file=sys.stderr, flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
