"""Masked PPO with self-play against an opponent pool, optionally after imitating the greedy baseline.

Read it like CleanRL's ``ppo.py``: :class:`Rollout` is the preallocated
storage (``rounds x num_envs`` arrays), and each phase of an iteration is one
method of :class:`SelfPlayTrainer`: :meth:`~SelfPlayTrainer.collect` (play until
the storage is full), :meth:`~SelfPlayTrainer.advantages` (GAE),
:meth:`~SelfPlayTrainer.update` (the clipped PPO loss over minibatches); the
metrics have the usual names (``policy_loss``, ``value_loss``, ``entropy``,
``approx_kl`` and ``old_approx_kl`` (CleanRL's two estimators), ``clipfrac``,
``explained_variance``).  The ``target_kl`` early stop reads ``old_approx_kl``
(the mean of old minus new log-probability), the estimator the recipe's
``target_kl`` was tuned with.

Games.  The learner plays one seat of each of ``num_envs`` games (the seat
rotates with the game index and the episode count); the other seats are played
by opponents drawn from a pool: the random and greedy baselines, the current
network, and frozen snapshots of past networks.  The games run on the compiled
engine where it covers the configuration (:mod:`agents.games`: one
:class:`~carc_env.fast.engine.FastBatch`; observations with their action
features, masks, greedy decisions and steps are kernel calls over all the games
that need them, and no Python ``Game`` is built), else on the Python engine.

A rollout has ``rounds = ceil(steps_per_update / num_envs)`` rounds.  A round
first advances every game to its learner's next decision (every game waiting
for an opponent makes that opponent's decision: greedy in one batched kernel
call, random from the masks, each network in one batched forward; repeated
until every learner decides; a game that ends on the way is settled and
restarted), then the learner decides in all ``num_envs`` games with one forward.
So column ``j`` of the storage is the learner's decisions in game slot ``j``, in
order, across the games played there.

Illegal actions are removed from the distribution (their logits are set to the
most negative float) and the entropy bonus is computed over legal actions only;
the update computes the policy terms over each decision's legal actions alone
(:func:`agents.network.legal_logits`), not over the whole action space.

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
minibatch and the convolutions see far fewer empty cells.  With
``parallel_update`` and rollout helpers (``rollout_workers`` > 1, the default
run) each process computes that gradient over its own games' decisions in the
minibatch on one torch thread (:meth:`SelfPlayTrainer.grad_part`), and this one
adds them up and takes the optimiser step.
"""

from __future__ import annotations

import math
import pickle
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from carc_env.baselines import GreedyPolicy, RandomPolicy

from .games import make_games
from .network import NetConfig, NetShapes, PolicyNet, legal_exp, legal_logits, masked_logits
from .policy import collate, legal_actions, sample_from_obs, shapes_from_env
from .shards import ShardPool, shard_sizes


@dataclass
class PPOConfig:
    # Defaults = configs/default.yaml (tests/agents/test_agents.py keeps them equal), so a config that
    # leaves a key out gets the value of the documented default run.
    num_envs: int = 32
    steps_per_update: int = 4096  # learner decisions per update (over all games)
    epochs: int = 2
    minibatch: int = 256
    chunk: int = 64  # gradient-accumulation chunk (samples of similar board size); >= minibatch: no chunks
    crop: bool = True  # boards cropped to the played area (False: whole window, same outputs, more work)
    lr: float = 1e-3
    # > 0: the learning rate falls linearly from lr to lr_final over this many updates after the imitation
    # ones, then stays at lr_final (a quieter last stretch: the last updates' networks differ less); 0: lr throughout
    lr_decay_updates: int = 0
    lr_final: float = 1e-4
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
    # ... against a fixed player of scripts/evaluate.py's specs (``player``), e.g. "mcts:1000": the pool's
    # search opponent.  It decides from each game's env (obs, env): the Python engine's env, or on the compiled
    # engine the game's FastMatch (its reference Game replayed on demand); one count of players.
    p_player: float = 0.0
    player: str = ""
    # a ladder of stronger pool players after ``player`` (e.g. ["mcts:600", "mcts:1000"]): the pool's player moves
    # one rung up once the learner's (sampling) win rate against it over the last ladder_window updates is at
    # least ladder_win_rate, so that the search it meets stays near an even game while it gets stronger
    player_ladder: list[str] = field(default_factory=list)
    ladder_win_rate: float = 0.5
    ladder_window: int = 5  # updates on one rung before it may move up, and the span of the win rate
    # > 0: learn from the pool player's own decisions too: its choices in its games against the learner, seen from
    # its seat, are targets of a cross entropy added to the loss with this weight (a search opponent's moves are
    # a teacher's, got for free while PPO plays against it); 0: the player is only an opponent
    imitate_player: float = 0.0
    snapshot_every: int = 3  # updates between snapshots
    max_snapshots: int = 8
    # mixed tables (game.num_players a list): the relative chance of each listed count for a new game
    # ([] = every count alike); e.g. [3, 1, 1, 1] over [2, 3, 4, 5] plays half the games at 2 players
    count_weights: list[float] = field(default_factory=list)
    # > 0: add anchor_coef x KL(start || network) over the learner's decisions to the loss, the start being
    # the network the run began from (run.init_weights): a warm start stays near what it already plays
    anchor_coef: float = 0.0
    anchor_counts: list[int] = field(default_factory=list)  # the player counts whose decisions it pulls ([] = all)
    # processes that play a rollout's games: 1 = this one plays all num_envs; k > 1 = the games split in k shards
    # played at the same time, this process's and k - 1 helpers' (agents/shards.py): other random streams than 1
    rollout_workers: int = 2
    # with rollout_workers > 1: every rollout process computes the update's gradients too, each over the decisions
    # of its own games in every minibatch (one torch thread each), and this process sums them: the update uses both
    # cores as the rollout does (False: this process alone, on run.torch_threads threads; so it is with anchor_coef > 0,
    # whose start network only this process holds)
    parallel_update: bool = True


