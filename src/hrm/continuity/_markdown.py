"""Line-based Markdown reading for handoffs and continuity ledgers written by people and agents.

Pure text in, plain structures out; no knowledge of handoff types. Two traps from the real files
shape it: front matter is delimited only by lines that are exactly ``---`` at column 0 (a literal
block may contain indented ``---``), and fenced code blocks hold shell comments such as
``# Build the binary`` that must not be read as headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "FrontMatter",
    "Section",
    "as_datetime",
    "find_sections",
    "is_legacy_mapping",
    "key_values",
    "legacy_document",
    "list_items",
    "looks_like_markdown",
    "map_status",
    "parse_sections",
    "project_from_path",
    "split_front_matter",
    "strip_inline",
    "table",
    "timestamp_from_name",
]

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^( {0,1})(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_NESTED = re.compile(r"^\s{2,}(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_BOLD_LINE = re.compile(r"^\*\*(.+?)\*\*:?\s*$")
_KV_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?\*{0,2}([A-Za-z][\w ./&()-]{0,40}?)\*{0,2}\s*:\s*\*{0,2}\s*(.*)$"
)
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
        match = _KV_LINE.match(line)
        if match and match.group(2).strip():
            pairs.setdefault(match.group(1).strip().lower(), strip_inline(match.group(2)))
    return pairs


# ── legacy handoffs and ledgers → our native document ───────────────────────
# The functions below know the field names of the legacy formats (Continuous-Claude v1/v3, Ring,
# ledger events) and turn one into the plain dict `handoffs.handoff_from_dict` reads. Every key
# they do not map stays in ``extra`` under its original name.

_LEGACY_KEYS = frozenset(
    {
        "goal", "now", "done_this_session", "this_session", "next", "outcome", "mode",
        "schema_version", "session", "session_id", "session_name", "date", "status",
        "decisions", "findings", "worked", "failed", "files", "blockers", "questions",
        "test", "event_type", "topic", "git_commit", "branch",
    }
)  # fmt: skip
_NAME_STAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[_T](\d{2})-(\d{2})(?:-(\d{2}))?(?:[.-](\d{1,6}))?"
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_PATH_TOKEN = re.compile(r"`([^`\s]+)`")
_LINE_SUFFIX = re.compile(r":\d[\d,\-]*$")
_STATUS_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("paused", ("incomplete", "not complete", "in progress", "in_progress", "partial", "paused")),
    ("blocked", ("block",)),
    ("failed", ("fail", "abandon")),
    ("paused", ("progress", "pending", "wip", "ongoing", "research")),
    ("completed", ("complete", "done", "succeed", "success", "finished")),
)
_MAX_KEY_FILES = 10
_NEXT_SECTIONS = ("action items", "next steps", "resume instructions", "now", "next")
_FILE_SECTIONS = ("files modified", "recent changes", "artifacts", "files created")
_PLACEHOLDER_DECISION = ("Decision", "Reasoning")  # a table header migrated as data (fork file)


def as_datetime(raw: Any) -> datetime | None:
    """An aware datetime from YAML's datetime/date or an ISO-8601 string; naive means UTC."""
    if isinstance(raw, datetime):
        return raw if raw.tzinfo is not None else raw.replace(tzinfo=UTC)
    if isinstance(raw, date):
        return datetime(raw.year, raw.month, raw.day, tzinfo=UTC)
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return None


def timestamp_from_name(name: str) -> datetime | None:
    """The UTC time in a legacy file name (``2026-01-14_21-24-35_slug.md``), if any."""
    match = _NAME_STAMP.search(name)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            int((fraction or "0").ljust(6, "0")), tzinfo=UTC,
        )  # fmt: skip
    except ValueError:
        return None


