"""Start a network from another one's weights, matching its inputs by name (``run.init_weights``).

Two networks of the same :class:`~agents.network.NetConfig` differ in the
layers that read the observation's board channels and global features (their
number and order depend on the player count and the expansions) and in the
expansion-action head (the action space).  :func:`transfer` copies every
parameter whose shape agrees and maps the input columns of the three layers
that read named inputs (``stem``: board channels; ``glob_bias`` and the global
part of ``pool_mlp``: global features) by name:

* a name both layouts have: its weights;
(with ``scale_board``, a board column is rescaled by the ratio of the two channel highs, so the same
  raw input gives the same pre-activation);
* any name the source lacks (a wider table's extra opponents ``X_p{k}``, an
  expansion's channel or feature, ``seat_present_*``): 0, so on the inputs
  both games share the new network first computes what the old one did, and at
  a wider table it first reads only the opponents the source knew (the next
  ``k`` players in turn order).  ``copy_seats=True`` instead starts an extra
  opponent's column as a copy of the source's last opponent's: every opponent
  read like one.  That was the first design; it sums the opponent signal
  (four copies at 5 players) and the main command's 2-player agent moved that
  way won 0.19 of 200 5-player games against greedy where zeros won 0.59
  (docs/results/ablations.md).

A network that reads Stained Glass's ``windows`` tensor (``NetShapes.windows_dim``) joins its windows
MLP's outputs to the global features: those columns of ``glob_bias`` and ``pool_mlp`` are named
``windows{dim}_{i}``, so a source without windows (or with another windows layout) gives them 0 (the
new network computes what the old one did whatever the windows hold; the windows MLP keeps its fresh
initialisation and starts to matter as those columns learn), and a source with the same windows layout
gives its own.

A layer whose shape differs otherwise (the expansion-action head of another
action space) keeps its fresh initialisation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch

from .network import PolicyNet

_SEAT = re.compile(r"^(.*)_p(\d+)$")


def input_names(env_kwargs: dict[str, Any], seats: int = 0) -> tuple[list[str], list[str]]:
    """(board channel names, global feature names) a network of this game reads (``seats`` > 0: the
    seat-padded layout)."""
    import carc_env

    kw = dict(env_kwargs)
    if isinstance(kw.get("num_players"), (list, tuple)):
        kw["num_players"] = kw["num_players"][0]
    env = carc_env.raw_env(**kw)
    if seats:
        from .seats import SeatAdapter

        ch, gl = SeatAdapter(env, seats).layout()
        return list(ch), list(gl)
    return list(env.channel_names), list(env.encoder.global_names)


def _column_map(src: list[str], dst: list[str], copy_seats: bool = False) -> list[int]:
    """For each destination name the source column to copy (-1: zero)."""
    pos = {n: k for k, n in enumerate(src)}
    last: dict[str, int] = {}  # per seat group: the column of its highest seat
    top: dict[str, int] = {}
    for n in src:
        m = _SEAT.match(n)
        if m and int(m.group(2)) > top.get(m.group(1), -1):
            top[m.group(1)], last[m.group(1)] = int(m.group(2)), pos[n]
    out = []
    for n in dst:
        if n in pos:
            out.append(pos[n])
            continue
        m = _SEAT.match(n)
        out.append(last.get(m.group(1), -1) if copy_seats and m and int(m.group(2)) > 0 else -1)
    return out


def _map_columns(w_src: torch.Tensor, w_dst: torch.Tensor, cols: list[int], lo: int = 0) -> torch.Tensor:
    """``w_dst`` with input columns ``lo + j`` taken from ``w_src``'s ``lo + cols[j]`` (0 where -1)."""
    out = w_dst.clone()
    out[:, :lo] = w_src[:, :lo]
    out[:, lo:] = 0.0
    for j, k in enumerate(cols):
        if k >= 0:
            out[:, lo + j] = w_src[:, lo + k]
    return out


def _windows_names(net: PolicyNet) -> list[str]:
    """Names of the global-feature columns a network's windows MLP adds after the global features (none
    without windows); the windows layout is in the name, so only the same layout maps onto them."""
    if not net.shapes.windows_dim:
        return []
    return [f"windows{net.shapes.windows_dim}_{i}" for i in range(net.windows_mlp[0].out_features)]


def _high(highs: tuple[int, ...], k: int) -> float:
    return float(max(1, highs[k])) if highs else 1.0


def transfer(
    src: PolicyNet,
    src_names: tuple[list[str], list[str]],
    dst: PolicyNet,
    dst_names: tuple[list[str], list[str]],
    copy_seats: bool = False,
) -> list[str]:
    """Copy ``src``'s weights into ``dst`` as the module docstring says; return the names of the parameters
    left at their initialisation."""
    s_sd, d_sd = src.state_dict(), dst.state_dict()
    ch = _column_map(src_names[0], dst_names[0], copy_seats)
    gl = _column_map(src_names[1] + _windows_names(src), dst_names[1] + _windows_names(dst), copy_seats)
    c = dst.cfg.channels
    kept = []
    for name, w in d_sd.items():
        v = s_sd.get(name)
        if name == "stem.weight" and v is not None:
            d_sd[name] = _map_columns(v, w, ch)
            if src.cfg.scale_board and dst.cfg.scale_board:  # the same input, scaled by another channel high
                for j, k in enumerate(ch):
                    if k >= 0:
                        d_sd[name][:, j] *= _high(dst.shapes.board_high, j) / _high(src.shapes.board_high, k)
        elif name == "glob_bias.weight" and v is not None:
            d_sd[name] = _map_columns(v, w, gl)
        elif name == "pool_mlp.0.weight" and v is not None:
            d_sd[name] = _map_columns(v, w, gl, lo=2 * c)
        elif v is not None and v.shape == w.shape:
            d_sd[name] = v.clone()
        else:
            kept.append(name)
    dst.load_state_dict(d_sd)
    return kept


def load_source(spec: str) -> tuple[PolicyNet, tuple[list[str], list[str]]]:
    """The network ``spec`` names (``pretrained:NAME`` or a checkpoint path) and its input names."""
    from .checkpoint import load_checkpoint, net_from_checkpoint

    if spec.startswith("pretrained:"):
        from . import pretrained

        name = spec.split(":", 1)[1]
        policy = pretrained.load(name)
        net, game = policy.net, dict(pretrained.card(name)["game"])
    else:
        if not Path(spec).is_file():
            raise FileNotFoundError(f"run.init_weights: {spec!r} is neither pretrained:NAME nor a checkpoint file")
        data = load_checkpoint(spec)
        net, game = net_from_checkpoint(data, where=spec), dict(data["config"]["game"])
    return net, input_names(game, net.shapes.seats)


__all__ = ["input_names", "load_source", "transfer"]
