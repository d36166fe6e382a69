"""The rules of the toll-roads example.

* Tiles: two ``TL-tollhouse`` (a straight road whose road carries the tag ``toll``).
* When a road with a toll house is completed during the game, the player who
  placed the completing tile collects one toll per toll house on it, whoever
  owns the road: after the turn's scoring (decision phase ``tolls_collect``)
  they either **cash** them (``toll`` points each now) or **bank** them (each
  banked toll pays ``2 * toll`` at the end of the game).
* Option ``toll`` (default 2): points per toll when cashed.

Action texts: ``toll cash``, ``toll bank``.  Event: :class:`TollBanked`; cashed
and banked tolls are paid with ``Game.award`` (items ``"toll"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from carc_env.core.actions import Action, IllegalActionError
from carc_env.core.events import Event, ScoreItem
from carc_env.core.expansion import ConfigError, Expansion
from carc_env.core.stages import Stage
from carc_env.core.tiles import ROAD

if TYPE_CHECKING:
    from carc_env.core.game import Game

KEY = "tolls"
TAG = "toll"
TILE_FILE = str(Path(__file__).with_name("tolls.toml"))  # outside carc_env: an absolute path


@dataclass(frozen=True)
class TollOptions:
    toll: int = 2
    """Points per toll when cashed (a banked toll pays twice that at the end)."""

    def validate(self) -> None:
        if self.toll < 1:
            raise ConfigError(f"option tolls.toll must be at least 1, got {self.toll}")


@dataclass
class TollState:
    """The plug-in's state in one game (``game.ext["tolls"]``)."""

    pending: int = 0
    """Tolls the turn's player collects this turn (not yet cashed or banked)."""
    banked: list[int] = field(default_factory=list)
    """Banked tolls per player."""


@dataclass(frozen=True, slots=True)
class CollectToll(Action):
    """Cash the pending tolls (``bank=False``) or bank them (``bank=True``)."""

    bank: bool

    def to_text(self) -> str:
        return "toll bank" if self.bank else "toll cash"


@dataclass(frozen=True, slots=True)
class TollBanked(Event):
    player: int
    tolls: int


def _parse(text: str) -> Action:
    if text in ("toll cash", "toll bank"):
        return CollectToll(text == "toll bank")
    raise IllegalActionError(f"cannot parse {text!r}; expected 'toll cash' or 'toll bank'")


class CollectStage(Stage):
    """``tolls_collect`` (after the turn's scoring): the turn's player cashes or banks the tolls."""

    name = "tolls_collect"

    def __init__(self, exp: TollRoads) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        if game.ext[KEY].pending:
            game.player = game.turn_player
            return True
        return False

    def apply(self, game: Game, action: Action) -> bool:
        if type(action) is not CollectToll:
            raise IllegalActionError(f"the {self.name} phase needs 'toll cash' or 'toll bank', got {action!r}")
        st: TollState = game.ext[KEY]
        p, n = game.player, st.pending
        if action.bank:
            st.banked[p] += n
            game.emit(TollBanked(p, n))
        else:
            toll = self.exp.options.toll
            game.award(p, n * toll, [ScoreItem(TAG, f"{n} toll{'s' * (n != 1)} x {toll}", n * toll)])
        st.pending = 0
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        return [CollectToll(False), CollectToll(True)]


class TollRoads(Expansion):
    KEY = KEY
    REQUIRES = ("base",)
    Options = TollOptions
    tile_files = (TILE_FILE,)
    action_parsers = {"toll": _parse}

    def new_state(self) -> TollState:
        return TollState()

    def setup(self, game: Game) -> None:
        game.ext[KEY].banked = [0] * game.num_players

    def toll_segments(self, game: Game) -> list[tuple[int, ...]]:
        """Per tile type, its road segments with a toll house (a table kept per rule set)."""
        return game.rules.cache(
            f"{KEY}.segments",
            lambda: [
                tuple(i for i, s in enumerate(t.segments) if s.kind == ROAD and TAG in s.tags) for t in game.rules.tiles
            ],
        )

    def on_completed(self, game: Game, root: int, kind: int, size: int) -> None:
        if kind != ROAD:
            return
        table, find = self.toll_segments(game), game.find
        for k in game.tiles[root]:
            _, _, t, _, base = game.placements[k]
            game.ext[KEY].pending += sum(1 for i in table[t] if find(base + i) == root)

    def stages(self) -> list[tuple[str, Stage]]:
        return [("after_score", CollectStage(self))]

    def final_scoring(self, game: Game) -> None:
        pay = 2 * self.options.toll
        for p, n in enumerate(game.ext[KEY].banked):
            if n:
                game.award(
                    p, n * pay, [ScoreItem(TAG, f"{n} banked toll{'s' * (n != 1)} x {pay}", n * pay)], final=True
                )
