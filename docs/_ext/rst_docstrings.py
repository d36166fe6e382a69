"""A griffe extension for the docs site: the project's reST-flavoured docstrings as Markdown.

The module docstrings are the specification (the env's actions, observations and rewards live in
``carc_env.env.aec``'s), written in the reStructuredText subset Python docstrings use: ``literal``,
Sphinx roles (``:mod:`x```), ``Usage::`` literal blocks and simple tables bordered by ``=====``.
mkdocstrings renders docstrings as Markdown, where a simple table would come out as a heading and a
run-on paragraph.  This extension rewrites each docstring once, when griffe loads it:

* a simple table becomes a pipe table (a row whose first column is blank continues the row above);
* a definition list (a term line, its definition indented below) becomes a Markdown one (the
  ``def_list`` extension);
* indentation is doubled (reST nests lists by 2 spaces, Python-Markdown needs 4);
* a role becomes inline code (``:class:`~a.b.C``` -> ``C``, otherwise the full target), so the site
  never depends on every target having a page;
* ``text::`` before an indented block becomes ``text:`` and a fenced block (Python when it imports
  something, text otherwise).

The docstrings themselves are left as they are in the source (``help()`` and editors read them).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|data|attr|exc|obj|const):`(~?)([^`]+)`")
_BORDER = re.compile(r"^( *)(=+)(?: +=+)+ *$")
_LIST_ITEM = re.compile(r"^\s*([*+-]|\d+[.)])\s")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    target = target.strip()
    if tilde:
        target = target.rsplit(".", 1)[-1]
    return f"``{target}``"


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _split_row(line: str, cols: list[tuple[int, int]]) -> list[str]:
    cells = []
    for i, (start, _end) in enumerate(cols):
        stop = cols[i + 1][0] if i + 1 < len(cols) else len(line)
        cells.append(line[start:stop].strip())
    return cells


def _table(lines: list[str], cols: list[tuple[int, int]]) -> list[str]:
    """Pipe-table lines for a simple table's body lines (header and rows, borders removed)."""
    rows: list[list[str]] = []
    header: list[str] | None = None
    for line in lines:
        if _BORDER.match(line):
            header = rows.pop() if rows and header is None else header
            continue
        if not line.strip():
            continue
        cells = _split_row(line, cols)
        if not cells[0] and rows:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
    if header is None:
        header, rows = [""] * len(cols), rows
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def rst_to_markdown(text: str) -> str:
    """The docstring ``text`` with simple tables, roles and ``::`` rewritten as Markdown."""
    text = _ROLE.sub(_role, text)
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _BORDER.match(line)
        if match:
            cols = _columns(line)
            # a simple table: top border, header, border, rows, bottom border (3 borders) or no header (2)
            end = i + 1
            borders = 1
            while end < len(lines) and borders < 3:
                if _BORDER.match(lines[end]):
                    borders += 1
                    if borders == 3 or (end + 1 < len(lines) and not lines[end + 1].strip()):
                        break
                end += 1
            body = lines[i + 1 : end]
            if out and out[-1].strip():
                out.append("")
            out += _table(body, cols)
            out.append("")
            i = end + 1
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            stripped = line.rstrip()
            out.append(_widen(stripped[:-1]) if stripped != "::" else "")
            i = _literal_block(lines, i, out)
            continue
        if _is_term(lines, i):
            i = _definition(lines, i, out)
            continue
        if line.strip() and _indent(line) and i and not lines[i - 1].strip():
            parent = _parent(lines, i)
            if parent is None or not _LIST_ITEM.match(parent):
                # a block quote (indented under a paragraph): Markdown would make it code; un-indent it
                n, p = _indent(line), _indent(parent) if parent else 0
                j = i
                while j < len(lines) and (
                    _indent(lines[j]) >= n if lines[j].strip() else _blank_inside(lines, j, n - 1)
                ):
                    j += 1
                inner = rst_to_markdown("\n".join(ln[n:] for ln in lines[i:j]))
                out += [" " * (2 * p) + ln if ln else "" for ln in inner.splitlines()]
                i = j
                continue
        out.append(_widen(line))
        i += 1
    return "\n".join(_separate_lists(out))


