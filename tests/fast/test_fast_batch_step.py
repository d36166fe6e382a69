"""FastBatch's batched step when one game's action is refused, and the read-only reference game.

* An illegal action in one game raises after the other games moved (the contract of ``FastBatch.step``);
  the games that moved, a game that ended and restarted in that step included, must be booked as after a
  step without the error: the restarted game's seed is its successor's and its next successor gets
  prepared (before the fix the seed stayed the finished game's and the next successor was never drawn).
* ``env.unwrapped.game`` on the compiled engine is the reference game replayed from the compiled one: an
  edit of it would never reach the stepping engine, so ``apply`` and attribute writes raise, naming
  ``engine="python"``; a clone of it is an ordinary game.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from carc_env.core import Game, IllegalActionError
from carc_env.env.aec import raw_env
from carc_env.env.options import EnvOptions
from carc_env.fast import available

pytestmark = pytest.mark.skipif(not available(), reason="numba is not installed")


def _first_legal(batch) -> np.ndarray:
    masks = batch.observe_acting()["action_mask"]
    return np.array([int(np.flatnonzero(m)[0]) for m in masks], dtype=np.int64)


def _before_game_1_ends():
    """A batch of two games right before the step that ends game 1 (a one-tile draw order), and the batch
    after that step with legal actions in both games."""
    from carc_env.fast.engine import FastBatch

    batch = FastBatch(EnvOptions.from_kwargs(num_players=2), 2)
    batch.reset(0, 5, prepare_next=True)
    batch.reset(1, 7, draw_order=["BA-D"], prepare_next=True)
    for _ in range(10):
        acts = _first_legal(batch)
        after = pickle.loads(pickle.dumps(batch))
        _, _, dones, *_ = after.step(acts)
        if dones[1]:
            return batch, acts, after
        batch.step(acts)
    raise AssertionError("game 1 (one tile to place) did not end within 10 steps")


def test_refused_action_keeps_the_restarted_games_seed_bookkeeping():
    batch, acts, after = _before_game_1_ends()
    assert not after.over(1) and after.seeds[1] != 7  # game 1 ended and restarted with its successor's seed
    bad = acts.copy()
    mask0 = batch.observe_acting()["action_mask"][0]
    bad[0] = int(np.flatnonzero(mask0 == 0)[0])  # not enabled in game 0
    with pytest.raises(IllegalActionError, match="game 0"):
        batch.step(bad)
    # game 1 moved and restarted as in the step without the error; game 0 did not move
    assert batch.seeds[1] == after.seeds[1]
    assert batch.draw_order(1) == after.draw_order(1)
    assert batch.scores(1) == after.scores(1) and batch.steps(1) == after.steps(1)
    # its successor's successor is prepared as well: both batches restart game 1 identically next time
    for b in (batch, after):
        b._flush()
    assert batch._next_seeds[1] == after._next_seeds[1]
    o = batch._off
    from carc_env.fast.tables import P_O_NEXTBAG

    k = o[P_O_NEXTBAG]
    assert np.array_equal(batch.state.ls[1, k : k + 80], after.state.ls[1, k : k + 80])


def test_refused_action_leaves_held_reference_games_consistent():
    batch, acts, after = _before_game_1_ends()
    game0 = batch.game(0)  # a reference game someone holds follows its compiled game
    played = len(game0.history)
    bad = acts.copy()
    bad[0] = int(np.flatnonzero(batch.observe_acting()["action_mask"][0] == 0)[0])
    with pytest.raises(IllegalActionError):
        batch.step(bad)
    assert len(game0.history) == played  # the refused action was not applied to it either
    assert batch.game(0).scores == batch.scores(0)


def test_compiled_envs_game_is_read_only():
    e = raw_env(num_players=2, engine="numba")
    e.reset(seed=1)
    game = e.game
    action = game.legal_actions()[0]
    with pytest.raises(AttributeError, match='engine="python"'):
        game.apply(action)
    with pytest.raises(AttributeError, match='engine="python"'):
        game.scores = [5, 0]
    with pytest.raises(AttributeError, match='engine="python"'):
        del game.phase
    # stepping still moves it, and copies of it are ordinary games (search clones and plays them)
    e.step(int(np.flatnonzero(e.observe("player_0")["action_mask"])[0]))
    assert e.game is game and len(game.history) == 1
    for twin in (game.clone(), copy.deepcopy(game), pickle.loads(pickle.dumps(game))):
        assert type(twin) is Game
        twin.apply(twin.legal_actions()[0])
        assert len(twin.history) == 2 and len(game.history) == 1


def test_python_engines_game_stays_editable():
    e = raw_env(num_players=2, engine="python")
    e.reset(seed=1)
    e.game.apply(e.game.legal_actions()[0])  # the Python engine's game is the stepping engine itself
    assert len(e.game.history) == 1
