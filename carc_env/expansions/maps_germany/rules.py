"""Carcassonne Maps - Germany: the game on a printed board (rules: ``docs/rules/maps_germany.md``).

Contract
--------
The board is data (``carc_env/data/maps/germany.toml``, an approximation of the
printed board; option ``map_file`` names another file of the same format) and
the core plays on it (:mod:`carc_env.core.layout`): tiles only on printed
squares, printed large-city squares and features abroad as fixed tiles,
border edges closing features, monasteries at the border completed by the
squares that exist.  This plug-in adds:

* ``board_layout``: the core layout of the map file (``large_city_closed_edges``
  decides what the closed sides of a large-city block are);
* ``setup`` (``REPLACES_START``): the base start tile on the first of the
  ``start_squares``; ``setup_from_bag``: the next tiles of the bag on the other
  start squares (a tile that fits none of a square's rotations is set aside,
  out of the game, and the next one taken); rotations per ``start_orientation``;
* ``tile_counts``: the tile mix (``tile_mix``); ``followers_per_player``: 9
  (``followers``);
* ``score_items``: +2 per coat of arms of a feature completed during the game,
  +1 at the end (large-city squares and features abroad carry them); the town
  road bonus (variant 3);
* ``after_placement`` / ``next_player``: the town variants 1 (extra turn, once
  per turn) and 2 (-2 points);
* ``map_extra_turn`` (decision, ``end_turn``; only with ``town_extra_turn`` and
  ``town_extra_turn_optional``): the player who covered a town takes the extra turn
  (``extra_turn``) or declines it (``pass``); no decision when the bag is empty;
* ``check_config``: refuses expansions that lay their own start layout (their
  start does not fit a printed board).

State (``game.ext["maps_germany"]``, :class:`MapsState`): the random numbers
drawn for the start rotations, the tiles set aside at setup, and the extra-turn flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.actions import Action, IllegalActionError, Pass
from ...core.events import Event, ScoreItem
from ...core.expansion import ConfigError, Expansion, registry
from ...core.layout import BoardLayout
from ...core.stages import Stage
from ...core.tiles import CITY, DX, DY, ROAD, TileType
from .mapfile import CLOSED_EDGE_MODES, MapData, MapDataError, load_map_file

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "maps_germany"
EXTRA_TURN_PHASE = "map_extra_turn"
ORIENTATIONS = ("open", "fixed", "random")
TILE_MIXES = {"base_x1.5": 1.5, "base_x1": 1.0, "base_x2": 2.0}
"""Tile mixes: every base tile type's count times the factor, rounded up (72 -> 115 -> 144 tiles)."""


