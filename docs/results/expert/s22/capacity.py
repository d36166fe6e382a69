"""Is the student's size what limits it?  An offline fit of session 21's teacher choices (session 22).

The searcher run's checkpoint (configs/expert_searcher.yaml) holds its replay buffer: the last 40,000
decisions of the teacher's self-play games, each with the teacher's chosen move.  Its first 36,000
train a copy of the start (``pretrained:base-2p-160``, one residual block) or the start made deeper
(BLOCKS residual blocks: the extra ones start as the identity, their last convolution zero, so the
deeper net plays exactly as the start at step 0); the last 4,000 (the latest ~35 games) are held out.
Every 50 gradient steps (256 decisions each, Adam at LR) it prints how often the net's argmax is the
teacher's choice on the held-out decisions (all, placements, follower decisions) and the
cross-entropy there, and writes the curve to OUT (JSON).

    python docs/results/expert/s22/capacity.py CHECKPOINT BLOCKS STEPS LR OUT
"""

import json
import pickle
import sys
import time

import numpy as np
import torch

from agents.expert import ExpertConfig, ExpertTrainer
from agents.network import NetConfig, PolicyNet, masked_logits
from agents.policy import collate


def deeper(net: PolicyNet, blocks: int) -> PolicyNet:
    """``net`` with ``blocks`` residual blocks; the added ones are the identity until trained."""
    out = PolicyNet(net.shapes, NetConfig(channels=net.cfg.channels, blocks=blocks, hidden=net.cfg.hidden))
    out.load_state_dict(net.state_dict(), strict=False)
    for block in out.blocks[net.cfg.blocks :]:
        torch.nn.init.zeros_(block.c2.weight)
        torch.nn.init.zeros_(block.c2.bias)
    return out


def main(checkpoint: str, blocks: int, steps: int, lr: float, out: str) -> None:
    torch.set_num_threads(1)
    ck = torch.load(checkpoint, weights_only=False, map_location="cpu")
    buf = pickle.loads(ck["trainer"]["blob"].numpy().tobytes())["buffer"]
    train, held = buf[:36000], buf[36000:]
    cfg = ExpertConfig(init="pretrained:base-2p-160", steps_per_iteration=50, batch=256, lr=lr)
    tr = ExpertTrainer({"num_players": 2, "expansions": ("base",)}, cfg, seed=5)
    if blocks > tr.net.cfg.blocks:
        tr.net = deeper(tr.net, blocks)
        tr.opt = torch.optim.Adam(tr.net.parameters(), lr=lr)
    tr.buffer = train
    tile_actions = tr.shapes.tile_actions

    def held_out() -> dict:
        tr.net.eval()
        hits, follower, ce = [], [], []
        with torch.no_grad():
            for j in range(0, len(held), 64):
                rows = held[j : j + 64]
                b = collate([tr._expand(s) for s in rows])
                logp = torch.log_softmax(masked_logits(tr.net(*b.inputs())[0], b.mask), dim=1)
                t = torch.tensor([int(s["pi_index"][0]) for s in rows])
                hits += (logp.argmax(1) == t).tolist()
                follower += [int(s["pi_index"][0]) >= tile_actions for s in rows]
                ce += (-logp.gather(1, t[:, None]).squeeze(1)).tolist()
        h, f = np.array(hits), np.array(follower)
        return {"acc": h.mean(), "acc_place": h[~f].mean(), "acc_follower": h[f].mean(), "ce": float(np.mean(ce))}

    log = [{"step": 0, **held_out()}]
    print(log[-1], flush=True)
    t0 = time.process_time()
    for i in range(steps // 50):
        st = tr.update()
        log.append(
            {"step": (i + 1) * 50, "cpu": time.process_time() - t0, "train_loss": st["policy_loss"], **held_out()}
        )
        print(log[-1], flush=True)
    with open(out, "w") as fh:
        json.dump(log, fh, default=float)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
