"""The map file format: the Germany data, the printed geometry derived from it, and every fault
named (file, entry, cell).  Faults are made by editing the small test board tests/data/maps/mini.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from carc_env.core.layout import ANY_EDGE, BoardLayout, LayoutError, PrintedPiece
from carc_env.core.tiles import EDGE_CODES
from carc_env.expansions.maps_germany.mapfile import MapDataError, load_map_file, parse_map_data

MINI = Path(__file__).parents[1] / "data" / "maps" / "mini.toml"


def test_the_germany_file_is_an_approximation_with_the_named_places_of_the_rule_text():
    m = load_map_file("germany")
    assert m.layout_status == "approximate_geographic" and m.title == "Carcassonne Maps - Germany"
    assert {s.name for s in m.starts} == {"Rostock", "Erfurt", "Stuttgart"}
    assert {c.name for c in m.large_cities} == {"Hamburg", "Berlin", "Hannover", "Ruhrgebiet", "Frankfurt", "Muenchen"}
    assert {t.name for t in m.towns if t.source == "rule text"} == {"Bremen", "Saarbruecken", "Nuernberg"}
    denmark = next(a for a in m.abroad if a.name == "Denmark")
    assert denmark.kind == "road" and denmark.coats_of_arms == 2 and denmark.cell == (4, -1)
    assert len(m.squares) == 159 and sum(len(c.cells) for c in m.large_cities) == 24
    assert not m.sea & m.squares and (0, 0) in m.sea


def test_printed_geometry_of_large_city_squares_and_features_abroad():
    m = load_map_file("germany")
    layout, coats = m.layout()
    types = {t.id: t for t in layout.tile_types}
    assert sorted(types) == ["MAP-city-CCCF", "MAP-city-CCFF", "MAP-city-abroad", "MAP-road-abroad"]
    corner = types["MAP-city-CCFF"]  # a closed corner of a 2 x 2 block: city N and E, grass S and W
    (city, fld) = corner.segments
    assert city.edges == (0, 1) and fld.halves == (4, 5, 6, 7) and fld.cities == (0,)
    road = types["MAP-road-abroad"]
    assert road.edges == "R---" and [s.halves for s in road.segments[1:]] == [(0,), (1,)]
    assert all(t.count == 0 for t in layout.tile_types)
    # Berlin's north-west square: open to the west, so city W, E, S and grass north
    i = next(k for k, p in enumerate(layout.pieces) if (p.x, p.y) == (10, 5))
    p = layout.pieces[i]
    assert types[p.tile].edge_codes[p.rotation] == (EDGE_CODES["F"], EDGE_CODES["C"], EDGE_CODES["C"], EDGE_CODES["C"])
    assert coats[i] == 1 and sum(coats) == 24 + 11
    # requirements the printed pieces put on the squares next to them
    assert layout.requirement[(9, 5)] == (0, EDGE_CODES["C"], 0, 0)  # Berlin's open west edge
    assert layout.requirement[(4, 0)] == (EDGE_CODES["R"], 0, 0, 0)  # Denmark's road
    assert layout.requirement[(1, 13)] == (0, 0, ANY_EDGE, 0)  # the empty side of France's cell
    assert layout.building_target[(5, 0)] == 4 and layout.building_target[(7, 7)] == 8
    border = m.layout("border")[0]
    assert border.requirement[(10, 7)] == (ANY_EDGE, 0, 0, 0)


def _mini(edit) -> dict:
    data = tomllib.loads(MINI.read_text())
    edit(data)
    return data


def _set(path, value):
    def edit(d):
        t = d
        for k in path[:-1]:
            t = t[k]
        t[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (_set(["version"], 2), "not a map file of format 'carc_env-map' version 1"),
        (_set(["colour"], "red"), r"unknown key\(s\) \['colour'\]"),
        (_set(["layout_status"], "exact"), "layout_status must be one of"),
        (_set(["grid"], ["STX#", "#L##", "S###"]), "grid row 0 column 2: unknown letter 'X'"),
        (_set(["town", 1, "cell"], [3, 0]), r"\[\[town\]\] #2: cell \[3, 0\] is 'square' in the grid, expected 'town'"),
        (_set(["town", 1], {"name": "T2", "cell": [2, 0], "x": 1}), r"unknown key\(s\) \['x'\]"),
        (_set(["start", 1, "cell"], [0, 1]), "cell \\[0, 1\\] is 'square' in the grid, expected 'start'"),
        (_set(["large_city", 0, "open"], [[1, 1, "N"], [1, 1, "N"]]), "an open edge is listed twice"),
        (
            _set(["large_city", 0, "open"], [[0, 1, "N"]]),
            r"open edge \[0, 1, 'N'\]: \[0, 1\] is not one of its squares",
        ),
        (_set(["large_city", 0, "open"], [[1, 1, "Q"]]), "a side must be one of N, E, S, W"),
        (
            _set(["large_city", 0, "coats_of_arms"], [1, 2]),
            "'coats_of_arms' must be a non-negative integer or a list of 1",
        ),
        (_set(["abroad", 0, "side"], "E"), r"side E of \[0, 0\] faces the square \[1, 0\], not abroad"),
        (_set(["abroad", 0, "kind"], "river"), "'kind' must be 'road' or 'city'"),
        (_set(["abroad", 1, "square"], [1, 1]), r"'square' \[1, 1\] is not a playable square"),
        (_set(["abroad", 0, "cell"], [0, -1]), r"unknown key\(s\) \['cell'\]"),
    ],
)
def test_a_bad_map_file_names_the_entry_and_the_fault(edit, match):
    with pytest.raises(MapDataError, match=match):
        parse_map_data(_mini(edit), "mini.toml")


def test_a_grid_letter_no_entry_explains_is_an_error():
    def edit(d):
        d["town"] = d["town"][:1]

    with pytest.raises(MapDataError, match=r"grid cell \[2, 0\] is marked 'town' but no entry names it"):
        parse_map_data(_mini(edit), "mini.toml")


def test_an_open_large_city_edge_must_face_a_playable_square():
    def edit(d):
        d["grid"] = ["STT#", "#L##", "S.##"]
        d["large_city"][0]["open"] = [[1, 1, "S"]]

    with pytest.raises(MapDataError, match=r"open edge \[1, 1, 'S'\] faces \[1, 2\], which is not a playable square"):
        parse_map_data(_mini(edit), "mini.toml")


def test_a_large_city_must_be_one_block():
    def edit(d):
        d["grid"] = ["STT#", "#L#L", "S###"]
        d["large_city"][0]["cells"] = [[1, 1], [3, 1]]

    with pytest.raises(MapDataError, match="not orthogonally connected"):
        parse_map_data(_mini(edit), "mini.toml")


def test_a_missing_or_broken_file_is_named(tmp_path):
    with pytest.raises(MapDataError, match="map file not found"):
        load_map_file(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("grid = [")
    with pytest.raises(MapDataError, match="bad.toml: not valid TOML"):
        load_map_file(bad)


def test_the_core_layout_checks_its_pieces():
    m = load_map_file(MINI)
    layout, _ = m.layout()
    p = layout.pieces[0]
    with pytest.raises(LayoutError, match="square=False but the cell is a square"):
        BoardLayout(layout.squares, (PrintedPiece(p.tile, p.x, p.y, p.rotation, square=False),), layout.tile_types)
    with pytest.raises(LayoutError, match="unknown printed tile type"):
        BoardLayout(layout.squares, (PrintedPiece("NOPE", 5, 5, 0, square=False),), layout.tile_types)
    with pytest.raises(LayoutError, match="already holds"):
        BoardLayout(layout.squares, (p, p), layout.tile_types)


def test_a_map_file_option_naming_a_directory_or_a_non_utf8_file_names_the_option_the_file_and_the_fix(tmp_path):
    # issue 23: these gave a bare IsADirectoryError / UnicodeDecodeError
    from carc_env.core import Game, GameConfig
    from carc_env.core.expansion import ConfigError

    latin = tmp_path / "karte.toml"
    latin.write_bytes('name = "Köln"\n'.encode("latin-1"))
    for path, needle in [
        (tmp_path, r"is a directory, not a map file; name a \.toml file inside it"),
        (latin, r"the map file is not UTF-8 text \(byte 9: .*\); save it as UTF-8 TOML"),
    ]:
        with pytest.raises(ConfigError, match=rf"^option maps_germany.map_file: .*{path.name}: {needle}"):
            Game(GameConfig(2, ("base", "maps_germany"), {"maps_germany": {"map_file": str(path)}}), seed=0)
