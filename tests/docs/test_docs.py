"""The documentation: the site builds in strict mode, and every code block of README.md and docs/ runs.

Blocks are found and run by ``scripts/check_docs.py`` (its docstring gives the rules).  Here each
runnable block is one test; a block marked ``slow`` or ``smoke`` runs in the nightly check
(``python scripts/check_docs.py --all``) instead, and this suite still checks that it parses; a
block marked ``skip`` says why no check can run it.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


check_docs = _load("check_docs", ROOT / "scripts" / "check_docs.py")
rst_docstrings = _load("rst_docstrings", ROOT / "docs" / "_ext" / "rst_docstrings.py")

BLOCKS = check_docs.all_blocks()
RUN = [b for b in BLOCKS if b.mode == "run"]
NOT_RUN_HERE = [b for b in BLOCKS if b.mode in ("slow", "smoke", "skip")]


def test_blocks_are_found_in_the_readme_and_the_pages():
    files = {b.path for b in BLOCKS}
    assert "README.md" in files and "docs/getting-started.md" in files and "docs/env.md" in files
    readme_python = [b for b in RUN if b.path == "README.md" and b.kind == "python"]
    assert readme_python, "the README's example must be a python block the suite runs"
    assert any(b.path == "carc_env/env/aec.py" for b in RUN), "the docstrings' examples run too"


def test_the_readmes_links_point_at_files_that_exist():
    # the README is read on the repository's page, outside the site's strict build
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#")[0] for t in targets if not t.startswith(("http://", "https://", "#"))]
    assert len(local) > 20
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_every_block_has_a_language_and_a_valid_marker():
    problems = [f"{b.id}: {e}" for b in BLOCKS for e in b.errors]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("block", NOT_RUN_HERE, ids=lambda b: b.id)
def test_blocks_not_run_here_still_parse(block):
    assert block.reason, f"{block.id}: a {block.mode} block must say why"
    assert check_docs.syntax_error(block) is None


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_block_runs(block):
    result = check_docs.run_block(block, timeout=240)
    assert result.status == "passed", f"{block.id} ({block.lang}) failed:\n{result.detail}"


def test_the_site_builds_in_strict_mode(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    site = tmp_path / "site"
    # the env spec page carries the env's docstring (its observation tables as tables), the API its objects
    spec = (site / "env" / "index.html").read_text(encoding="utf-8")
    assert "building_neighbours" in spec and "<table>" in spec
    api = (site / "api" / "core" / "index.html").read_text(encoding="utf-8")
    assert "carc_env.core.game.Game" in api
    assert (site / "img" / "long_run.png").is_file()


def test_a_failing_block_fails_and_a_smoke_run_stops(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nraise SystemExit(3)\n```\n\n"
        "<!-- docs-exec: smoke 2 runs forever -->\n```bash\npython -c 'import time; time.sleep(60)'\n```\n\n"
        "```\nno language\n```\n\n"
        "<!-- docs-exec: slow -->\n```bash\ntrue\n```\n",
        encoding="utf-8",
    )
    failing, smoke, bare, no_reason = check_docs.extract(page, tmp_path)
    assert check_docs.run_block(failing).status == "failed"
    result = check_docs.run_block(smoke)
    assert result.status == "smoke-passed" and result.seconds < 30
    assert bare.errors and no_reason.errors


def test_shell_blocks_never_reinstall_the_environment():
    script, dropped = check_docs.shell_script(
        'python -m pip install -c constraints.txt -e ".[train]" && python scripts/main.py\npip install x\necho ok\n'
    )
    assert dropped == 2
    assert script.splitlines() == ["python scripts/main.py", "echo ok"]


def test_rst_tables_and_roles_become_markdown():
    text = (
        "See :mod:`carc_env.env.aec` and :class:`~carc_env.core.Game`.\n\n"
        "=====  ============\n"
        "name   meaning\n"
        "=====  ============\n"
        "``a``  first line\n"
        "       continued\n"
        "``b``  one | two\n"
        "=====  ============\n\n"
        "Usage::\n\n    x = 1\n"
    )
    md = rst_docstrings.rst_to_markdown(text)
    assert "``carc_env.env.aec``" in md and "``Game``" in md
    assert "| name | meaning |" in md
    assert "| ``a`` | first line continued |" in md
    assert "| ``b`` | one \\| two |" in md
    assert "Usage:\n\n```text\nx = 1\n```" in md and "Usage::" not in md
    lists = rst_docstrings.rst_to_markdown("* a:\n\n  - nested\n\n  more about a.\n* b\n")
    assert lists == "* a:\n\n    - nested\n\n    more about a.\n\n* b"
    terms = rst_docstrings.rst_to_markdown(
        "Parts:\n\n``a.py``\n    the a part\n``b.py``\n    the b part,\n    two lines\n"
    )
    assert "``a.py``\n:   the a part\n\n``b.py``\n:   the b part,\n    two lines" in terms
