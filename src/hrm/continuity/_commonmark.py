"""Markdown read as CommonMark (with GitHub's tables) through markdown-it-py, for legacy handoffs.

`read` parses a document once into its sections: each heading with the blocks under it (its
paragraphs' lines as plain text, its lists as nested items, its tables as cells, the paths it
quotes in code spans). Fenced and indented code is never read as text, so a shell comment such
as ``# Build the binary`` inside a fence is no heading. The helpers below answer what the legacy
mapping (`hrm.continuity._legacy_handoff`) asks of a section: its list items, its
``Key: value`` pairs, its first table, the file paths it mentions.

markdown-it-py is imported on the first `read`; reading a handoff is a command's work (import,
migrate, validate), never a hook's start-up (the hooks read their own YAML handoffs and the
continuity ledger with `hrm.continuity._markdown`, see there).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Block",
    "Item",
    "Section",
    "find",
    "key_values",
    "list_items",
    "looks_like_markdown",
    "paths",
    "plain_lines",
    "read",
    "table",
]

_CHECKBOX = re.compile(r"^\[(?:x|X| |->|-|~)\]\s*")
_KEY_VALUE = re.compile(r"^([A-Za-z][\w ./&()-]{0,40}?)\s*:\s*(.*)$")
_FILE_LIKE = re.compile(r"\.[A-Za-z0-9]{1,6}$")
_LINE_SUFFIX = re.compile(r":\d[\d,\-]*$")


@dataclass
class Item:
    """One list item: its text lines and nested items in document order, and its code spans."""

    parts: list[str | Item] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    @property
    def children(self) -> list[Item]:
        """The items nested in this one."""
        return [part for part in self.parts if isinstance(part, Item)]


@dataclass
class Block:
    """One block under a heading, in document order."""

    kind: str
    """``heading`` (a subheading), ``paragraph``, ``list``, ``table`` or ``code``."""
    lines: list[str] = field(default_factory=list)
    """Plain text, one entry per source line (a subheading: ``### Title``; code: raw)."""
    codes: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    """A table's header row, then its body rows."""
    bold: list[bool] = field(default_factory=list)
    """Per line of a paragraph: whether it is one bold phrase (``**1. Graceful degradation**``)."""


@dataclass
class Section:
    """A heading and the blocks up to the next heading of any level (level 0: the preamble)."""

    level: int
    title: str
    line: int
    blocks: list[Block] = field(default_factory=list)


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def read(text: str) -> list[Section]:
    """The sections of a Markdown document, in order; the first is the preamble (level 0)."""
    from markdown_it.tree import SyntaxTreeNode

    sections = [Section(0, "", 1)]
    for node in SyntaxTreeNode(_parser().parse(text)).children:
        if node.type == "heading":
            title = " ".join(_plain(node.children[0]).split()) if node.children else ""
            line = node.map[0] + 1 if node.map else 0
            sections.append(Section(int(node.tag[1:]), title, line))
        else:
            block = _block(node)
            if block is not None:
                sections[-1].blocks.append(block)
    return sections


def looks_like_markdown(text: str) -> bool:
    """Whether `text` has at least one heading outside code."""
    return any(section.level for section in read(text))


def find(sections: Sequence[Section], names: Iterable[str]) -> list[Block]:
    """The blocks of every section whose title starts with one of `names`, subsections included.

    Matching ignores case and punctuation (``Action Items & Next Steps`` matches ``action
    items``); a subsection's heading is kept as a ``heading`` block.
    """
    wanted = [_normalise(name) for name in names]
    out: list[Block] = []
    index = 0
    while index < len(sections):
        section = sections[index]
        index += 1
        if not section.level or not any(_normalise(section.title).startswith(w) for w in wanted):
            continue
        out.extend(section.blocks)
        while index < len(sections) and sections[index].level > section.level:
            sub = sections[index]
            out.append(Block("heading", [f"{'#' * sub.level} {sub.title}"]))
            out.extend(sub.blocks)
            index += 1
    return out


def list_items(blocks: Iterable[Block]) -> list[str]:
    """Top-level list items, each with its continuation lines and nested items after ``; ``.

    A paragraph that is one bold phrase opens an item of its own, and the list items after it
    become its details, which is how several real handoffs write learnings.
    """
    items: list[list[str]] = []
    grouped = False
    for block in blocks:
        if block.kind == "paragraph":
            for line, bold in zip(block.lines, block.bold, strict=True):
                if bold:
                    items.append([line])
                    grouped = True
        elif block.kind == "list":
            for item in block.items:
                if grouped and items:
                    items[-1].extend(_flatten(item))
                else:
                    items.append(_flatten(item))
    return ["; ".join(part for part in item if part) for item in items if item and item[0]]


def table(blocks: Iterable[Block]) -> tuple[list[str], list[list[str]]]:
    """The first table among `blocks`: its header cells and its body rows."""
    for block in blocks:
        if block.kind == "table" and block.rows:
            return block.rows[0], block.rows[1:]
    return [], []


def key_values(blocks: Sequence[Block]) -> dict[str, str]:
    """``Key: value`` pairs from lines, list items and two-column tables; keys lower-cased.

    The first occurrence of a key wins; a table's ``Field`` header row is not a pair.
    """
    pairs: dict[str, str] = {}
    header, rows = table(blocks)
    if len(header) >= 2:
        for cells in [header, *rows]:
            if len(cells) >= 2 and cells[0] and cells[0].lower() != "field":
                pairs.setdefault(cells[0].lower(), cells[1])
    for line in plain_lines(blocks, with_headings=False):
        match = _KEY_VALUE.match(line)
        if match and match.group(2).strip():
            pairs.setdefault(match.group(1).strip().lower(), match.group(2).strip())
    return pairs


def plain_lines(blocks: Iterable[Block], *, with_headings: bool = True) -> list[str]:
    """Every text line of `blocks` in order: paragraphs, list items (nested too), subheadings.

    Tables give one line per row (cells joined by `` | ``); code gives none.
    """
    out: list[str] = []
    for block in blocks:
        if block.kind == "list":
            for item in block.items:
                out.extend(_flatten(item))
        elif block.kind == "table":
            out.extend(" | ".join(row) for row in block.rows)
        elif block.kind == "paragraph" or (with_headings and block.kind == "heading"):
            out.extend(block.lines)
    return out


def paths(blocks: Iterable[Block]) -> list[str]:
    """File paths quoted in code spans (``src/a.py``, ``main.go:12``), line suffixes cut."""
    found: dict[str, None] = {}
    for code in _codes(blocks):
        token = _LINE_SUFFIX.sub("", code)
        quoted_path = "/" in code or _FILE_LIKE.search(token)
        if code and not any(ch.isspace() for ch in code) and quoted_path:
            found.setdefault(token, None)
    return list(found)


def _codes(blocks: Iterable[Block]) -> Iterable[str]:
    for block in blocks:
        yield from block.codes
        stack = list(block.items)
        while stack:
            item = stack.pop(0)
            yield from item.codes
            stack[:0] = item.children


def _flatten(item: Item) -> list[str]:
    out: list[str] = []
    for part in item.parts:
        out.extend(_flatten(part) if isinstance(part, Item) else [part])
    return out


def _normalise(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


def _block(node: Any) -> Block | None:
    if node.type == "paragraph":
        inline = node.children[0]
        read_lines = _lines(inline)
        return Block(
            "paragraph",
            [text for text, _ in read_lines],
            _inline_codes(inline),
            bold=[bold for _, bold in read_lines],
        )
    if node.type in ("bullet_list", "ordered_list"):
        return Block("list", items=[_item(child) for child in node.children])
    if node.type == "table":
        cells = [[cell.children[0] if cell.children else None for cell in row.children]
                 for part in node.children for row in part.children]  # fmt: skip
        rows = [[" ".join(_plain(c).split()) if c else "" for c in row] for row in cells]
        codes = [code for row in cells for c in row if c for code in _inline_codes(c)]
        return Block("table", rows=rows, codes=codes)
    if node.type in ("fence", "code_block"):
        return Block("code", lines=node.content.splitlines())
    if node.type == "blockquote":
        inner = [b for b in (_block(child) for child in node.children) if b is not None]
        lines = [line for b in inner for line in (b.lines if b.kind != "code" else [])]
        codes = [code for b in inner for code in b.codes]
        return Block("paragraph", lines, codes, bold=[False] * len(lines))
    return None


def _item(node: Any) -> Item:
    item = Item()
    for child in node.children:
        if child.type in ("bullet_list", "ordered_list"):
            item.parts.extend(_item(grandchild) for grandchild in child.children)
        elif child.type == "paragraph":
            item.parts.extend(text for text, _ in _lines(child.children[0]))
            item.codes.extend(_inline_codes(child.children[0]))
    return item


def _lines(inline: Any) -> list[tuple[str, bool]]:
    """The non-blank lines of an inline run, each with whether it is one bold phrase."""
    out: list[tuple[str, bool]] = []
    line: list[Any] = []
    for node in [*inline.children, None]:
        if node is not None and node.type not in ("softbreak", "hardbreak"):
            line.append(node)
            continue
        text = _CHECKBOX.sub("", "".join(_plain_node(n) for n in line).strip()).strip()
        marks = [n.type for n in line if n.type != "text" or n.content.strip() not in ("", ":")]
        if text:
            out.append((text, marks == ["strong"]))
        line = []
    return out


def _plain(inline: Any) -> str:
    """The text a reader sees: emphasis and code markers gone, breaks kept as newlines."""
    return "".join(_plain_node(node) for node in inline.children)


def _plain_node(node: Any) -> str:
    if node.type in ("text", "code_inline", "html_inline"):
        return str(node.content)
    if node.type in ("softbreak", "hardbreak"):
        return "\n"
    return "".join(_plain_node(child) for child in node.children)


def _inline_codes(inline: Any) -> list[str]:
    found: list[str] = []
    for node in inline.children:
        if node.type == "code_inline":
            found.append(node.content)
        elif node.children:
            found.extend(_inline_codes(node))
    return found
