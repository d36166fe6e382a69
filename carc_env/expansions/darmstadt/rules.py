"""Darmstadt promo's rules (Darmstadt Spielt 2014; rules: ``docs/rules/darmstadt.md``).

Contract
--------
* ``tile_files``: ``DA-darmstadtium`` (a full city tile whose city carries the
  tag ``darmstadtium``) and two church tiles ``DA-st-louis``, ``DA-st-mary``
  (``data/tiles/darmstadt.toml``).  The file declares the building kind
  ``church``, which the core places, occupies and scores exactly like a cloister.
* ``build_bag``: with ``remove_base_cloisters`` (default) two base cloisters
  (``BA-B``) leave the shuffled stack.  A forced ``draw_order`` is taken as given.
* Darmstadtium (``score_items``): a city holding it, completed and scored during
  the game, is worth 3 more points, so each majority player gets +3 (item
  ``"darmstadtium"``).  Nothing at game end.
* Church bonus: when a church is completed during the game (occupied or not,
  unless ``church_bonus_unoccupied=False``), the players with the most
  followers on any feature of the church tile and its 8 neighbours get +3 each
  (``PointsAwarded``, item ``"church_bonus"``).  The followers are counted once
  every follower that will take part in the turn's scoring is in place and
  before the scoring returns any of them (a ``score_begin`` stage, after the
  ``before_score`` decisions such as the Count's), as JCZ does.  A follower
  standing on a feature without a segment (the core's *guest*, e.g. sent from
  a quarter of Carcassonne) counts where its owner would stand it: option
  ``church_bonus_guests`` (``"vicinity"``: when the feature has a tile in the
  church's vicinity; ``"church"``: only on the church itself).  Whether the
  church is occupied is read when it completes (``on_completed``); the bonus is
  paid as part of the turn's scoring, right after the core's (a ``score_end``
  stage), so it counts as points scored because of the placement (the Count's
  deployment trigger).

State (``game.ext["darmstadt"]``, a :class:`DarmstadtState`): ``pending``, the
church bonuses counted this turn and not yet paid (empty between turns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.events import ScoreItem
from ...core.expansion import ConfigError, Expansion
from ...core.stages import Stage
from ...core.tiles import BUILDING, CITY

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "darmstadt"
TAG = "darmstadtium"
CHURCH = "church"
BONUS = 3
BONUS_KIND = "church_bonus"
REMOVED_CLOISTER = "BA-B"
REMOVED_COUNT = 2
GUEST_RULES = ("vicinity", "church")


@dataclass(frozen=True)
class DarmstadtOptions:
    remove_base_cloisters: bool = True
    """Take two base cloisters (BA-B) out of the stack: the rule's recommendation."""
    church_bonus_unoccupied: bool = True
    """Pay the church bonus when an unoccupied church is completed too (JCZ test ``church-bonus``)."""
    church_bonus_guests: str = "vicinity"
    """Where a follower on a feature without a segment (sent from a quarter of Carcassonne) stands for
    the church bonus: "vicinity" (on a tile of its feature in the church's vicinity when there is one:
    its owner places it, and a follower there can only help its owner) or "church" (only a follower
    sent onto the church itself counts)."""

    def validate(self) -> None:
        if self.church_bonus_guests not in GUEST_RULES:
            raise ConfigError(
                f"option darmstadt.church_bonus_guests must be one of {GUEST_RULES}, got {self.church_bonus_guests!r}"
            )


@dataclass
class DarmstadtState:
    pending: dict[int, tuple[tuple[int, ...], int, int]] = field(default_factory=dict)
    """Church bonuses of this turn: church node -> (players to pay, church x, church y)."""


class _CountChurchVicinity(Stage):
    """score_begin: count the followers round each church this turn completes."""

    key = "church_count"

    def __init__(self, exp: Darmstadt) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        self.exp.count_vicinities(game)
        return False


class _PayChurchBonus(Stage):
    """score_end: pay the church bonuses counted before the turn's scoring, as part of it."""

    key = "church_bonus"

    def __init__(self, exp: Darmstadt) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        self.exp.pay_bonuses(game)
        return False


