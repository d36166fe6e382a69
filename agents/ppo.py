"""Masked PPO with self-play against an opponent pool, optionally after imitating the greedy baseline.

The learner plays one seat of each of ``num_envs`` games (the seat rotates
with the game index and the episode count); the other seats are played by
opponents drawn from a pool: the random and greedy baselines, the current
network, and frozen snapshots of past networks.  Illegal actions are removed
from the distribution (their logits are set to the most negative float) and
the entropy bonus is computed over legal actions only.

Rollouts are batched across games: every game is first advanced to the
learner's next decision (baseline opponents act inline, network opponents in
one batched forward per network over all the games waiting for it), then the
learner decides in all ``num_envs`` games with one forward.  So a rollout
forward has ``num_envs`` samples, and ``steps_per_update`` is rounded up to a
multiple of ``num_envs``.

Reward (per learner decision): the change of ``own score - best opponent
score`` since the learner's previous decision, times ``score_scale``, plus
``win_bonus`` x (+1 win, 0 shared win, -1 loss) at the end of the game.

Imitation (``imitation_updates`` > 0): during the first updates the learner's
seat is played by the greedy one-ply baseline, and the update fits the
policy to greedy's choices (cross-entropy) and the value to the returns of
those games, instead of the PPO loss.  PPO then starts from a policy that
plays like greedy and a value function that knows what greedy's positions are
worth.

Update: each minibatch is cut into chunks of ``chunk`` samples of similar
board size (the boards are cropped to the played area, :func:`agents.policy.crop_region`),
each padded only to its own largest crop; the gradients of the chunks add up
to the minibatch's (gradient accumulation), so the maths is that of one
minibatch and the convolutions see far fewer empty cells.
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
from .policy import collate, sample_from_obs, shapes_from_env, with_action_features


@dataclass
class PPOConfig:
    # Defaults = configs/default.yaml (tests/test_agents.py keeps them equal), so a config that
    # leaves a key out gets the value of the documented default run.
    num_envs: int = 32
    steps_per_update: int = 4096  # learner decisions per update (over all games)
    epochs: int = 3
    minibatch: int = 256
    chunk: int = 64  # gradient-accumulation chunk (samples of similar board size); >= minibatch: no chunks
    crop: bool = True  # boards cropped to the played area (False: whole window, same outputs, more work)
    lr: float = 1e-3
    gamma: float = 0.999
    gae_lambda: float = 0.95
    clip: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    target_kl: float = 0.02  # > 0: an update stops early once a minibatch's approximate KL exceeds 1.5 x this
    score_scale: float = 0.05
    win_bonus: float = 1.0
    imitation_updates: int = 4  # first updates: the learner seat plays greedy and the net imitates it
    net: NetConfig = field(default_factory=NetConfig)
    # opponent pool: probabilities of each kind of opponent for a new game
    p_random: float = 0.0
    p_greedy: float = 0.6
    p_self: float = 0.2
    p_snapshot: float = 0.2
    snapshot_every: int = 3  # updates between snapshots
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
        self.imitator = GreedyPolicy(seed=seed + 3)  # plays the learner's seat while imitating
        self.updates = 0
        self.env_steps = 0  # every AEC step of every game (all seats)
        self.learner_steps = 0
        self.episodes = 0
        self.recent: list[dict[str, float]] = []  # finished-episode stats since the last update
        self._live = NetOpponent(self.net, "self")
        self._snapshot_nets: dict[int, NetOpponent] = {}
        self._game_state: list[dict[str, Any]] = [{} for _ in self.envs]
        self._obs_cache: dict[int, dict] = {}  # learner observations computed for the bootstrap
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
    @property
    def imitating(self) -> bool:
        return self.updates < self.cfg.imitation_updates

    def _over(self, i: int) -> bool:
        env = self.envs[i]
        return all(env.terminations.values()) or all(env.truncations.values())

    def _learner_obs(self, i: int) -> dict:
        obs = self._obs_cache.pop(i, None)
        if obs is None:
            env = self.envs[i]
            obs = with_action_features(env.observe(env.agent_selection), env)
        return obs

    @torch.no_grad()
    def collect(self) -> dict[str, list]:
        """Play until ``steps_per_update`` learner decisions are in the buffer (rounded up to a multiple of
        ``num_envs``); the last transition of every game is closed with its reward and bootstrap value."""
        buf: dict[str, list] = defaultdict(list)
        self.net.eval()
        crop = self.cfg.crop
        imitate = self.imitating
        n_games = len(self.envs)
        while len(buf["action"]) < self.cfg.steps_per_update:
            self._advance_all(buf)
            obs = [self._learner_obs(i) for i in range(n_games)]
            samples = [sample_from_obs(o, crop) for o in obs]
            batch = collate(samples)
            logits, v = self.net(*batch.inputs())
            ml = masked_logits(logits, batch.mask)
            if imitate:
                acts = torch.as_tensor([
                    int(self.imitator.act(self.envs[i].infos[self.envs[i].agent_selection], self.envs[i]))
                    for i in range(n_games)
                ])
                logp = torch.log_softmax(ml, dim=1).gather(1, acts[:, None]).squeeze(1)
            else:
                dist = torch.distributions.Categorical(logits=ml)
                acts = dist.sample()
                logp = dist.log_prob(acts)
            for i in range(n_games):
                self._settle(i, buf, terminal=False)
                self._game_state[i]["pending"] = len(buf["action"])
                buf["sample"].append(samples[i])
                buf["action"].append(int(acts[i]))
                buf["logp"].append(float(logp[i]))
                buf["value"].append(float(v[i]))
                buf["reward"].append(0.0)
                buf["done"].append(0.0)
                buf["game"].append(i)
                self._step(i, int(acts[i]))
                self.learner_steps += 1
        # Close the open transitions: advance each game to its learner's next decision (a game that
        # ends on the way is settled as terminal and restarted), then bootstrap from that state.
        self._advance_all(buf)
        boot = np.zeros(len(buf["action"]), dtype=np.float32)
        open_games = [i for i in range(n_games) if self._game_state[i]["pending"] is not None]
        if open_games:
            obs = {i: self._learner_obs(i) for i in open_games}
            _, v = self.net(*collate([sample_from_obs(obs[i], crop) for i in open_games]).inputs())
            for j, i in enumerate(open_games):
                st = self._game_state[i]
                pend = st["pending"]
                self._settle(i, buf, terminal=False)
                boot[pend] = float(v[j])
                st["pending"] = None
                self._obs_cache[i] = obs[i]  # the next collect starts from this same state
        buf["bootstrap"] = list(boot)
        return buf

    def _advance_all(self, buf: dict[str, list]) -> None:
        """Play every game until its learner must decide: baselines inline, network opponents batched
        per network.  A game that ends is settled (terminal reward) and restarted."""
        while True:
            waiting: dict[int, tuple[NetOpponent, list[int]]] = {}
            for i, env in enumerate(self.envs):
                while True:
                    if self._over(i):
                        self._settle(i, buf, terminal=True)
                        self.episodes += 1
                        self._reset_game(i)
                        continue
                    st = self._game_state[i]
                    agent = env.agent_selection
                    if env.possible_agents.index(agent) == st["seat"]:
                        break
                    actor = self._opponent(st["opponent"])
                    if isinstance(actor, NetOpponent):
                        waiting.setdefault(id(actor), (actor, []))[1].append(i)
                        break
                    obs = env.infos[agent] if not getattr(actor, "uses_observation", True) else env.observe(agent)
                    self._step(i, int(actor.act(obs, env)))
            if not waiting:
                return
            for actor, idx in waiting.values():
                self._net_step(actor, idx)

    def _step(self, i: int, action: int) -> None:
        self._obs_cache.pop(i, None)
        self.envs[i].step(action)
        self.env_steps += 1

    def _net_step(self, actor: NetOpponent, idx: list[int]) -> None:
        obs = [with_action_features(self.envs[i].observe(self.envs[i].agent_selection), self.envs[i]) for i in idx]
        batch = collate([sample_from_obs(o, self.cfg.crop) for o in obs])
        logits, _ = actor.net(*batch.inputs())
        acts = torch.distributions.Categorical(logits=masked_logits(logits, batch.mask)).sample().tolist()
        for i, a in zip(idx, acts, strict=True):
            self._step(i, int(a))

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

    def _chunks(self, mb: np.ndarray, samples: list[dict]) -> list[np.ndarray]:
        """The minibatch in chunks of ``cfg.chunk`` samples of similar board size (largest last)."""
        size = self.cfg.chunk
        if size >= len(mb):
            return [mb]
        area = np.array([samples[k]["board"].shape[1] * samples[k]["board"].shape[2] for k in mb])
        order = mb[np.argsort(area, kind="stable")]
        return [order[j : j + size] for j in range(0, len(order), size)]

    def update(self, buf: dict[str, list]) -> dict[str, float]:
        """One update: the PPO loss, or while imitating, cross-entropy to greedy's actions; plus the value
        loss and the entropy bonus.  Each minibatch's gradient is accumulated over its chunks."""
        adv, ret = self.advantages(buf)
        samples = buf["sample"]
        actions = torch.as_tensor(buf["action"])
        old_logp = torch.as_tensor(buf["logp"])
        adv_t = torch.as_tensor(adv)
        ret_t = torch.as_tensor(ret)
        c = self.cfg
        imitate = self.imitating
        n = len(actions)
        self.net.train()
        stats: dict[str, list[float]] = defaultdict(list)
        stop = False
        steps = 0
        for _ in range(c.epochs):
            if stop:
                break
            perm = self.rng.permutation(n)
            for start in range(0, n, c.minibatch):
                mb = perm[start : start + c.minibatch]
                a_mb = adv_t[mb]
                a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8) if len(mb) > 1 else a_mb
                norm_adv = dict(zip(mb.tolist(), a_mb.tolist(), strict=True))
                self.opt.zero_grad()
                parts: dict[str, float] = defaultdict(float)
                for ch in self._chunks(mb, samples):
                    w = len(ch) / len(mb)
                    batch = collate([samples[k] for k in ch])
                    logits, v = self.net(*batch.inputs())
                    ml = masked_logits(logits, batch.mask)
                    logp_all = torch.log_softmax(ml, dim=1)
                    act = actions[ch]
                    logp = logp_all.gather(1, act[:, None]).squeeze(1)
                    vloss = 0.5 * (v - ret_t[ch]).pow(2).mean()
                    ent = masked_entropy(logits, batch.mask).mean()
                    if imitate:
                        pg = -logp.mean()
                        parts["imitation_accuracy"] += w * float((ml.argmax(dim=1) == act).float().mean())
                    else:
                        a = torch.as_tensor([norm_adv[k] for k in ch.tolist()], dtype=torch.float32)
                        ratio = (logp - old_logp[ch]).exp()
                        pg = -torch.min(ratio * a, ratio.clamp(1 - c.clip, 1 + c.clip) * a).mean()
                        with torch.no_grad():
                            parts["approx_kl"] += w * float((old_logp[ch] - logp).mean())
                            parts["clip_frac"] += w * float(((ratio - 1).abs() > c.clip).float().mean())
                    loss = pg + c.value_coef * vloss - c.entropy_coef * ent
                    (loss * w).backward()
                    parts["policy_loss"] += w * float(pg.detach())
                    parts["value_loss"] += w * float(vloss.detach())
                    parts["entropy"] += w * float(ent.detach())
                nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.opt.step()
                steps += 1
                for k, val in parts.items():
                    stats[k].append(val)
                if c.target_kl > 0 and not imitate and parts["approx_kl"] > 1.5 * c.target_kl:
                    stop = True
                    break
        self.updates += 1
        if self.updates % c.snapshot_every == 0:
            self.take_snapshot()
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        out["mean_reward"] = float(np.mean(buf["reward"]))
        out["gradient_steps"] = float(steps)
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
            "baseline_rngs": [self.random_policy.rng.bit_generator.state, self.greedy_policy.rng.bit_generator.state,
                              self.imitator.rng.bit_generator.state],
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
        self.imitator.rng.bit_generator.state = rest["baseline_rngs"][2]
        self._obs_cache = {}
        self.envs = [e for e, _ in rest["games"]]
        self._game_state = [st for _, st in rest["games"]]
