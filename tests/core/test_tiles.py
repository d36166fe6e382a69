"""Tile data: the base set loads with the right contents, the loader rejects
broken files naming the tile and the fault, and rotations are precomputed right."""

from __future__ import annotations

import tomllib

import pytest
from _helpers import rotated_edges, segment_on_half, segment_on_side

from carc_env.core.tiles import (
    CITY,
    EDGE_CODES,
    EDGE_LETTERS,
    FIELD,
    HALF_INDEX,
    HALF_NAMES,
    ROAD,
    TileDataError,
    load_tile_file,
    parse_tile_data,
    tile_file_path,
)

# From ../shared/rules/official-expansions.md section 1: id -> (count, edges N E S W).
BASE_TABLE = {
    "BA-A": (2, "FFRF"),
    "BA-B": (4, "FFFF"),
    "BA-C": (1, "CCCC"),
    "BA-D": (4, "CRFR"),
    "BA-E": (5, "CFFF"),
    "BA-F": (2, "FCFC"),
    "BA-G": (1, "FCFC"),
    "BA-H": (3, "CFCF"),
    "BA-I": (2, "CFFC"),
    "BA-J": (3, "CRRF"),
    "BA-K": (3, "CFRR"),
    "BA-L": (3, "CRRR"),
    "BA-M": (2, "CFFC"),
    "BA-N": (3, "CFFC"),
    "BA-O": (2, "CRRC"),
    "BA-P": (3, "CRRC"),
    "BA-Q": (1, "CCFC"),
    "BA-R": (3, "CCFC"),
    "BA-S": (2, "CCRC"),
    "BA-T": (1, "CCRC"),
    "BA-U": (8, "FRFR"),
    "BA-V": (9, "FFRR"),
    "BA-W": (4, "FRRR"),
    "BA-X": (1, "RRRR"),
}
PENNANT_TILES = {"BA-C": 1, "BA-F": 1, "BA-M": 1, "BA-O": 1, "BA-Q": 1, "BA-S": 1}


@pytest.fixture(scope="module")
def base():
    return load_tile_file(tile_file_path("base.toml"))


# ------------------------------------------------------------------ base data
def test_base_set_has_24_types_and_72_tiles(base):
    assert base.set == "base"
    assert base.start_tile == "BA-D"
    assert len(base.tiles) == 24
    assert sum(t.count for t in base.tiles) == 72


def test_base_counts_and_edges_match_the_rules_table(base):
    got = {t.id: (t.count, t.edges) for t in base.tiles}
    assert got == BASE_TABLE


def test_base_set_has_10_pennants(base):
    per_tile = {t.id: sum(s.pennants for s in t.segments) for t in base.tiles}
    assert {k: v for k, v in per_tile.items() if v} == PENNANT_TILES
    assert sum(t.count * per_tile[t.id] for t in base.tiles) == 10


