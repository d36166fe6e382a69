"""The Count of Carcassonne's rules: the City of Carcassonne as the start layout, its quarters and the Count.

Contract (rules: ``docs/rules/count.md``; data: ``data/tiles/count.toml``)
-----------------------------------------------------------------------
* ``setup`` (``REPLACES_START``): the 12 tiles ``CO1`` .. ``CO12`` as one block at
  x=-2..1, y=-1..1 (JCZ coordinates; ``CO7`` is at (0, 0)), unrotated, none drawn.
  The Count starts on the castle.  Every field of the block touches the City of
  Carcassonne, which counts as one completed city for such a field
  (``field_cities``) and for the King (``extra_completed``).
* Quarters, indices 0..3: ``castle`` (-> cities), ``market`` (-> fields, only at
  game end), ``blacksmith`` (-> roads), ``cathedral`` (-> cloisters, shrines and
  churches).  Followers in them are held off the board (``followers_held``).
* Phases (decision stages; ``game.player`` is the deciding player, who may not be
  the turn's player):

  - ``count_leave`` (``before_score``): when the placed tile completed features,
    players move followers one by one from the matching quarter into a feature
    of ``game.completing`` (``CountSend``) or pass; the player left of the active
    player first, clockwise, the active player last (option ``leave_order``, O1);
    a player may move several.  Only occupied features receive followers (option
    ``only_occupied``, O2).  The Count's quarter cannot be left.  Moved followers
    are the core's *guests* of the feature (``Game.add_guest``): they count for
    the majority and return to the supply when it scores.
  - ``count_deploy`` (``after_score``): if the points scored because of this
    turn's placement (from the placement to the end of the turn's scoring, the
    ``score_end`` anchor included: the Darmstadt church bonus counts) gave at
    least one opponent 1 point or more and the active player 0, the active
    player may put one follower from the supply into any quarter
    (``CountDeploy``) or pass;
  - ``count_move`` (``after_score``): after a deployment, the active player may
    move the Count to another quarter (``CountMove``) or pass.
  - ``count_final`` (``before_final``): one movement round before final scoring:
    starting left of the last active player, players in turn move one follower
    at a time into a matching incomplete feature or field (``market_only``: only
    market -> field; option ``final_scoring``, O3) until every player has passed
    (JCZ).  Followers still in a quarter score nothing.

State: ``game.ext["count"]``, a :class:`CountState`.

Action texts: ``count_deploy QUARTER``, ``count_move QUARTER``,
``count_send X,Y SEGMENT`` (any tile and segment name of the target feature;
legal actions name the feature's root segment) and ``pass``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.actions import Action, IllegalActionError, Pass
from ...core.events import Event
from ...core.expansion import ConfigError, Expansion
from ...core.stages import Stage
from ...core.tiles import BUILDING, CITY, FIELD, ROAD

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

KEY = "count"
QUARTERS = ("castle", "market", "blacksmith", "cathedral")
CASTLE, MARKET, BLACKSMITH, CATHEDRAL = range(4)
QUARTER_OF_KIND = {CITY: CASTLE, ROAD: BLACKSMITH, FIELD: MARKET}  # a building's quarter depends on its building
CATHEDRAL_BUILDINGS = frozenset({"cloister", "shrine", "church"})
CITY_TAG = "city_of_carcassonne"
BLOCK_X, BLOCK_Y = -2, -1  # the block's north-west tile, CO1 (JCZ coordinates)
LEAVE_ORDERS = ("active_last", "active_first")
FINAL_SCORINGS = ("any_district", "market_only")


# ------------------------------------------------------------------ options
@dataclass(frozen=True)
class CountOptions:
    """Rule variants of the Count of Carcassonne (defaults: C1 rules, JCZ where they are silent)."""

    only_occupied: bool = True
    """O2: followers may only be moved into features that are occupied (so are being scored)."""
    final_scoring: str = "any_district"
    """O3: at game end "any_district" (C1: every quarter into matching features) or "market_only" (C2)."""
    leave_order: str = "active_last"
    """O1: who moves first out of the quarters: "active_last" (left of the active player first, JCZ)
    or "active_first" (the active player first, then clockwise)."""

    def validate(self) -> None:
        if self.final_scoring not in FINAL_SCORINGS:
            raise ConfigError(f"option count.final_scoring must be one of {FINAL_SCORINGS}, got {self.final_scoring!r}")
        if self.leave_order not in LEAVE_ORDERS:
            raise ConfigError(f"option count.leave_order must be one of {LEAVE_ORDERS}, got {self.leave_order!r}")


# ------------------------------------------------------------------ actions
def _quarter_index(text: str, what: str) -> int:
    if text not in QUARTERS:
        raise IllegalActionError(f"{what}: unknown quarter {text!r}; quarters are {', '.join(QUARTERS)}")
    return QUARTERS.index(text)


@dataclass(frozen=True, slots=True)
class CountDeploy(Action):
    """Put a follower from the supply into quarter ``quarter`` (0 castle, 1 market, 2 blacksmith, 3 cathedral)."""

    quarter: int

    def to_text(self) -> str:
        return f"count_deploy {QUARTERS[self.quarter]}"


@dataclass(frozen=True, slots=True)
class CountMove(Action):
    """Move the Count to quarter ``quarter``."""

    quarter: int

    def to_text(self) -> str:
        return f"count_move {QUARTERS[self.quarter]}"


@dataclass(frozen=True, slots=True)
class CountSend(Action):
    """Move a follower from the matching quarter into the feature holding segment ``segment`` of tile (x, y)."""

    x: int
    y: int
    segment: str

    def to_text(self) -> str:
        return f"count_send {self.x},{self.y} {self.segment}"


_SEND_RE = re.compile(r"^count_send\s+(-?\d+)\s*,\s*(-?\d+)\s+(\S+)$")


def _parse_quarter_action(cls: type) -> Any:
    def parse(text: str) -> Action:
        parts = text.split()
        if len(parts) != 2:
            raise IllegalActionError(f"cannot parse {text!r}; expected '{parts[0]} QUARTER' with QUARTER in {QUARTERS}")
        return cls(_quarter_index(parts[1], text))

    return parse


def _parse_send(text: str) -> Action:
    m = _SEND_RE.match(text)
    if not m:
        raise IllegalActionError(f"cannot parse {text!r}; expected 'count_send X,Y SEGMENT', e.g. 'count_send 1,0 c1'")
    return CountSend(int(m.group(1)), int(m.group(2)), m.group(3))


ACTION_PARSERS = {
    "count_deploy": _parse_quarter_action(CountDeploy),
    "count_move": _parse_quarter_action(CountMove),
    "count_send": _parse_send,
}


# -------------------------------------------------------------------- state
@dataclass
class LeaveProgress:
    """Progress of ``count_leave``: the players in moving order, and whose move it is."""

    order: list[int]
    i: int = 0


@dataclass
class FinalProgress:
    """Progress of ``count_final``: who has passed for good, and whose move it is."""

    passed: list[bool]
    cur: int


@dataclass
class CountState:
    """The Count of Carcassonne's state in one game (``game.ext["count"]``)."""

    quarters: list[list[int]] = field(default_factory=list)
    """``quarters[q][p]``: followers of player ``p`` in quarter ``q`` (castle, market, blacksmith, cathedral)."""
    count: int = CASTLE
    """The quarter the Count stands on."""
    city_fields: list[int] = field(default_factory=list)
    """Field nodes of the block that touch the City of Carcassonne."""
    scores_before: list[int] | None = None
    """Scores when the turn's tile was placed (None before the first placement, and once the
    deployment check has read it)."""
    leave: LeaveProgress | None = None
    may_move_count: bool = False
    """The active player deployed a follower this turn and may move the Count."""
    final: FinalProgress | None = None
    last_active: int = -1
    """The player of the last turn (the end-of-game moves start left of them)."""


