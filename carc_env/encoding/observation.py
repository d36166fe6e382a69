"""Player-relative tensor observations, encoded incrementally.

Contract
--------
:meth:`ObservationEncoder.encode` turns one state, seen by one seat, into a
dict of arrays:

* ``"board"``  ``uint8 (channels, rows, cols)`` over the codec's window
  (:mod:`carc_env.encoding.actions`); channel names in ``channel_names``;
* ``"globals"`` ``float32 (len(global_names),)``;
* ``"windows"`` ``uint8 (num_players, columns)``: per relative seat, the
  stained-glass window columns the plug-ins declare (``window_names``: the
  Stained Glass tokens held per kind and the complete windows per shape); with
  no plug-in declaring any, 12 columns of zeros (``WINDOW_TOKEN_KINDS``);
* ``"action_mask"`` ``int8 (codec.n,)``: the legal actions if the seat decides
  now, else all zero.

Everything about seats is relative to the observing seat: seat ``p0`` is
"me", ``p1`` the next player in turn order, and so on.  The meaning of every
channel and global feature is documented in :mod:`carc_env.env.aec` (the
core's) and in each plug-in's ``observe`` module (an expansion's).

Incremental encoding: the encoder keeps, per game, an absolute-coordinate
canvas of the static per-tile planes (tile present, edge types, segment
counts, buildings) and per-segment tables, and updates them only from the
placements made since its previous call.  Per call it crops the canvas to the
window and rebuilds the planes that change without a placement (completion,
who occupies each feature, followers, legal placements) with vectorised numpy
over the segments, never with per-cell Python loops.  A fresh encoder gives
identical arrays (tested).

Extensions
----------
An expansion adds planes and global features with the ``Observation`` class
(an :class:`ObservationExtension`) of its plug-in's ``observe`` part, found
through the plug-in registry (:func:`carc_env.core.registry.parts`) for every
enabled expansion, in expansion order.  Static channels come from a
per-(tile type, rotation) table and are cached on the canvas, after the
core's static channels; dynamic channels follow the core's dynamic ones and
global features the core's globals, each group in expansion order; the
windows tensor's columns are the plug-ins' ``window_columns`` in expansion
order, each plug-in filling its own columns per call.  :func:`feature_cells` and
:func:`add_cells` help an extension draw whole features.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core.registry import parts
from ..core.tiles import BUILDING, CITY, EDGE_CODES, FIELD, ROAD, SIDES
from .actions import ActionCodec, StateView
from .spec import DYNAMIC_CHANNELS, GLOBAL_FEATURES, STATIC_CHANNELS, Entry, expand

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.game import Game
    from ..core.tiles import TileType

WINDOW_TOKEN_KINDS = 12
OPEN_CAP = 3  # open-edge planes saturate here ("3 or more")
SIZE_CAP = 15  # size planes saturate here
SCORE_SCALE = 0.01
_EDGE_KIND = {
    EDGE_CODES["C"]: "city",
    EDGE_CODES["R"]: "road",
    EDGE_CODES["F"]: "field",
    EDGE_CODES["I"]: "river",
    EDGE_CODES["-"]: "interior",
}
_FOLLOWER_KINDS = ("city", "road", "field", "building")  # indexed by segment kind CITY..BUILDING


class ObsContext:
    """What an extension needs to fill its planes: viewer, window, the state view."""

    __slots__ = ("me", "num_players", "x0", "y0", "rows", "cols", "view")

    def __init__(self, me: int, num_players: int, view: StateView, rows: int, cols: int) -> None:
        self.me = me
        self.num_players = num_players
        self.view = view
        self.x0, self.y0 = view.x0, view.y0
        self.rows, self.cols = rows, cols

    def rel(self, seat: int) -> int:
        """Relative seat (0 = me) of absolute seat ``seat``."""
        return (seat - self.me) % self.num_players


class ObservationExtension:
    """Observation planes and features an expansion adds.  Override what you need.

    ``static_channels`` are looked up per placed tile in ``static_table``
    (``uint8 (n_tile_types, 4, len(static_channels))``) and cached;
    ``dynamic_channels`` are filled per call by ``fill_dynamic`` into
    ``board`` (its own slice, zero on entry).  ``channel_high`` gives the
    largest value of each channel (static then dynamic) for the observation
    space.
    """

    static_channels: tuple[str, ...] = ()
    dynamic_channels: tuple[str, ...] = ()
    global_names: tuple[str, ...] = ()
    window_columns: tuple[str, ...] = ()
    """Columns this extension adds to the ``windows`` tensor (one row per relative seat)."""

    def static_table(self, rules: RuleSet) -> np.ndarray:
        return np.zeros((len(rules.tiles), 4, len(self.static_channels)), dtype=np.uint8)

    @staticmethod
    def tagged_city_table(rules: RuleSet, tag: str) -> np.ndarray:
        """A one-channel ``static_table``: 1 on every side of the tiles with a city tagged ``tag``."""
        table = np.zeros((len(rules.tiles), 4, 1), dtype=np.uint8)
        for ti, tile in enumerate(rules.tiles):
            if any(s.kind == CITY and tag in s.tags for s in tile.segments):
                table[ti, :, 0] = 1
        return table

    def channel_high(self) -> list[int]:
        return [1] * (len(self.static_channels) + len(self.dynamic_channels))

    def window_high(self) -> list[int]:
        """The largest value of each of ``window_columns`` (for the observation space)."""
        return [255] * len(self.window_columns)

    def fill_dynamic(self, game: Game, ctx: ObsContext, board: np.ndarray) -> None:
        """Fill ``board`` (``(len(dynamic_channels), rows, cols)``, zeroed)."""

    def fill_globals(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        """Fill ``out`` (``float32 (len(global_names),)``, zeroed)."""

    def fill_windows(self, game: Game, ctx: ObsContext, out: np.ndarray) -> None:
        """Fill ``out``, this extension's columns of the windows tensor (``uint8 (num_players,
        len(window_columns))``, zeroed; row ``i`` is relative seat ``i``)."""


def feature_cells(game: Game, roots: list[int]) -> dict[int, np.ndarray]:
    """Per feature root, the ``(x, y)`` cells (int array ``(k, 2)``, unique) of the tiles it covers.

    One vectorised pass over every node; meant for the few features of an
    expansion phase, not for every step.
    """
    if not roots:
        return {}
    root = game.root_array()
    node_tile = np.fromiter(game.node_tile, dtype=np.intp, count=len(game.node_tile))
    xy = np.array([p[:2] for p in game.placements], dtype=np.intp).reshape(-1, 2)
    out = {}
    for r in roots:
        tiles = np.unique(node_tile[root == root[r]])
        out[r] = xy[tiles]
    return out


def add_cells(plane: np.ndarray, cells: np.ndarray, ctx: ObsContext, value: int = 1) -> None:
    """Add ``value`` to ``plane`` at the window cells among ``cells`` (absolute ``(x, y)``)."""
    cols, rows = cells[:, 0] - ctx.x0, cells[:, 1] - ctx.y0
    ok = (cols >= 0) & (cols < ctx.cols) & (rows >= 0) & (rows < ctx.rows)
    if ok.any():
        plane[rows[ok], cols[ok]] += value


class _Grow:
    """A growable numpy array of rows (amortised appends); ``width`` None for 1-D."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: type, width: int | None = None, cap: int = 1024) -> None:
        self.a: np.ndarray = np.zeros((cap,) if width is None else (cap, width), dtype=dtype)
        self.n = 0

    def _take(self, m: int) -> slice:
        """Room for ``m`` more rows (the array doubles when full): the slice they go to."""
        start = self.n
        end = start + m
        if end > len(self.a):
            new = np.zeros((max(2 * len(self.a), end), *self.a.shape[1:]), dtype=self.a.dtype)
            new[:start] = self.a[:start]
            self.a = new
        self.n = end
        return slice(start, end)

    def append(self, rows: np.ndarray) -> None:
        self.a[self._take(len(rows))] = rows

    def append_fill(self, m: int, row: tuple[int, ...]) -> None:
        """Append ``m`` copies of ``row``."""
        self.a[self._take(m)] = row


