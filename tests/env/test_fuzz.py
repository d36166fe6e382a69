"""Fuzz: garbage thrown at every entry point gets a library error and changes nothing (issue #12).

Random (seeded, bounded) inputs of the wrong type, out of range, or legal only
in another phase or another game are thrown at ``Game.apply``, ``raw_env.step``,
``env().step``, ``raw_env.reset(seed=..., options=...)`` and ``replay``; the env
entry points on both engines where the compiled one covers the game (base game).  Every
time, unless the input happens to be legal, the call must raise one of the
library's errors (``IllegalActionError`` and its ``ActionTypeError``,
``ConfigError``, ``RecordError``; a plain ``ValueError``/``TypeError`` only if
raised by carc_env's own code with its own message), and a full snapshot of
the state (``tests/_state.py``: the game down to its generator, the env's
rewards, infos and observations; the record passed to ``replay``) must be
exactly what it was before.
"""

from __future__ import annotations

import copy
import itertools
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _state import freeze, game_state, match_state

import carc_env
from carc_env.core import ConfigError, Game, GameConfig, IllegalActionError, Pass, PlaceFollower, PlaceTile
from carc_env.core.record import RecordError, replay, to_record
from carc_env.env.aec import raw_env
from carc_env.expansions.count import CountDeploy, CountMove, CountSend

PACKAGE = Path(carc_env.__file__).resolve().parent
LIBRARY_ERRORS = (IllegalActionError, ConfigError, RecordError)
ALL = ("king_robber", "count", "river2", "shrines", "darmstadt")
COMBOS = [("base",), ("base", "count"), ("base", "river2", "shrines"), ("base", *ALL)]


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def _garbage(rng: np.random.Generator) -> Any:
    """One value of a wrong or odd type (or an odd integer)."""
    pool = [
        None, True, False, np.True_, 0.0, 1.5, -2.0, float("nan"), float("inf"), 2**70, -(2**70), -1,
        "", "0", "x", "tile 0,-1 r0", "pass", "follower c1", "count_deploy castle", b"1", bytearray(b"2"),
        [], [1], (0, 1), {}, {"a": 1}, {1, 2}, complex(1, 1), _Opaque(), np.float32(3.0), np.array([1, 2]),
        np.array(1.0), np.int64(int(rng.integers(-5, 5))), PlaceTile, Pass, Pass(), PlaceFollower(0), slice(1),
    ]  # fmt: skip
    if rng.random() < 0.3:
        return int(rng.integers(-(2**40), 2**40))
    return pool[int(rng.integers(len(pool)))]


def _check_error(exc: BaseException, what: str) -> None:
    """A library error, or a ValueError/TypeError raised by carc_env's own code (so with its message)."""
    if isinstance(exc, LIBRARY_ERRORS):
        return
    assert isinstance(exc, (ValueError, TypeError)), f"{what}: {type(exc).__name__}: {exc}"
    where = Path(traceback.extract_tb(exc.__traceback__)[-1].filename).resolve()
    assert PACKAGE in where.parents, f"{what}: bare {type(exc).__name__} from {where}: {exc}"


def _is_legal(game: Game, action: Any) -> bool:
    try:
        if isinstance(action, str):
            action = game.parse_action(action)
        return any(bool(action == a) for a in game.legal_actions())
    except Exception:  # noqa: BLE001 - an unparsable or incomparable value is not legal
        return False


def _play_to_states(config: GameConfig, seed: int, every: int, rng: np.random.Generator) -> list[Game]:
    """Clones of one random game at every ``every``-th decision (all phases), the end included."""
    game = Game(config, seed=seed)
    states = []
    k = 0
    while not game.over:
        if k % every == 0 or game.phase not in ("tile", "follower"):
            states.append(game.clone())
        acts = game.legal_actions()
        game.apply(acts[int(rng.integers(len(acts)))])
        k += 1
    states.append(game)
    return states


def _action_pool(states: list[Game]) -> list[Any]:
    """Legal actions and texts of many states: most are illegal elsewhere (another phase, another cell)."""
    pool: list[Any] = []
    for g in states:
        acts = g.legal_actions()
        pool.extend(acts[:6])
        pool.extend(g.action_text(a) for a in acts[:3])
    return pool


