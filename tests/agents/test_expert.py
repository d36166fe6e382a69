"""Expert iteration (agents/expert.py): search targets, the value target, the loss, resume, config checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.checkpoint import load_checkpoint, net_from_checkpoint
from agents.config import TrainConfigError
from agents.expert import ExpertConfig, ExpertTrainer, expert_config_from_dict, policy_target, train_expert
from agents.network import NetConfig
from agents.search import PPOSearchPolicy

TINY = {"channels": 4, "blocks": 0, "hidden": 16}
GAME = {"num_players": 2, "expansions": ["base"]}


def _cfg(**expert):
    ex = {"simulations": 3, "games_per_iteration": 1, "batch": 32, "steps_per_iteration": 2, "chunk": 16, "net": TINY}
    ex.update(expert)
    return expert_config_from_dict({"game": GAME, "expert": ex, "run": {"total_iterations": 2, "eval_every": 0}})


@pytest.fixture(scope="module")
def played():
    torch.set_num_threads(1)
    cfg = ExpertConfig(simulations=3, net=NetConfig(**TINY), temperature_moves=4)
    tr = ExpertTrainer({"num_players": 2, "expansions": ("base",)}, cfg, seed=5)
    return tr, tr.play()


def test_samples_carry_a_visit_distribution_over_legal_actions(played):
    tr, samples = played
    assert len(samples) > 50 and tr.decisions == len(samples) == len(tr.buffer)
    for s in samples:
        assert s["pi"].sum() == pytest.approx(1.0, abs=1e-5)
        assert (s["pi"] > 0).all()
        legal = set(s["mask"].tolist())
        assert set(s["pi_index"].tolist()) <= legal and len(legal) > 1


def test_value_targets_are_margin_change_plus_outcome(played):
    tr, samples = played
    scores = list(tr.env.game.scores)
    assert scores[0] != scores[1]  # this deal has no tie (a tie would make both outcomes 0)
    # the last sample of each seat: its margin at the decision is within a tile's points of the final one,
    # so |z - win_bonus * outcome| is small, and the two seats' outcomes are opposite
    winner = int(np.argmax(scores))
    first = samples[0]
    # the first decision is seat 0's, at margin 0: z = 0.05 x final margin + outcome exactly
    final0 = scores[0] - scores[1]
    assert float(first["z"]) == pytest.approx(0.05 * final0 + (1.0 if winner == 0 else -1.0), abs=1e-5)


def test_the_update_fits_the_targets(played):
    tr, _ = played
    torch.manual_seed(0)
    tr.cfg.steps_per_iteration = 30
    tr.cfg.batch = 64
    tr.opt = torch.optim.Adam(tr.net.parameters(), lr=3e-3)
    first = tr.update()
    second = tr.update()
    assert second["policy_loss"] < first["policy_loss"]
    assert second["value_loss"] < first["value_loss"]


def test_resume_continues_exactly(tmp_path):
    torch.set_num_threads(1)
    cfg = _cfg()
    whole = train_expert(cfg, tmp_path / "whole", progress=False)
    train_expert(cfg, tmp_path / "cut", progress=False, max_iterations=1)
    again = train_expert(cfg, tmp_path / "cut", progress=False)
    assert again.iterations == whole.iterations == 2 and again.games == whole.games == 2
    for k, v in whole.net.state_dict().items():
        assert torch.equal(v, again.net.state_dict()[k]), k
    a = (tmp_path / "whole" / "progress.csv").read_text().splitlines()
    b = (tmp_path / "cut" / "progress.csv").read_text().splitlines()
    assert len(a) == len(b) == 3
    # the same rows but for the wall-clock and CPU columns
    strip = lambda line: [x for i, x in enumerate(line.split(",")) if i not in (5, 6, 7)]  # noqa: E731
    assert [strip(x) for x in a] == [strip(x) for x in b]
    # the checkpoint is a player: the plain network and search on it
    data = load_checkpoint(tmp_path / "cut" / "checkpoint.pt")
    net_from_checkpoint(data)
    PPOSearchPolicy.from_checkpoint(str(tmp_path / "cut" / "checkpoint.pt"), {"num_players": 2}, simulations=2)
    # another config on the same directory is refused
    with pytest.raises(Exception, match="another config"):
        train_expert(_cfg(simulations=4), tmp_path / "cut", progress=False)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"expert": {"simulations": 0}}, "expert.simulations"),
        ({"expert": {"dirichlet_frac": 1.5}}, "expert.dirichlet_frac"),
        ({"expert": {"target_temperature": 0}}, "expert.target_temperature"),
        ({"expert": {"anchor_coef": -0.1}}, "expert.anchor_coef"),
        ({"expert": {"value_view": "mine"}}, "expert.value_view"),
        ({"expert": {"value_anchor_coef": -1}}, "expert.value_anchor_coef"),
        ({"expert": {"playout": 1.5}}, "expert.playout"),
        ({"expert": {"agree_weight": 1.5}}, "expert.agree_weight"),
        ({"expert": {"target": "logits"}}, "expert.target"),
        ({"expert": {"gumbel_c_scale": -1}}, "expert.gumbel_c_scale"),
        ({"expert": {"gumbel_min_visits": 0}}, "expert.gumbel_min_visits"),
        ({"expert": {"gumbel_min_visits": 2.5}}, "expert.gumbel_min_visits"),
        ({"expert": {"min_gap": -0.1}}, "expert.min_gap"),
        ({"game": {"num_players": 3}, "expert": {"value_view": "decider"}}, "two players"),
        ({"expert": {"bogus": 1}}, "bogus"),
        ({"run": {"total_iterations": 0}}, "run.total_iterations"),
        ({"game": {"num_players": 9}}, "game"),
        ({"trainer": {}}, "trainer"),
        ({"expert": {"teacher": "greedy"}}, "expert.teacher"),
        ({"expert": {"teacher": "mcts:lots"}}, "expert.teacher"),
        ({"expert": {"teacher": "mcts:10", "simulations": 5}}, "expert.simulations"),
        ({"expert": {"teacher": "mcts:10", "target": "gumbel"}}, "expert.target"),
        ({"expert": {"teacher": "mcts:10", "p_greedy": 0.5}}, "expert.p_greedy"),
        ({"run": {"game_workers": 2}}, "run.game_workers"),
        ({"expert": {"teacher": "mcts:10"}, "run": {"game_workers": 0}}, "run.game_workers"),
        ({"run": {"snapshot_every": -1}}, "run.snapshot_every"),
        ({"expert": {"teacher": "mcts:10:time=0.5"}}, "expert.teacher"),
        ({"expert": {"teacher": "mcts:time=0.5"}}, "expert.teacher"),
        ({"expert": {"teacher": "ppo-mcts:no/such.pt:10:top=3"}}, "expert.teacher"),
        ({"expert": {"teacher": "mcts:10", "teacher_target": "best"}}, "expert.teacher_target"),
        ({"expert": {"teacher_target": "choice"}}, "expert.teacher_target"),
    ],
)
def test_bad_configs_name_the_key(bad, match):
    with pytest.raises(TrainConfigError, match=match):
        expert_config_from_dict(bad)


def test_the_documented_config_loads():
    from agents.expert import load_expert_config

    cfg = load_expert_config("configs/expert.yaml")
    assert cfg.expert.init and cfg.run.total_iterations >= 1
    rollout = load_expert_config("configs/expert_rollout.yaml")
    assert rollout.expert.teacher.startswith("mcts:") and rollout.run.game_workers == 2
    searcher = load_expert_config("configs/expert_searcher.yaml")
    assert searcher.expert.teacher.startswith("ppo-mcts:") and searcher.expert.teacher_target == "choice"


def test_scripts_refuse_a_bad_config_and_run_a_tiny_one(tmp_path, capsys):
    import sys
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "scripts"))
    import ppo_arm
    import train_expert

    bad = tmp_path / "bad.yaml"
    bad.write_text("expert:\n  simulations: 0\n")
    assert train_expert.main(["--config", str(bad), "--out", str(tmp_path / "x")]) != 0
    assert "expert.simulations" in capsys.readouterr().err
    tiny = {"game": GAME, "ppo": {"num_envs": 2, "steps_per_update": 16, "epochs": 1, "minibatch": 8,
            "net": TINY}, "run": {"torch_threads": 1}}  # fmt: skip
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(tiny))
    out = tmp_path / "arm"
    assert ppo_arm.main(["--init", "", "--cpu-seconds", "0.01", "--config", str(tmp_path / "tiny.yaml"),
                         "--out", str(out)]) == 0  # fmt: skip
    net_from_checkpoint(load_checkpoint(out / "checkpoint.pt"))
    assert len((out / "progress.csv").read_text().splitlines()) >= 2


def test_policy_target_at_a_temperature_is_the_powered_visits():
    v = np.array([1, 3, 6])
    np.testing.assert_array_equal(policy_target(v), np.array([0.1, 0.3, 0.6], dtype=np.float32))
    np.testing.assert_array_equal(policy_target(v, 0.5), np.array([1, 9, 36], dtype=np.float32) / np.float32(46))
    np.testing.assert_allclose(policy_target(v, 0.25), np.array([1, 81, 1296]) / 1378, rtol=1e-6)
    # a tiny temperature: the most visited action, no overflow (6 ** 100 is beyond float64's exp range)
    np.testing.assert_array_equal(policy_target(np.array([5, 6, 1]), 0.001), np.array([0, 1, 0], dtype=np.float32))
    np.testing.assert_array_equal(policy_target(np.array([2, 2])), np.array([0.5, 0.5], dtype=np.float32))


def test_target_temperature_changes_the_targets_not_the_games():
    torch.set_num_threads(1)
    net = NetConfig(**TINY)
    a = ExpertTrainer(GAME, ExpertConfig(simulations=4, net=net), seed=3).play()
    b = ExpertTrainer(GAME, ExpertConfig(simulations=4, net=net, target_temperature=0.5), seed=3).play()
    assert len(a) == len(b) > 50
    sharper = 0
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x["pi_index"], y["pi_index"])  # the same searches
        assert x["z"] == y["z"]
        want = x["pi"].astype(np.float64) ** 2
        np.testing.assert_allclose(y["pi"], want / want.sum(), rtol=1e-5)
        sharper += int(y["pi"].max() > x["pi"].max() + 1e-6)
    assert sharper > 0


def test_the_anchor_is_zero_at_the_start_weights_and_pulls_back_after():
    torch.set_num_threads(1)
    cfg = ExpertConfig(simulations=3, net=NetConfig(**TINY), anchor_coef=0.5)
    tr = ExpertTrainer(GAME, cfg, seed=5)
    tr.play()
    from agents.network import masked_logits
    from agents.policy import collate

    batch = collate([tr._expand(s) for s in tr.buffer[:40]])

    def kl() -> float:
        logits, v = tr.net(*batch.inputs())
        kl, gap = tr.anchor_terms(batch, torch.log_softmax(masked_logits(logits, batch.mask), dim=1), v)
        return float(kl.detach()), float(gap.detach())

    assert kl() == (0.0, 0.0)
    with torch.no_grad():
        for p in tr.net.parameters():
            p.add_(0.05 * torch.randn_like(p))
    moved, moved_v = kl()
    assert moved > 1e-4 and moved_v > 1e-6
    # the anchor's gradient points back to the start: steps on the anchor alone shrink the KL
    tr.cfg.value_coef = 0.0
    tr.cfg.anchor_coef = tr.cfg.value_anchor_coef = 100.0  # (the policy loss is small beside them)
    tr.cfg.steps_per_iteration = 10
    tr.opt = torch.optim.Adam(tr.net.parameters(), lr=3e-3)
    stats = tr.update()
    assert stats["anchor_kl"] > 0 and stats["value_anchor"] > 0
    after, after_v = kl()
    assert after < moved and after_v < moved_v


def test_the_playout_option_reaches_the_search():
    """``expert.playout``: the trainer's guide mixes one play-out into every new leaf's value; the searches
    (so the visit targets) change, the samples' shapes do not."""
    torch.set_num_threads(1)
    net = NetConfig(**TINY)
    plain = ExpertTrainer(GAME, ExpertConfig(simulations=6, net=net), seed=3)
    mixed = ExpertTrainer(GAME, ExpertConfig(simulations=6, net=net, playout=0.5), seed=3)
    assert mixed.guide.playout == 0.5 and plain.guide.playout == 0.0
    a, b = plain.play(), mixed.play()
    assert plain.guide.playouts == 0 and mixed.guide.playouts > len(b)  # the root and every new leaf
    assert any(
        x["pi"].shape != y["pi"].shape or not np.array_equal(x["pi"], y["pi"]) for x, y in zip(a, b, strict=False)
    )


