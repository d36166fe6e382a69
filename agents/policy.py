"""Glue between the env's observations and the network, and the PPO policy as a player.

``PPOPolicy`` implements the baseline protocol of ``carc_env.baselines``
(``act(obs, env) -> int``), so a trained agent can be an opponent, be
evaluated against the baselines, or play in a rendered game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from carc_env.encoding.placements import N_PLACEMENT_FEATURES, placement_features
from carc_env.encoding.spots import N_SPOT_FEATURES, spot_features

from .network import NetShapes, PolicyNet, masked_logits


def shapes_from_env(env: Any, seats: int = 0) -> NetShapes:
    """Read the network's input/output shapes from a raw env.

    ``seats`` > 0: the shapes of the seat-padded layout (:mod:`agents.seats`), the same for every
    player count up to ``seats``, which a network for mixed tables reads."""
    if seats:
        return _padded_shapes(env, seats)
    agent = env.possible_agents[0]
    space = env.observation_space(agent)
    c, rows, cols = space["board"].shape
    n_actions = int(env.action_space(agent).n)
    t_lo, t_hi = env.codec.tile_range.start, env.codec.tile_range.stop
    lo, hi = env.codec.follower_range.start, env.codec.follower_range.stop
    if (t_lo, t_hi) != (0, 4 * rows * cols) or lo != t_hi:
        raise ValueError(f"unexpected action layout: tile {t_lo}..{t_hi}, follower {lo}..{hi}")
    names = list(env.channel_names)
    last = [i for i, n in enumerate(names) if n == "last_placed"]
    if not last:
        raise ValueError(f"the env has no 'last_placed' board channel; channels: {names}")
    windows_dim, windows_high = 0, ()
    if list(getattr(env, "window_names", ())):  # an expansion fills the windows tensor (Stained Glass)
        high = np.broadcast_to(space["windows"].high, space["windows"].shape)
        windows_dim, windows_high = int(high.size), tuple(int(h) for h in high.reshape(-1))
    return NetShapes(
        board_channels=c,
        rows=rows,
        cols=cols,
        globals_dim=int(space["globals"].shape[0]),
        n_actions=n_actions,
        tile_actions=t_hi,
        follower_actions=hi - lo,
        last_placed_channel=last[0],
        spot_features=N_SPOT_FEATURES,
        board_high=tuple(int(h) for h in env.encoder.channel_high),
        placement_features=N_PLACEMENT_FEATURES,
        windows_dim=windows_dim,
        windows_high=windows_high,
    )


def _padded_shapes(env: Any, seats: int) -> NetShapes:
    import dataclasses
    from dataclasses import replace

    import carc_env

    from .seats import SeatAdapter

    env = getattr(env, "unwrapped", env)
    if len(env.possible_agents) != seats:  # the widest table's scales (the follower planes' highs grow with it)
        kw = {f.name: getattr(env.options, f.name) for f in dataclasses.fields(env.options)}
        env = carc_env.raw_env(**{**kw, "num_players": seats, "render_mode": None})
    ad = SeatAdapter(env, seats)
    base = shapes_from_env(env)
    windows_dim, windows_high = 0, ()
    if base.windows_dim:
        per_row = base.windows_high[: ad.windows_columns]
        windows_dim, windows_high = seats * ad.windows_columns, tuple(per_row) * seats
    return replace(
        base,
        board_channels=len(ad.channel_names),
        globals_dim=len(ad.global_names),
        last_placed_channel=ad.channel_names.index("last_placed"),
        board_high=ad.channel_high,
        windows_dim=windows_dim,
        windows_high=windows_high,
        seats=seats,
    )


def with_action_features(obs: dict, env: Any) -> dict:
    """The observation with the action features the network scores added (if the env's option
    ``action_features`` did not already put them there).

    ``"spots"``: per follower spot; ``"place_index"`` / ``"place_features"``: per legal placement
    (:mod:`carc_env.encoding.spec`), zero rows outside the tile phase.  They come from the env's match
    (either engine: the compiled one computes them in its kernels), else from ``env.game``."""
    if "spots" in obs and "place_index" in obs:
        return obs
    if hasattr(env, "action_features") and hasattr(env, "player"):  # a Match (the vector env's opponents)
        return {**obs, **env.action_features(env.player)}
    if env is None or not hasattr(env, "possible_agents"):
        raise ValueError("the network's action features are computed from the game: call act(obs, env) with the env")
    env = getattr(env, "unwrapped", env)
    seat = env.possible_agents.index(env.agent_selection)
    match = getattr(env, "match", None)
    if match is not None and hasattr(match, "action_features"):
        return {**obs, **match.action_features(seat)}
    game = env.game
    max_spots = env.codec.follower_range.size - 1
    idx, feats = placement_features(game, seat, env.codec)
    return {**obs, "spots": spot_features(game, seat, max_spots), "place_index": idx, "place_features": feats}


class Batch(NamedTuple):
    """Network inputs for a batch of observations (see :meth:`PolicyNet.forward`)."""

    board: torch.Tensor
    globs: torch.Tensor
    spots: torch.Tensor
    place_index: torch.Tensor
    place_features: torch.Tensor
    mask: torch.Tensor
    windows: torch.Tensor
    valid: torch.Tensor
    place_pos: torch.Tensor

    def inputs(self) -> tuple[torch.Tensor, ...]:
        """The network's positional inputs, in :meth:`PolicyNet.forward`'s order."""
        return (
            self.board,
            self.globs,
            self.spots,
            self.place_index,
            self.place_features,
            self.windows,
            self.valid,
            self.place_pos,
        )


def crop_region(board: np.ndarray) -> tuple[int, int, int, int]:
    """``(r0, r1, c0, c1)``: the smallest block of rows ``r0:r1`` and columns ``c0:c1`` holding every
    nonzero cell of ``board`` ``(C, rows, cols)``, i.e. the played area and its frontier (which holds
    every legal placement).  Outside it every channel is 0."""
    occ = board.any(axis=0)
    rows = np.flatnonzero(occ.any(axis=1))
    if not len(rows):  # an empty board (never after the start tile): the whole window
        return 0, board.shape[1], 0, board.shape[2]
    cols = np.flatnonzero(occ.any(axis=0))
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def sample_from_obs(obs: dict, crop: bool = True) -> dict[str, Any]:
    """One observation (with action features) as a compact training sample: the board cropped to
    :func:`crop_region` (``crop=False``: the whole window, with the same region marked valid, which gives
    the same network outputs at a higher cost), its origin in the window, and the other inputs as arrays."""
    board = obs["board"]
    r0, r1, c0, c1 = crop_region(board)
    feats = np.asarray(obs["place_features"], dtype=np.float32)
    k = int(np.count_nonzero(feats[:, 0])) if len(feats) else 0  # fixed-size rows: the real ones come first
    if crop:
        board = board[:, r0:r1, c0:c1]
        origin, region = (r0, c0), (0, r1 - r0, 0, c1 - c0)
    else:
        origin, region = (0, 0), (r0, r1, c0, c1)
    return {
        "board": np.ascontiguousarray(board),
        "origin": origin,
        "region": region,
        "window": obs["board"].shape[1:],
        "globals": np.asarray(obs["globals"], dtype=np.float32),
        "spots": np.asarray(obs["spots"], dtype=np.float32),
        "place_index": np.asarray(obs["place_index"][:k], dtype=np.int64),
        "place_features": feats[:k],
        "mask": np.asarray(obs["action_mask"]).astype(bool),
        "windows": np.asarray(obs["windows"], dtype=np.float32),
    }


def collate(samples: Sequence[dict[str, Any]]) -> Batch:
    """Stack samples (:func:`sample_from_obs`) into network inputs: each board at the top left of a
    zero board of the batch's largest one, ``valid`` marking its played area, the placements' positions
    in that grid, and the placement rows padded with zero rows (index 0, ``present`` 0)."""
    b = len(samples)
    n_ch = samples[0]["board"].shape[0]
    height = max(s["board"].shape[1] for s in samples)
    width = max(s["board"].shape[2] for s in samples)
    board = np.zeros((b, n_ch, height, width), dtype=np.uint8)
    valid = np.zeros((b, 1, height, width), dtype=np.float32)
    k = max(len(s["place_index"]) for s in samples)
    n_feat = samples[0]["place_features"].shape[1] if k else N_PLACEMENT_FEATURES
    idx = np.zeros((b, k), dtype=np.int64)
    pos = np.zeros((b, k), dtype=np.int64)
    feats = np.zeros((b, k, n_feat), dtype=np.float32)
    for j, s in enumerate(samples):
        _, h, w = s["board"].shape
        board[j, :, :h, :w] = s["board"]
        vr0, vr1, vc0, vc1 = s["region"]
        valid[j, 0, vr0:vr1, vc0:vc1] = 1.0
        n = len(s["place_index"])
        if n:
            rows, cols = s["window"]
            r0, c0 = s["origin"]
            rot, rem = np.divmod(s["place_index"], rows * cols)
            row, col = np.divmod(rem, cols)
            idx[j, :n] = s["place_index"]
            pos[j, :n] = rot * height * width + (row - r0) * width + (col - c0)
            feats[j, :n] = s["place_features"]
    return Batch(
        board=torch.from_numpy(board).float(),
        globs=torch.from_numpy(np.stack([s["globals"] for s in samples])),
        spots=torch.from_numpy(np.stack([s["spots"] for s in samples])),
        place_index=torch.from_numpy(idx),
        place_features=torch.from_numpy(feats),
        mask=torch.from_numpy(np.stack([s["mask"] for s in samples])),
        windows=torch.from_numpy(np.stack([s["windows"] for s in samples])),
        valid=torch.from_numpy(valid),
        place_pos=torch.from_numpy(pos),
    )


def legal_actions(rows: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(index, legal)``, both ``(b, L)``: row j's legal flat actions ``rows[j]`` (ascending, as
    ``np.flatnonzero`` of its mask gives them) padded with index 0 to the longest row, and which entries
    are real (:func:`agents.network.legal_logits`)."""
    width = max(1, max(len(r) for r in rows))
    index = np.zeros((len(rows), width), dtype=np.int64)
    legal = np.zeros((len(rows), width), dtype=bool)
    for j, r in enumerate(rows):
        index[j, : len(r)] = r
        legal[j, : len(r)] = True
    return torch.from_numpy(index), torch.from_numpy(legal)


