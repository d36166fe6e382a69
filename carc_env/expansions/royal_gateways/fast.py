"""The Royal Gateways in the compiled engine (:mod:`carc_env.fast`): its kernels.

A link is a union in the engine's union-find, as in :mod:`.rules`: the linked
city is one feature (tiles counted once, pennants, followers and open edges of
every part together), so completion, scoring, fields, the King and Darmstadt
see the whole without a kernel of their own.  Kernels:

* ``placement_links``: a gate's city segment joins the city of every placed
  gate of its type that is not completed (:meth:`.rules.RoyalGateways.placement_links`,
  same order: segment, then King's before Queen's Gate, then placement order);
* ``after_placement``: the new tile's gates are placed gates;
* ``blocks_completion``: with ``unpaired_gate_blocks_completion``, a city
  holding the only placed gate of its type does not complete;
* ``spot_veto``: no follower on a gate's city segment (unless ``follower_on_gate``);
* ``observe``: this plug-in's observe part (``linked_city``: every tile of a
  city whose gates link two or more physical cities; ``gate_waiting``; gates
  placed / 2).

Per-game integers: per gate type, the number of placed gates then their nodes
(at most :data:`GATE_CAP` of a type: the tile set has 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.tiles import CITY
from ...fast.kernels import (
    DX,
    DY,
    G_NPL,
    G_STAMP,
    N_DONE,
    N_NEXT,
    N_PL,
    N_SCRATCH,
    add_link,
    find,
    mark_tiles,
)
from ...fast.seam import B_LS, B_TILE, kernel, own_positions
from ...fast.support import FastSupport
from ...fast.tables import LINK_CAP, P_GOFF, TC_CE, TC_NSEG
from .rules import GATE_TAGS

OWN = ("blocks", "on_gate", "ch_linked", "ch_waiting", "g_gates")
BLOCKS, ON_GATE, CH_LINKED, CH_WAITING, G_GATES = own_positions(OWN)
NTAGS = len(GATE_TAGS)
GATE_CAP = 16  # placed gates of one type the kernels hold
TAG_W = GATE_CAP + 1  # per gate type: the count, then the nodes


@kernel
def placement_links(T, S, g, pb, t, x, y, r):
    c = T.P[pb + B_TILE]
    o = T.P[pb + B_LS]
    for seg in range(T.tile[t, TC_NSEG]):
        for j in range(NTAGS):
            if not (T.tile[t, c + j] >> seg) & 1:
                continue
            b = o + j * TAG_W
            for k in range(S.ls[g, b]):
                node = S.ls[g, b + 1 + k]
                if not S.nd[g, find(S.nd, g, node), N_DONE]:
                    add_link(T, S, g, seg, node)


@kernel
def after_placement(T, S, g, pb, t, x, y, r):
    c = T.P[pb + B_TILE]
    o = T.P[pb + B_LS]
    base = S.pl[g, S.gi[g, G_NPL] - 1, 4]
    for seg in range(T.tile[t, TC_NSEG]):
        for j in range(NTAGS):
            if (T.tile[t, c + j] >> seg) & 1:
                b = o + j * TAG_W
                n = S.ls[g, b]
                if n < GATE_CAP:
                    S.ls[g, b + 1 + n] = base + seg
                    S.ls[g, b] = n + 1


@kernel
def blocks_completion(T, S, g, pb, root):
    if not T.P[pb + BLOCKS]:
        return False
    o = T.P[pb + B_LS]
    for j in range(NTAGS):
        b = o + j * TAG_W
        if S.ls[g, b] == 1 and find(S.nd, g, S.ls[g, b + 1]) == root:
            return True
    return False


@kernel
def spot_veto(T, S, g, pb, t, seg):
    if T.P[pb + ON_GATE]:
        return False
    c = T.P[pb + B_TILE]
    for j in range(NTAGS):
        if (T.tile[t, c + j] >> seg) & 1:
            return True
    return False


@kernel
def _parts(T, S, g, root):
    """Whether city ``root`` is made of two or more physical cities (joined through tile edges):
    :func:`.rules.physical_parts`, by flooding from the root over matching sides."""
    nd = S.nd
    off = T.P[P_GOFF]
    stamp = S.gi[g, G_STAMP] + 1
    S.gi[g, G_STAMP] = stamp
    nd[g, root, N_SCRATCH] = stamp
    changed = True
    while changed:
        changed = False
        x = root
        while True:
            if nd[g, x, N_SCRATCH] != stamp:
                k = nd[g, x, N_PL]
                t = S.pl[g, k, 2]
                r = S.pl[g, k, 3]
                seg = x - S.pl[g, k, 4]
                for s in range(4):
                    if T.tile[t, TC_CE + 4 * r + s] != seg:
                        continue
                    nk = S.grid[g, S.pl[g, k, 1] + DY[s] + off, S.pl[g, k, 0] + DX[s] + off]
                    if nk < 0:
                        continue
                    nc = T.tile[S.pl[g, nk, 2], TC_CE + 4 * S.pl[g, nk, 3] + ((s + 2) & 3)]
                    if nc >= 0 and nd[g, S.pl[g, nk, 4] + nc, N_SCRATCH] == stamp:
                        nd[g, x, N_SCRATCH] = stamp
                        changed = True
                        break
            x = nd[g, x, N_NEXT]
            if x == root:
                break
    x = root
    while True:
        if nd[g, x, N_SCRATCH] != stamp:
            return True
        x = nd[g, x, N_NEXT]
        if x == root:
            break
    return False


@kernel
def observe(T, S, g, pb, seat, board, glob):
    o = T.P[pb + B_LS]
    nd = S.nd
    gg = T.P[pb + G_GATES]
    placed = 0
    many = False
    for j in range(NTAGS):
        n = S.ls[g, o + j * TAG_W]
        glob[gg + j] = n / 2
        placed += n
        if n > 1:
            many = True
    if not placed:
        return
    if many:  # the cities holding two or more gates, each once (rules.linked_cities)
        for j in range(NTAGS):
            b = o + j * TAG_W
            for k in range(S.ls[g, b]):
                root = find(nd, g, S.ls[g, b + 1 + k])
                held = 0
                first = True
                for j2 in range(NTAGS):
                    b2 = o + j2 * TAG_W
                    for k2 in range(S.ls[g, b2]):
                        if find(nd, g, S.ls[g, b2 + 1 + k2]) == root:
                            if j2 < j or (j2 == j and k2 < k):
                                first = False
                            held += 1
                if first and held >= 2 and _parts(T, S, g, root):
                    mark_tiles(T, S, g, root, board[T.P[pb + CH_LINKED]], False)
    if T.P[pb + BLOCKS]:
        for j in range(NTAGS):
            b = o + j * TAG_W
            if S.ls[g, b] == 1:
                mark_tiles(T, S, g, find(nd, g, S.ls[g, b + 1]), board[T.P[pb + CH_WAITING]], False)


def tile_columns(rules: Any) -> np.ndarray:
    """Per tile type and gate type: the bitmask of its city segments carrying that gate."""
    cols = np.zeros((len(rules.tiles), NTAGS), dtype=np.int16)
    for t, tile in enumerate(rules.tiles):
        for i, s in enumerate(tile.segments):
            for j, tag in enumerate(GATE_TAGS):
                if s.kind == CITY and tag in s.tags:
                    cols[t, j] |= 1 << i
    gates = [
        sum(tile.count * bin(int(cols[t, j])).count("1") for t, tile in enumerate(rules.tiles)) for j in range(NTAGS)
    ]
    for j, tag in enumerate(GATE_TAGS):
        if gates[j] > GATE_CAP:
            raise ValueError(
                f"the tile set has {gates[j]} {tag} gates; the compiled Royal Gateways hold {GATE_CAP} of a type "
                "(raise royal_gateways.fast.GATE_CAP)"
            )
    for t, tile in enumerate(rules.tiles):  # links one placement can make: each gate of it to each placed one
        links = sum(bin(int(cols[t, j])).count("1") * gates[j] for j in range(NTAGS))
        if links > LINK_CAP:
            raise ValueError(
                f"tile {tile.id} could link {links} features at once; the compiled engine keeps {LINK_CAP} "
                "(raise carc_env.fast.tables.LINK_CAP)"
            )
    return cols


def params(rules: Any, exp: Any) -> dict[str, int]:
    return {
        "blocks": 1 if exp.options.unpaired_gate_blocks_completion else 0,
        "on_gate": 1 if exp.options.follower_on_gate else 0,
    }


def positions(encoder: Any) -> dict[str, int]:
    channels = list(encoder.channel_names)
    return {
        "ch_linked": channels.index("linked_city"),
        "ch_waiting": channels.index("gate_waiting"),
        "g_gates": list(encoder.global_names).index(f"{GATE_TAGS[0].split('_')[0]}_gates_placed"),
    }


SUPPORT = FastSupport(
    hooks=frozenset(
        {"placement_links", "after_placement", "after_setup_placement", "follower_spots", "blocks_completion"}
    ),
    options=frozenset({"unpaired_gate_blocks_completion", "follower_on_gate"}),
    params=params,
    positions=positions,
    kernels={
        "placement_links": placement_links,
        "after_placement": after_placement,
        "after_setup_placement": after_placement,  # a gate laid at setup (a map's start square) is a placed gate
        "blocks_completion": blocks_completion,
        "spot_veto": spot_veto,
        "observe": observe,
    },
    own=OWN,
    slots=NTAGS * TAG_W,
    tile_columns=tile_columns,
    # the action features' scan follows the gates' links (features.scan asks placement_links); a blocked
    # completion reaches them only through the one-ply play-out
    features=frozenset({"placement_links", "blocks_completion"}),
)
