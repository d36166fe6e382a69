"""The levers of the default PPO recipe: imitation of greedy first, then PPO with a KL early stop.

* While ``imitation_updates`` last, the learner's seat is played by the greedy
  baseline (every learner action in the buffer is the one greedy chose) and
  the update fits the policy to those actions (their log-likelihood rises);
  afterwards the network samples its own actions again.
* ``target_kl`` > 0 ends an update once a minibatch's approximate KL exceeds
  1.5 x the target, so a tiny target stops it after at most two gradient
  steps, and 0 runs every epoch over every minibatch.
"""

from __future__ import annotations

import math

import pytest
import torch

from agents.network import NetConfig, masked_logits
from agents.policy import collate
from agents.ppo import PPOConfig, SelfPlayTrainer

GAME = {"num_players": 2}


def _cfg(**kw) -> PPOConfig:
    base = {
        "num_envs": 2,
        "rollout_workers": 1,  # these tests look inside the trainer's own games (tests/agents/test_shards.py: k > 1)
        "steps_per_update": 32,
        "epochs": 2,
        "minibatch": 8,
        "chunk": 4,
        "p_random": 0.5,
        "p_greedy": 0.5,
        "p_self": 0.0,
        "p_snapshot": 0.0,
        "imitation_updates": 0,
        "net": NetConfig(channels=8, blocks=1, hidden=16),
    }
    return PPOConfig(**{**base, **kw})


def _record_imitator(trainer: SelfPlayTrainer) -> list[int]:
    """Record every decision the trainer's games make for its imitator (the greedy in the learner's seat)."""
    actions: list[int] = []
    inner = trainer.games.greedy

    def greedy(idx, policy):
        out = inner(idx, policy)
        if policy is trainer.imitator:
            actions.extend(int(a) for a in out)
        return out

    trainer.games.greedy = greedy
    return actions


def _mean_logp(trainer: SelfPlayTrainer, roll) -> float:
    with torch.no_grad():
        batch = collate(roll.samples)
        logits, _ = trainer.net(*batch.inputs())
        logp = torch.log_softmax(masked_logits(logits, batch.mask), dim=1)
        return float(logp.gather(1, torch.as_tensor(roll.actions.reshape(-1))[:, None]).mean())


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_imitation_plays_greedy_in_the_learner_seat_and_fits_its_actions(engine):
    torch.manual_seed(0)
    trainer = SelfPlayTrainer({**GAME, "engine": engine}, _cfg(imitation_updates=1, epochs=4, lr=0.01), seed=5)
    assert trainer.engine == ("numba" if engine == "auto" else "python")
    rec = _record_imitator(trainer)
    assert trainer.imitating
    roll = trainer.collect()
    assert len(roll) >= 32
    assert roll.actions.reshape(-1).tolist() == rec  # every learner decision is greedy's, in order
    before = _mean_logp(trainer, roll)
    stats = trainer.update(roll)
    after = _mean_logp(trainer, roll)
    assert after > before  # cross-entropy to greedy's choices: their likelihood rises
    assert 0.0 <= stats["imitation_accuracy"] <= 1.0 and "approx_kl" not in stats
    # The imitation phase is over: the learner samples from its network, greedy is not asked.
    assert not trainer.imitating
    n_asked = len(rec)
    roll2 = trainer.collect()
    assert len(rec) == n_asked and len(roll2) >= 32
    assert "approx_kl" in trainer.update(roll2)


def test_target_kl_stops_an_update_early_and_zero_never_does():
    full_steps = None
    for target in (0.0, 1e-9):
        torch.manual_seed(0)
        trainer = SelfPlayTrainer(GAME, _cfg(target_kl=target, lr=0.05), seed=6)
        roll = trainer.collect()
        n = len(roll)
        stats = trainer.update(roll)
        if target == 0.0:
            full_steps = stats["gradient_steps"]
            assert full_steps == 2 * math.ceil(n / 8)  # every minibatch of every epoch
        else:
            # the first minibatch's KL is ~0 (nothing has moved yet); the next one is over the target
            assert 1 <= stats["gradient_steps"] <= 2 < full_steps


def test_a_game_greedy_has_looked_at_pickles_and_plays_on_the_same():
    """A checkpoint pickles the running games; the greedy look-ahead caches the plug-ins' heuristics
    modules in the rule set's cache, which a pickle must leave out (it is rebuilt on first use)."""
    import pickle

    import carc_env
    from carc_env.baselines import GreedyPolicy

    env = carc_env.raw_env(num_players=2, expansions=("stained_glass",), engine="python")
    env.reset(seed=4)
    greedy = GreedyPolicy(seed=0)
    for _ in range(6):
        env.step(int(greedy.act(env.infos[env.agent_selection], env)))
    assert env.game.rules._cache  # the look-ahead filled it
    copy = pickle.loads(pickle.dumps(env))
    assert copy.game.rules._cache == {}
    a, b = GreedyPolicy(seed=1), GreedyPolicy(seed=1)
    for _ in range(20):
        x = int(a.act(env.infos[env.agent_selection], env))
        y = int(b.act(copy.infos[copy.agent_selection], copy))
        assert x == y
        env.step(x)
        copy.step(y)
    assert list(env.game.scores) == list(copy.game.scores)


def test_the_learning_rate_falls_linearly_after_imitation_then_stays():
    trainer = SelfPlayTrainer(GAME, _cfg(imitation_updates=2, lr=1e-3, lr_decay_updates=10, lr_final=1e-4), seed=1)
    assert [trainer.lr_at(u) for u in (0, 1, 2)] == [1e-3, 1e-3, 1e-3]
    assert trainer.lr_at(7) == pytest.approx(5.5e-4, rel=1e-12)
    assert trainer.lr_at(12) == pytest.approx(1e-4, rel=1e-12) and trainer.lr_at(500) == trainer.lr_at(12)
    still = SelfPlayTrainer(GAME, _cfg(lr=3e-4), seed=1)  # lr_decay_updates 0: lr throughout
    assert {still.lr_at(u) for u in (0, 5, 10_000)} == {3e-4}


def test_each_update_steps_with_its_own_learning_rate():
    trainer = SelfPlayTrainer(GAME, _cfg(lr=1e-2, lr_decay_updates=2, lr_final=1e-3), seed=2)
    seen = []
    for _ in range(3):
        stats = trainer.update(trainer.collect())
        seen.append((stats["lr"], trainer.opt.param_groups[0]["lr"]))
    assert [a for a, b in seen if a == b] == [a for a, _ in seen]  # Adam stepped with the logged rate
    assert [a for a, _ in seen] == pytest.approx([1e-2, 5.5e-3, 1e-3], rel=1e-12)
    assert "lr" not in SelfPlayTrainer(GAME, _cfg(), seed=2).update(trainer.collect())  # constant: no column
