"""Search on top of the learned network: PUCT guided by a PPO checkpoint (a separate agent).

``PPOSearchPolicy`` is :class:`carc_env.search.MCTSPolicy` with a
:class:`NetworkGuide` instead of rollouts: at every new leaf one batched
forward pass of the network over every seat's observation of that state
gives

* the *prior* of the leaf's actions: the deciding seat's policy (softmax of
  its masked logits over the leaf's legal actions; an action outside the
  observation window, which the network cannot express, gets prior 0);
* the *value* of the leaf for every player ``p``:
  ``score_scale * (p's score - best other score now) + V_p``, where ``V_p`` is
  the value head on ``p``'s observation.  The PPO value estimates the rest of
  the return, whose rewards are ``score_scale`` x the change of that margin
  plus ``win_bonus`` x the outcome (``agents/ppo.py``), so the sum estimates
  ``score_scale * final margin + win_bonus * outcome``; a finished game is
  valued exactly that way (``terminal``).  ``score_scale`` and ``win_bonus``
  are read from the checkpoint's training config.

  ``value_view`` ``"seat"`` (default) takes ``V_p`` from seat ``p``'s own
  observation, for every seat.  Those of a seat that is not deciding are
  observations the PPO value head never trained on (PPO fits it at the
  learner's own decisions): on the main command's agent they came out about
  0.5 too high (a win is 1), the deciding seat's about right
  (``scripts/value_calibration.py``, docs/results/expert.md, "Session 8").
  Since a tile placement that leaves no follower decision hands the next
  decision to the opponent, the search then values such placements with
  the biased view and the others with the unbiased one.  ``"decider"`` (two
  players only) uses the deciding seat's value for it and its negation for
  the other seat: every leaf valued from the one view the head was trained
  on, and zero-sum as the two-player return is (``-(margin) `` and the
  opposite outcome; a shared win, 0, is the one case it does not cover).
  The forward then takes the deciding seat's observation alone (half the
  work of a two-seat batch; the logits can differ from the two-seat batch's
  in the last bits, so the trees are not those of ``"seat"`` bit for bit).

``playout`` (AlphaGo's mixed leaf evaluation; default 0: the network's value alone): with
``playout`` = λ in (0, 1], a new leaf's value is ``(1 - λ) * value + λ * z``, where ``z`` is
:meth:`NetworkGuide.values` of the final scores of one uniformly random play-out from the leaf (the
plain MCTS play-out, on the compiled engine where it covers the game, seeded from the search's
generator), in the same units as the network's value.  Random play-outs predict the final return
better than the PPO value head does (r 0.64 against 0.53 on the main command's agent,
docs/results/expert.md, "Session 8"); the network's policy still gives the priors.  λ 1 values a leaf by
the play-out alone (the network's value is not read; the forward takes the deciding seat's observation
alone), and the priors are then *deferred* (``defers_priors``; ``defer=False`` turns it off): a new leaf
is played out without a forward, and its priors are computed when a simulation first comes back to it.
Most leaves are never visited again, so most forwards go: about 2.5x the simulations per second at 400
simulations, the same tree (``tests/agents/test_search_guide.py``).

Where the simulations run (``engine``): ``"auto"`` (default) plays them on the
compiled engine's state where it covers the game and its action features
(:meth:`NetworkGuide.compiled_state`): a new leaf's observations for every
seat are written by the compiled encoders
(:meth:`carc_env.fast.playout.FastPlayout.observe`, the Python encoder's bytes
with the placement rows in its order), one forward as above; the same search
as ``"python"`` (a Python ``Game`` per simulation, observations encoded in
Python) from the same seed, tree node for node
(``tests/agents/test_search_guide.py``).

``top`` (:class:`PrunedSearchPolicy`, ``ppo-mcts:PATH:N:top=K``) is the other way to put the network
and plain search together: the network is read once per decision, at the root, and keeps only its ``K``
most likely legal actions (symmetric rotations merged, as the search merges them); plain MCTS
(:class:`~carc_env.search.MCTSPolicy`: UCT, uniformly random play-outs on the compiled engine) spends
every simulation on those.  A root of 30 to 100 actions leaves plain MCTS a few dozen play-outs each at
5,000 simulations; the network's short list gives each kept action hundreds, at the cost of one forward.

The tree, the determinised draws and the budget options are those of
:mod:`carc_env.search.mcts` (PUCT selection with min-max normalised values,
``c`` default 1.5).  The plain checkpoint (argmax of the policy,
:class:`agents.policy.PPOPolicy`) stays a player of its own: the tournament
names this one ``ppo-mcts:PATH[:N]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from carc_env.core.actions import IllegalActionError
from carc_env.encoding.placements import placement_features
from carc_env.encoding.spots import spot_features
from carc_env.fast import ENGINES
from carc_env.fast.playout import FastPlayout
from carc_env.search import MCTSPolicy
from carc_env.search.rollout import random_action

from .network import PolicyNet, masked_logits
from .policy import Batch, obs_to_tensors, stacked_to_tensors

VALUE_VIEWS = ("seat", "decider")


class NetworkGuide:
    """Priors and values from a :class:`PolicyNet` (see the module docstring).

    ``engine``: where a search's simulations run.  ``"auto"`` (default): on the compiled engine's state
    where it covers the game and its action features (:meth:`compiled_state`; the leaves' observations
    are then written by the compiled encoders, the same bytes as the Python encoder's, and the search's
    tree is the same from the same seed); ``"python"``: a Python game per simulation, observations
    encoded in Python; ``"numba"``: the compiled engine or an error saying why not."""

    uses_priors = True

    def __init__(
        self,
        net: PolicyNet,
        env_kwargs: dict[str, Any],
        score_scale: float = 0.05,
        win_bonus: float = 1.0,
        engine: str = "auto",
        value_view: str = "seat",
        playout: float = 0.0,
        defer: bool = True,
        batch: int = 1,
    ) -> None:
        import carc_env

        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
        if value_view not in VALUE_VIEWS:
            raise ValueError(f"value_view must be one of {list(VALUE_VIEWS)}, got {value_view!r}")
        self.net = net.eval()
        env = carc_env.raw_env(**env_kwargs)  # its own codec and encoder (their caches follow this guide's games)
        self.codec = env.codec
        self.encoder = env.match.encoder
        self.num_players = len(env.possible_agents)
        if value_view == "decider" and self.num_players != 2:
            raise ValueError(
                f"value_view='decider' negates the deciding seat's value for the other seat: two players only "
                f"(this game has {self.num_players}); use value_view='seat'"
            )
        self.value_view = value_view
        if not 0.0 <= float(playout) <= 1.0:
            raise ValueError(
                f"playout must be in [0, 1] (the play-out's weight in a leaf's value; 0: the network's value "
                f"alone), got {playout!r}"
            )
        self.playout = float(playout)
        self.playouts = 0
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"batch must be an integer >= 1 (new leaves valued per forward), got {batch!r}")
        if batch > 1 and (value_view != "decider" or self.playout):
            raise ValueError(
                "batch > 1 values a batch of leaves by the deciding seat's value head alone: it needs "
                "value_view='decider' and playout=0"
            )
        self.batch = int(batch)
        # the forward takes the deciding seat's observation alone where no other seat's value is read
        self._one_row = value_view == "decider" or self.playout == 1.0
        self.defers_priors = self.playout == 1.0 and defer
        self.max_spots = self.codec.follower_range.size - 1
        self.score_scale = float(score_scale)
        self.win_bonus = float(win_bonus)
        self.engine = engine
        self.engine_config = env.options.engine_config()  # the env's window and rules: what the compiled state encodes
        self.forwards = 0
        self._fast: dict[Any, Any] = {}  # rule set -> FastPlayout (or None: not covered)
        self._fast_playouts: dict[Any, Any] = {}  # the same, for ``playout``'s play-outs of Python games

    def __repr__(self) -> str:
        eng = f", engine={self.engine!r}" if self.engine != "auto" else ""
        eng += f", value_view={self.value_view!r}" if self.value_view != "seat" else ""
        eng += f", playout={self.playout}" if self.playout else ""
        return f"NetworkGuide(score_scale={self.score_scale}, win_bonus={self.win_bonus}{eng})"

    def __getstate__(self) -> dict:  # sent to tournament workers: the compiled state is rebuilt there
        return {**self.__dict__, "_fast": {}, "_fast_playouts": {}}

    # ------------------------------------------------------------------ where the simulations run
    def compiled_state(self, game: Any) -> Any:
        """The compiled engine playing a search's simulations from ``game`` (a
        :class:`~carc_env.fast.playout.FastPlayout` with this env's window and the action features), or
        None (``engine="python"``, or a game the compiled engine or its action features do not cover)."""
        return self._fast_for(game)

    def _fast_for(self, game: Any) -> Any:
        """:meth:`compiled_state`'s engine (also the play-outs' of ``playout``, whichever loop searches)."""
        if self.engine == "python":
            return None
        rules = game.rules
        try:
            return self._fast[rules]
        except KeyError:
            pass
        from carc_env.fast import available, coverage, features_coverage

        cfg = self.engine_config
        if game.config.key() != cfg.rules.config.key():
            reason: str | None = "the game is not the configuration this guide's env was made for"
        elif not available():
            reason = "numba is not available"
        else:
            reason = coverage(cfg) or features_coverage(cfg.rules)
        if reason is not None and self.engine == "numba":
            raise ValueError(
                f"engine='numba': the compiled engine cannot run this search ({reason}); use engine='auto'"
            )
        f = FastPlayout(dataclasses.replace(cfg, action_features=True)) if reason is None else None
        self._fast[rules] = f
        return f

    def begin(self, game: Any) -> None:
        """Called by the search once per decision with its root: the compiled state loads it."""
        f = self.compiled_state(game)
        if f is not None:
            f.begin(game)

    # ------------------------------------------------------------------ evaluation
    def _observations(self, game: Any, seats: Sequence[int]) -> list[dict[str, np.ndarray]]:
        """``seats``' observations with the action features (empty for the seats not deciding)."""
        view = self.codec.view(game)
        out = []
        for seat in seats:
            obs = dict(self.encoder.encode(game, seat, view))
            obs["place_index"], obs["place_features"] = placement_features(game, seat, self.codec, view)
            obs["spots"] = spot_features(game, seat, self.max_spots)
            out.append(obs)
        return out

    def _evaluate(
        self, batch: Batch, decider: int, flat: list[int], scores: list[int]
    ) -> tuple[list[float], list[float]]:
        """One forward over the observations of ``batch`` (every seat's; the deciding seat's alone with
        ``value_view="decider"`` or ``playout`` 1, where no other seat's value is read): the priors of the moves whose flat indices are ``flat`` (-1: not
        expressible, prior 0) and every player's value (the module docstring)."""
        logits, values = self.net(*batch.inputs())
        self.forwards += 1
        row = 0 if self._one_row else decider
        priors = _priors(masked_logits(logits[row : row + 1], batch.mask[row : row + 1])[0], flat)
        n = len(scores)
        if self.playout == 1.0:  # the play-out alone values the leaf: the value head is not read
            return priors, [0.0] * n
        vals = values.tolist()
        if self.value_view == "decider":  # (two players: checked in __init__)
            d = self.score_scale * (scores[decider] - scores[1 - decider]) + vals[0]
            return priors, [d, -d] if decider == 0 else [-d, d]
        out = []
        for p in range(n):
            margin = scores[p] - max(scores[q] for q in range(n) if q != p)
            out.append(self.score_scale * margin + vals[p])
        return priors, out

    def _mix(self, values: list[float], final: list[int]) -> list[float]:
        """``playout``'s mix of the network's leaf ``values`` with the values of a play-out's ``final`` scores."""
        self.playouts += 1
        lam = self.playout
        return [(1.0 - lam) * v + lam * z for v, z in zip(values, self.values(final), strict=True)]

    def _python_playout(self, game: Any, rng: Any) -> list[int]:
        """The final scores of one random play-out of ``game`` (changed): on the compiled engine where it
        covers the game and ``engine`` is not ``"python"`` (one seed drawn from ``rng``, as the compiled
        state's leaves draw it: the same play-out), else on the Python game
        (:func:`carc_env.search.rollout.random_action`, another random stream)."""
        rules = game.rules
        if rules not in self._fast_playouts:  # its own engine: loading a game must not move the search's root
            f = self._fast_for(game)
            self._fast_playouts[rules] = FastPlayout(f.config) if f is not None else None
        f = self._fast_playouts[rules]
        if f is not None:
            return f(game, rng)
        while not game.over:
            game.apply(random_action(game, rng))
        return list(game.scores)

    @torch.inference_mode()  # (the no_grad numbers, with less bookkeeping)
    def _net(self, game: Any, actions: Sequence[Any]) -> tuple[list[float], list[float]]:
        """The network's priors of ``actions`` and every player's value at ``game`` (a Python game)."""
        flat = []
        for a in actions:
            try:
                flat.append(self.codec.encode(game, a))
            except IllegalActionError:  # outside the observation window: the net cannot express it
                flat.append(-1)
        seats = [game.player] if self._one_row else range(game.num_players)
        return self._evaluate(obs_to_tensors(self._observations(game, seats)), game.player, flat, list(game.scores))

    @torch.inference_mode()
    def _net_state(self, sim: Any, moves: Any) -> tuple[list[float], list[float]]:
        """:meth:`_net` on the compiled state's slot: the observations from the compiled encoders."""
        obs = sim.observe()
        if self._one_row:  # the deciding seat's row alone: half the forward (two players)
            p = sim.player
            obs = {k: v[p : p + 1] for k, v in obs.items()}
        batch = stacked_to_tensors(obs, obs["place_count"].tolist())  # obs_to_tensors' tensors, unsplit
        return self._evaluate(batch, sim.player, sim.flat_indices(moves), sim.scores())

    def expand(self, game: Any, actions: Sequence[Any], rng: Any) -> tuple[list[float], list[float]]:
        priors, values = self._net(game, actions)
        if self.playout:
            values = self._mix(values, self._python_playout(game, rng))
        return priors, values

    def expand_state(self, sim: Any, moves: Any, rng: Any) -> tuple[list[float], list[float]]:
        """:meth:`expand` of the compiled state's slot (``sim``, a :class:`~carc_env.fast.playout.FastPlayout`)
        at a tile or follower decision, ``moves`` its moves (``FastPlayout.moves``): the observations come
        from the compiled encoders (``FastPlayout.observe``, the Python encoder's bytes and rows)."""
        priors, values = self._net_state(sim, moves)
        if self.playout:  # the leaf's state is played out (the simulation ends here; the next one redeals)
            values = self._mix(values, sim.play_out(int(rng.integers(2**31 - 1))))
        return priors, values

    # ------------------------------------------------------------------ batched leaves (batch > 1)
    # The search (:meth:`carc_env.search.mcts.MCTS._search_compiled_batched`) captures each new leaf
    # (:meth:`leaf_state`) and asks for ``batch`` of them at once (:meth:`evaluate_leaves`): one forward over
    # their deciding seats' observations, the priors and values :meth:`expand_state` gives one by one.
    def leaf_state(self, sim: Any, moves: Any) -> tuple[dict[str, np.ndarray], list[int], list[int], int]:
        """What :meth:`evaluate_leaves` reads of the compiled state's slot at a new leaf: the deciding seat's
        observation (copied: the slot moves on), the flat indices of ``moves``, the scores, the seat."""
        obs = sim.observe()
        p = sim.player
        return {k: v[p : p + 1].copy() for k, v in obs.items()}, sim.flat_indices(moves), sim.scores(), p

    def leaf_forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The logits and values :meth:`evaluate_leaves` reads for a batch of leaves (a subclass may take
        them from two networks)."""
        return self.net(*batch.inputs())

    @torch.inference_mode()
    def evaluate_leaves(self, leaves: Sequence[Any]) -> list[tuple[list[float], list[float]]]:
        """Priors and values (``value_view`` decider: two players) of :meth:`leaf_state` captures, in one
        forward."""
        obs = {k: np.concatenate([o[k] for o, _, _, _ in leaves]) for k in leaves[0][0]}
        batch = stacked_to_tensors(obs, obs["place_count"].tolist())
        logits, values = self.leaf_forward(batch)
        self.forwards += 1
        ml = masked_logits(logits, batch.mask)
        vals = values.tolist()
        out = []
        for j, (_, flat, scores, decider) in enumerate(leaves):
            d = self.score_scale * (scores[decider] - scores[1 - decider]) + vals[j]
            out.append((_priors(ml[j], flat), [d, -d] if decider == 0 else [-d, d]))
        return out

    # ------------------------------------------------------------------ deferred priors (playout 1)
    # With ``playout`` 1 a leaf's value is its play-out's alone, so the search asks for a new leaf's value
    # only (:meth:`leaf_values`, no forward) and for its priors when a simulation first comes back to it
    # (:meth:`priors`): most leaves are never visited again.  The same draws in the same order, and the
    # same priors (a node's observation is the same in every determinisation that reaches it): the same
    # tree as asking for both at once (``defer=False``), with a forward for the leaves revisited only.
    def leaf_values(self, game: Any, rng: Any) -> list[float]:
        """A new leaf's values (``playout`` 1): one play-out of ``game`` (changed)."""
        final = self._python_playout(game, rng)
        return self._mix([0.0] * len(final), final)

    def leaf_values_state(self, sim: Any, rng: Any) -> list[float]:
        """:meth:`leaf_values` of the compiled state's slot (played out)."""
        final = sim.play_out(int(rng.integers(2**31 - 1)))
        return self._mix([0.0] * len(final), final)

    def priors(self, game: Any, actions: Sequence[Any]) -> list[float]:
        """The priors of a node's ``actions`` (deferred), at ``game``."""
        return self._net(game, actions)[0]

    def priors_state(self, sim: Any, moves: Any) -> list[float]:
        """:meth:`priors` on the compiled state's slot."""
        return self._net_state(sim, moves)[0]

    def values(self, scores: list[int]) -> list[float]:
        """The value of a finished game with final ``scores`` (what :meth:`terminal` returns)."""
        n = len(scores)
        best = max(scores)
        k = sum(1 for s in scores if s == best)
        out = []
        for p in range(n):
            margin = scores[p] - max(scores[q] for q in range(n) if q != p)
            outcome = (1.0 if k == 1 else 0.0) if scores[p] == best else -1.0
            out.append(self.score_scale * margin + self.win_bonus * outcome)
        return out

    def terminal(self, game: Any) -> list[float]:
        return self.values(list(game.scores))


