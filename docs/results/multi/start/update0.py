"""Write the update-0 checkpoint of a training config: the warm start (run.init_weights) moved onto the
network, no PPO update.  ``python docs/results/multi/start/update0.py CONFIG OUT.pt [INIT_WEIGHTS]``
(run from the repository root with it on PYTHONPATH); evaluate OUT.pt like any checkpoint."""

import sys

import torch

from agents.checkpoint import save_checkpoint
from agents.config import load_config
from agents.ppo import SelfPlayTrainer
from agents.train import checkpoint_payload
from agents.transfer import input_names, load_source, transfer

cfg = load_config(sys.argv[1])
if len(sys.argv) > 3:
    cfg.run.init_weights = sys.argv[3]
torch.set_num_threads(cfg.run.torch_threads)
trainer = SelfPlayTrainer(cfg.env_kwargs(), cfg.ppo, seed=cfg.run.seed)
src, names = load_source(cfg.run.init_weights)
print("fresh:", transfer(src, names, trainer.net, input_names(cfg.env_kwargs(), trainer.shapes.seats)))
save_checkpoint(sys.argv[2], checkpoint_payload(trainer, cfg, 0.0))
