"""The layering of DESIGN.md, checked on the source (AST): who may import whom, and who may name an expansion.

Layers, lowest first::

    core                 stdlib + numpy; the plug-in registry (core/registry.py) finds every plug-in by key
    plug-in rules        carc_env/expansions/<key>/ (but actions, observe, draw): core + its own package
    plug-ins' package    carc_env/expansions/__init__.py: core only (no list of the built-ins: the core's
                         registry discovers them, so nothing imports this package upward)
    encoding             core
    plug-in actions /    <key>/actions.py, <key>/observe.py: core + encoding + its own package
      observe
    render               core (+ Pillow)
    plug-in draw         <key>/draw.py: core + render + its own package
    fast                 the compiled engine: core + encoding (+ numba)
    plug-in fast         <key>/fast.py: core + fast + its own package
    policies             core + encoding
    registration         nothing of carc_env (+ gymnasium, pettingzoo): the ids, as entry-point strings
    env                  core + encoding + render + policies + fast + registration
                         (+ gymnasium, pettingzoo)
    baselines            env + policies
    integrations         core + env + baselines + registration (+ torch, ray, stable_baselines3,
                         sb3_contrib, gymnasium): the only modules that import an RL framework
    agents/              the public carc_env API only (no carc_env module imports agents)

No plug-in imports another plug-in.  ``encoding``, ``render``, ``env`` and the
other generic layers import no plug-in by name (only the registry) and never
write an expansion's key, nor a building kind or tag that only an expansion's
tiles declare, as a string; a plug-in names another plug-in's key only in its
``REQUIRES`` / ``CONFLICTS`` / ``START_COMBINES`` declarations.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import carc_env
from carc_env.core.config import ruleset
from carc_env.core.expansion import plugins, registry
from carc_env.core.game import GameConfig

ROOT = Path(carc_env.__file__).resolve().parent
PKG = ROOT.name
EXTERNAL_ONLY_IN = {  # third-party packages and the layers that may import them
    "gymnasium": {"env", "registration", "integrations"},
    "pettingzoo": {"env", "registration"},
    "torch": {"integrations"},
    "ray": {"integrations"},
    "stable_baselines3": {"integrations"},
    "sb3_contrib": {"integrations"},
    "PIL": {"render", "plugin_draw"},
    "numba": {"fast"},
    "agents": set(),
}
ALLOWED = {
    "core": {"core"},
    "plugin_rules": {"core"},
    "registry": {"core"},
    "encoding": {"core", "encoding"},
    "plugin_encoding": {"core", "encoding"},
    "render": {"core", "render"},
    "plugin_draw": {"core", "render"},
    "fast": {"core", "encoding", "fast"},
    "plugin_fast": {"core", "fast"},
    "policies": {"core", "encoding", "policies"},
    "search": {"core", "encoding", "policies", "fast", "search"},
    "registration": set(),
    "env": {"core", "encoding", "render", "policies", "fast", "env", "registration"},
    "baselines": {"env", "policies"},
    "integrations": {"core", "env", "baselines", "registration", "integrations"},
    "package": {"core", "registration"},
}
DECLARATIONS = {"REQUIRES", "CONFLICTS", "START_COMBINES"}
NOT_A_NAME = {  # the tile data's "count" attribute (copies in the set)
    ("carc_env.core.tiles", "count"),
    ("carc_env.expansions.maps_germany.mapfile", "count"),  # printed geometry written as tile data
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> tuple[str, str | None]:
    """(layer, plug-in package or None) of a module of carc_env."""
    parts = module.split(".")
    if len(parts) == 1:
        return "package", None
    top = parts[1]
    if top == "expansions":
        if len(parts) == 2:
            return "registry", None
        plugin = ".".join(parts[:3])
        leaf = parts[3] if len(parts) > 3 else ""
        if leaf in ("actions", "observe"):
            return "plugin_encoding", plugin
        if leaf == "draw":
            return "plugin_draw", plugin
        if leaf == "fast":
            return "plugin_fast", plugin
        return "plugin_rules", plugin
    if top in (
        "core",
        "encoding",
        "render",
        "env",
        "policies",
        "baselines",
        "registration",
        "integrations",
        "fast",
        "search",
    ):
        return top, None
    return "other", None  # a package added later: classify it here


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package path
                pkg = path.relative_to(ROOT.parent).with_suffix("").parts[: -node.level]
                base = ".".join(pkg + ((node.module,) if node.module else ()))
                # ``from . import a, b`` imports the submodules a and b
                out += [f"{base}.{a.name}" for a in node.names] if not node.module else [base]
            else:
                out.append(node.module or "")
    return out


SOURCES = sorted(ROOT.rglob("*.py"))


def test_every_module_has_a_layer():
    for f in SOURCES:
        layer, _ = _layer(_module_name(f))
        assert layer != "other", f"{f.relative_to(ROOT)}: give its package a layer in tests/core/test_layering.py"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_layers(path):
    me = _module_name(path)
    layer, plugin = _layer(me)
    for mod in _imports(path):
        top = mod.split(".")[0]
        if top in EXTERNAL_ONLY_IN:
            assert layer in EXTERNAL_ONLY_IN[top], f"{me} ({layer}) imports {mod}"
            continue
        if top != PKG:
            continue
        target, target_plugin = _layer(mod)
        if target_plugin is not None and target_plugin == plugin:
            continue  # inside its own plug-in package
        if target_plugin is not None and plugin is not None:
            raise AssertionError(f"plug-in module {me} imports another plug-in's module {mod}")
        if target == "plugin_rules":
            raise AssertionError(f"{me} ({layer}) imports the plug-in module {mod} by name; ask the registry")
        assert target in ALLOWED[layer], f"{me} ({layer}) imports {mod} ({target})"


def _declared_names() -> tuple[set[str], set[str]]:
    """Expansion keys, and building kinds / tags that only an expansion's (not the base game's) tiles declare."""
    keys = set(registry())
    base_tiles = ruleset(GameConfig()).tiles
    mine = {s.building for t in base_tiles for s in t.segments if s.building} | {
        tag for t in base_tiles for s in t.segments for tag in s.tags
    }
    theirs: set[str] = set()
    for key in keys:
        for t in ruleset(GameConfig(2, tuple(sorted({*_requires(key), key})))).tiles:
            for s in t.segments:
                theirs |= ({s.building} if s.building else set()) | set(s.tags)
    return keys, theirs - mine


def _requires(key: str) -> set[str]:
    out = set(registry()[key].REQUIRES)
    for r in list(out):
        out |= _requires(r)
    return out


def _string_constants(tree: ast.AST, skip_declarations: bool) -> list[tuple[int, str]]:
    """String constants other than docstrings (and, if asked, other than REQUIRES / CONFLICTS /
    START_COMBINES / DEFAULT_EXPANSIONS declarations)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                skip.add(id(body[0].value))  # a docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            allowed = DECLARATIONS if skip_declarations else {"DEFAULT_EXPANSIONS"}
            if names & allowed and node.value is not None:
                skip |= {id(n) for n in ast.walk(node.value)}
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
    ]