class NetOpponent:
    """A frozen (or the live) network; it always samples its actions."""

    def __init__(self, net: PolicyNet, name: str) -> None:
        self.net = net
        self.name = name


class Rollout:
    """The storage of one rollout: ``rounds x num_envs`` preallocated arrays (row = round, column = game
    slot) and the training samples (cropped boards of varying size, so a list, round-major)."""

    def __init__(self, rounds: int, n: int) -> None:
        self.rounds, self.n = rounds, n
        self.actions = np.zeros((rounds, n), dtype=np.int64)
        self.logprobs = np.zeros((rounds, n), dtype=np.float32)
        self.values = np.zeros((rounds, n), dtype=np.float32)
        self.rewards = np.zeros((rounds, n), dtype=np.float32)
        self.dones = np.zeros((rounds, n), dtype=np.float32)  # 1: the game ended after this decision
        self.players = np.zeros((rounds, n), dtype=np.int64)  # the player count of the game of each decision
        self.next_values = np.zeros(n, dtype=np.float32)  # value of each slot's state after the last round
        self.samples: list[dict] = []
        # ppo.imitate_player: the pool player's decisions (from its seat) and its choices, in the order played
        self.player_samples: list[dict] = []
        self.player_actions: list[int] = []

    def __len__(self) -> int:
        return self.rounds * self.n

    @staticmethod
    def join(parts: list[Rollout]) -> Rollout:
        """The rollouts of shards of the game slots (same rounds) as one: their columns side by side,
        their samples round-major (round ``t``: every part's ``t``-th row of samples, in part order)."""
        rounds = parts[0].rounds
        if any(p.rounds != rounds for p in parts):
            raise ValueError(f"shards with different rounds: {[p.rounds for p in parts]}")
        out = Rollout(rounds, sum(p.n for p in parts))
        for name in ("actions", "logprobs", "values", "rewards", "dones", "players"):
            setattr(out, name, np.concatenate([getattr(p, name) for p in parts], axis=1))
        out.next_values = np.concatenate([p.next_values for p in parts])
        out.samples = [s for t in range(rounds) for p in parts for s in p.samples[t * p.n : (t + 1) * p.n]]
        out.player_samples = [s for p in parts for s in p.player_samples]
        out.player_actions = [a for p in parts for a in p.player_actions]
        return out