class _BoardCache:
    """Per-game incremental state: static canvas and segment tables.

    Per segment node (Python lists, for the few followers): its cell and kind.
    Per entry (a segment; a city or road once per side it touches): the node
    (``e_node``), the three channels it can drive (completion, "mine",
    "others") as absolute flat indices ``channel * rows * cols + y * cols + x``
    (``e_abs``, shifted by the window origin per call) and as channel numbers
    (``e_chan``), the bits of the per-feature code that switch each on
    (``e_bits``; 0 where the entry has no such channel) and the cell (``e_xy``).
    """

    def __init__(self, n_static: int) -> None:
        self.game: Game | None = None
        self.n_done = 0
        self.canvas = np.zeros((n_static, 64, 64), dtype=np.uint8)
        self.ox = self.oy = -32  # absolute coordinate of canvas index 0
        self.node_x: list[int] = []
        self.node_y: list[int] = []
        self.node_kind: list[int] = []  # -1: a node no placement made
        self.e_node = _Grow(np.intp)
        self.e_abs = _Grow(np.intp, 3)
        self.e_chan = _Grow(np.intp, 3)
        self.e_bits = _Grow(np.uint8, 3)
        self.e_xy = _Grow(np.intp, 2)
        # per side of a placed tile with a city/road: the node and the side's open/size channels
        self.o_node = _Grow(np.intp)
        self.o_side = _Grow(np.intp)
        self.o_xy = _Grow(np.intp, 2)

    def ensure(self, xmin: int, xmax: int, ymin: int, ymax: int) -> None:
        """Grow the canvas to cover x in [xmin, xmax], y in [ymin, ymax]."""
        c = self.canvas
        h, w = c.shape[1], c.shape[2]
        if xmin >= self.ox and xmax < self.ox + w and ymin >= self.oy and ymax < self.oy + h:
            return
        nx0 = min(xmin, self.ox) - 16
        ny0 = min(ymin, self.oy) - 16
        nx1 = max(xmax + 1, self.ox + w) + 16
        ny1 = max(ymax + 1, self.oy + h) + 16
        new = np.zeros((c.shape[0], ny1 - ny0, nx1 - nx0), dtype=np.uint8)
        new[:, self.oy - ny0 : self.oy - ny0 + h, self.ox - nx0 : self.ox - nx0 + w] = c
        self.canvas, self.ox, self.oy = new, nx0, ny0


