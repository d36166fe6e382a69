"""Toll roads: an example expansion written outside ``carc_env`` (the rule is invented, not Carcassonne's).

Importing this package registers it under the key ``tolls``; then
``carc_env.env(expansions=("base", "tolls"))`` plays it.  Parts, found by
``carc_env`` through the registry (``register(..., package=__name__)``):

* :mod:`.rules`: options, typed state, hooks, the ``tolls_collect`` decision, its action and event;
* :mod:`.actions`: the fixed action range of ``tolls_collect``;
* :mod:`.observe`: its board channel and global features;
* :mod:`.draw`: its status line and the toll house's picture;
* ``tolls.toml``: its two tiles (given to the core by absolute path).
"""

from carc_env.core.expansion import register

from .rules import KEY, CollectToll, TollBanked, TollOptions, TollRoads, TollState

register(TollRoads, package=__name__)

__all__ = ["KEY", "CollectToll", "TollBanked", "TollOptions", "TollRoads", "TollState"]