def test_no_expansion_name_outside_its_own_plug_in():
    keys, names = _declared_names()
    assert {"base", "count", "river2"} <= keys and {"church", "shrine", "darmstadtium"} <= names
    own_key = {p.package: k for k, p in plugins().items()}
    for f in SOURCES:
        me = _module_name(f)
        layer, plugin = _layer(me)
        tree = ast.parse(f.read_text())
        if plugin is None:
            for line, value in _string_constants(tree, skip_declarations=False):
                if (me, value) in NOT_A_NAME:
                    continue
                assert value not in keys, f"{me}:{line} names expansion {value!r}: add a hook or a plug-in part"
                if layer != "registry":
                    assert value not in names, f"{me}:{line} names {value!r}, which only a plug-in's tiles declare"
        else:
            mine = own_key.get(plugin)
            for line, value in _string_constants(tree, skip_declarations=True):
                if (me, value) in NOT_A_NAME:
                    continue
                assert value not in keys - {mine}, (
                    f"{me}:{line} names another expansion, {value!r}, outside REQUIRES / CONFLICTS / START_COMBINES"
                )


def test_the_compiled_engine_names_no_expansion():
    """``carc_env/fast/`` is the engine and the seam; every rule of a plug-in is in the plug-in's own ``fast``
    part.  Not even a comment, an identifier or a docstring of fast/ names an expansion (its key or its
    plug-in class, but the base game's and the word "count"), nor a building kind or tag only an
    expansion's tiles declare."""
    import re

    keys, names = _declared_names()
    words = (keys - {"base", "count"}) | {cls.__name__ for k, cls in registry().items() if k != "base"} | names
    pattern = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(sorted(map(re.escape, words))) + r")(?![A-Za-z0-9])", re.I)
    assert pattern.search("the River2 kernels") and pattern.search("G_KING_ROBBER = 3")
    fast = [f for f in SOURCES if _layer(_module_name(f))[0] == "fast"]
    assert len(fast) >= 5
    for f in fast:
        for line_no, line in enumerate(f.read_text().splitlines(), 1):
            m = pattern.search(line)
            assert m is None, (
                f"carc_env/fast/{f.name}:{line_no} names {m.group(0)!r}: move it to the plug-in's fast part"
            )


