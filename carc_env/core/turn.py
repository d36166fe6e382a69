"""Turn flow: the bag and the draw, the decision stages, who decides, and ``apply``.

Owns (see :data:`carc_env.core.state.STATE`): ``draw_order``, ``_bag``,
``current_tile``, ``_masks``, ``_follower_spots``, ``phase``, ``player``,
``turn_player``, ``turn``, ``ending``, ``over``, ``_stages``, ``_stage_i``, ``history``,
``_history_k``; and the core's turn stages (:class:`DrawStage`,
:class:`TileStage`, :class:`FollowerStage`, :class:`EndTurnStage`).

A turn is the rule set's sequence of stages (:func:`carc_env.core.stages.build_stages`):
draw a tile (discarding tiles that fit nowhere), the tile decision, the
follower decision, the expansions' stages, scoring
(:mod:`carc_env.core.scoring`), the end of the turn (the next player, unless
a ``next_player`` hook says otherwise).  :meth:`TurnFlow.apply` hands the
deciding player's action to the current decision stage, then runs the
automatic stages until the next decision; when the bag is empty the final
stages run once and the game is over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .actions import Action, IllegalActionError, Pass, PlaceFollower, PlaceTile, checked_action
from .events import Event, FollowerPlaced, TileDiscarded, TileDrawn, TilePlaced
from .stages import Stage

if TYPE_CHECKING:  # pragma: no cover
    from .config import RuleSet
    from .game import Game

_ROTATIONS_SET = np.array([bin(m & 15).count("1") for m in range(256)], dtype=np.int64)
"""Rotation mask (bit r: rotation r is legal) -> how many rotations it allows."""


class TurnFlow:
    """The turn half of :class:`~carc_env.core.Game` (a mixin: the fields live on the game)."""

    rules: RuleSet
    num_players: int
    rng: np.random.Generator
    events: list[Event]
    placements: list[tuple[int, int, int, int, int]]
    board: dict[tuple[int, int], int]
    supply: list[int]
    occupants: dict[int, list[int]]

    if TYPE_CHECKING:  # declarations only: the Game composes the real methods

        def find(self, x: int) -> int: ...
        def union(self, a: int, b: int) -> int: ...
        def put_tile(self, t: int, x: int, y: int, r: int, printed: bool = False) -> int: ...
        def frontier_slot(self, x: int, y: int) -> int | None: ...
        def frontier_size(self) -> int: ...
        def frontier_cells(self) -> tuple[np.ndarray, np.ndarray]: ...
        def placement_masks(self, t: int) -> np.ndarray: ...
        def frontier_placements(self, masks: np.ndarray) -> np.ndarray: ...
        def deploy_follower(self, node: int, player: int) -> None: ...
        def parse_action(self, text: str) -> Action: ...
        def action_text(self, action: Action, placed: int | None = None) -> str: ...

    def reset_turn(self) -> None:
        """Before setup: the first player's turn, nothing drawn, nothing applied."""
        self.turn_player = 0
        self.player = 0
        self.turn = 0
        self.over = False
        self.phase = "tile"
        self.history: list[Action] = []
        self._history_k: list[int] = []  # placements made when each action was applied
        self._masks = np.zeros(0, dtype=np.uint8)
        self._follower_spots: list[int] = []
        self.ending = False  # True once the last tile is played: the final stages run
        self.current_tile = -1
        self._stages: list[Stage] = self.rules.stages  # the final stages once ending
        self._stage_i = 0

    def deal(self, bag: list[int]) -> None:
        """The tiles to draw, first drawn first (setup)."""
        self.draw_order = [self.rules.tiles[t].id for t in bag]
        self._bag = bag[::-1]  # next tile at the end

    def start(self) -> None:
        """Run the first turn's automatic stages up to the first decision (end of setup)."""
        self._run()
        self.events = []  # setup's draws are not the first action's events

    # ------------------------------------------------------------------ the bag
    def take_from_bag(self) -> str | None:
        """Take the next tile out of the bag (for ``setup_from_bag``: a map's start squares); its id,
        or None when the bag is empty."""
        return self.rules.tiles[self._bag.pop()].id if self._bag else None

    @property
    def bag_size(self) -> int:
        """Tiles left to draw (not counting the drawn tile)."""
        return len(self._bag)

    def remaining_counts(self) -> np.ndarray:
        """Tiles left to draw per tile type (int array in RuleSet.tiles order)."""
        return np.bincount(np.asarray(self._bag, dtype=np.int64), minlength=len(self.rules.tiles))

    def redeal(self, rng: np.random.Generator) -> None:
        """Shuffle the tiles still to draw into a new random order (a determinisation for search).

        The new order is drawn uniformly from the orders a player cannot tell
        from the real one: the same remaining tiles, reordered by the
        expansions' ``order_unseen`` hooks (the river's tiles stay first).  The
        drawn tile, the board and everything else are unchanged, and
        ``draw_order`` is updated so a record of the game still replays.  Only
        for copies made with :meth:`clone`: it changes the draws to come.
        """
        order = self._bag[::-1]
        rng.shuffle(order)
        hooks = self.rules.h_order_unseen
        for hook in hooks:
            order = hook(self, order)  # self is the Game
        if hooks and sorted(order) != sorted(self._bag):
            raise ValueError("an order_unseen hook changed which tiles are left to draw")
        drawn = len(self.draw_order) - len(self._bag)
        tiles = self.rules.tiles
        self.draw_order = self.draw_order[:drawn] + [tiles[t].id for t in order]
        self._bag = order[::-1]
        self.rng = np.random.default_rng(rng.integers(2**63))

    # ------------------------------------------------------------------ what is legal
    @property
    def tile_id(self) -> str | None:
        """Id of the drawn tile, or None."""
        return self.rules.tiles[self.current_tile].id if self.current_tile >= 0 else None

    def legal_tile_placements(self) -> np.ndarray:
        """Legal placements of the drawn tile as an int array of rows (x, y, rotation)."""
        if self.phase != "tile":
            return np.zeros((0, 3), dtype=np.int32)
        return self.frontier_placements(self._masks)

    def frontier(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Frontier cells (x, y) and, while in the tile phase, their legal-rotation bitmasks."""
        xs, ys = self.frontier_cells()
        masks = self._masks if self.phase == "tile" else np.zeros(self.frontier_size(), dtype=np.uint8)
        return xs.copy(), ys.copy(), masks.copy()

    def count_legal_placements(self, distinct: bool = False) -> int:
        """Number of legal placements of the drawn tile; ``distinct`` counts symmetric rotations once."""
        if self.phase != "tile":
            return 0
        m: np.ndarray = self._masks
        if distinct:
            m = m & self.rules.tiles[self.current_tile].distinct_rotations
        return int(_ROTATIONS_SET[m].sum())

    def legal_follower_spots(self) -> list[int]:
        """Segments of the placed tile a follower may go on (Pass is always legal too)."""
        return list(self._follower_spots) if self.phase == "follower" else []

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        return self._stages[self._stage_i].legal_actions(self)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the one mutator
    def apply(self, action: Action | str) -> list[Event]:
        """Apply the deciding player's action; return the events it caused."""
        if self.over:
            raise IllegalActionError("the game is over; no action is legal")
        action = checked_action(self.parse_action(action) if isinstance(action, str) else action)
        stage = self._stages[self._stage_i]
        done = stage.apply(self, action)  # type: ignore[arg-type]  # self is the Game
        self.history.append(action)
        self._history_k.append(len(self.placements))
        if done:
            self._next_stage()
        self._run()
        ev = self.events
        self.events = []
        return ev

    def history_texts(self) -> list[str]:
        """Every action applied so far, in text notation."""
        return [self.action_text(a, k) for a, k in zip(self.history, self._history_k, strict=True)]

    def _next_stage(self) -> None:
        self._stage_i += 1
        if self._stage_i == len(self._stages) and not self.ending:
            self._stage_i = 0

    def _run(self) -> None:
        game: Game = self  # type: ignore[assignment]  # the mixin is the Game
        while not self.over:
            stage = self._stages[self._stage_i]
            if stage.enter(game):
                if not self.over:
                    self.phase = stage.name
                return
            self._next_stage()

    # ------------------------------------------------------------------ the core's stages' work
    def _draw(self) -> None:
        rules = self.rules
        game: Game = self  # type: ignore[assignment]
        while True:
            if not self._bag:
                self._begin_ending()
                return
            t = self._bag.pop()
            self.events.append(TileDrawn(self.turn_player, rules.tiles[t].id))
            for hook in rules.h_after_draw:
                hook(game, t)
            masks = self.placement_masks(t)
            reason = "no legal placement"
            for veto in rules.h_veto:
                had = masks.any()
                why = veto(game, t, masks)
                if why and had and not masks.any():
                    reason = why
            if masks.any():
                self.current_tile = t
                self._masks = masks
                self.player = self.turn_player
                return
            self.events.append(TileDiscarded(self.turn_player, rules.tiles[t].id, reason))

    def _check_placement(self, x: int, y: int, r: int) -> None:
        """Raise IllegalActionError saying why the drawn tile cannot go to (x, y) in rotation r."""
        tile = self.rules.tiles[self.current_tile]
        if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 0 <= r <= 3:
            raise IllegalActionError(f"rotation must be 0..3, got {r!r}")
        slot = self.frontier_slot(x, y)
        if slot is None:
            where = "is already taken" if (x, y) in self.board else "touches no placed tile"
            raise IllegalActionError(f"cannot place {tile.id} at ({x},{y}): the cell {where}")
        if not (int(self._masks[slot]) >> r) & 1:
            fits = [q for q in range(4) if (int(self._masks[slot]) >> q) & 1]
            edges = "".join(tile.edges[(s - r) % 4] for s in range(4))
            if (int(self.placement_masks(self.current_tile)[slot]) >> r) & 1:
                why = f"its edges {edges} (N E S W) fit, but {self._vetoed_by(self.current_tile, slot, r)}"
                rest = f"; rotations allowed here: {fits}" if fits else "; no rotation is allowed in this cell"
            else:
                why = f"its edges {edges} (N E S W) do not fit there"
                rest = f"; rotations that fit: {fits}" if fits else "; no rotation fits this cell"
            raise IllegalActionError(
                f"cannot place {tile.id} at ({x},{y}) in rotation {r}: {why}{rest} (see legal_actions())"
            )

    def _vetoed_by(self, t: int, slot: int, r: int) -> str:
        """Which expansion's ``placement_veto`` refuses rotation ``r`` of tile type ``t`` at frontier ``slot``, in words."""
        game: Game = self  # type: ignore[assignment]
        for veto in self.rules.h_veto:
            masks = self.placement_masks(t)  # a fresh copy for each veto
            why = veto(game, t, masks)
            if not (int(masks[slot]) >> r) & 1:
                exp = veto.__self__
                return f"expansion {exp.KEY!r} forbids it: {exp.veto_reason or why or 'its placement rule'}"
        return "an expansion's placement rule forbids it"  # pragma: no cover - only vetoes clear fitting bits

    def _place_tile(self, x: int, y: int, r: int) -> None:
        t = self.current_tile
        slot = self.frontier_slot(x, y)
        if slot is None or type(r) is not int or not 0 <= r <= 3 or not (int(self._masks[slot]) >> r) & 1:
            self._check_placement(x, y, r)  # raises, saying why
        x, y, r = int(x), int(y), int(r)
        game: Game = self  # type: ignore[assignment]
        links = [pair for hook in self.rules.h_placement_links for pair in hook(game, t, x, y, r)]
        base = self.put_tile(t, x, y, r)
        for segment, node in links:
            self.union(base + segment, node)
        self.current_tile = -1
        self.events.append(TilePlaced(self.player, self.rules.tiles[t].id, x, y, r))
        for hook in self.rules.h_after_placement:
            hook(game, x, y)

    def _compute_follower_spots(self) -> list[int]:
        p = self.player
        if self.supply[p] <= 0 or not self.placements:
            return []
        _, _, t, _, base = self.placements[-1]
        occ = self.occupants
        spots = [i for i in self.rules.tile_infos[t].spots if self.find(base + i) not in occ]
        for hook in self.rules.h_follower_spots:
            spots = hook(self, spots)  # self is the Game
        return spots

    def _place_follower(self, segment: int) -> None:
        if segment not in self._follower_spots:
            tile = self.rules.tiles[self.placements[-1][2]]
            names = [tile.segments[i].name for i in self._follower_spots]
            what = tile.segments[segment].name if 0 <= segment < len(tile.segments) else f"#{segment}"
            raise IllegalActionError(
                f"cannot put a follower on {what} of {tile.id}: free features are {names} (or pass)"
            )
        x, y, t, _, base = self.placements[-1]
        p = self.player
        self.deploy_follower(base + segment, p)
        seg = self.rules.tiles[t].segments[segment]
        self.events.append(FollowerPlaced(p, x, y, seg.name, seg.kind_name))

    def _end_turn(self) -> None:
        nxt = (self.turn_player + 1) % self.num_players
        for hook in self.rules.h_next_player:
            v = hook(self, nxt)  # self is the Game
            if v is not None:
                nxt = v
        self.turn_player = nxt
        self.player = nxt
        self.turn += 1

    def end_here(self) -> None:
        """End the game at this tile decision as if the bag were empty (a search's cut-short play-out, never
        a rule): the drawn tile and the tiles left are not played; the final stages run, the plug-ins'
        decisions before final scoring included (the game may wait on one of them).  Only for copies made
        with :meth:`clone`."""
        if self.over or self.phase != "tile":
            raise ValueError(f"end_here: only at a tile decision (phase {self.phase!r}, over {self.over})")
        self._bag = []
        self._begin_ending()
        self._next_stage()
        self._run()

    def _begin_ending(self) -> None:
        """The last tile has been played: switch to the final stages (before_final, then scoring)."""
        self.current_tile = -1
        self.ending = True
        self._stages = self.rules.final_stages
        self._stage_i = -1  # _run's _next_stage moves to the first final stage
        self._masks = np.zeros(0, dtype=np.uint8)


class DrawStage(Stage):
    """Draw the turn's tile (tiles that fit nowhere are discarded); the final stages start when the bag is empty."""

    def enter(self, game: Game) -> bool:
        game._draw()
        return False


class TileStage(Stage):
    """The tile decision: where the drawn tile goes."""

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


class EndTurnStage(Stage):
    """The next player's turn (``next_player`` hooks may choose another)."""

    def enter(self, game: Game) -> bool:
        game._end_turn()
        return False


__all__ = ["DrawStage", "EndTurnStage", "FollowerStage", "TileStage", "TurnFlow"]
