"""Players from names: the player-spec registry of the tournament and ``scripts/evaluate.py``.

A *player spec* is a string; ``make_player(spec, env_kwargs, seed)`` turns it
into a policy with ``act(obs, env) -> int`` (the protocol of
:mod:`carc_env.baselines`).  The kinds:

=================================  =================================================================
``random``                         uniformly random legal actions
``greedy`` / ``greedy:EPS``        the one-ply greedy baseline; EPS in [0, 1] = chance of a random move
``mcts:N[:OPT]...``                Monte Carlo tree search (:mod:`carc_env.search`), N simulations per
                                   decision; options ``random`` / ``greedy`` (rollout policy, default
                                   random), ``eps=F`` (random moves in greedy rollouts), ``c=F``
                                   (exploration), ``utility=win|margin|mixed``, ``scale=F`` (margin
                                   scale), ``horizon=H`` (random play-outs end H tiles after the
                                   root's, scored as the game's end there), ``farmers=0`` (random
                                   play-outs place no follower on a field), ``place=P`` (a random
                                   play-out's follower decision passes 1 - P of the time), ``time=S`` (seconds per
                                   decision; with no N, time only),
                                   ``engine=auto|python|numba`` (the play-outs on the compiled
                                   engine where it covers the game: auto, the default),
                                   ``tree=auto|compiled|python`` (the whole search, tree included,
                                   in one compiled kernel where random play-outs run compiled:
                                   auto, the default; python: the tree in Python nodes),
                                   ``root=uct|halving`` (how the root shares the budget: UCT, the
                                   default, or sequential halving; halving: the compiled tree only)
``PATH`` / ``ppo:PATH``            a PPO checkpoint of ``agents/`` (argmax over its masked policy)
``pretrained:NAME``                an agent shipped with the package (:mod:`agents.pretrained`), e.g.
                                   ``pretrained:base-2p``
``ppo-mcts:PATH[:N][:OPT]...``     search guided by that checkpoint (PATH may be ``pretrained:NAME``,
                                   a shipped agent) (:mod:`agents.search`): policy as
                                   prior, value as leaf evaluation (PUCT); N simulations (default 100),
                                   options ``c=F``, ``time=S``, ``engine=auto|python|numba`` (the
                                   simulations and the leaves' observations on the compiled engine
                                   where it covers the game: auto, the default; the same search as
                                   python's), ``values=seat|decider`` (each seat's value head on its
                                   own view, the default, or the deciding seat's, negated for the
                                   other: two players), ``playout=F`` (F in [0, 1]: a leaf's value
                                   is (1 - F) x the network's + F x one random play-out's, AlphaGo's
                                   mix; default 0), ``batch=B`` (with values=decider: new leaves valued
                                   B at a time, one forward each, virtual losses spreading a batch's
                                   descents; default 1), ``top=K`` (the network read at the root only: plain
                                   MCTS over its K most likely actions, with mcts's play-out
                                   options ``greedy``, ``eps=F``, ``utility=``, ``scale=F``,
                                   ``horizon=H``, ``farmers=0``, ``place=P``, ``tree=``, ``root=``; not with values=, playout= or batch=).  A separate agent from ``PATH``.
``rllib:PATH[:argmax]``            an RLlib checkpoint (``carc_env.integrations.rllib``, extra [rllib]);
                                   samples its masked policy (seeded per game), ``:argmax`` plays the
                                   most likely action instead (``:sample`` says the default)
``sb3:PATH[:argmax]``              a MaskablePPO zip (``carc_env.integrations.sb3``, extra [sb3]); the
                                   same choice
``MODULE:NAME`` / ``py:MODULE:NAME``  your own policy, see below
=================================  =================================================================

Your own policy
---------------
``MODULE:NAME`` imports ``MODULE`` (the current directory is on the path) and
takes its attribute ``NAME``:

* a function ``def policy(obs: dict, env) -> int`` (the documented signature):
  ``obs`` is the deciding seat's observation dict (``"action_mask"``,
  ``"board"``, ``"globals"``, ...), ``env`` the unwrapped
  :class:`carc_env.env.aec.raw_env` (``env.game`` is the core game, never to
  be changed; search on ``env.game.clone()``); return a flat action index
  enabled in ``obs["action_mask"]``;
* or an object with such an ``act(obs, env)`` method, or a class (or other
  factory) called with no arguments that returns one.  If the object has
  ``seed(seed)``, the tournament calls it before every game so the results
  are reproducible.

Use ``py:MODULE:NAME`` when ``MODULE`` has the name of a built-in kind.  Adding a
kind is one :func:`register_player` call (``kind``, a factory
``factory(arg, env_kwargs, seed)`` where ``arg`` is the text after ``kind:``).
Every error is a :class:`PlayerSpecError` naming the spec, the problem and what
is allowed (a checkpoint that does not fit the game: ``CheckpointError``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from carc_env.baselines import GreedyPolicy, RandomPolicy


class PlayerSpecError(ValueError):
    """A player spec cannot be turned into a player; the message names the spec and the fix."""


Factory = Callable[[str, dict[str, Any], int], Any]
_KINDS: dict[str, tuple[Factory, str]] = {}


def register_player(kind: str, factory: Factory, help: str) -> None:
    """Make ``kind:ARG`` (or bare ``kind`` with ``ARG == ""``) a player spec built by ``factory(ARG, env_kwargs, seed)``."""
    _KINDS[kind] = (factory, help)


def player_kinds() -> dict[str, str]:
    """The registered kinds and their one-line help."""
    return {k: h for k, (_, h) in _KINDS.items()}


def _name(p: Any, spec: str) -> Any:
    try:
        p.name = spec
    except AttributeError:  # pragma: no cover - objects with slots: keep theirs
        pass
    return p


# ---------------------------------------------------------------------------- built-in kinds
def _random(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    if arg:
        raise PlayerSpecError(f"'random' takes no option, got 'random:{arg}'")
    return RandomPolicy(seed=seed)


def _float(text: str, what: str, lo: float | None = None, hi: float | None = None) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if v != v or (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}" if lo is not None else "a number"
        raise PlayerSpecError(f"{what}: {text!r} is not a number {rng}")
    return v


def _greedy(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    eps = 0.0
    if arg:
        try:
            eps = float(arg)
        except ValueError:
            eps = float("nan")
        if not 0.0 <= eps <= 1.0:  # also false for nan
            raise PlayerSpecError(
                f"player 'greedy:{arg}': epsilon {arg!r}: greedy:EPS needs a number 0 <= EPS <= 1 "
                "(the chance of a random move)"
            )
    return GreedyPolicy(epsilon=eps, seed=seed)


MCTS_OPTIONS = (
    "N (simulations), random|greedy (rollouts), eps=F, c=F, utility=win|margin|mixed, scale=F, horizon=H, "
    "farmers=0|1, place=P, time=S, engine=auto|python|numba, tree=auto|compiled|python, root=uct|halving"
)


def parse_search_options(parts: list[str], spec: str, default_sims: int | None) -> dict[str, Any]:
    """``[N][:OPT]...`` of an ``mcts`` / ``ppo-mcts`` spec as MCTSPolicy keyword arguments."""
    kw: dict[str, Any] = {"simulations": default_sims}
    explicit_n = False
    for i, part in enumerate(parts):
        if i == 0 and part.isdigit():
            explicit_n = True
            kw["simulations"] = int(part)
            if kw["simulations"] < 1:
                raise PlayerSpecError(f"player {spec!r}: simulations must be >= 1, got {part}")
            continue
        if part in ("random", "greedy"):
            kw["rollout"] = part
            continue
        key, eq, val = part.partition("=")
        if not eq:
            raise PlayerSpecError(f"player {spec!r}: unknown option {part!r}; allowed: {MCTS_OPTIONS}")
        if key == "eps":
            kw["epsilon"] = _float(val, f"player {spec!r}: eps", 0.0, 1.0)
        elif key == "c":
            kw["c"] = _float(val, f"player {spec!r}: c", 0.0)
        elif key == "scale":
            kw["margin_scale"] = _float(val, f"player {spec!r}: scale", 1e-9)
        elif key == "horizon":
            if not val.isdigit() or int(val) < 1:
                raise PlayerSpecError(
                    f"player {spec!r}: horizon must be an integer >= 1 (tiles drawn after the root), got {val!r}"
                )
            kw["horizon"] = int(val)
        elif key == "farmers":
            if val not in ("0", "1"):
                raise PlayerSpecError(
                    f"player {spec!r}: farmers must be 0 or 1 (followers on fields in play-outs), got {val!r}"
                )
            kw["farmers"] = val == "1"
        elif key == "place":
            p = _float(val, f"player {spec!r}: place", 0.0, 1.0)
            if p <= 0.0:
                raise PlayerSpecError(
                    f"player {spec!r}: place must be above 0 (the play-outs' chance to decide a follower), got {val!r}"
                )
            kw["place"] = p
        elif key == "time":
            kw["time_per_move"] = _float(val, f"player {spec!r}: time", 1e-9)
            if not explicit_n:
                kw["simulations"] = None  # time only
        elif key == "engine":
            if val not in ("auto", "python", "numba"):
                raise PlayerSpecError(f"player {spec!r}: engine must be auto, python or numba, got {val!r}")
            kw["engine"] = val
        elif key == "tree":
            if val not in ("auto", "compiled", "python"):
                raise PlayerSpecError(f"player {spec!r}: tree must be auto, compiled or python, got {val!r}")
            kw["tree"] = val
        elif key == "root":
            if val not in ("uct", "halving"):
                raise PlayerSpecError(
                    f"player {spec!r}: root must be uct or halving (sequential halving at the root), got {val!r}"
                )
            kw["root"] = val
        elif key == "utility":
            if val not in ("win", "margin", "mixed"):
                raise PlayerSpecError(f"player {spec!r}: utility must be win, margin or mixed, got {val!r}")
            kw["utility"] = val
        else:
            raise PlayerSpecError(f"player {spec!r}: unknown option {key!r}; allowed: {MCTS_OPTIONS}")
    if kw["simulations"] is None and "time_per_move" not in kw:
        raise PlayerSpecError(f"player {spec!r}: give a simulation count or time=S")
    return kw


def _mcts(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    from carc_env.search import MCTSPolicy

    spec = f"mcts:{arg}" if arg else "mcts"
    kw = parse_search_options(arg.split(":") if arg else [], spec, 1000)
    return MCTSPolicy(seed=seed, name=spec, **kw)


def _ppo(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    import carc_env

    from .checkpoint import load_checkpoint, net_from_checkpoint
    from .policy import PPOPolicy, shapes_from_env

    path = Path(arg)
    if not arg or not path.is_file():
        raise PlayerSpecError(f"player 'ppo:{arg}': no checkpoint file {arg!r}")
    env = carc_env.raw_env(**env_kwargs)
    data = load_checkpoint(path)
    seats = int(data["shapes"].get("seats", 0))  # a mixed-table network: the seat-padded layout (agents/seats.py)
    net = net_from_checkpoint(data, expect=shapes_from_env(env, seats=seats), where=str(path))
    return PPOPolicy(net, name=path.stem)


def _pretrained(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    import carc_env

    from .checkpoint import CheckpointError
    from .policy import shapes_from_env
    from .pretrained import PretrainedError, available, load

    try:
        policy = load(arg)
    except PretrainedError as exc:
        raise PlayerSpecError(f"player 'pretrained:{arg}': {exc}") from None
    want = shapes_from_env(carc_env.raw_env(**env_kwargs), seats=policy.net.shapes.seats)
    if policy.net.shapes != want:
        raise CheckpointError(
            f"player 'pretrained:{arg}' plays {policy.env_kwargs}, not this game ({env_kwargs}); "
            f"shipped agents: {', '.join(available())}"
        )
    return policy


def split_path_options(arg: str) -> tuple[str, list[str]]:
    """``PATH[:N][:OPT]...``: the trailing parts that are a number or ``key=value`` are options."""
    parts = arg.split(":")
    k = len(parts)
    while k > 1 and (parts[k - 1].isdigit() or "=" in parts[k - 1] or parts[k - 1] in ("random", "greedy")):
        k -= 1
    return ":".join(parts[:k]), parts[k:]


def _ppo_mcts(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    from .search import PPOSearchPolicy, PrunedSearchPolicy

    path, opts = split_path_options(arg)
    spec = f"ppo-mcts:{arg}"
    # ppo-mcts's own options: the leaf values' view, the play-outs' weight, the root's short list
    own = ("values=", "playout=", "top=", "batch=")
    kw = parse_search_options([o for o in opts if not o.startswith(own)], spec, 100)
    top = None
    for o in opts:
        key, _, val = o.partition("=")
        if key == "values":
            if val not in ("seat", "decider"):
                raise PlayerSpecError(f"player {spec!r}: values must be seat or decider, got {val!r}")
            kw["value_view"] = val
        elif key == "playout":
            kw["playout"] = _float(val, f"player {spec!r}: playout", 0.0, 1.0)
        elif key == "batch":
            if not val.isdigit() or int(val) < 1:
                raise PlayerSpecError(f"player {spec!r}: batch must be an integer >= 1 (leaves a forward), got {val!r}")
            kw["batch"] = int(val)
        elif key == "top":
            if not val.isdigit() or int(val) < 1:
                raise PlayerSpecError(f"player {spec!r}: top must be an integer >= 1 (root actions kept), got {val!r}")
            top = int(val)
    for bad in (
        ()
        if top is not None
        else ("rollout", "epsilon", "utility", "margin_scale", "horizon", "farmers", "place", "tree", "root")
    ):
        if bad in kw:
            raise PlayerSpecError(
                f"player {spec!r}: {bad} is an option of mcts rollouts; ppo-mcts takes N, c=F, time=S, "
                "engine=auto|python|numba, values=seat|decider, playout=F, top=K (with top=K also mcts's "
                "play-out options: greedy, eps=F, utility=, scale=F, horizon=H, farmers=0|1, place=P, tree=, root=)"
            )
    if top is not None and ("value_view" in kw or "playout" in kw or "batch" in kw):
        raise PlayerSpecError(
            f"player {spec!r}: top=K searches the network's K best root actions with plain MCTS (its "
            "play-outs, no network below the root): values=, playout= and batch= do not apply to it"
        )
    if path.startswith("pretrained:"):  # a shipped agent (checked against the game); the default reward scales
        net = _pretrained(path.partition(":")[2], env_kwargs, seed).net
        if top is not None:
            return PrunedSearchPolicy(net, top, seed=seed, name=spec, **kw)
        return PPOSearchPolicy(net, env_kwargs, seed=seed, name=spec, **kw)
    if not path or not Path(path).is_file():
        raise PlayerSpecError(f"player {spec!r}: no checkpoint file {path!r} (or give pretrained:NAME)")
    if top is not None:
        return PrunedSearchPolicy(_ppo(path, env_kwargs, seed).net, top, seed=seed, name=spec, **kw)
    return PPOSearchPolicy.from_checkpoint(path, env_kwargs, seed=seed, name=spec, **kw)


def _integration(module: str, extra: str) -> Factory:
    def factory(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            raise PlayerSpecError(
                f"player '{module.rsplit('.', 1)[-1]}:{arg}' needs {module} ({exc}); "
                f'install it with python -m pip install -c constraints.txt -e ".[{extra}]"'
            ) from None
        path, _, how = arg.rpartition(":")
        if how not in ("argmax", "sample"):  # no mode given: the whole text is the path
            path, how = arg, "sample"
        if not path:
            raise PlayerSpecError(f"{module}: give the checkpoint path after the colon")
        try:
            player = mod.load_policy(path, env_kwargs=env_kwargs, deterministic=how == "argmax")
            player.seed(seed)
            return player
        except (FileNotFoundError, ValueError) as exc:
            raise PlayerSpecError(f"player {arg!r}: {exc}") from None

    return factory


class FunctionPolicy:
    """A plain function ``policy(obs, env) -> int`` as a player."""

    def __init__(self, fn: Callable[[Any, Any], int], name: str) -> None:
        self.fn = fn
        self.name = name

    def act(self, obs: Any, env: Any) -> int:
        return self.fn(obs, env)

    def __repr__(self) -> str:
        return f"FunctionPolicy({self.name})"


def _python(arg: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    module, colon, attr = arg.rpartition(":")
    spec = arg
    if not colon or not module or not attr:
        raise PlayerSpecError(f"player {spec!r}: a Python policy is MODULE:NAME (e.g. mypolicies:policy)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise PlayerSpecError(f"player {spec!r}: cannot import module {module!r} ({exc})") from None
    obj = getattr(mod, attr, None)
    if obj is None:
        raise PlayerSpecError(f"player {spec!r}: module {module!r} has no attribute {attr!r}")
    if hasattr(obj, "act") and not inspect.isclass(obj):
        return obj
    if inspect.isclass(obj):
        inst = obj()
        if not hasattr(inst, "act"):
            raise PlayerSpecError(f"player {spec!r}: {attr}() has no act(obs, env) method")
        return inst
    if callable(obj):
        try:
            n_params = len(inspect.signature(obj).parameters)
        except (TypeError, ValueError):  # pragma: no cover - builtins
            n_params = 2
        if n_params == 0:  # a factory
            inst = obj()
            if not hasattr(inst, "act"):
                raise PlayerSpecError(f"player {spec!r}: {attr}() returned {inst!r}, which has no act(obs, env)")
            return inst
        return FunctionPolicy(obj, spec)
    raise PlayerSpecError(f"player {spec!r}: {attr} is neither a function policy(obs, env) nor an object with act")


register_player("random", _random, "uniformly random legal actions")
register_player("greedy", _greedy, "one-ply greedy baseline; greedy:EPS plays a random move with chance EPS")
register_player("mcts", _mcts, f"Monte Carlo tree search: mcts:N[:OPT]...; options {MCTS_OPTIONS}")
register_player("ppo", _ppo, "a PPO checkpoint of agents/ (a bare checkpoint path works too)")
register_player("pretrained", _pretrained, "an agent shipped with the package: pretrained:NAME (agents.pretrained)")
register_player(
    "ppo-mcts",
    _ppo_mcts,
    "PUCT search guided by a PPO checkpoint: "
    "ppo-mcts:PATH[:N][:c=F][:time=S][:engine=auto|python|numba][:values=seat|decider][:playout=F][:batch=B][:top=K]",
)
register_player(
    "rllib",
    _integration("carc_env.integrations.rllib", "rllib"),
    "an RLlib checkpoint directory; samples, PATH:argmax for the argmax",
)
register_player(
    "sb3", _integration("carc_env.integrations.sb3", "sb3"), "a MaskablePPO .zip; samples, PATH:argmax for the argmax"
)
register_player("py", _python, "your own policy: py:MODULE:NAME (see agents/players.py)")


def make_player(spec: str, env_kwargs: dict[str, Any], seed: int) -> Any:
    """A policy with ``act(obs, env)`` from its spec (see the module docstring); ``.name`` is the spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise PlayerSpecError(f"a player spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    kind, _, arg = spec.partition(":")
    if kind in _KINDS:
        return _name(_KINDS[kind][0](arg, env_kwargs, seed), spec)
    if Path(spec).is_file():
        p = _ppo(spec, env_kwargs, seed)
        return _name(p, spec)
    if ":" in spec:
        return _name(_python(spec, env_kwargs, seed), spec)
    raise PlayerSpecError(
        f"unknown player {spec!r}: not a built-in kind ({', '.join(_KINDS)}), an existing checkpoint file "
        "or a Python policy MODULE:NAME"
    )


def evaluate_against(policy: Any, opponents: str, games: int, seed: int, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Evaluate ``policy`` against each comma-separated opponent spec (seat-swapped games on deals ``seed``...).

    Returns ``{"win_rate_vs_<name>": rate, "vs_<name>": full result}`` for every opponent and prints one
    line per opponent to stderr; the training scripts put this into their ``summary.json``.
    """
    from agents.evaluate import evaluate

    out: dict[str, Any] = {}
    for name in opponents.split(","):
        opponent = make_player(name, env_kwargs, seed=seed + 1)
        res = evaluate(policy, opponent, games, seed, env_kwargs)
        out[f"win_rate_vs_{name}"] = res["win_rate"]
        out[f"vs_{name}"] = res
        lo, hi = res["win_rate_ci95"]
        print(f"vs {name}: win rate {res['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], mean margin "
              f"{res['mean_margin']:+.1f} over {res['games']} games", file=sys.stderr)  # fmt: skip
    return out


__all__ = ["FunctionPolicy", "PlayerSpecError", "evaluate_against", "make_player", "player_kinds", "register_player"]
