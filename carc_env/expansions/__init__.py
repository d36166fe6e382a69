"""Expansions as plug-ins: the built-in ones live here, one subpackage each.

Every subpackage of this package is a built-in plug-in:
:func:`carc_env.core.registry.load_builtins` (called by ``import carc_env``)
discovers and imports them, so there is no list to edit.  Each is one package,
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
is ``docs/rules/<key>.md``.  The codec, the encoder, the renderers and the
compiled engine never import a plug-in by name (nor this package): they ask the
core's registry (:func:`carc_env.core.registry.part`) for the part of each
enabled expansion, which imports ``<package>.<part>`` on first use (the package
a plug-in registered with, so a plug-in outside ``carc_env`` works the same).
``part``, ``parts``, ``all_parts`` and ``PARTS`` stay importable from here.
"""

from __future__ import annotations

from ..core.registry import PARTS, all_parts, part, parts

__all__ = ["PARTS", "all_parts", "part", "parts"]