class SelfPlayTrainer:
    def __init__(self, env_kwargs: dict[str, Any], cfg: PPOConfig, seed: int = 0, net: PolicyNet | None = None):
        self.env_kwargs = dict(env_kwargs)
        self.cfg = cfg
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        # the game slots this process plays: all of them, or the first shard (agents/shards.py)
        self.n_local = shard_sizes(cfg.num_envs, cfg.rollout_workers)[0]
        self._pool: ShardPool | None = None  # the helper processes of the other shards, from the first rollout
        self._pool_states: list[bytes] | None = None  # their states from a checkpoint, until they start
        self._pool_lost = ""  # why a helper ended mid-run (its games are gone: only a checkpoint can go on)
        self._ended_pools_cpu = 0.0  # the CPU seconds of helper processes that have ended
        self._layout: list[int] = []  # the game slots of each shard of the last sharded rollout (ppo.parallel_update)
        self.last_roll: Rollout | None = None  # a helper's last rollout, whose decisions its gradient parts use
        self.games = make_games(self.env_kwargs, self.n_local, weights=cfg.count_weights or None)
        net_shapes = getattr(self.games, "net_shapes", None)  # mixed player counts: the seat-padded layout
        self.shapes: NetShapes = net_shapes() if net_shapes else shapes_from_env(self.games.spec_env())
        self.net = net or PolicyNet(self.shapes, cfg.net)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.snapshots: dict[int, dict[str, torch.Tensor]] = {}
        self._next_snapshot = 0
        self.random_policy = RandomPolicy(seed=seed + 1)
        self.greedy_policy = GreedyPolicy(seed=seed + 2)
        self.imitator = GreedyPolicy(seed=seed + 3)  # plays the learner's seat while imitating
        self.rung = 0  # the pool player's rung: 0 = ppo.player, k = ppo.player_ladder[k - 1]
        self.ladder_log: list[tuple[float, int]] = []  # (wins, games) against it per update since it moved up
        self.player_opponent = self._make_player() if cfg.p_player > 0 else None  # ppo.player
        self.updates = 0
        self.stop_reason = ""  # why agents.train.train stopped before its goal ("" = it did not: run.cpu_budget)
        self.env_steps = 0  # every decision of every game (all seats)
        self.learner_steps = 0
        self.episodes = 0
        self.recent: list[dict[str, float]] = []  # finished-episode stats since the last update
        self._live = NetOpponent(self.net, "self")
        self._snapshot_nets: dict[int, NetOpponent] = {}
        self.anchor: PolicyNet | None = None  # the start network of ppo.anchor_coef (set_anchor)
        n = self.n_local
        self.seat = np.zeros(n, dtype=np.int64)  # the learner's seat in each game
        self.opponent: list[str | int] = [""] * n  # "random", "greedy", "self", "player" or a snapshot id
        self.last_diff = np.zeros(n, dtype=np.float64)  # score difference at the learner's last decision
        self.pending = np.full(n, -1, dtype=np.int64)  # round of each game's open transition (-1: none)
        for i in range(n):
            self._reset_game(i)

    @property
    def engine(self) -> str:
        """The engine the training games run on (``"numba"`` or ``"python"``)."""
        return self.games.engine

    @property
    def envs(self) -> list[Any]:
        """The Python engine's envs (empty on the compiled engine)."""
        return list(getattr(self.games, "envs", []))

    # ------------------------------------------------------------ opponents
    # A game's opponent is a key: "random", "greedy", "self", "player" or a snapshot id
    # (int).  Keys, not objects, so that a checkpoint can store running games.
    def _make_player(self) -> Any:
        """The pool's fixed player (``ppo.player``), seeded from the trainer's seed; only where its games can
        give it an env to decide from (one count of players, on either engine: ``agents.games``)."""
        from .players import make_player

        if not hasattr(self.games, "play"):
            raise ValueError(
                f"ppo.p_player: the pool's player {self.cfg.player!r} sits at one count of players; these games "
                "mix several (give game.num_players one count)"
            )
        return make_player(self.player_spec, self.env_kwargs, self.seed + 4 + self.rung)

    @property
    def player_spec(self) -> str:
        """The pool player's spec now: ``ppo.player``, or the rung of ``ppo.player_ladder`` the run has reached."""
        return ([self.cfg.player] + list(self.cfg.player_ladder))[self.rung]

    def set_rung(self, rung: int) -> None:
        """Put the pool's player on ``rung`` of the ladder (a new player, seeded by its rung).  Games against the
        old rung that are still running go on against the new one."""
        if rung != self.rung:
            if not 0 <= rung <= len(self.cfg.player_ladder):
                raise ValueError(f"rung {rung} is not on ppo.player_ladder (0 to {len(self.cfg.player_ladder)})")
            self.rung = rung
            self.ladder_log = []
            self.player_opponent = self._make_player() if self.cfg.p_player > 0 else None

    def _climb(self, rec: list[dict[str, Any]]) -> None:
        """Log this update's games against the pool's player; move up a rung when the last ``ladder_window``
        updates on this rung won at least ``ladder_win_rate`` of them."""
        c = self.cfg
        if not c.player_ladder or self.rung == len(c.player_ladder):
            return
        games = [r["win"] for r in rec if r["opponent"] == "player"]
        self.ladder_log = (self.ladder_log + [(float(sum(games)), len(games))])[-c.ladder_window :]
        wins, played = sum(w for w, _ in self.ladder_log), sum(n for _, n in self.ladder_log)
        if len(self.ladder_log) == c.ladder_window and played and wins / played >= c.ladder_win_rate:
            self.set_rung(self.rung + 1)

    def _pick_opponent(self) -> str | int:
        c = self.cfg
        kinds = ["random", "greedy", "self", "snapshot", "player"]
        p = np.array([c.p_random, c.p_greedy, c.p_self, c.p_snapshot if self.snapshots else 0.0, c.p_player])
        kind = kinds[int(self.rng.choice(len(kinds), p=p / p.sum()))]
        if kind != "snapshot":
            return kind
        ids = sorted(self.snapshots)
        return ids[int(self.rng.integers(len(ids)))]

    def _net_opponent(self, key: str | int) -> NetOpponent:
        if key == "self":
            return self._live
        net = self._snapshot_nets.get(key)  # type: ignore[arg-type]
        if net is None:
            # Built lazily (and again after a resume, which does not store the built nets): the
            # construction's random initialisation must not draw from the global torch generator,
            # or every later sample would depend on when the net happened to be built.
            # Normal tensors (not inference tensors), even when built during a rollout.
            built = self._frozen(self.snapshots[key])  # type: ignore[index]
            net = self._snapshot_nets[key] = NetOpponent(built, f"snapshot{key}")  # type: ignore[index]
        return net

    def _frozen(self, weights: dict[str, torch.Tensor]) -> PolicyNet:
        """A frozen copy of the network with ``weights``, built without drawing from torch's generator."""
        with torch.random.fork_rng(devices=[]), torch.inference_mode(False):
            net = PolicyNet(self.shapes, self.cfg.net)
            net.load_state_dict(weights)
            net.requires_grad_(False)
        return net.eval()

    def set_anchor(self) -> None:
        """Freeze the current network as the anchor of ``ppo.anchor_coef`` (the run's start)."""
        self.anchor = self._frozen({k: v.detach().clone() for k, v in self.net.state_dict().items()})

    def take_snapshot(self) -> None:
        self.snapshots[self._next_snapshot] = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        self._next_snapshot += 1
        in_use = set(self.opponent)
        if self._pool is not None:  # the helpers' games' opponents too
            in_use.update(o for ops in self._pool.opponents for o in ops)
        while len(self.snapshots) > self.cfg.max_snapshots:
            old = min(k for k in self.snapshots)
            if old in in_use:  # still playing: drop it when that game ends
                break
            del self.snapshots[old]
            self._snapshot_nets.pop(old, None)

    # ---------------------------------------------------------------- games
    def _reset_game(self, i: int) -> None:
        self.games.reset(i, int(self.rng.integers(2**31)))
        self.seat[i] = (i + self.episodes) % self.games.players_of(i)
        self.opponent[i] = self._pick_opponent()
        self.pending[i] = -1
        self.last_diff[i] = 0.0

    def _score_diff(self, i: int) -> tuple[float, list[int]]:
        scores = self.games.scores(i)
        seat = int(self.seat[i])
        return float(scores[seat] - max(s for p, s in enumerate(scores) if p != seat)), scores

    def _settle(self, i: int, roll: Rollout, terminal: bool) -> None:
        """Credit the reward since the learner's last decision in game i to that transition."""
        diff, scores = self._score_diff(i)
        t = int(self.pending[i])
        if t >= 0:
            r = (diff - self.last_diff[i]) * self.cfg.score_scale
            if terminal:
                seat = int(self.seat[i])
                best = max(scores)
                won = scores[seat] == best
                shared = won and scores.count(best) > 1
                r += self.cfg.win_bonus * (0.0 if shared else (1.0 if won else -1.0))
                roll.dones[t, i] = 1.0
                self.recent.append(
                    {
                        "win": float(won and not shared),
                        "tie": float(shared),
                        "margin": diff,
                        "score": scores[seat],
                        "opponent": str(self.opponent[i]),
                    }
                )
            roll.rewards[t, i] += r
        self.last_diff[i] = diff

    # -------------------------------------------------------------- rollout
    @property
    def imitating(self) -> bool:
        return self.updates < self.cfg.imitation_updates

    def _policy_forward(
        self, net: PolicyNet, obs: list[dict]
    ) -> tuple[list[dict], torch.Tensor, torch.Tensor, torch.Tensor]:
        samples = [sample_from_obs(o, self.cfg.crop) for o in obs]
        batch = collate(samples)
        logits, v = net(*batch.inputs())
        return samples, masked_logits(logits, batch.mask), v, batch.mask

    def collect(self) -> Rollout:
        """Fill a :class:`Rollout`: ``ceil(steps_per_update / num_envs)`` rounds of one learner decision per
        game; then close every open transition with its reward and bootstrap value.

        The rollout runs under ``torch.inference_mode`` (:func:`rollout_mode`): its forwards are small
        (one to ``num_envs`` boards), where autograd's bookkeeping is a good part of the cost; the
        outputs are bit for bit those under ``torch.no_grad`` (``scripts/same_training.py`` checks a
        run against another source tree, ``tests/agents/test_rollout_mode.py`` a short one)."""
        with rollout_mode():
            if self.cfg.rollout_workers == 1:
                return self._collect()
            return self._collect_sharded()

    def _collect_sharded(self) -> Rollout:
        """This process's shard and the helpers' at the same time, each on one torch thread; joined."""
        self._check_pool()
        weights = {k: v.numpy() for k, v in self.net.state_dict().items()}
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            if self._pool is None:  # this process's first rollout: its shard first (it compiles the engine)
                own = self._collect()
                sizes = shard_sizes(self.cfg.num_envs, self.cfg.rollout_workers)
                self._pool = ShardPool(self.env_kwargs, self.cfg, self.seed, sizes)
                self._pool.start(self._pool_states)
                self._pool_states = None
                self._pool.send_collect(weights, self.updates, self.snapshots, self.rung)
            else:
                self._pool.send_collect(weights, self.updates, self.snapshots, self.rung)
                own = self._collect()
            parts = self._pool.receive_collect()
        except RuntimeError as exc:  # a helper failed or ended: its games are gone with it
            self._lose_pool(str(exc))
            raise
        finally:
            torch.set_num_threads(threads)
        for part in parts:
            self.env_steps += part["env_steps"]
            self.learner_steps += part["learner_steps"]
            self.episodes += part["episodes"]
            self.recent += part["recent"]
        self._layout = [own.n] + [part["roll"].n for part in parts]  # game slots per shard, in join order
        return Rollout.join([own] + [part["roll"] for part in parts])

    def close(self) -> None:
        """End the helper processes of a sharded run (their state is kept: a later rollout restarts them)."""
        if self._pool is not None:
            try:
                self._pool_states = self._pool.states()
            except RuntimeError as exc:
                self._lose_pool(str(exc))
                return
            self._end_pool()

    def _end_pool(self) -> None:
        """Close the helpers, keeping the CPU seconds they spent."""
        if self._pool is not None:
            self._pool.close()
            self._ended_pools_cpu += self._pool.cpu_seconds()
            self._pool = None

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) spent so far by this process, all its threads, and its rollout helpers,
        the ended ones included; a helper's share is counted to its last rollout."""
        live = self._pool.cpu_seconds() if self._pool is not None else 0.0
        return time.process_time() + self._ended_pools_cpu + live

    def _lose_pool(self, why: str) -> None:
        self._pool_lost = why.splitlines()[0]
        self._end_pool()

    def _check_pool(self) -> None:
        if self._pool_lost:
            raise RuntimeError(
                f"a rollout shard's process failed earlier ({self._pool_lost}); this trainer's games are incomplete: "
                "resume the run from its last checkpoint"
            )

    def _collect(self) -> Rollout:
        n = self.n_local
        roll = Rollout(math.ceil(self.cfg.steps_per_update / self.cfg.num_envs), n)
        self.net.eval()
        slots = np.arange(n)
        for t in range(roll.rounds):
            self._advance_all(roll)
            samples, ml, v, _ = self._policy_forward(self.net, self.games.observe(slots, self.seat))
            if self.imitating:
                acts = torch.as_tensor(self.games.greedy(slots, self.imitator), dtype=torch.int64)
                logp = torch.log_softmax(ml, dim=1).gather(1, acts[:, None]).squeeze(1)
            else:
                acts, logp = sample_masked(ml)
            for i in range(n):
                self._settle(i, roll, terminal=False)
                self.pending[i] = t
            roll.samples += samples
            roll.actions[t] = acts.numpy()
            roll.logprobs[t] = logp.numpy()
            roll.values[t] = v.numpy()
            roll.players[t] = [self.games.players_of(i) for i in range(n)]
            self.games.step(slots, roll.actions[t])
            self.env_steps += n
            self.learner_steps += n
        # Close the open transitions: advance each game to its learner's next decision (a game that
        # ends on the way is settled as terminal and restarted), then bootstrap from that state.
        self._advance_all(roll)
        open_games = np.flatnonzero(self.pending >= 0)
        if len(open_games):
            _, _, v, _ = self._policy_forward(self.net, self.games.observe(open_games, self.seat[open_games]))
            for j, i in enumerate(open_games.tolist()):
                self._settle(i, roll, terminal=False)
                roll.next_values[i] = float(v[j])
                self.pending[i] = -1
        return roll

    def _advance_all(self, roll: Rollout) -> None:
        """Play every game until its learner must decide: each waiting game's opponent decides (greedy
        in one batched call, random from the masks, networks in one batched forward each), repeated.
        A game that ends is settled (terminal reward) and restarted."""
        while True:
            for i in np.flatnonzero(self.games.over()).tolist():
                while True:  # a restarted game is never over, but keep the loop honest
                    self._settle(i, roll, terminal=True)
                    self.episodes += 1
                    self._reset_game(i)
                    if not self.games.over()[i]:
                        break
            movers = self.games.movers()
            waiting = np.flatnonzero(movers != self.seat)
            if not len(waiting):
                return
            groups: dict[str | int, list[int]] = defaultdict(list)
            for i in waiting.tolist():
                groups[self.opponent[i]].append(i)
            for key, idx in groups.items():
                if key == "greedy":
                    acts = self.games.greedy(idx, self.greedy_policy)
                elif key == "random":
                    acts = [self.random_policy.act({"action_mask": m}) for m in self.games.masks(idx)]
                elif key == "player":
                    acts = self.games.play(idx, self.player_opponent)
                    if self.cfg.imitate_player > 0 and not self.imitating:  # its decisions are targets too
                        obs = self.games.observe(idx, movers[idx])
                        roll.player_samples += [sample_from_obs(o, self.cfg.crop) for o in obs]
                        roll.player_actions += [int(a) for a in acts]
                else:
                    acts = self._net_actions(self._net_opponent(key), idx, movers[idx])
                self.games.step(idx, acts)
                self.env_steps += len(idx)

    def _net_actions(self, actor: NetOpponent, idx: list[int], seats: np.ndarray) -> list[int]:
        _, ml, _, _ = self._policy_forward(actor.net, self.games.observe(idx, seats))
        return sample_masked(ml)[0].tolist()

    # --------------------------------------------------------------- update
    def advantages(self, roll: Rollout) -> tuple[np.ndarray, np.ndarray]:
        """GAE(lambda) per game slot, backwards over the rounds; ``(advantages, returns)`` as (rounds, n)."""
        c = self.cfg
        adv = np.zeros_like(roll.rewards)
        last = np.zeros(roll.n, dtype=np.float32)
        for t in reversed(range(roll.rounds)):
            next_values = roll.next_values if t == roll.rounds - 1 else roll.values[t + 1]
            not_done = 1.0 - roll.dones[t]
            delta = roll.rewards[t] + c.gamma * next_values * not_done - roll.values[t]
            last = delta + c.gamma * c.gae_lambda * not_done * last
            adv[t] = last
        return adv, adv + roll.values

    def _chunks(self, mb: np.ndarray, samples: list[dict]) -> list[np.ndarray]:
        """The minibatch in chunks of ``cfg.chunk`` samples of similar board size (largest last)."""
        size = self.cfg.chunk
        if size >= len(mb):
            return [mb]
        area = np.array([samples[k]["board"].shape[1] * samples[k]["board"].shape[2] for k in mb])
        order = mb[np.argsort(area, kind="stable")]
        return [order[j : j + size] for j in range(0, len(order), size)]

    def lr_at(self, update: int) -> float:
        """The learning rate of update ``update`` (0-based): ``lr`` through the imitation updates, then
        linearly down to ``lr_final`` over ``lr_decay_updates`` updates (``lr`` throughout if that is 0).
        A function of the update's number only, so a resumed run takes the same steps."""
        c = self.cfg
        if not c.lr_decay_updates:
            return c.lr
        frac = min(max(update - c.imitation_updates, 0) / c.lr_decay_updates, 1.0)
        return c.lr + (c.lr_final - c.lr) * frac

    def update(self, roll: Rollout) -> dict[str, float]:
        """One update: the clipped PPO loss (or while imitating, cross-entropy to greedy's actions), plus
        the value loss and the entropy bonus, over ``epochs`` passes of shuffled minibatches; each
        minibatch's gradient is accumulated over its chunks."""
        adv, ret = self.advantages(roll)
        b_adv = torch.as_tensor(adv.reshape(-1))
        b_ret = torch.as_tensor(ret.reshape(-1))
        b_actions = torch.as_tensor(roll.actions.reshape(-1))
        b_logprobs = torch.as_tensor(roll.logprobs.reshape(-1))
        counts = self.cfg.anchor_counts  # the decisions the KL anchor applies to
        b_anchor = torch.as_tensor(
            np.isin(roll.players.reshape(-1), counts) if len(counts) else np.ones(len(roll), dtype=bool)
        )
        samples = roll.samples
        legal = [np.flatnonzero(smp["mask"]) for smp in samples]  # each decision's legal actions (the loss's support)
        c = self.cfg
        imitate = self.imitating
        n = len(roll)
        lr = self.lr_at(self.updates)
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.net.train()
        stats: dict[str, list[float]] = defaultdict(list)
        steps = 0
        n_player = len(roll.player_samples) if c.imitate_player > 0 and not imitate else 0
        per_step = math.ceil(n_player / math.ceil(n / c.minibatch)) if n_player else 0
        threads = torch.get_num_threads()
        if self.parallel_update:  # one torch thread here and one in each helper: a core each
            torch.set_num_threads(1)
        try:
            for _epoch in range(c.epochs):
                perm = self.rng.permutation(n)
                # the pool player's decisions: each minibatch gets its share of them, each once an epoch
                p_perm = self.rng.permutation(n_player) if n_player else None
                stop = False
                for step, start in enumerate(range(0, n, c.minibatch)):
                    mb = perm[start : start + c.minibatch]
                    pmb = None if p_perm is None else p_perm[step * per_step : (step + 1) * per_step]
                    parts = self._minibatch_step(
                        mb, samples, b_adv, b_ret, b_actions, b_logprobs, imitate, b_anchor, roll, pmb, legal
                    )
                    steps += 1
                    for k, val in parts.items():
                        stats[k].append(val)
                    if c.target_kl > 0 and not imitate and parts["old_approx_kl"] > 1.5 * c.target_kl:
                        stop = True
                        break
                if stop:
                    break
        finally:
            torch.set_num_threads(threads)
        self.updates += 1
        if self.updates % c.snapshot_every == 0:
            self.take_snapshot()
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        out["explained_variance"] = explained_variance(roll.values.reshape(-1), ret.reshape(-1))
        out["mean_reward"] = float(roll.rewards.mean())
        out["gradient_steps"] = float(steps)
        if n_player:
            out["player_decisions"] = float(n_player)
        if c.lr_decay_updates:
            out["lr"] = lr
        return out

    def _minibatch_step(
        self,
        mb: np.ndarray,
        samples: list[dict],
        b_adv: torch.Tensor,
        b_ret: torch.Tensor,
        b_actions: torch.Tensor,
        b_logprobs: torch.Tensor,
        imitate: bool,
        b_anchor: torch.Tensor | None = None,
        roll: Rollout | None = None,
        pmb: np.ndarray | None = None,
        legal: list[np.ndarray] | None = None,
    ) -> dict[str, float]:
        """One gradient step on minibatch ``mb`` (indices into the flattened rollout); with ``pmb`` (indices into
        ``roll.player_samples``), plus ``ppo.imitate_player`` x the cross entropy to the pool player's choices.
        With :meth:`parallel_update` the helpers compute the gradient over their games' decisions of ``mb``
        (:meth:`grad_part`) while this process computes it over its own, and the parts are summed."""
        c = self.cfg
        a_mb = b_adv[mb]
        a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8) if len(mb) > 1 else a_mb
        self.opt.zero_grad()
        parts: dict[str, float] = defaultdict(float)
        if legal is None:
            legal = [np.flatnonzero(smp["mask"]) for smp in samples]
        total = len(mb)
        if self.parallel_update:
            try:
                self._parallel_grads(mb, samples, a_mb, b_ret, b_actions, b_logprobs, legal, imitate, parts)
            except RuntimeError as exc:  # a helper failed or ended: the update cannot be completed
                self._lose_pool(str(exc))
                raise
        else:
            self._grad_terms(
                [samples[k] for k in mb], a_mb, b_ret[mb], b_actions[mb], b_logprobs[mb], [legal[k] for k in mb],
                imitate, total, parts, None if b_anchor is None else b_anchor[mb],
            )  # fmt: skip
        if roll is not None and pmb is not None and len(pmb):
            self._player_step(roll, pmb, parts)
        nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
        self.opt.step()
        return parts

    def _parallel_grads(
        self,
        mb: np.ndarray,
        samples: list[dict],
        a_mb: torch.Tensor,
        b_ret: torch.Tensor,
        b_actions: torch.Tensor,
        b_logprobs: torch.Tensor,
        legal: list[np.ndarray],
        imitate: bool,
        parts: dict[str, float],
    ) -> None:
        """:meth:`_minibatch_step`'s gradient with the helpers: each gets the weights and its decisions of ``mb``
        (``a_mb``: their normalized advantages, in ``mb``'s order), this process does its own meanwhile, then
        the helpers' gradients and statistics are added to its own."""
        total = len(mb)
        shard, local = self._shard_of(mb)
        weights = {k: v.detach().numpy() for k, v in self.net.state_dict().items()}
        for j in range(1, len(self._layout)):
            at = np.flatnonzero(shard == j)
            self._pool.send_grad(
                j - 1,
                {
                    "weights": weights,
                    "index": local[at],
                    "adv": a_mb[at].numpy(),
                    "ret": b_ret[mb[at]].numpy(),
                    "actions": b_actions[mb[at]].numpy(),
                    "logprobs": b_logprobs[mb[at]].numpy(),
                    "imitate": imitate,
                    "total": total,
                },
            )
        at = np.flatnonzero(shard == 0)
        own = mb[at]
        self._grad_terms(
            [samples[k] for k in own], a_mb[at], b_ret[own], b_actions[own], b_logprobs[own],
            [legal[k] for k in own], imitate, total, parts,
        )  # fmt: skip
        grads = dict(self.net.named_parameters())
        for j in range(1, len(self._layout)):
            answer = self._pool.receive_grad(j - 1)
            for name, g in answer["grads"].items():
                if g is not None:
                    p = grads[name]
                    p.grad = torch.from_numpy(g) if p.grad is None else p.grad + torch.from_numpy(g)
            for k, val in answer["parts"].items():
                parts[k] += val

    @property
    def parallel_update(self) -> bool:
        """Whether this update's gradients are computed by the rollout's processes together (``ppo.parallel_update``
        with helpers alive after a sharded rollout; not with the KL anchor, which only this process holds)."""
        return bool(
            self.cfg.parallel_update and self._pool is not None and len(self._layout) > 1 and self.anchor is None
        )

    def _shard_of(self, mb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For indices ``mb`` into the joined rollout (round-major, shards' slots side by side): the shard of each
        decision and its index in that shard's own rollout."""
        sizes = np.asarray(self._layout)
        ends = np.cumsum(sizes)
        t, i = np.divmod(mb, ends[-1])
        shard = np.searchsorted(ends, i, side="right")
        return shard, t * sizes[shard] + i - (ends[shard] - sizes[shard])

    def grad_part(self, arg: dict[str, Any]) -> dict[str, Any]:
        """A helper's part of a parallel update's minibatch (:meth:`_minibatch_step`): the gradient of the loss terms
        of its decisions ``arg["index"]`` of its last rollout, with the learner's weights ``arg["weights"]``, each
        chunk weighted by its share of the whole minibatch (``arg["total"]`` decisions)."""
        self.net.load_state_dict({k: torch.from_numpy(v) for k, v in arg["weights"].items()})
        self.net.train()
        self.net.zero_grad(set_to_none=True)
        if self.last_roll is None:
            raise RuntimeError("a gradient part asked of a helper that has played no rollout")
        sub = [self.last_roll.samples[k] for k in arg["index"].tolist()]
        parts: dict[str, float] = defaultdict(float)
        with torch.enable_grad():
            self._grad_terms(
                sub, torch.as_tensor(arg["adv"]), torch.as_tensor(arg["ret"]), torch.as_tensor(arg["actions"]),
                torch.as_tensor(arg["logprobs"]), [np.flatnonzero(smp["mask"]) for smp in sub], arg["imitate"],
                arg["total"], parts,
            )  # fmt: skip
        grads = {name: None if p.grad is None else p.grad.numpy() for name, p in self.net.named_parameters()}
        return {"grads": grads, "parts": dict(parts)}

    def _grad_terms(
        self,
        sub: list[dict],
        adv: torch.Tensor,
        ret: torch.Tensor,
        actions: torch.Tensor,
        logprobs: torch.Tensor,
        legal: list[np.ndarray],
        imitate: bool,
        total: int,
        parts: dict[str, float],
        anchor_w: torch.Tensor | None = None,
    ) -> None:
        """Accumulate into the network's gradients the loss of decisions ``sub`` (with their normalized advantages,
        returns, actions, old log-probabilities and legal actions, position by position), in chunks of similar board
        size, each weighted by its share of a minibatch of ``total`` decisions; add the chunks' statistics to
        ``parts``.  The policy terms run over each decision's legal actions only (``legal``): the masked policy's
        log-probabilities and entropy without the work over the whole action space (2,925 actions in the base game,
        about 1 % of them legal), which was about a quarter of an update's time."""
        c = self.cfg
        if not sub:  # none of the minibatch's decisions is this process's
            return
        for ch in self._chunks(np.arange(len(sub)), sub):
            w = len(ch) / total
            batch = collate([sub[k] for k in ch])
            logits, v = self.net(*batch.inputs())
            index, ok = legal_actions([legal[k] for k in ch])
            lg = legal_logits(logits, index, ok)  # (chunk, most legal actions)
            logp = torch.log_softmax(lg, dim=1)
            act = actions[ch]
            at = ((index == act[:, None]) & ok).int().argmax(dim=1)  # each taken action's column in lg
            newlogprob = logp.gather(1, at[:, None]).squeeze(1)
            v_loss = 0.5 * (v - ret[ch]).pow(2).mean()
            entropy = -torch.where(ok, legal_exp(logp, ok) * logp, torch.zeros_like(logp)).sum(dim=1).mean()
            if imitate:
                pg_loss = -newlogprob.mean()
                parts["imitation_accuracy"] += w * float((lg.argmax(dim=1) == at).float().mean())
            else:
                a = adv[ch]
                logratio = newlogprob - logprobs[ch]
                ratio = logratio.exp()
                pg_loss = -torch.min(ratio * a, ratio.clamp(1 - c.clip, 1 + c.clip) * a).mean()
                with torch.no_grad():
                    parts["old_approx_kl"] += w * float((-logratio).mean())
                    parts["approx_kl"] += w * float(((ratio - 1) - logratio).mean())
                    parts["clipfrac"] += w * float(((ratio - 1).abs() > c.clip).float().mean())
            loss = pg_loss + c.value_coef * v_loss - c.entropy_coef * entropy
            if self.anchor is not None and c.anchor_coef > 0 and not imitate:
                ml = masked_logits(logits, batch.mask)
                kl = anchor_kl(self.anchor, batch, ml, None if anchor_w is None else anchor_w[ch])
                loss = loss + c.anchor_coef * kl
                parts["anchor_kl"] += w * float(kl.detach())
            (loss * w).backward()
            parts["policy_loss"] += w * float(pg_loss.detach())
            parts["value_loss"] += w * float(v_loss.detach())
            parts["entropy"] += w * float(entropy.detach())

    def _player_step(self, roll: Rollout, pmb: np.ndarray, parts: dict[str, float]) -> None:
        """Add the gradient of ``imitate_player`` x the mean cross entropy of the policy to the pool player's
        choices over its decisions ``pmb`` (in chunks of similar board size, like the learner's)."""
        coef = self.cfg.imitate_player
        for ch in self._chunks(pmb, roll.player_samples):
            w = len(ch) / len(pmb)
            batch = collate([roll.player_samples[k] for k in ch])
            logits, _ = self.net(*batch.inputs())
            ml = masked_logits(logits, batch.mask)
            act = torch.as_tensor([roll.player_actions[k] for k in ch.tolist()], dtype=torch.int64)
            ce = -torch.log_softmax(ml, dim=1).gather(1, act[:, None]).squeeze(1).mean()
            (coef * ce * w).backward()
            parts["player_cross_entropy"] += w * float(ce.detach())
            parts["player_agreement"] += w * float((ml.argmax(dim=1) == act).float().mean())

    def pop_episode_stats(self) -> dict[str, float]:
        """The games finished since the last call (win rates, margin); with ``ppo.player_ladder``, the rung they
        were played on (``player_rung``), after which the pool's player may move up (:meth:`_climb`)."""
        rec, self.recent = self.recent, []
        rung = self.rung
        self._climb(rec)
        if not rec:
            return {"player_rung": float(rung)} if self.cfg.player_ladder else {}
        out = {
            "episodes": float(len(rec)),
            "train_win_rate": float(np.mean([r["win"] for r in rec])),
            "train_margin": float(np.mean([r["margin"] for r in rec])),
        }
        for name in ("random", "greedy", "player"):
            sub = [r for r in rec if r["opponent"] == name]
            if sub:
                out[f"train_win_rate_vs_{name}"] = float(np.mean([r["win"] for r in sub]))
        if self.cfg.player_ladder:
            out["player_rung"] = float(rung)
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
            "baseline_rngs": [
                self.random_policy.rng.bit_generator.state,
                self.greedy_policy.rng.bit_generator.state,
                self.imitator.rng.bit_generator.state,
            ],
            "player_rng": _rng_state(self.player_opponent),
            "rung": self.rung,
            "ladder_log": list(self.ladder_log),
            "games": self.games,
            "slots": (self.seat, self.opponent, self.last_diff, self.pending),
        }
        if self.cfg.rollout_workers > 1:  # the helpers' games and generators (None: they never played)
            self._check_pool()
            rest["shards"] = self._pool.states() if self._pool is not None else self._pool_states
        return {
            "net": self.net.state_dict(),
            "opt": self.opt.state_dict(),
            "snapshots": self.snapshots,
            "anchor": None if self.anchor is None else self.anchor.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "blob": torch.frombuffer(bytearray(pickle.dumps(rest)), dtype=torch.uint8),
        }

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        rest = pickle.loads(sd["blob"].numpy().tobytes())
        if rest["games"].n != self.n_local:
            raise ValueError(
                f"checkpoint's process played {rest['games'].n} games, this config's plays {self.n_local} "
                f"(ppo.num_envs {self.cfg.num_envs}, ppo.rollout_workers {self.cfg.rollout_workers}); resume with the "
                "config the run was made with"
            )
        shards = rest.get("shards")
        if shards is not None and len(shards) != self.cfg.rollout_workers - 1:
            raise ValueError(
                f"checkpoint has {len(shards) + 1} rollout shards, the config asks for {self.cfg.rollout_workers}; "
                "resume with the ppo.rollout_workers the run was made with"
            )
        if rest["games"].engine != self.games.engine:
            raise ValueError(
                f"checkpoint's games ran on the {rest['games'].engine} engine, this run's on "
                f"{self.games.engine}; resume with the same game.engine"
            )
        self.net.load_state_dict(sd["net"])
        self.opt.load_state_dict(sd["opt"])
        self.snapshots = dict(sd["snapshots"])
        self.anchor = self._frozen(sd["anchor"]) if sd.get("anchor") is not None else None
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
        self.set_rung(rest.get("rung", 0))  # before its player's random stream
        self.ladder_log = list(rest.get("ladder_log", []))
        if rest.get("player_rng") is not None and self.player_opponent is not None:
            self.player_opponent.rng.bit_generator.state = rest["player_rng"]
        self.games = rest["games"]
        self._end_pool()  # helpers of the state being replaced
        self._pool_states, self._pool_lost = shards, ""
        seat, opponent, last_diff, pending = rest["slots"]
        self.seat, self.opponent, self.last_diff, self.pending = (
            seat.copy(),
            list(opponent),
            last_diff.copy(),
            pending.copy(),
        )


def _rng_state(player: Any) -> Any:
    """The state of a pool player's random stream (None: no player, or one without a stream)."""
    rng = getattr(player, "rng", None)
    return None if rng is None else rng.bit_generator.state


@contextmanager
def rollout_mode() -> Iterator[None]:
    """``torch.inference_mode``: the setting of :meth:`SelfPlayTrainer.collect` and of the main command's
    evaluations, whose forwards are small batches (1 to 64 boards) where autograd's bookkeeping is a
    good part of the cost.  The outputs are bit for bit those under ``torch.no_grad``.

    The torch thread count is left alone on purpose: one thread would save more (a second thread
    only adds wake-ups at these sizes) but changes the last bits of some outputs (the placement head's
    and the linear layers' sums are split differently for some batch sizes: measured), hence the run."""
    with torch.inference_mode():
        yield


def sample_masked(ml: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One action per row of masked logits and its log-probability, by inverting the cumulative
    distribution (``torch.distributions.Categorical`` samples the same distribution, several times
    slower over thousands of actions).  Illegal actions have probability 0 and are never drawn."""
    logp_all = torch.log_softmax(ml, dim=1)
    cdf = legal_exp(logp_all, ml > torch.finfo(ml.dtype).min).cumsum(dim=1)
    u = torch.rand(ml.shape[0], 1) * cdf[:, -1:]
    acts = torch.searchsorted(cdf, u, right=True).squeeze(1).clamp(max=ml.shape[1] - 1)
    return acts, logp_all.gather(1, acts[:, None]).squeeze(1)


def anchor_kl(anchor: PolicyNet, batch: Any, ml: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over the batch of KL(anchor's policy || the policy of masked logits ``ml``), legal actions only;
    ``weight`` (bool or float per sample): only those samples count (the mean stays over the whole batch)."""
    with torch.no_grad():
        logits, _ = anchor(*batch.inputs())
        logp_a = torch.log_softmax(masked_logits(logits, batch.mask), dim=1)
    logp = torch.log_softmax(ml, dim=1)
    terms = legal_exp(logp_a, batch.mask) * (logp_a - logp)
    kl = torch.where(batch.mask.bool(), terms, torch.zeros_like(terms)).sum(dim=1)
    return (kl if weight is None else kl * weight.to(kl.dtype)).mean()


def explained_variance(values: np.ndarray, returns: np.ndarray) -> float:
    """``1 - Var(returns - values) / Var(returns)`` (nan when the returns do not vary), as CleanRL logs it."""
    var = float(np.var(returns))
    return float("nan") if var == 0 else 1.0 - float(np.var(returns - values)) / var
