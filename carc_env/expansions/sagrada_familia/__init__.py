"""The Sagrada Familia (plug-in ``sagrada_familia``): one tile whose city may never be completed.

Parts: :mod:`.rules` (options, state, hooks), :mod:`.observe` (the Sagrada
Familia's tile and city channels, its state), :mod:`.draw` (the basilica's
towers, the city's outline, a status line).  Tile (probable layout):
``carc_env/data/tiles/sagrada_familia.toml``; rules: ``docs/rules/sagrada_familia.md``.
"""

from ...core.expansion import register
from .rules import KEY, SagradaFamilia, SagradaFamiliaOptions, SagradaState

Options = SagradaFamiliaOptions
register(SagradaFamilia, package=__name__)

__all__ = ["KEY", "Options", "SagradaFamilia", "SagradaFamiliaOptions", "SagradaState"]