def test_disagreement_is_the_searchs_choice_beating_the_networks_top_prior():
    from agents.expert import disagreement

    priors, visits, values = [0.1, 0.6, 0.3], [5, 3, 2], [0.4, 0.25, float("nan")]
    assert disagreement(priors, visits, values, best=1) == (False, 0.0)  # the search chose the top prior
    dis, gap = disagreement(priors, visits, values, best=0)
    assert dis and gap == pytest.approx(0.15)
    assert disagreement(priors, visits, values, best=0, min_gap=0.2) == (False, pytest.approx(0.15))
    # the network's top prior never visited: beaten by any margin
    assert disagreement([0.1, 0.2, 0.7], [5, 3, 0], values, best=0, min_gap=5.0) == (True, float("inf"))


def test_samples_record_whether_the_search_overrode_the_networks_top_prior(played):
    tr, samples = played
    flags = [bool(s["disagrees"]) for s in samples]
    # a tiny fresh network and 3 simulations: the search both keeps and overrides its top prior
    assert any(flags) and not all(flags)


def _flagged(tr, every: int) -> list[dict]:
    return [{**s, "disagrees": k % every == 0} for k, s in enumerate(tr.buffer[:60])]


def test_agree_weight_zero_learns_the_policy_from_the_disagreements_alone(played):
    """With ``agree_weight`` 0 the policy loss is the cross-entropy over the disagreeing samples only: the same
    figure as training with a buffer of those samples alone, and no policy gradient at all without them."""
    tr0, _ = played
    torch.set_num_threads(1)

    def first_loss(buffer: list[dict], **cfg) -> tuple[float, ExpertTrainer]:
        ex = ExpertConfig(
            simulations=3, net=NetConfig(**TINY), steps_per_iteration=1, batch=256, chunk=16, value_coef=0.0, **cfg
        )
        tr = ExpertTrainer(GAME, ex, seed=5)
        tr.net.load_state_dict(tr0.net.state_dict())
        tr.buffer = buffer
        return tr.update()["policy_loss"], tr

    mixed = _flagged(tr0, 3)
    focused, _ = first_loss(mixed, agree_weight=0.0)
    alone, _ = first_loss([s for s in mixed if s["disagrees"]])
    everything, _ = first_loss(mixed)
    assert focused == pytest.approx(alone, rel=1e-5) and focused != pytest.approx(everything, rel=1e-3)
    # no disagreement in the buffer: nothing moves the weights (no value loss, no anchor)
    before = {k: v.clone() for k, v in tr0.net.state_dict().items()}
    loss, tr = first_loss([{**s, "disagrees": False} for s in mixed], agree_weight=0.0)
    assert loss == 0.0
    assert all(torch.equal(before[k], v) for k, v in tr.net.state_dict().items())


