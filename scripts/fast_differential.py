#!/usr/bin/env python
"""Differential run: many seeded games through the compiled engine and the Python reference.

Each game is played with random masked actions through both engines and
compared step by step (:func:`carc_env.env.differential.compare_game`: legal
placements, follower spots, masks, window, observation bytes, rewards, scores,
itemised scoring).  The configurations rotate over everything the compiled
engine covers (2-5 players, both ``count_tile_once`` settings, the reward
modes, small windows, King & Robber Baron, The River II and its options, the Royal
Gateways and the Sagrada Familia and their options, Stained Glass and its options), so
``--games 10000`` checks each of them several hundred times.  Stops at the first difference with the seed
and step; prints progress and a summary (``--json``: one JSON line).

``--box K1,K2,...`` rotates instead over every combination of those
expansions (the empty one too) with 2, 3, 4 and 5 players (reward
``score_delta``, which exercises every step's reward); combinations the
compiled engine does not cover are listed as skipped, with the reason, and those the rules refuse
(the map with the Count or the River II) as refused. Game ``i`` plays configuration
``(seed + i) % configurations``, so runs with consecutive seed ranges continue the rotation.  ``--avoid-pass P``: in
the plug-ins' decision phases, choose a move over passing with probability P (more of the Count's moves).

    python scripts/fast_differential.py --games 10000
    python scripts/fast_differential.py --games 2000 --box king_robber,count,river2,shrines,darmstadt --avoid-pass 0.5
    python scripts/fast_differential.py --games 500 --features --box darmstadt,shrines
    python scripts/fast_differential.py --games 1000 --maps

``--maps`` rotates over Maps - Germany alone and with every combination of the expansions it combines
with (King & Robber Baron, Heretics and Shrines, Darmstadt, the Royal Gateways, the Sagrada Familia),
2-5 players, the map's options in turn (start squares and orientations, tile mixes, followers, closed
large-city edges, the town variants, and another map file of the same format).

``--only KEY`` keeps the configurations (of the list or of ``--box``) with expansion KEY:

    python scripts/fast_differential.py --games 1000 --only stained_glass

``--features`` asks for the action features in every observation (the
placement and spot rows, played out one ply in the kernels), so they are
compared too.  ``--greedy EPS`` plays every seat with ``GreedyPolicy(epsilon=EPS)`` instead of random
moves and checks, decision for decision, that the compiled greedy (``carc_env.fast.greedy``) chooses what
the Python policy chooses (each seat's two policies seeded alike):

    python scripts/fast_differential.py --games 500 --features --greedy 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import cli  # noqa: E402
from carc_env.core.expansion import ConfigError  # noqa: E402
from carc_env.env.differential import Mismatch, compare_game  # noqa: E402
from carc_env.env.options import EnvOptions  # noqa: E402
from carc_env.fast import coverage, features_coverage  # noqa: E402
from carc_env.fast.engine import FastBatch  # noqa: E402
from carc_env.fast.greedy import greedy_actions  # noqa: E402
from carc_env.policies import GreedyPolicy  # noqa: E402

CONFIGS = [
    {},
    {"rules": {"base": {"count_tile_once": False}}, "reward": "score_diff"},
    {"num_players": 3, "reward": "score_delta"},
    {"num_players": 4, "window": (9, 9)},
    {"num_players": 5, "followers": 2, "window": (5, 7), "reward": "score_delta"},
    {"followers": 1, "reward": "score_diff", "reward_scale": 0.5},
    {"window": (11, 11)},
    {"expansions": ("king_robber",)},
    {"expansions": ("king_robber",), "num_players": 4, "window": (11, 11), "reward": "score_delta"},
    {"expansions": ("king_robber",), "rules": {"base": {"count_tile_once": False}}, "num_players": 3},
    {"expansions": ("river2",)},
    {"expansions": ("river2", "king_robber"), "num_players": 3, "window": (9, 9), "reward": "score_delta"},
    {
        "expansions": ("river2",),
        "rules": {"river2": {"end_city_last": True, "start_tile": "after_river", "lake_extra_turn": False}},
        "num_players": 4,
    },
    {"expansions": ("royal_gateways",)},
    {
        "expansions": ("royal_gateways", "king_robber"),
        "rules": {"royal_gateways": {"unpaired_gate_blocks_completion": False, "follower_on_gate": True}},
        "num_players": 3,
    },
    {"expansions": ("sagrada_familia",), "num_players": 4, "reward": "score_delta"},
    {
        "expansions": ("sagrada_familia", "king_robber"),
        "rules": {"sagrada_familia": {"may_close": True, "exception_knight_allowed": False}},
    },
    {
        "expansions": ("sagrada_familia", "royal_gateways", "king_robber"),
        "rules": {
            "sagrada_familia": {
                "may_close": True,
                "exception_returns_followers": False,
                "exception_city_counts_for_king": True,
                "exception_city_counts_for_farmers": True,
            }
        },
        "num_players": 5,
    },
    # Stained Glass: alone, every option, and with the others (the tokens come from the game's generator)
    {"expansions": ("stained_glass",)},
    {"expansions": ("stained_glass",), "num_players": 3, "rules": {"stained_glass": {"token_on": "place"}}},
    {
        "expansions": ("stained_glass", "darmstadt", "shrines"),
        "num_players": 4,
        "rules": {"stained_glass": {"churches_are_cloisters": False, "shrines_are_cloisters": True}},
    },
    {
        "expansions": ("stained_glass",),
        "num_players": 5,
        "rules": {"stained_glass": {"thieves_need_monk": True, "protect_complete_windows": True}},
    },
    {
        "expansions": ("stained_glass",),
        "num_players": 3,
        "rules": {"stained_glass": {"steal_from_self": True, "steal_kind": "random"}},
        "reward": "score_delta",
    },
    {
        "expansions": ("stained_glass", "king_robber"),
        "rules": {"stained_glass": {"window_points": "1,0,5,2", "loose_token_points": 1}},
    },
    {"expansions": ("stained_glass", "count"), "num_players": 4, "rules": {"stained_glass": {"final_windows": "none"}}},
    {
        "expansions": ("stained_glass",),
        "num_players": 3,
        "rules": {"stained_glass": {"bag_order": "G1a G1b G1c G2a", "start_tokens": "G2b G2c G3a G3b G3c; G4a G4b"}},
    },
    {"expansions": ("stained_glass", "royal_gateways", "sagrada_familia", "river2"), "num_players": 4},
]


MAP = "maps_germany"
# relative to the current directory when under it: the configurations' names in the report name no machine's folder
MINI_MAP = cli.relative_path(
    os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "tests", "data", "maps", "mini.toml"))
)
MAP_OPTIONS = [
    {},
    {"start_orientation": "random", "town_extra_turn": True, "town_penalty": True, "town_road_bonus": True},
    {"start_squares": "Rostock,Erfurt,Stuttgart", "large_city_closed_edges": "border"},
    {"start_orientation": "fixed", "tile_mix": "base_x1", "town_extra_turn": True, "town_extra_turn_optional": False},
    {"start_squares": "Stuttgart,Rostock", "tile_mix": "base_x2", "followers": 5, "town_road_bonus": True},
    {"map_file": MINI_MAP, "start_squares": "A,B", "town_extra_turn": True, "town_penalty": True},
    {"map_file": MINI_MAP, "start_squares": "B,A", "start_orientation": "random", "large_city_closed_edges": "border"},
]
MAP_COMBINES = ("king_robber", "shrines", "darmstadt", "royal_gateways", "sagrada_familia")


def map_configs() -> list[dict]:
    """Maps - Germany alone and with every combination of the expansions it combines with, 2-5 players,
    the map's options in turn (the Germany board, then another map file of the same format)."""
    out = []
    for m in range(1 << len(MAP_COMBINES)):
        combo = tuple(k for j, k in enumerate(MAP_COMBINES) if m >> j & 1)
        for n in (2, 3, 4, 5):
            opts = MAP_OPTIONS[len(out) % len(MAP_OPTIONS)]
            out.append({"expansions": (MAP, *combo), "num_players": n, "reward": "score_delta", "rules": {MAP: opts}})
    return out