def _priors(ml: torch.Tensor, flat: Sequence[int]) -> list[float]:
    """The softmax of one row of masked logits ``ml`` over the flat indices ``flat`` (-1: not expressible,
    prior 0; all of them inexpressible: uniform)."""
    sel = torch.tensor([max(f, 0) for f in flat], dtype=torch.int64)
    lg = ml[sel].double()
    lg[torch.tensor([f < 0 for f in flat])] = -torch.inf
    if torch.isinf(lg).all():
        return [1.0] * len(flat)
    return torch.softmax(lg, dim=0).tolist()


class PPOSearchPolicy(MCTSPolicy):
    """PUCT search guided by a PPO network: ``act(obs, env) -> int``.  A separate agent from the plain network."""

    def __init__(
        self,
        net: PolicyNet,
        env_kwargs: dict[str, Any],
        simulations: int | None = 100,
        time_per_move: float | None = None,
        c: float | None = None,
        seed: int | None = None,
        score_scale: float = 0.05,
        win_bonus: float = 1.0,
        name: str = "ppo-mcts",
        engine: str = "auto",
        value_view: str = "seat",
        playout: float = 0.0,
        batch: int = 1,
    ) -> None:
        guide = NetworkGuide(
            net,
            env_kwargs,
            score_scale,
            win_bonus,
            engine=engine,
            value_view=value_view,
            playout=playout,
            batch=batch,
        )
        super().__init__(simulations=simulations, time_per_move=time_per_move, c=c, seed=seed, guide=guide, name=name)

    @classmethod
    def from_checkpoint(
        cls, path: str, env_kwargs: dict[str, Any], seed: int | None = None, name: str | None = None, **kw: Any
    ) -> PPOSearchPolicy:
        """Load ``path`` (checked against the env) and read the reward scales from its training config."""
        import carc_env

        from .checkpoint import load_checkpoint, net_from_checkpoint
        from .policy import shapes_from_env

        data = load_checkpoint(path)
        net = net_from_checkpoint(data, expect=shapes_from_env(carc_env.raw_env(**env_kwargs)), where=str(path))
        ppo = (data.get("config") or {}).get("ppo") or {}
        return cls(
            net,
            env_kwargs,
            seed=seed,
            name=name or f"ppo-mcts:{path}",
            score_scale=float(ppo.get("score_scale", 0.05)),
            win_bonus=float(ppo.get("win_bonus", 1.0)),
            **kw,
        )


