"""The expansion hook protocol.

An expansion is a subclass of :class:`Expansion` registered under its ``KEY``
with :func:`register`.  The core never checks an expansion's name: every rule
an expansion adds enters through one of the hooks below, each a method with a
do-nothing default.  The game only calls the hooks a subclass overrides, so an
unused hook costs nothing on the hot path.

Hook summary (where the core calls it, what it may do):

=====================  ==================================================================
``tile_files``         class attribute: tile TOML files this expansion adds
``Options``            class attribute: a dataclass of rule variants (defaults = the edition of the seed)
``REQUIRES``           keys that must be enabled too; ``CONFLICTS``: keys that must not be
``check_config``       at config time, may raise ``ConfigError`` for bad combinations
``new_state``          per-game mutable state (stored in ``game.ext[KEY]``, deep-copied on clone)
``building_kinds``     class attribute: cloister-like building kinds it adds (shrine, church)
``setup``              build the start layout (``game.place_fixed``); see ``REPLACES_START`` and
                       ``START_COMBINES`` (two start layouts that fit together)
``build_bag``          change the bag's composition and order (river first, tiles removed)
``setup_from_bag``     after the bag is built (shuffled or forced), lay tiles taken from it
                       (``game.take_from_bag``; a map's random tiles on its start squares)
``tile_counts``        at config time: new counts of tile types (a map's recommended mix);
                       pipeline, each expansion sees the counts the previous ones set
``board_layout``       at config time: the printed board (``core.layout.BoardLayout``) the game is
                       played on; at most one expansion may provide one (``ConfigError`` otherwise)
``followers_per_player`` at config time: followers per player instead of ``GameConfig.followers``
                       (a map's 9); at most one expansion may set it
``placement_veto``     clear rotation bits of frontier cells (river continuity, shrine adjacency,
                       map squares, Sagrada Familia)
``after_placement``    react to a placed tile (river state, extra-turn flags, gate links)
``follower_spots``     filter the follower spots of the placed tile (no follower on a gate)
``blocks_completion``  veto completion of a closed feature (linked cities, Sagrada Familia)
``extra_completions``  report features completed by an expansion rule (a linked city closing elsewhere)
``score_items``        add items to a feature's score (Darmstadtium +3 in majority, coats of arms)
``on_completed``       every completed feature, occupied or not (King / Robber Baron)
``on_scored``          after a feature scored (shrine challenges, stained-glass draws)
``building_target``    how many neighbours complete a building (maps: only existing squares)
``field_cities``       extra completed cities a field borders (the City of Carcassonne)
``feature_size``       how many tiles a city or road counts when scored (a rule variant)
``extra_completed``    completed features of a kind outside the union-find's completed roots
                       (the City of Carcassonne is one completed city), for ``Game.count_completed``
``stages``             extra decision or automatic stages and where they go in the turn
                       (``before_score`` sees ``game.completing``; ``before_final`` runs once at game end)
``followers_held``     followers an expansion keeps off the board (Count quarters), for conservation
``next_player``        who takes the next turn (extra turns)
``final_scoring``      end-of-game scoring after the core's (King / Robber, windows)
=====================  ==================================================================

The base game itself is written as an expansion (``carc_env.expansions.base``):
it contributes the 72 tiles and the start tile through ``tile_files`` and
``setup``; all scoring of roads, cities, cloisters and fields is core.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .events import Event, ScoreItem
    from .game import Game
    from .layout import BoardLayout
    from .stages import Stage
    from .tiles import TileType


class ConfigError(ValueError):
    """A game configuration is invalid; the message names the problem and the fix."""


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """Options of an expansion without rule variants."""


class Expansion:
    KEY: ClassVar[str] = ""
    Options: ClassVar[type] = NoOptions
    tile_files: ClassVar[tuple[str, ...]] = ()
    REQUIRES: ClassVar[tuple[str, ...]] = ()
    CONFLICTS: ClassVar[tuple[str, ...]] = ()
    REPLACES_START: ClassVar[bool] = False
    """True if ``setup`` lays its own start layout instead of the base start tile."""
    START_COMBINES: ClassVar[tuple[str, ...]] = ()
    """Keys of other ``REPLACES_START`` expansions whose start layout this one's ``setup`` knows how
    to lay its own next to (the River's spring beside the Count's city).  Two start layouts may be
    enabled together only if one of them names the other here."""

    def __init__(self, options: Any) -> None:
        self.options = options

    # -- configuration ---------------------------------------------------
    def check_config(self, keys: tuple[str, ...]) -> None:
        """Raise ConfigError if this expansion cannot run with the given keys."""

    def new_state(self) -> Any:
        return None

    # -- setup -----------------------------------------------------------
    def setup(self, game: Game) -> None:
        """Lay start tiles; called once, in expansion order, before the bag is built."""

    def build_bag(self, game: Game, bag: list[int]) -> list[int]:
        """Return the bag (draw order: index 0 is drawn first)."""
        return bag

    def setup_from_bag(self, game: Game) -> None:
        """After the bag is built (a forced draw order included): lay tiles taken from it with
        ``game.take_from_bag()`` and ``game.place_fixed(..., from_bag=False)``."""

    def tile_counts(self, tiles: tuple[TileType, ...]) -> dict[str, int] | None:
        """At config time: ``{tile id: copies}`` for tile types whose count changes; None = none."""
        return None

    def board_layout(self) -> BoardLayout | None:
        """At config time: the printed board the game is played on (see ``core.layout``); None = unbounded."""
        return None

    def followers_per_player(self, configured: int) -> int | None:
        """At config time: followers per player (``configured`` is ``GameConfig.followers``); None = no opinion."""
        return None

    # -- placement -------------------------------------------------------
    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> None:
        """Clear bits in ``masks`` (uint8 rotation bitmask per frontier slot, in place)."""

    def after_placement(self, game: Game, x: int, y: int) -> None:
        """Called after a tile is placed and its features are merged."""

    def follower_spots(self, game: Game, spots: list[int]) -> list[int]:
        return spots

    # -- completion and scoring ------------------------------------------
    def blocks_completion(self, game: Game, root: int) -> bool:
        return False

    def extra_completions(self, game: Game) -> list[int]:
        return []

    def score_items(self, game: Game, root: int, final: bool, items: list[ScoreItem], counts: list[int]) -> None:
        """Append items to a feature's breakdown; ``counts`` are followers per player."""

    def on_completed(self, game: Game, root: int, kind: int, size: int) -> None:
        """Every completed road, city and building, occupied or not."""

    def on_scored(self, game: Game, root: int, kind: int, final: bool) -> None:
        """After a feature scored and its followers returned."""

    def building_target(self, game: Game, x: int, y: int) -> int | None:
        """Neighbours needed to complete a building at (x, y); None = no opinion (8)."""
        return None

    def field_cities(self, game: Game, root: int) -> int:
        """Extra completed cities bordering field ``root`` (counted for farmers)."""
        return 0

    def feature_size(self, game: Game, root: int) -> int | None:
        """Tiles a city or road counts when scored; None = no opinion (distinct tiles)."""
        return None

    def extra_completed(self, game: Game, kind: int) -> int:
        """Completed features of ``kind`` (``CITY``, ``ROAD``) that are not completed roots of the
        union-find, added to :meth:`Game.count_completed` (the King counts completed cities)."""
        return 0

    # -- turn structure ----------------------------------------------------
    def stages(self) -> list[tuple[str, Stage]]:
        """Extra stages as ``(anchor, stage)``; anchors in ``core.stages.ANCHORS``."""
        return []

    def next_player(self, game: Game, default: int) -> int | None:
        return None

    def followers_held(self, game: Game) -> list[int]:
        """Followers per player that this expansion holds outside the board and the supply."""
        return [0] * game.num_players

    def final_scoring(self, game: Game) -> None:
        """End-of-game scoring after roads, cities, buildings and fields."""

    # -- events --------------------------------------------------------------
    def emit(self, game: Game, event: Event) -> None:
        game.events.append(event)


_REGISTRY: dict[str, type[Expansion]] = {}


def register(cls: type[Expansion]) -> type[Expansion]:
    """Class decorator: make an expansion available under ``cls.KEY``."""
    if not cls.KEY:
        raise ValueError(f"{cls.__name__} has no KEY")
    _REGISTRY[cls.KEY] = cls
    return cls


def registry() -> dict[str, type[Expansion]]:
    """Registered expansions (``carc_env/__init__`` imports the built-in ones)."""
    return dict(_REGISTRY)


def overrides(exp: Expansion, name: str) -> bool:
    return getattr(type(exp), name) is not getattr(Expansion, name)