def test_agree_weight_one_is_the_training_of_before(played):
    tr0, _ = played
    a = ExpertTrainer(GAME, ExpertConfig(simulations=3, net=NetConfig(**TINY), steps_per_iteration=2), seed=5)
    b = ExpertTrainer(GAME, ExpertConfig(simulations=3, net=NetConfig(**TINY), steps_per_iteration=2), seed=5)
    a.buffer = [{k: v for k, v in s.items() if k != "disagrees"} for s in tr0.buffer]
    b.buffer = _flagged(tr0, 2) + tr0.buffer[60:]
    assert a.update() == b.update()
    assert all(torch.equal(x, y) for x, y in zip(a.net.state_dict().values(), b.net.state_dict().values(), strict=True))
    # the flags are read: below 1 the same flagged buffer trains another network from the same seed
    c = ExpertTrainer(
        GAME, ExpertConfig(simulations=3, net=NetConfig(**TINY), steps_per_iteration=2, agree_weight=0.5), seed=5
    )
    c.buffer = _flagged(tr0, 2) + tr0.buffer[60:]
    c.update()
    assert not all(
        torch.equal(x, y) for x, y in zip(a.net.state_dict().values(), c.net.state_dict().values(), strict=True)
    )


def test_the_improved_policy_moves_the_prior_towards_the_valued_actions():
    import math

    from agents.expert import improved_policy

    priors, visits, values = [0.5, 0.3, 0.2], [6, 3, 0], [0.2, 0.6, float("nan")]
    # q rescaled over the visited: [0, 1]; the unvisited completed by their prior-weighted mean 0.3 / 0.8;
    # sigma = (50 + 6) x 0.1 = 5.6
    logits = [math.log(0.5), math.log(0.3) + 5.6, math.log(0.2) + 5.6 * 0.375]
    z = sum(math.exp(x) for x in logits)
    want = [math.exp(x) / z for x in logits]
    got = improved_policy(priors, visits, values, c_visit=50.0, c_scale=0.1)
    assert got.dtype == np.float32 and got.tolist() == pytest.approx(want, rel=1e-5)
    assert got[1] > 0.9  # the best-valued action takes the mass its values earned
    # equal values, or no scale: the prior itself; no visit: the prior
    assert improved_policy(priors, [4, 4, 1], [0.3, 0.3, 0.3]).tolist() == pytest.approx(priors, rel=1e-6)
    assert improved_policy(priors, visits, values, c_scale=0.0).tolist() == pytest.approx(priors, rel=1e-6)
    assert improved_policy(priors, [0, 0, 0], [float("nan")] * 3).tolist() == pytest.approx(priors, rel=1e-6)