class PrunedSearchPolicy(MCTSPolicy):
    """Plain MCTS over the network's ``top`` most likely root actions: ``act(obs, env) -> int`` (see the
    module docstring).  ``simulations``, ``time_per_move``, ``c`` (UCT's, default 0.7), ``seed``,
    ``engine`` (where the play-outs run), ``rollout`` and ``epsilon`` (uniformly random play-outs, the
    default, or epsilon-greedy ones), ``utility``, ``margin_scale``, ``horizon``, ``farmers`` and ``place`` (the play-outs'
    value, length and followers), ``tree`` (where the tree lives) and ``root`` (UCT or sequential halving at the
    root) are :class:`~carc_env.search.MCTSPolicy`'s.  ``last_kept`` holds the last decision's number of root actions kept."""

    uses_observation = True  # the network reads the full observation (plain MCTS needs only the mask)

    def __init__(
        self,
        net: PolicyNet,
        top: int,
        simulations: int | None = 1000,
        time_per_move: float | None = None,
        c: float | None = None,
        seed: int | None = None,
        name: str = "ppo-mcts",
        engine: str = "auto",
        rollout: str = "random",
        epsilon: float = 0.0,
        utility: str = "mixed",
        margin_scale: float = 20.0,
        horizon: int | None = None,
        farmers: bool = True,
        tree: str = "auto",
        root: str = "uct",
        place: float = 1.0,
    ) -> None:
        from .policy import PPOPolicy

        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
            raise ValueError(f"top must be an integer >= 1 (the root actions kept), got {top!r}")
        super().__init__(
            simulations=simulations,
            time_per_move=time_per_move,
            rollout=rollout,
            epsilon=epsilon,
            utility=utility,
            margin_scale=margin_scale,
            horizon=horizon,
            farmers=farmers,
            c=c,
            seed=seed,
            name=name,
            engine=engine,
            tree=tree,
            root=root,
            place=place,
        )
        self.top = int(top)
        self.network = PPOPolicy(net, name=name)  # reads the observation as the plain network does
        self.last_kept = 0

    def __repr__(self) -> str:
        return f"PrunedSearchPolicy(top={self.top}, {super().__repr__()})"

    def root_cut(self, obs: Any, env: Any, actions: list[Any], indices: list[int]) -> tuple[list[Any], list[int]]:
        """The network's ``top`` most likely of the root's ``actions`` (flat ``indices``), in the root's order:
        plain MCTS's move (:meth:`MCTSPolicy.act`) is searched among those."""
        self.last_kept = min(len(actions), self.top)
        if len(actions) > self.top:
            logits = self.network.logits(obs, env)
            ranked = sorted(range(len(actions)), key=lambda i: -logits[indices[i]])  # stable: ties keep the order
            kept = sorted(ranked[: self.top])  # (in the root's order: what root_choices lists for a mask of them)
            actions, indices = [actions[i] for i in kept], [indices[i] for i in kept]
        return actions, indices


__all__ = ["VALUE_VIEWS", "NetworkGuide", "PPOSearchPolicy", "PrunedSearchPolicy"]
