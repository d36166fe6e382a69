"""PPO's pool with a fixed player (``ppo.p_player`` / ``ppo.player``): a search opponent for the learner."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch
from test_agents import TINY as BASE

from agents.config import TrainConfigError, config_from_dict, load_config
from agents.ppo import PPOConfig, SelfPlayTrainer
from agents.train import PROGRESS_FIELDS, train
from carc_env.search import MCTSPolicy

pytestmark = pytest.mark.usefixtures("one_torch_thread")

GAME = {"num_players": 2, "expansions": ["base"], "engine": "python"}
# test_agents.py's tiny run on the Python engine, half its games against an 8-simulation MCTS
TINY = {
    **BASE,
    "game": GAME,
    "ppo": {
        **BASE["ppo"],
        "imitation_updates": 0,
        "p_random": 0.0,
        "p_greedy": 0.5,
        "p_self": 0.0,
        "p_snapshot": 0.0,
        "p_player": 0.5,
        "player": "mcts:8",
    },
}


class Recorder:
    """A pool player that plays each game's first legal action and remembers what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []  # (the env's id, deciding seat, action)

    def act(self, obs, env) -> int:
        a = int(np.flatnonzero(obs["action_mask"])[0])
        self.calls.append((id(env), env.possible_agents.index(env.agent_selection), a))
        return a


def test_the_pool_player_makes_every_opponent_decision_of_its_games():
    cfg = PPOConfig(**{**TINY["ppo"], "p_greedy": 0.0, "p_player": 1.0, "rollout_workers": 1,
                       "net": config_from_dict(TINY).ppo.net})  # fmt: skip
    torch.manual_seed(0)
    tr = SelfPlayTrainer(GAME, cfg, seed=4)
    assert isinstance(tr.player_opponent, MCTSPolicy) and tr.player_opponent.simulations == 8
    assert set(tr.opponent) == {"player"}
    rec = tr.player_opponent = Recorder()
    tr.collect()
    opponent_decisions = tr.env_steps - tr.learner_steps
    assert opponent_decisions > 0 and len(rec.calls) == opponent_decisions
    assert tr.episodes == 0  # no game ended in this rollout, so every game kept its seats
    index = {id(env): i for i, env in enumerate(tr.envs)}
    assert {index[e] for e, _, _ in rec.calls} == {0, 1}  # it played in both games ...
    assert all(seat != tr.seat[index[e]] for e, seat, _ in rec.calls)  # ... always the seat that is not the learner's
    for i in range(2):  # and its moves are the games' moves, in order: the history holds them as a subsequence
        mine = [a for e, _, a in rec.calls if index[e] == i]
        rest = iter(tr.games.history[i][1])
        assert all(any(a == h for h in rest) for a in mine)
    assert sum(len(tr.games.history[i][1]) for i in range(2)) == tr.env_steps  # every decision is in a history


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_a_run_against_the_search_player_logs_its_win_rate_and_resumes_exactly(tmp_path, engine):
    # every game against the player (the other weights 0), long enough for games to end in update 2; on the
    # compiled engine the checkpoint holds the games without their reference Games, which resume rebuilds
    game = dict(GAME, engine=engine)
    cfg = config_from_dict(
        dict(TINY, game=game, ppo=dict(TINY["ppo"], steps_per_update=96, p_greedy=0.0, p_player=1.0))
    )
    straight = train(cfg, tmp_path / "a", progress=False)
    train(cfg, tmp_path / "b", progress=False, max_updates=1)
    resumed = train(cfg, tmp_path / "b", progress=False)
    assert resumed.updates == straight.updates == 2 and resumed.env_steps == straight.env_steps
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), f"{k} differs after resume"
    with (tmp_path / "a" / "progress.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert any(r["train_win_rate_vs_player"] != "" for r in rows)  # games against the player ended and counted
    assert all(0.0 <= float(r["train_win_rate_vs_player"]) <= 1.0 for r in rows if r["train_win_rate_vs_player"])


def test_a_log_written_before_the_player_column_resumes(tmp_path):
    tiny = dict(TINY, game={"num_players": 2, "expansions": ["base"]}, ppo=dict(TINY["ppo"], p_player=0.0, player=""))
    cfg = config_from_dict(tiny)
    train(cfg, tmp_path, progress=False, max_updates=1)
    path = tmp_path / "progress.csv"
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    old = PROGRESS_FIELDS[: PROGRESS_FIELDS.index("train_win_rate_vs_player")]  # the columns before it
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=old, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    assert train(cfg, tmp_path, progress=False).updates == 2
    with path.open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == PROGRESS_FIELDS
        assert [r["update"] for r in reader] == ["1", "2"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"game": {**GAME, "num_players": [2, 3]}}, r"ppo.p_player: .*game.num_players is a list"),
        ({"ppo": {"player": ""}}, r"ppo.player: '' is not allowed"),
        ({"ppo": {"player": "mcts:lots"}}, r"ppo.player: "),
        ({"ppo": {"p_player": -0.5}}, r"ppo.p_player: -0.5 is not allowed"),
        ({"ppo": {"p_player": 0.0}}, r"ppo.player: 'mcts:8' would never play: ppo.p_player is 0"),
    ],
)
def test_a_bad_pool_player_names_its_key(change, message):
    data = {**TINY, "game": change.get("game", TINY["game"]), "ppo": {**TINY["ppo"], **change.get("ppo", {})}}
    with pytest.raises(TrainConfigError, match=message):
        config_from_dict(data)


