"""Field edge cases: where fields split, which cities they border, and how
farmers share merged fields.  Expected values by hand from the 3rd-edition
farm rule: each field scores 3 per distinct completed city it borders, for
the majority of its farmers."""

from __future__ import annotations

from _helpers import BruteFeatures, new_game, play, scored

from carc_env.core import ScoreItem


def field_root(g, x, y, name):
    return g.find(g.node_of(x, y, name))


def final_fields(ev):
    return [s for s in scored(ev) if s.final and s.kind == "field"]


def cities_item(n):
    return (ScoreItem("cities", f"{n} completed cit{'y' if n == 1 else 'ies'} x 3", 3 * n),)


# ----------------------------------------------------------- split at roads
def test_junction_splits_fields_into_three():
    # BA-W at (1,0) r0: f1 north {NL,NR,EL,WR}, f2 south-east {ER,SL},
    # f3 south-west {SR,WL}.  Its WR touches the start's EL (start f1, north
    # of the road, borders the start city); its WL touches the start's ER
    # (start f2, south of the road).
    g = new_game(["BA-W", "BA-E"])
    g.apply("tile 1,0 r0")
    roots = {name: field_root(g, 1, 0, name) for name in ("f1", "f2", "f3")}
    assert len(set(roots.values())) == 3
    assert roots["f1"] == field_root(g, 0, 0, "f1")
    assert roots["f3"] == field_root(g, 0, 0, "f2")
    assert field_root(g, 0, 0, "f1") != field_root(g, 0, 0, "f2")


def test_farmer_beyond_a_junction_does_not_reach_the_city():
    # Player 0 farms the south-east piece of the junction; player 1 closes
    # the start city with BA-E and farms its field.  Only player 1's field
    # borders the completed city.
    g = new_game(["BA-W", "BA-E"])
    ev = play(g, ["tile 1,0 r0", "follower f2", "tile 0,-1 r2", "follower f1"])
    fs = final_fields(ev)
    assert sorted((s.points, s.items) for s in fs) == [((0, 0), cities_item(0)), ((0, 3), cities_item(1))]
    assert g.scores == [0, 3]


def test_farmer_on_the_north_piece_of_a_junction_reaches_the_city():
    # Same board, but player 0 farms BA-W's north piece, which continues the
    # start tile's field north of the road and so borders the start city.
    g = new_game(["BA-W", "BA-E"])
    ev = play(g, ["tile 1,0 r0", "follower f1", "tile 0,-1 r2", "pass"])
    (s,) = final_fields(ev)
    assert s.items == cities_item(1)
    assert s.points == (3, 0)
    assert g.scores == [3, 0]


# -------------------------------------------------------------- city gates
def test_city_gate_splits_the_south_field_but_both_pieces_border_the_city():
    # BA-T at (1,0) r1: city N/E/S, road W ending at the gate, gate fields
    # f1 {SL}->{WL} and f2 {SR}->{WR}.  f1 joins the start's south field,
    # f2 the start's north field.  Three BA-E caps close the BA-T city
    # (4 tiles, no knight).  Player 0 farms f1 on BA-T; player 1 farms the
    # north field from BA-U at (-1,0).  Both fields border the closed city
    # once: 3 each.  (The start city, bordered by player 1's field, stays open.)
    g = new_game(["BA-T", "BA-U", "BA-E", "BA-E", "BA-E"])
    play(g, ["tile 1,0 r1", "follower f1", "tile -1,0 r0", "follower f1"])
    south, north = field_root(g, 1, 0, "f1"), field_root(g, 1, 0, "f2")
    assert south != north
    assert south == field_root(g, 0, 0, "f2")
    assert north == field_root(g, 0, 0, "f1") == field_root(g, -1, 0, "f1")
    ev = play(g, ["tile 1,-1 r2", "pass", "tile 2,0 r3", "pass", "tile 1,1 r0", "pass"])
    completed_city = g.find(g.node_of(1, 0, "c1"))
    assert g.is_completed(completed_city)
    assert len(g.tiles[completed_city]) == 4
    # both gate pieces border the gate city
    assert {g.find(c) for c in g.adjacent_cities[south]} == {completed_city}
    assert completed_city in {g.find(c) for c in g.adjacent_cities[north]}
    fs = final_fields(ev)
    assert sorted(s.points for s in fs) == [(0, 3), (3, 0)]
    assert all(s.items == cities_item(1) for s in fs)
    assert g.scores == [3, 3]


def test_city_gate_with_pennant_farmer_gets_no_pennant_bonus():
    # Same as above with BA-S: pennants do not change the farm value.
    g = new_game(["BA-S", "BA-E", "BA-E", "BA-E"])
    ev = play(g, ["tile 1,0 r1", "follower f2", "tile 1,-1 r2", "pass", "tile 2,0 r3", "pass", "tile 1,1 r0", "pass"])
    (s,) = final_fields(ev)
    assert s.items == cities_item(1)
    assert s.points == (3, 0)