def test_the_improved_policy_leaves_out_the_values_of_too_few_visits():
    from agents.expert import improved_policy

    priors = [0.5, 0.3, 0.2]
    # the third action's 0.9 rests on 2 visits: with min_visits 3 it is completed like an unvisited one,
    # which gives exactly the numbers of the test above
    few = improved_policy(priors, [6, 3, 2], [0.2, 0.6, 0.9], c_visit=50.0, c_scale=0.1, min_visits=3)
    unvisited = improved_policy(priors, [6, 3, 0], [0.2, 0.6, float("nan")], c_visit=50.0, c_scale=0.1)
    assert few.tolist() == pytest.approx(unvisited.tolist(), rel=1e-6)
    # counted (the default), it takes the most mass
    counted = improved_policy(priors, [6, 3, 2], [0.2, 0.6, 0.9], c_visit=50.0, c_scale=0.1)
    assert int(np.argmax(counted)) == 2 and counted[2] > 0.85
    # one seen action alone: no spread to rescale, so the prior itself
    one = improved_policy(priors, [6, 2, 0], [0.2, 0.6, float("nan")], min_visits=3)
    assert one.tolist() == pytest.approx(priors, rel=1e-6)


def test_gumbel_targets_cover_every_root_action_and_leave_the_games_alone():
    torch.set_num_threads(1)
    net = NetConfig(**TINY)
    plain = ExpertTrainer(GAME, ExpertConfig(simulations=4, net=net), seed=3)
    gumbel = ExpertTrainer(GAME, ExpertConfig(simulations=4, net=net, target="gumbel"), seed=3)
    a, b = plain.play(), gumbel.play()
    assert len(a) == len(b) > 50  # the same searches and moves: only the targets differ
    assert list(plain.env.game.scores) == list(gumbel.env.game.scores)
    wider = 0
    for x, y in zip(a, b, strict=True):
        assert set(x["pi_index"].tolist()) <= set(y["pi_index"].tolist()) <= set(y["mask"].tolist())
        assert y["pi"].sum() == pytest.approx(1.0, abs=1e-5) and (y["pi"] > 0).all()
        wider += len(y["pi_index"]) > len(x["pi_index"])
    assert wider > 0  # 4 simulations leave root actions unvisited: the improved policy still covers them


