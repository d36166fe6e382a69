"""Expansions as plug-ins: the built-in ones, and how the upper layers find a plug-in's parts.

Importing this package registers the built-in plug-ins (see
:mod:`carc_env.core.expansion`).  Each is one package,
``carc_env/expansions/<key>/``:

``__init__.py``
    the key, the options, the registration (``register(cls, package=__name__)``)
``rules.py``
    options dataclass, typed state, hooks, decision stages, action classes and events
``actions.py`` (optional)
    ``PHASE_CODECS``: the fixed action range of each decision phase it adds
    (:class:`carc_env.encoding.PhaseCodec` factories)
``observe.py`` (optional)
    ``Observation``: an :class:`carc_env.encoding.ObservationExtension`; its module docstring
    documents every channel and global feature it adds
``draw.py`` (optional)
    ``Drawing``: a :class:`carc_env.render.Drawing` (text and picture)
``heuristics.py`` (optional)
    what the greedy baseline needs to play the plug-in: ``asset_value(game, player) -> float``
    (points-equivalent of what a player holds in the plug-in's state, e.g. glass tokens) and
    ``greedy_action(game) -> Action | None`` (a one-ply choice in the plug-in's own decision
    phases); core and its own package only, like ``rules.py``
``fast.py`` (optional)
    ``SUPPORT``: a :class:`carc_env.fast.support.FastSupport`, what the compiled engine
    reproduces of the plug-in (without it, configurations with the plug-in run on the Python engine)

Tile data stays data (``carc_env/data/tiles/<key>.toml``) and the rules text
is ``docs/rules/<key>.md``.  The codec, the encoder and the renderers never
import a plug-in by name: they ask :func:`part` for the part of each enabled
expansion, which imports ``<package>.<part>`` on first use (the package a
plug-in registered with, so a plug-in outside ``carc_env`` works the same).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

from ..core.expansion import plugins

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import RuleSet
    from ..core.expansion import Expansion

PARTS = ("actions", "observe", "draw", "heuristics", "fast")
_parts: dict[tuple[str, str], ModuleType | None] = {}


def part(key: str, name: str) -> ModuleType | None:
    """The ``name`` part (``"actions"``, ``"observe"``, ``"draw"``, ``"heuristics"`` or ``"fast"``) of
    the plug-in registered as ``key``, imported on first use; None if the plug-in has no such part."""
    if name not in PARTS:
        raise ValueError(f"unknown plug-in part {name!r}; parts are {PARTS}")
    plugin = plugins().get(key)
    if plugin is None:
        raise KeyError(f"no expansion {key!r} is registered")
    cache_key = (plugin.package, name)
    if cache_key in _parts:
        return _parts[cache_key]
    full = f"{plugin.package}.{name}"
    try:
        spec = importlib.util.find_spec(full)
    except ModuleNotFoundError:  # the package is a plain module: it has no parts
        spec = None
    module = importlib.import_module(full) if spec is not None else None
    _parts[cache_key] = module
    return module


def parts(rules: RuleSet, name: str) -> list[tuple[Expansion, ModuleType]]:
    """``(expansion, part module)`` of every enabled expansion that has the part, in expansion order."""
    out = []
    for exp in rules.expansions:
        module = part(exp.KEY, name)
        if module is not None:
            out.append((exp, module))
    return out


def all_parts(name: str) -> list[tuple[str, ModuleType]]:
    """``(key, part module)`` of every registered plug-in that has the part (drawing styles of
    building kinds and tags, which belong to the tile data rather than to one game)."""
    out = []
    for key in sorted(plugins()):
        module = part(key, name)
        if module is not None:
            out.append((key, module))
    return out


# The built-in plug-ins (the base game first; the order of registration does not matter).
from . import (  # noqa: E402, F401
    base,
    count,
    darmstadt,
    king_robber,
    maps_germany,
    river2,
    royal_gateways,
    sagrada_familia,
    shrines,
    stained_glass,
)

__all__ = ["PARTS", "all_parts", "part", "parts"]