def _segment_counts(tile: TileType) -> dict[str, int]:
    """The tile's count channels (spec ``cities``, ``roads``, ``fields``, ``pennants``)."""
    kinds = [seg.kind for seg in tile.segments]
    counts = {"cities": kinds.count(CITY), "roads": kinds.count(ROAD), "fields": kinds.count(FIELD)}
    counts["pennants"] = sum(seg.pennants for seg in tile.segments)
    return counts


class _Layout:
    """The names of one part of an observation in order (board channels, global features or windows
    columns) with the largest value of each; ``first[pattern]`` is where a spec entry's names start."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.names: list[str] = []
        self.high: list[int] = []
        self.first: dict[str, int] = {}

    def add_spec(
        self,
        table: tuple[Entry, ...],
        values: dict[str, list[str]],
        high: dict[str, int] | None = None,
        values_of: dict[str, dict[str, list[str]]] | None = None,
    ) -> None:
        """Every entry of a spec table (:mod:`carc_env.encoding.spec`), its pattern expanded with
        ``values`` (``values_of[pattern]`` where given); ``high[pattern]`` its names' largest value (1)."""
        for e in table:
            self.first[e.name] = len(self.names)
            names = expand(e.name, **(values_of or {}).get(e.name, values))
            self.span(names, [(high or {}).get(e.name, 1)] * len(names))

    def span(self, names: Sequence[str], high: Sequence[int] | None = None) -> tuple[int, int]:
        """Append ``names`` (a plug-in's) with their largest values; returns where they start and end."""
        high = [1] * len(names) if high is None else list(high)
        if len(high) != len(names):
            raise ValueError(f"{len(names)} {self.what} {list(names)} but {len(high)} largest values {high}")
        start = len(self.names)
        self.names += names
        self.high += high
        return start, len(self.names)

    def unique(self) -> list[str]:
        """The names, checked to be distinct."""
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"two {self.what} share a name: {self.names}")
        return self.names


def _core_static_table(rules: RuleSet, first: dict[str, int], edge_codes: list[int], width: int) -> np.ndarray:
    """The core's static channels per (tile type, rotation): ``uint8 (tiles, 4, width)``, laid out
    as ``first`` says (the spec's ``STATIC_CHANNELS``)."""
    tiles = rules.tiles
    edge_ch = {(s, code): first["edge_{S}_{kind}"] + s * len(edge_codes) + j
               for s in range(4) for j, code in enumerate(edge_codes)}  # fmt: skip
    building_ch = {b: first["building_{kind}"] + j for j, b in enumerate(rules.building_kinds)}
    table = np.zeros((len(tiles), 4, width), dtype=np.uint8)
    for ti, t in enumerate(tiles):
        counts = _segment_counts(t)
        for r in range(4):
            row = table[ti, r]
            row[first["tile"]] = 1
            for s in range(4):
                row[edge_ch[(s, t.edge_codes[r][s])]] = 1
            for name, value in counts.items():
                row[first[name]] = value
            for seg in t.segments:
                if seg.kind == BUILDING:
                    row[building_ch[seg.building]] = 1
    return table