def _separate_lists(lines: list[str]) -> list[str]:
    """A blank line before a list that follows a paragraph: Python-Markdown would run them together."""
    out: list[str] = []
    run: list[str] = []  # the non-blank lines since the last blank one
    fenced = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and _LIST_ITEM.match(line) and run:
            if not any(_LIST_ITEM.match(r) and _indent(r) <= _indent(line) for r in run):
                out.append("")
                run = []
        out.append(line)
        run = run + [line] if line.strip() and not fenced else ([] if not line.strip() else run)
    return out


def _parent(lines: list[str], i: int) -> str | None:
    """The nearest line above ``i`` indented less than it (the block it belongs to), or None."""
    for j in range(i - 1, -1, -1):
        if lines[j].strip() and _indent(lines[j]) < _indent(lines[i]):
            return lines[j]
    return None


def _widen(line: str) -> str:
    """The line with its indentation doubled: reST nests lists by 2 spaces, Python-Markdown by 4."""
    return " " * (2 * _indent(line)) + line.lstrip() if line.strip() else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_term(lines: list[str], i: int) -> bool:
    """A definition list's term: a lone line after a blank one, the next line indented deeper."""
    line = lines[i]
    if not line.strip() or i + 1 >= len(lines) or not lines[i + 1].strip():
        return False
    if i > 0 and lines[i - 1].strip():
        return False
    if _LIST_ITEM.match(line) or re.match(r"^\s*[#|]\s", line) or line.rstrip().endswith(":"):
        return False
    return _indent(lines[i + 1]) > _indent(line) and not _BORDER.match(lines[i + 1])


def _blank_inside(lines: list[str], j: int, base: int) -> bool:
    """Line ``j`` is blank and the next non-blank line is indented deeper than ``base``."""
    if lines[j].strip():
        return False
    for k in range(j + 1, len(lines)):
        if lines[k].strip():
            return _indent(lines[k]) > base
    return False


def _definition(lines: list[str], i: int, out: list[str]) -> int:
    """The definition list starting at ``i`` (terms, each with its indented definition) as Markdown."""
    base = _indent(lines[i])
    j = i
    while j + 1 < len(lines) and lines[j].strip() and _indent(lines[j]) == base and _indent(lines[j + 1]) > base:
        term = lines[j]
        j += 1
        body: list[str] = []
        while j < len(lines) and (lines[j].strip() and _indent(lines[j]) > base or _blank_inside(lines, j, base)):
            body.append(lines[j])
            j += 1
        text = textwrap.dedent("\n".join(body)).splitlines()
        pad = " " * (2 * base)
        out += [_widen(term), f"{pad}:   {text[0]}", *(f"{pad}    {_widen(t)}" if t else "" for t in text[1:]), ""]
    return j


def _literal_block(lines: list[str], i: int, out: list[str]) -> int:
    """Fence the indented block after line ``i`` (``text::``); return the index of the line after it.

    Code that imports something is fenced as Python (highlighted), anything else as text."""
    base = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    body: list[str] = []
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base):
        body.append(lines[j])
        j += 1
    while body and not body[-1].strip():
        body.pop()
        j -= 1
    code = textwrap.dedent("\n".join(body)).strip("\n")
    if not code:
        return i + 1
    lang = "python" if any(c.startswith(("import ", "from ")) for c in code.splitlines()) else "text"
    pad = " " * (2 * base)
    out += ["", f"{pad}```{lang}", *(pad + c if c else "" for c in code.splitlines()), f"{pad}```", ""]
    return j


class RstDocstrings(griffe.Extension):
    """Rewrites every loaded docstring with :func:`rst_to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
