"""Masked PPO with self-play against an opponent pool.

The learner plays one seat of each of ``num_envs`` games (the seat rotates
with the game index and the episode count); the other seats are played by
opponents drawn from a pool: the random and greedy baselines, the current
network, and frozen snapshots of past networks.  Illegal actions are removed
from the distribution (their logits are set to the most negative float) and
the entropy bonus is computed over legal actions only.

Reward (per learner decision): the change of ``own score - best opponent
score`` since the learner's previous decision, times ``score_scale``, plus
``win_bonus`` x (+1 win, 0 shared win, -1 loss) at the end of the game.
"""

from __future__ import annotations

import pickle
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from carc_env.baselines import GreedyPolicy, RandomPolicy

from .network import NetConfig, NetShapes, PolicyNet, masked_entropy, masked_logits
from .policy import obs_to_tensors, pad_placements, shapes_from_env, with_action_features


@dataclass
class PPOConfig:
    # Defaults = configs/default.yaml (tests/test_agents.py keeps them equal), so a config that
    # leaves a key out gets the value of the documented default run.
    num_envs: int = 16
    steps_per_update: int = 1024  # learner decisions per update (over all games)
    epochs: int = 3
    minibatch: int = 256
    lr: float = 3e-3
    gamma: float = 0.999
    gae_lambda: float = 0.99
    clip: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    score_scale: float = 0.05
    win_bonus: float = 1.0
    net: NetConfig = field(default_factory=NetConfig)
    # opponent pool: probabilities of each kind of opponent for a new game
    p_random: float = 0.3
    p_greedy: float = 0.2
    p_self: float = 0.2
    p_snapshot: float = 0.3
    snapshot_every: int = 10  # updates between snapshots
    max_snapshots: int = 8


class NetOpponent:
    """A frozen (or the live) network; it always samples its actions."""

    def __init__(self, net: PolicyNet, name: str) -> None:
        self.net = net
        self.name = name