# ------------------------------------------------------------------- events
@dataclass(frozen=True, slots=True)
class FollowerToQuarter(Event):
    """A player put a follower from the supply into a quarter of Carcassonne."""

    player: int
    quarter: str


@dataclass(frozen=True, slots=True)
class CountMoved(Event):
    """The Count moved from one quarter to another."""

    previous: str
    quarter: str


@dataclass(frozen=True, slots=True)
class FollowerFromQuarter(Event):
    """A follower left a quarter for a feature (named by one of its tiles and segments)."""

    player: int
    quarter: str
    x: int
    y: int
    segment: str
    kind: str
    final: bool


# ------------------------------------------------------------------- stages
class LeaveStage(Stage):
    """``count_leave``: followers leave their quarters for the features this turn completed."""

    name = "count_leave"

    def __init__(self, exp: CountOfCarcassonne) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        st: CountState = game.ext[KEY]
        if st.leave is None:
            if not game.completing or not any(any(q) for q in st.quarters):
                return False
            n, tp = game.num_players, game.turn_player
            if self.exp.options.leave_order == "active_last":
                order = [(tp + 1 + i) % n for i in range(n)]
            else:
                order = [(tp + i) % n for i in range(n)]
            st.leave = LeaveProgress(order)
        return self._advance(game)

    def _advance(self, game: Game) -> bool:
        st: CountState = game.ext[KEY]
        lv = st.leave
        if lv is None:  # pragma: no cover - an engine bug, not user input (a real check: python -O keeps it)
            raise RuntimeError("count_leave: the stage runs without its progress record")
        targets = self.exp.leave_targets(game)
        while lv.i < len(lv.order):
            p = lv.order[lv.i]
            if self.exp.sends(game, p, targets):
                game.player = p
                return True
            lv.i += 1
        st.leave = None
        game.player = game.turn_player
        return False

    def apply(self, game: Game, action: Action) -> bool:
        st: CountState = game.ext[KEY]
        if type(action) is Pass:
            if st.leave is None:  # pragma: no cover - an engine bug, not user input
                raise RuntimeError("count_leave: a decision without the stage's progress record")
            st.leave.i += 1
        elif type(action) is CountSend:
            self.exp.send(game, action, self.exp.leave_targets(game), final=False)
        else:
            raise IllegalActionError(f"the {self.name} phase needs count_send or pass, got {action!r}")
        return not self._advance(game)

    def legal_actions(self, game: Game) -> list[Action]:
        return [*self.exp.sends(game, game.player, self.exp.leave_targets(game)), Pass()]