class MatchRecorder:
    """A pool player on the compiled engine: it plays the first legal action and checks what it is given."""

    uses_observation = True

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []  # (the game slot, deciding seat, action)

    def act(self, obs, env) -> int:
        # the game's FastMatch: the mask is the deciding seat's, and its reference Game is the same game
        assert np.array_equal(obs["action_mask"], env.mask()) and obs["board"].shape == env.encoder.board_shape
        assert env.game.player == env.player and env.game.scores == env.scores and not env.game.over
        assert len(env.game.history) == env.batch.steps(env.g)
        a = int(np.flatnonzero(obs["action_mask"])[0])
        self.calls.append((env.g, env.player, a))
        return a


def test_the_pool_player_decides_from_each_games_match_on_the_compiled_engine():
    cfg = PPOConfig(**{**TINY["ppo"], "p_greedy": 0.0, "p_player": 1.0, "rollout_workers": 1,
                       "net": config_from_dict(TINY).ppo.net})  # fmt: skip
    config_from_dict(dict(TINY, game={"num_players": 2, "expansions": ["base"]}))  # the config is accepted too
    torch.manual_seed(0)
    tr = SelfPlayTrainer({"num_players": 2, "expansions": ["base"], "engine": "numba"}, cfg, seed=4)
    assert tr.engine == "numba" and isinstance(tr.player_opponent, MCTSPolicy)
    rec = tr.player_opponent = MatchRecorder()
    stepped: dict[int, list[int]] = {0: [], 1: []}
    step = tr.games.step

    def logged_step(games, actions):
        for g, a in zip(games, actions, strict=True):
            stepped[int(g)].append(int(a))
        step(games, actions)

    tr.games.step = logged_step
    tr.collect()
    opponent_decisions = tr.env_steps - tr.learner_steps
    assert opponent_decisions > 0 and len(rec.calls) == opponent_decisions
    assert tr.episodes == 0  # no game ended in this rollout, so every game kept its seats
    assert {g for g, _, _ in rec.calls} == {0, 1}
    assert all(seat != tr.seat[g] for g, seat, _ in rec.calls)  # never the learner's seat
    for g in range(2):  # its moves are the games' moves, in order: a subsequence of what was played there
        rest = iter(stepped[g])
        assert all(any(a == h for h in rest) for _, _, a in (c for c in rec.calls if c[0] == g))


def test_a_pool_player_needs_one_count_of_players():
    cfg = config_from_dict(TINY).ppo
    with pytest.raises(ValueError, match="sits at one count of players"):
        SelfPlayTrainer({"num_players": [2, 3], "expansions": ["base"]}, cfg, seed=0)


@pytest.mark.parametrize(
    "path, player, start",
    [
        ("configs/search_pool.yaml", "mcts:300", "pretrained:base-2p-160"),
        ("configs/search_pool_1000.yaml", "mcts:1000", "pretrained:base-2p-search-pool"),
        ("configs/search_pool_1000_direct.yaml", "mcts:1000", "pretrained:base-2p-160"),
        ("configs/search_pool_strong.yaml", "mcts:1000:root=halving:farmers=0", "pretrained:base-2p-160"),
        ("configs/search_pool_ladder.yaml", "mcts:300", "pretrained:base-2p-160"),
        ("configs/search_pool_chain.yaml", "mcts:300", "pretrained:base-2p-160"),
        ("configs/search_pool_chain_1000.yaml", "mcts:1000", "runs/search_pool_chain/checkpoint.pt"),
        ("configs/search_pool_imitate.yaml", "mcts:1000", "pretrained:base-2p-160"),
        ("configs/search_pool_imitate_low.yaml", "mcts:1000", "pretrained:base-2p-160"),
        ("configs/search_pool_cheap.yaml", "mcts:200:root=halving:farmers=0", "pretrained:base-2p-160"),
        (
            "configs/search_pool_cheap_500h.yaml",
            "mcts:500:root=halving:farmers=0",
            "runs/search_pool_cheap/checkpoint.pt",
        ),
    ],
)
def test_the_search_pool_configs_load(path, player, start):
    """The documented pool runs load and start from the network their comments name (shipped, or the run before)."""
    cfg = load_config(path)
    assert cfg.ppo.p_player > 0 and cfg.ppo.player == player and cfg.game["engine"] == "auto"
    assert cfg.run.init_weights == start


