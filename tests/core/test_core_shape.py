"""The core's shape: one module per concern, a documented state record, and no module reaching into
another's private members (``docs/architecture.md``, "The core")."""

from __future__ import annotations

import ast
from pathlib import Path

import carc_env
from carc_env.core import Game, GameConfig
from carc_env.core.state import CLONE, STATE

CORE = Path(carc_env.__file__).resolve().parent / "core"
CONCERNS = ("game", "turn", "board", "features", "scoring")


def _defined_privates(tree: ast.AST) -> set[str]:
    """Private names a module defines: its functions and methods, and attributes it assigns."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith("_"):
            out.add(node.name)
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr.startswith("_"):
                out.add(t.attr)
    return out


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (n.lineno, n.attr)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")
    ]


def test_no_core_module_reaches_into_another_modules_private_members():
    for path in sorted(CORE.glob("*.py")):
        tree = ast.parse(path.read_text())
        mine = _defined_privates(tree) | {name for name, f in STATE.items() if f.owner == path.stem}
        for line, name in _private_reads(tree):
            assert name in mine, f"core/{path.name}:{line} uses {name!r}, a private member of another module"


def test_every_private_field_is_written_by_its_owner_only():
    for path in sorted(CORE.glob("*.py")):
        assigned = _defined_privates(ast.parse(path.read_text()))
        for name, f in STATE.items():
            if name.startswith("_") and name in assigned:
                assert f.owner == path.stem, f"core/{path.name} writes {name!r}, owned by core/{f.owner}.py"


def test_the_state_record_is_the_whole_game():
    """Every attribute of a game (plain, on a printed board, with every plug-in) is a documented field."""
    for exps in (("base",), ("base", "maps_germany"), ("base", "count", "river2", "king_robber")):
        g = Game(GameConfig(3, exps), seed=1)
        for _ in range(12):
            g.apply(g.legal_actions()[0])
        assert set(vars(g)) == set(STATE), (exps, set(vars(g)) ^ set(STATE))
    assert Game.CLONE is CLONE
    for name, f in STATE.items():
        assert f.owner in CONCERNS and f.doc, name


def test_each_concern_module_says_what_it_owns():
    for stem in CONCERNS[1:]:
        doc = ast.get_docstring(ast.parse((CORE / f"{stem}.py").read_text())) or ""
        owned = [name for name, f in STATE.items() if f.owner == stem]
        missing = [name for name in owned if f"``{name}``" not in doc]
        assert doc.split("\n")[2].startswith("Owns") or "Owns" in doc, stem
        assert not missing, f"core/{stem}.py's docstring does not name the fields it owns: {missing}"
