"""Stained Glass's rules: glass tokens, thieves, steals and window scoring.

Contract (rules, rule by rule with every interpretation: ``docs/rules/stained_glass.md``;
token data: ``data/tokens/stained_glass.toml``, read by :mod:`.tokens`)
-----------------------------------------------------------------------------------------
* Tokens: 24 (12 kinds x 2) in their own bag.  A player's tokens are counts per kind.  A
  token is drawn uniformly at random from the bag with the game's generator
  (``game.rng``) when one is taken; scored tokens go back into the bag.  Option
  ``bag_order`` puts named tokens first in the bag (drawn first, in order);
  ``start_tokens`` hands tokens out at setup (``"G1a G1b; G2a"``: player 0 holds G1a and
  G1b, player 1 G2a).  Both are recorded in the config, so records replay.
* Getting tokens: the player who draws a tile with a cloister-like building or a
  ``cathedral``-tagged city segment (``after_draw``, even if it is then discarded; with
  ``token_on="place"``: who places it, ``after_placement``) and the turn's player for every
  completed cloister-like building or city holding a cathedral (``on_completed``) take one each
  (``TokenDrawn``); nothing when the bag is empty.  Cloister-like: ``cloister`` always,
  ``church`` unless ``churches_are_cloisters=False``, ``shrine`` if
  ``shrines_are_cloisters=True``.
* ``glass_thief`` (decision, ``after_follower``): after placing a cloister-like tile the
  player may put followers from the supply, one per decision (``thief NAME``), on
  unoccupied roads of that tile that end at its building (a road feature of the tile
  touching one side), or that pass it but are joined to an unoccupied road ending at a
  cloister-like building of another tile; ``pass`` stops.  With ``thieves_need_monk`` only
  after the player's follower went on the tile's building.  Each thief is an ordinary road
  follower (``FollowerPlaced``) and gives one steal this turn (``ThiefPlaced``).
* ``glass_steal`` (decision, ``after_follower``, after ``glass_thief``): one decision per
  steal: ``steal P KIND`` takes a token of kind KIND from player P (``steal P`` with
  ``steal_kind="random"``: a random stealable token of P), ``pass`` gives the steal up
  (``TokenStolen``).  Stealable: another player's tokens (oneself too with
  ``steal_from_self``, a steal that changes nothing); with ``protect_complete_windows``
  only copies beyond the victim's finished copies of the kind's basic window.  A steal
  with nothing to take is lost without a decision.
* ``glass_window`` (decision, ``end_turn``): while the turn's player has a complete window
  they may score one (``window SHAPE``: one copy of each of its kinds goes back into the
  bag; ``PointsAwarded`` item ``"window"`` and ``WindowScored``) or keep building
  (``pass``).  Points: ``window_points`` (default ``"6,18,36,60"`` for 1..4 basic windows).
* ``final_scoring``: with ``final_windows="best"`` every player's best combination of
  complete windows scores by the table, plus ``loose_token_points`` per other token
  (``"none"``: nothing); the tokens go back into the bag.

State: ``game.ext["stained_glass"]``, a :class:`GlassState`.

Action texts: ``thief NAME``, ``steal P KIND`` / ``steal P``, ``window SHAPE`` and ``pass``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING

from ...core.actions import Action, IllegalActionError, Pass
from ...core.events import Event, FollowerPlaced, ScoreItem
from ...core.expansion import ConfigError, Expansion
from ...core.stages import Stage
from ...core.tiles import BUILDING, CITY, ROAD
from .tokens import TokenDataError, TokenSet, basic_copies, best_windows, load_token_set

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "stained_glass"
CLOISTER, CHURCH, SHRINE = "cloister", "church", "shrine"
CATHEDRAL_TAG = "cathedral"
STEAL_KINDS = ("choose", "random")
TOKEN_ON = ("draw", "place")
FINAL_WINDOWS = ("best", "none")
THIEF_PHASE, STEAL_PHASE, WINDOW_PHASE = "glass_thief", "glass_steal", "glass_window"
WINDOW_ITEM, LOOSE_ITEM = "window", "loose_tokens"


def token_set() -> TokenSet:
    """The Stained Glass token set (``data/tokens/stained_glass.toml``), loaded once."""
    return load_token_set()


# ------------------------------------------------------------------ options
def _token_list(option: str, text: str, ts: TokenSet) -> list[int]:
    out = []
    for tok in text.replace(",", " ").split():
        try:
            out.append(ts.kind_index(tok))
        except KeyError as exc:
            raise ConfigError(f"option stained_glass.{option}: {exc.args[0]}") from None
    return out


@dataclass(frozen=True)
class StainedGlassOptions:
    """Rule variants of Stained Glass (every one an interpretation: the scoring section is lost)."""

    token_on: str = "draw"
    """When a cloister or cathedral tile gives its token: ``"draw"`` when it is drawn, even if it is then
    discarded because it fits nowhere (the text: "After drawing any cloister tile ..."); ``"place"``
    when it is placed (a discarded tile gives none)."""
    churches_are_cloisters: bool = True
    """Darmstadt churches give tokens and allow thieves like cloisters (Darmstadt treats them as cloisters)."""
    shrines_are_cloisters: bool = False
    """Shrines give tokens and allow thieves like cloisters (the rule names cloister and cathedral tiles only)."""
    thieves_need_monk: bool = False
    """Thieves only after the player's follower went on the tile's cloister."""
    protect_complete_windows: bool = False
    """Tokens of a finished basic window cannot be stolen (a finished window is not "in progress")."""
    steal_from_self: bool = False
    """A thief's owner may name themself as the victim (the token stays: the steal changes nothing)."""
    steal_kind: str = "choose"
    """"choose": the thief's owner picks victim and kind; "random": the kind is drawn at random."""
    window_points: str = "6,18,36,60"
    """Points of a window of 1, 2, 3, 4 basic windows (3, 6, 9, 12 tokens), comma-separated."""
    final_windows: str = "best"
    """At the end: "best" scores each player's best combination of complete windows; "none" nothing."""
    loose_token_points: int = 0
    """At the end (with final_windows="best"): points per token in no complete window."""
    bag_order: str = ""
    """Setup (tests, puzzles): tokens drawn first, in this order (ids separated by spaces)."""
    start_tokens: str = ""
    """Setup (tests, puzzles): tokens each player holds at the start, players separated by ';'."""

    def points(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.window_points.split(","))

    def validate(self) -> None:
        ts = token_set()
        n = len(ts.windows)
        parts = [p.strip() for p in self.window_points.split(",")]
        if len(parts) != n or not all(p.lstrip("-").isdigit() for p in parts):
            raise ConfigError(
                f"option stained_glass.window_points must be {n} integers separated by commas (points of a "
                f"window of 1..{n} basic windows), got {self.window_points!r}"
            )
        bad = [p for p in parts if int(p) < 0]
        if bad:
            raise ConfigError(f"option stained_glass.window_points: points cannot be negative, got {bad[0]}")
        if self.token_on not in TOKEN_ON:
            raise ConfigError(f"option stained_glass.token_on must be one of {TOKEN_ON}, got {self.token_on!r}")
        if self.steal_kind not in STEAL_KINDS:
            raise ConfigError(f"option stained_glass.steal_kind must be one of {STEAL_KINDS}, got {self.steal_kind!r}")
        if self.final_windows not in FINAL_WINDOWS:
            raise ConfigError(
                f"option stained_glass.final_windows must be one of {FINAL_WINDOWS}, got {self.final_windows!r}"
            )
        if self.loose_token_points < 0:
            raise ConfigError(
                f"option stained_glass.loose_token_points cannot be negative, got {self.loose_token_points}"
            )
        used = [0] * len(ts.kinds)
        for k in _token_list("bag_order", self.bag_order, ts):
            used[k] += 1
        for group in self.start_tokens.split(";"):
            for k in _token_list("start_tokens", group, ts):
                used[k] += 1
        over = [ts.kinds[k] for k, u in enumerate(used) if u > ts.copies]
        if over:
            raise ConfigError(
                f"options stained_glass.bag_order and start_tokens name {over[0]} {used[ts.kinds.index(over[0])]} "
                f"times together; the bag holds {ts.copies} of each token"
            )