def project_from_path(path: Path | None) -> str | None:
    """The project a legacy handoff belongs to, from where it lives.

    ``<project>/thoughts/…``, ``<project>/docs/handoffs/…`` and ``<project>/.ring/…`` are the
    layouts Continuous-Claude and Ring use; anything else gives None.
    """
    if path is None:
        return None
    parents = list(Path(path).absolute().parents)
    for index, parent in enumerate(parents[:-1]):
        if parent.name in ("thoughts", ".ring"):
            return str(parents[index + 1])
        in_docs = parent.name == "handoffs" and parents[index + 1].name == "docs"
        if in_docs and index + 2 < len(parents):
            return str(parents[index + 2])
    return None


def map_status(raw: Any) -> str:
    """A legacy status or outcome as one of our status values, else the raw text."""
    text = strip_inline(str(raw)).lower() if raw is not None else ""
    for value, needles in _STATUS_RULES:
        if any(needle in text for needle in needles):
            return value
    return str(raw).strip() if raw is not None else ""


def looks_like_markdown(text: str) -> bool:
    """Whether `text` has at least one Markdown heading outside code fences."""
    return any(section.level for section in parse_sections(text))


def is_legacy_mapping(doc: dict[str, Any]) -> bool:
    """Whether a YAML mapping carries any field of a known legacy handoff or ledger event."""
    return any(isinstance(key, str) and key in _LEGACY_KEYS for key in doc)


def _text(raw: Any) -> str:
    return raw.strip() if isinstance(raw, str) else ""


def _pop_text(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
        doc.pop(key)
        return str(value).strip()
    return ""


def _as_list(raw: Any) -> list[Any]:
    if raw is None:
        return []
    return raw if isinstance(raw, list) else [raw]


def _entry_text(item: Any) -> str:
    if isinstance(item, dict):
        return "; ".join(f"{key}: {value}" for key, value in item.items())
    return str(item).strip()


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)


def _session_from_path(path: Path | None) -> str:
    if path is None:
        return ""
    for parent in Path(path).parents:
        if parent.name in ("events", "ledgers", ""):
            continue
        return "" if parent.name in ("handoffs", "shared", "thoughts", ".ring") else parent.name
    return ""


def _decisions_from_yaml(raw: Any) -> list[dict[str, Any]]:
    pairs: list[tuple[str, Any]] = []
    for item in list(raw.items()) if isinstance(raw, dict) else _as_list(raw):
        if isinstance(item, tuple):
            pairs.append(item)
        elif isinstance(item, dict) and "decision" in item:
            pairs.append((str(item["decision"]), item.get("rationale", "")))
        elif isinstance(item, dict):
            pairs.extend(item.items())
        elif item is not None:
            pairs.append((str(item), ""))
    out = []
    for key, value in pairs:
        if (str(key), value) == _PLACEHOLDER_DECISION:
            continue
        rationale = value if isinstance(value, str) else ("" if value is None else str(value))
        name = str(key).replace("_", " ")
        out.append({"decision": name, "rationale": rationale, "alternatives": []})
    return out