class SelfPlayTrainer:
    def __init__(self, env_kwargs: dict[str, Any], cfg: PPOConfig, seed: int = 0, net: PolicyNet | None = None):
        import carc_env

        self.env_kwargs = dict(env_kwargs)
        self.cfg = cfg
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.envs = [carc_env.raw_env(**self.env_kwargs) for _ in range(cfg.num_envs)]
        self.shapes: NetShapes = shapes_from_env(self.envs[0])
        self.net = net or PolicyNet(self.shapes, cfg.net)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.snapshots: dict[int, dict[str, torch.Tensor]] = {}
        self._next_snapshot = 0
        self.random_policy = RandomPolicy(seed=seed + 1)
        self.greedy_policy = GreedyPolicy(seed=seed + 2)
        self.updates = 0
        self.env_steps = 0  # every AEC step of every game (all seats)
        self.learner_steps = 0
        self.episodes = 0
        self.recent: list[dict[str, float]] = []  # finished-episode stats since the last update
        self._live = NetOpponent(self.net, "self")
        self._snapshot_nets: dict[int, NetOpponent] = {}
        self._game_state: list[dict[str, Any]] = [{} for _ in self.envs]
        for i in range(len(self.envs)):
            self._reset_game(i)

    # ------------------------------------------------------------ opponents
    # A game's opponent is a key: "random", "greedy", "self" or a snapshot id
    # (int).  Keys, not objects, so that a checkpoint can store running games.
    def _pick_opponent(self) -> str | int:
        c = self.cfg
        kinds = ["random", "greedy", "self", "snapshot"]
        p = np.array([c.p_random, c.p_greedy, c.p_self, c.p_snapshot if self.snapshots else 0.0])
        kind = kinds[int(self.rng.choice(4, p=p / p.sum()))]
        if kind != "snapshot":
            return kind
        ids = sorted(self.snapshots)
        return ids[int(self.rng.integers(len(ids)))]

    def _opponent(self, key: str | int) -> Any:
        if key == "random":
            return self.random_policy
        if key == "greedy":
            return self.greedy_policy
        if key == "self":
            return self._live
        net = self._snapshot_nets.get(key)
        if net is None:
            # Built lazily (and again after a resume, which does not store the built nets): the
            # construction's random initialisation must not draw from the global torch generator,
            # or every later sample would depend on when the net happened to be built.
            with torch.random.fork_rng(devices=[]):
                net = PolicyNet(self.shapes, self.cfg.net)
            net.load_state_dict(self.snapshots[key])
            net.eval()
            net = self._snapshot_nets[key] = NetOpponent(net, f"snapshot{key}")
        return net

    def take_snapshot(self) -> None:
        self.snapshots[self._next_snapshot] = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        self._next_snapshot += 1
        in_use = {st["opponent"] for st in self._game_state}
        while len(self.snapshots) > self.cfg.max_snapshots:
            old = min(k for k in self.snapshots)
            if old in in_use:  # still playing: drop it when that game ends
                break
            del self.snapshots[old]
            self._snapshot_nets.pop(old, None)

    # ---------------------------------------------------------------- games
    def _reset_game(self, i: int) -> None:
        env = self.envs[i]
        env.reset(seed=int(self.rng.integers(2**31)))
        n = len(env.possible_agents)
        st = self._game_state[i]
        st["seat"] = (i + self.episodes) % n
        st["opponent"] = self._pick_opponent()
        st["pending"] = None  # index into the buffer of the learner's last transition
        st["diff"] = 0.0

    def _score_diff(self, i: int) -> float:
        scores = self.envs[i].game.scores
        seat = self._game_state[i]["seat"]
        return float(scores[seat] - max(s for p, s in enumerate(scores) if p != seat))

    def _settle(self, i: int, buf: dict[str, list], terminal: bool) -> None:
        """Credit the reward since the learner's last decision to that transition."""
        st = self._game_state[i]
        diff = self._score_diff(i)
        if st["pending"] is not None:
            r = (diff - st["diff"]) * self.cfg.score_scale
            if terminal:
                scores = self.envs[i].game.scores
                seat = st["seat"]
                best = max(scores)
                won = scores[seat] == best
                shared = won and scores.count(best) > 1
                outcome = 0.0 if shared else (1.0 if won else -1.0)
                r += self.cfg.win_bonus * outcome
                buf["done"][st["pending"]] = 1.0
                self.recent.append(
                    {"win": float(won and not shared), "tie": float(shared), "margin": diff, "score": scores[seat],
                     "opponent": str(st["opponent"])}
                )
            buf["reward"][st["pending"]] += r
        st["diff"] = diff

    # -------------------------------------------------------------- rollout
    @torch.no_grad()
    def collect(self) -> dict[str, Any]:
        buf: dict[str, list] = defaultdict(list)
        self.net.eval()
        target = self.cfg.steps_per_update
        while len(buf["action"]) < target:
            groups: dict[int, list[int]] = defaultdict(list)
            actors: dict[int, Any] = {}
            for i, env in enumerate(self.envs):
                st = self._game_state[i]
                if all(env.terminations.values()) or all(env.truncations.values()):
                    self._settle(i, buf, terminal=True)
                    self.episodes += 1
                    self._reset_game(i)
                agent = env.agent_selection
                seat = env.possible_agents.index(agent)
                actor: Any = "learner" if seat == st["seat"] else self._opponent(st["opponent"])
                actors[id(actor)] = actor
                groups[id(actor)].append(i)
            for key, idx in groups.items():
                actor = actors[key]
                if actor == "learner":
                    self._learner_step(idx, buf)
                elif isinstance(actor, NetOpponent):
                    self._net_step(actor, idx)
                else:
                    for i in idx:
                        env = self.envs[i]
                        obs = env.observe(env.agent_selection)
                        self._step(i, int(actor.act(obs, env)))
        # Close the open transitions: advance each game to its learner's next
        # decision (or the end) so that the last reward and bootstrap value are right.
        boot = np.zeros(len(buf["action"]), dtype=np.float32)
        for i in range(len(self.envs)):
            st = self._game_state[i]
            if st["pending"] is None:
                continue
            self._advance_to_learner(i)
            env = self.envs[i]
            terminal = all(env.terminations.values()) or all(env.truncations.values())
            pend = st["pending"]
            self._settle(i, buf, terminal=terminal)
            if not terminal:
                obs = with_action_features(env.observe(env.agent_selection), env)
                _, v = self.net(*obs_to_tensors([obs]).inputs())
                boot[pend] = float(v[0])
            else:
                self.episodes += 1
                self._reset_game(i)
            st["pending"] = None
        buf["bootstrap"] = list(boot)
        return buf

    def _advance_to_learner(self, i: int) -> None:
        env = self.envs[i]
        st = self._game_state[i]
        while not (all(env.terminations.values()) or all(env.truncations.values())):
            seat = env.possible_agents.index(env.agent_selection)
            if seat == st["seat"]:
                return
            actor = self._opponent(st["opponent"])
            if isinstance(actor, NetOpponent):
                self._net_step(actor, [i])
            else:
                self._step(i, int(actor.act(env.observe(env.agent_selection), env)))

    def _step(self, i: int, action: int) -> None:
        self.envs[i].step(action)
        self.env_steps += 1

    def _net_step(self, actor: NetOpponent, idx: list[int]) -> None:
        obs = [with_action_features(self.envs[i].observe(self.envs[i].agent_selection), self.envs[i]) for i in idx]
        batch = obs_to_tensors(obs)
        logits, _ = actor.net(*batch.inputs())
        acts = torch.distributions.Categorical(logits=masked_logits(logits, batch.mask)).sample().tolist()
        for i, a in zip(idx, acts, strict=True):
            self._step(i, int(a))

    def _learner_step(self, idx: list[int], buf: dict[str, list]) -> None:
        obs = [with_action_features(self.envs[i].observe(self.envs[i].agent_selection), self.envs[i]) for i in idx]
        batch = obs_to_tensors(obs)
        logits, v = self.net(*batch.inputs())
        dist = torch.distributions.Categorical(logits=masked_logits(logits, batch.mask))
        acts = dist.sample()
        logp = dist.log_prob(acts)
        for j, i in enumerate(idx):
            self._settle(i, buf, terminal=False)
            st = self._game_state[i]
            st["pending"] = len(buf["action"])
            buf["board"].append(batch.board[j])
            buf["globals"].append(batch.globs[j])
            buf["spots"].append(batch.spots[j])
            buf["windows"].append(batch.windows[j])
            buf["place_index"].append(torch.from_numpy(obs[j]["place_index"]))
            buf["place_features"].append(torch.from_numpy(obs[j]["place_features"]))
            buf["mask"].append(batch.mask[j])
            buf["action"].append(int(acts[j]))
            buf["logp"].append(float(logp[j]))
            buf["value"].append(float(v[j]))
            buf["reward"].append(0.0)
            buf["done"].append(0.0)
            buf["game"].append(i)
            self._step(i, int(acts[j]))
            self.learner_steps += 1

    # --------------------------------------------------------------- update
    def advantages(self, buf: dict[str, list]) -> tuple[np.ndarray, np.ndarray]:
        n = len(buf["action"])
        rewards = np.asarray(buf["reward"], dtype=np.float32)
        values = np.asarray(buf["value"], dtype=np.float32)
        dones = np.asarray(buf["done"], dtype=np.float32)
        boot = np.asarray(buf["bootstrap"], dtype=np.float32)
        games = np.asarray(buf["game"])
        adv = np.zeros(n, dtype=np.float32)
        c = self.cfg
        for gi in np.unique(games):
            idx = np.nonzero(games == gi)[0]
            last = 0.0
            for k in range(len(idx) - 1, -1, -1):
                t = idx[k]
                if dones[t]:
                    next_v, last = 0.0, 0.0
                elif k == len(idx) - 1:
                    next_v = boot[t]
                else:
                    next_v = values[idx[k + 1]]
                delta = rewards[t] + c.gamma * next_v - values[t]
                last = delta + c.gamma * c.gae_lambda * (1.0 - dones[t]) * last
                adv[t] = last
        return adv, adv + values

    def update(self, buf: dict[str, list]) -> dict[str, float]:
        adv, ret = self.advantages(buf)
        boards = torch.stack(buf["board"])
        globs = torch.stack(buf["globals"])
        spots = torch.stack(buf["spots"])
        windows = torch.stack(buf["windows"])
        masks = torch.stack(buf["mask"])
        actions = torch.as_tensor(buf["action"])
        old_logp = torch.as_tensor(buf["logp"])
        adv_t = torch.as_tensor(adv)
        ret_t = torch.as_tensor(ret)
        c = self.cfg
        n = len(actions)
        self.net.train()
        stats: dict[str, list[float]] = defaultdict(list)
        for _ in range(c.epochs):
            perm = torch.as_tensor(self.rng.permutation(n))
            for start in range(0, n, c.minibatch):
                mb = perm[start : start + c.minibatch]
                p_idx, p_feat = pad_placements([buf["place_index"][k] for k in mb.tolist()],
                                               [buf["place_features"][k] for k in mb.tolist()])
                logits, v = self.net(boards[mb], globs[mb], spots[mb], p_idx, p_feat, windows[mb])
                ml = masked_logits(logits, masks[mb])
                logp_all = torch.log_softmax(ml, dim=1)
                logp = logp_all.gather(1, actions[mb, None]).squeeze(1)
                a = adv_t[mb]
                a = (a - a.mean()) / (a.std() + 1e-8) if len(mb) > 1 else a
                ratio = (logp - old_logp[mb]).exp()
                pg = -torch.min(ratio * a, ratio.clamp(1 - c.clip, 1 + c.clip) * a).mean()
                vloss = 0.5 * (v - ret_t[mb]).pow(2).mean()
                ent = masked_entropy(logits, masks[mb]).mean()
                loss = pg + c.value_coef * vloss - c.entropy_coef * ent
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.opt.step()
                with torch.no_grad():
                    stats["policy_loss"].append(float(pg))
                    stats["value_loss"].append(float(vloss))
                    stats["entropy"].append(float(ent))
                    stats["approx_kl"].append(float((old_logp[mb] - logp).mean()))
                    stats["clip_frac"].append(float(((ratio - 1).abs() > c.clip).float().mean()))
        self.updates += 1
        if self.updates % c.snapshot_every == 0:
            self.take_snapshot()
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        out["mean_reward"] = float(np.mean(buf["reward"]))
        return out

    def pop_episode_stats(self) -> dict[str, float]:
        rec, self.recent = self.recent, []
        if not rec:
            return {}
        out = {"episodes": float(len(rec)), "train_win_rate": float(np.mean([r["win"] for r in rec])),
               "train_margin": float(np.mean([r["margin"] for r in rec]))}
        for name in ("random", "greedy"):
            sub = [r for r in rec if r["opponent"] == name]
            if sub:
                out[f"train_win_rate_vs_{name}"] = float(np.mean([r["win"] for r in sub]))
        return out

    # ------------------------------------------------------------ state i/o
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly where training stopped, running games included.

        Tensors stay tensors; the rest (generators, running games) is one pickled
        blob stored as a uint8 tensor, so the file loads with ``weights_only=True``.
        """
        rest = {
            "next_snapshot": self._next_snapshot,
            "updates": self.updates,
            "env_steps": self.env_steps,
            "learner_steps": self.learner_steps,
            "episodes": self.episodes,
            "rng": self.rng.bit_generator.state,
            "baseline_rngs": [self.random_policy.rng.bit_generator.state, self.greedy_policy.rng.bit_generator.state],
            "games": list(zip(self.envs, self._game_state, strict=True)),
        }
        return {
            "net": self.net.state_dict(),
            "opt": self.opt.state_dict(),
            "snapshots": self.snapshots,
            "torch_rng": torch.get_rng_state(),
            "blob": torch.frombuffer(bytearray(pickle.dumps(rest)), dtype=torch.uint8),
        }

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        rest = pickle.loads(sd["blob"].numpy().tobytes())
        if len(rest["games"]) != len(self.envs):
            raise ValueError(f"checkpoint has {len(rest['games'])} games, the config asks for {len(self.envs)}")
        self.net.load_state_dict(sd["net"])
        self.opt.load_state_dict(sd["opt"])
        self.snapshots = dict(sd["snapshots"])
        self._snapshot_nets = {}
        torch.set_rng_state(sd["torch_rng"])
        self._next_snapshot = rest["next_snapshot"]
        self.updates = rest["updates"]
        self.env_steps = rest["env_steps"]
        self.learner_steps = rest["learner_steps"]
        self.episodes = rest["episodes"]
        self.rng.bit_generator.state = rest["rng"]
        self.random_policy.rng.bit_generator.state = rest["baseline_rngs"][0]
        self.greedy_policy.rng.bit_generator.state = rest["baseline_rngs"][1]
        self.envs = [e for e, _ in rest["games"]]
        self._game_state = [st for _, st in rest["games"]]
