"""Descriptions from docstrings: the text for the model, and the per-field
descriptions of Google-style sections (``Args:``, ``Attributes:``) and
reST fields (``:param name: ...``).

The sections that describe fields are taken out of the tool's description,
since each field's text goes into the input schema beside it.
"""

from __future__ import annotations

import inspect
import re

# Google-style section headers whose entries describe fields.
_FIELD_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "attributes",
    "fields",
}
_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
# `name (type): text` or `name: text`; `*args`-style names are not fields.
_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|ivar|var)\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$"
)
_REST_OTHER = re.compile(r"^:(?:type|vartype)\s")


def split(doc: str | None) -> tuple[str, dict[str, str]]:
    """Splits a docstring into the description (without field sections)
    and the field descriptions it holds, by name."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    kept: list[str] = []
    fields: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _HEADER.match(line)
        if header and header.group(1).strip().lower() in _FIELD_SECTIONS:
            i = _read_section(lines, i + 1, fields)
            continue
        rest = _REST_PARAM.match(line.strip())
        if rest and not line.startswith((" ", "\t")):
            text, i = _continuation(lines, i + 1, rest.group(2))
            fields.setdefault(rest.group(1), text)
            continue
        if _REST_OTHER.match(line.strip()) and not line.startswith((" ", "\t")):
            _, i = _continuation(lines, i + 1, "")
            continue
        kept.append(line)
        i += 1
    return _tidy(kept), fields


def _read_section(lines: list[str], i: int, fields: dict[str, str]) -> int:
    """Reads the indented entries of a section starting at line ``i``;
    returns the index of the first line after it."""
    entry_indent: int | None = None
    name: str | None = None
    parts: list[str] = []

    def flush() -> None:
        if name is not None:
            fields.setdefault(name, " ".join(p for p in parts if p).strip())

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            break
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            flush()
            match = _ENTRY.match(line.strip())
            name, parts = (match.group(1), [match.group(2).strip()]) if match else (None, [])
        else:
            parts.append(line.strip())
        i += 1
    flush()
    return i


def _continuation(lines: list[str], i: int, first: str) -> tuple[str, int]:
    """A reST field's text: ``first`` plus the indented lines after it."""
    parts = [first.strip()]
    while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
        parts.append(lines[i].strip())
        i += 1
    return " ".join(p for p in parts if p), i


def _tidy(lines: list[str]) -> str:
    """Joins lines, dropping leading/trailing blank lines and runs of blank
    lines left where sections were taken out."""
    out: list[str] = []
    for line in lines:
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line.rstrip())
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)