def box_configs(keys: list[str]) -> list[dict]:
    """Every combination of ``keys`` (the empty one first) with 2, 3, 4 and 5 players."""
    out = []
    for m in range(1 << len(keys)):
        combo = tuple(k for j, k in enumerate(keys) if m >> j & 1)
        for n in (2, 3, 4, 5):
            out.append({"expansions": combo, "num_players": n, "reward": "score_delta"})
    return out


def greedy_policy(opts: EnvOptions, seed: int, fast: FastBatch, eps: float):
    """compare_game's policy: every seat plays GreedyPolicy(eps) on the reference; the compiled greedy, with a
    policy seeded alike, must choose the same action (else Mismatch)."""
    py = [GreedyPolicy(epsilon=eps, seed=seed * 10 + p) for p in range(opts.num_players)]
    co = [GreedyPolicy(epsilon=eps, seed=seed * 10 + p) for p in range(opts.num_players)]

    def choose(match, legal, rng) -> int:
        p = match.game.player
        a = py[p].act({"action_mask": match.mask()}, match)
        b = int(greedy_actions(fast, [0], [co[p]])[0])
        if a != b:
            raise Mismatch(
                f"seed {seed}, phase {match.game.phase}, player {p}: the Python greedy chose {a}, the compiled {b}"
            )
        return a

    return choose


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000, help="games in all (default 1000)")
    ap.add_argument("--seed", type=int, default=100_000, help="first game seed (game i gets seed + i)")
    ap.add_argument("--all-seats-every", type=int, default=8, help="compare every seat's observation every N steps")
    ap.add_argument("--json", action="store_true", help="print one JSON line at the end")
    ap.add_argument("--box", default=None, help="comma-separated expansion keys: every combination x 2-5 players")
    ap.add_argument(
        "--maps",
        action="store_true",
        help="Maps - Germany alone and with every expansion combination it allows, 2-5 players, its options in turn",
    )
    ap.add_argument(
        "--avoid-pass",
        type=float,
        default=0.0,
        help="in the plug-ins' decision phases (the Count's), the probability of choosing a move over passing",
    )
    ap.add_argument(
        "--features", action="store_true", help="observations with the action features (compared byte for byte)"
    )
    ap.add_argument(
        "--greedy",
        type=float,
        default=None,
        metavar="EPS",
        help="play GreedyPolicy(epsilon=EPS) and check the compiled greedy's every decision against it",
    )
    ap.add_argument("--only", default=None, help="keep the configurations with this expansion (e.g. stained_glass)")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error("--games must be at least 1")
    if args.all_seats_every < 1:
        ap.error("--all-seats-every must be at least 1")
    configs = CONFIGS if args.box is None else box_configs([k for k in args.box.split(",") if k])
    if args.maps:
        configs = map_configs()
    if args.only:
        configs = [kw for kw in configs if args.only in kw.get("expansions", ())]
        if not configs:
            ap.error(f"no configuration has the expansion {args.only!r}")
    if args.features:
        configs = [{**kw, "action_features": True} for kw in configs]
    engines: list[list] = []  # [kwargs, options, engine built on first use]
    skipped = {}
    refused = {}
    for kw in configs:
        try:
            opts = EnvOptions.from_kwargs(**kw)
            why = coverage(opts)
            if why is None and args.greedy is not None:  # the compiled greedy must cover it too
                why = features_coverage(opts.rule_set())
        except ConfigError as exc:  # a combination the rules refuse (the map and the Count's start layout)
            refused[repr(kw)] = str(exc)
            continue
        if why is not None:
            skipped[repr(kw)] = why
            continue
        engines.append([kw, opts, None])
    if not engines:
        ap.error(f"the compiled engine covers none of these configurations: {skipped}")
    t0 = time.perf_counter()
    decisions = 0
    per_config = [0] * len(engines)
    result: dict = {"games": 0, "decisions": 0, "ok": True}
    try:
        for i in range(args.games):
            c = (args.seed + i) % len(engines)  # runs with other seeds start elsewhere in the rotation
            kw, opts, fast = engines[c]
            if fast is None:
                fast = engines[c][2] = FastBatch(opts, 1)
            policy = None if args.greedy is None else greedy_policy(opts, args.seed + i, fast, args.greedy)
            decisions += compare_game(
                opts,
                args.seed + i,
                fast,
                all_seats_every=args.all_seats_every,
                avoid_pass=args.avoid_pass,
                policy=policy,
            )
            per_config[c] += 1
            if (i + 1) % 100 == 0 or i + 1 == args.games:
                dt = time.perf_counter() - t0
                print(f"{i + 1}/{args.games} games identical ({decisions} decisions, {dt:.0f} s)", file=sys.stderr)
    except Mismatch as exc:
        result.update(ok=False, error=str(exc), config=repr(kw))
        print(f"MISMATCH in config {kw!r}: {exc}", file=sys.stderr)
    result["games"] = sum(per_config)
    result["decisions"] = decisions
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["per_config"] = {repr(e[0]): n for e, n in zip(engines, per_config, strict=True)}
    result["skipped"] = skipped
    result["refused"] = refused
    if args.json:
        print(json.dumps(result))
    else:
        status = "identical" if result["ok"] else "DIFFERENT"
        print(f"{result['games']} games {status} ({decisions} decisions compared) in {result['seconds']} s")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
