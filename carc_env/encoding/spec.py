"""The observation spec: every part of an observation, named and described once.

This module is the one description of what an observation holds.  The
encoder (:class:`~carc_env.encoding.ObservationEncoder`) builds its core board
channels and global features from :data:`BOARD_CHANNELS` and
:data:`GLOBAL_FEATURES` (:func:`expand`); the compiled engine finds channel
and feature positions by these names in the encoder (:mod:`carc_env.fast.tables`);
the one-ply action features (:data:`PLACEMENT_FEATURES`, :data:`SPOT_FEATURES`)
are produced by both engines in this column order
(:mod:`carc_env.encoding.placements`, :mod:`carc_env.encoding.spots`,
:mod:`carc_env.fast.features`); and the environment's documentation
(:mod:`carc_env.env.aec`) prints the tables below (:func:`rst_table`).

Name patterns: ``{S}`` is a side (``N``, ``E``, ``S``, ``W``), ``{kind}`` an
edge, building or segment kind, ``{i}`` a relative seat (0 = the observer),
``{r}`` a rotation, ``{id}`` a tile id, ``{name}`` a phase.  Expansion
channels, global features and windows columns are described by the ``observe``
module of the plug-in that adds them.

Observation keys
----------------
:data:`OBSERVATION_KEYS` lists them.  The action-feature keys exist only with
the environment option ``action_features=True`` (off by default); their
shapes are fixed per configuration: ``rows`` = the option
``action_feature_rows`` (default :data:`DEFAULT_PLACEMENT_ROWS`), ``S`` = the
follower range's segments (``codec.follower_range.size - 1``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One named part of an observation: ``name`` (a pattern, see the module docstring) and its meaning."""

    name: str
    meaning: str


DEFAULT_PLACEMENT_ROWS = 128
"""Placement rows of the action features unless ``action_feature_rows`` says otherwise.  Measured
with the compiled engine's ``play_random`` (``FastBatch.play_random``): over 3,000 random 2-player
and 2,000 4-player base games a drawn tile had at most 104 legal placements; a legal placement
beyond the rows is counted in ``info["placements_without_features"]``, never dropped silently."""

OBSERVATION_KEYS = (
    Entry("board", "uint8 (channels, rows, cols): the board channels over the window"),
    Entry("globals", "float32 (features,): the global features"),
    Entry("windows", "uint8 (num_players, columns): per relative seat, the plug-ins' windows columns"),
    Entry("action_mask", "int8 (N,): the legal actions if the observer decides now, else all zero"),
    Entry(
        "place_index",
        "int64 (rows,): action indices of the legal in-window placements of the drawn "
        "tile, ascending; 0 in unused rows (action_features only)",
    ),
    Entry(
        "place_features",
        "float32 (rows, len(PLACEMENT_FEATURES)): one row per place_index entry; "
        "unused rows zero (``present`` 0) (action_features only)",
    ),
    Entry(
        "spots",
        "float32 (S, len(SPOT_FEATURES)): row i describes segment i of the tile just "
        "placed (follower action i) (action_features only)",
    ),
)

# Core board channels, in the encoder's order (static ones first).
STATIC_CHANNELS = (
    Entry("tile", "1 if a tile lies there"),
    Entry(
        "edge_{S}_{kind}",
        "1 if side S of the tile is an edge of that kind (city, road, field; river / "
        "interior when an expansion's tiles use them)",
    ),
    Entry("cities", "number of separate city segments on the tile"),
    Entry("roads", "number of separate road segments on the tile"),
    Entry("fields", "number of separate field segments on the tile"),
    Entry("pennants", "pennants on the tile"),
    Entry(
        "building_{kind}", "1 if the tile holds a building of that kind (cloister; shrine, church ... with expansions)"
    ),
)
DYNAMIC_CHANNELS = (
    Entry("complete_{S}", "1 if the city or road leaving side S belongs to a completed feature"),
    Entry("complete_building", "1 if the tile's building is completed"),
    Entry("mine_{S}", "1 if the city or road leaving side S is occupied by a follower of mine"),
    Entry("others_{S}", "1 if the city or road leaving side S is occupied by an opponent's"),
    Entry("field_mine", "1 if a field of the tile has a farmer of mine"),
    Entry("field_others", "1 if a field of the tile has an opponent's farmer"),
    Entry("followers_p{i}", "followers of relative seat i on the tile"),
    Entry("follower_on_{kind}", "followers (any seat) on a city / road / field / building of the tile"),
    Entry(
        "legal_r{r}",
        "1 if the drawn tile may be placed here in rotation r (tile phase; identical to "
        "the tile range of the action mask)",
    ),
    Entry("frontier", "1 on every empty square next to a tile"),
    Entry("last_placed", "1 on the most recently placed tile"),
    Entry(
        "open_{S}",
        "open edges (capped at 3) of the city or road leaving side S; 0 once complete.  1 "
        "means one more tile may close it",
    ),
    Entry("size_{S}", "tiles (capped at 15) of the city or road leaving side S"),
    Entry("building_neighbours", "filled neighbours (0..8) of the tile's incomplete building"),
)
BOARD_CHANNELS = STATIC_CHANNELS + DYNAMIC_CHANNELS