# ---------------------------------------------------------------- a rollout teacher (expert.teacher: mcts:...)
BASE_PY = {"num_players": 2, "expansions": ("base",), "engine": "python"}


def _teacher_cfg(**run):
    ex = {"teacher": "mcts:8:farmers=0", "games_per_iteration": 2, "batch": 32, "steps_per_iteration": 2,
          "chunk": 16, "net": TINY, "temperature_moves": 4}  # fmt: skip
    return expert_config_from_dict({"game": GAME, "expert": ex, "run": {"total_iterations": 2, "eval_every": 0, **run}})


def test_a_rollout_teachers_samples_are_its_visits_and_the_games_outcome():
    from agents.expert import teacher_game

    c = ExpertConfig(teacher="mcts:20:farmers=0", temperature_moves=0)
    game = teacher_game(BASE_PY, c, seed=11)
    samples = game["samples"]
    assert len(samples) == game["decisions"] > 50 and len(game["visit_entropy"]) == len(samples)
    for s in samples:
        legal = set(s["mask"].tolist())
        assert set(s["pi_index"].tolist()) <= legal and len(legal) > 1
        # every simulation adds one visit at the root: the target is the 20 simulations' visits over 20
        assert s["pi"].sum() == pytest.approx(1.0, abs=1e-5)
        assert np.allclose(s["pi"] * 20, np.round(s["pi"] * 20), atol=1e-4) and (s["pi"] > 0).all()
    scores = game["scores"]
    assert scores[0] != scores[1]  # this deal has no tie
    first = samples[0]  # seat 0's first decision, at margin 0
    won = 1.0 if scores[0] > scores[1] else -1.0
    assert float(first["z"]) == pytest.approx(0.05 * (scores[0] - scores[1]) + won, abs=1e-5)
    # a game is a function of its seed alone
    again = teacher_game(BASE_PY, c, seed=11)
    assert again["scores"] == scores and len(again["samples"]) == len(samples)
    for a, b in zip(samples, again["samples"], strict=True):
        assert np.array_equal(a["pi_index"], b["pi_index"]) and np.array_equal(a["pi"], b["pi"]) and a["z"] == b["z"]
    other = teacher_game(BASE_PY, c, seed=12)
    assert other["scores"] != scores or len(other["samples"]) != len(samples)