# -------------------------------------------------------------------- state
@dataclass
class GlassState:
    """Stained Glass's state in one game (``game.ext["stained_glass"]``)."""

    forced: list[int] = field(default_factory=list)
    """Tokens (kind indices) of ``bag_order`` not drawn yet, next first."""
    pool: list[int] = field(default_factory=list)
    """The rest of the bag; a draw takes a uniformly random one."""
    held: list[list[int]] = field(default_factory=list)
    """``held[p][k]``: copies of token kind ``k`` player ``p`` holds (unscored)."""
    thieves: dict[int, int] = field(default_factory=dict)
    """Thieves on the board: segment node -> owner (forgotten once their road has scored)."""
    steals: int = 0
    """Steals left this turn (thieves placed this turn, less steals made or given up)."""


# ------------------------------------------------------------------ actions
@dataclass(frozen=True, slots=True)
class PlaceThief(Action):
    """Put a thief on road ``segment`` (its feature name on the tile just placed)."""

    segment: str

    def to_text(self) -> str:
        return f"thief {self.segment}"


@dataclass(frozen=True, slots=True)
class Steal(Action):
    """Take a token of kind ``token`` from player ``victim`` (``token`` None: a random one of theirs)."""

    victim: int
    token: str | None = None

    def to_text(self) -> str:
        return f"steal {self.victim}" + (f" {self.token}" if self.token is not None else "")


