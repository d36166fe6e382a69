"""How well the shipped network's value predicts what the search's play-outs say, before and after refitting
its value head (trunk and policy frozen) to the mean of 32 random play-outs.

Positions: the tile decisions (about a third of them, drawn at random) of 2-player base games played by an
epsilon-greedy player (epsilon 0.1, 0.3 or 0.6 by game; deals 50,000 +). At each, the search's leaf value in
the network guide's units for the deciding seat (``values=decider``: ``score_scale`` x the margin gained
from here + ``win_bonus`` x the outcome) is averaged over 32 play-outs, each from its own redeal of the tiles
left (compiled engine). Reported on held-out positions (those of a fifth of the games, none of whose
positions is trained on), as Pearson r with that 32-play-out mean:
the network's value head, the head refit to it on the other four fifths, and one further independent
play-out. ``--trunk E``: also train the whole network (a fresh copy of the shipped one) on the same
target for E epochs (value loss only, Adam 3e-4, batches of 64), and report its r on the same held-out
positions: what the architecture can learn of that value, priors aside.

    python docs/results/expert/s16/value_fit.py [--games 600] [--split games|positions] [--trunk 0] [--save NET.pt]
                                                [--out value_fit.json]

``--save``: write that whole network (its weights, as a shipped agent's ``.pt``) for a search to read its
values (``twonet.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from agents.pretrained import load_net  # noqa: E402
from agents.search import NetworkGuide, stacked_to_tensors  # noqa: E402
from carc_env.core.game import new_game  # noqa: E402
from carc_env.search.rollout import GreedyMover, canonical_rotations, random_action  # noqa: E402

K = 32


def _positions(guide: NetworkGuide, games: int, rng: np.random.Generator):
    ss, wb = guide.score_scale, guide.win_bonus
    mover = GreedyMover()
    rows, means, spare, game_of = [], [], [], []
    for gi in range(games):
        g = new_game(2, seed=50000 + gi)
        eps = (0.1, 0.3, 0.6)[gi % 3]
        while not g.over:
            if g.phase == "tile" and rng.random() < 0.35:
                f = guide.compiled_state(g)
                guide.begin(g)
                base = list(g._bag[::-1])
                f.redeal(base)
                moves = f.moves(lambda t, g=g: canonical_rotations(g, t, {}))
                obs, _, scores, p = guide.leaf_state(f, moves)
                now = scores[p] - scores[1 - p]
                vals = []
                for _ in range(K + 1):  # K for the mean, one more to compare with it
                    order = list(base)
                    rng.shuffle(order)
                    f.redeal(order)
                    final = f.play_out(int(rng.integers(2**31 - 1)))
                    m = final[p] - final[1 - p]
                    vals.append(ss * (m - now) + wb * (1.0 if m > 0 else -1.0 if m < 0 else 0.0))
                rows.append(obs)
                game_of.append(gi)
                means.append(float(np.mean(vals[:K])))
                spare.append(vals[K])
            g.apply(random_action(g, rng) if rng.random() < eps else mover(g, rng))
    return rows, np.array(means), np.array(spare), np.array(game_of)


def _trunk(rows: list, y: torch.Tensor, train: np.ndarray, test: np.ndarray, epochs: int, save: str | None) -> dict:
    """The whole network trained on the value target alone; r on the held-out positions after each epoch."""
    net = load_net("base-2p-160").train()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)

    def batch(ids: np.ndarray):
        chunk = [rows[i] for i in ids]
        obs = {k: np.concatenate([o[k] for o in chunk]) for k in chunk[0]}
        return stacked_to_tensors(obs, obs["place_count"].tolist()).inputs()

    curve = []
    rng = np.random.default_rng(1)
    yt = y.numpy()[test]
    for _ in range(epochs):
        net.train()
        order = rng.permutation(train)
        for i in range(0, len(order), 64):
            ids = order[i : i + 64]
            _, v = net(*batch(ids))
            loss = ((v - y[torch.as_tensor(ids)]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.inference_mode():
            pred = np.concatenate([net(*batch(test[i : i + 256]))[1].numpy() for i in range(0, len(test), 256)])
        curve.append(round(float(np.corrcoef(pred, yt)[0, 1]), 3))
    if save:
        torch.save({"state_dict": net.state_dict()}, save)
    return {"trunk_epochs": epochs, "r_whole_network_by_epoch": curve}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--trunk", type=int, default=0, help="epochs of whole-network training (0: none)")
    ap.add_argument("--split", choices=("games", "positions"), default="games", help="what is held out")
    ap.add_argument("--save", default=None, help="with --trunk: write the trained network's weights here")
    ap.add_argument("--out", default=None, help="write the JSON here too")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = load_net("base-2p-160")
    guide = NetworkGuide(net, {}, value_view="decider")
    t0 = time.time()
    rows, y_np, spare, game_of = _positions(guide, args.games, np.random.default_rng(12345))
    seconds = time.time() - t0
    feats: list[torch.Tensor] = []
    hook = net.value_head.register_forward_hook(lambda m, inp, out: feats.append(inp[0].detach().clone()))
    head_now = []
    with torch.inference_mode():
        for i in range(0, len(rows), 64):
            chunk = rows[i : i + 64]
            obs = {k: np.concatenate([o[k] for o in chunk]) for k in chunk[0]}
            _, v = net(*stacked_to_tensors(obs, obs["place_count"].tolist()).inputs())
            head_now.extend(v.tolist())
    hook.remove()
    x, y = torch.cat(feats), torch.tensor(y_np, dtype=torch.float32)
    n = len(y)
    if args.split == "games":  # held out: every position of a fifth of the games (none trained on)
        held = np.random.default_rng(0).permutation(args.games)[: args.games // 5]
        test_mask = np.isin(game_of, held)
        idx = np.concatenate([np.flatnonzero(~test_mask), np.flatnonzero(test_mask)])
        cut = int((~test_mask).sum())
    else:  # a fifth of the positions: their games' other positions are trained on (alike, so r is flattered)
        idx = np.random.default_rng(0).permutation(n)
        cut = int(0.8 * n)
    train, test = torch.as_tensor(idx[:cut]), torch.as_tensor(idx[cut:])
    head = net.value_head
    opt = torch.optim.Adam(head.parameters(), lr=1e-3, weight_decay=1e-4)
    best = (np.inf, 0.0, 0)
    for epoch in range(300):
        perm = train[torch.randperm(cut)]
        for i in range(0, cut, 256):
            b = perm[i : i + 256]
            loss = ((head(x[b]).squeeze(1) - y[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            pred = head(x[test]).squeeze(1).numpy()
        mse = float(np.mean((pred - y_np[idx[cut:]]) ** 2))
        if mse < best[0]:
            best = (mse, float(np.corrcoef(pred, y_np[idx[cut:]])[0, 1]), epoch)
    yt = y_np[idx[cut:]]

    def r(a: np.ndarray) -> float:
        return round(float(np.corrcoef(a, yt)[0, 1]), 3)

    out = {
        "network": "pretrained:base-2p-160",
        "games": args.games,
        "positions": n,
        "split": args.split,
        "held_out": int(n - cut),
        "positions_seconds": round(seconds, 1),
        "r_value_head": r(np.array(head_now)[idx[cut:]]),
        "r_refit_head": round(best[1], 3),
        "refit_best_epoch": best[2],
        "r_one_more_playout": r(spare[idx[cut:]]),
        "target_sd": round(float(np.std(yt)), 3),
    }
    if args.trunk:
        out.update(_trunk(rows, y, idx[:cut], idx[cut:], args.trunk, args.save))
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
