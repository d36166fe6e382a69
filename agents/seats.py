"""One observation layout for every player count: the per-seat parts padded to a fixed seat axis.

The env's observation (:mod:`carc_env.encoding.spec`) has a shape that depends on
the player count: every per-seat entry (``followers_p{i}`` board planes,
``score_p{i}``, ``followers_in_hand_p{i}``, ``deciding_p{i}``, ``turn_p{i}``
global features, the plug-ins' ``guests_p{i}``, ``quarter_*_p{i}``, ``king_p{i}``
... and the rows of the ``windows`` tensor) has one entry per relative seat, ``p0``
being the observer and ``p1`` the next player in turn order.  The env's public
spec stays as it is; this network-side adapter maps an observation of an
``n``-player game onto the layout of a ``seats``-player one (default 5, the
largest table):

* every group ``X_p0 .. X_p{n-1}`` becomes ``X_p0 .. X_p{seats-1}``, the
  relative seats ``n .. seats-1`` zero (absent players; the observer stays at
  ``p0`` and the others keep their turn order);
* ``seats`` global features ``seat_present_p{i}`` (1 for ``i < n``) are
  appended, so the network is told which seats are real rather than guessing
  from zeros;
* the ``windows`` tensor gets ``seats`` rows, rows ``n..`` zero.

Everything else (the window, the action space, the tile and phase features) is
the same at every count, so one network reads any table.  :class:`SeatAdapter`
is built from an env of the game (it reads the names of the channels and
features) and remaps an observation with a few index copies.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

MAX_SEATS = 5
"""The largest table (the player count allows 2..5)."""

_SEAT = re.compile(r"^(.*)_p(\d+)$")


def padded_names(names: list[str], n: int, seats: int) -> list[str]:
    """``names`` of an ``n``-player observation with every per-seat group ``X_p0..X_p{n-1}`` widened to
    ``X_p0..X_p{seats-1}`` (in place of the group, same order otherwise)."""
    out: list[str] = []
    i = 0
    while i < len(names):
        m = _SEAT.match(names[i])
        if (
            m
            and m.group(2) == "0"
            and i + n <= len(names)
            and names[i : i + n] == [f"{m.group(1)}_p{k}" for k in range(n)]
        ):
            out += [f"{m.group(1)}_p{k}" for k in range(seats)]
            i += n
            continue
        out.append(names[i])
        i += 1
    return out


def _index(src: list[str], dst: list[str]) -> np.ndarray:
    """For every name of ``dst`` its position in ``src`` (-1: absent, a zero entry)."""
    pos = {name: k for k, name in enumerate(src)}
    if len(pos) != len(src):
        raise ValueError("observation names are not unique; the seat adapter cannot map them")
    return np.array([pos.get(name, -1) for name in dst], dtype=np.int64)


class SeatAdapter:
    """Maps observations of one ``n``-player game configuration onto the ``seats``-seat layout."""

    def __init__(self, env: Any, seats: int = MAX_SEATS) -> None:
        env = getattr(env, "unwrapped", env)
        n = len(env.possible_agents)
        if not 2 <= n <= seats:
            raise ValueError(f"a {n}-player game does not fit a {seats}-seat network; use 2..{seats} players")
        self.num_players = n
        self.seats = seats
        channels, feats = list(env.channel_names), list(env.encoder.global_names)
        self.channel_names = padded_names(channels, n, seats)
        self.global_names = padded_names(feats, n, seats) + [f"seat_present_p{k}" for k in range(seats)]
        self.board_index = _index(channels, self.channel_names)
        self.global_index = _index(feats, self.global_names)
        self.present = np.zeros(seats, dtype=np.float32)
        self.present[:n] = 1.0
        high = np.asarray(env.encoder.channel_high)
        self.channel_high = tuple(int(high[k]) if k >= 0 else 1 for k in self.board_index)
        self.windows_columns = int(env.observation_space(env.possible_agents[0])["windows"].shape[1])

    def layout(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The padded (channel names, global feature names): equal for every player count of a game."""
        return tuple(self.channel_names), tuple(self.global_names)

    def board(self, board: np.ndarray) -> np.ndarray:
        """``(C_n, H, W)`` board planes (or a crop of them) as ``(C_seats, H, W)``."""
        out = board[np.maximum(self.board_index, 0)]
        out[self.board_index < 0] = 0
        return out

    def globs(self, globs: np.ndarray) -> np.ndarray:
        out = np.asarray(globs, dtype=np.float32)[np.maximum(self.global_index, 0)]
        out[self.global_index < 0] = 0.0
        out[-self.seats :] = self.present
        return out

    def windows(self, windows: np.ndarray) -> np.ndarray:
        out = np.zeros((self.seats, windows.shape[1]), dtype=windows.dtype)
        out[: windows.shape[0]] = windows
        return out

    def __call__(self, obs: dict) -> dict:
        """The observation with ``board``, ``globals`` and ``windows`` in the padded layout (the mask and
        the action features, which do not depend on the player count, unchanged)."""
        if obs["windows"].shape[0] != self.num_players:
            raise ValueError(
                f"observation of a {obs['windows'].shape[0]}-player game given to the "
                f"{self.num_players}-player seat adapter"
            )
        return {
            **obs,
            "board": self.board(obs["board"]),
            "globals": self.globs(obs["globals"]),
            "windows": self.windows(obs["windows"]),
        }


def adapter_for(env: Any, seats: int, cache: dict[Any, SeatAdapter]) -> SeatAdapter:
    """The (cached) adapter of ``env``'s configuration."""
    env = getattr(env, "unwrapped", env)
    key = (len(env.possible_agents), tuple(env.channel_names), tuple(env.encoder.global_names))
    ad = cache.get(key)
    if ad is None:
        ad = cache[key] = SeatAdapter(env, seats)
    return ad


__all__ = ["MAX_SEATS", "SeatAdapter", "adapter_for", "padded_names"]
