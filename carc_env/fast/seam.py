"""The seam between the compiled engine and the plug-ins' kernels.

Contract
--------
The engine (:mod:`carc_env.fast.kernels`) plays the base game and calls the
plug-ins at fixed points, the compiled hooks of :data:`HOOKS`, through the
module ``kernels.H``.  A plug-in's ``fast`` part gives one kernel per compiled
hook it takes part in (``SUPPORT.kernels``, :class:`~carc_env.fast.support.FastSupport`),
made with :func:`kernel`.  Every kernel of hook ``h`` has the signature
``h(T, S, g, pb, *args)``: the tables, the state, the game, ``pb`` the start of
the plug-in's block in the parameter vector ``T.P``, then the hook's arguments.
The block holds (``B_*``): the offset of the plug-in's per-game integers in
``S.ls``, of its tile columns in ``T.tile``, its first score-log code, then
its own parameters in the order of ``SUPPORT.own`` (:func:`own_positions`).

:func:`engine` composes, once per process, the kernels of every registered
plug-in that has a ``fast`` part: it writes a small Python module (the
*composed module*) with one function per compiled hook, which calls each
plug-in's kernel when the configuration enables it (``T.P[P_PLUG + i]``, the
plug-in's block start, is 0 when it is off; the hooks are inlined where the
engine calls them, so a hook no plug-in of the configuration takes part in
costs its flag checks, not a call), and the engine's entry points
(``step_chunks``, ``reset_range``...), and imports it.  One compiled engine
thus serves every configuration of the registered plug-ins: a configuration
switches its plug-ins on through its parameter vector, which costs a load and
a branch per hook call; compiling once is what keeps the test suite and a
user's first run short (a step specialised per configuration would compile
the whole engine again for each of the 32 combinations of the box).

The composed module's file name carries a hash of the engine's and every
composed plug-in's source (:func:`_sources`), and only its entry points (the
engine's, :data:`ENTRY_POINTS`, and the action features' and greedy's,
:data:`FEATURE_ENTRY_POINTS`) are cached on disk (Numba's ``cache=True``; the
kernels they call are compiled into them).  Each is compiled from the engine
kernel's own code, renamed to the composed module's file (:func:`entry`):
Numba invalidates a cache only when the file a function's code names changes,
so a change to any kernel gives a new file and a fresh compilation; and no
wrapper around the kernel means the whole engine is optimised and turned into
machine code once per entry point, not twice.  The kernels compile into LLVM IR
only, once each, and each entry point links its tree of them once
(:func:`_compilers`).  The module is written under
``$CARC_ENV_CACHE_DIR`` (default ``~/.cache/carc_env/fast``, else the
temporary directory).

Order: the composed hooks call the plug-ins in registry-key order; where two
enabled plug-ins take part in one hook, :func:`order_problem` refuses a
configuration whose expansion order (the Python engine's) differs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.registry import part
from ..core.registry import plugins as _registered


def _njit() -> Any:
    """numba.njit, imported on the first kernel (importing carc_env does not import Numba); None without
    Numba: the engine cannot run, and coverage still reads the plug-ins' declarations."""
    try:
        from numba import njit
    except ImportError:
        return None
    return njit