class DeployStage(Stage):
    """``count_deploy``: the active player, having scored nothing while an opponent scored, may enter a quarter."""

    name = "count_deploy"

    def enter(self, game: Game) -> bool:
        st: CountState = game.ext[KEY]
        tp = game.turn_player
        st.last_active = tp
        before, st.scores_before = st.scores_before, None
        if before is None or game.supply[tp] <= 0:
            return False
        gain = [now - then for now, then in zip(game.scores, before, strict=True)]
        if gain[tp] == 0 and any(g >= 1 for p, g in enumerate(gain) if p != tp):
            game.player = tp
            return True
        return False

    def apply(self, game: Game, action: Action) -> bool:
        st: CountState = game.ext[KEY]
        if type(action) is CountDeploy:
            q = action.quarter
            if not (isinstance(q, int) and 0 <= q < 4):
                raise IllegalActionError(f"quarter must be 0..3 ({', '.join(QUARTERS)}), got {q!r}")
            p = game.player
            game.take_follower(p)
            st.quarters[q][p] += 1
            st.may_move_count = True
            game.emit(FollowerToQuarter(p, QUARTERS[q]))
        elif type(action) is not Pass:
            raise IllegalActionError(f"the {self.name} phase needs count_deploy or pass, got {action!r}")
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        return [*(CountDeploy(q) for q in range(4)), Pass()]


