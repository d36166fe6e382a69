"""Run the code blocks of README.md and docs/**/*.md, as a reader would paste them.

    python scripts/check_docs.py              # the blocks the test suite runs (tests/docs/test_docs.py)
    python scripts/check_docs.py --all        # + the slow ones and the smoke runs: the nightly check
    python scripts/check_docs.py --list       # every block, where it is and how it is checked
    python scripts/check_docs.py docs/engines.md README.md   # only these files
    python scripts/check_docs.py --block docs/agents.md:20    # one block, whatever its mode

The module docstrings' examples (``Usage::`` and an indented block that imports something; the API
reference shows them) run too, as python blocks.  Every fenced block needs a language.  How each is checked:

* ``python``: written to a file and run as a script (``python block.py``), so a block that only works
  pasted into a REPL fails (``if __name__ == "__main__":`` guards, ``SubprocVecEnv``);
* ``bash``: run by ``bash -e -o pipefail``; a ``python -m pip install ...`` line (or such a prefix
  before ``&&``) is not run: the checks use the installed environment and never reinstall it;
* ``toml``, ``yaml``, ``json``: parsed;
* ``text``, ``console``, ``output``: not run (output samples, diagrams, outlines).

Each runnable block runs in a fresh temporary directory that looks like the repository root (its
top-level entries linked, ``docs/`` copied so a command that writes there cannot touch the real one;
``runs/`` starts empty), with the repository first on ``PYTHONPATH`` and ``python`` meaning this
interpreter.  A comment right above the fence (one line, among any other comment lines there) changes
how the block is checked:

* ``<!-- docs-exec: slow REASON -->``: run only with ``--all`` (the test suite skips it; it still
  checks that the block parses);
* ``<!-- docs-exec: smoke SECONDS REASON -->``: run only with ``--all``, for at most SECONDS: it passes
  if it exits 0 or is still running without error then (it is stopped there); for commands that run
  for hours (training);
* ``<!-- docs-exec: skip REASON -->``: never run (it needs something a check cannot have: a cluster,
  an uncommitted checkpoint, hours of search), still parsed.

Exit status 0 when every checked block passed, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"bash", "sh", "shell"}
PARSED_LANGS = {"toml", "yaml", "json"}
NOT_RUN_LANGS = {"text", "console", "output"}
MODES = ("run", "slow", "smoke", "skip")
DEFAULT_TIMEOUT = 300.0
# Top-level entries not carried into a block's working directory (outputs, VCS, caches).
_NOT_LINKED = {".git", "runs", "site", ".pytest_cache", ".ruff_cache", "__pycache__", "docs"}

_FENCE = re.compile(r"^(\s*)(`{3,})\s*([^\s`]*)\s*$")
_COMMENT = re.compile(r"^\s*<!--(.*?)-->\s*$")
_MARKER = re.compile(r"^\s*docs-exec:\s*(\w+)\s*(.*?)\s*$")


@dataclass
class Block:
    """One fenced block: where it is, its language and code, and how it is checked."""

    path: str  # relative to the repository root
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    mode: str = "run"  # run | slow | smoke | skip | none (not run: text and the like)
    reason: str = ""
    seconds: float = 0.0  # smoke runs: how long to let it run
    errors: list[str] = field(default_factory=list)  # problems with the block itself (no language, bad marker)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def kind(self) -> str:
        if self.lang in PYTHON_LANGS:
            return "python"
        if self.lang in SHELL_LANGS:
            return "shell"
        if self.lang in PARSED_LANGS:
            return "parse"
        return "none"


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/, sorted."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _marker(comments: list[str], block: Block) -> None:
    for text in comments:
        m = _MARKER.match(text)
        if not m:
            continue
        mode, rest = m.group(1), m.group(2)
        if mode not in MODES[1:]:
            block.errors.append(f"unknown docs-exec mode {mode!r} (use one of slow, smoke SECONDS, skip)")
            return
        if mode == "smoke":
            seconds, _, rest = rest.partition(" ")
            try:
                block.seconds = float(seconds)
            except ValueError:
                block.errors.append(f"docs-exec: smoke needs SECONDS first, got {seconds!r}")
                return
        if not rest.strip():
            block.errors.append(f"docs-exec: {mode} needs a reason (say why the block is not run with the suite)")
        block.mode, block.reason = mode, rest.strip()


def extract(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of one Markdown file, with their markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.resolve().relative_to(root.resolve()).as_posix()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        i += 1
        comments = []
        j = start - 1
        while j >= 0 and _COMMENT.match(lines[j]):
            comments.append(_COMMENT.match(lines[j]).group(1))
            j -= 1
        block = Block(rel, start + 1, lang, "\n".join(body) + "\n")
        if not lang:
            block.errors.append("a fence without a language: python / bash run, text is not run")
        elif lang not in PYTHON_LANGS | SHELL_LANGS | PARSED_LANGS | NOT_RUN_LANGS:
            block.errors.append(f"unknown fence language {lang!r}")
        _marker(comments, block)
        if block.kind == "none" and lang:
            block.mode = "none"
        blocks.append(block)
    return blocks


def docstring_blocks(root: Path = ROOT) -> list[Block]:
    """The code examples of the module docstrings the API reference shows (``text::`` then an
    indented block that imports something), as python blocks: the site renders them, so they run."""
    blocks = []
    for path in sorted([*(root / "carc_env").rglob("*.py"), *(root / "agents").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree, clean=False)
        if not doc:
            continue
        first = tree.body[0].lineno
        lines = doc.splitlines()
        for i, line in enumerate(lines):
            if not line.rstrip().endswith("::"):
                continue
            base = len(line) - len(line.lstrip())
            body: list[str] = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= base:
                    break
                body.append(nxt)
            code = textwrap.dedent("\n".join(body)).strip("\n")
            if any(c.startswith(("import ", "from ")) for c in code.splitlines()):
                rel = path.relative_to(root).as_posix()
                blocks.append(Block(rel, first + i, "python", code + "\n"))
    return blocks


def all_blocks(files: list[Path] | None = None, root: Path = ROOT) -> list[Block]:
    """The blocks of ``files`` (default: README.md, docs/**/*.md and the module docstrings' examples)."""
    blocks = [b for f in (files or doc_files(root)) for b in extract(f, root)]
    return blocks if files else blocks + docstring_blocks(root)


def shell_script(code: str) -> tuple[str, int]:
    """The block as a bash script without its pip install commands; and how many were left out."""
    out, dropped = [], 0
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("python -m pip install") or stripped.startswith("pip install"):
            dropped += 1
            _, sep, rest = stripped.partition("&&")
            if sep:
                out.append(rest.strip())
            continue
        out.append(line)
    return "\n".join(out) + "\n", dropped


def syntax_error(block: Block) -> str | None:
    """Why the block does not even parse, or None."""
    if block.kind == "python":
        try:
            compile(block.code, block.id, "exec")
        except SyntaxError as exc:
            return f"SyntaxError: {exc}"
    elif block.kind == "shell":
        r = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
        if r.returncode:
            return r.stderr.strip()
    elif block.kind == "parse":
        return _parse(block)
    return None


def _parse(block: Block) -> str | None:
    try:
        if block.lang == "toml":
            tomllib.loads(block.code)
        elif block.lang == "json":
            json.loads(block.code)
        else:
            import yaml

            yaml.safe_load(block.code)
    except Exception as exc:  # noqa: BLE001 (any parse error is the answer)
        return f"{type(exc).__name__}: {exc}"
    return None


def _workdir(root: Path) -> Path:
    work = Path(tempfile.mkdtemp(prefix="carc_docs_"))
    for entry in root.iterdir():
        if entry.name not in _NOT_LINKED:
            (work / entry.name).symlink_to(entry)
    shutil.copytree(root / "docs", work / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    bindir = work / ".docs_bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    return work


@dataclass
class Result:
    block: Block
    status: str  # passed | smoke-passed | failed | not-run
    seconds: float
    detail: str = ""


def run_block(block: Block, *, root: Path = ROOT, timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Run one block (its smoke limit for smoke blocks) in a fresh working directory."""
    t0 = time.monotonic()
    if block.errors:
        return Result(block, "failed", 0.0, "; ".join(block.errors))
    error = syntax_error(block)
    if error or block.kind in ("parse", "none"):
        return Result(block, "failed" if error else "passed", time.monotonic() - t0, error or "")
    work = _workdir(root)
    try:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
        env["PATH"] = os.pathsep.join([str(work / ".docs_bin"), env.get("PATH", "")])
        env["MPLBACKEND"] = "Agg"
        note = ""
        if block.kind == "python":
            (work / "docs_block.py").write_text(block.code, encoding="utf-8")
            cmd = [sys.executable, "docs_block.py"]
        else:
            script, dropped = shell_script(block.code)
            note = f"{dropped} pip install command(s) not run; " if dropped else ""
            cmd = ["bash", "-e", "-o", "pipefail", "-c", script]
        limit = block.seconds if block.mode == "smoke" else timeout
        proc = subprocess.Popen(
            cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                out, _ = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
            took = time.monotonic() - t0
            if block.mode == "smoke":
                return Result(block, "smoke-passed", took, f"{note}still running without error after {limit:g} s")
            return Result(block, "failed", took, f"timed out after {limit:g} s\n{out[-3000:]}")
        took = time.monotonic() - t0
        if proc.returncode:
            return Result(block, "failed", took, f"exit status {proc.returncode}\n{out[-3000:]}")
        return Result(block, "passed", took, f"{note}{out[-300:]}".strip())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def selected(blocks: list[Block], everything: bool) -> list[Block]:
    """The blocks a check runs: 'run' ones (parsed ones too); with ``everything`` slow and smoke too.

    A block with an error in itself (no language, a bad marker) is always selected, to fail."""
    wanted = {"run"} | ({"slow", "smoke"} if everything else set())
    return [b for b in blocks if b.mode in wanted or b.errors]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    parser.add_argument("--all", action="store_true", help="also run the slow blocks and the smoke runs")
    parser.add_argument("--list", action="store_true", help="list the blocks and how each is checked")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per block (not smoke)")
    parser.add_argument("--json", action="store_true", help="one JSON line with every result")
    parser.add_argument(
        "--block",
        action="append",
        default=[],
        metavar="FILE:LINE",
        help="only this block (as --list names it; repeatable); its mode is ignored",
    )
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error(f"--timeout must be positive, got {args.timeout:g}")
    files = []
    for name in args.files:
        path = (Path.cwd() / name).resolve()
        if not path.is_file() or path.suffix != ".md":
            parser.error(f"{name}: not a Markdown file")
        files.append(path)
    blocks = all_blocks(files or None)
    if args.list:
        for b in blocks:
            extra = f" {b.seconds:g}s" if b.mode == "smoke" else ""
            print(
                f"{b.id:42s} {b.lang or '-':7s} {b.mode}{extra}  {b.reason}{'  ERROR: ' + '; '.join(b.errors) if b.errors else ''}"
            )
        return 0
    if args.block:
        unknown = sorted(set(args.block) - {b.id for b in blocks})
        if unknown:
            parser.error(f"no block {', '.join(unknown)} (see --list)")
        chosen = [b for b in blocks if b.id in args.block]
    else:
        chosen = selected(blocks, args.all)
    results = []
    for b in chosen:
        r = run_block(b, timeout=args.timeout)
        results.append(r)
        if not args.json:
            first = r.detail.splitlines()[0] if r.detail and r.status != "failed" else ""
            print(f"{r.status:12s} {r.seconds:6.1f}s  {b.id}  [{b.lang} {b.mode}] {first}", flush=True)
            if r.status == "failed":
                print("    " + r.detail.replace("\n", "\n    "), flush=True)
    checked = {r.block.id for r in results}
    not_run = [b for b in blocks if b.id not in checked and b.mode != "none"]
    text_blocks = sum(b.mode == "none" and b.id not in checked for b in blocks)
    failed = [r for r in results if r.status == "failed"]
    summary = {
        "checked": len(results),
        "passed": sum(r.status == "passed" for r in results),
        "smoke_passed": sum(r.status == "smoke-passed" for r in results),
        "failed": [r.block.id for r in failed],
        "not_run": {b.id: f"{b.mode}: {b.reason}" for b in not_run},
        "seconds": round(sum(r.seconds for r in results), 1),
    }
    if args.json:
        summary["results"] = [{"id": r.block.id, "status": r.status, "seconds": round(r.seconds, 1)} for r in results]
        print(json.dumps(summary))
    else:
        print(
            f"{summary['checked']} blocks checked: {summary['passed']} passed, {summary['smoke_passed']} smoke runs "
            f"passed, {len(failed)} failed, in {summary['seconds']} s; {len(not_run)} not run; "
            f"{text_blocks} text blocks (not code)"
        )
        for b in [] if args.block else not_run:
            print(f"  not run  {b.id}  [{b.mode}] {b.reason}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
