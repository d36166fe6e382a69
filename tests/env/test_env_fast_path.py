"""``env()``'s one-call path (the outer wrapper answering ``last()`` and a legal ``step()`` itself) and the
compiled match's cached acting state give exactly what PettingZoo's wrapper chain and the full checks give.

The same seeded play runs through ``env()`` and through the same env with the one-call path switched off
(``_chain = None``: every call goes through the three wrappers), on both engines, with numpy and Python
integers, an illegal action that ends a game, and the dead agents' steps; everything the user sees is
compared at every step."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from carc_env.env.aec import env as make_env
from carc_env.fast import available

ENGINES = ["python", "numba"] if available() else ["python"]


def _play(e, seed: int) -> list:
    rng = np.random.default_rng(seed)
    seen = []
    for game in range(3):
        e.reset(seed=seed + game)
        for k, agent in enumerate(e.agent_iter(400)):
            obs, reward, term, trunc, info = e.last()
            if term or trunc:
                action = None
            elif game == 1 and k == 9:  # an illegal action: TerminateIllegalWrapper ends the game
                action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = legal[rng.integers(len(legal))]
                action = int(action) if k % 2 else action  # numpy and Python integers
            seen.append(
                (
                    agent,
                    {key: v.tobytes() for key, v in obs.items()},
                    reward,
                    term,
                    trunc,
                    {key: (v.tobytes() if isinstance(v, np.ndarray) else v) for key, v in info.items()},
                    dict(e.rewards),
                    dict(e.terminations),
                    list(e.agents),
                )
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # PettingZoo's illegal-move warning
                e.step(action)
    return seen


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("expansions", [("base",), ("base", "king_robber", "river2")], ids=["base", "kr_river"])
def test_one_call_path_equals_the_wrapper_chain(engine, expansions):
    fast = make_env(num_players=3, expansions=expansions, engine=engine)
    chain = make_env(num_players=3, expansions=expansions, engine=engine)
    assert fast._chain is not None
    chain._chain = None
    assert _play(fast, 11) == _play(chain, 11)


@pytest.mark.parametrize("engine", ENGINES)
def test_after_the_end_both_paths_warn_and_refuse_alike(engine):
    out = []
    for off in (False, True):
        e = make_env(num_players=2, engine=engine)
        if off:
            e._chain = None
        e.reset(seed=3, options={"draw_order": ["BA-D"]})
        for _ in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        e.step(5)  # every agent is gone: PettingZoo's warning, nothing happens
        e.reset(seed=1)
        with pytest.raises(Exception) as exc:
            e.step(10**9)
        out.append((list(e.agents), type(exc.value).__name__, str(exc.value)))
    assert out[0] == out[1]