class MoveStage(Stage):
    """``count_move``: after a deployment the active player may move the Count to another quarter."""

    name = "count_move"

    def enter(self, game: Game) -> bool:
        if game.ext[KEY].may_move_count:
            game.player = game.turn_player
            return True
        return False

    def apply(self, game: Game, action: Action) -> bool:
        st: CountState = game.ext[KEY]
        if type(action) is CountMove:
            q = action.quarter
            if not (isinstance(q, int) and 0 <= q < 4) or q == st.count:
                raise IllegalActionError(
                    f"the Count is on the {QUARTERS[st.count]}; move him to another quarter or pass, got {q!r}"
                )
            game.emit(CountMoved(QUARTERS[st.count], QUARTERS[q]))
            st.count = q
        elif type(action) is not Pass:
            raise IllegalActionError(f"the {self.name} phase needs count_move or pass, got {action!r}")
        st.may_move_count = False
        return True

    def legal_actions(self, game: Game) -> list[Action]:
        c = game.ext[KEY].count
        return [*(CountMove(q) for q in range(4) if q != c), Pass()]


class FinalStage(Stage):
    """``count_final``: before final scoring, round-robin moves out of the quarters until everyone passes."""

    name = "count_final"

    def __init__(self, exp: CountOfCarcassonne) -> None:
        self.exp = exp

    def enter(self, game: Game) -> bool:
        st: CountState = game.ext[KEY]
        if st.final is None:
            if not any(any(q) for q in st.quarters):
                return False
            n = game.num_players
            st.final = FinalProgress([False] * n, (st.last_active + 1) % n)
        return self._advance(game)

    def _advance(self, game: Game) -> bool:
        st: CountState = game.ext[KEY]
        fs = st.final
        if fs is None:  # pragma: no cover - an engine bug, not user input
            raise RuntimeError("count_final: the stage runs without its progress record")
        n = game.num_players
        targets = self.exp.final_targets(game)
        for _ in range(n):
            p = fs.cur
            if not fs.passed[p]:
                if self.exp.sends(game, p, targets):
                    game.player = p
                    return True
                fs.passed[p] = True
            fs.cur = (p + 1) % n
        st.final = None
        game.player = game.turn_player
        return False

    def apply(self, game: Game, action: Action) -> bool:
        fs = game.ext[KEY].final
        if fs is None:  # pragma: no cover - an engine bug, not user input
            raise RuntimeError("count_final: a decision without the stage's progress record")
        p = game.player
        if type(action) is Pass:
            fs.passed[p] = True
        elif type(action) is CountSend:
            self.exp.send(game, action, self.exp.final_targets(game), final=True)
        else:
            raise IllegalActionError(f"the {self.name} phase needs count_send or pass, got {action!r}")
        fs.cur = (p + 1) % game.num_players
        return not self._advance(game)

    def legal_actions(self, game: Game) -> list[Action]:
        return [*self.exp.sends(game, game.player, self.exp.final_targets(game)), Pass()]