def test_a_network_searchers_teacher_keeps_its_short_list_and_its_choice_is_the_target():
    from agents.expert import teacher_game
    from agents.players import make_player

    spec = "ppo-mcts:pretrained:base-2p-160:30:top=3:root=halving:farmers=0"
    visits = teacher_game(BASE_PY, ExpertConfig(teacher=spec, temperature_moves=0), seed=5)
    choice = teacher_game(BASE_PY, ExpertConfig(teacher=spec, temperature_moves=0, teacher_target="choice"), seed=5)
    # the target does not change the play: the same game, decision by decision
    assert visits["scores"] == choice["scores"] and visits["decisions"] == choice["decisions"] > 30
    kept_any = False
    for v, ch in zip(visits["samples"], choice["samples"], strict=True):
        legal = v["mask"]
        assert np.array_equal(legal, ch["mask"])
        # the visits target covers the network's 3 likeliest legal actions at most (the teacher's short list)
        assert 1 <= len(v["pi_index"]) <= 3 and set(v["pi_index"].tolist()) <= set(legal.tolist())
        if len(legal) > 3:
            kept_any = True
        # the choice target is one of the searched actions, alone, with weight 1
        assert len(ch["pi_index"]) == 1 and ch["pi"].tolist() == [1.0]
        assert int(ch["pi_index"][0]) in set(v["pi_index"].tolist())
        # halving's pick survives to its last round of two, so no more than one action has more visits
        picked = v["pi"][v["pi_index"].tolist().index(int(ch["pi_index"][0]))]
        assert (v["pi"] > picked).sum() <= 1
        assert v["z"] == ch["z"]
    assert kept_any  # some decisions had more than 3 legal actions: the short list cut them
    # the short list is the network's 3 likeliest root actions, in the root's order
    import carc_env
    from carc_env.search.mcts import root_choices

    player = make_player(spec, {"num_players": 2, "expansions": ("base",)}, 0)
    env = carc_env.raw_env(**BASE_PY)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    actions, indices = root_choices(env.game, env.codec, obs["action_mask"], player.mcts._canon)
    assert len(actions) > 3
    kept_actions, kept = player.root_cut(obs, env, actions, indices)
    logits = player.network.logits(obs, env)
    assert len(kept) == 3 and kept == sorted(kept, key=indices.index)
    assert min(logits[i] for i in kept) >= max(logits[i] for i in indices if i not in kept)
    assert kept_actions == [actions[indices.index(i)] for i in kept]