def test_every_half_edge_is_covered_exactly_once(base):
    for t in base.tiles:
        for h, name in enumerate(HALF_NAMES):
            owners = [s.name for s in t.segments if s.kind == FIELD and h in s.halves]
            if t.edges[h // 2] == "C":
                assert owners == [], f"{t.id}: {name} is on a city edge but owned by {owners}"
            else:
                assert len(owners) == 1, f"{t.id}: {name} owned by {owners}"


def test_every_city_and_road_edge_belongs_to_one_matching_feature(base):
    for t in base.tiles:
        for side, letter in enumerate(t.edges):
            owners = [s for s in t.segments if side in s.edges]
            if letter == "F":
                assert owners == [], t.id
            else:
                assert len(owners) == 1, t.id
                assert owners[0].kind == {"C": CITY, "R": ROAD}[letter], t.id


def test_fields_border_the_cities_named_in_the_rules(base):
    tiles = {t.id: t for t in base.tiles}

    def links(tid):
        t = tiles[tid]
        return sorted(
            (sorted(HALF_NAMES[h] for h in s.halves), sorted(t.segments[c].name for c in s.cities))
            for s in t.segments
            if s.kind == FIELD
        )

    assert links("BA-D") == [(["EL", "WR"], ["c1"]), (["ER", "SL", "SR", "WL"], [])]
    assert links("BA-H") == [(["EL", "ER", "WL", "WR"], ["c1", "c2"])]
    assert links("BA-S") == [(["SL"], ["c1"]), (["SR"], ["c1"])]
    assert links("BA-W") == [(["EL", "NL", "NR", "WR"], []), (["ER", "SL"], []), (["SR", "WL"], [])]
    assert links("BA-C") == []
    assert [s.building for s in tiles["BA-A"].segments if s.building] == ["cloister"]
    assert [s.building for s in tiles["BA-B"].segments if s.building] == ["cloister"]


# ------------------------------------------------------------------ rotations
def test_ba_d_rotated_once_has_edges_R_C_R_F(base):
    d = next(t for t in base.tiles if t.id == "BA-D")
    assert "".join(EDGE_LETTERS[c] for c in d.edge_codes[1]) == "RCRF"
    c1, r1 = d.segment_index("c1"), d.segment_index("r1")
    f1, f2 = d.segment_index("f1"), d.segment_index("f2")
    assert d.center[1] == (r1, c1, r1, -1)  # road now runs N-S, city faces east
    # f1 {EL, WR} -> {SL, NR}; f2 {ER, SL, SR, WL} -> {SR, WL, WR, NL}
    expect = [-1] * 8
    for name in ("SL", "NR"):
        expect[HALF_INDEX[name]] = f1
    for name in ("SR", "WL", "WR", "NL"):
        expect[HALF_INDEX[name]] = f2
    assert d.half[1] == tuple(expect)


def test_ba_d_all_rotations(base):
    d = next(t for t in base.tiles if t.id == "BA-D")
    letters = ["".join(EDGE_LETTERS[c] for c in d.edge_codes[r]) for r in range(4)]
    assert letters == ["CRFR", "RCRF", "FRCR", "RFRC"]


def test_precomputed_rotations_agree_with_rotating_by_hand(base):
    for t in base.tiles:
        for r in range(4):
            assert tuple(EDGE_CODES[c] for c in rotated_edges(t, r)) == t.edge_codes[r], (t.id, r)
            assert t.center[r] == tuple(segment_on_side(t, r, s) for s in range(4)), (t.id, r)
            assert t.half[r] == tuple(segment_on_half(t, r, h) for h in range(8)), (t.id, r)


def test_distinct_rotations_count_symmetric_tiles_once(base):
    # Geometrically identical rotations (labels of segments aside) count once.
    got = {t.id: [r for r in range(4) if t.distinct_rotations >> r & 1] for t in base.tiles}
    for tid in ("BA-B", "BA-C", "BA-X"):  # 4-fold symmetric
        assert got[tid] == [0], tid
    for tid in ("BA-F", "BA-G", "BA-H", "BA-U"):  # 2-fold symmetric
        assert got[tid] == [0, 1], tid
    for tid in (
        "BA-A",
        "BA-D",
        "BA-E",
        "BA-I",
        "BA-J",
        "BA-K",
        "BA-L",
        "BA-M",
        "BA-N",
        "BA-O",
        "BA-P",
        "BA-Q",
        "BA-R",
        "BA-S",
        "BA-T",
        "BA-V",
        "BA-W",
    ):
        assert got[tid] == [0, 1, 2, 3], tid


# ---------------------------------------------------------------- bad files
GOOD = """
set = "t"

[[tile]]
id = "T-1"
count = 1
edges = "CRFR"
features = [
  { id = "c1", kind = "city", edges = ["N"] },
  { id = "r1", kind = "road", edges = ["W", "E"] },
]
fields = [
  { halves = ["EL", "WR"], cities = ["c1"] },
  { halves = ["ER", "SL", "SR", "WL"] },
]
"""


def parse(text: str):
    return parse_tile_data(tomllib.loads(text), "snippet.toml")


def test_good_snippet_parses():
    tf = parse(GOOD)
    assert [t.id for t in tf.tiles] == ["T-1"]
    assert [s.name for s in tf.tiles[0].segments] == ["c1", "r1", "f1", "f2"]


BROKEN = {
    "unknown tile attribute": (
        GOOD.replace("count = 1", 'count = 1\ncolour = "red"'),
        "unknown attribute(s) ['colour']",
    ),
    "unknown feature attribute": (
        GOOD.replace('edges = ["N"] }', 'edges = ["N"], size = 2 }'),
        "unknown attribute(s) ['size']",
    ),
    "bad edge letter": (GOOD.replace('"CRFR"', '"CRXR"'), "'edges' must be 4 letters"),
    "road on a non-road edge": (
        GOOD.replace('edges = ["W", "E"]', 'edges = ["W", "S"]'),
        "feature r1: touches side S whose edge is 'F', expected 'R'",
    ),
    "city on a road edge": (
        GOOD.replace('edges = ["N"] }', 'edges = ["N", "E"] }'),
        "feature c1: touches side E whose edge is 'R', expected 'C'",
    ),
    "half-edge covered twice": (
        GOOD.replace('{ halves = ["ER", "SL"', '{ halves = ["EL", "ER", "SL"'),
        "field f2: half-edge EL already belongs to field f1",
    ),
    "uncovered half-edge": (
        GOOD.replace('"ER", "SL", "SR", "WL"', '"ER", "SR", "WL"'),
        "half-edge SL (edge 'F') is covered by no field",
    ),
    "field on a city edge": (
        GOOD.replace('["EL", "WR"]', '["EL", "WR", "NL"]'),
        "field f1: half-edge NL lies on a city edge",
    ),
    "field bordering an unknown city": (
        GOOD.replace('cities = ["c1"]', 'cities = ["c9"]'),
        "field f1: borders 'c9', which is not a city feature of this tile",
    ),
    "field bordering a road": (
        GOOD.replace('cities = ["c1"]', 'cities = ["r1"]'),
        "field f1: borders 'r1', which is not a city feature of this tile",
    ),
    "pennant on a road": (
        GOOD.replace('edges = ["W", "E"] }', 'edges = ["W", "E"], pennants = 1 }'),
        "feature r1: only cities carry pennants",
    ),
    "edge with no feature": (
        GOOD.replace('  { id = "r1", kind = "road", edges = ["W", "E"] },\n', ""),
        "side E is 'R' but no feature touches it",
    ),
    "unknown feature kind": (
        GOOD.replace('kind = "city"', 'kind = "castle"'),
        "feature c1: unknown kind 'castle'",
    ),
    "duplicate feature id": (
        GOOD.replace('{ id = "r1"', '{ id = "c1"'),
        "feature c1: duplicate feature id",
    ),
}


@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_loader_names_tile_and_fault(fault):
    text, message = BROKEN[fault]
    assert text != GOOD, "the snippet edit did not apply"
    with pytest.raises(TileDataError) as exc:
        parse(text)
    msg = str(exc.value)
    assert msg.startswith("snippet.toml: tile T-1"), msg
    assert message in msg, msg


def test_loader_rejects_duplicate_tile_id():
    text = GOOD + GOOD[GOOD.index("[[tile]]") :]
    with pytest.raises(TileDataError, match=r"snippet\.toml: tile T-1: duplicate tile id"):
        parse(text)


def test_loader_rejects_unknown_file_key_and_bad_start_tile():
    with pytest.raises(TileDataError, match=r"unknown attribute\(s\) \['version'\]"):
        parse("version = 2\n" + GOOD)
    with pytest.raises(TileDataError, match="start_tile 'T-9' is not a tile of this file"):
        parse('start_tile = "T-9"\n' + GOOD)


def test_loader_reports_missing_file(tmp_path):
    with pytest.raises(TileDataError, match="tile file not found"):
        load_tile_file(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("set = \n")
    with pytest.raises(TileDataError, match="bad.toml: not valid TOML"):
        load_tile_file(bad)


def test_count_legal_placements_counts_symmetric_rotations_once():
    from _helpers import new_game

    g = new_game(["BA-U"])
    # BA-U (road W-E) next to the start tile: east and west ends of the road
    # in r0 / r2, and south of it (field edge) in r0 / r2; the north is city.
    rows = sorted(map(tuple, g.legal_tile_placements().tolist()))
    assert rows == [(-1, 0, 0), (-1, 0, 2), (0, 1, 0), (0, 1, 2), (1, 0, 0), (1, 0, 2)]
    assert g.count_legal_placements() == 6
    assert g.count_legal_placements(distinct=True) == 3


def test_a_tile_file_that_is_a_directory_or_not_utf8_is_named_with_the_fix(tmp_path):
    # issue 23: these gave a bare IsADirectoryError / UnicodeDecodeError naming neither file nor fix
    folder = tmp_path / "tiles.toml"
    folder.mkdir()
    with pytest.raises(
        TileDataError, match=r"tiles\.toml: is a directory, not a tile file; name a \.toml file inside it"
    ):
        load_tile_file(folder)
    latin = tmp_path / "latin1.toml"
    latin.write_bytes('set = "Mönch"\n'.encode("latin-1"))
    with pytest.raises(
        TileDataError, match=r"latin1\.toml: the tile file is not UTF-8 text \(byte 8: .*\); save it as UTF-8 TOML"
    ):
        load_tile_file(latin)


def test_a_plug_in_tile_file_reusing_a_tile_id_names_the_id_and_both_files(tmp_path):
    # issue 23: the message was "two tile files define the same tile id", without the id or the files
    from carc_env.core import GameConfig
    from carc_env.core.config import RuleSet
    from carc_env.core.expansion import Expansion, register, unregister

    path = tmp_path / "copycat.toml"
    path.write_text(
        'set = "copycat"\n[[tile]]\nid = "BA-E"\ncount = 1\nedges = "CFFF"\n'
        'features = [ { id = "c1", kind = "city", edges = ["N"] } ]\n'
        'fields = [ { halves = ["EL", "ER", "SL", "SR", "WL", "WR"], cities = ["c1"] } ]\n'
    )

    class Copycat(Expansion):
        KEY = "test_copycat"
        REQUIRES = ("base",)
        tile_files = (str(path),)

    register(Copycat)
    try:
        with pytest.raises(TileDataError) as err:
            RuleSet(GameConfig(2, ("base", "test_copycat")))
    finally:
        unregister("test_copycat")
    msg = str(err.value)
    assert msg.startswith("tile id 'BA-E' is defined twice: in tile file ") and "base.toml (expansion 'base')" in msg
    assert f"and in tile file {path} (expansion 'test_copycat')" in msg and msg.endswith(
        "rename the tile in one of them"
    )