# ---------------------------------------------------------------- expansion
class CountOfCarcassonne(Expansion):
    KEY = KEY
    Options = CountOptions
    tile_files = ("count.toml",)
    REQUIRES = ("base",)
    REPLACES_START = True
    action_parsers = ACTION_PARSERS

    def new_state(self) -> CountState:
        return CountState()

    # -------------------------------------------------------------- setup
    def setup(self, game: Game) -> None:
        st: CountState = game.ext[KEY]
        tiles = game.rules.tiles
        for k in range(12):
            x, y = BLOCK_X + k % 4, BLOCK_Y + k // 4
            tid = f"CO{k + 1}"
            game.place_fixed(tid, x, y, 0)
            tile = tiles[game.rules.tile_index[tid]]
            for i, seg in enumerate(tile.segments):
                if CITY_TAG in seg.tags:
                    st.city_fields.append(game.node_of(x, y, i))
        st.quarters = [[0] * game.num_players for _ in QUARTERS]
        st.count = CASTLE

    def after_placement(self, game: Game, x: int, y: int) -> None:
        # the deployment's trigger counts every point scored because of this placement
        game.ext[KEY].scores_before = game.scores[:]

    def stages(self) -> list[tuple[str, Stage]]:
        return [
            ("before_score", LeaveStage(self)),
            ("after_score", DeployStage()),
            ("after_score", MoveStage()),
            ("before_final", FinalStage(self)),
        ]

    # ------------------------------------------------------------ scoring
    def field_cities(self, game: Game, root: int) -> int:
        find = game.find
        return 1 if any(find(n) == root for n in game.ext[KEY].city_fields) else 0

    def extra_completed(self, game: Game, kind: int) -> int:
        return 1 if kind == CITY else 0

    def followers_held(self, game: Game) -> list[int]:
        quarters = game.ext[KEY].quarters
        return [sum(q[p] for q in quarters) for p in range(game.num_players)]

    # ------------------------------------------------------ moving followers
    @staticmethod
    def quarter_of(game: Game, root: int) -> int | None:
        """The quarter whose followers may go to feature ``root`` (None: none may)."""
        kind = game.kind[root]
        if kind == BUILDING:
            x, y, t, _, base = game.placements[game.node_tile[root]]
            if game.rules.tiles[t].segments[root - base].building in CATHEDRAL_BUILDINGS:
                return CATHEDRAL
            return None
        return QUARTER_OF_KIND.get(kind)

    def _occupied(self, game: Game, root: int) -> bool:
        return root in game.occupants or root in game.guests

    def leave_targets(self, game: Game) -> dict[int, int]:
        """Features completed this turn that may receive followers: root -> quarter."""
        out: dict[int, int] = {}
        for r in game.completing:
            root = game.find(r)
            q = self.quarter_of(game, root)
            if q is None or q == MARKET:
                continue
            if self.options.only_occupied and not self._occupied(game, root):
                continue
            out[root] = q
        return out

    def final_targets(self, game: Game) -> dict[int, int]:
        """Incomplete features and fields that may receive followers at game end: root -> quarter."""
        if self.options.only_occupied:
            roots = set(game.occupants) | set(game.guests)
        else:
            roots = {i for i, p in enumerate(game.parent) if p == i}
        market_only = self.options.final_scoring == "market_only"
        out: dict[int, int] = {}
        for root in sorted(roots):
            if root in game.completed:
                continue
            q = self.quarter_of(game, root)
            if q is None or (market_only and q != MARKET):
                continue
            out[root] = q
        return out

    def sends(self, game: Game, player: int, targets: dict[int, int]) -> list[CountSend]:
        """The moves ``player`` may make into ``targets`` (the Count's quarter cannot be left)."""
        st: CountState = game.ext[KEY]
        quarters, count = st.quarters, st.count
        out = []
        for root, q in targets.items():
            if q != count and quarters[q][player] > 0:
                x, y, t, _, base = game.placements[game.node_tile[root]]
                out.append(CountSend(x, y, game.rules.tiles[t].segments[root - base].name))
        return out

    def send(self, game: Game, action: CountSend, targets: dict[int, int], final: bool) -> None:
        """Validate and make one move out of a quarter (the state is untouched if it is illegal)."""
        st: CountState = game.ext[KEY]
        p = game.player
        k = game.board.get((action.x, action.y))
        if k is None:
            raise IllegalActionError(f"{action.to_text()!r}: no tile at ({action.x},{action.y})")
        _, _, t, _, base = game.placements[k]
        tile = game.rules.tiles[t]
        try:
            seg = tile.segment_index(action.segment)
        except KeyError as exc:
            raise IllegalActionError(f"{action.to_text()!r}: {exc.args[0]}") from None
        root = game.find(base + seg)
        q = targets.get(root)
        if q is None:
            raise IllegalActionError(
                f"{action.to_text()!r}: that feature cannot receive a follower from Carcassonne now; "
                f"legal: {[a.to_text() for a in self.sends(game, p, targets)] or 'none'}"
            )
        if q == st.count:
            raise IllegalActionError(f"{action.to_text()!r}: the Count blocks the {QUARTERS[q]}")
        if st.quarters[q][p] <= 0:
            raise IllegalActionError(f"{action.to_text()!r}: player {p} has no follower in the {QUARTERS[q]}")
        st.quarters[q][p] -= 1
        game.add_guest(root, p)
        seg_t = tile.segments[seg]
        game.emit(FollowerFromQuarter(p, QUARTERS[q], action.x, action.y, action.segment, seg_t.kind_name, final))
