"""Scoring: which features a turn completes, what a feature is worth, who gets it, final scoring.

Owns (see :data:`carc_env.core.state.STATE`): ``completing``, ``scores``;
and the core's scoring stages (:class:`DetectCompletionsStage`,
:class:`ScoreStage`, :class:`FinalScoreStage`), which the turn
(:mod:`carc_env.core.stages`) places in its sequence.

A turn's scoring: after the follower decision the features the placed tile
completed are collected into ``completing`` (closed cities and roads,
buildings that reached their target, what the ``extra_completions`` hooks
add, minus what ``blocks_completion`` holds back); stages of expansions may
act on them; then each is completed (``complete_feature``) and, if occupied,
scored for its majority (``score_feature``: itemised ``ScoreItem`` values,
``score_override`` / ``score_items`` hooks).  At the end every feature still
holding followers is scored (roads, cities, buildings, then fields), then the
expansions' final scoring.  Points outside a majority go through ``award``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .events import Event, FeatureCompleted, FeatureScored, GameOver, PointsAwarded, ScoreItem
from .stages import Stage
from .tiles import BUILDING, CITY, FIELD, KIND_NAMES, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from .config import RuleSet
    from .game import Game

GAME_OVER = "game_over"
"""The phase of a finished game."""


class Scoring:
    """The scoring half of :class:`~carc_env.core.Game` (a mixin: the fields live on the game)."""

    rules: RuleSet
    num_players: int
    events: list[Event]
    placements: list[tuple[int, int, int, int, int]]
    parent: list[int]
    kind: list[int]
    node_tile: list[int]
    open: list[int]
    pennants: list[int]
    tiles: dict[int, set[int]]
    adjacent_cities: dict[int, set[int]]
    completed: set[int]
    occupants: dict[int, list[int]]
    guests: dict[int, list[int]]
    building_neighbours: dict[int, int]
    current_tile: int
    over: bool
    phase: str

    # what scoring reads of the features and the board (carc_env.core.features / board)
    if TYPE_CHECKING:  # declarations only: the Game composes the real methods

        def find(self, x: int) -> int: ...
        def feature_tiles(self, root: int) -> list[tuple[int, int]]: ...
        def follower_counts(self, root: int) -> list[int]: ...
        def remove_followers(self, root: int) -> list[int]: ...
        def take_completed_buildings(self) -> list[int]: ...

    def reset_scoring(self) -> None:
        self.scores = [0] * self.num_players
        self.completing: list[int] = []

    def _detect_completions(self) -> None:
        """Collect the features the placed tile completed into ``self.completing``."""
        self.completing = []
        if not self.placements:
            return
        _, _, t, _, base = self.placements[-1]
        candidates = self.completing
        open_ = self.open
        for i in self.rules.tile_infos[t].scorable:
            root = self.find(base + i)
            if open_[root] == 0 and root not in self.completed and root not in candidates:
                candidates.append(root)
        candidates.extend(self.take_completed_buildings())
        game: Game = self  # type: ignore[assignment]  # the mixin is the Game
        for hook in self.rules.h_extra_completions:
            for root in hook(game):
                if root not in candidates and root not in self.completed:
                    candidates.append(root)
        if self.rules.h_blocks:
            self.completing = [r for r in candidates if not any(block(game, r) for block in self.rules.h_blocks)]

    def _score_completions(self) -> None:
        for root in self.completing:
            self.complete_feature(self.find(root))
        self.completing = []

    def complete_feature(self, root: int) -> None:
        """Mark a feature completed, tell the expansions, and score it if occupied."""
        game: Game = self  # type: ignore[assignment]
        self.completed.add(root)
        kind = self.kind[root]
        size = len(self.tiles[root]) if kind != BUILDING else 1 + self.building_neighbours[root]
        occupied = root in self.occupants or root in self.guests
        self.events.append(FeatureCompleted(self.kind_name(root), size, root, occupied))
        for hook in self.rules.h_on_completed:
            hook(game, root, kind, size)
        if root in self.occupants or root in self.guests:
            if any(defer(game, root) for defer in self.rules.h_defers_scoring):
                return  # scored at the end of the game, its followers stay until then
            self.score_feature(root, final=False)

    def kind_name(self, root: int) -> str:
        """The feature's kind in words: city, road, field, or the building's kind (cloister, shrine ...)."""
        kind = self.kind[root]
        if kind == BUILDING:
            k = self.node_tile[root]
            t = self.placements[k][2]
            return self.rules.tiles[t].segments[root - self.placements[k][4]].building
        return KIND_NAMES[kind]

    def feature_size(self, root: int) -> int:
        """Tiles a city or road counts for scoring: distinct tiles unless an expansion's
        ``feature_size`` hook says otherwise."""
        for hook in self.rules.h_feature_size:
            v = hook(self, root)  # self is the Game
            if v is not None:
                return v
        return len(self.tiles[root])

    def feature_value(self, root: int, final: bool) -> list[ScoreItem]:
        """The itemised value of a feature scored now (completed or at game end)."""
        kind = self.kind[root]
        if kind == CITY:
            n = self.feature_size(root)
            pen = self.pennants[root]
            per = 1 if final else 2
            items = [ScoreItem("tiles", f"{n} city tile{'s' * (n != 1)} x {per}", n * per)]
            if pen:
                items.append(ScoreItem("pennants", f"{pen} pennant{'s' * (pen != 1)} x {per}", pen * per))
            return items
        if kind == ROAD:
            n = self.feature_size(root)
            return [ScoreItem("tiles", f"{n} road tile{'s' * (n != 1)} x 1", n)]
        if kind == BUILDING:
            nb = self.building_neighbours[root]
            name = self.kind_name(root)
            return [ScoreItem(name, f"{name} 1 + {nb} neighbour{'s' * (nb != 1)}", 1 + nb)]
        if kind == FIELD:
            find = self.find
            cities = {find(c) for c in self.adjacent_cities.get(root, ())}
            n = sum(1 for c in cities if c in self.completed)
            for hook in self.rules.h_field_cities:
                n += hook(self, root)  # self is the Game
            return [ScoreItem("cities", f"{n} completed cit{'ies' if n != 1 else 'y'} x 3", 3 * n)]
        raise ValueError(f"node {root} ({KIND_NAMES.get(kind)}) is not scorable")

    def _itemised_value(self, root: int, final: bool, counts: list[int]) -> list[ScoreItem]:
        """The feature's items: an expansion's override, else the core's value and the expansions' items."""
        game: Game = self  # type: ignore[assignment]
        for override in self.rules.h_score_override:
            items = override(game, root, final)
            if items is not None:
                return list(items)
        items = self.feature_value(root, final)
        for hook in self.rules.h_score_items:
            hook(game, root, final, items, counts)
        return items

    def score_feature(self, root: int, final: bool) -> FeatureScored:
        """Score an occupied feature for its majority and return its followers."""
        n = self.num_players
        counts = self.follower_counts(root)
        items = self._itemised_value(root, final, counts)
        value = sum(i.points for i in items)
        best = max(counts)
        winners = tuple(p for p in range(n) if best > 0 and counts[p] == best)
        points = [0] * n
        for p in winners:
            points[p] = value
            self.scores[p] += value
        returned = self.remove_followers(root)
        kind = self.kind[root]
        ev = FeatureScored(
            self.kind_name(root),
            final,
            value,
            tuple(items),
            tuple(points),
            winners,
            tuple(returned),
            tuple(self.feature_tiles(root)) if kind != FIELD else (),
            root,
        )
        self.events.append(ev)
        for hook in self.rules.h_on_scored:
            hook(self, root, kind, final)  # self is the Game
        return ev

    def award(self, player: int, points: int, items: Sequence[ScoreItem], final: bool = False) -> None:
        """Give points outside a feature's majority (expansion bonuses), with an event."""
        self.scores[player] += points
        self.events.append(PointsAwarded(player, points, tuple(items), final))

    def _finish(self) -> None:
        """End-of-game scoring: roads, cities, buildings, then fields, then expansions.

        Every feature still holding followers is scored: the incomplete ones, and completed ones
        whose scoring an expansion deferred to the end (``defers_scoring``)."""
        self.current_tile = -1
        occ = self.occupants.keys() | self.guests.keys()
        roots = [i for i, p in enumerate(self.parent) if p == i and i in occ]
        for kind in (ROAD, CITY, BUILDING, FIELD):
            for root in roots:
                if self.kind[root] != kind:
                    continue
                if root in self.occupants or root in self.guests:
                    self.score_feature(root, final=True)
        for hook in self.rules.h_final_scoring:
            hook(self)  # self is the Game
        best = max(self.scores)
        winners = tuple(p for p, s in enumerate(self.scores) if s == best)
        self.events.append(GameOver(tuple(self.scores), winners))
        self.over = True
        self.phase = GAME_OVER


class DetectCompletionsStage(Stage):
    """Find the features this turn completed (``game.completing``), before anyone scores them."""

    def enter(self, game: Game) -> bool:
        game._detect_completions()
        return False


class ScoreStage(Stage):
    """Complete and score the features in ``game.completing``."""

    def enter(self, game: Game) -> bool:
        game._score_completions()
        return False


class FinalScoreStage(Stage):
    """End-of-game scoring; the game is over afterwards."""

    def enter(self, game: Game) -> bool:
        game._finish()
        return False


__all__ = ["DetectCompletionsStage", "FinalScoreStage", "GAME_OVER", "ScoreStage", "Scoring"]