# ------------------------------------------------------- one city, twice
def test_field_touching_the_same_city_twice_counts_it_once():
    # Player 0's farm: BA-E field at (0,-1) (borders the city it closes),
    # cloister field at (1,-1), BA-U north field at (1,0), start field north
    # of the road (borders the same city again): 1 city, 3 points.
    g = new_game(["BA-E", "BA-U", "BA-B"])
    ev = play(g, ["tile 0,-1 r2", "follower f1", "tile 1,0 r0", "pass", "tile 1,-1 r0", "pass"])
    farm = field_root(g, 0, -1, "f1")
    assert farm == field_root(g, 0, 0, "f1") == field_root(g, 1, -1, "f1") == field_root(g, 1, 0, "f1")
    # the farm has two border links (BA-E's and the start tile's) to one city
    assert len(g.adjacent_cities[farm]) == 2
    assert len({g.find(c) for c in g.adjacent_cities[farm]}) == 1
    (s,) = final_fields(ev)
    assert s.items == cities_item(1)
    assert s.points == (3, 0)


def test_two_caps_on_one_tile_are_two_cities_for_the_field_between():
    # BA-I r2 at (0,-1): caps face S and E (N = F, E = C, S = C, W = F).  The
    # south cap closes the start city; BA-E r3 at (1,-1) closes the east cap.
    # The field between borders two distinct completed cities: 6.
    g = new_game(["BA-I", "BA-E"])
    ev = play(g, ["tile 0,-1 r2", "follower f1", "tile 1,-1 r3", "pass"])
    assert g.find(g.node_of(0, -1, "c1")) != g.find(g.node_of(0, -1, "c2"))
    (s,) = final_fields(ev)
    assert s.items == cities_item(2)
    assert s.points == (6, 0)


# ------------------------------------------------------------ merged fields
# X: BA-E field at (0,-1) (player 0).  Y: BA-U north field at (1,0) joined to
# the start's north field (player 1).  BA-V (2,0) r0; filler BA-U (-1,0).
# Z: the small field {WR,NL} of BA-V r1 at (2,-1).  BA-A r3 at (1,-1) (cloister,
# road east) has one field all round: it joins X (west), Y (south) and Z (east).
def merged_game(farmer_on_z: bool):
    g = new_game(["BA-E", "BA-U", "BA-V", "BA-U", "BA-V", "BA-A", "BA-U"])
    play(
        g,
        [
            "tile 0,-1 r2",
            "follower f1",
            "tile 1,0 r0",
            "follower f1",
            "tile 2,0 r0",
            "pass",
            "tile -1,0 r0",
            "pass",
            "tile 2,-1 r1",
            "follower f2" if farmer_on_z else "pass",
        ],
    )
    x, y, z = field_root(g, 0, -1, "f1"), field_root(g, 1, 0, "f1"), field_root(g, 2, -1, "f2")
    assert len({x, y, z}) == 3
    play(g, ["tile 1,-1 r3", "pass"])
    assert field_root(g, 0, -1, "f1") == field_root(g, 1, 0, "f1") == field_root(g, 2, -1, "f2")
    return g


def finish(g):
    """Last tile: BA-U west of the filler, extending the merged field (no new city)."""
    return play(g, ["tile -2,0 r0", "pass"])


def test_fields_joined_by_a_later_tile_merge_and_tied_farmers_share():
    g = merged_game(farmer_on_z=False)
    root = field_root(g, 1, -1, "f1")
    assert sorted(g.followers[n] for n in g.occupants[root]) == [0, 1]
    (s,) = final_fields(finish(g))
    assert s.items == cities_item(1)  # one city, bordered via X and via Y
    assert s.points == (3, 3)
    assert s.winners == (0, 1)
    assert s.returned == (1, 1)
    assert g.scores == [3, 3]


def test_fields_joined_by_a_later_tile_majority_of_farmers_wins():
    g = merged_game(farmer_on_z=True)
    root = field_root(g, 1, -1, "f1")
    assert sorted(g.followers[n] for n in g.occupants[root]) == [0, 0, 1]
    (s,) = final_fields(finish(g))
    assert s.items == cities_item(1)
    assert s.points == (3, 0)
    assert s.winners == (0,)
    assert s.returned == (2, 1)
    assert g.scores == [3, 0]


def test_merged_field_agrees_with_flood_fill():
    g = merged_game(farmer_on_z=True)
    brute = BruteFeatures(g)
    node = g.node_of(1, -1, "f1")
    assert set(brute.feature_of[node]) == set(g.feature_nodes(g.find(node)))


# --------------------------------------------------------- two cities
def test_field_bordering_two_completed_cities_scores_six():
    # BA-H at (0,-1): its south cap closes the start city, its north cap is
    # closed by BA-E at (0,-2).  The farmer between the caps borders both.
    g = new_game(["BA-H", "BA-E"])
    ev = play(g, ["tile 0,-1 r0", "follower f1", "tile 0,-2 r2", "pass"])
    (s,) = final_fields(ev)
    assert s.items == cities_item(2)
    assert s.points == (6, 0)
    assert g.scores == [6, 0]


def test_field_bordering_one_completed_and_one_open_city_scores_three():
    g = new_game(["BA-H", "BA-U"])
    ev = play(g, ["tile 0,-1 r0", "follower f1", "tile 1,0 r0", "pass"])
    (s,) = final_fields(ev)
    assert s.items == cities_item(1)
    assert s.points == (3, 0)
