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

This module holds the :class:`Stage` protocol and the assembly of a rule
set's turn (:func:`build_stages`); the core's own stages live with the work
they do (:mod:`carc_env.core.turn`: draw, tile, follower, end of turn;
:mod:`carc_env.core.scoring`: completions, scoring, final scoring).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from .actions import Action, IllegalActionError
from .expansion import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .expansion import Expansion
    from .game import Game

ANCHORS = (
    "after_tile",
    "after_follower",
    "before_score",
    "score_begin",
    "score_end",
    "after_score",
    "end_turn",
    "before_final",
)
"""Where expansion stages go, in turn order (the last one runs once at game end):

* ``after_tile``: the tile is placed; before the follower decision;
* ``after_follower``: the follower decision is made; completions not yet known;
* ``before_score``: ``game.completing`` holds the features this turn completes; decisions that
  change who stands on them (the Count's followers leaving their quarters);
* ``score_begin``: who stands on those features is final; read what the core's scoring is about
  to change (Darmstadt counts the followers round a church before any is returned);
* (the core scores ``game.completing``)
* ``score_end``: points that are part of this turn's scoring, after the core's (the church bonus);
* ``after_score``: reactions to the turn's scoring, now complete (the Count's deployment looks at
  every point the turn's placement scored);
* ``end_turn``: last, before the next player's turn;
* ``before_final``: once, when the last tile has been played, before final scoring.
"""


class Stage:
    """One step of a turn.  Subclass it for an expansion's stage (see the module docstring).

    Ordering inside an anchor: ``before`` / ``after`` name other stages, as ``"stage_key"`` (a stage
    of the same expansion) or ``"expansion_key.stage_key"``; a stage of an expansion that is not
    enabled is ignored, an unknown stage or expansion, a stage at another anchor or a cycle is a
    :class:`ConfigError`.  Stages not ordered that way keep the expansion order, then the order of
    the expansion's ``stages()`` list.
    """

    name: str = ""
    """Phase name while this stage waits for a decision; "" for automatic stages."""
    key: str = ""
    """Name of the stage inside its expansion, for ordering references (default: ``name``, else
    the class name)."""
    before: tuple[str, ...] = ()
    """Stages this one must run before (same anchor)."""
    after: tuple[str, ...] = ()
    """Stages this one must run after (same anchor)."""
    owner: str = ""
    """Key of the expansion that added the stage (set by :func:`build_stages`; "" for the core's)."""

    def stage_key(self) -> str:
        return self.key or self.name or type(self).__name__

    def enter(self, game: Game) -> bool:
        """Run the stage; return True if it now waits for a decision."""
        return False

    def apply(self, game: Game, action: Action) -> bool:
        """Apply a decision; return True when the stage is finished."""
        raise IllegalActionError(f"no decision is expected in stage {type(self).__name__}")

    def legal_actions(self, game: Game) -> list[Action]:
        return []


def build_stages(expansions: list[Expansion], known: Collection[str] = ()) -> tuple[list[Stage], list[Stage]]:
    """The stages of a turn, and the stages run once when the last tile has been played.

    ``expansions`` are in expansion order; ``known`` are the registered keys (references to a
    registered expansion that is not enabled are ignored).
    """
    from .scoring import DetectCompletionsStage, FinalScoreStage, ScoreStage  # they subclass Stage
    from .turn import DrawStage, EndTurnStage, FollowerStage, TileStage

    enabled = {e.KEY for e in expansions}
    known = set(known) | enabled
    decl: dict[str, list[tuple[str, Stage, str]]] = {a: [] for a in ANCHORS}  # anchor -> (id, stage, key)
    where: dict[str, str] = {}  # stage id -> anchor
    for exp in expansions:
        for anchor, stage in exp.stages():
            if anchor not in decl:
                raise ConfigError(
                    f"expansion {exp.KEY!r} adds a stage at unknown anchor {anchor!r}; use one of {ANCHORS}"
                )
            sid = f"{exp.KEY}.{stage.stage_key()}"
            if sid in where:
                raise ConfigError(
                    f"expansion {exp.KEY!r} declares two stages named {stage.stage_key()!r}; give each a key"
                )
            where[sid] = anchor
            stage.owner = exp.KEY
            decl[anchor].append((sid, stage, exp.KEY))
    ordered = {a: _order(a, decl[a], where, enabled, known) for a in ANCHORS}
    stages: list[Stage] = [
        DrawStage(),
        TileStage(),
        *ordered["after_tile"],
        FollowerStage(),
        *ordered["after_follower"],
    ]
    stages += [DetectCompletionsStage(), *ordered["before_score"], *ordered["score_begin"], ScoreStage()]
    stages += [*ordered["score_end"], *ordered["after_score"], *ordered["end_turn"], EndTurnStage()]
    final = [*ordered["before_final"], FinalScoreStage()]
    names = [s.name for s in stages + final if s.name]
    if len(names) != len(set(names)):
        raise ConfigError(f"two stages share a phase name: {names}")
    return stages, final


def _order(
    anchor: str, items: list[tuple[str, Stage, str]], where: dict[str, str], enabled: set[str], known: set[str]
) -> list[Stage]:
    """Stages of one anchor in declared order (``before`` / ``after``), ties in declaration order."""
    index = {sid: i for i, (sid, _, _) in enumerate(items)}
    succ: dict[int, set[int]] = {i: set() for i in range(len(items))}

    def resolve(ref: str, owner: str, sid: str) -> int | None:
        full = ref if "." in ref else f"{owner}.{ref}"
        exp_key = full.split(".", 1)[0]
        if exp_key not in known:
            raise ConfigError(f"stage {sid!r} is ordered against {ref!r}, but no expansion {exp_key!r} is registered")
        if exp_key not in enabled:
            return None  # that expansion is not in this game: nothing to order against
        if full not in where:
            raise ConfigError(f"stage {sid!r} is ordered against {ref!r}, which expansion {exp_key!r} does not declare")
        if where[full] != anchor:
            raise ConfigError(
                f"stage {sid!r} (anchor {anchor!r}) is ordered against {full!r} at anchor {where[full]!r}; "
                "only stages of one anchor can be ordered against each other"
            )
        return index[full]

    for i, (sid, stage, owner) in enumerate(items):
        for ref in stage.after:
            j = resolve(ref, owner, sid)
            if j is not None:
                succ[j].add(i)
        for ref in stage.before:
            j = resolve(ref, owner, sid)
            if j is not None:
                succ[i].add(j)
    out = _topological(len(items), succ)
    if len(out) != len(items):
        stuck = [items[i][0] for i in range(len(items)) if i not in out]
        raise ConfigError(f"the before/after declarations of stages {stuck} at anchor {anchor!r} form a cycle")
    return [items[i][1] for i in out]


def _topological(n: int, succ: dict[int, set[int]]) -> list[int]:
    """Indices 0..n-1 in an order where every ``i`` precedes ``succ[i]``, the lowest free index first
    (declaration order among ties); fewer than ``n`` when the successors form a cycle."""
    indegree = [0] * n
    for outs in succ.values():
        for j in outs:
            indegree[j] += 1
    ready = [i for i in range(n) if indegree[i] == 0]
    out: list[int] = []
    while ready:
        i = min(ready)  # declaration order among the stages free to go
        ready.remove(i)
        out.append(i)
        for j in succ[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
    return out
