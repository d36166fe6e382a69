"""The layering of DESIGN.md: the core imports no upper layer and never names an expansion."""

from __future__ import annotations

import ast
from pathlib import Path

import carc_env
from carc_env.core.expansion import registry

ROOT = Path(carc_env.__file__).resolve().parent
FORBIDDEN_IN_CORE = ("gymnasium", "pettingzoo", "torch", "carc_env.encoding", "carc_env.env", "carc_env.render",
                     "carc_env.expansions", "agents")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package path
                pkg = path.relative_to(ROOT.parent).with_suffix("").parts[: -node.level]
                out.append(".".join(pkg + ((node.module,) if node.module else ())))
            else:
                out.append(node.module or "")
    return out


def test_core_imports_no_upper_layer():
    core_files = sorted((ROOT / "core").glob("*.py"))
    assert core_files
    for f in core_files:
        for mod in _imports(f):
            for bad in FORBIDDEN_IN_CORE:
                assert not (mod == bad or mod.startswith(bad + ".")), f"{f.name} imports {mod}"


def test_core_never_checks_an_expansion_name():
    """No comparison, membership test or dict look-up of an expansion key in the core.

    (The default configuration ``expansions=("base",)`` is data, not a check.)
    """
    keys = set(registry())
    assert "base" in keys
    for f in sorted((ROOT / "core").glob("*.py")):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                parts = [node.left, *node.comparators]
            elif isinstance(node, ast.Subscript):
                parts = [node.slice]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                parts = node.args[:1]
            else:
                continue
            for part in parts:
                for sub in ast.walk(part):
                    if isinstance(sub, ast.Constant) and sub.value in keys:
                        raise AssertionError(f"core/{f.name}:{node.lineno} checks expansion {sub.value!r}: add a hook")


def test_agents_use_only_the_public_api():
    agents = ROOT.parent / "agents"
    for f in sorted(agents.glob("**/*.py")):
        for mod in _imports(f):
            if mod.startswith("carc_env"):
                private = [p for p in mod.split(".") if p.startswith("_")]
                assert not private, f"agents/{f.name} imports private module {mod}"


FRAMEWORKS = ("ray", "stable_baselines3", "sb3_contrib")


def test_only_the_integrations_import_rl_frameworks():
    """Ray and SB3 are optional extras: nothing outside carc_env/integrations may need them."""
    for f in sorted(ROOT.glob("**/*.py")):
        if "integrations" in f.relative_to(ROOT).parts:
            continue
        for mod in _imports(f):
            for bad in FRAMEWORKS:
                assert not (mod == bad or mod.startswith(bad + ".")), f"{f.relative_to(ROOT)} imports {mod}"


def test_integrations_never_import_agents():
    """The integrations sit on carc_env (envs, baselines) and their framework; scripts bring in agents."""
    files = sorted((ROOT / "integrations").glob("*.py"))
    assert [f.name for f in files] == ["__init__.py", "rllib.py", "sb3.py"]
    for f in files:
        for mod in _imports(f):
            assert not (mod == "agents" or mod.startswith("agents.")), f"integrations/{f.name} imports {mod}"