def _bad_action(rng: np.random.Generator, pool: list[Any]) -> Any:
    g = lambda: _garbage(rng)  # noqa: E731
    i = lambda: int(rng.integers(-40, 40))  # noqa: E731
    kind = int(rng.integers(9))
    if kind == 0:
        return PlaceTile(g(), i(), int(rng.integers(0, 4)))
    if kind == 1:
        return PlaceTile(i(), i(), g() if rng.random() < 0.5 else int(rng.integers(-3, 8)))
    if kind == 2:
        return PlaceFollower(g() if rng.random() < 0.5 else i())
    if kind == 3:
        return (CountDeploy, CountMove)[int(rng.integers(2))](g() if rng.random() < 0.5 else i())
    if kind == 4:
        return CountSend(i(), i(), g() if rng.random() < 0.5 else str(g()))
    if kind == 5:
        text = str(pool[int(rng.integers(len(pool)))]) if pool else "pass"
        cut = int(rng.integers(len(text) + 1))
        return text[:cut] + str(g())[:3] + text[cut:]
    return pool[int(rng.integers(len(pool)))] if pool and kind < 8 else g()


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: "+".join(c[1:]) or "base")
def test_fuzz_game_apply(combo):
    rng = np.random.default_rng(len(combo) * 7919)
    config = GameConfig(num_players=3, expansions=combo)
    states = _play_to_states(config, seed=len(combo), every=9, rng=rng)
    pool = _action_pool(_play_to_states(config, seed=100 + len(combo), every=5, rng=rng))
    tried = refused = 0
    for game in states:
        for _ in range(8):
            action = _bad_action(rng, pool)
            if _is_legal(game, action):
                continue
            before = game_state(game)
            tried += 1
            try:
                game.apply(action)
            except Exception as exc:  # noqa: BLE001 - the test is what it raises
                _check_error(exc, f"apply({action!r}) in phase {game.phase}")
                refused += 1
            else:
                raise AssertionError(f"apply({action!r}) was accepted in phase {game.phase!r}")
            assert game_state(game) == before, f"apply({action!r}) changed the game"
    assert tried == refused and tried > 50


def _env_state(e: Any) -> Any:
    raw = e.unwrapped
    obs = [raw.observe(a) for a in raw.agents] if raw.match.started else None
    return freeze([
        match_state(raw.match),
        getattr(raw, "rewards", None), getattr(raw, "_cumulative_rewards", None),
        getattr(raw, "terminations", None), getattr(raw, "infos", None), getattr(raw, "agent_selection", None), obs,
    ])  # fmt: skip


def _bad_index(rng: np.random.Generator, e: Any, wrapped: bool) -> Any:
    raw = e.unwrapped
    n = raw.codec.n
    kind = int(rng.integers(5))
    if kind == 0 or wrapped:  # the wrapped env ends the game on a masked-out index: only ill-typed / out of range
        v = _garbage(rng)
        return v if not wrapped or not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 0 <= v < n else -1
    if kind == 1:
        return int(rng.integers(-(2**31), 0)) if rng.random() < 0.5 else int(rng.integers(n, 2**31))
    if kind == 2:  # an index of another phase's range
        other = [r for p, r in raw.codec.ranges.items() if p != raw.match.phase]
        r = other[int(rng.integers(len(other)))]
        return r.start + int(rng.integers(r.size))
    if kind == 3:  # a masked-out index of the current phase, as various integer and non-integer kinds
        off = np.flatnonzero(raw.match.mask() == 0)
        v = int(off[int(rng.integers(len(off)))])
        return [v, np.int32(v), float(v), str(v)][int(rng.integers(4))]
    legal = int(np.flatnonzero(raw.match.mask())[0])
    return [legal + 0.5, float(legal), str(legal), [legal], np.array([legal]), np.float64(legal)][int(rng.integers(6))]


ENV_CASES = [(("base",), "python"), (("base",), "numba"), (("base", *ALL), "python"), (("base", *ALL), "numba")]


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
@pytest.mark.parametrize("combo, engine", ENV_CASES, ids=["base-python", "base-numba", "all-python", "all-numba"])
def test_fuzz_env_step(combo, engine, wrapped):
    rng = np.random.default_rng(17 + len(combo) + wrapped)
    make = carc_env.env if wrapped else raw_env
    e = make(expansions=combo, reward="score_delta", engine=engine)
    tried = k = 0
    raw = e.unwrapped
    assert raw.engine == engine
    e.reset(seed=3)
    while not raw.match.over:
        if k % 4 == 0:
            for _ in range(5):
                action = _bad_index(rng, e, wrapped)
                try:
                    legal = bool(raw.match.mask()[action])  # type: ignore[index]
                except Exception:  # noqa: BLE001
                    legal = False
                if legal and isinstance(action, (int, np.integer)) and not isinstance(action, bool):
                    continue
                before = _env_state(e)
                tried += 1
                with pytest.raises(Exception) as info:  # noqa: B017 - checked below
                    e.step(action)
                _check_error(info.value, f"step({action!r})")
                assert _env_state(e) == before, f"step({action!r}) changed the env"
        e.step(int(rng.choice(np.flatnonzero(raw.match.mask()))))
        k += 1
    assert tried > 40