# Hook name -> (arguments after ``T, S, g, pb``, composition).  Compositions: "each" (every enabled
# plug-in's kernel, in order; returns nothing), "any" (every kernel runs; True if one returned True),
# "sum" (the integers returned, added), "veto" (each runs; the composed hook returns whether any ran),
# "first" (the plug-ins from position ``first`` on, in order, until one returns True: the composed hook
# returns its position, else -1), "owner" (only the kernel of the plug-in whose decision is open,
# ``S.gi[g, G_DPLUG]``: its integer, else 0),
# "override" (kernels run in order until one answers an integer >= 0, which is returned; -1: none did),
# "choice" (as "owner", -1 when the owner gives no kernel), "fsum" (the floats returned, added to 0.0).
HOOKS: dict[str, tuple[str, str]] = {
    "setup": ("", "each"),
    "placement_veto": ("t", "veto"),
    "after_placement": ("t, x, y, r", "each"),
    "no_follower": ("", "any"),
    "score_begin": ("", "each"),
    "on_completed": ("root, kind", "each"),
    "score_items": ("root, final", "sum"),
    "on_scored": ("root, kind, final", "each"),
    "score_end": ("", "each"),
    "extra_turn": ("", "any"),
    "final_scoring": ("", "each"),
    "observe": ("seat, board, glob", "each"),
    "field_cities": ("root", "sum"),
    "extra_completed": ("kind", "sum"),
    "decision_open": ("anchor, first", "first"),
    "decision_mask": ("mask", "owner"),
    "decision_apply": ("a", "owner"),
    "decision_random": ("", "owner"),
    "decision_apply_row": ("a, b, c", "owner"),
    "decision_pass": ("", "owner"),
    "greedy_decision": ("X, x", "choice"),
    "asset_value": ("p", "fsum"),
    "placement_links": ("t, x, y, r", "each"),
    "blocks_completion": ("root", "any"),
    "defers_scoring": ("root", "any"),
    "score_override": ("root, final", "override"),
    "uncounted_completion": ("root", "any"),
    "spot_veto": ("t, seg", "any"),
    "after_draw": ("t", "each"),
    "observe_windows": ("seat, windows", "each"),
    "setup_from_bag": ("", "each"),
    "after_setup_placement": ("t, x, y, r", "each"),
    "order_unseen": ("", "each"),
}
"""The compiled hooks, where the engine calls them:

* ``setup``: a game starts; the start tile is placed and the plug-in's integers are zero;
* ``placement_veto(t)``: tile ``t`` is drawn and its rotation masks per frontier slot
  (``S.ls[g, T.P[P_O_FMASK] + slot]``) hold the edge matches; clear the bits the plug-in forbids;
* ``after_placement(t, x, y, r)``: the tile is on the board (before the follower decision);
* ``no_follower() -> bool``: True when the player may not place a follower this turn;
* ``score_begin``: this turn's completed features (``S.ls[g, T.P[P_O_COMP] + i]``, ``G_NCOMP`` of
  them) are known and none is scored yet;
* ``on_completed(root, kind)``: the feature ``root`` is marked completed, before it is scored;
* ``score_items(root, final) -> int``: points added to the value of a feature being scored (each
  majority player gets them);
* ``on_scored(root, kind, final)``: feature ``root`` was scored (during the game or at its end) and
  its followers are back in their supplies;
* ``score_end``: the turn's features are scored;
* ``extra_turn() -> bool``: True when the same player plays the next turn;
* ``final_scoring``: the game's end, after the features are scored;
* ``observe(seat, board, glob)``: the plug-in's observation channels and global features for ``seat``;
* ``field_cities(root) -> int``: completed cities a field borders besides the board's (the reference's
  ``field_cities`` hook; may be negative: a linked city counted once);
* ``extra_completed(kind) -> int``: completed features of a kind besides the union-find's (the
  reference's ``extra_completed`` hook), for kernels that count them (``K.H.extra_completed``);
* the plug-ins' **decision phases** (the reference's decision stages at an anchor):

  - ``decision_open(anchor) -> bool``: the engine reached ``anchor``, one of the core's stage anchors
    (``kernels.A_AFTER_FOLLOWER``: the follower decision is made, completions not yet known;
    ``A_BEFORE_SCORE``: the turn's completions are known, none scored; ``A_AFTER_SCORE``: they are
    scored; ``A_END_TURN``: before the next player's turn; ``A_BEFORE_FINAL``: the bag is empty, before
    final scoring).  Return True to open a decision, having set the deciding
    seat ``S.gi[g, G_PLAYER]`` and the phase's position in the encoder's phases ``S.gi[g, G_DPHASE]``;
    False when the plug-in has no (more) decision here.  It is called again at the same anchor after
    each of its decisions is applied, so it keeps its own progress (several stages, several seats in
    turn) and returns False once done; then the next plug-in is asked;
  - ``decision_mask(mask) -> int``: set the legal entries of the flat action mask (its phase's range,
    from its own parameters); return the legal moves the range cannot express (``info
    ["actions_out_of_range"]``);
  - ``decision_apply(a) -> int``: apply flat action ``a`` (1), or refuse it leaving the state untouched
    (0); log it as a history row ``kernels.H_PLUG + plug-in position`` with its own ``a, b, c``
    (``FastSupport.history_action`` turns the row back into the reference's action);
  - ``decision_random()``: apply a uniformly random legal decision (play-outs, the benchmark);
  - ``decision_apply_row(a, b, c) -> int``: apply the move a history row of the plug-in names (1), or
    refuse it untouched (0): records and play-outs replay the reference's actions through it
    (``FastSupport.history_row`` writes the row of an action);
  - ``decision_pass() -> int``: apply the reference's ``Pass`` in the open decision when it is legal (1,
    logged as ``decision_apply`` logs it), else 0 leaving the state untouched: the one-ply play-out of
    the action features and greedy (:func:`carc_env.fast.features.one_ply_gain`) passes the turn's
    decisions through it, as :func:`carc_env.encoding.lookahead.one_ply_gain` does;
  - ``greedy_decision(X, x) -> int``: the flat action the plug-in's ``heuristics`` part (``greedy_action``)
    chooses in the open decision, or -1 for none (the greedy then picks uniformly, as
    :class:`~carc_env.policies.GreedyPolicy` does); slot ``x`` of the scratch state ``X`` is free for
    playing a choice out (:func:`carc_env.fast.features.copy_game`), as the reference plays it on a clone;
* ``asset_value(p) -> float``: the points-equivalent of what seat ``p`` holds in the plug-in's state (its
  ``heuristics`` part's ``asset_value``), which the compiled greedy adds to a placement's one-ply gain;
* ``placement_links(t, x, y, r)``: tile ``t`` is about to be placed at ``(x, y)`` in rotation ``r``
  (or a lookahead asks what that placement would join, :func:`carc_env.fast.lookahead.closes_feature`):
  give each feature the placement links to a segment of the new tile with
  :func:`carc_env.fast.kernels.add_link` (the Python ``placement_links``); the engine unites them right
  after laying the tile, before ``after_placement``;
* ``blocks_completion(root) -> bool``: True keeps a closed feature (or a full building) from completing
  this turn;
* ``defers_scoring(root) -> bool``: True keeps the followers of a feature completed now on it; the
  game's end scores it (``final_scoring`` of the engine scores every occupied root);
* ``score_override(root, final) -> int``: the whole value of a feature being scored, or -1 (the first
  plug-in answering >= 0 wins; ``score_items`` are not added then; the score log's tile and pennant
  counts are 0);
* ``uncounted_completion(root) -> bool``: True: rules counting or comparing completed features leave
  completed feature ``root`` out (:func:`carc_env.fast.kernels.counts_as_completed`);
* ``spot_veto(t, seg) -> bool``: True: segment ``seg`` of tile ``t``, just placed, takes no follower;
* ``after_draw(t)``: tile ``t`` was drawn for the turn's player (the reference's ``after_draw``: every
  drawn tile, the first one at setup and the ones then discarded included), before the placement vetoes;
* ``observe_windows(seat, windows)``: the plug-in's columns of the observation's ``windows`` tensor for
  ``seat`` (the engine zeroes it; the reference's ``fill_windows``).
* ``setup_from_bag``: every plug-in's ``setup`` ran and the draw order is loaded; lay tiles taken from it
  (the reference's ``setup_from_bag``: a map's start squares), before the first draw;
* ``after_setup_placement(t, x, y, r)``: a tile was laid at setup by no player (a map's start square,
  the reference's ``place_fixed(..., announce=True)``): plug-ins recording placed tiles record it.
* ``order_unseen``: the tiles left to draw (``S.ls[g, T.P[P_O_BAG] + i]``, ``G_BAG_I <= i < G_BAG_N``,
  next drawn first) were shuffled uniformly by a search's redeal (:mod:`carc_env.fast.tree`); impose
  on them what every player knows of the real order (the reference's ``order_unseen``: the river's
  tiles first).  A plug-in with a Python ``order_unseen`` hook and no such kernel keeps a search's
  redeal in Python (``FastPlayout.tree_covers``).

A plug-in's kernels that draw random numbers draw from the game's own generator (the reference's
``game.rng``, continued exactly: :mod:`carc_env.fast.rng`, ``FastSupport.random``).
"""