@dataclass(frozen=True, slots=True)
class ScoreWindow(Action):
    """Score the complete window ``shape`` (e.g. ``"W1+W2"``)."""

    shape: str

    def to_text(self) -> str:
        return f"window {self.shape}"


def _parse_thief(text: str) -> Action:
    parts = text.split()
    if len(parts) != 2:
        raise IllegalActionError(f"cannot parse {text!r}; expected 'thief NAME' (a road of the placed tile, e.g. r1)")
    return PlaceThief(parts[1])


def check_token(text: str, token: object) -> None:
    """Raise :class:`IllegalActionError` unless ``token`` is None or a glass token id."""
    kinds = token_set().kinds
    if token is not None and token not in kinds:
        raise IllegalActionError(f"{text!r}: unknown glass token {token!r}; name one of {' '.join(kinds)}")


def _parse_steal(text: str) -> Action:
    parts = text.split()
    if len(parts) not in (2, 3) or not parts[1].isdigit():
        raise IllegalActionError(
            f"cannot parse {text!r}; expected 'steal PLAYER TOKEN' (e.g. 'steal 1 G2a') or 'steal PLAYER'"
        )
    token = parts[2] if len(parts) == 3 else None
    check_token(text, token)
    return Steal(int(parts[1]), token)


def _parse_window(text: str) -> Action:
    parts = text.split()
    if len(parts) != 2:
        raise IllegalActionError(f"cannot parse {text!r}; expected 'window SHAPE', e.g. 'window W1+W2'")
    try:
        token_set().shape_index(parts[1])
    except KeyError as exc:
        raise IllegalActionError(f"{text!r}: {exc.args[0]}") from None
    return ScoreWindow(parts[1])


ACTION_PARSERS = {"thief": _parse_thief, "steal": _parse_steal, "window": _parse_window}


# ------------------------------------------------------------------- events
@dataclass(frozen=True, slots=True)
class TokenDrawn(Event):
    """``player`` took glass token ``token`` from the bag, because of ``reason``."""

    player: int
    token: str
    reason: str


@dataclass(frozen=True, slots=True)
class ThiefPlaced(Event):
    """``player`` put a thief on road ``segment`` of the tile at (x, y)."""

    player: int
    x: int
    y: int
    segment: str


@dataclass(frozen=True, slots=True)
class TokenStolen(Event):
    """``player``'s thief took glass token ``token`` from ``victim``."""

    player: int
    victim: int
    token: str


@dataclass(frozen=True, slots=True)
class WindowScored(Event):
    """``player`` scored window ``shape`` of ``tokens`` for ``points``; the tokens went back into the bag."""

    player: int
    shape: str
    tokens: tuple[str, ...]
    points: int
    final: bool