def _bad_options(rng: np.random.Generator, ids: list[str]) -> Any:
    kind = int(rng.integers(6))
    if kind == 0:  # not a dict (a dict of unknown keys only warns, and None or {} is a plain reset)
        v = _garbage(rng)
        return [v] if v is None or isinstance(v, dict) else v
    if kind == 1:  # (an empty draw order is legal: the game is over at once)
        v = _garbage(rng)
        return {"draw_order": [v] if isinstance(v, list) and not v else v}
    if kind == 2:
        order = [ids[int(rng.integers(len(ids)))] for _ in range(int(rng.integers(1, 6)))]
        order.insert(int(rng.integers(len(order) + 1)), str(_garbage(rng)) + "?")
        return {"draw_order": order}
    if kind == 3:
        order = list(ids[:3])
        order.insert(int(rng.integers(4)), _garbage(rng))
        return {"draw_order": order}
    if kind == 4:
        return {"draw_order": [ids[0]] * 40}  # more copies than the game has
    return {"draw_order": "".join(ids[:2])}


def _bad_seed(rng: np.random.Generator) -> Any:
    return [-1, -(2**40), 1.5, "3", b"3", [3], True, float("nan"), np.float64(2.0), _Opaque()][int(rng.integers(10))]


RESET_CASES = [
    (("base",), "python"),
    (("base",), "numba"),
    (("base", "river2"), "numba"),
    (("base", "count", "river2"), "python"),
]


@pytest.mark.parametrize(
    "combo, engine", RESET_CASES, ids=["base-python", "base-numba", "river2-numba", "count+river2-python"]
)
def test_fuzz_env_reset(combo, engine):
    rng = np.random.default_rng(29 + len(combo))
    e = raw_env(expansions=combo, engine=engine)
    assert e.engine == engine
    ids = [t.id for t in e.match.rules.tiles]
    before = _env_state(e)  # never reset yet: a failing reset must leave it so
    for step in range(60):
        if step == 20:
            e.reset(seed=5)
            for _ in range(7):
                e.step(int(np.flatnonzero(e.match.mask())[0]))
            before = _env_state(e)
        if rng.random() < 0.25:
            kw = {"seed": _bad_seed(rng)}
        else:
            kw = {"seed": int(rng.integers(0, 100)), "options": _bad_options(rng, ids)}
        with pytest.raises(Exception) as info:  # noqa: B017 - checked below
            e.reset(**kw)
        _check_error(info.value, f"reset({kw!r})")
        assert _env_state(e) == before, f"reset({kw!r}) changed the env"


def _records() -> list[dict]:
    out = []
    rng = np.random.default_rng(5)
    for combo in (("base",), ("base", "count", "king_robber")):
        game = Game(GameConfig(num_players=2, expansions=combo), seed=8)
        while not game.over and len(game.history) < 60:
            acts = game.legal_actions()
            game.apply(acts[int(rng.integers(len(acts)))])
        out.append(to_record(game))
    return out


def _mutate(rng: np.random.Generator, rec: dict) -> dict:
    r = copy.deepcopy(rec)
    keys = ["format", "version", "config", "seed", "draw_order", "actions", "scores"]
    kind = int(rng.integers(8))
    if kind == 0:
        r[keys[int(rng.integers(len(keys)))]] = _garbage(rng)
    elif kind == 1:
        del r[keys[int(rng.integers(len(keys) - 1))]]  # "scores" may be left out legitimately
    elif kind == 2:
        i = int(rng.integers(len(r["actions"])))
        r["actions"][i] = [str(_garbage(rng)), r["actions"][(i + 1) % len(r["actions"])], None][int(rng.integers(3))]
    elif kind == 3:
        order = rng.permutation(len(r["actions"]))
        r["actions"] = [r["actions"][j] for j in order]
    elif kind == 4:
        r["scores"] = [s + int(rng.integers(1, 5)) for s in r["scores"]]
    elif kind == 5:
        r["config"] = {
            **r["config"],
            ["num_players", "expansions", "options", "followers", "bogus"][int(rng.integers(5))]: _garbage(rng),
        }
    elif kind == 6:
        i = int(rng.integers(len(r["draw_order"])))
        r["draw_order"][i] = [_garbage(rng), "XX-9", r["draw_order"][-1]][int(rng.integers(3))]
    else:
        r["seed"] = [-1, r["seed"] + 1, str(r["seed"]), None][int(rng.integers(4))]
    return r


def test_fuzz_replay():
    rng = np.random.default_rng(41)
    records = _records()
    tried = accepted = 0
    for rec, _ in itertools.product(records, range(120)):
        bad = _mutate(rng, rec)
        snapshot = freeze(bad)
        tried += 1
        try:
            game = replay(bad)
        except Exception as exc:  # noqa: BLE001 - the test is what it raises
            assert isinstance(exc, RecordError), f"replay raised {type(exc).__name__}: {exc}"
        else:  # only a change that keeps the record consistent may pass (e.g. a draw order entry replaced
            accepted += 1  # by an identical id), and then the record must replay to its own scores
            assert "scores" not in bad or bad["scores"] == game.scores
            assert to_record(game)["actions"] == bad["actions"][: len(game.history)]
        assert freeze(bad) == snapshot, "replay changed the record it was given"
    assert tried == 240 and accepted < tried // 4