def test_a_rollout_teachers_run_is_the_same_with_game_workers_and_resumes(tmp_path):
    from agents.players import make_player

    torch.set_num_threads(1)
    one = train_expert(_teacher_cfg(), tmp_path / "one", progress=False)
    two = train_expert(_teacher_cfg(game_workers=2, snapshot_every=1), tmp_path / "two", progress=False)
    assert one.games == two.games == 4 and one.samples == two.samples > 100
    for k, v in one.net.state_dict().items():
        assert torch.equal(v, two.net.state_dict()[k]), k
    # cut after one iteration (the workers' games played ahead are dropped), resumed: the same run
    train_expert(_teacher_cfg(game_workers=2), tmp_path / "cut", progress=False, max_iterations=1)
    again = train_expert(_teacher_cfg(game_workers=2), tmp_path / "cut", progress=False)
    assert again.games == 4 and again.samples == one.samples
    for k, v in one.net.state_dict().items():
        assert torch.equal(v, again.net.state_dict()[k]), k
    # the CPU of the workers' games is counted (one decimal in the log)
    rows = (tmp_path / "two" / "progress.csv").read_text().splitlines()
    assert two.worker_cpu > 0 and float(rows[-1].split(",")[6]) >= two.worker_cpu - 0.05
    # the snapshots are players, the last one the final network
    snaps = sorted((tmp_path / "two" / "snapshots").glob("iteration_*.pt"))
    assert [p.name for p in snaps] == ["iteration_1.pt", "iteration_2.pt"]
    last = load_checkpoint(snaps[-1])
    assert last["kind"] == "expert-iteration-snapshot"
    for k, v in two.net.state_dict().items():
        assert torch.equal(v, last["trainer"]["net"][k]), k
    player = make_player(str(snaps[-1]), {"num_players": 2, "expansions": ("base",)}, 0)
    assert hasattr(player, "act")