# ------------------------------------------------------------------- stages
class ThiefStage(Stage):
    """``glass_thief``: thieves on the roads of the cloister tile just placed, one per decision."""

    name = THIEF_PHASE

    def __init__(self, exp: StainedGlass) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        if self.exp.thief_roads(game):
            game.player = game.turn_player
            return True
        return False

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is Pass:
            return True
        if type(action) is not PlaceThief:
            raise IllegalActionError(f"the {self.name} phase needs 'thief NAME' or 'pass', got {action!r}")
        self.exp.place_thief(game, action)
        return False  # enter() asks again while a road is left

    def legal_actions(self, game: Game) -> list[Action]:
        x, y, t, _, base = game.placements[-1]
        segs = game.rules.tiles[t].segments
        return [*(PlaceThief(segs[i].name) for i in self.exp.thief_roads(game)), Pass()]


class StealStage(Stage):
    """``glass_steal``: one decision per thief placed this turn."""

    name = STEAL_PHASE
    after = (THIEF_PHASE,)

    def __init__(self, exp: StainedGlass) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        st: GlassState = game.ext[KEY]
        if st.steals and self.exp.steals(game, game.turn_player):
            game.player = game.turn_player
            return True
        st.steals = 0  # nothing to take: the remaining steals are lost
        return False

    def apply(self, game: Game, action: Action) -> bool:
        st: GlassState = game.ext[KEY]
        if type(action) is Steal:
            self.exp.steal(game, action)
        elif type(action) is not Pass:
            raise IllegalActionError(f"the {self.name} phase needs 'steal PLAYER TOKEN' or 'pass', got {action!r}")
        st.steals -= 1
        return st.steals == 0

    def legal_actions(self, game: Game) -> list[Action]:
        return [*self.exp.steals(game, game.player), Pass()]


class WindowStage(Stage):
    """``glass_window``: at the end of the turn the turn's player scores complete windows or keeps building."""

    name = WINDOW_PHASE

    def __init__(self, exp: StainedGlass) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        p = game.turn_player
        if self.exp.complete_shapes(game, p):
            game.player = p
            return True
        return False

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is Pass:
            return True
        if type(action) is not ScoreWindow:
            raise IllegalActionError(f"the {self.name} phase needs 'window SHAPE' or 'pass', got {action!r}")
        ts = self.exp.tokens
        try:
            i = ts.shape_index(action.shape)
        except KeyError as exc:
            raise IllegalActionError(exc.args[0]) from None
        p = game.player
        if i not in self.exp.complete_shapes(game, p):
            have = [ts.shapes[j].name for j in self.exp.complete_shapes(game, p)]
            raise IllegalActionError(
                f"window {action.shape} is not complete for player {p} (they hold {' '.join(tokens_held(game, p)) or 'no token'}); "
                f"complete: {', '.join(have) or 'none'}"
            )
        self.exp.score_window(game, p, i)
        return False  # enter() asks again while a window is complete

    def legal_actions(self, game: Game) -> list[Action]:
        ts = self.exp.tokens
        return [*(ScoreWindow(ts.shapes[i].name) for i in self.exp.complete_shapes(game, game.player)), Pass()]


# ---------------------------------------------------------------- expansion
@dataclass(frozen=True)
class _TileTable:
    """Per tile type of a rule set: what Stained Glass needs to know about it."""

    building: tuple[str, ...]  # kind of its cloister-like building ("" if none)
    building_seg: tuple[tuple[int, ...], ...]  # its cloister-like building segments
    dead_ends: tuple[tuple[int, ...], ...]  # road segments ending at its cloister-like building
    roads: tuple[tuple[int, ...], ...]  # every road segment
    cathedral: tuple[tuple[int, ...], ...]  # city segments holding a cathedral