def obs_to_tensors(obs: Sequence[dict], crop: bool = True) -> Batch:
    """Stack observation dicts (with action features) into the network's input tensors and the bool mask
    (``crop``: the boards cropped to their played area, which only saves work)."""
    return collate([sample_from_obs(o, crop) for o in obs])


def stacked_to_tensors(obs: dict[str, np.ndarray], counts: Sequence[int]) -> Batch:
    """:func:`obs_to_tensors` (cropped) of observations stacked along a first axis (row j: one observation;
    ``counts[j]``: its real placement rows, which come first), the same tensors without splitting them
    into per-observation samples (a search's leaf: every seat's observation at once)."""
    boards = obs["board"]
    b, n_ch = boards.shape[0], boards.shape[1]
    occ = boards.any(axis=1)  # (b, rows, cols): crop_region's occupied cells of each board
    regions = []
    for j in range(b):
        rows = np.flatnonzero(occ[j].any(axis=1))
        if not len(rows):
            regions.append((0, boards.shape[2], 0, boards.shape[3]))
            continue
        cols = np.flatnonzero(occ[j].any(axis=0))
        regions.append((int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1))
    height = max(r1 - r0 for r0, r1, _, _ in regions)
    width = max(c1 - c0 for _, _, c0, c1 in regions)
    board = np.zeros((b, n_ch, height, width), dtype=np.uint8)
    valid = np.zeros((b, 1, height, width), dtype=np.float32)
    k = max(counts)
    feats_in = obs["place_features"]
    idx = np.zeros((b, k), dtype=np.int64)
    pos = np.zeros((b, k), dtype=np.int64)
    feats = np.zeros((b, k, feats_in.shape[2]), dtype=np.float32)
    win_rows, win_cols = boards.shape[2], boards.shape[3]
    for j, (r0, r1, c0, c1) in enumerate(regions):
        board[j, :, : r1 - r0, : c1 - c0] = boards[j, :, r0:r1, c0:c1]
        valid[j, 0, : r1 - r0, : c1 - c0] = 1.0
        n = counts[j]
        if n:
            index = obs["place_index"][j, :n]
            rot, rem = np.divmod(index, win_rows * win_cols)
            row, col = np.divmod(rem, win_cols)
            idx[j, :n] = index
            pos[j, :n] = rot * height * width + (row - r0) * width + (col - c0)
            feats[j, :n] = feats_in[j, :n]
    return Batch(
        board=torch.from_numpy(board).float(),
        globs=torch.from_numpy(np.ascontiguousarray(obs["globals"], dtype=np.float32)),
        spots=torch.from_numpy(np.ascontiguousarray(obs["spots"], dtype=np.float32)),
        place_index=torch.from_numpy(idx),
        place_features=torch.from_numpy(feats),
        mask=torch.from_numpy(obs["action_mask"].astype(bool)),
        windows=torch.from_numpy(obs["windows"].astype(np.float32)),
        valid=torch.from_numpy(valid),
        place_pos=torch.from_numpy(pos),
    )


