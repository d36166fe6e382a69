"""The Royal Gateways (plug-in ``royal_gateways``): King's and Queen's Gates link cities into one.

Parts: :mod:`.rules` (options, state, hooks), :mod:`.observe` (gate, linked-city
and waiting-city channels, gates placed), :mod:`.draw` (the gates' crowns, the
links between the parts of a linked city, status lines).  Tiles (placeholder
layouts): ``carc_env/data/tiles/royal_gateways.toml``; rules:
``docs/rules/royal_gateways.md``.
"""

from ...core.expansion import register
from .rules import KEY, GatewaysState, RoyalGateways, RoyalGatewaysOptions

Options = RoyalGatewaysOptions
register(RoyalGateways, package=__name__)

__all__ = ["KEY", "GatewaysState", "Options", "RoyalGateways", "RoyalGatewaysOptions"]
