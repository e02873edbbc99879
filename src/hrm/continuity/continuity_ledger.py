"""Continuity ledgers: the within-session state file Ring and Continuous-Claude keep across clears.

A ledger (``CONTINUITY-<name>.md``) says the goal, the constraints, the decisions so far, what is
done, the one thing being done now, what comes next, and what is still unconfirmed. The session
start hook finds the active one and injects a short summary. These are Markdown documents written
by agents, so reading is lenient: missing sections are empty, unknown ones ignored.

Where ledgers live (checked against the real tools):

* Continuous-Claude v1: ``thoughts/ledgers/CONTINUITY_CLAUDE-<session>.md``
* Ring: ``.ring/ledgers/CONTINUITY-<session>.md``
* hrm: ``.hrm/ledgers/CONTINUITY-<session>.md``
* Continuous-Claude fork (ledger synthesis): ``thoughts/shared/handoffs/<stream>/current.md``
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hrm.continuity import _markdown
from hrm.continuity._timestamps import as_datetime
from hrm.errors import HRMError

__all__ = [
    "LEDGER_LOCATIONS",
    "ContinuityLedger",
    "find_active_ledger",
    "find_ledgers",
    "parse_ledger",
    "summarize_ledger",
]

LEDGER_LOCATIONS: tuple[tuple[str, str], ...] = (
    ("thoughts/ledgers", "CONTINUITY_CLAUDE-*.md"),
    (".ring/ledgers", "CONTINUITY*.md"),
    (".hrm/ledgers", "CONTINUITY*.md"),
    ("thoughts/shared/handoffs/*", "current.md"),
)
"""(directory glob, file glob) pairs under a project where ledgers are looked for."""

_STATE_LINE = re.compile(r"^\s*[-*]?\s*\**(done|now|next)\**\s*:\s*(.*)$", re.IGNORECASE)
_NESTED = re.compile(r"^\s+[-*+]\s+(.*)$")
_UPDATED = re.compile(r"^\s*\**updated:?\**:?\s*(.+)$", re.IGNORECASE)
_UNCONFIRMED = re.compile(r"^unconfirmed\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ContinuityLedger:
    """The sections of one ledger; empty where the file does not say."""

    path: Path | None
    session: str
    updated: datetime | None
    goal: str
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    now: list[str] = field(default_factory=list)
    next: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    working_set: list[str] = field(default_factory=list)


def find_ledgers(project_dir: Path) -> list[Path]:
    """Every ledger under a project, most recently modified first."""
    found: set[Path] = set()
    for directory, pattern in LEDGER_LOCATIONS:
        for folder in project_dir.glob(directory):
            if folder.is_dir():
                found.update(p for p in folder.glob(pattern) if p.is_file())
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


def find_active_ledger(project_dir: Path) -> Path | None:
    """The ledger the current work is using: the most recently modified one, or None."""
    ledgers = find_ledgers(project_dir)
    return ledgers[0] if ledgers else None


def _items(lines: list[str]) -> list[str]:
    items = _markdown.list_items(lines)
    if items:
        return items
    return [
        _markdown.strip_inline(line) for line in lines if line.strip() and not line.startswith("|")
    ]


def _state(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    buckets: dict[str, list[str]] = {"done": [], "now": [], "next": []}
    current: str | None = None
    for line in lines:
        state = _STATE_LINE.match(line)
        if state:
            current = state.group(1).lower()
            inline = _markdown.strip_inline(state.group(2))
            if inline:
                buckets[current].append(inline)
            continue
        nested = _NESTED.match(line)
        if nested and current:
            buckets[current].append(_markdown.strip_inline(nested.group(1)))
    return buckets["done"], buckets["now"], buckets["next"]


def parse_ledger(text: str, *, path: Path | None = None) -> ContinuityLedger:
    """Read a ledger's sections: Goal, Constraints, Key Decisions, State (Done/Now/Next),
    Open Questions and Working Set, plus the ``# Session:`` title and ``Updated:`` line.

    The synthesised ``current.md`` layout (``## Ledger`` with ``**Goal:**`` and ``### Now``)
    reads too.
    """
    front = _markdown.split_front_matter(text)
    sections = _markdown.parse_sections(front.body)
    title = next((s.title for s in sections if s.level == 1), "")
    session = re.sub(r"^(session|work stream)\s*:\s*", "", title, flags=re.IGNORECASE)
    if not session and path is not None:
        session = re.sub(r"^CONTINUITY(_CLAUDE)?-?", "", path.stem) or path.parent.name
    fields = _markdown.key_values(_markdown.find_sections(sections, ["ledger"]))
    updated = None
    for section in sections[:3]:
        for line in section.lines:
            match = _UPDATED.match(line)
            if match and updated is None:
                updated = as_datetime(_markdown.strip_inline(match.group(1)))
    goal_lines = _markdown.find_sections(sections, ["goal"])
    goal = " ".join(_markdown.strip_inline(line) for line in goal_lines if line.strip())
    done, now, upcoming = _state(_markdown.find_sections(sections, ["state"]))
    now = now or _items(_markdown.find_sections(sections, ["now"]))
    upcoming = upcoming or _items(_markdown.find_sections(sections, ["next"]))
    done = done or _items(_markdown.find_sections(sections, ["this session", "done"]))
    questions = [
        _UNCONFIRMED.sub("", item)
        for item in _items(_markdown.find_sections(sections, ["open questions"]))
    ]
    return ContinuityLedger(
        path=path,
        session=session.strip(),
        updated=updated or as_datetime(fields.get("updated")),
        goal=goal or fields.get("goal", ""),
        constraints=_items(_markdown.find_sections(sections, ["constraints"])),
        decisions=_items(_markdown.find_sections(sections, ["key decisions", "decisions"])),
        done=done,
        now=now,
        next=upcoming,
        open_questions=questions,
        working_set=_items(_markdown.find_sections(sections, ["working set"])),
    )


def summarize_ledger(path: Path, max_chars: int = 3000) -> str:
    """A compact summary for a new session's context, most useful parts first, ≤ `max_chars`.

    Order: session and update time, goal, now, next, open questions, decisions, done (count and
    the last three), working set, constraints.

    Raises:
        HRMError: ``SOURCE_NOT_FOUND`` when the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise HRMError.not_found("continuity ledger", str(path), str(exc)) from exc
    ledger = parse_ledger(text, path=path)
    header = f"Continuity ledger: {ledger.session or path.stem}"
    if ledger.updated is not None:
        header += f" (updated {ledger.updated.isoformat()})"
    lines = [header]
    if ledger.goal:
        lines.append(f"Goal: {ledger.goal}")
    if ledger.now:
        lines.append("Now: " + "; ".join(ledger.now))
    parts = [
        ("Next", ledger.next),
        ("Open questions (unconfirmed)", ledger.open_questions),
        ("Key decisions", ledger.decisions),
    ]
    for title, items in parts:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)
    if ledger.done:
        lines.append(f"Done ({len(ledger.done)}): " + "; ".join(ledger.done[-3:]))
    for title, items in (("Working set", ledger.working_set), ("Constraints", ledger.constraints)):
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)
    summary = "\n".join(lines)
    if len(lines) == 1:
        summary += "\n" + text.strip()
    return summary if len(summary) <= max_chars else summary[: max(max_chars - 1, 0)] + "…"
