"""The policy/value network for masked PPO.

Shape of the game, shape of the net:

* a convolutional trunk over the board tensor (channels x rows x cols), with
  the global features added to every cell (a learned per-channel bias);
* a fully convolutional placement head: one logit per cell x rotation, laid
  out ``rot * rows * cols + row * cols + col`` exactly like the tile range of
  the flat action space, so a placement's logit comes from the features at
  that cell;
* a follower head that scores each spot of the tile just placed with one
  shared MLP over the spot's features (``obs["spots"]``: kind, size, open
  edges, value, ...) and a context vector (trunk features at the placed cell,
  found from the "last placed" board plane, and the pooled board), plus a
  pass logit from the context;
* a placement-feature scorer: one shared MLP over each legal placement's
  features (``placement_features``: what it completes, which features it
  joins and whose they are, ...), its output added to that placement's
  convolutional logit, so whole-feature facts the convolution cannot see
  reach the policy directly;
* one linear head for every remaining (expansion) action range;
* a value head on the pooled board + globals;
* with Stained Glass (a ``windows`` tensor whose columns an expansion fills:
  ``NetShapes.windows_dim > 0``) a small MLP over the flattened, scaled
  windows tensor (tokens held and complete windows per seat), whose output
  joins the global features: it biases every cell of the trunk and feeds the
  pooled features, so the placement, expansion-phase (steals, window scoring)
  and value heads all see it.  Without it the windows tensor is ignored (it
  is all zero).

The net is sized from the observation space, so a bigger window or new
board channels need no code change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class NetConfig:
    channels: int = 32  # width of the conv trunk
    blocks: int = 1  # residual blocks after the stem
    hidden: int = 128  # width of the pooled MLP
    scale_board: bool = True  # divide each board channel by its largest value


@dataclass(frozen=True)
class NetShapes:
    """What the network needs to know about the env (taken from its spaces)."""

    board_channels: int
    rows: int
    cols: int
    globals_dim: int
    n_actions: int
    tile_actions: int  # 4 * rows * cols, at the start of the action space
    follower_actions: int  # follower spots + pass, right after the tile range
    last_placed_channel: int  # board channel marking the tile just placed
    spot_features: int = 0  # columns of obs["spots"] (per follower spot); 0 = no spot features
    board_high: tuple[int, ...] = ()  # largest value of each board channel (inputs are scaled to 0..1)
    placement_features: int = 0  # columns of the per-placement features; 0 = the conv logits only
    windows_dim: int = 0  # entries of the flattened windows tensor the net reads; 0 = it is ignored
    windows_high: tuple[int, ...] = ()  # largest value of each windows entry (inputs are scaled to 0..1)
    seats: int = 0  # > 0: observations in the seat-padded layout of agents.seats (any player count up to this)


class _Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1)
        self.c2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.c2(F.relu(self.c1(x)) * valid)) * valid


class PolicyNet(nn.Module):
    def __init__(self, shapes: NetShapes, cfg: NetConfig = NetConfig()) -> None:
        super().__init__()
        if shapes.tile_actions != 4 * shapes.rows * shapes.cols:
            raise ValueError(f"tile range {shapes.tile_actions} != 4 x {shapes.rows} x {shapes.cols}")
        self.shapes = shapes
        self.cfg = cfg
        c = cfg.channels
        high = torch.tensor(shapes.board_high or (1,) * shapes.board_channels, dtype=torch.float32)
        self.register_buffer("board_scale", (1.0 / high.clamp(min=1.0))[None, :, None, None], persistent=False)
        self.stem = nn.Conv2d(shapes.board_channels, c, 3, padding=1)
        g = shapes.globals_dim
        if shapes.windows_dim:
            whigh = torch.tensor(shapes.windows_high or (1,) * shapes.windows_dim, dtype=torch.float32)
            self.register_buffer("windows_scale", 1.0 / whigh.clamp(min=1.0), persistent=False)
            self.windows_mlp = nn.Sequential(nn.Linear(shapes.windows_dim, cfg.hidden // 4), nn.ReLU())
            g += cfg.hidden // 4
        self.glob_bias = nn.Linear(g, c)
        self.blocks = nn.ModuleList([_Block(c) for _ in range(cfg.blocks)])
        self.place_head = nn.Conv2d(c, 4, 1)
        self.pool_mlp = nn.Sequential(nn.Linear(2 * c + g, cfg.hidden), nn.ReLU())
        ctx = cfg.hidden + c
        if shapes.spot_features:
            # One shared scorer per spot (its features + context), and a pass logit from the context.
            self.spot_mlp = nn.Sequential(
                nn.Linear(shapes.spot_features + ctx, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 1)
            )
            self.pass_head = nn.Linear(ctx, 1)
        else:
            self.follower_head = nn.Sequential(
                nn.Linear(ctx, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, shapes.follower_actions)
            )
        if shapes.placement_features:
            self.place_mlp = nn.Sequential(
                nn.Linear(shapes.placement_features, cfg.hidden // 2), nn.ReLU(), nn.Linear(cfg.hidden // 2, 1)
            )
        self.n_rest = shapes.n_actions - shapes.tile_actions - shapes.follower_actions
        self.rest_head = nn.Linear(cfg.hidden, self.n_rest) if self.n_rest > 0 else None
        self.value_head = nn.Sequential(
            nn.Linear(cfg.hidden, cfg.hidden // 2), nn.ReLU(), nn.Linear(cfg.hidden // 2, 1)
        )
        # channels-last convolutions are about 1.3x faster on CPU (oneDNN); the maths is the same
        self.to(memory_format=torch.channels_last)

    def forward(
        self,
        board: torch.Tensor,
        globs: torch.Tensor,
        spots: torch.Tensor | None = None,
        place_index: torch.Tensor | None = None,
        place_features: torch.Tensor | None = None,
        windows: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
        place_pos: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (logits over the whole flat action space, value).

        ``board`` ``(b, C, H, W)`` is the observation window or a crop of it
        (:func:`agents.policy.crop_region`; the crop of each sample at the top
        left, zero-padded to the batch's size).  ``valid`` ``(b, 1, H, W)``
        (float 0/1) marks the cells the network looks at: every trunk layer's
        output is zeroed outside them and the pooling averages over them only,
        so a crop and the whole window with ``valid`` = the crop's cells give
        the same output, whatever the padding.  ``None``: the whole board.

        ``place_index`` ``(b, k)`` (long) and ``place_features`` ``(b, k, F)``:
        the legal placements' flat action indices and features, padded with
        rows whose ``present`` column (0) is 0; ``place_pos`` ``(b, k)``: the
        same placements as flat positions ``rot * H * W + row * W + col`` in
        ``board``'s own grid (``None``: the board is the whole window, so the
        positions are the action indices).  Placement logits are the
        convolutional head's value at the placement plus the placement-feature
        scorer's; the tile range's other entries (illegal placements) are 0.
        ``windows`` ``(b, players, columns)``: the observation's windows tensor
        (needed when ``shapes.windows_dim`` is not 0).
        """
        b = board.shape[0]
        h, w = board.shape[2], board.shape[3]
        if valid is None:
            valid = torch.ones((b, 1, h, w), dtype=board.dtype)
        if self.shapes.windows_dim:
            if windows is None:
                raise ValueError("this network reads the stained-glass windows: pass obs['windows']")
            win = windows.reshape(b, -1).float() * self.windows_scale
            globs = torch.cat([globs, self.windows_mlp(win)], dim=1)
        last = board[:, self.shapes.last_placed_channel].reshape(b, -1)
        if self.cfg.scale_board:
            board = board * self.board_scale
        board = board.contiguous(memory_format=torch.channels_last)
        valid = valid.contiguous(memory_format=torch.channels_last)
        x = F.relu(self.stem(board) + self.glob_bias(globs)[:, :, None, None]) * valid
        for block in self.blocks:
            x = block(x, valid)
        tile = torch.zeros((b, self.shapes.tile_actions), dtype=x.dtype)
        if place_index is None:
            place_index = torch.zeros((b, 0), dtype=torch.int64)
        if place_index.shape[1]:
            if place_features is None:
                raise ValueError("pass place_features with place_index (their rows mark the real placements)")
            conv = self.place_head(x).reshape(b, -1)
            pos = place_index if place_pos is None else place_pos
            vals = conv.gather(1, pos)
            if self.shapes.placement_features:
                vals = vals + self.place_mlp(place_features).squeeze(2)
            tile = tile.scatter_add(1, place_index, vals * place_features[:, :, 0])
        elif self.shapes.placement_features and place_features is None:
            raise ValueError("this network scores placements by their features: pass place_index/place_features")
        n_valid = valid.sum(dim=(2, 3)).clamp(min=1.0)
        # after the ReLU every feature is >= 0 and 0 outside the valid cells, so the max ignores the padding
        pooled = torch.cat([x.sum(dim=(2, 3)) / n_valid, x.amax(dim=(2, 3)), globs], dim=1)
        hid = self.pool_mlp(pooled)
        # Trunk features at the last placed tile (zero vector before any placement).
        weight = last / last.sum(dim=1, keepdim=True).clamp(min=1.0)
        local = torch.einsum("bn,bcn->bc", weight, x.reshape(b, x.shape[1], -1))
        ctx = torch.cat([hid, local], dim=1)
        if self.shapes.spot_features:
            if spots is None:
                raise ValueError("this network scores follower spots: pass obs['spots']")
            n_spots = spots.shape[1]
            spot_in = torch.cat([spots, ctx[:, None, :].expand(b, n_spots, ctx.shape[1])], dim=2)
            foll = torch.cat([self.spot_mlp(spot_in).squeeze(2), self.pass_head(ctx)], dim=1)
        else:
            foll = self.follower_head(ctx)
        parts = [tile, foll]
        if self.rest_head is not None:
            parts.append(self.rest_head(hid))
        logits = torch.cat(parts, dim=1)
        value = self.value_head(hid).squeeze(1)
        return logits, value

    def describe(self) -> dict:
        return {"shapes": asdict(self.shapes), "net": asdict(self.cfg)}


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions get the most negative float, so they have probability 0."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, torch.finfo(logits.dtype).min))