class PPOPolicy:
    """A trained network as a player: argmax over legal actions (or sampling)."""

    def __init__(self, net: PolicyNet, sample: bool = False, seed: int = 0, name: str = "ppo") -> None:
        self.net = net.eval()
        self.sample = sample
        self.name = name
        self.gen = torch.Generator().manual_seed(seed)
        self._adapters: dict[Any, Any] = {}

    def _prepare(self, obs: dict, env: Any) -> dict:
        """The observation as the network reads it: with its action features and, for a network of the
        seat-padded layout (``shapes.seats`` > 0), mapped onto it (:mod:`agents.seats`)."""
        obs = with_action_features(obs, env)
        seats = self.net.shapes.seats
        if not seats:
            return obs
        if env is None or hasattr(env, "action_features"):  # a Match: no names to map by
            if obs["board"].shape[0] != self.net.shapes.board_channels:
                raise ValueError("this network reads the seat-padded layout: call act(obs, env) with the env")
            return obs
        from .seats import adapter_for

        return adapter_for(env, seats, self._adapters)(obs)

    @torch.no_grad()
    def act(self, obs: dict, env: Any = None) -> int:
        return self.act_batch([self._prepare(obs, env)])[0]

    @torch.no_grad()
    def logits(self, obs: dict, env: Any = None) -> np.ndarray:
        """The network's logits over the flat actions of ``obs`` (float64; actions the mask disables get
        the masked value of :func:`masked_logits`): what :meth:`act`'s argmax reads."""
        batch = obs_to_tensors([self._prepare(obs, env)])
        logits, _ = self.net(*batch.inputs())
        return masked_logits(logits, batch.mask)[0].double().numpy()

    @torch.no_grad()
    def act_envs(self, envs: Sequence[Any]) -> list[int]:
        """One action for the deciding agent of each env, with one batched forward."""
        return self.act_batch([self._prepare(e.observe(e.agent_selection), e) for e in envs])

    @torch.no_grad()
    def act_batch(self, obs: Sequence[dict]) -> list[int]:
        batch = obs_to_tensors(obs)
        logits, _ = self.net(*batch.inputs())
        ml = masked_logits(logits, batch.mask)
        if self.sample:
            probs = torch.softmax(ml, dim=1)
            return torch.multinomial(probs, 1, generator=self.gen).squeeze(1).tolist()
        return ml.argmax(dim=1).tolist()