@dataclass(frozen=True)
class MapsGermanyOptions:
    """Rule variants and interpretations of Carcassonne Maps - Germany (defaults: the rule text)."""

    map_file: str = "germany"
    """The board: a name in ``carc_env/data/maps`` or a path to a map file (same format)."""
    start_squares: str = "Rostock,Stuttgart"
    """2 or 3 start squares, comma-separated; the start tile goes on the first, a tile from the
    bag on each other (rule: at least 2; Example 1 has the start tile in Rostock)."""
    start_orientation: str = "open"
    """How the tiles on the start squares are turned, among the rotations that fit printed features
    next to them: ``"open"`` so that the most of the tile's cities and roads can be played (a
    side of the feature faces an empty square), ties to the lowest rotation (0, 1, 2, 3), so a
    start square with four squares round it keeps the tile unrotated; ``"fixed"`` the lowest
    rotation (unrotated where it fits, like the base game's start tile; Rostock's start city then
    faces the Baltic, closed from the start: the engine before issue 23); ``"random"`` the game's
    generator picks."""
    followers: int = 9
    """Followers per player (rule: 9 instead of 7 if you have them); 0 uses ``GameConfig.followers``."""
    tile_mix: str = "base_x1.5"
    """Land tiles: ``"base_x1.5"`` (115: each base tile type's count x 1.5, rounded up; the rule
    recommends 110-120), ``"base_x1"`` (72) or ``"base_x2"`` (144).  Tiles of other enabled
    expansions are added as they are."""
    large_city_closed_edges: str = "field"
    """The sides of a large-city block that are not open city edges: ``"field"`` (printed grass
    outside the wall: a tile there shows a field edge, and its field borders the large city) or
    ``"border"`` (neutral: anything fits and it closes what faces it)."""
    town_extra_turn: bool = False
    """Town variant 1: covering a town gives one more turn at once (not again in that extra turn)."""
    town_extra_turn_optional: bool = True
    """With variant 1: the player decides whether to take the extra turn (the text: "you *may*
    immediately take another turn"; decision phase ``map_extra_turn``: ``extra_turn`` or ``pass``);
    False: the extra turn is always taken, no decision (the engine before issue 23)."""
    town_penalty: bool = False
    """Town variant 2: covering a town costs 2 points."""
    town_road_bonus: bool = False
    """Town variant 3: a road scores +2 for each uncovered town orthogonally next to one of its tiles."""

    def validate(self) -> None:
        if self.start_orientation not in ORIENTATIONS:
            raise ConfigError(
                f"option {KEY}.start_orientation must be one of {ORIENTATIONS}, got {self.start_orientation!r}"
            )
        if self.tile_mix not in TILE_MIXES:
            raise ConfigError(f"option {KEY}.tile_mix must be one of {sorted(TILE_MIXES)}, got {self.tile_mix!r}")
        if self.large_city_closed_edges not in CLOSED_EDGE_MODES:
            raise ConfigError(
                f"option {KEY}.large_city_closed_edges must be one of {CLOSED_EDGE_MODES}, "
                f"got {self.large_city_closed_edges!r}"
            )
        if self.followers < 0:
            raise ConfigError(
                f"option {KEY}.followers must be 0 (use GameConfig.followers) or more, got {self.followers}"
            )
        names = self.start_names()
        if not 2 <= len(names) <= 3 or len({n.lower() for n in names}) != len(names):
            raise ConfigError(
                f"option {KEY}.start_squares must name 2 or 3 different start squares, comma-separated "
                f"(e.g. 'Rostock,Erfurt,Stuttgart'), got {self.start_squares!r}"
            )

    def start_names(self) -> list[str]:
        return [n.strip() for n in self.start_squares.split(",") if n.strip()]


@dataclass
class MapsState:
    """Per-game state of the map plug-in."""

    start_draws: list[float] = field(default_factory=list)
    """One random number per start square (``start_orientation="random"``), drawn before the shuffle."""
    set_aside: list[str] = field(default_factory=list)
    """Tiles taken from the bag for a start square that fitted in no rotation (out of the game)."""
    extra_turn_due: bool = False
    in_extra_turn: bool = False


@dataclass(frozen=True, slots=True)
class TakeExtraTurn(Action):
    """Take the extra turn town variant 1 offers (``pass`` declines it)."""

    def to_text(self) -> str:
        return "extra_turn"


def _parse_extra_turn(text: str) -> Action:
    if text.split() != ["extra_turn"]:
        raise IllegalActionError(f"cannot parse {text!r}; expected 'extra_turn' (or 'pass' to decline it)")
    return TakeExtraTurn()


@dataclass(frozen=True, slots=True)
class ExtraTurnDeclined(Event):
    """``player`` covered a town (variant 1) and declined the extra turn."""

    player: int


class ExtraTurnStage(Stage):
    """``map_extra_turn``: the player who covered a town this turn takes the extra turn or not."""

    name = EXTRA_TURN_PHASE

    def enter(self, game: Game) -> bool:
        st: MapsState = game.ext[KEY]
        if not st.extra_turn_due:
            return False
        if game.bag_size == 0:  # no tile left to play: the game ends instead
            st.extra_turn_due = False
            return False
        game.player = game.turn_player
        return True

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is TakeExtraTurn:
            return True  # next_player gives the turn back
        if type(action) is not Pass:
            raise IllegalActionError(f"the {self.name} phase needs 'extra_turn' or 'pass', got {action!r}")
        game.ext[KEY].extra_turn_due = False
        game.emit(ExtraTurnDeclined(game.player))
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        return [TakeExtraTurn(), Pass()]


