#!/usr/bin/env python
"""Simulations per second of the tree search, by rollout kind and game stage.

    python scripts/bench_search.py [--sims 200] [--players 2] [--expansions base,...] [--seed 0]
                                   [--repeat 1] [--horizon 20] [--checkpoint PATH] [--guide CKPT] [--game]
                                   [--json]

States: one greedy-vs-greedy game (deal ``--seed``), the tile decisions at
turns 0, 20, 40 and 60 of the 72.  For each state and search kind one search
of ``--sims`` simulations is timed (the slower kinds a fraction of them, named
below):

* ``random rollouts``: the search with its tree in Python nodes
  (``tree="python"``) and, where the compiled engine covers the game, every
  simulation's state work on it (redeal, the path's moves, the leaf's moves,
  the play-out): the default before session 18;
* ``random, python tree``: the same search with a Python game per simulation
  and only the play-out compiled (the path before this session's change:
  ``RolloutGuide(playout=FastPlayout())``); from the same seed it gives the
  same visits (checked here: ``same_visits``), so ``tree_ratio`` (its
  seconds over the first kind's) is the speed-up of the compiled state alone;
* ``random, compiled tree``: the default (``tree="auto"``): the whole search,
  tree included, in one compiled kernel (:mod:`carc_env.fast.tree`) where the
  redeal is a plain shuffle (else the first kind's search); not the same
  random numbers, so not the same visits: ``tree_speedup`` is the first
  kind's seconds over its own;
* ``random rollouts, python``: everything on the Python engine;
* ``random, horizon H``: play-outs cut ``--horizon`` tiles after the root's
  (``mcts:N:horizon=H``), compiled tree, and ``random, horizon H, python
  nodes``: the same with the tree in Python nodes (``tree_speedup`` again);
  ``random, no farmers``: with play-outs that put no follower on a field
  (``mcts:N:farmers=0``), compiled tree;
* ``greedy rollouts``: epsilon-greedy play-outs (the greedy baseline's
  decisions) on the compiled state where its compiled greedy covers the game
  (a quarter of the simulations), and ``greedy rollouts, python``: on the
  Python engine (a sixteenth);
* ``ppo-mcts`` if a checkpoint is given.

``--guide CKPT`` (a PPO checkpoint path, ``pretrained:NAME``, or ``fresh``: an
untrained network of the default size for the configuration, for timing
where no trained one exists): instead,
the network-guided search (``ppo-mcts``) both ways, each at ``--sims``:
``ppo-mcts, compiled state`` (``NetworkGuide`` engine auto: the
simulations' states and the leaves' observations on the compiled engine) and
``ppo-mcts, python`` (engine python: a Python game per simulation, the
observations encoded in Python); ``same_visits`` and ``tree_ratio`` compare
the second with the first, and ``--game`` plays the whole game with each.
One torch thread.

``--game``: instead, one whole game of ``mcts:--sims`` (seat 0) against
greedy (deal ``--seed``), played once with each of the first two kinds and
once with the compiled tree: the mean seconds per search move of each, and
whether the first two played the same game (they must: the same seed gives
the same visits).

``--repeat R`` times every search R times (the same seed: the same search)
and keeps the fastest.  Speed depends on the machine and its load: compare the rows of one run, not
runs taken at different times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

import carc_env  # noqa: E402
from carc_env.baselines import GreedyPolicy  # noqa: E402
from carc_env.fast.playout import FastPlayout  # noqa: E402
from carc_env.search import MCTS, RolloutGuide  # noqa: E402


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 1")
    return v


def _nonneg(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 0")
    return v


def states(players: int, seed: int, turns=(0, 20, 40, 60), expansions=("base",)) -> list[tuple[int, object]]:
    env = carc_env.raw_env(num_players=players, expansions=tuple(expansions))
    env.reset(seed=seed)
    gp = GreedyPolicy(seed=seed)
    out = []
    while not env.game.over:
        g = env.game
        if g.phase == "tile" and g.turn in turns and all(t != g.turn for t, _ in out):
            out.append((g.turn, g.clone()))
        env.step(gp.act({"action_mask": env.match.mask()}, env))
    return out


def _whole_game(args: argparse.Namespace, expansions: tuple[str, ...], kinds: list) -> int:
    """One game of the search against greedy with each tree kind: seconds per search move, same game."""
    from carc_env.search import MCTSPolicy

    out = []
    for name, guide, sims, tree in kinds:
        env = carc_env.raw_env(num_players=args.players, expansions=expansions)
        env.reset(seed=args.seed)
        search = MCTSPolicy(sims, seed=args.seed, guide=guide, tree=tree)
        others = [GreedyPolicy(seed=args.seed + p) for p in range(1, args.players)]
        moves, seconds, searched = [], 0.0, 0
        while not env.game.over:
            obs = {"action_mask": env.match.mask()}
            seat = env.game.player
            if seat == 0:
                t0 = time.perf_counter()
                a = search.act(obs, env)
                seconds += time.perf_counter() - t0
                searched += search.last_search.simulations > 0
            else:
                a = others[seat - 1].act(obs, env)
            moves.append(int(a))
            env.step(a)
        out.append(
            {
                "search": name,
                "moves": len(moves),
                "searches": searched,
                "seconds": round(seconds, 3),
                "s_per_search": round(seconds / max(searched, 1), 5),
                "scores": list(env.game.scores),
                "_m": moves,
            }
        )
    same = out[0].pop("_m") == out[1].pop("_m")
    for r in out[2:]:
        r.pop("_m")
    ratio = round(out[1]["seconds"] / out[0]["seconds"], 2)
    speedup = round(out[0]["s_per_search"] / out[2]["s_per_search"], 2) if len(out) > 2 else None
    if args.json:
        print(
            json.dumps(
                {
                    "players": args.players,
                    "expansions": list(expansions),
                    "seed": args.seed,
                    "simulations": args.sims,
                    "games": out,
                    "same_game": same,
                    "tree_ratio": ratio,
                    "tree_speedup": speedup,
                }
            )
        )
    else:
        for r in out:
            print(
                f"{r['search']:22s} {r['searches']:3d} searches  {r['seconds']:8.2f} s  "
                f"{r['s_per_search']:.4f} s/search  scores {r['scores']}"
            )
        print(f"python tree / compiled state: x{ratio}  same game: {same}")
        if speedup is not None:
            print(f"compiled state / compiled tree, seconds a search: x{speedup}")
    return 0


def _guide_kinds(spec: str, env_kwargs: dict, sims: int) -> list[tuple[str, object, int]]:
    """The network guide of ``spec`` (a checkpoint path or ``pretrained:NAME``) on compiled state and on Python."""
    import torch

    from agents.search import NetworkGuide

    torch.set_num_threads(1)
    scale, bonus = 0.05, 1.0
    if spec == "fresh":  # timing only: a forward costs what the network's size costs, whatever its weights
        from agents.network import NetConfig, PolicyNet
        from agents.policy import shapes_from_env

        torch.manual_seed(0)
        net = PolicyNet(shapes_from_env(carc_env.raw_env(**env_kwargs)), NetConfig())
    elif spec.startswith("pretrained:"):
        from agents.pretrained import load

        pol = load(spec.split(":", 1)[1])
        if dict(pol.env_kwargs, expansions=tuple(pol.env_kwargs.get("expansions", ("base",)))) != env_kwargs:
            raise ValueError(f"it plays {pol.env_kwargs}, not {env_kwargs}")
        net = pol.net
    else:
        from agents.search import PPOSearchPolicy

        if not os.path.isfile(spec):
            raise ValueError("no such file")
        pol = PPOSearchPolicy.from_checkpoint(spec, env_kwargs)
        net, scale, bonus = pol.guide.net, pol.guide.score_scale, pol.guide.win_bonus
    return [
        ("ppo-mcts, compiled state", NetworkGuide(net, env_kwargs, scale, bonus), sims, "auto"),
        ("ppo-mcts, python", NetworkGuide(net, env_kwargs, scale, bonus, engine="python"), sims, "auto"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=_positive, default=200)
    ap.add_argument("--players", type=int, choices=range(2, 6), default=2)
    ap.add_argument("--expansions", default="base", help="comma-separated expansion keys (default: base)")
    ap.add_argument("--seed", type=_nonneg, default=0)
    ap.add_argument("--repeat", type=_positive, default=1, help="time each search this often, keep the fastest")
    ap.add_argument("--game", action="store_true", help="time one whole game against greedy (see above)")
    ap.add_argument("--horizon", type=_positive, default=20, help="the cut of the 'random, horizon H' kind")
    ap.add_argument("--checkpoint", default=None, help="a PPO checkpoint: also time ppo-mcts")
    ap.add_argument(
        "--guide", default=None, help="a PPO checkpoint, pretrained:NAME or fresh: ppo-mcts on compiled state vs python"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    expansions = tuple(k.strip() for k in args.expansions.split(",") if k.strip())
    try:
        positions = states(args.players, args.seed, expansions=expansions)
    except Exception as e:  # a bad key or combination: the configuration's own message
        print(f"error: --expansions {args.expansions!r}: {e}", file=sys.stderr)
        return 2
    horizon = f"random, horizon {args.horizon}"
    kinds: list[tuple[str, object, int, str]] = [
        ("random rollouts", RolloutGuide("random"), args.sims, "python"),  # compiled state where covered
        ("random, python tree", RolloutGuide("random", playout=FastPlayout()), args.sims, "auto"),
        ("random, compiled tree", RolloutGuide("random"), args.sims, "auto"),  # where the redeal is a shuffle
        ("random rollouts, python", RolloutGuide("random", engine="python"), max(1, args.sims // 4), "auto"),
        (horizon, RolloutGuide("random", horizon=args.horizon), args.sims, "auto"),
        (f"{horizon}, python nodes", RolloutGuide("random", horizon=args.horizon), args.sims, "python"),
        ("random, no farmers", RolloutGuide("random", farmers=False), args.sims, "auto"),
        ("greedy rollouts", RolloutGuide("greedy"), max(1, args.sims // 4), "auto"),  # compiled state where covered
        ("greedy rollouts, python", RolloutGuide("greedy", engine="python"), max(1, args.sims // 16), "auto"),
    ]
    pairs = {"random, compiled tree": "random rollouts", horizon: f"{horizon}, python nodes"}
    if args.guide:
        try:
            kinds = _guide_kinds(args.guide, {"num_players": args.players, "expansions": expansions}, args.sims)
        except (OSError, ValueError) as e:
            print(f"error: --guide {args.guide!r}: {e}", file=sys.stderr)
            return 2
    if args.checkpoint:
        if not os.path.isfile(args.checkpoint):
            print(f"error: --checkpoint {args.checkpoint!r}: no such file", file=sys.stderr)
            return 2
        import torch

        from agents.search import PPOSearchPolicy

        torch.set_num_threads(1)
        pol = PPOSearchPolicy.from_checkpoint(args.checkpoint, {"num_players": args.players})
        kinds.append(("ppo-mcts (network guide)", pol.guide, max(1, args.sims // 4), "auto"))
    for _, guide, _, tree in kinds[:3]:  # compile (or load) the kernels before timing
        MCTS(guide, rng=np.random.default_rng(0), tree=tree).search(positions[0][1], simulations=2)
    if args.game:
        return _whole_game(args, expansions, kinds[:2] if args.guide else kinds[:3])
    rows = []
    for turn, game in positions:
        first = None
        timed: dict[str, float] = {}
        for name, guide, sims, tree in kinds:
            dt = math.inf
            for _ in range(args.repeat):  # the same search each time (same seed): the fastest run counts
                mcts = MCTS(guide, rng=np.random.default_rng(0), tree=tree)
                t0 = time.perf_counter()
                res = mcts.search(game, simulations=sims)
                dt = min(dt, time.perf_counter() - t0)
            row = {
                "turn": turn,
                "search": name,
                "state": res.extra.get("state", "python"),
                "tree": res.extra.get("tree", "python"),
                "actions": len(res.actions),
                "simulations": sims,
                "seconds": round(dt, 4),
                "sims_per_s": round(sims / dt, 1),
            }
            if first is None:
                first = (res.visits, dt)
            elif name in ("random, python tree", "ppo-mcts, python"):
                row["same_visits"] = res.visits == first[0]
                row["tree_ratio"] = round(dt / first[1], 2)
            timed[name] = dt
            rows.append(row)
        for row in rows[-len(kinds) :]:  # the compiled tree's speed-up over the same search in Python nodes
            if row["search"] in pairs:
                row["tree_speedup"] = round(timed[pairs[row["search"]]] / timed[row["search"]], 2)
            if not args.json:
                name, sims, dt = row["search"], row["simulations"], timed[row["search"]]
                more = f"  x{row['tree_ratio']:.2f} same visits: {row['same_visits']}" if "tree_ratio" in row else ""
                more += f"  x{row['tree_speedup']:.2f} over Python nodes" if "tree_speedup" in row else ""
                print(
                    f"turn {turn:2d}  {name:36s} {row['actions']:3d} actions  {sims:5d} sims  "
                    f"{dt:7.3f} s  {sims / dt:8.1f} sims/s{more}",
                    flush=True,
                )
    if args.json:
        print(
            json.dumps(
                {
                    "players": args.players,
                    "expansions": list(expansions),
                    "seed": args.seed,
                    "repeat": args.repeat,
                    "machine": platform.machine(),
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "rows": rows,
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
