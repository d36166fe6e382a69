"""The stages of a turn.

A turn is a fixed sequence of stages.  An automatic stage (drawing, scoring)
runs inside :meth:`Game.apply`; a decision stage stops the game until the
deciding player acts, and exposes its phase name (``"tile"``,
``"follower"``, and the phases expansions add).  A decision stage may need
several decisions, from several players, before it ends (the Count lets every
player move followers out of Carcassonne): ``apply`` returns False until the
stage is done.

Stages hold no state; whatever they need between decisions lives in the game
(``game.ext[KEY]`` for an expansion), so cloning a game clones it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import Action, IllegalActionError, Pass, PlaceFollower, PlaceTile
from .expansion import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .expansion import Expansion
    from .game import Game

ANCHORS = ("after_tile", "after_follower", "before_score", "after_score", "end_turn", "before_final")
"""Where expansion stages go: in the turn (the first five) or once at game end, before final scoring."""


class Stage:
    name: str = ""
    """Phase name while this stage waits for a decision; "" for automatic stages."""

    def enter(self, game: Game) -> bool:
        """Run the stage; return True if it now waits for a decision."""
        return False

    def apply(self, game: Game, action: Action) -> bool:
        """Apply a decision; return True when the stage is finished."""
        raise IllegalActionError(f"no decision is expected in stage {type(self).__name__}")

    def legal_actions(self, game: Game) -> list[Action]:
        return []


class DrawStage(Stage):
    def enter(self, game: Game) -> bool:
        game._draw()
        return False


class TileStage(Stage):
    name = "tile"

    def enter(self, game: Game) -> bool:
        return not game.over

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is not PlaceTile:
            raise IllegalActionError(f"the {self.name} phase needs a PlaceTile action, got {action!r}")
        game._place_tile(action.x, action.y, action.rotation)
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        return [PlaceTile(int(x), int(y), int(r)) for x, y, r in game.legal_tile_placements()]


class FollowerStage(Stage):
    """Optional follower deployment on the tile just placed.

    Skipped (no decision) when the player has no follower in supply or the
    tile offers no free feature, since passing is then the only choice.
    """

    name = "follower"

    def enter(self, game: Game) -> bool:
        game._follower_spots = game._compute_follower_spots()
        return bool(game._follower_spots)

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is Pass:
            return True
        if type(action) is not PlaceFollower:
            raise IllegalActionError(f"the {self.name} phase needs PlaceFollower or Pass, got {action!r}")
        game._place_follower(action.segment)
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        return [PlaceFollower(s) for s in game._follower_spots] + [Pass()]


class DetectCompletionsStage(Stage):
    """Find the features this turn completed (``game.completing``), before anyone scores them."""

    def enter(self, game: Game) -> bool:
        game._detect_completions()
        return False


class ScoreStage(Stage):
    def enter(self, game: Game) -> bool:
        game._score_completions()
        return False


class FinalScoreStage(Stage):
    def enter(self, game: Game) -> bool:
        game._finish()
        return False


class EndTurnStage(Stage):
    def enter(self, game: Game) -> bool:
        game._end_turn()
        return False


def build_stages(expansions: list[Expansion]) -> tuple[list[Stage], list[Stage]]:
    """The stages of a turn, and the stages run once when the last tile has been played."""
    extra: dict[str, list[Stage]] = {a: [] for a in ANCHORS}
    for exp in expansions:
        for anchor, stage in exp.stages():
            if anchor not in extra:
                raise ConfigError(f"expansion {exp.KEY!r} adds a stage at unknown anchor {anchor!r}; use one of {ANCHORS}")
            extra[anchor].append(stage)
    stages: list[Stage] = [DrawStage(), TileStage(), *extra["after_tile"], FollowerStage(), *extra["after_follower"]]
    stages += [DetectCompletionsStage(), *extra["before_score"], ScoreStage(), *extra["after_score"]]
    stages += [*extra["end_turn"], EndTurnStage()]
    final = [*extra["before_final"], FinalScoreStage()]
    names = [s.name for s in stages + final if s.name]
    if len(names) != len(set(names)):
        raise ConfigError(f"two stages share a phase name: {names}")
    return stages, final
