#!/usr/bin/env python
"""How well the network's leaf values (what PUCT backs up) predict a position's return.

    python scripts/value_calibration.py CHECKPOINT [--games 30] [--every 10] [--random 32] [--greedy 4]
        [--seed 5150] [--json]

Plays ``--games`` games of CHECKPOINT's argmax policy against the greedy baseline (deals ``seed``,
``seed + 1``, ..., both seatings) on the 2-player base game and keeps every ``--every``-th decision (either
seat's).  At each kept position, for each seat ``p``:

* ``net``: :class:`agents.search.NetworkGuide`'s value, ``score_scale x margin_p + V_p`` (``V_p`` the value
  head on seat ``p``'s observation), what the search backs up for ``p`` at a new leaf; the deciding seat
  (``decider``) and the other one (``other``: an observation of a turn that is not its own) apart;
* ``random`` / ``greedy``: the mean return of ``--random`` uniformly random (compiled engine) and
  ``--greedy`` greedy play-outs, each from a redeal of the tiles left (what the player knows);
* ``final``: the return the game actually reached (the agent against greedy).

Returns are in the value's units: ``score_scale x final margin + win_bonus x outcome`` (margin: own score
minus the best other; outcome +1 win, 0 shared, -1 loss).  Reported per predictor and target: Pearson
correlation, mean error (predictor - target), mean absolute error, sign agreement; and the same for the
*rest* of the return (both minus ``score_scale x margin now``, the part the value head adds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents import cli  # noqa: E402


def _stats(pred: np.ndarray, target: np.ndarray) -> dict[str, float]:
    r = (
        float(np.corrcoef(pred, target)[0, 1])
        if len(pred) > 2 and pred.std() > 0 and target.std() > 0
        else float("nan")
    )
    return {
        "n": int(len(pred)),
        "pearson": round(r, 4),
        "mean_error": round(float(np.mean(pred - target)), 4),
        "mean_abs_error": round(float(np.mean(np.abs(pred - target))), 4),
        "sign_agreement": round(float(np.mean(np.sign(pred) == np.sign(target))), 4),
    }


def collect(path: str, games: int, every: int, n_random: int, n_greedy: int, seed: int) -> dict[str, Any]:
    import carc_env
    from agents.checkpoint import load_checkpoint, net_from_checkpoint
    from agents.policy import PPOPolicy, shapes_from_env
    from agents.search import NetworkGuide
    from carc_env.fast.rng import generator_words
    from carc_env.policies import GreedyPolicy
    from carc_env.search.rollout import RolloutGuide

    env_kwargs = {"num_players": 2, "expansions": ("base",), "engine": "python"}
    env = carc_env.raw_env(**env_kwargs)
    data = load_checkpoint(path)
    net = net_from_checkpoint(data, expect=shapes_from_env(env), where=path)
    ppo = (data.get("config") or {}).get("ppo") or {}
    scale, bonus = float(ppo.get("score_scale", 0.05)), float(ppo.get("win_bonus", 1.0))
    agent = PPOPolicy(net)
    guide = NetworkGuide(net, env_kwargs, scale, bonus)
    env.reset(seed=seed)
    fast = guide.compiled_state(env.game)
    if fast is None:
        raise SystemExit("value_calibration.py: the compiled engine is not available (numba); install it")
    greedy_roll = RolloutGuide("greedy")
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for d in range(games):
        agent_seat = d % 2
        env.reset(seed=seed + d // 2)
        greedy = GreedyPolicy(seed=seed + d)
        kept = []
        k = 0
        while not all(env.terminations.values()):
            name = env.agent_selection
            seat = env.possible_agents.index(name)
            game = env.game
            if k % every == every // 2:
                kept.append((game.clone(), seat))
            k += 1
            obs = env.observe(name)
            act = agent.act(obs, env) if seat == agent_seat else greedy.act(env.infos[name], env)
            env.step(int(act))
        final = guide.values(list(env.game.scores))
        for g, seat in kept:
            with torch.inference_mode():
                _, net_v = guide.expand(g.clone(), g.legal_actions()[:1], rng)
            rand = np.zeros(2)
            fast.begin(g)  # the compiled engine's slot 0 := this position; each play-out a redeal of it
            for _ in range(n_random):
                order = list(g._bag[::-1])  # the tiles left, next drawn first (the search's redeal)
                rng.shuffle(order)
                words = generator_words(np.random.default_rng(rng.integers(2**63))) if fast.uses_rng else None
                fast.redeal(order, words)
                rand += guide.values(fast.play_out(int(rng.integers(2**31 - 1))))
            gre = np.zeros(2)
            for _ in range(n_greedy):
                h = g.clone()
                h.redeal(rng)
                greedy_roll.playout(h, rng)
                gre += guide.values(list(h.scores))
            margin = [g.scores[p] - g.scores[1 - p] for p in range(2)]
            head = [net_v[p] - scale * margin[p] for p in range(2)]  # V_p: the value head alone
            for p in range(2):
                rows.append(
                    {
                        "game": d,
                        "tiles_left": g.bag_size() if callable(g.bag_size) else g.bag_size,
                        "role": "decider" if p == seat else "other",
                        "agent_seat": p == agent_seat,
                        "now": scale * margin[p],
                        "net": net_v[p],
                        "net_antisym": scale * margin[p] + 0.5 * (head[p] - head[1 - p]),
                        "random": rand[p] / max(n_random, 1),
                        "greedy": gre[p] / max(n_greedy, 1) if n_greedy else float("nan"),
                        "final": final[p],
                    }
                )
    seconds = time.perf_counter() - t0
    report: dict[str, Any] = {
        "checkpoint": cli.relative_path(path),
        "games": games,
        "every": every,
        "random_playouts": n_random,
        "greedy_playouts": n_greedy,
        "seed": seed,
        "positions": len(rows) // 2,
        "seconds": round(seconds, 1),
        "score_scale": scale,
        "win_bonus": bonus,
        "rows": rows,
    }
    return summarise(report)


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    """The statistics of a report's ``rows`` (two per position: the decider's and the other seat's), added to it.

    Predictors: ``net`` (each seat's own view, what ``value_view="seat"`` backs up), ``net_decider`` (the deciding
    seat's value and its negation for the other seat, ``value_view="decider"``), ``net_antisym`` (half the
    difference of the two seats' heads), ``random``, ``greedy``."""
    rows = report["rows"]
    n_greedy = report["greedy_playouts"]
    for a, b in zip(rows[0::2], rows[1::2], strict=True):
        d = a if a["role"] == "decider" else b
        a["net_decider"] = d["net"] if a is d else -d["net"]
        b["net_decider"] = d["net"] if b is d else -d["net"]
    keys = ("now", "net", "net_decider", "net_antisym", "random", "greedy", "final")
    arr = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in keys}
    role = np.array([r["role"] for r in rows])
    preds = ["net", "net_decider", "net_antisym", "random"] + (["greedy"] if n_greedy else [])
    targets = ["final", "random"] + (["greedy"] if n_greedy else [])
    out: dict[str, Any] = {}
    for subset, sel in (("all", np.ones(len(rows), bool)), ("decider", role == "decider"), ("other", role == "other")):
        for kind in ("total", "rest"):
            for p in preds:
                for t in targets:
                    if p == t:
                        continue
                    a, b = arr[p][sel], arr[t][sel]
                    if kind == "rest":
                        a, b = a - arr["now"][sel], b - arr["now"][sel]
                    out[f"{subset}/{kind}/{p}->{t}"] = _stats(a, b)
    report["stats"] = out
    net0 = arr["net"][0::2] + arr["net"][1::2]  # the two seats' values at one position: zero-sum game
    report["net_seat_sum"] = {"mean": round(float(net0.mean()), 4), "mean_abs": round(float(np.abs(net0).mean()), 4)}
    report["mean"] = {k: round(float(v.mean()), 4) for k, v in arr.items()}
    report["std"] = {k: round(float(v.std()), 4) for k, v in arr.items()}
    return report


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser(
        prog="value_calibration.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("checkpoint")
    ap.add_argument("--games", type=cli.int_range(1), default=30)
    ap.add_argument("--every", type=cli.int_range(1), default=10)
    ap.add_argument("--random", type=cli.int_range(1), default=32)
    ap.add_argument("--greedy", type=cli.int_range(0), default=4)
    ap.add_argument("--seed", type=cli.int_range(0), default=5150)
    ap.add_argument("--json", action="store_true", help="print the whole report as JSON (with its rows)")
    ap.add_argument("--summarise", action="store_true", help="CHECKPOINT is a --json report: summarise its rows again")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    from agents.checkpoint import CheckpointError

    try:
        if args.summarise:
            with open(args.checkpoint, encoding="utf-8") as fh:
                rep = summarise(json.load(fh))
        else:
            rep = collect(args.checkpoint, args.games, args.every, args.random, args.greedy, args.seed)
    except (CheckpointError, OSError, ValueError, KeyError) as exc:
        return cli.fail(ap.prog, f"{args.checkpoint}: {exc}")
    if args.json:
        print(json.dumps(rep))
        return 0
    rep.pop("rows")
    print(f"{rep['positions']} positions from {rep['games']} games, {rep['seconds']} s")
    print(f"mean: {rep['mean']}\nstd: {rep['std']}\nnet seat sum: {rep['net_seat_sum']}")
    for k, v in rep["stats"].items():
        print(
            f"{k:34s} r={v['pearson']:+.3f} err={v['mean_error']:+.3f} |err|={v['mean_abs_error']:.3f} sign={v['sign_agreement']:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
