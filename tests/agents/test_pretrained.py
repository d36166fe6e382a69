"""Shipped agents: loadable by name on the CPU, weights only, a player spec, refusals that name the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import carc_env
from agents.checkpoint import CheckpointError, save_checkpoint
from agents.evaluate import evaluate
from agents.network import NetConfig, PolicyNet
from agents.players import PlayerSpecError, make_player
from agents.policy import shapes_from_env
from agents.pretrained import HERE, PretrainedError, available, card, export, load, load_net


def test_base_2p_is_shipped_with_its_card():
    assert "base-2p" in available()
    info = card("base-2p")
    assert info["game"] == {"num_players": 2, "expansions": ["base"]}
    for key in ("training", "strength", "hardware"):
        assert key in info, key
    pt = HERE / "base-2p.pt"
    assert pt.stat().st_size < 5_000_000
    data = torch.load(pt, map_location="cpu", weights_only=True)  # weights only: no pickled objects
    assert set(data) == {"format", "shapes", "net_config", "state_dict"}


def test_load_plays_legal_moves_and_beats_random():
    policy = load("base-2p")
    assert not any(p.requires_grad and p.is_cuda for p in policy.net.parameters())
    env = carc_env.raw_env(**policy.env_kwargs)
    assert policy.net.shapes == shapes_from_env(env)
    res = evaluate(policy, make_player("random", {}, seed=1), 6, 0, {})
    assert res["games"] == 6 and res["win_rate"] >= 0.5  # a trained agent; 0.99+ over 400 games (docs/agents.md)


def test_pretrained_player_spec():
    p = make_player("pretrained:base-2p", {"num_players": 2}, seed=0)
    assert p.name == "pretrained:base-2p"
    env = carc_env.raw_env(num_players=2)
    env.reset(seed=3)
    a = p.act(env.observe(env.agent_selection), env)
    assert env.infos[env.agent_selection]["action_mask"][a] == 1
    with pytest.raises(PlayerSpecError, match="no shipped agent 'nope'.*base-2p"):
        make_player("pretrained:nope", {}, seed=0)
    with pytest.raises(CheckpointError, match="plays .*not this game"):
        make_player("pretrained:base-2p", {"num_players": 3}, seed=0)


def test_unknown_and_damaged_agents_are_named(tmp_path):
    with pytest.raises(PretrainedError, match="shipped: base-2p"):
        load("base-3p")
    (tmp_path / "bad.json").write_text('{"game": {}}')
    (tmp_path / "bad.pt").write_bytes(b"not torch")
    with pytest.raises(PretrainedError, match="bad.pt: not a readable shipped agent"):
        load_net("bad", tmp_path)


def test_export_round_trip(tmp_path):
    env = carc_env.raw_env()
    shapes = shapes_from_env(env)
    torch.manual_seed(0)
    net = PolicyNet(shapes, NetConfig(channels=8, hidden=16))
    from dataclasses import asdict

    ckpt = tmp_path / "checkpoint.pt"
    save_checkpoint(ckpt, {"shapes": asdict(shapes), "net_config": asdict(net.cfg), "trainer": {"net": net.state_dict()},
                           "config": {}})  # fmt: skip
    with pytest.raises(PretrainedError, match="needs 'game'"):
        export(ckpt, "x", {}, tmp_path / "out")
    export(ckpt, "tiny", {"game": {"num_players": 2, "expansions": ["base"]}}, tmp_path / "out")
    back = load("tiny", tmp_path / "out")
    assert back.env_kwargs == {"num_players": 2, "expansions": ["base"]}
    for k, v in net.state_dict().items():
        assert torch.equal(back.net.state_dict()[k], v)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    from agents.policy import PPOPolicy

    assert back.act(obs, env) == PPOPolicy(net).act(obs, env)


def test_multi_is_one_network_for_every_table():
    info = card("multi")
    assert info["player_counts"] == [2, 3, 4, 5] and (HERE / "multi.pt").stat().st_size < 2_000_000
    assert {s["players"] for s in info["strength"]} == {2, 3, 4, 5}
    policy = load("multi")
    assert policy.net.shapes.seats == 5
    for n in (2, 3, 4, 5):
        player = make_player("pretrained:multi", {"num_players": n}, seed=0)
        env = carc_env.raw_env(num_players=n)
        env.reset(seed=n)
        for _ in range(3 * n):  # a few turns of every seat, followers included
            agent = env.agent_selection
            a = player.act(env.observe(agent), env)
            assert env.infos[agent]["action_mask"][a] == 1
            env.step(a)


def _own_weights_legal_moves(name: str, other: str) -> None:
    """Shipped agent ``name`` has ``other``'s layout but weights of its own, and plays legal 2-player moves."""
    a, b = load(name), load(other)
    assert a.net.shapes == b.net.shapes
    assert any(not torch.equal(v, b.net.state_dict()[k]) for k, v in a.net.state_dict().items())
    player = make_player(f"pretrained:{name}", {"num_players": 2}, seed=0)
    env = carc_env.raw_env(num_players=2)
    env.reset(seed=3)
    for _ in range(6):
        agent = env.agent_selection
        act = player.act(env.observe(agent), env)
        assert env.infos[agent]["action_mask"][act] == 1
        env.step(act)