class Darmstadt(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = DarmstadtOptions
    tile_files = ("darmstadt.toml",)

    def __init__(self, options: DarmstadtOptions) -> None:
        super().__init__(options)
        self._tiles: tuple[frozenset[int], list[tuple[int, ...]]] | None = None

    def new_state(self) -> DarmstadtState:
        return DarmstadtState()

    def _tile_info(self, game: Game) -> tuple[frozenset[int], list[tuple[int, ...]]]:
        """(tile types with a church, Darmstadtium city segments per tile type); built on first use."""
        if self._tiles is None:
            churches = frozenset(
                t for t, tile in enumerate(game.rules.tiles) if any(s.building == CHURCH for s in tile.segments)
            )
            tagged = [
                tuple(i for i, s in enumerate(tile.segments) if s.kind == CITY and TAG in s.tags)
                for tile in game.rules.tiles
            ]
            self._tiles = (churches, tagged)
        return self._tiles

    # -- the stack -------------------------------------------------------------
    def build_bag(self, game: Game, bag: list[int]) -> list[int]:
        if not self.options.remove_base_cloisters:
            return bag
        t = game.rules.tile_index[REMOVED_CLOISTER]
        keep, removed = [], 0
        for x in bag:
            if x == t and removed < REMOVED_COUNT:
                removed += 1
            else:
                keep.append(x)
        return keep

    # -- Darmstadtium ------------------------------------------------------------
    def score_items(self, game: Game, root: int, final: bool, items: list[ScoreItem], counts: list[int]) -> None:
        if final or game.kind[root] != CITY:
            return
        tagged = self._tile_info(game)[1]
        find = game.find
        for k in game.tiles[root]:
            _, _, t, _, base = game.placements[k]
            if any(find(base + i) == root for i in tagged[t]):
                items.append(ScoreItem(TAG, f"Darmstadtium +{BONUS} to the majority", BONUS))
                return

    # -- church bonus ------------------------------------------------------------
    def stages(self) -> list[tuple[str, Stage]]:
        return [("score_begin", _CountChurchVicinity(self)), ("score_end", _PayChurchBonus(self))]

    def count_vicinities(self, game: Game) -> None:
        churches = self._tile_info(game)[0]
        pending = game.ext[KEY].pending
        for root in game.completing:
            if game.kind[root] != BUILDING:
                continue
            x, y, t, _, base = game.placements[game.node_tile[root]]
            if t not in churches or game.rules.tiles[t].segments[root - base].building != CHURCH:
                continue
            counts = [0] * game.num_players
            for node, player in game.followers.items():
                fx, fy = game.placements[game.node_tile[node]][:2]
                if abs(fx - x) <= 1 and abs(fy - y) <= 1:
                    counts[player] += 1
            for groot, owners in game.guests.items():
                if self._guests_nearby(game, game.find(groot), root, x, y):
                    for player in owners:
                        counts[player] += 1
            best = max(counts)
            if best:
                pending[root] = (tuple(p for p, c in enumerate(counts) if c == best), x, y)

    def _guests_nearby(self, game: Game, feature: int, church: int, x: int, y: int) -> bool:
        """Whether followers sent onto ``feature`` stand in the vicinity of the church at (x, y)."""
        if feature == church:
            return True
        if self.options.church_bonus_guests == "church":
            return False
        return any(abs(fx - x) <= 1 and abs(fy - y) <= 1 for fx, fy in game.feature_tiles(feature))

    def on_completed(self, game: Game, root: int, kind: int, size: int) -> None:
        if self.options.church_bonus_unoccupied or kind != BUILDING:
            return
        if root not in game.occupants and root not in game.guests:
            game.ext[KEY].pending.pop(root, None)

    def pay_bonuses(self, game: Game) -> None:
        st: DarmstadtState = game.ext[KEY]
        for root, (players, x, y) in st.pending.items():
            if root not in game.completed:  # an expansion stopped its completion after the count
                continue
            for p in players:
                game.award(
                    p, BONUS, [ScoreItem(BONUS_KIND, f"church at ({x},{y}): most followers nearby +{BONUS}", BONUS)]
                )
        st.pending.clear()