def _side_segments(tile: TileType, r: int) -> tuple[np.ndarray, np.ndarray]:
    """The city or road segment leaving each side of ``tile`` in rotation ``r``, and those sides."""
    sides = [d for d in range(4) if tile.center[r][d] >= 0 and tile.segments[tile.center[r][d]].kind in (CITY, ROAD)]
    return np.array([tile.center[r][d] for d in sides], dtype=np.intp), np.array(sides, dtype=np.intp)


class ObservationEncoder:
    """Encode states of one rule set for one window size.  See the module docstring."""

    def __init__(self, rules: RuleSet, num_players: int, codec: ActionCodec, followers: int | None = None) -> None:
        self.rules = rules
        self.codec = codec
        self.num_players = num_players
        self.rows, self.cols = codec.rows, codec.cols
        self.followers = rules.followers if followers is None else followers
        self.extensions: list[ObservationExtension] = [
            m.Observation(rules, num_players) for _, m in parts(rules, "observe")
        ]
        # Names, order and meanings: carc_env.encoding.spec (STATIC_CHANNELS, DYNAMIC_CHANNELS, GLOBAL_FEATURES).
        channels = _Layout("observation channels")
        self.static_table = self._static_channels(channels)
        self.n_static = len(channels.names)
        self._dynamic_channels(channels)
        self.channel_names: list[str] = channels.unique()
        self.channel_high = np.array(channels.high, dtype=np.uint8)
        self.n_channels = len(self.channel_names)
        self._rc = self.rows * self.cols
        self._segment_entries()
        self._global_features()
        self._windows_columns()
        counts = np.array([t.count for t in rules.tiles], dtype=np.float32)
        self._inv_counts = np.where(counts > 0, 1.0 / np.maximum(counts, 1), 0.0).astype(np.float32)
        self._total_tiles = max(1, int(counts.sum()))
        self._printed = 0 if rules.layout is None else len(rules.layout.pieces)  # not tiles of the game
        self._phase_index = {p: i for i, p in enumerate(self.phases)}
        self._cache = _BoardCache(self.n_static)
        self._zero_mask = np.zeros(codec.n, dtype=np.int8)

    # ------------------------------------------------------------------ the layout
    def _static_channels(self, channels: _Layout) -> np.ndarray:
        """Lay out the static channels (the core's, then the plug-ins'); returns their per (tile
        type, rotation) table."""
        rules, tiles = self.rules, self.rules.tiles
        edge_codes = sorted({EDGE_CODES[c] for t in tiles for c in t.edges})
        counts = [_segment_counts(t) for t in tiles]
        high = {name: max(1, *(c[name] for c in counts)) for name in counts[0]}
        channels.add_spec(
            STATIC_CHANNELS,
            {"S": list(SIDES), "kind": [_EDGE_KIND[c] for c in edge_codes]},
            high,
            values_of={"building_{kind}": {"kind": list(rules.building_kinds)}},
        )
        tables = [_core_static_table(rules, channels.first, edge_codes, len(channels.names))]
        for ext in self.extensions:
            channels.span(ext.static_channels, ext.channel_high()[: len(ext.static_channels)])
            tables.append(np.asarray(ext.static_table(rules), dtype=np.uint8).reshape(len(tiles), 4, -1))
        return np.concatenate(tables, axis=2)

    def _dynamic_channels(self, channels: _Layout) -> None:
        """Lay out the dynamic channels (the core's, then the plug-ins') and name the core's."""
        n, followers = self.num_players, self.followers
        values = {"S": list(SIDES), "i": [str(i) for i in range(n)], "r": [str(r) for r in range(4)]}
        values["kind"] = list(_FOLLOWER_KINDS)
        high = {"followers_p{i}": followers, "follower_on_{kind}": n * followers, "open_{S}": OPEN_CAP}
        high |= {"size_{S}": SIZE_CAP, "building_neighbours": 8}
        channels.add_spec(DYNAMIC_CHANNELS, values, high)
        first = channels.first
        self.ch_complete = [first["complete_{S}"] + s for s in range(4)]
        self.ch_complete_building = first["complete_building"]
        self.ch_mine = [first["mine_{S}"] + s for s in range(4)]
        self.ch_others = [first["others_{S}"] + s for s in range(4)]
        self.ch_field_mine = first["field_mine"]
        self.ch_field_others = first["field_others"]
        self.ch_followers = first["followers_p{i}"]
        self.ch_follower_kind = first["follower_on_{kind}"]
        self.ch_legal = first["legal_r{r}"]
        self.ch_frontier = first["frontier"]
        self.ch_last = first["last_placed"]
        self.ch_open = [first["open_{S}"] + s for s in range(4)]
        self.ch_size = [first["size_{S}"] + s for s in range(4)]
        self.ch_building_nb = first["building_neighbours"]
        self.ext_dynamic: list[tuple[ObservationExtension, int, int]] = []
        for ext in self.extensions:
            k = len(ext.static_channels)
            span = channels.span(ext.dynamic_channels, ext.channel_high()[k : k + len(ext.dynamic_channels)])
            self.ext_dynamic.append((ext, *span))

    def _segment_entries(self) -> None:
        """Per (tile type, rotation): the entries of each segment (which channels it drives, see
        :class:`_BoardCache`) and the city or road segment of each side."""
        self._entries: list[list[tuple[np.ndarray, ...]]] = []
        self._sides: list[list[tuple[np.ndarray, np.ndarray]]] = []
        self._seg_kind: list[list[int]] = []
        for t in self.rules.tiles:
            self._entries.append([self._tile_entries(t, r) for r in range(4)])
            self._sides.append([_side_segments(t, r) for r in range(4)])
            self._seg_kind.append([s.kind for s in t.segments])

    def _tile_entries(self, t: TileType, r: int) -> tuple[np.ndarray, ...]:
        """The entries of tile ``t`` in rotation ``r``: segment indices, channels (completion, mine,
        others), their flat offsets and the feature-code bits that switch them on."""
        seg_ix: list[int] = []
        chans: list[tuple[int, int, int]] = []
        for i, sg in enumerate(t.segments):
            if sg.kind in (CITY, ROAD):  # one entry per side the segment leaves by
                for sd in range(4):
                    if t.center[r][sd] == i:
                        seg_ix.append(i)
                        chans.append((self.ch_complete[sd], self.ch_mine[sd], self.ch_others[sd]))
            elif sg.kind == FIELD:
                seg_ix.append(i)
                chans.append((-1, self.ch_field_mine, self.ch_field_others))
            elif sg.kind == BUILDING:
                seg_ix.append(i)
                chans.append((self.ch_complete_building, -1, -1))
        chan = np.array(chans, dtype=np.intp).reshape(len(seg_ix), 3)
        valid = chan >= 0
        chan = np.where(valid, chan, 0)
        bits = np.where(valid, np.array([1, 2, 4]), 0).astype(np.uint8)
        return np.array(seg_ix, dtype=np.intp), chan, chan * self._rc, bits

    def _global_features(self) -> None:
        """Lay out the global features (the core's, then the plug-ins') and name the core's."""
        n = self.num_players
        self.phases = list(self.rules.phases) + ["game_over"]
        g = _Layout("global features")
        values = {"id": [t.id for t in self.rules.tiles], "r": [str(r) for r in range(4)]}
        values |= {"i": [str(i) for i in range(n)], "name": self.phases}
        g.add_spec(GLOBAL_FEATURES, values)
        first = g.first
        self.g_drawn = first["drawn_tile_{id}"]
        self.g_placed = first["placed_tile_{id}"]
        self.g_placed_rot = first["placed_rotation_{r}"]
        self.g_remaining = first["remaining_{id}"]
        self.g_bag = first["bag_fraction"]
        self.g_progress = first["turn_progress"]
        self.g_score = first["score_p{i}"]
        self.g_lead = first["score_lead"]
        self.g_supply = first["followers_in_hand_p{i}"]
        self.g_phase = first["phase_{name}"]
        self.g_deciding = first["deciding_p{i}"]
        self.g_turn = first["turn_p{i}"]
        self.g_legal = first["legal_placements"]
        self.g_clipped = first["window_clipped"]
        self.ext_globals: list[tuple[ObservationExtension, int, int]] = [
            (ext, *g.span(ext.global_names)) for ext in self.extensions
        ]
        self.global_names: list[str] = g.unique()
        self.n_globals = len(self.global_names)

    def _windows_columns(self) -> None:
        """Lay out the windows tensor's columns: the plug-ins' ``window_columns``, in expansion order."""
        w = _Layout("windows columns")
        self.ext_windows: list[tuple[ObservationExtension, int, int]] = [
            (ext, *w.span(ext.window_columns, ext.window_high())) for ext in self.extensions if ext.window_columns
        ]
        self.window_names: list[str] = w.unique()
        """Names of the ``windows`` columns (empty: no plug-in declares any, 12 columns of zeros)."""
        self.window_high = np.array(w.high or [255] * WINDOW_TOKEN_KINDS, dtype=np.uint8)

    # ------------------------------------------------------------------ shapes
    @property
    def board_shape(self) -> tuple[int, int, int]:
        return (self.n_channels, self.rows, self.cols)

    @property
    def windows_shape(self) -> tuple[int, int]:
        return (self.num_players, len(self.window_names) or WINDOW_TOKEN_KINDS)

    def empty(self) -> dict[str, np.ndarray]:
        """Zeroed arrays of one observation."""
        return {
            "board": np.zeros(self.board_shape, dtype=np.uint8),
            "globals": np.zeros(self.n_globals, dtype=np.float32),
            "windows": np.zeros(self.windows_shape, dtype=np.uint8),
            "action_mask": np.zeros(self.codec.n, dtype=np.int8),
        }

    # ------------------------------------------------------------------ cache
    def _sync(self, game: Game) -> _BoardCache:
        c = self._cache
        placements = game.placements
        if c.game is not game or c.n_done > len(placements):
            c = self._cache = _BoardCache(self.n_static)
            c.game = game
        k0, k1 = c.n_done, len(placements)
        if k0 == k1:
            return c
        b = game.bounds
        c.ensure(b[0] - self.cols, b[1] + self.cols, b[2] - self.rows, b[3] + self.rows)
        canvas, ox, oy = c.canvas, c.ox, c.oy
        table = self.static_table
        cols = self.cols
        for k in range(k0, k1):
            x, y, t, r, base = placements[k]
            canvas[:, y - oy, x - ox] = table[t, r]
            kinds = self._seg_kind[t]
            ns = len(kinds)
            gap = base - len(c.node_kind)
            if gap > 0:  # nodes no placement made (an expansion's): no cell
                c.node_x.extend([0] * gap)
                c.node_y.extend([0] * gap)
                c.node_kind.extend([-1] * gap)
            c.node_x[base:] = [x] * ns
            c.node_y[base:] = [y] * ns
            c.node_kind[base:] = kinds
            seg, chan, chabs, bits = self._entries[t][r]
            c.e_node.append(seg + base)
            c.e_abs.append(chabs + (y * cols + x))
            c.e_chan.append(chan)
            c.e_bits.append(bits)
            c.e_xy.append_fill(len(seg), (x, y))
            oseg, oside = self._sides[t][r]
            if len(oseg):
                c.o_node.append(oseg + base)
                c.o_side.append(oside)
                c.o_xy.append_fill(len(oseg), (x, y))
        c.n_done = k1
        return c

    # ------------------------------------------------------------------ encode
    def encode(
        self, game: Game, seat: int, view: StateView | None = None, out: dict[str, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """Observation of ``game``'s current state as seen by absolute seat ``seat``.

        ``out`` (optional) holds arrays of the right shapes to fill in place
        (e.g. rows of a batch); otherwise fresh arrays are returned.
        """
        if view is None:
            view = self.codec.view(game)
        c = self._sync(game)
        if out is None:
            board = np.empty(self.board_shape, dtype=np.uint8)
            glob = np.zeros(self.n_globals, dtype=np.float32)
            windows = np.zeros(self.windows_shape, dtype=np.uint8)
        else:
            board, glob, windows = out["board"], out["globals"], out["windows"]
            if not board.flags.c_contiguous:
                raise ValueError("encode(out=...): the board array must be C-contiguous (a row of a batch is)")
            glob[:] = 0
            windows[:] = 0
        self._static_planes(c, view, board)
        root = self._feature_planes(game, seat, c, view, board)
        self._shape_planes(game, c, view, board, root)
        self._follower_planes(game, seat, c, view, board)
        self._placement_planes(game, view, board)
        self._globals(game, seat, view, glob)
        if self.extensions:
            ctx = ObsContext(seat, self.num_players, view, self.rows, self.cols)
            for ext, a, b in self.ext_dynamic:
                if b > a:
                    ext.fill_dynamic(game, ctx, board[a:b])
            for ext, a, b in self.ext_globals:
                if b > a:
                    ext.fill_globals(game, ctx, glob[a:b])
            for ext, a, b in self.ext_windows:
                ext.fill_windows(game, ctx, windows[:, a:b])
        acting = seat == game.player and not game.over
        if out is None:
            mask = view.mask if acting else self._zero_mask.copy()
        else:
            mask = out["action_mask"]
            if acting:
                mask[:] = view.mask
            else:
                mask[:] = 0
        return {"board": board, "globals": glob, "windows": windows, "action_mask": mask}

    def _static_planes(self, c: _BoardCache, view: StateView, board: np.ndarray) -> None:
        """The static planes are a crop of the canvas; every other plane starts at zero."""
        rows, cols, x0, y0 = self.rows, self.cols, view.x0, view.y0
        c.ensure(x0, x0 + cols - 1, y0, y0 + rows - 1)
        ns = self.n_static
        board[:ns] = c.canvas[:, y0 - c.oy : y0 - c.oy + rows, x0 - c.ox : x0 - c.ox + cols]
        board[ns:] = 0

    def _feature_planes(
        self, game: Game, seat: int, c: _BoardCache, view: StateView, board: np.ndarray
    ) -> np.ndarray | None:
        """Completion, "mine" and "others" planes: per feature root a code (1 complete, 2 mine,
        4 others), vectorised over the segment entries.  Returns the root array (None: no entry)."""
        ne = c.e_node.n
        if not ne:
            return None
        root = game.root_array()
        code = np.zeros(len(root), dtype=np.uint8)
        done = game.completed
        if done:
            code[np.fromiter(done, dtype=np.intp, count=len(done))] = 1
        occ, guests, followers = game.occupants, game.guests, game.followers
        if occ or guests:
            me_bit = 1 << seat
            for r, nodes in occ.items():
                bits = 0
                for node in nodes:
                    bits |= 1 << followers[node]
                code[r] |= (2 if bits & me_bit else 0) | (4 if bits & ~me_bit else 0)
            for r, owners in guests.items():  # followers on a feature but on no segment
                bits = 0
                for p in owners:
                    bits |= 1 << p
                code[root[r]] |= (2 if bits & me_bit else 0) | (4 if bits & ~me_bit else 0)
        ec = code[root[c.e_node.a[:ne]]]
        sel = (ec[:, None] & c.e_bits.a[:ne]) != 0
        flat = board.reshape(-1)  # a view: board is C-contiguous
        x0, y0 = view.x0, view.y0
        if view.inside:
            flat[c.e_abs.a[:ne][sel] - (y0 * self.cols + x0)] = 1
        else:
            ch = c.e_chan.a[:ne][sel]
            xy = c.e_xy.a[:ne]
            xs = np.broadcast_to(xy[:, :1], (ne, 3))[sel] - x0
            ys = np.broadcast_to(xy[:, 1:], (ne, 3))[sel] - y0
            self._scatter(flat, ch, xs, ys, False)
        return root

    def _shape_planes(
        self, game: Game, c: _BoardCache, view: StateView, board: np.ndarray, root: np.ndarray | None
    ) -> None:
        """Open edges and size (in tiles) of the city or road on each side; neighbours of buildings."""
        rows, cols, rc, x0, y0 = self.rows, self.cols, self._rc, view.x0, view.y0
        no = c.o_node.n
        if no and root is not None:
            flat = board.reshape(-1)
            r_o = root[c.o_node.a[:no]]
            opens = np.fromiter(game.open, dtype=np.intp, count=len(game.open))
            sizes = np.zeros(len(game.parent), dtype=np.intp)
            for rt, ts in game.tiles.items():
                sizes[rt] = len(ts)
            xs = c.o_xy.a[:no, 0] - x0
            ys = c.o_xy.a[:no, 1] - y0
            ok = (xs >= 0) & (xs < cols) & (ys >= 0) & (ys < rows)
            side = c.o_side.a[:no][ok]
            cell = ys[ok] * cols + xs[ok]
            r_ok = r_o[ok]
            flat[(self.ch_open[0] + side) * rc + cell] = np.minimum(opens[r_ok], OPEN_CAP)
            flat[(self.ch_size[0] + side) * rc + cell] = np.minimum(sizes[r_ok], SIZE_CAP)
        if game.buildings:
            nb = game.building_neighbours
            done = game.completed
            for (bx, by), nodes in game.buildings.items():
                if 0 <= bx - x0 < cols and 0 <= by - y0 < rows:
                    for node in nodes:
                        if node not in done:
                            board[self.ch_building_nb, by - y0, bx - x0] = min(nb[node], 8)

    def _follower_planes(self, game: Game, seat: int, c: _BoardCache, view: StateView, board: np.ndarray) -> None:
        """Followers per relative seat and per segment kind, on the tile they stand on."""
        followers = game.followers
        if not followers:
            return
        rows, cols, rc, x0, y0, n = self.rows, self.cols, self._rc, view.x0, view.y0, self.num_players
        nx, ny, nkind = c.node_x, c.node_y, c.node_kind
        nk = len(nkind)
        idx = []
        chf, chk = self.ch_followers, self.ch_follower_kind
        for node, owner in followers.items():
            if node >= nk or not 0 <= nkind[node] <= BUILDING:
                continue
            x, y = nx[node] - x0, ny[node] - y0
            if 0 <= x < cols and 0 <= y < rows:
                cell = y * cols + x
                idx.append((chf + (owner - seat) % n) * rc + cell)
                idx.append((chk + nkind[node]) * rc + cell)
        if idx:
            flat = board.reshape(-1)
            if len(set(idx)) == len(idx):
                flat[idx] = 1
            else:  # several followers on one tile (expansions)
                np.add.at(flat, idx, 1)

    def _placement_planes(self, game: Game, view: StateView, board: np.ndarray) -> None:
        """Legal placements of the drawn tile, the frontier, the last placed tile."""
        if len(view.tile_index):
            board[self.ch_legal : self.ch_legal + 4].reshape(-1)[view.tile_index] = 1
        if len(view.frontier_cell):
            board[self.ch_frontier].reshape(-1)[view.frontier_cell] = 1
        if game.placements:
            lx, ly = game.placements[-1][:2]
            if 0 <= lx - view.x0 < self.cols and 0 <= ly - view.y0 < self.rows:
                board[self.ch_last, ly - view.y0, lx - view.x0] = 1

    def _globals(self, game: Game, seat: int, view: StateView, glob: np.ndarray) -> None:
        """The core's global features (``glob`` is zero on entry)."""
        n = self.num_players
        phase = game.phase
        placements = game.placements
        if phase == "tile" and game.current_tile >= 0:
            glob[self.g_drawn + game.current_tile] = 1.0
        if placements:
            _, _, lt, lr, _ = placements[-1]
            glob[self.g_placed + lt] = 1.0
            glob[self.g_placed_rot + lr] = 1.0
        bag_size = game.bag_size
        if bag_size:
            glob[self.g_remaining : self.g_remaining + len(self._inv_counts)] = (
                game.remaining_counts() * self._inv_counts
            )
        total = self._total_tiles
        glob[self.g_bag] = bag_size / total
        glob[self.g_progress] = (len(placements) - self._printed) / total
        scores, supply = game.scores, game.supply
        fl = 1.0 / self.followers
        gs, gf = self.g_score, self.g_supply
        best_other = -(2**31)  # any score beats it (n >= 2: an opponent always sets it)
        for i in range(n):
            s = (seat + i) % n
            glob[gs + i] = scores[s] * SCORE_SCALE
            glob[gf + i] = supply[s] * fl
            if i and scores[s] > best_other:
                best_other = scores[s]
        glob[self.g_lead] = (scores[seat] - best_other) * SCORE_SCALE
        pi = self._phase_index.get(phase)
        if pi is not None:
            glob[self.g_phase + pi] = 1.0
        if not game.over:
            glob[self.g_deciding + (game.player - seat) % n] = 1.0
            glob[self.g_turn + (game.turn_player - seat) % n] = 1.0
        glob[self.g_legal] = len(view.tile_index) * 0.01
        glob[self.g_clipped] = 1.0 if view.outside else 0.0

    def _scatter(self, flat: np.ndarray, ch: np.ndarray, xs: np.ndarray, ys: np.ndarray, add: bool) -> None:
        """Set (or add 1 to) board[ch, ys, xs] for the window cells among them."""
        ok = (xs >= 0) & (xs < self.cols) & (ys >= 0) & (ys < self.rows)
        idx = (ch[ok] * self.rows + ys[ok]) * self.cols + xs[ok]
        if add:
            np.add.at(flat, idx, 1)
        else:
            flat[idx] = 1


__all__ = [
    "ObsContext",
    "ObservationEncoder",
    "ObservationExtension",
    "SCORE_SCALE",
    "WINDOW_TOKEN_KINDS",
    "add_cells",
    "feature_cells",
]
