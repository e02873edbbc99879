"""Line-based Markdown reading for continuity ledgers, kept by hand for the SessionStart hook.

SessionStart reads the active continuity ledger on every session start. Reading it through
markdown-it-py, as `hrm.continuity._commonmark` reads legacy handoffs, costs that hook process
~85 M more instructions than this reader (the parser's import; ~18 % of the process:
bench/RESULTS.md, issue 34, D120) for the subset of Markdown a ledger is written in: ATX
headings, bullet lists, ``Key: value`` lines and code fences. This reader covers that subset
in one pass over the lines, and ``tests/continuity/test_markdown_lines.py`` holds it to
CommonMark's reading of it. It also splits ``---`` front matter, which hrm's own Markdown
handoffs start with.

Two traps from the real files shape it: front matter is delimited only by lines that are exactly
``---`` at column 0 (a literal block may contain indented ``---``), and fenced code blocks hold
shell comments such as ``# Build the binary`` that must not be read as headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "FrontMatter",
    "Section",
    "find_sections",
    "key_values",
    "list_items",
    "parse_sections",
    "split_front_matter",
    "strip_inline",
    "table",
]

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^( {0,1})(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_NESTED = re.compile(r"^\s{2,}(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_BOLD_LINE = re.compile(r"^\*\*(.+?)\*\*:?\s*$")
_KV_LINE = re.compile(r"^(?:[-*+]\s+)?([A-Za-z][\w ./&()-]{0,40}?)\s*:\s*(.*)$")
"""``Key: value`` in a line whose bold and code markers are gone (a bullet may lead)."""
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}")
_CHECKBOX = re.compile(r"^\[(?:x|X| |->|-|~)\]\s*")


@dataclass(frozen=True)
class FrontMatter:
    """A document split at its front matter."""

    yaml_text: str | None
    """The YAML between the delimiters, or None when the document has no front matter."""
    body: str
    """Everything after the closing delimiter line (the whole text without front matter)."""
    body_line: int
    """1-based line number where `body` starts, to report errors at their real line."""


@dataclass
class Section:
    """A heading and the lines under it, up to the next heading of any level."""

    level: int
    title: str
    line: int
    lines: list[str] = field(default_factory=list)


def _is_delimiter(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t") == "---"


def split_front_matter(text: str) -> FrontMatter:
    """Split ``---`` front matter from the body, if the first line opens one and a line closes it.

    Only lines that are exactly ``---`` (trailing blanks allowed) at column 0 delimit, so a
    literal block containing an indented ``---`` stays inside the front matter.
    """
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or not _is_delimiter(lines[0]):
        return FrontMatter(None, text, 1)
    for index in range(1, len(lines)):
        if _is_delimiter(lines[index]):
            return FrontMatter("".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2)
    return FrontMatter(None, text, 1)


def parse_sections(text: str) -> list[Section]:
    """Headings in document order, each with its own lines. Headings inside fences are ignored.

    Lines before the first heading form a section of level 0 with an empty title.
    """
    sections = [Section(0, "", 1)]
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        marker = _FENCE.match(line)
        if marker:
            token = marker.group(1)[0] * 3
            if fence is None:
                fence = token
            elif token == fence:
                fence = None
            sections[-1].lines.append(line)
            continue
        heading = _HEADING.match(line) if fence is None else None
        if heading:
            sections.append(Section(len(heading.group(1)), strip_inline(heading.group(2)), number))
        else:
            sections[-1].lines.append(line)
    return sections


def _normalise(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


def find_sections(sections: Sequence[Section], names: Iterable[str]) -> list[str]:
    """The lines of every section whose title starts with one of `names`, subsections included.

    Matching ignores case and punctuation (``Action Items & Next Steps`` matches
    ``action items``). Sections are returned in document order, concatenated.
    """
    wanted = [_normalise(name) for name in names]
    out: list[str] = []
    index = 0
    while index < len(sections):
        section = sections[index]
        title = _normalise(section.title)
        if section.level and any(title.startswith(name) for name in wanted):
            out.extend(section.lines)
            index += 1
            while index < len(sections) and sections[index].level > section.level:
                sub = sections[index]
                out.append(f"{'#' * sub.level} {sub.title}")
                out.extend(sub.lines)
                index += 1
            continue
        index += 1
    return out


def strip_inline(text: str) -> str:
    """Text without bold/italic/code markers, checkbox prefixes and surrounding blanks."""
    text = _CHECKBOX.sub("", text.strip())
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<!\w)__(.+?)__(?!\w)", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return text.strip()


def _without_fences(lines: Iterable[str]) -> list[str]:
    kept: list[str] = []
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line)
        if marker:
            token = marker.group(1)[0] * 3
            fence = token if fence is None else (None if token == fence else fence)
            continue
        if fence is None:
            kept.append(line)
    return kept


def list_items(lines: Iterable[str]) -> list[str]:
    """Top-level list items, each with its nested items joined after it with ``; ``.

    A bold-only line (``**1. Graceful degradation**``) opens an item of its own, and the list
    items under it become its details, which is how several real handoffs write learnings.
    Table rows, fenced code and headings are skipped.
    """
    items: list[list[str]] = []
    grouped = False
    for raw in _without_fences(lines):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("|") or line.startswith("#"):
            continue
        bold = _BOLD_LINE.match(line)
        if bold:
            items.append([strip_inline(bold.group(1))])
            grouped = True
            continue
        top = _ITEM.match(line)
        nested = None if top else _NESTED.match(line)
        if top and not grouped:
            items.append([strip_inline(top.group(2))])
        elif top and items:
            items[-1].append(strip_inline(top.group(2)))
        elif nested and items:
            items[-1].append(strip_inline(nested.group(1)))
        elif items and line.startswith("  "):
            items[-1].append(strip_inline(line))
    return ["; ".join(part for part in item if part) for item in items if item and item[0]]


def table(lines: Iterable[str]) -> tuple[list[str], list[list[str]]]:
    """The first Markdown table in `lines`: its header cells and its body rows (inline stripped)."""
    header: list[str] = []
    rows: list[list[str]] = []
    for line in _without_fences(lines):
        stripped = line.strip()
        if not stripped.startswith("|"):
            if header:
                break
            continue
        if _TABLE_SEPARATOR.match(stripped):
            continue
        cells = [strip_inline(cell) for cell in stripped.strip("|").split("|")]
        if not header:
            header = cells
        else:
            rows.append(cells)
    return header, rows


def key_values(lines: Iterable[str]) -> dict[str, str]:
    """``Key: value`` pairs from bullets (``- **Created**: …``), bold lines and 2-column tables.

    Keys are lower-cased; the first occurrence of a key wins.
    """
    pairs: dict[str, str] = {}
    kept = list(_without_fences(lines))
    header, rows = table(kept)
    if len(header) >= 2:
        for cells in [header, *rows]:
            if len(cells) >= 2 and cells[0] and cells[0].lower() != "field":
                pairs.setdefault(cells[0].lower(), cells[1])
    for line in kept:
        if line.lstrip().startswith("|"):
            continue
        match = _KV_LINE.match(strip_inline(line))
        if match and match.group(2).strip():
            pairs.setdefault(match.group(1).strip().lower(), match.group(2).strip())
    return pairs