class MapsGermany(Expansion):
    KEY = KEY
    Options = MapsGermanyOptions
    REQUIRES = ("base",)
    """The base game: its start tile goes on the first start square, its tiles make the mix."""
    REPLACES_START = True
    action_parsers = {"extra_turn": _parse_extra_turn}

    def __init__(self, options: MapsGermanyOptions) -> None:
        super().__init__(options)
        try:
            self.map: MapData = load_map_file(options.map_file)
            self.layout, self.coats = self.map.layout(options.large_city_closed_edges)
        except MapDataError as exc:
            raise ConfigError(f"option {KEY}.map_file: {exc}") from None
        self.starts = []
        for name in options.start_names():
            try:
                self.starts.append(self.map.start(name))
            except KeyError:
                raise ConfigError(
                    f"option {KEY}.start_squares: {name!r} is not a start square of map {self.map.name!r}; "
                    f"its start squares are {[s.name for s in self.map.starts]}"
                ) from None
        self.towns = self.map.town_cells
        self.printed_cells = frozenset((p.x, p.y) for p in self.layout.pieces)
        # the node of the first segment (a printed piece's city or road) of piece i is placements[i][4]
        self.coat_pieces = tuple(i for i, c in enumerate(self.coats) if c)

    # ---------------------------------------------------------------- configuration
    def check_config(self, keys: tuple[str, ...]) -> None:
        reg = registry()
        for k in keys:
            if k != KEY and k in reg and reg[k].REPLACES_START:
                raise ConfigError(
                    f"{KEY!r} plays on the printed board of Germany from its start squares, but {k!r} lays its own "
                    f"start layout, which has no place on the board; enable only one of them"
                )

    def new_state(self) -> MapsState:
        return MapsState()

    def board_layout(self) -> BoardLayout:
        return self.layout

    def tile_counts(self, tiles: tuple[TileType, ...], counts: dict[str, int]) -> dict[str, int]:
        factor = TILE_MIXES[self.options.tile_mix]
        base = self.REQUIRES[0]
        for t in tiles:
            if t.set == base:
                counts[t.id] = math.ceil(counts[t.id] * factor)
        return counts

    def claims(self, hook: str) -> bool:
        if hook == "next_player":  # only the town variant gives extra turns
            return self.options.town_extra_turn
        if hook == "followers_per_player":
            return self.options.followers != 0
        return super().claims(hook)

    def followers_per_player(self, configured: int) -> int | None:
        want = self.options.followers
        if want == 0:
            return None
        if configured not in (7, want):
            raise ConfigError(
                f"GameConfig.followers={configured} conflicts with option {KEY}.followers={want}; set "
                f"{KEY}.followers to {configured} (or to 0 to use GameConfig.followers)"
            )
        return want

    # ---------------------------------------------------------------------- setup
    def _rotation(self, game: Game, tile_id: str, x: int, y: int, i: int) -> int | None:
        fits = game.fitting_rotations(tile_id, x, y)
        if not fits:
            return None
        if self.options.start_orientation == "random":
            return fits[int(game.ext[KEY].start_draws[i] * len(fits))]
        if self.options.start_orientation == "open":
            return max(fits, key=lambda r: (*self.openness(game, tile_id, x, y, r), -r))
        return fits[0]

    def openness(self, game: Game, tile_id: str, x: int, y: int, r: int) -> tuple[int, int]:
        """How playable ``tile_id`` laid at (x, y) in rotation ``r`` leaves its cities and roads:
        (features with a side facing an empty square, which a player can still extend and claim;
        minus the sides of cities and roads facing the border, where nothing continues them)."""
        tile = game.rules.tiles[game.rules.tile_index[tile_id]]
        playable, board, printed = self.layout.playable, game.board, self.printed_cells
        open_features, border_sides = set(), 0
        for s in range(4):
            i = tile.center[r][s]
            if i < 0 or tile.segments[i].kind not in (CITY, ROAD):
                continue
            c = (x + DX[s], y + DY[s])
            if c in playable and c not in board:
                open_features.add(i)
            elif c not in playable and c not in printed:
                border_sides += 1
        return len(open_features), -border_sides

    def setup(self, game: Game) -> None:
        st: MapsState = game.ext[KEY]
        if self.options.start_orientation == "random":
            st.start_draws = [float(game.rng.random()) for _ in self.starts]
        first = self.starts[0]
        start = game.rules.start_tiles[self.REQUIRES[0]]
        r = self._rotation(game, start, first.x, first.y, 0)
        if r is None:
            raise ConfigError(f"the start tile {start} fits the start square {first.name} in no rotation")
        game.place_fixed(start, first.x, first.y, r)

    def setup_from_bag(self, game: Game) -> None:
        st: MapsState = game.ext[KEY]
        for i, sq in enumerate(self.starts[1:], start=1):
            while True:
                tid = game.take_from_bag()
                if tid is None:
                    return
                r = self._rotation(game, tid, sq.x, sq.y, i)
                if r is not None:
                    game.place_fixed(tid, sq.x, sq.y, r, from_bag=False, announce=True)
                    break
                st.set_aside.append(tid)

    def stages(self) -> list[tuple[str, Stage]]:
        if self.options.town_extra_turn and self.options.town_extra_turn_optional:
            return [("end_turn", ExtraTurnStage())]
        return []

    # -------------------------------------------------------------------- scoring
    def coats_of_arms(self, game: Game, root: int) -> int:
        """Coats of arms printed on the feature ``root`` (large-city squares, features abroad)."""
        find, placements = game.find, game.placements
        return sum(self.coats[i] for i in self.coat_pieces if find(placements[i][4]) == root)

    def score_items(self, game: Game, root: int, final: bool, items: list[ScoreItem], counts: list[int]) -> None:
        kind = game.kind[root]
        if kind not in (CITY, ROAD):
            return
        n = self.coats_of_arms(game, root)
        if n:
            per = 1 if final else 2
            items.append(ScoreItem("coats_of_arms", f"{n} coat{'s' * (n != 1)} of arms x {per}", n * per))
        if kind == ROAD and self.options.town_road_bonus:
            towns = self.uncovered_towns_next_to(game, root)
            if towns:
                items.append(ScoreItem("towns", f"{len(towns)} uncovered town{'s' * (len(towns) != 1)} x 2",
                                       2 * len(towns)))  # fmt: skip

    def uncovered_towns_next_to(self, game: Game, root: int) -> list[tuple[int, int]]:
        """Town squares without a tile orthogonally next to a tile of the road ``root``."""
        board = game.board
        out = set()
        for x, y in game.feature_tiles(root):
            for s in range(4):
                c = (x + DX[s], y + DY[s])
                if c in self.towns and c not in board:
                    out.add(c)
        return sorted(out)

    # ------------------------------------------------------------- town variants
    def after_placement(self, game: Game, x: int, y: int) -> None:
        if (x, y) not in self.towns:
            return
        name = next(t.name for t in self.map.towns if t.cell == (x, y))
        if self.options.town_penalty:
            game.award(game.turn_player, -2, [ScoreItem("town", f"tile on the town {name}", -2)])
        st: MapsState = game.ext[KEY]
        if self.options.town_extra_turn and not st.in_extra_turn:
            st.extra_turn_due = True

    def next_player(self, game: Game, default: int) -> int | None:
        if not self.options.town_extra_turn:
            return None
        st: MapsState = game.ext[KEY]
        if st.extra_turn_due:
            st.extra_turn_due = False
            st.in_extra_turn = True
            return game.turn_player
        st.in_extra_turn = False
        return None