LADDER = dict(TINY["ppo"], player="mcts:4", player_ladder=["mcts:6", "mcts:8"], ladder_win_rate=0.5, ladder_window=2)


def _ladder_trainer(**change):
    cfg = PPOConfig(**{**LADDER, "rollout_workers": 1, **change, "net": config_from_dict(TINY).ppo.net})
    return SelfPlayTrainer(GAME, cfg, seed=4)


def _games(wins, losses, other=0):
    """Episode records as the trainer keeps them: wins and losses against the pool's player, other games."""

    def game(win, opponent):
        return {"win": win, "tie": 0.0, "margin": 1.0 if win else -1.0, "score": 10, "opponent": opponent}

    return [game(1.0, "player")] * wins + [game(0.0, "player")] * losses + [game(1.0, "greedy")] * other


def test_the_ladder_moves_up_when_the_window_reaches_the_win_rate_and_stops_at_its_top():
    tr = _ladder_trainer()
    assert tr.rung == 0 and tr.player_spec == "mcts:4" and tr.player_opponent.simulations == 4
    tr.recent = _games(3, 1, other=9)
    assert tr.pop_episode_stats()["player_rung"] == 0.0 and tr.rung == 0  # one update is not a window of two
    tr.recent = _games(0, 5)
    tr.pop_episode_stats()
    assert tr.rung == 0  # 3 wins of 9 games against the player (the greedy games do not count): below 0.5
    tr.recent = _games(5, 0)
    stats = tr.pop_episode_stats()
    assert stats["player_rung"] == 0.0  # the rung these games were played on ...
    assert tr.rung == 1 and tr.player_spec == "mcts:6" and tr.player_opponent.simulations == 6  # ... then up: 5 of 10
    # (the window is the last two updates: 0 of 5 and 5 of 5)
    assert tr.ladder_log == []  # a new rung starts a new window
    tr.recent = _games(9, 0)
    tr.pop_episode_stats()
    assert tr.rung == 1  # one update on the new rung is not yet a window
    tr.recent = _games(1, 1)
    tr.pop_episode_stats()
    assert tr.rung == 2 and tr.player_opponent.simulations == 8  # 10 of 11
    for _ in range(3):
        tr.recent = _games(4, 0)
        assert tr.pop_episode_stats()["player_rung"] == 2.0
    assert tr.rung == 2  # the top rung stays


def test_an_update_without_games_against_the_player_counts_in_the_window_and_moves_nothing():
    tr = _ladder_trainer(ladder_window=1)
    tr.recent = _games(0, 0, other=3)
    tr.pop_episode_stats()
    assert tr.rung == 0
    assert tr.pop_episode_stats() == {"player_rung": 0.0}  # nothing finished: only the rung is logged
    tr.recent = _games(1, 1)
    tr.pop_episode_stats()
    assert tr.rung == 1  # 1 of 2 >= 0.5 with a window of one update


def test_the_rung_reaches_the_rollout_helpers_and_survives_a_checkpoint():
    """A sharded run: the helpers play against the rung the training process reached, and a resumed trainer
    (and its helpers) continue on it with the same pool player."""
    import pickle

    tr = _ladder_trainer(rollout_workers=2)
    tr.set_rung(2)
    tr.collect()
    sd = tr.state_dict()
    tr.close()
    shard = pickle.loads(pickle.loads(sd["blob"].numpy().tobytes())["shards"][0])
    assert pickle.loads(shard["blob"].numpy().tobytes())["rung"] == 2  # the helper's own trainer moved up
    again = _ladder_trainer(rollout_workers=2)
    again.load_state_dict(sd)
    assert again.rung == 2 and again.player_opponent.simulations == 8
    assert again.player_opponent.rng.bit_generator.state == tr.player_opponent.rng.bit_generator.state