def legal_exp(logp: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """``exp(logp)`` on the ``legal`` entries and 0 on the others: the probabilities of masked
    log-probabilities (:func:`masked_logits`, then ``log_softmax``), bit for bit ``logp.exp()``.

    Why not ``logp.exp()``: an illegal entry's log-probability is about -3.4e38, and on some x86 CPUs
    torch's ``exp`` is far slower on inputs below about -87 than on ordinary ones (measured on a
    2-core Intel Xeon host: 0.65-1.0 ms instead of 0.01-0.05 ms for 16 rows of the base game's 2,925
    actions, where about 99 % are illegal; ``docs/results/main.md``, session 30).  So the illegal
    entries are 0 while ``exp`` runs and 0 again after it (where ``exp`` underflowed to 0 anyway)."""
    legal = legal.bool()
    zero = torch.zeros_like(logp)
    return torch.where(legal, torch.where(legal, logp, zero).exp(), zero)


def legal_logits(logits: torch.Tensor, legal_index: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The logits of each row's legal actions only, ``(b, L)``: ``legal_index`` ``(b, L)`` holds a row's
    legal flat action indices (:func:`agents.policy.legal_actions`), padded where ``legal`` ``(b, L)`` is
    False; the padding gets the masked value of :func:`masked_logits`.  Their ``log_softmax`` is the
    masked policy's (``log_softmax(masked_logits(logits, mask))``) at those actions, computed over ``L``
    entries instead of the whole action space (the same numbers up to the order of the float sums)."""
    return masked_logits(logits.gather(1, legal_index), legal)


def masked_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy over the legal actions only."""
    ml = masked_logits(logits, mask)
    logp = torch.log_softmax(ml, dim=1)
    p = legal_exp(logp, mask)
    return -(torch.where(mask.bool(), p * logp, torch.zeros_like(p))).sum(dim=1)
