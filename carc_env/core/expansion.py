"""The expansion (plug-in) protocol: hooks and their composition rules.

An expansion is a subclass of :class:`Expansion` registered under its ``KEY``
with :func:`register`.  The core never checks an expansion's name: every rule
an expansion adds enters through one of the hooks below, each a method with a
do-nothing default.  The game only calls the hooks a subclass overrides, so an
unused hook costs nothing on the hot path.  The base game is a plug-in too
(``carc_env.expansions.base``): it contributes the 72 tiles and the start
tile; all scoring of roads, cities, cloisters and fields is the core's.

Hooks and how several expansions' answers combine
------------------------------------------------
Expansions run in the rule set's *expansion order* (``RuleSet.expansions``):
every expansion after the ones it ``REQUIRES``, otherwise by key (so the order
never depends on import or registration order).  Each hook has one
composition rule:

=====================  ===========  ================================================================
hook                   composition  what it may do
=====================  ===========  ================================================================
``tile_files``         union        class attribute: tile TOML files this expansion adds (a bare name
                                    is looked up in ``carc_env/data/tiles``; an absolute path is used
                                    as it is, for plug-ins living outside the package)
``Options``            own          class attribute: a dataclass of rule variants (defaults = the
                                    edition of the seed); an optional ``validate()`` method
``REQUIRES``           all          keys that must be enabled too (and come earlier in the order)
``CONFLICTS``          all          keys that must not be enabled
``check_config``       all          at config time, may raise ``ConfigError`` for bad combinations
``new_state``          own          per-game state in ``game.ext[KEY]`` (a dataclass; deep-copied by
                                    ``Game.clone``)
``action_parsers``     union        class attribute: ``{keyword: parse(text) -> Action}`` for the
                                    text notation of its actions (a keyword claimed twice is a
                                    ``ConfigError``)
``setup``              each         lay the start layout (``game.place_fixed``); see ``REPLACES_START``
                                    and ``START_COMBINES`` (two start layouts that fit together)
``build_bag``          pipeline     change the bag's composition and order (river first, tiles removed)
``order_unseen``       pipeline     impose that order again on a uniform reshuffle of the tiles left
                                    to draw (``Game.redeal``: the hidden order sampled by search);
                                    public state only, never the real order
``setup_from_bag``     each         after the bag is built (shuffled or forced), lay tiles taken from
                                    it with ``Game.take_from_bag`` (a map's tiles on its start squares)
``after_setup_placement`` each      a tile laid at setup by no player (``place_fixed(..., announce=True)``):
                                    record it as ``after_placement`` records placed tiles (royal gates)
``tile_counts``        pipeline     at config time: the copies of each tile type (a map's recommended
                                    mix); gets the tiles and the counts so far, returns the counts
``board_layout``       single       at config time: the printed board the game is played on
                                    (``core.layout.BoardLayout``); default: an unbounded table
``followers_per_player`` single     at config time: followers per player; default
                                    ``GameConfig.followers`` (a map's 9)
``after_draw``         each         a tile was drawn for the turn's player (``TileDrawn``), before the
                                    vetoes decide whether it can be placed; also for a tile then
                                    discarded (Stained Glass's token for drawing a cloister tile)
``placement_veto``     all          clear rotation bits of frontier cells; a placement is legal only
                                    if no expansion clears it (river, shrine adjacency, maps,
                                    Sagrada Familia; ``Game.scan_placement`` tells whether a
                                    placement would close a feature); it may return a reason, which
                                    ``TileDiscarded`` carries when that veto clears the drawn tile's
                                    last legal placement; the class attribute ``veto_reason`` says
                                    in words why it refuses one placement (``apply``'s error names
                                    it when the edges fit)
``placement_links``    union        features a placement links to the new tile's segments (royal
                                    gates): ``(segment, node)`` pairs; the core unites them right
                                    after laying the tile, before ``after_placement``, and
                                    ``scan_placement`` / ``closes_feature`` count them
``after_placement``    each         react to a placed tile (river state, extra-turn flags)
``follower_spots``     pipeline     filter the follower spots of the placed tile (no follower on a gate)
``blocks_completion``  any          a closed feature does not complete if any expansion blocks it
``extra_completions``  union        features completed by an expansion rule (a linked city closing
                                    elsewhere), deduplicated, in expansion order
``score_items``        each         append items to a feature's score (Darmstadtium +3, coats of arms)
``score_override``     first        replace a feature's whole value (the Sagrada Familia's city scores
                                    0); the first expansion (in expansion order) returning items wins,
                                    and no ``score_items`` hook is applied then
``defers_scoring``     any          a completed feature keeps its followers and is scored at the end
                                    of the game instead of now (the Sagrada Familia's variant)
``on_completed``       each         every completed feature, occupied or not (King / Robber Baron)
``on_scored``          each         after a feature scored and its followers returned (shrine challenges)
``building_target``    single       neighbours that complete the building at a cell (maps: only
                                    existing squares); default 8
``feature_size``       single       tiles a city or road counts when scored (a rule variant); default:
                                    distinct tiles
``next_player``        single       who takes the next turn (extra turns); default: the next seat
``field_cities``       sum          extra completed cities a field borders (the City of Carcassonne); may
                                    be negative to leave out a completed city farmers do not count (a
                                    city the Sagrada Familia tile closed)
``uncounted_completion`` any         a completed feature that the rules counting or comparing completed
                                    features leave out (``Game.counts_as_completed``: the King's and
                                    Robber Baron's records and final points; the Sagrada Familia's city)
``extra_completed``    sum          completed features of a kind outside the union-find's completed
                                    roots, for ``Game.count_completed`` (the King's count)
``followers_held``     sum          followers an expansion keeps off the board and out of the supply
                                    (Count quarters), for ``Game.followers_conserved``
``final_scoring``      each         end-of-game scoring after the core's (King / Robber, windows)
``stages``             ordered      extra decision or automatic stages at the anchors of
                                    ``core.stages.ANCHORS``; inside an anchor in the order their
                                    ``before`` / ``after`` declarations give, otherwise in expansion
                                    order, then in the order ``stages()`` lists them
=====================  ===========  ================================================================

*each* calls every expansion in order; *all* / *any* combine booleans;
*pipeline* feeds one expansion's result to the next; *union* collects;
*sum* adds; *first* takes the first answer that is not None.  A *single*-answer hook has at most one expansion answering it
in a configuration: an expansion *claims* it when it overrides the method and
:meth:`Expansion.claims` says so (by default: whenever it overrides it; the
base game claims ``feature_size`` only with ``count_tile_once=False``).  Two
expansions claiming one single-answer hook is a :class:`ConfigError` naming
both.  A claimant may still return ``None`` ("no opinion here") for the
default.

Game methods meant for expansions
---------------------------------
An expansion changes the game only through these (never by writing
``game.supply``, ``game.events``, ``game.scores`` or the board internals):
``place_fixed`` (setup), ``take_follower`` / ``return_follower`` (supply),
``add_follower`` / ``add_guest`` / ``remove_followers`` (followers on
features), ``award`` (points outside a majority), ``emit`` (events),
``link_features`` (two features become one), ``complete_feature`` /
``score_feature`` (completion and scoring).  It may read any public
attribute, and ask ``scan_placement`` / ``closes_feature`` (what a placement
would join and close), ``building_complete``, ``root_array``,
``frontier_cells``, ``feature_value``.  Derived per-rule-set tables are kept
on the expansion instance (one per ``RuleSet``) or in ``RuleSet.cache``.

Registry and plug-in parts
--------------------------
The registry (:func:`register`, :func:`plugins`, :func:`part`, ...) lives in
:mod:`carc_env.core.registry`; its names are re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .actions import Action
    from .events import ScoreItem
    from .game import Game
    from .layout import BoardLayout
    from .stages import Stage
    from .tiles import TileType


class ConfigError(ValueError):
    """A game configuration is invalid; the message names the problem and the fix."""


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """Options of an expansion without rule variants."""


SINGLE_ANSWER_HOOKS = ("building_target", "feature_size", "next_player", "board_layout", "followers_per_player")
"""Hooks that at most one expansion of a configuration may claim (see :meth:`Expansion.claims`)."""


class Expansion:
    """Base class of every expansion; see the module docstring for the hooks."""

    KEY: ClassVar[str] = ""
    Options: ClassVar[type] = NoOptions
    tile_files: ClassVar[tuple[str, ...]] = ()
    REQUIRES: ClassVar[tuple[str, ...]] = ()
    CONFLICTS: ClassVar[tuple[str, ...]] = ()
    REPLACES_START: ClassVar[bool] = False
    """True if ``setup`` lays its own start layout instead of the base start tile."""
    START_COMBINES: ClassVar[Collection[str]] = ()
    """Keys of other ``REPLACES_START`` expansions whose start layout this one's ``setup`` knows how
    to lay its own next to (the River's spring beside the Count's city).  Two start layouts may be
    enabled together only if one of them names the other here."""
    veto_reason: ClassVar[str] = ""
    """Why ``placement_veto`` refuses a placement, in words (``apply``'s error names it when a placement
    whose edges fit is refused by this expansion's rule)."""
    action_parsers: ClassVar[Mapping[str, Callable[[str], Action]]] = {}
    """Parsers of this expansion's action texts, by first word (``"count_send"``)."""

    def __init__(self, options: Any) -> None:
        self.options = options

    # -- configuration ---------------------------------------------------
    def check_config(self, keys: tuple[str, ...]) -> None:
        """Raise ConfigError if this expansion cannot run with the given keys."""

    def claims(self, hook: str) -> bool:
        """Whether this expansion answers the single-answer hook ``hook`` in this configuration.

        Default: it does when it overrides the hook.  Override to claim only under an option.
        """
        return overrides(self, hook)

    def new_state(self) -> Any:
        """The expansion's per-game state (``game.ext[KEY]``); None if it keeps none."""
        return None

    # -- setup -----------------------------------------------------------
    def setup(self, game: Game) -> None:
        """Lay start tiles; called once, in expansion order, before the bag is built."""

    def build_bag(self, game: Game, bag: list[int]) -> list[int]:
        """Return the bag (draw order: index 0 is drawn first)."""
        return bag

    def order_unseen(self, game: Game, order: list[int]) -> list[int]:
        """Reorder a uniform shuffle of the tiles left to draw (index 0 drawn next) so that it
        keeps what every player knows of the real order (the river's tiles before the others).
        Called by :meth:`Game.redeal`; must use only public state, never the real order."""
        return order

    def setup_from_bag(self, game: Game) -> None:
        """After the bag is built (a forced draw order too): lay tiles taken from it with
        ``game.take_from_bag()`` and ``game.place_fixed(..., from_bag=False)``."""

    def after_setup_placement(self, game: Game, x: int, y: int) -> None:
        """A tile was laid at setup by no player (``place_fixed(..., announce=True)``; it is
        ``game.placements[-1]``): record it if this expansion records placed tiles."""

    def tile_counts(self, tiles: tuple[TileType, ...], counts: dict[str, int]) -> dict[str, int]:
        """At config time: the copies of each tile type (``counts``: ``{tile id: copies}`` so far)."""
        return counts

    def board_layout(self) -> BoardLayout | None:
        """At config time: the printed board the game is played on (``core.layout``); None: unbounded."""
        return None

    def followers_per_player(self, configured: int) -> int | None:
        """At config time: followers per player (``configured``: ``GameConfig.followers``); None: that."""
        return None

    # -- placement -------------------------------------------------------
    def after_draw(self, game: Game, tile: int) -> None:
        """Tile type ``tile`` was drawn for ``game.turn_player`` (placeable or not: it may be discarded next)."""

    def placement_veto(self, game: Game, tile: int, masks: np.ndarray) -> str | None:
        """Clear bits in ``masks`` (uint8 rotation bitmask per frontier cell, in place; the cells are
        ``game.frontier_cells()``).  May return a reason (``"every legal placement would close ..."``):
        when this veto clears the last legal placement, the tile's ``TileDiscarded`` event says it."""
        return None

    def placement_links(self, game: Game, tile: int, x: int, y: int, r: int) -> list[tuple[int, int]]:
        """Features that placing tile type ``tile`` at ``(x, y)`` in rotation ``r`` links to the new
        tile: ``(segment of the new tile, node of a placed feature)`` pairs.  Asked before the tile is
        laid (to place it, and by ``scan_placement`` for placements not made); must not change the game."""
        return []

    def after_placement(self, game: Game, x: int, y: int) -> None:
        """Called after a tile is placed and its features are merged."""

    def follower_spots(self, game: Game, spots: list[int]) -> list[int]:
        """Return the segments of the placed tile a follower may go on (a filtered ``spots``)."""
        return spots

    # -- completion and scoring ------------------------------------------
    def blocks_completion(self, game: Game, root: int) -> bool:
        """True to stop the closed feature ``root`` from completing now."""
        return False

    def extra_completions(self, game: Game) -> list[int]:
        """Roots of features this turn completes by an expansion rule (not closed by the placed tile)."""
        return []

    def score_items(self, game: Game, root: int, final: bool, items: list[ScoreItem], counts: list[int]) -> None:
        """Append items to a feature's breakdown; ``counts`` are followers per player."""

    def score_override(self, game: Game, root: int, final: bool) -> list[ScoreItem] | None:
        """The whole breakdown of feature ``root`` scored now, replacing the core's value and every
        ``score_items`` item; None = no opinion."""
        return None

    def defers_scoring(self, game: Game, root: int) -> bool:
        """True: the completed feature ``root`` is not scored now; its followers stay on it until the
        end of the game, when it is scored with the incomplete features (``final=True``)."""
        return False

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

    def uncounted_completion(self, game: Game, root: int) -> bool:
        """True: the completed feature ``root`` is not counted by rules that count or compare completed
        features (:meth:`Game.counts_as_completed`, :meth:`Game.count_completed`)."""
        return False

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
        """Who takes the next turn; None = no opinion (``default``, the next seat)."""
        return None

    def followers_held(self, game: Game) -> list[int]:
        """Followers per player that this expansion holds outside the board and the supply."""
        return [0] * game.num_players

    def final_scoring(self, game: Game) -> None:
        """End-of-game scoring after roads, cities, buildings and fields."""


def overrides(exp: Expansion, name: str) -> bool:
    """Whether ``exp``'s class overrides hook ``name`` of :class:`Expansion`."""
    return getattr(type(exp), name) is not getattr(Expansion, name)


# The registry is its own module; its names stay importable from here (``from carc_env.core.expansion
# import register``), the place plug-ins have always imported them from.
from .registry import _REGISTRY as _REGISTRY  # noqa: E402
from .registry import (  # noqa: E402
    BUILTIN_PACKAGE,
    ENTRY_POINT_GROUP,
    PARTS,
    Plugin,
    all_parts,
    builtin_keys,
    generation,
    load_builtins,
    load_entry_points,
    part,
    parts,
    plugins,
    register,
    registry,
    unregister,
)

__all__ = [
    "BUILTIN_PACKAGE", "ENTRY_POINT_GROUP", "PARTS", "SINGLE_ANSWER_HOOKS", "ConfigError", "Expansion", "NoOptions",
    "Plugin", "all_parts", "builtin_keys", "generation", "load_builtins", "load_entry_points", "overrides", "part",
    "parts", "plugins", "register", "registry", "unregister",
]  # fmt: skip