def _decisions_from_markdown(lines: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    header, rows = table(lines)
    if len(header) >= 2 and rows:
        return [
            {"decision": row[0], "rationale": row[1] if len(row) > 1 else "", "alternatives": []}
            for row in rows
            if row and row[0]
        ]
    if any(_HEADING.match(line) for line in lines):
        for section in parse_sections("\n".join(lines)):
            if not section.level:
                continue
            title = re.sub(r"^decision\s*\d*\s*:\s*", "", section.title, flags=re.IGNORECASE)
            body = [
                strip_inline(_BULLET.sub("", line))
                for line in _without_fences(section.lines)
                if line.strip()
            ]
            out.append({"decision": title, "rationale": " ".join(body)[:500], "alternatives": []})
        return out
    for item in list_items(lines):
        parts = [part.strip() for part in item.split("; ")]
        decision, rationale, alternatives = parts[0], "", []
        decision = re.sub(r"^decision\s*:\s*", "", decision, flags=re.IGNORECASE)
        for part in parts[1:]:
            label, _, value = part.partition(":")
            if label.lower().startswith("alternative"):
                alternatives = [a.strip() for a in re.split(r",\s*", value) if a.strip()]
            elif label.lower() in ("reason", "rationale", "why"):
                rationale = value.strip()
            else:
                rationale = (rationale + " " + part).strip()
        if not rationale and ": " in decision:
            decision, _, rationale = decision.partition(": ")
        out.append(
            {"decision": decision.strip(), "rationale": rationale, "alternatives": alternatives}
        )
    return out


def _paths(lines: Iterable[str]) -> list[str]:
    found = []
    for line in _without_fences(lines):
        for token in _PATH_TOKEN.findall(line):
            if "/" in token or re.search(r"\.[A-Za-z0-9]{1,6}$", _LINE_SUFFIX.sub("", token)):
                found.append(_LINE_SUFFIX.sub("", token))
    return _dedupe(found)


def _learnings(raw: Any, kind: str, confidence: str) -> list[dict[str, Any]]:
    items = raw.items() if isinstance(raw, dict) else _as_list(raw)
    out = []
    for item in items:
        text = f"{item[0]}: {item[1]}" if isinstance(item, tuple) else _entry_text(item)
        if text:
            out.append({"type": kind, "content": text, "confidence": confidence})
    return out


def legacy_document(meta: dict[str, Any], body: str | None, path: str | None) -> dict[str, Any]:
    """Map a legacy handoff (front matter or YAML `meta`, Markdown `body`) to our native dict.

    Continuous-Claude v3 fields: ``goal`` → task, ``next`` (after ``now``) → next steps,
    ``worked``/``failed``/``findings`` → learnings, ``questions`` → context needed,
    ``files`` → artifacts, ``git`` → context. Ring / v1 Markdown: front matter ``topic``,
    ``session_name``, ``git_commit``, ``branch``; sections such as *Action Items & Next Steps*,
    *What Worked*, *Key Decisions*, *Critical References*; a ``## Metadata`` list or table when
    there is no front matter. The Markdown body is kept whole as notes.
    """
    rest = dict(meta)
    source = Path(path) if path else None
    sections = parse_sections(body) if body else []
    kv = key_values(find_sections(sections, ["metadata", "ledger"])) if sections else {}
    title = next((s.title for s in sections if s.level == 1), "")
    title = re.sub(r"^(handoff|session|work stream)\s*:\s*", "", title, flags=re.IGNORECASE)

    session_id = (
        _pop_text(rest, "session") or _pop_text(rest, "session_name") or kv.get("session name", "")
        or _session_from_path(source) or _text(rest.get("session_id")) or title
    )  # fmt: skip
    started = None
    for key in ("date", "timestamp", "ts", "created"):
        raw_date = rest.get(key)
        started = as_datetime(raw_date)
        if started is not None:
            rest.pop(key)
            named = timestamp_from_name(source.name) if source is not None else None
            if not isinstance(raw_date, datetime) and named and named.date() == started.date():
                started = named  # a bare date: the file name carries the time of day
            break
    if started is None:
        started = as_datetime(kv.get("created") or kv.get("date") or kv.get("updated"))
    if started is None and source is not None:
        started = timestamp_from_name(source.name)

    raw_status = rest.get("status") or kv.get("status") or rest.get("outcome")
    status = map_status(raw_status) if raw_status is not None else ""
    if isinstance(rest.get("status"), str) and rest["status"].strip().lower() == status:
        rest.pop("status")

    description = _pop_text(rest, "goal") or _pop_text(rest, "topic") or kv.get("goal", "") or title
    git = rest.get("git")
    commit = _pop_text(rest, "git_commit") or kv.get("commit", "")
    branch = _pop_text(rest, "branch") or kv.get("branch", "")
    if isinstance(git, dict):
        remaining = dict(git)
        commit = commit or _pop_text(remaining, "commit")
        branch = branch or _pop_text(remaining, "branch")
        if remaining:
            rest["git"] = remaining
        else:
            rest.pop("git")

    done = rest.get("done_this_session") or rest.get("this_session")
    key_files = _dedupe(
        str(f) for entry in _as_list(done) if isinstance(entry, dict)
        for f in _as_list(entry.get("files")) if f
    )  # fmt: skip
    decisions = _decisions_from_yaml(rest.pop("decisions")) if "decisions" in rest else []
    learnings = _learnings(rest.pop("worked", None), "WORKING_SOLUTION", "verified")
    learnings += _learnings(rest.pop("failed", None), "FAILED_APPROACH", "verified")
    learnings += _learnings(rest.pop("findings", None), "CODEBASE_PATTERN", "inferred")
    blockers = [
        {"type": "technical", "description": _entry_text(item), "severity": "medium"}
        for item in _as_list(rest.pop("blockers", None))
        if _entry_text(item)
    ]
    questions = _as_list(rest.pop("questions", None))
    context_needed = [_entry_text(q) for q in questions if _entry_text(q)]
    next_steps = [_entry_text(n) for n in _as_list(rest.pop("next", None)) if _entry_text(n)]
    now = rest.get("now")
    if isinstance(now, str) and now.strip() and now.strip() not in next_steps:
        next_steps.insert(0, now.strip())
    artifacts: dict[str, list[str]] = {"created": [], "modified": [], "deleted": []}
    files = rest.get("files")
    if isinstance(files, dict):
        remaining = dict(files)
        for name in artifacts:
            artifacts[name] = [str(f) for f in _as_list(remaining.pop(name, None)) if f]
        if remaining:
            rest["files"] = remaining
        else:
            rest.pop("files")
    elif isinstance(files, list):
        artifacts["modified"] = [str(f) for f in rest.pop("files") if f]
    skills = [str(s) for s in _as_list(rest.pop("skills_used", None)) if s]
    warnings: list[str] = []

    if sections:
        next_steps = next_steps or list_items(
            find_sections(sections, [*_NEXT_SECTIONS])
        )
        refs = find_sections(sections, ["critical references"])
        questions_md = find_sections(sections, ["open questions"])
        context_needed = context_needed or list_items(refs + questions_md)
        key_files = key_files or _paths(refs)
        if not learnings:
            worked = list_items(find_sections(sections, ["what worked"]))
            failed = list_items(find_sections(sections, ["what failed", "what could be improved"]))
            learnings = _learnings(worked, "WORKING_SOLUTION", "verified")
            learnings += _learnings(failed, "FAILED_APPROACH", "verified")
        decisions = decisions or _decisions_from_markdown(
            find_sections(sections, ["key decisions", "decisions"])
        )
        if not any(artifacts.values()):
            artifacts["modified"] = _paths(
                find_sections(sections, [*_FILE_SECTIONS])
            )
        blockers = blockers or [
            {"type": "technical", "description": item, "severity": "medium"}
            for item in list_items(find_sections(sections, ["blockers"]))
        ]
        warnings = list_items(find_sections(sections, ["warnings"]))
        if not description:
            goal_lines = find_sections(sections, ["goal", "task summary"])
            goal = [strip_inline(line) for line in goal_lines]
            description = next((line for line in goal if line), "")

    return {
        "session": {"id": session_id, "started_at": started},
        "task": {"description": description, "status": status, "skills_used": skills},
        "context": {
            "project_path": project_from_path(source) or "",
            "git_commit": commit,
            "git_branch": branch,
            "key_files": key_files[:_MAX_KEY_FILES],
        },
        "decisions": decisions,
        "artifacts": artifacts,
        "learnings": learnings,
        "blockers": blockers,
        "resume": {
            "next_steps": next_steps,
            "context_needed": context_needed,
            "warnings": warnings,
        },
        "notes": body or "",
        "extra": rest,
    }