def test_a_ladder_run_logs_its_rung(tmp_path):
    cfg = config_from_dict(dict(TINY, ppo=LADDER))
    train(cfg, tmp_path, progress=False)
    with (tmp_path / "progress.csv").open() as fh:
        assert [r["player_rung"] for r in csv.DictReader(fh)] == ["0.0", "0.0"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"player_ladder": ["mcts:lots"]}, r"ppo.player_ladder\[0\]: "),
        ({"player_ladder": ["mcts:6", ""]}, r"ppo.player_ladder\[1\]: '' is not allowed"),
        ({"player_ladder": "mcts:6"}, r"ppo.player_ladder: 'mcts:6' is not allowed"),
        ({"ladder_win_rate": 0.0}, r"ppo.ladder_win_rate: 0.0 is not allowed"),
        ({"ladder_window": 0}, r"ppo.ladder_window: 0 is not allowed"),
        ({"p_player": 0.0, "player": ""}, r"ppo.player_ladder: .* would never play"),
    ],
)
def test_a_bad_ladder_names_its_key(change, message):
    with pytest.raises(TrainConfigError, match=message):
        config_from_dict({**TINY, "ppo": {**LADDER, **change}})


def test_imitating_the_pool_player_fits_its_choices_from_its_seat():
    cfg = PPOConfig(**{**TINY["ppo"], "p_greedy": 0.0, "p_player": 1.0, "rollout_workers": 1, "imitate_player": 1.0,
                       "net": config_from_dict(TINY).ppo.net})  # fmt: skip
    torch.manual_seed(0)
    tr = SelfPlayTrainer(GAME, cfg, seed=4)
    rec = tr.player_opponent = Recorder()
    roll = tr.collect()
    # every decision of the player is a target, seen from its own seat, with the action it chose
    assert roll.player_actions == [a for _, _, a in rec.calls] and len(roll.player_samples) == len(rec.calls) > 0
    for s, a in zip(roll.player_samples, roll.player_actions, strict=True):
        assert s["mask"][a] == 1
    before = _player_cross_entropy(tr, roll)
    for _ in range(3):
        stats = tr.update(roll)
    assert stats["player_decisions"] == len(rec.calls) and 0.0 <= stats["player_agreement"] <= 1.0
    assert _player_cross_entropy(tr, roll) < before  # the update moved the policy towards the player's choices


def _player_cross_entropy(tr, roll) -> float:
    from agents.network import masked_logits
    from agents.policy import collate

    with torch.no_grad():
        batch = collate(roll.player_samples)
        logits, _ = tr.net(*batch.inputs())
        logp = torch.log_softmax(masked_logits(logits, batch.mask), dim=1)
        return float(-logp[torch.arange(len(roll.player_actions)), torch.as_tensor(roll.player_actions)].mean())


def test_without_imitation_the_player_leaves_no_targets_and_the_update_is_unchanged():
    cfg = PPOConfig(**{**TINY["ppo"], "p_greedy": 0.0, "p_player": 1.0, "rollout_workers": 1,
                       "net": config_from_dict(TINY).ppo.net})  # fmt: skip
    tr = SelfPlayTrainer(GAME, cfg, seed=4)
    roll = tr.collect()
    assert roll.player_samples == [] and "player_agreement" not in tr.update(roll)


def test_an_imitating_run_shards_its_targets_and_resumes_exactly(tmp_path):
    ppo = dict(TINY["ppo"], steps_per_update=96, p_greedy=0.0, p_player=1.0, imitate_player=0.5, rollout_workers=2)
    cfg = config_from_dict(dict(TINY, ppo=ppo))
    straight = train(cfg, tmp_path / "a", progress=False)
    train(cfg, tmp_path / "b", progress=False, max_updates=1)
    resumed = train(cfg, tmp_path / "b", progress=False)
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), f"{k} differs after resume"
    with (tmp_path / "a" / "progress.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    # every opponent decision of both processes' games (all of them the player's) reached the update as a target
    prev = (0, 0)
    for r in rows:
        steps = (int(r["env_steps"]), int(r["learner_steps"]))
        assert float(r["player_decisions"]) == (steps[0] - prev[0]) - (steps[1] - prev[1]) > 0
        assert 0 <= float(r["player_agreement"]) <= 1
        prev = steps


def test_imitating_without_a_pool_player_names_its_key():
    data = {**TINY, "ppo": {**TINY["ppo"], "p_player": 0.0, "player": "", "imitate_player": 0.5}}
    with pytest.raises(TrainConfigError, match=r"ppo.imitate_player: 0.5 has nothing to learn from"):
        config_from_dict(data)
    with pytest.raises(TrainConfigError, match=r"ppo.imitate_player: -1.0 is not allowed"):
        config_from_dict({**TINY, "ppo": {**TINY["ppo"], "imitate_player": -1.0}})