B_LS, B_TILE, B_AWARD, B_OWN = range(4)
"""Positions in a plug-in's parameter block: its integers in ``S.ls``, its tile columns in ``T.tile``,
its first score-log code, then its own parameters."""
MAX_PLUGINS = 16  # plug-ins one composed engine holds (the size of the block table in T.P)
AWARD_CODE0 = 10  # score-log codes of points awarded outside feature scoring start here (kinds are 0..4)

ENTRY_OPTS = {"cache": True, "nogil": True, "_nrt": False}
"""The entry points: cached on disk, GIL released; no reference counting (the kernels never allocate,
and passing reference counts of the state arrays would cost more than the rules)."""
INNER_OPTS = {"nogil": True, "_nrt": False, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
"""Everything the entry points call: compiled into them (no wrapper to call it from Python)."""

ENTRY_POINTS = ("reset_range", "step_one", "step_chunks", "observe_range", "masks_range", "play_random", "play_out")
FEATURE_ENTRY_POINTS = ("features_range", "greedy_range", "legal_counts", "step_games", "greedy_play_out")
"""The entry points of :mod:`carc_env.fast.features` (action features, greedy): composed and cached like
the engine's, since they call its kernels (a copy cached beside that module's own file would outlive a
change to a kernel or a plug-in)."""
TREE_ENTRY_POINTS = ("tree_run", "redeal_slot")
"""The entry points of :mod:`carc_env.fast.tree` (plain MCTS compiled whole, and its redeal alone for the
tests): composed and cached the same way."""


SPECIALISE = ("anchor", "first")
"""Kernel parameters whose constant arguments specialise the kernel (Numba compiles it per value and prunes
the branches it cannot take): the decision anchors, where most plug-ins' ``decision_open`` has nothing to do.
Other constants are passed as values (one compilation); a boolean constant always specialises."""

_parts: Any = None


def _compilers() -> Any:
    """``(make_kernel, entry_compiler)``: how :func:`kernel` and :func:`entry` compile (made on first use:
    importing carc_env does not import Numba).

    Numba compiles every jitted function on its own and finalises it with everything it calls: the
    callees' code is linked into the caller's module, which is optimised again and turned into machine
    code, so a call tree is optimised once per function above it, and a kernel compiled for two argument
    types compiles its whole subtree twice.  For kernels, which only ever run inside an entry point, this
    changes three things (``docs/results/compile.md`` measures each):

    * **one compilation per kernel, not per argument type**: a call from compiled code is typed with every
      signed integer argument as int64 and every integer constant as a value (except the parameters named in
      :data:`SPECIALISE`; a boolean constant is kept too), so an int32 read from an array, an int64 and a
      constant share one compilation; the caller converts the argument;
    * **IR only**: a kernel's library runs LLVM's function passes on the kernel's own code and stops there:
      no linking of its callees, no module optimisation, no machine code, no C wrapper (:class:`IRLibrary`);
    * **one link and one optimisation per entry point**: an entry point's library gathers its whole tree of
      kernel libraries (each once), links them into its module and optimises and compiles that module once
      (:class:`EntryLibrary`)."""
    global _parts
    if _parts is not None:
        return _parts
    import llvmlite.binding as ll
    from numba.core import types
    from numba.core.codegen import JITCodeLibrary
    from numba.core.compiler import Compiler
    from numba.core.registry import CPUDispatcher

    def canonical(t: Any, keep_literal: bool) -> Any:
        if isinstance(t, types.BooleanLiteral):
            return t
        if isinstance(t, types.Literal) and not keep_literal:
            t = types.unliteral(t)
        if isinstance(t, types.Integer) and t.signed and not isinstance(t, types.Literal):
            return types.int64
        return t

    class NoEnv:
        """The codegen a kernel's lowering sees: it skips setting the environment of a function that never
        enters the JIT engine (kernels without NRT never read it)."""

        def __init__(self, codegen: Any) -> None:
            self._codegen = codegen

        def set_env(self, env_name: str, env: Any) -> None:
            pass

        def __getattr__(self, name: str) -> Any:
            return getattr(self._codegen, name)

    def tree(libraries: list[Any]) -> tuple[list[Any], list[Any]]:
        """The kernel libraries under ``libraries``, each once, callers before callees (reverse post-order:
        LLVM links a kernel's linkonce_odr code only where a module linked before calls it), and the other
        libraries they link (Numba's own, each already holding what it calls)."""
        order: list[Any] = []
        others: list[Any] = []
        seen: set[int] = set()

        def visit(lib: Any) -> None:
            if id(lib) in seen:
                return
            seen.add(id(lib))
            if not isinstance(lib, IRLibrary):
                others.append(lib)
                return
            lib._ensure_finalized()
            for callee in lib._linking_libraries:
                visit(callee)
            order.append(lib)

        for lib in libraries:
            visit(lib)
        return order[::-1], others

    class IRLibrary(JITCodeLibrary):
        """A kernel's code library: its own function-optimised IR and the libraries it calls, for an entry
        point to link."""

        _tree_module: Any = None
        _always_inline = False
        _marked = False

        @property
        def codegen(self) -> Any:
            return NoEnv(self._codegen)

        def finalize(self) -> None:
            self._raise_if_finalized()
            for lib in self._linking_libraries:  # finalized when added
                self._reload_init.update(lib._reload_init)
            self._finalized = True

        def get_pointer_to_function(self, name: str) -> int:
            self._ensure_finalized()
            return 0  # not executable on its own: no wrapper, no machine code

        def own_module(self) -> Any:
            """This kernel's code alone, linkable (linkonce_odr): what an entry point links.  The code of a
            kernel made with :func:`inline_kernel` is marked ``alwaysinline``: LLVM inlines it wherever it is
            called."""
            mod = JITCodeLibrary._get_module_for_linking(self)
            if self._always_inline and not self._marked:
                for fn in mod.functions:
                    if not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr:
                        fn.add_function_attribute("alwaysinline")
                self._marked = True
            return mod

        def _get_module_for_linking(self) -> Any:
            """What another Numba function calling this kernel links (a test's own ``@njit`` function): the
            kernel with its whole tree."""
            self._ensure_finalized()
            if self._tree_module is None:
                mod = self._final_module.clone()
                kernels, others = tree(self._linking_libraries)
                for lib in kernels:
                    mod.link_in(lib.own_module(), preserve=True)
                for lib in others:
                    mod.link_in(lib._get_module_for_linking(), preserve=True)
                for fn in mod.functions:
                    if not fn.is_declaration and fn.linkage == ll.Linkage.external:
                        fn.linkage = "linkonce_odr"
                self._tree_module = mod
            return self._tree_module

    class EntryLibrary(JITCodeLibrary):
        """An entry point's code library: links every kernel library of its call tree once."""

        def finalize(self) -> None:
            kernels, others = tree(self._linking_libraries)
            for lib in kernels:
                self._reload_init.update(lib._reload_init)
                self._final_module.link_in(lib.own_module(), preserve=True)
            self._linking_libraries = others
            super().finalize()

    def compiler(library_class: type) -> type:
        class KernelCompiler(Compiler):
            def compile_extra(self, func: Any) -> Any:
                if self.state.library is None:
                    lib = library_class(self.state.targetctx.codegen(), func.__qualname__)
                    lib._always_inline = getattr(func, "_always_inline", False)
                    lib.enable_object_caching()
                    self.state.library = lib
                return super().compile_extra(func)

        return KernelCompiler

    class Kernel(CPUDispatcher):
        def get_call_template(self, args: Any, kws: Any) -> Any:
            names = self._specialise
            if names is None:
                params = list(inspect.signature(self.py_func).parameters)
                names = self._specialise = tuple(p in SPECIALISE for p in params)
            return super().get_call_template(
                tuple(canonical(a, i < len(names) and names[i]) for i, a in enumerate(args)),
                {k: canonical(v, k in SPECIALISE) for k, v in kws.items()},
            )

    kernel_compiler = compiler(IRLibrary)

    def make_kernel(fn: Any, **opts: Any) -> Any:
        k = Kernel(
            py_func=fn,
            locals={},
            targetoptions={"nopython": True, **INNER_OPTS, **opts},
            pipeline_class=kernel_compiler,
        )
        k._specialise = None
        return k

    _parts = (make_kernel, compiler(EntryLibrary))
    return _parts


def kernel(fn: Any) -> Any:
    """Decorator of a plug-in kernel or an engine function (compiled into the entry points, once per
    process: :func:`_compilers`).  Without Numba it leaves the function as it is: the declarations stay
    importable (coverage says why not)."""
    return fn if _njit() is None else _compilers()[0](fn)


def inline_kernel(fn: Any) -> Any:
    """:func:`kernel` for a hot, small kernel: typed once per specialisation, as a kernel is, and inlined by
    LLVM wherever it is called (``alwaysinline``), so a call costs no argument passing.  :func:`inline`
    inlines too, but in Numba's IR, so Numba types the body again at every call site: a helper under a
    specialised caller (Count's ``decision_open`` under the 10 specialisations of ``open_decision``) was
    typed 10 times (``docs/results/compile.md``, session 9)."""
    fn._always_inline = True
    return kernel(fn)


def inline(fn: Any) -> Any:
    """A function inlined in Numba's IR where it is called, never compiled alone: the composed hooks (a few
    flag checks each).  A helper of the engine or a plug-in is an :func:`inline_kernel` instead."""
    njit = _njit()
    return fn if njit is None else njit(inline="always", **INNER_OPTS)(fn)


def own_positions(names: tuple[str, ...]) -> tuple[int, ...]:
    """Block positions of a plug-in's own parameters (``T.P[pb + position]``)."""
    return tuple(B_OWN + i for i in range(len(names)))


def support(key: str) -> Any:
    """The ``SUPPORT`` of the plug-in registered as ``key``, or None when it has no ``fast`` part."""
    module = part(key, "fast")
    return None if module is None else module.SUPPORT


_index: dict[str, int] | None = None


def plugin_index() -> dict[str, int]:
    """``{key: position}`` of the plug-ins the composed engine holds: every plug-in with a ``fast`` part
    registered when this is first called (in key order).  Fixed for the process from then on."""
    global _index
    if _index is None:
        keys = [k for k in sorted(_registered()) if support(k) is not None]
        if len(keys) > MAX_PLUGINS:
            raise RuntimeError(f"the compiled engine composes at most {MAX_PLUGINS} plug-ins, {len(keys)} have one")
        _index = {k: i for i, k in enumerate(keys)}
    return _index


def award_codes() -> dict[tuple[str, str], int]:
    """``{(key, score-item kind): score-log code}`` of every composed plug-in's awards."""
    out: dict[tuple[str, str], int] = {}
    code = AWARD_CODE0
    for key in plugin_index():
        for kind in support(key).awards:
            out[(key, kind)] = code
            code += 1
    return out


def order_problem(keys: list[str]) -> str | None:
    """None if the composed hooks call these enabled plug-ins in their expansion order ``keys``, else why not."""
    index = plugin_index()
    for hook in HOOKS:
        takers = [k for k in keys if hook in support(k).kernels]
        if takers != sorted(takers, key=index.__getitem__):
            return (
                f"plug-ins {takers} take part in compiled hook {hook!r} in another order than the compiled "
                "engine calls them"
            )
    return None


# ------------------------------------------------------------------ the composed module
def _alias(key: str) -> str:
    """The composed module's name for a plug-in's fast part."""
    return f"fast_{key}" if key.isidentifier() else f"fast_{plugin_index()[key]}"


def _source() -> str:
    from . import kernels as K
    from .tables import P_PLUG

    index = plugin_index()
    mods = {k: part(k, "fast").__name__ for k in index}
    head = [
        f'"""The compiled engine composed with the plug-ins {list(index)} (generated by carc_env.fast.seam)."""',
        "from carc_env.fast import kernels as K",
        "from carc_env.fast.seam import inline",
        *(f"import {m} as {_alias(k)}" for k, m in mods.items()),
        f"P_PLUG = {P_PLUG}",
    ]
    lines: list[str] = []
    for hook, (args, how) in HOOKS.items():
        extra = f", {args}" if args else ""
        lines += ["", "", "@inline", f"def {hook}(T, S, g{extra}):"]
        lines += {
            "each": [],
            "veto": ["    ran = False"],
            "any": ["    out = False"],
            "sum": ["    out = 0"],
            "first": [],
            "owner": ["    owner = S.gi[g, K.G_DPLUG]"],
            "override": ["    out = -1"],
            "choice": ["    owner = S.gi[g, K.G_DPLUG]"],
            "fsum": ["    out = 0.0"],
        }[how]
        for key, i in index.items():
            if hook not in support(key).kernels:
                continue
            fn = f"{hook}_{_alias(key)}"
            head.append(f"{fn} = {_alias(key)}.SUPPORT.kernels[{hook!r}]")  # compiled code calls names, not dicts
            mine = extra if how != "first" else ", " + args.rsplit(",", 1)[0]  # "first" is the engine's
            call = f"{fn}(T, S, g, pb{mine})"
            lines.append(f"    pb = T.P[P_PLUG + {i}]")
            lines += {
                "each": ["    if pb:", f"        {call}"],
                "veto": ["    if pb:", f"        {call}", "        ran = True"],
                "any": [f"    if pb and {call}:", "        out = True"],
                "sum": ["    if pb:", f"        out += {call}"],
                "first": [f"    if pb and first <= {i} and {call}:", f"        return {i}"],
                "owner": [f"    if pb and owner == {i}:", f"        return {call}"],
                "override": ["    if pb and out < 0:", f"        out = {call}"],
                "choice": [f"    if pb and owner == {i}:", f"        return {call}"],
                "fsum": ["    if pb:", f"        out += {call}"],
            }[how]
        lines.append(
            {
                "each": "    return",
                "veto": "    return ran",
                "any": "    return out",
                "sum": "    return out",
                "first": "    return -1",
                "owner": "    return 0",
                "override": "    return out",
                "choice": "    return -1",
                "fsum": "    return out",
            }[how]
        )
    from . import features as F
    from . import tree as R

    head.append("from carc_env.fast import features as F")
    head.append("from carc_env.fast import tree as R")
    head.append("from carc_env.fast.seam import entry")
    lines.append("")
    for mod, names in (("K", ENTRY_POINTS), ("F", FEATURE_ENTRY_POINTS), ("R", TREE_ENTRY_POINTS)):
        for name in names:
            params = ", ".join(inspect.signature(getattr({"K": K, "F": F, "R": R}[mod], name).py_func).parameters)
            lines.append(f"{name} = entry({mod}.{name}, __file__)  # ({params})")
    lines = head + lines
    return "\n".join(lines) + "\n"


def entry(fn: Any, path: str) -> Any:
    """The entry point compiled from kernel ``fn``'s own code (cached on disk, GIL released), its cache
    keyed by the composed module's file ``path``.

    Numba keys a function's disk cache by the file its code names and that file's time stamp: a
    kernel's code renamed to the composed module's file (whose name holds the hash of every source) gets
    a fresh compilation whenever a kernel or a plug-in changes.  Compiling the kernel's code itself,
    rather than a wrapper calling the kernel, spares a second optimisation and code generation of the
    whole engine per entry point (Numba finalises every compiled function with everything it calls)."""
    import types

    py = fn.py_func
    code = py.__code__.replace(co_filename=str(path))
    clone = types.FunctionType(code, py.__globals__, py.__name__, py.__defaults__, py.__closure__)
    clone.__qualname__ = py.__qualname__
    clone.__doc__ = py.__doc__
    return _njit()(**ENTRY_OPTS, pipeline_class=_compilers()[1])(clone)


def _cache_dir() -> Path:
    env = os.environ.get("CARC_ENV_CACHE_DIR")
    candidates = [Path(env)] if env else []
    candidates += [
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "carc_env" / "fast",
        Path(tempfile.gettempdir()) / "carc_env_fast",
    ]
    for d in candidates:
        try:
            d.mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    raise RuntimeError(
        f"no writable directory for the compiled engine among {[str(c) for c in candidates]}; set CARC_ENV_CACHE_DIR"
    )


def _sources() -> list[Path]:
    """The files whose change must give a fresh compilation: the engine's kernels and tables, the action
    features' and every composed plug-in's package (its fast part reads constants from its other modules,
    and compiled code freezes them)."""
    files = [
        Path(__file__).with_name(n)
        for n in (
            "kernels.py",
            "lookahead.py",
            "seam.py",
            "tables.py",
            "features.py",
            "tree.py",
            "atomic.py",
            "rng.py",
            "printed.py",
        )
    ]
    for k in plugin_index():
        files += sorted(Path(part(k, "fast").__file__).parent.glob("*.py"))
    return files


_engine: ModuleType | None = None


def engine() -> ModuleType:
    """The composed module (entry points and composed hooks), written and imported on first use."""
    global _engine
    if _engine is not None:
        return _engine
    from . import kernels as K

    src = _source()
    digest = hashlib.sha256(src.encode())
    for path in _sources():
        digest.update(path.read_bytes())
    name = f"carc_env_fast_composed_{digest.hexdigest()[:16]}"
    path = _cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != src:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)  # atomic: another process may be writing the same file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    K.H = module  # the engine's hook calls resolve here when the entry points compile
    from .precompile import arrange

    arrange(module, path)  # a first compile: a helper process compiles some entry points meanwhile
    _engine = module
    return module


__all__ = [
    "B_AWARD",
    "B_LS",
    "B_OWN",
    "B_TILE",
    "HOOKS",
    "award_codes",
    "engine",
    "inline",
    "inline_kernel",
    "kernel",
    "own_positions",
    "plugin_index",
    "support",
]
