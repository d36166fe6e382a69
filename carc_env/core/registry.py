"""The plug-in registry: every expansion is found by its key here, and each plug-in's parts by name.

:func:`register` records an :class:`~carc_env.core.expansion.Expansion`
subclass under its ``KEY`` together with the *package* holding its parts.
The built-in plug-ins are the subpackages of ``carc_env/expansions/``:
:func:`load_builtins` discovers and imports them (``import carc_env`` calls
it), so adding a folder there adds a plug-in with no list to edit.  A plug-in
from anywhere else registers the same way (``register(MyExpansion,
package="my_pkg")`` from its own code), or is found through the
``carc_env.expansions`` entry-point group when a configuration names a key
nobody has registered yet (:func:`load_entry_points`).

The upper layers (codec, encoder, renderers, compiled engine, greedy
baseline) never import a plug-in by name: they ask :func:`part` /
:func:`parts` / :func:`all_parts` for a plug-in's part, which imports
``<package>.<part>`` on first use.  The parts (each optional):

``actions``     ``PHASE_CODECS``: the fixed action range of each decision phase it adds
``observe``     ``Observation``: its observation planes and global features
``draw``        ``Drawing``: its text-board and picture drawing
``heuristics``  ``asset_value`` / ``greedy_action`` for the greedy baseline
``fast``        ``SUPPORT``: what the compiled engine reproduces of the plug-in

This module imports nothing of carc_env at import time (the hook protocol,
:mod:`carc_env.core.expansion`, re-exports its names).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
from collections.abc import Collection
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .config import RuleSet
    from .expansion import Expansion


@dataclasses.dataclass(frozen=True)
class Plugin:
    """A registered expansion: its class and the package holding its parts (actions, observe, draw)."""

    cls: type[Expansion]
    package: str


_REGISTRY: dict[str, Plugin] = {}
_generation = 0  # bumped on every change, so cached rule sets of a changed key are rebuilt
ENTRY_POINT_GROUP = "carc_env.expansions"


def register(cls: type[Expansion] | None = None, *, package: str | None = None) -> Any:
    """Make an expansion available under ``cls.KEY``; usable as ``@register`` or ``register(cls, package=...)``.

    ``package`` is the import path whose submodules ``actions``, ``observe`` and ``draw`` hold the
    plug-in's phase codecs, observation planes and drawing (each optional); default: the module
    defining ``cls``.  Registering another class under a key already taken raises ``ValueError``
    (call :func:`unregister` first to replace one on purpose).
    """

    def do(c: type[Expansion]) -> type[Expansion]:
        global _generation
        if not (isinstance(c, type) and issubclass(c, _protocol())):
            raise TypeError(f"register() needs an Expansion subclass, got {c!r}")
        if not isinstance(c.KEY, str) or not c.KEY:
            raise ValueError(f"{c.__name__} has no KEY (a non-empty string)")
        old = _REGISTRY.get(c.KEY)
        pkg = package or c.__module__
        if old is not None and old.cls is not c and _qualname(old.cls) != _qualname(c):
            raise ValueError(
                f"expansion key {c.KEY!r} is already registered by {_qualname(old.cls)}; "
                f"choose another KEY for {_qualname(c)} (or unregister({c.KEY!r}) first)"
            )
        _REGISTRY[c.KEY] = Plugin(c, pkg)
        _generation += 1
        return c

    return do if cls is None else do(cls)


def unregister(key: str) -> None:
    """Remove an expansion from the registry (tests; replacing a plug-in on purpose)."""
    global _generation
    if key not in _REGISTRY:
        raise KeyError(f"no expansion {key!r} is registered; registered: {sorted(_REGISTRY)}")
    del _REGISTRY[key]
    _generation += 1


def _protocol() -> type[Expansion]:
    from .expansion import Expansion  # imported late: expansion.py re-exports this module's names

    return Expansion


def _qualname(c: type) -> str:
    return f"{c.__module__}.{c.__qualname__}"


def registry() -> dict[str, type[Expansion]]:
    """Registered expansions by key (``carc_env/__init__`` imports the built-in ones)."""
    return {k: p.cls for k, p in _REGISTRY.items()}


def plugins() -> dict[str, Plugin]:
    """Registered plug-ins (class and package) by key."""
    return dict(_REGISTRY)


BUILTIN_PACKAGE = __name__.rsplit(".", 2)[0] + ".expansions"
"""The package whose subpackages are the built-in plug-ins (``carc_env.expansions``)."""
_builtins_loaded = False


def load_builtins() -> None:
    """Import every subpackage of :data:`BUILTIN_PACKAGE` once (each registers itself): the built-in
    plug-ins are discovered from the package's folder, not listed by hand."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    package = importlib.import_module(BUILTIN_PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.ispkg and not info.name.startswith("_"):
            importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}")


def builtin_keys() -> tuple[str, ...]:
    """Keys of the built-in plug-ins (those under :data:`BUILTIN_PACKAGE`, the base game included), sorted."""
    load_builtins()
    prefix = BUILTIN_PACKAGE + "."
    return tuple(sorted(k for k, p in _REGISTRY.items() if p.package.startswith(prefix)))


def generation() -> int:
    """A number that changes whenever the registry changes (rule-set caches key on it)."""
    return _generation


def load_entry_points(wanted: Collection[str] = ()) -> None:
    """Import the plug-ins advertised in the ``carc_env.expansions`` entry-point group.

    An entry point's name is the expansion key; its value a module (importing it registers the
    plug-in) or an :class:`Expansion` subclass (registered with its module as the package).  Only
    entry points named in ``wanted`` are loaded (all of them if ``wanted`` is empty).
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if wanted and ep.name not in wanted or ep.name in _REGISTRY:
            continue
        obj = ep.load()
        if isinstance(obj, type) and issubclass(obj, _protocol()) and obj.KEY not in _REGISTRY:
            register(obj, package=ep.module)


PARTS = ("actions", "observe", "draw", "heuristics", "fast")
"""The parts a plug-in package may have (see the module docstring)."""
_parts: dict[tuple[str, str], ModuleType | None] = {}


def part(key: str, name: str) -> ModuleType | None:
    """The ``name`` part (one of :data:`PARTS`) of the plug-in registered as ``key``, imported on first
    use; None if the plug-in has no such part."""
    if name not in PARTS:
        raise ValueError(f"unknown plug-in part {name!r}; parts are {PARTS}")
    plugin = _REGISTRY.get(key)
    if plugin is None:
        raise KeyError(f"no expansion {key!r} is registered; registered: {sorted(_REGISTRY)}")
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
    for key in sorted(_REGISTRY):
        module = part(key, name)
        if module is not None:
            out.append((key, module))
    return out