class StainedGlass(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = StainedGlassOptions
    action_parsers = ACTION_PARSERS

    def __init__(self, options: StainedGlassOptions) -> None:
        super().__init__(options)
        try:
            self.tokens = token_set()
        except TokenDataError as exc:  # pragma: no cover - the shipped file is tested
            raise ConfigError(f"stained_glass: {exc}") from None
        kinds = {CLOISTER}
        if options.churches_are_cloisters:
            kinds.add(CHURCH)
        if options.shrines_are_cloisters:
            kinds.add(SHRINE)
        self.cloister_kinds = frozenset(kinds)
        self.points = options.points()
        ts = self.tokens
        self.window_kinds = [
            tuple(k for k in range(len(ts.kinds)) if ts.window_of[k] == w) for w in range(len(ts.windows))
        ]
        self._table: _TileTable | None = None
        self._window_getters = [
            itemgetter(*kinds, kinds[0]) for kinds in self.window_kinds
        ]  # a tuple even for one kind
        self.smallest_window = min(len(kinds) for kinds in self.window_kinds)

    def new_state(self) -> GlassState:
        return GlassState()

    def table(self, game: Game) -> _TileTable:
        """Per tile type: its cloister-like building, the roads ending there, cathedral cities (per rule set)."""
        if self._table is None:  # an expansion instance serves one rule set
            self._table = self._build_table(game)
        return self._table

    def _build_table(self, game: Game) -> _TileTable:
        kinds = self.cloister_kinds
        building, bseg, dead, roads, cath = [], [], [], [], []
        for tile in game.rules.tiles:
            segs = tile.segments
            b = [i for i, s in enumerate(segs) if s.kind == BUILDING and s.building in kinds]
            building.append(segs[b[0]].building if b else "")
            bseg.append(tuple(b))
            r = tuple(i for i, s in enumerate(segs) if s.kind == ROAD)
            roads.append(r)
            dead.append(tuple(i for i in r if len(segs[i].edges) == 1) if b else ())
            cath.append(tuple(i for i, s in enumerate(segs) if s.kind == CITY and CATHEDRAL_TAG in s.tags))
        return _TileTable(tuple(building), tuple(bseg), tuple(dead), tuple(roads), tuple(cath))

    # -------------------------------------------------------------- setup
    def setup(self, game: Game) -> None:
        ts, opts = self.tokens, self.options
        st: GlassState = game.ext[KEY]
        n = game.num_players
        groups = opts.start_tokens.split(";") if opts.start_tokens.strip() else []
        if len(groups) > n:
            raise ConfigError(
                f"option stained_glass.start_tokens names {len(groups)} players (groups separated by ';'), "
                f"the game has {n} players"
            )
        counts = [ts.copies] * len(ts.kinds)
        st.held = [[0] * len(ts.kinds) for _ in range(n)]
        for p, group in enumerate(groups):
            for k in _token_list("start_tokens", group, ts):
                st.held[p][k] += 1
                counts[k] -= 1
        st.forced = _token_list("bag_order", opts.bag_order, ts)
        for k in st.forced:
            counts[k] -= 1
        st.pool = [k for k, c in enumerate(counts) for _ in range(c)]

    # ------------------------------------------------------------- tokens
    def draw_token(self, game: Game, player: int, reason: str) -> None:
        """Take a token from the bag for ``player`` (nothing if the bag is empty)."""
        st: GlassState = game.ext[KEY]
        if st.forced:
            k = st.forced.pop(0)
        elif st.pool:
            k = st.pool.pop(int(game.rng.integers(len(st.pool))))
        else:
            return
        st.held[player][k] += 1
        game.emit(TokenDrawn(player, self.tokens.kinds[k], reason))

    def _token_tile(self, game: Game, t: int) -> str:
        """``"cloister"`` (or the cloister-like kind) / ``"cathedral"`` if tile type ``t`` gives a token; else ""."""
        tab = self.table(game)
        return tab.building[t] or ("cathedral" if tab.cathedral[t] else "")

    def after_draw(self, game: Game, tile: int) -> None:
        if self.options.token_on != "draw":
            return
        kind = self._token_tile(game, tile)
        if kind:
            self.draw_token(game, game.turn_player, f"drew the {kind} tile {game.rules.tiles[tile].id}")

    def after_placement(self, game: Game, x: int, y: int) -> None:
        if self.options.token_on != "place":
            return
        t = game.placements[-1][2]
        kind = self._token_tile(game, t)
        if kind:
            self.draw_token(game, game.player, f"placed the {kind} tile {game.rules.tiles[t].id} at ({x},{y})")

    def on_completed(self, game: Game, root: int, kind: int, size: int) -> None:
        tab = self.table(game)
        if kind == BUILDING:
            x, y, t, _, base = game.placements[game.node_tile[root]]
            if root - base in tab.building_seg[t]:
                self.draw_token(game, game.turn_player, f"completed the {tab.building[t]} at ({x},{y})")
        elif kind == CITY:
            find = game.find
            for k in sorted(game.tiles[root]):
                x, y, t, _, base = game.placements[k]
                if any(find(base + i) == root for i in tab.cathedral[t]):
                    self.draw_token(game, game.turn_player, f"completed the city with the cathedral at ({x},{y})")
                    return

    # ------------------------------------------------------------ thieves
    def thief_roads(self, game: Game) -> list[int]:
        """Segments of the placed tile a thief may go on now (none outside the turn's thief phase)."""
        if not game.placements:
            return []
        p = game.turn_player
        if game.supply[p] <= 0:
            return []
        tab = self.table(game)
        x, y, t, _, base = game.placements[-1]
        if not tab.building[t]:
            return []
        if self.options.thieves_need_monk and not any(game.followers.get(base + i) == p for i in tab.building_seg[t]):
            return []
        find = game.find
        out = []
        for i in tab.roads[t]:
            root = find(base + i)
            if root in game.occupants or root in game.guests:
                continue
            if i in tab.dead_ends[t] or self._leads_to_another_cloister(game, root, game.node_tile[base + i]):
                out.append(i)
        return out

    def _leads_to_another_cloister(self, game: Game, root: int, tile_k: int) -> bool:
        """Whether road ``root`` holds a segment of another tile that ends at a cloister-like building."""
        tab = self.table(game)
        find = game.find
        for k in game.tiles[root]:
            if k == tile_k:
                continue
            _, _, t, _, base = game.placements[k]
            if any(find(base + i) == root for i in tab.dead_ends[t]):
                return True
        return False

    def place_thief(self, game: Game, action: PlaceThief) -> None:
        """Validate and place one thief (the state is untouched if it is illegal)."""
        x, y, t, _, base = game.placements[-1]
        tile = game.rules.tiles[t]
        try:
            seg = tile.segment_index(action.segment)
        except KeyError as exc:
            raise IllegalActionError(f"{action.to_text()!r}: {exc.args[0]}") from None
        legal = self.thief_roads(game)
        if seg not in legal:
            raise IllegalActionError(
                f"{action.to_text()!r}: no thief may go on {action.segment} of {tile.id}; "
                f"roads that take one: {[tile.segments[i].name for i in legal] or 'none'}"
            )
        p = game.player
        node = base + seg
        game.take_follower(p)
        game.add_follower(node, p)
        st: GlassState = game.ext[KEY]
        st.thieves[node] = p
        st.steals += 1
        game.emit(FollowerPlaced(p, x, y, action.segment, "road"))
        game.emit(ThiefPlaced(p, x, y, action.segment))

    def on_scored(self, game: Game, root: int, kind: int, final: bool) -> None:
        if kind != ROAD:
            return
        st: GlassState = game.ext[KEY]
        if st.thieves:
            st.thieves = {n: p for n, p in st.thieves.items() if game.followers.get(n) == p}

    # ------------------------------------------------------------- steals
    def stealable(self, game: Game, victim: int) -> list[int]:
        """Copies of each kind that may be stolen from ``victim`` now."""
        held = game.ext[KEY].held[victim]
        if not self.options.protect_complete_windows:
            return list(held)
        done = basic_copies(self.tokens, held)
        return [max(0, c - done[self.tokens.window_of[k]]) for k, c in enumerate(held)]

    def steals(self, game: Game, player: int) -> list[Steal]:
        """The steals ``player`` may make now."""
        out: list[Steal] = []
        kinds = self.tokens.kinds
        for v in range(game.num_players):
            if v == player and not self.options.steal_from_self:
                continue
            can = self.stealable(game, v)
            if self.options.steal_kind == "random":
                if any(can):
                    out.append(Steal(v))
            else:
                out.extend(Steal(v, kinds[k]) for k, c in enumerate(can) if c)
        return out

    def steal(self, game: Game, action: Steal) -> None:
        """Validate and make one steal (the state is untouched if it is illegal)."""
        p = game.player
        v = action.victim
        if not isinstance(v, int) or not 0 <= v < game.num_players:
            raise IllegalActionError(f"{action.to_text()!r}: no player {v!r} (players are 0..{game.num_players - 1})")
        if v == p and not self.options.steal_from_self:
            raise IllegalActionError(f"{action.to_text()!r}: you cannot steal from yourself; steal from another player")
        check_token(action.to_text(), action.token)
        can = self.stealable(game, v)
        kinds = self.tokens.kinds
        random_kind = self.options.steal_kind == "random"
        if random_kind != (action.token is None):
            want = "'steal PLAYER'" if random_kind else "'steal PLAYER TOKEN'"
            raise IllegalActionError(
                f"{action.to_text()!r}: steals are {want} with steal_kind={self.options.steal_kind!r}"
            )
        if action.token is None:
            total = sum(can)
            if not total:
                raise IllegalActionError(f"{action.to_text()!r}: player {v} holds no token that can be stolen")
            r = int(game.rng.integers(total))
            k = 0
            while r >= can[k]:
                r -= can[k]
                k += 1
        else:
            k = kinds.index(action.token)
            if not can[k]:
                raise IllegalActionError(
                    f"{action.to_text()!r}: player {v} has no {action.token} that can be stolen; "
                    f"legal: {[s.to_text() for s in self.steals(game, p)] or 'none'}"
                )
        held = game.ext[KEY].held
        held[v][k] -= 1
        held[p][k] += 1
        game.emit(TokenStolen(p, v, kinds[k]))

    # ------------------------------------------------------------- windows
    def complete_shapes(self, game: Game, player: int) -> list[int]:
        """Indices of the shapes ``player``'s tokens complete now (a shape: every basic window of it)."""
        held = game.ext[KEY].held[player]
        if sum(held) < self.smallest_window:
            return []
        done = [all(get(held)) for get in self._window_getters]
        if not any(done):
            return []
        return [i for i, s in enumerate(self.tokens.shapes) if all(done[w] for w in s.windows)]

    def _take_window(self, game: Game, player: int, i: int, final: bool) -> ScoreItem:
        st: GlassState = game.ext[KEY]
        shape = self.tokens.shapes[i]
        for k in shape.kinds:
            st.held[player][k] -= 1
        st.pool.extend(shape.kinds)
        pts = self.points[shape.size - 1]
        game.emit(WindowScored(player, shape.name, shape.tokens, pts, final))
        return ScoreItem(WINDOW_ITEM, f"window {shape.name} ({len(shape.kinds)} tokens)", pts)

    def score_window(self, game: Game, player: int, i: int) -> None:
        """Score complete shape ``i`` of ``player`` now; its tokens go back into the bag."""
        item = self._take_window(game, player, i, final=False)
        game.award(player, item.points, [item])

    def final_scoring(self, game: Game) -> None:
        if self.options.final_windows == "none":
            return
        st: GlassState = game.ext[KEY]
        loose = self.options.loose_token_points
        for p in range(game.num_players):
            held = st.held[p]
            if not any(held):
                continue
            total, shapes = best_windows(self.tokens, held, self.points, loose)
            items = [self._take_window(game, p, i, final=True) for i in shapes]
            left = sum(st.held[p])
            if loose and left:
                items.append(
                    ScoreItem(
                        LOOSE_ITEM, f"{left} token{'s' * (left != 1)} in no finished window x {loose}", left * loose
                    )
                )
            if items and total:
                game.award(p, total, items, final=True)

    # ------------------------------------------------------------- stages
    def stages(self) -> list[tuple[str, Stage]]:
        return [
            ("after_follower", ThiefStage(self)),
            ("after_follower", StealStage(self)),
            ("end_turn", WindowStage(self)),
        ]


# ----------------------------------------------------------------- helpers
def tokens_held(game: Game, player: int) -> list[str]:
    """Tokens ``player`` holds, one id per copy, in token order."""
    kinds = token_set().kinds
    return [kinds[k] for k, c in enumerate(game.ext[KEY].held[player]) for _ in range(c)]


def bag_tokens(game: Game) -> list[str]:
    """Tokens in the bag: the forced ones (``bag_order``) in draw order, then the rest in token order."""
    st: GlassState = game.ext[KEY]
    kinds = token_set().kinds
    return [kinds[k] for k in st.forced] + [kinds[k] for k in sorted(st.pool)]


def thieves(game: Game) -> list[tuple[int, int, int, str]]:
    """Thieves on the board as ``(owner, x, y, road name)``, sorted."""
    out = []
    for node, p in game.ext[KEY].thieves.items():
        if game.followers.get(node) != p:
            continue
        x, y, t, _, base = game.placements[game.node_tile[node]]
        out.append((p, x, y, game.rules.tiles[t].segments[node - base].name))
    return sorted(out)