def test_base_2p_160_is_another_two_player_agent():
    """The main command's 160-update network ships beside base-2p: its own weights, the 2-player base game, a
    card naming its training and its strength against search."""
    info = card("base-2p-160")
    assert info["game"] == {"num_players": 2, "expansions": ["base"]} and info["training"]["updates"] == 160
    assert {s["opponent"] for s in info["strength"]} >= {"greedy", "mcts:1000", "mcts:5000"}
    _own_weights_legal_moves("base-2p-160", "base-2p")


def test_base_2p_search_pool_is_base_2p_160_trained_on_against_search():
    """The network of configs/search_pool.yaml ships with a card naming its start, its run and its strength against
    search; it has its own weights on base-2p-160's layout and plays legal moves."""
    info = card("base-2p-search-pool")
    assert info["game"] == {"num_players": 2, "expansions": ["base"]}
    assert info["training"]["start"] == "pretrained:base-2p-160" and info["training"]["updates"] == 160
    assert "configs/search_pool.yaml" in info["training"]["command"]
    strength = {s["opponent"]: s for s in info["strength"]}
    assert set(strength) == {"greedy", "mcts:1000", "mcts:5000"}
    for s in strength.values():  # each figure is its own games' count: wins + ties + losses, rate = wins / games
        assert s["wins"] + s["ties"] + s["losses"] == s["games"] and s["win_rate"] == round(s["wins"] / s["games"], 4)
    _own_weights_legal_moves("base-2p-search-pool", "base-2p-160")


def test_base_2p_search_pool_1000_card_is_its_reports():
    """The network of configs/search_pool_1000.yaml ships with a card whose every figure is the network's own row of
    the committed report it names (games, results, rate, interval, margin), and a training chain whose CPU adds up."""
    info = card("base-2p-search-pool-1000")
    assert info["game"] == {"num_players": 2, "expansions": ["base"]}
    t = info["training"]
    assert t["start"] == "pretrained:base-2p-search-pool" and t["updates"] == 60
    assert "configs/search_pool_1000.yaml" in t["command"]
    start = card("base-2p-search-pool")["training"]["cpu_seconds_whole_command"]
    first = card("base-2p-160")["training"]["cpu_seconds_whole_command"]
    assert t["cpu_seconds_from_a_fresh_network"] == t["cpu_seconds_whole_command"] + start + first
    assert {s["opponent"] for s in info["strength"]} == {"greedy", "mcts:1000", "mcts:5000"}
    root = Path(__file__).resolve().parents[2]
    for s in info["strength"]:
        report = json.loads((root / s["report"]).read_text())
        (mine,) = [p for p in report["players"] if p["name"] == "runs/search_pool_1000/checkpoint.pt"]
        assert {p["name"] for p in report["players"]} == {mine["name"], s["opponent"]}
        for key in ("games", "wins", "ties", "losses", "win_rate", "win_rate_ci95", "mean_margin"):
            assert s[key] == mine[key], (s["opponent"], key)
        assert s["wins"] + s["ties"] + s["losses"] == s["games"] == len(report["games"])
    _own_weights_legal_moves("base-2p-search-pool-1000", "base-2p-search-pool")
