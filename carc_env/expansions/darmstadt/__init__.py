"""Darmstadt promo (plug-in ``darmstadt``): the Darmstadtium city and two churches.

Parts: :mod:`.rules` (options, state, hooks, the church-bonus stages),
:mod:`.observe` (the ``darmstadtium`` channel), :mod:`.draw` (the
Darmstadtium element square, the church's letter, roof and cross).  Tiles:
``carc_env/data/tiles/darmstadt.toml``; rules: ``docs/rules/darmstadt.md``.
"""

from ...core.expansion import register
from .rules import KEY, Darmstadt, DarmstadtOptions, DarmstadtState

Options = DarmstadtOptions
register(Darmstadt, package=__name__)

__all__ = ["KEY", "Darmstadt", "DarmstadtOptions", "DarmstadtState", "Options"]
