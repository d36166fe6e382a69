"""Features: the incremental union-find over tile segments, and the followers standing on features.

Owns (see :data:`carc_env.core.state.STATE`): ``parent``, ``kind``,
``node_tile``, ``open``, ``pennants``, ``tiles``, ``adjacent_cities``,
``completed``, ``occupants``, ``followers``, ``guests``, ``supply``.

Every segment of a placed tile (city, road, field, building, river) is a
*node*; matching segments of neighbouring tiles are united
(:meth:`Features.union`) by the board's placement procedure.  Each root
carries its feature's aggregates: open edges (a city or road is complete when
none is left), its tiles, pennants, the followers on it (``occupants``: nodes;
``guests``: followers without a segment), and for fields the city nodes it
borders.  A union adds the aggregates up, the root with more tiles staying
root.  Followers move only through the methods here (from and to ``supply``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .actions import IllegalActionError

if TYPE_CHECKING:  # pragma: no cover
    from .config import RuleSet, TileInfo


class Features:
    """The feature half of :class:`~carc_env.core.Game` (a mixin: the fields live on the game)."""

    rules: RuleSet
    num_players: int
    placements: list[tuple[int, int, int, int, int]]
    board: dict[tuple[int, int], int]

    def reset_features(self, followers: int) -> None:
        """No node yet; every player holds ``followers`` followers."""
        self.parent: list[int] = []
        self.kind: list[int] = []
        self.node_tile: list[int] = []
        self.open: list[int] = []
        self.pennants: list[int] = []
        self.completed: set[int] = set()
        self.tiles: dict[int, set[int]] = {}
        self.occupants: dict[int, list[int]] = {}
        self.adjacent_cities: dict[int, set[int]] = {}
        self.followers: dict[int, int] = {}  # node -> owner
        self.guests: dict[int, list[int]] = {}  # root -> owners of followers on no segment (see add_guest)
        self.supply = [followers] * self.num_players

    def add_nodes(self, info: TileInfo, k: int) -> int:
        """Make the nodes of placement ``k`` (a tile with ``info``), each its own feature; returns their base."""
        base = len(self.parent)
        n = info.n
        self.parent.extend(range(base, base + n))
        self.kind.extend(info.kinds)
        self.node_tile.extend([k] * n)
        self.open.extend(info.open0)
        self.pennants.extend(info.pen0)
        tiles = self.tiles
        for i in info.scorable:
            tiles[base + i] = {k}
        for i, cities in info.fields:
            self.adjacent_cities[base + i] = {base + c for c in cities}
        return base

    # ------------------------------------------------------------------ union-find
    def find(self, x: int) -> int:
        """The root of node ``x`` (path halving)."""
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> int:
        """Make the features of nodes ``a`` and ``b`` one; returns the root (the one with more tiles)."""
        p = self.parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        while p[b] != b:
            p[b] = p[p[b]]
            b = p[b]
        if a == b:
            return a
        tiles = self.tiles
        ta = tiles.get(a)
        if ta is not None:
            tb = tiles[b]
            if len(ta) < len(tb):
                a, b, ta, tb = b, a, tb, ta
            ta |= tb
            del tiles[b]
            self.open[a] += self.open[b]
            self.pennants[a] += self.pennants[b]
        p[b] = a
        # root b joined root a: its followers, guests and bordering cities move to a
        occ = self.occupants
        ob = occ.pop(b, None)
        if ob is not None:
            oa = occ.get(a)
            if oa is None:
                occ[a] = ob
            else:
                oa.extend(ob)
        adj = self.adjacent_cities
        cb = adj.pop(b, None)
        if cb is not None:
            ca = adj.get(a)
            if ca is None:
                adj[a] = cb
            else:
                ca |= cb
        if self.guests:
            gb = self.guests.pop(b, None)
            if gb is not None:
                self.guests.setdefault(a, []).extend(gb)
        return a

    def link_features(self, a: int, b: int) -> int:
        """Make the features of nodes ``a`` and ``b`` one (royal gates link cities); returns the new root.

        Their aggregates add up: tiles (a tile in both counts once), open edges, pennants, followers
        and guests, bordering cities; the linked feature completes when its open edges reach 0.
        """
        return self.union(a, b)

    def root_array(self) -> np.ndarray:
        """The union-find root of every node as an int array (pointer jumping over a copy of the
        parent list, so the game is not changed; for vectorised readers such as encoders)."""
        root = np.fromiter(self.parent, dtype=np.intp, count=len(self.parent))
        while True:  # the depth halves each round
            nxt = root[root]
            if not (nxt != root).any():
                return root
            root = nxt

    def feature_nodes(self, root: int) -> list[int]:
        """All nodes of the feature with this root (linear scan; for tests and rendering)."""
        return [i for i in range(len(self.parent)) if self.find(i) == root]

    def feature_tiles(self, root: int) -> list[tuple[int, int]]:
        """Cells of the tiles of a feature, sorted."""
        ks = self.tiles.get(root)
        if ks is None:
            ks = {self.node_tile[i] for i in self.feature_nodes(root)}
        return sorted((self.placements[k][0], self.placements[k][1]) for k in ks)

    def node_of(self, x: int, y: int, segment: int | str) -> int:
        """Union-find node of a segment (index or name) of the tile at (x, y)."""
        k = self.board[(x, y)]
        _, _, t, _, base = self.placements[k]
        if isinstance(segment, str):
            segment = self.rules.tiles[t].segment_index(segment)
        return base + segment

    def is_completed(self, root: int) -> bool:
        return root in self.completed

    def counts_as_completed(self, root: int) -> bool:
        """Whether rules that count or compare completed features (the King) count feature ``root``;
        False for one an expansion leaves out (``uncounted_completion``)."""
        return not any(hook(self, root) for hook in self.rules.h_uncounted)

    def count_completed(self, kind: int) -> int:
        """Completed features of ``kind`` (``CITY``, ``ROAD``) on the board, each counted once,
        plus those expansions add through the ``extra_completed`` hook."""
        find, kinds = self.find, self.kind
        n = len({find(r) for r in self.completed if kinds[r] == kind and self.counts_as_completed(find(r))})
        for hook in self.rules.h_extra_completed:
            n += hook(self, kind)  # self is the Game
        return n

    def mark_closed(self, k: int) -> None:
        """Mark the cities and roads of placement ``k`` that are already closed as completed (setup
        only: a start tile facing the sea; nobody can occupy them, so nothing is scored)."""
        _, _, t, _, base = self.placements[k]
        for i in self.rules.tile_infos[t].scorable:
            root = self.find(base + i)
            if self.open[root] == 0:
                self.completed.add(root)

    # ------------------------------------------------------------------ followers
    def take_follower(self, player: int) -> None:
        """Take one follower from ``player``'s supply (for an expansion holding it somewhere else)."""
        if self.supply[player] <= 0:
            raise IllegalActionError(f"player {player} has no follower in supply")
        self.supply[player] -= 1

    def return_follower(self, player: int) -> None:
        """Give one follower held by an expansion back to ``player``'s supply."""
        if self.supply[player] >= self.rules.followers:
            raise ValueError(f"player {player} already has all {self.rules.followers} followers in supply")
        self.supply[player] += 1

    def deploy_follower(self, node: int, player: int) -> None:
        """A follower of ``player`` goes from the supply onto free segment ``node`` (the follower phase)."""
        self.followers[node] = player
        root = self.find(node)
        occ = self.occupants.get(root)
        if occ is None:
            self.occupants[root] = [node]
        else:  # pragma: no cover - spots exclude occupied features
            occ.append(node)
        self.supply[player] -= 1

    def add_follower(self, node: int, player: int) -> None:
        """Put a follower of ``player`` on segment ``node`` (for expansions moving followers onto
        features; the caller takes it from where it was, e.g. :meth:`take_follower`)."""
        if node in self.followers:
            raise ValueError(f"node {node} already holds a follower of player {self.followers[node]}")
        self.followers[node] = player
        self.occupants.setdefault(self.find(node), []).append(node)

    def add_guest(self, root: int, player: int) -> None:
        """Put a follower of ``player`` on feature ``root`` without a segment under it (a follower
        sent from off the board, e.g. from a quarter of the City of Carcassonne; the caller takes
        it from where it was).  It occupies the feature and counts for its majority like any
        follower, and goes back to its owner's supply when the feature's followers are removed."""
        self.guests.setdefault(self.find(root), []).append(player)

    def remove_followers(self, root: int) -> list[int]:
        """Return every follower on a feature to its owner; returns the count per player."""
        back = [0] * self.num_players
        nodes = self.occupants.pop(root, None)
        if nodes:
            for node in nodes:
                p = self.followers.pop(node)
                self.supply[p] += 1
                back[p] += 1
        if self.guests:
            for p in self.guests.pop(root, ()):
                self.supply[p] += 1
                back[p] += 1
        return back

    def follower_counts(self, root: int) -> list[int]:
        """Followers per player on a feature (segments and guests): who has the majority."""
        counts = [0] * self.num_players
        for node in self.occupants.get(root, ()):
            counts[self.followers[node]] += 1
        for p in self.guests.get(root, ()):
            counts[p] += 1
        return counts

    def follower_positions(self) -> list[tuple[int, int, int, int]]:
        """Followers on the board as (player, x, y, segment index)."""
        out = []
        for node, p in self.followers.items():
            k = self.node_tile[node]
            x, y, _, _, base = self.placements[k]
            out.append((p, x, y, node - base))
        return sorted(out)

    def followers_conserved(self) -> bool:
        """Supply + board + held by expansions = the followers of each player."""
        per = [0] * self.num_players
        for p in self.followers.values():
            per[p] += 1
        for owners in self.guests.values():
            for p in owners:
                per[p] += 1
        extra = [0] * self.num_players
        for held in self.rules.h_followers_held:
            for p, c in enumerate(held(self)):  # self is the Game
                extra[p] += c
        return all(self.supply[p] + per[p] + extra[p] == self.rules.followers for p in range(self.num_players))


__all__ = ["Features"]
