"""Built-in expansions; importing this package registers them (see core.expansion).

The registry's order (this import order: the base game first, the others
alphabetically) fixes the order of tile types, and so the bag a seed deals.
"""

from . import base, count, darmstadt, king_robber, maps_germany, river2, shrines  # noqa: F401