GLOBAL_FEATURES = (
    Entry("drawn_tile_{id}", "one-hot of the drawn tile type (tile phase; else all 0)"),
    Entry("placed_tile_{id}", "one-hot of the most recently placed tile's type"),
    Entry("placed_rotation_{r}", "one-hot of its rotation (follower indices refer to its segments)"),
    Entry("remaining_{id}", "tiles of that type still in the bag / copies in the game"),
    Entry("bag_fraction", "tiles left in the bag / tiles in the game"),
    Entry(
        "turn_progress",
        "tiles on the board / tiles in the game (a printed board's printed pieces are not tiles of the game)",
    ),
    Entry("score_p{i}", "score of relative seat i x 0.01"),
    Entry("score_lead", "(my score - best opponent's score) x 0.01"),
    Entry("followers_in_hand_p{i}", "followers in relative seat i's supply / followers per player"),
    Entry("phase_{name}", "one-hot of the phase (tile, follower, expansion phases, game_over)"),
    Entry("deciding_p{i}", "one-hot of the relative seat that decides now"),
    Entry("turn_p{i}", "one-hot of the relative seat whose turn it is"),
    Entry("legal_placements", "legal placements of the drawn tile in the window x 0.01"),
    Entry("window_clipped", "1 if a legal placement lies outside the window"),
)

# The one-ply action features: per legal placement of the drawn tile ("mine" / "others'" / "free"
# are seen from the observer: mine when I have the most followers on a feature, possibly shared;
# others' when someone else has more; free when nobody has one).
PLACEMENT_FEATURES = (
    Entry("present", "1 for a real row (0 pads)"),
    Entry(
        "gain",
        "own minus best-opponent points scored at once, with the best follower that would "
        "score at once / 20 (played out on a copy; 0 when nothing completes; with the last "
        "tile, the final scoring included)",
    ),
    Entry("completes", "the placement may complete a feature"),
    Entry("neighbours", "orthogonally adjacent tiles / 4"),
    Entry("join_mine", "incomplete features joined that are mine / 2"),
    Entry("join_others", "incomplete features joined that are others' / 2"),
    Entry("join_free", "incomplete features joined that are free / 2"),
    Entry("open_mine", "open edges left on the mine ones / 8"),
    Entry("open_others", "open edges left on the others' ones / 8"),
    Entry("size_mine", "tiles of the mine ones afterwards / 10"),
    Entry("size_others", "tiles of the others' ones afterwards / 10"),
    Entry("free_city", "best free, incomplete city a follower could take here: 2 x tiles + 2 x pennants / 20"),
    Entry("free_road", "best free, incomplete road here: tiles / 10"),
    Entry("building_here", "the tile has a building: (1 + tiles around) / 9"),
    Entry("buildings_mine", "buildings around with my follower / 4"),
    Entry("buildings_others", "buildings around with another player's follower / 4"),
    Entry("supply", "my followers in supply / 7 (same for every row)"),
    Entry("progress", "tiles placed / (placed + left in the bag)"),
)
SPOT_FEATURES = (
    Entry("present", "the placed tile has a segment i"),
    Entry("legal", "a follower may go there now"),
    Entry("kind_city", "the segment is a city"),
    Entry("kind_road", "the segment is a road"),
    Entry("kind_field", "the segment is a field"),
    Entry("kind_building", "the segment is a building"),
    Entry("size", "tiles of the feature / 10 (building: neighbours / 8)"),
    Entry("open_edges", "open edges of a city or road / 4"),
    Entry("completes", "the feature is complete now (it scores this turn)"),
    Entry("value_now", "points it would score if completed now / 20"),
    Entry("value_final", "points it would score at the end as it is / 20"),
    Entry("field_done_cities", "completed cities a field borders / 4"),
    Entry("field_cities", "cities (complete or not) a field borders / 4"),
    Entry("mine", "my followers on the feature / 4"),
    Entry("others", "other players' followers on the feature / 4"),
    Entry("pennants", "pennants of a city / 4"),
)
PLACEMENT_FEATURE_NAMES = tuple(e.name for e in PLACEMENT_FEATURES)
SPOT_FEATURE_NAMES = tuple(e.name for e in SPOT_FEATURES)


def expand(pattern: str, **values: list[str]) -> list[str]:
    """The names a pattern stands for, e.g. ``expand("open_{S}", S=["N", "E", "S", "W"])``; a pattern
    with several fields expands the first field outermost (``edge_{S}_{kind}``: side-major)."""
    import string

    fields = [f for _, f, _, _ in string.Formatter().parse(pattern) if f]
    names = [pattern]
    for f in fields:
        if f not in values:
            raise KeyError(f"pattern {pattern!r} needs values for {{{f}}}")
        names = [n.replace("{" + f + "}", v, 1) for n in names for v in values[f]]
    return names


def entry(table: tuple[Entry, ...], name: str) -> Entry:
    """The entry of ``table`` with this (pattern) name."""
    for e in table:
        if e.name == name:
            return e
    raise KeyError(f"{name!r} is not in the observation spec")


def rst_table(table: tuple[Entry, ...], head: str, value: str = "value") -> str:
    """``table`` as a reStructuredText simple table (for the environment's docs)."""
    import textwrap

    w1 = max(len(head), *(len(e.name) + 4 for e in table))
    w2 = 70
    rule = "=" * w1 + "  " + "=" * w2
    out = [rule, f"{head:<{w1}}  {value}", rule]
    for e in table:
        lines = textwrap.wrap(e.meaning, w2) or [""]
        out.append(f"{'``' + e.name + '``':<{w1}}  {lines[0]}")
        out += [" " * (w1 + 2) + line for line in lines[1:]]
    out.append(rule)
    return "\n".join(out)


__all__ = [
    "BOARD_CHANNELS", "DEFAULT_PLACEMENT_ROWS", "DYNAMIC_CHANNELS", "Entry", "GLOBAL_FEATURES", "OBSERVATION_KEYS",
    "PLACEMENT_FEATURES", "PLACEMENT_FEATURE_NAMES", "SPOT_FEATURES", "SPOT_FEATURE_NAMES", "STATIC_CHANNELS",
    "entry", "expand", "rst_table",
]  # fmt: skip
