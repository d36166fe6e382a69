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

import torch

from agents.network import NetConfig, masked_logits
from agents.policy import collate
from agents.ppo import PPOConfig, SelfPlayTrainer

GAME = {"num_players": 2}


def _cfg(**kw) -> PPOConfig:
    base = {"num_envs": 2, "steps_per_update": 32, "epochs": 2, "minibatch": 8, "chunk": 4,
            "p_random": 0.5, "p_greedy": 0.5, "p_self": 0.0, "p_snapshot": 0.0, "imitation_updates": 0,
            "net": NetConfig(channels=8, blocks=1, hidden=16)}
    return PPOConfig(**{**base, **kw})


class _Recorder:
    """Plays like the wrapped greedy policy and remembers every action it returned."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.actions: list[int] = []

    def act(self, obs, env) -> int:
        a = int(self.inner.act(obs, env))
        self.actions.append(a)
        return a


def _mean_logp(trainer: SelfPlayTrainer, buf: dict) -> float:
    with torch.no_grad():
        batch = collate(buf["sample"])
        logits, _ = trainer.net(*batch.inputs())
        logp = torch.log_softmax(masked_logits(logits, batch.mask), dim=1)
        return float(logp.gather(1, torch.as_tensor(buf["action"])[:, None]).mean())


def test_imitation_plays_greedy_in_the_learner_seat_and_fits_its_actions():
    torch.manual_seed(0)
    trainer = SelfPlayTrainer(GAME, _cfg(imitation_updates=1, epochs=4, lr=0.01), seed=5)
    rec = _Recorder(trainer.imitator)
    trainer.imitator = rec
    assert trainer.imitating
    buf = trainer.collect()
    assert len(buf["action"]) >= 32
    assert buf["action"] == rec.actions  # every learner decision is greedy's, in order
    before = _mean_logp(trainer, buf)
    stats = trainer.update(buf)
    after = _mean_logp(trainer, buf)
    assert after > before  # cross-entropy to greedy's choices: their likelihood rises
    assert 0.0 <= stats["imitation_accuracy"] <= 1.0 and "approx_kl" not in stats
    # The imitation phase is over: the learner samples from its network, greedy is not asked.
    assert not trainer.imitating
    n_asked = len(rec.actions)
    buf2 = trainer.collect()
    assert len(rec.actions) == n_asked and len(buf2["action"]) >= 32
    assert "approx_kl" in trainer.update(buf2)


def test_target_kl_stops_an_update_early_and_zero_never_does():
    full_steps = None
    for target in (0.0, 1e-9):
        torch.manual_seed(0)
        trainer = SelfPlayTrainer(GAME, _cfg(target_kl=target, lr=0.05), seed=6)
        buf = trainer.collect()
        n = len(buf["action"])
        stats = trainer.update(buf)
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

    env = carc_env.raw_env(num_players=2, expansions=("stained_glass",))
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