def test_agents_use_only_the_public_api():
    agents = ROOT.parent / "agents"
    for f in sorted(agents.glob("**/*.py")):
        for mod in _imports(f):
            if mod.startswith("carc_env"):
                private = [p for p in mod.split(".") if p.startswith("_")]
                assert not private, f"agents/{f.name} imports private module {mod}"


GAME_INTERNALS = {
    "supply", "scores", "events", "history", "parent", "kind", "open", "pennants", "tiles", "occupants", "followers",
    "guests", "completed", "completing", "adjacent_cities", "buildings", "building_neighbours", "board", "placements",
    "bounds", "rng",
}  # fmt: skip
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard", "setdefault"}


def _chain(node: ast.AST) -> list[str]:
    """The names along ``a.b[c].d``: ``["a", "b", "d"]``; empty for a plain name (a local variable)."""
    out = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
        node = node.value
    if not out and not isinstance(node, ast.Name):
        return []
    return ([node.id] if isinstance(node, ast.Name) else []) + out[::-1] if out else []


def test_plug_ins_change_the_game_only_through_its_methods():
    """No plug-in writes the game's supply, scores, events, board or feature tables, reads another
    object's private attributes, or monkey-patches the shared rule set (``Game.take_follower``,
    ``award``, ``emit``, ``RuleSet.cache`` ... are there for that)."""
    checked = 0
    for f in SOURCES:
        me = _module_name(f)
        if _layer(me)[1] is None:
            continue
        checked += 1
        for node in ast.walk(ast.parse(f.read_text())):
            where = f"{me}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                    f"{where} reads the private attribute {node.attr!r} of another object"
                )
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                chain = _chain(t)
                if "rules" in chain[:-1]:
                    raise AssertionError(f"{where} writes to the rule set: use RuleSet.cache")
                assert not set(chain[1:]) & GAME_INTERNALS or "ext" in chain or chain[:1] == ["self"], (
                    f"{where} writes {'.'.join(chain)}: use a Game method meant for expansions"
                )
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                chain = _chain(node.func.value)
                assert not set(chain[1:]) & GAME_INTERNALS or "ext" in chain or chain[:1] == ["self"], (
                    f"{where} calls {node.func.attr} on {'.'.join(chain)}: use a Game method meant for expansions"
                )
    assert checked >= 20


def test_the_built_in_plug_ins_are_discovered_not_listed():
    """Every subpackage of carc_env/expansions is a built-in plug-in; the package's __init__ lists none."""
    from carc_env.core.registry import builtin_keys

    folders = {p.parent.name for p in (ROOT / "expansions").glob("*/__init__.py") if not p.parent.name.startswith("_")}
    packages = {plugins()[k].package.split(".")[2] for k in builtin_keys()}
    assert packages == folders
    init = ast.parse((ROOT / "expansions" / "__init__.py").read_text())
    assert not [m for m in _imports(ROOT / "expansions" / "__init__.py") if m.count(".") >= 2 and "core" not in m], (
        "carc_env/expansions/__init__.py imports a plug-in: the core's registry discovers them"
    )
    assert init is not None
