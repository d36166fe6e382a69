"""Masked PPO on the batched vector env, CleanRL-style: one file, read top to bottom.

The learner plays one seat of every game in a :class:`carc_env.env.vector.CarcassonneVectorEnv`
against random opponents (``opponents=RandomPolicy()``): rewards are the learner's, ``(num_envs,)``.
The env resets finished games in the same step (``metadata["autoreset_mode"]`` is same-step), so every
row of every batch is a live decision with at least one legal action, and the GAE below needs no
special case: ``dones[t + 1]`` says that step ``t`` ended its game (a game never truncates, so a finished
game is never bootstrapped).

The policy is small on purpose: a convolution over the board tensor scores every tile placement in place
(the placement actions are laid out ``rotation x row x col``, as the convolution's 4 output channels), a
linear head scores the other actions, and illegal actions get a logit of -1e9 before the softmax.

Run::

    python docs/examples/masked_ppo.py --iterations 20
    python docs/examples/masked_ppo.py --num-envs 4 --num-steps 16 --iterations 2   # a smoke test

It prints one line per iteration (the names of the PPO paper and CleanRL: ``approx_kl``, ``clipfrac``,
``explained_variance``).  The full trainer with the same ideas, scaled up, is ``scripts/train.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from carc_env import RandomPolicy
from carc_env.env.vector import CarcassonneVectorEnv


@dataclasses.dataclass
class Args:
    seed: int = 1
    """seed of the games, the opponents and torch"""
    num_envs: int = 8
    """games played side by side"""
    num_steps: int = 64
    """learner decisions per game in each rollout"""
    iterations: int = 10
    """rollout + update cycles"""
    learning_rate: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward: str = "score_diff"
    """the env's reward option: "win_loss", "score_diff" (final score margin) or "score_delta" (per turn)"""


class Agent(nn.Module):
    def __init__(self, env: CarcassonneVectorEnv, hidden: int = 32) -> None:
        super().__init__()
        channels, self.rows, self.cols = env.single_observation_space["board"].shape
        n_globals = env.single_observation_space["globals"].shape[0]
        self.n_place = env.codec.ranges["tile"].size  # 4 * rows * cols
        n_other = env.single_action_space.n - self.n_place
        self.trunk = nn.Sequential(
            nn.Conv2d(channels, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, hidden, 3, padding=1), nn.ReLU()
        )
        self.place = nn.Conv2d(hidden, 4, 1)  # one logit per (rotation, row, col)
        self.vector = nn.Sequential(nn.Linear(hidden + n_globals, hidden), nn.ReLU())
        self.other = nn.Linear(hidden, n_other)
        self.value = nn.Linear(hidden, 1)

    def features(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        fmap = self.trunk(obs["board"].float())
        vec = self.vector(torch.cat([fmap.mean(dim=(2, 3)), obs["globals"]], dim=1))
        return fmap, vec

    def get_value(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.value(self.features(obs)[1]).squeeze(1)

    def get_action_and_value(
        self, obs: dict[str, torch.Tensor], action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        fmap, vec = self.features(obs)
        logits = torch.cat([self.place(fmap).flatten(1), self.other(vec)], dim=1)
        logits = logits.masked_fill(obs["action_mask"] == 0, -1e9)  # illegal actions: never sampled
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(vec).squeeze(1)


def to_torch(obs: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.array(obs[k])) for k in ("board", "globals", "action_mask")}


def main(args: Args) -> list[dict[str, float]]:
    torch.manual_seed(args.seed)
    envs = CarcassonneVectorEnv(args.num_envs, opponents=RandomPolicy(seed=args.seed), reward=args.reward)
    agent = Agent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    space = envs.single_observation_space
    obs_buf = {
        k: torch.zeros((T, N, *space[k].shape), dtype=torch.float32 if k == "globals" else torch.uint8)
        for k in ("board", "globals")
    }
    obs_buf["action_mask"] = torch.zeros((T, N, envs.single_action_space.n), dtype=torch.int8)
    actions = torch.zeros((T, N), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((T, N)) for _ in range(4))

    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = to_torch(next_obs)
    next_done = torch.zeros(N)
    log, games, wins = [], 0, 0
    start = time.time()
    for iteration in range(1, args.iterations + 1):
        for step in range(T):
            for k in obs_buf:
                obs_buf[k][step] = next_obs[k]
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value
            obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward)
            next_obs, next_done = to_torch(obs), torch.as_tensor(terminations | truncations, dtype=torch.float32)
            if terminations.any():
                done = np.flatnonzero(terminations)
                games += len(done)
                wins += int(infos["winners"][done, infos["final_learner_seat"][done]].sum())

        with torch.no_grad():  # generalised advantage estimation, backwards
            next_value = agent.get_value(next_obs)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(N)
            for t in reversed(range(T)):
                nextnonterminal = 1.0 - (next_done if t == T - 1 else dones[t + 1])
                nextvalues = next_value if t == T - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = {k: v.reshape(T * N, *v.shape[2:]) for k, v in obs_buf.items()}
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        batch_size = T * N
        minibatch_size = batch_size // args.num_minibatches
        clipfracs = []
        for _epoch in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for lo in range(0, batch_size, minibatch_size):
                mb = order[lo : lo + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    {k: v[mb] for k, v in b_obs.items()}, b_actions[mb]
                )
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        var_y = b_returns.var()
        explained_var = float("nan") if var_y == 0 else float(1 - (b_returns - b_values).var() / var_y)
        row = {
            "iteration": iteration,
            "policy_loss": pg_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(),
            "clipfrac": float(np.mean(clipfracs)),
            "explained_variance": explained_var,
            "games": games,
            "win_rate": wins / games if games else float("nan"),
            "steps_per_s": iteration * batch_size / (time.time() - start),
        }
        log.append(row)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    envs.close()
    return log


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse_args())
