"""Legacy handoffs and ledger events mapped to hrm's native handoff document.

Continuous-Claude (v1 Markdown, v3 YAML in two documents, ledger events) and Ring (Markdown with
or without front matter) name the same things differently. `legacy_document` turns one such file
(its YAML fields and its Markdown body) into the plain dict `handoffs.handoff_from_dict` reads;
every field it does not map stays in ``extra`` under its original name. The Markdown is read as
CommonMark through `hrm.continuity._commonmark`.

The Markdown parser is loaded only when a body is mapped; reading hrm's own handoffs (as the
hooks do) never imports this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from hrm.continuity import _commonmark as cm
from hrm.continuity._commonmark import Block, Section
from hrm.continuity._timestamps import as_datetime, timestamp_from_name

__all__ = [
    "is_legacy_mapping",
    "legacy_document",
    "map_status",
    "project_from_path",
]

_LEGACY_KEYS = frozenset(
    {
        "goal", "now", "done_this_session", "this_session", "next", "outcome", "mode",
        "schema_version", "session", "session_id", "session_name", "date", "status",
        "decisions", "findings", "worked", "failed", "files", "blockers", "questions",
        "test", "event_type", "topic", "git_commit", "branch",
    }
)  # fmt: skip
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
    text = str(raw).lower() if raw is not None else ""
    for value, needles in _STATUS_RULES:
        if any(needle in text for needle in needles):
            return value
    return str(raw).strip() if raw is not None else ""


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


def _decisions_from_markdown(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    header, rows = cm.table(blocks)
    if len(header) >= 2 and rows:
        return [_decision(row[0], row[1] if len(row) > 1 else "") for row in rows if row and row[0]]
    if any(block.kind == "heading" for block in blocks):
        return _decisions_from_subsections(blocks)
    out = []
    for item in cm.list_items(blocks):
        parts = [part.strip() for part in item.split("; ")]
        decision = re.sub(r"^decision\s*:\s*", "", parts[0], flags=re.IGNORECASE)
        rationale, alternatives = "", []
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
        out.append(_decision(decision.strip(), rationale, alternatives))
    return out


def _decisions_from_subsections(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """``### Decision 1: Title`` subsections, their text as the rationale."""
    out: list[dict[str, Any]] = []
    body: list[Block] = []
    title: str | None = None
    for block in [*blocks, Block("heading", ["#"])]:
        if block.kind != "heading":
            body.append(block)
            continue
        if title is not None:
            text = " ".join(cm.plain_lines(body, with_headings=False))
            out.append(_decision(title, text[:500]))
        title = re.sub(r"^#+\s*(decision\s*\d*\s*:\s*)?", "", block.lines[0], flags=re.IGNORECASE)
        body = []
    return out


def _decision(
    decision: str, rationale: str, alternatives: list[str] | None = None
) -> dict[str, Any]:
    return {"decision": decision, "rationale": rationale, "alternatives": alternatives or []}


def _learnings(raw: Any, kind: str, confidence: str) -> list[dict[str, Any]]:
    items = raw.items() if isinstance(raw, dict) else _as_list(raw)
    out = []
    for item in items:
        text = f"{item[0]}: {item[1]}" if isinstance(item, tuple) else _entry_text(item)
        if text:
            out.append({"type": kind, "content": text, "confidence": confidence})
    return out


def _blockers(items: Iterable[Any]) -> list[dict[str, Any]]:
    texts = (_entry_text(item) for item in items)
    return [{"type": "technical", "description": t, "severity": "medium"} for t in texts if t]


def legacy_document(meta: dict[str, Any], body: str | None, path: str | None) -> dict[str, Any]:
    """Map a legacy handoff (front matter or YAML `meta`, Markdown `body`) to our native dict.

    Continuous-Claude v3 fields: ``goal`` → task, ``next`` (after ``now``) → next steps,
    ``worked``/``failed``/``findings`` → learnings, ``questions`` → context needed,
    ``files`` → artifacts, ``git`` → context. Ring / v1 Markdown: front matter ``topic``,
    ``session_name``, ``git_commit``, ``branch``; sections such as *Action Items & Next Steps*,
    *What Worked*, *Key Decisions*, *Critical References*; a ``## Metadata`` list or table when
    there is no front matter. YAML fields win over the Markdown; the body is kept whole as notes.
    """
    rest = dict(meta)
    source = Path(path) if path else None
    sections = cm.read(body) if body else []
    kv = cm.key_values(cm.find(sections, ["metadata", "ledger"])) if sections else {}
    title = next((s.title for s in sections if s.level == 1), "")
    title = re.sub(r"^(handoff|session|work stream)\s*:\s*", "", title, flags=re.IGNORECASE)
    doc = _from_fields(rest, kv, title, source)
    if sections:
        _fill_from_sections(doc, sections)
    context_needed, warnings = doc.pop("context_needed"), doc.pop("warnings")
    return {
        "session": {"id": doc["session_id"], "started_at": doc["started"]},
        "task": {"description": doc["description"], "status": doc["status"],
                 "skills_used": doc["skills"]},
        "context": {
            "project_path": project_from_path(source) or "",
            "git_commit": doc["commit"],
            "git_branch": doc["branch"],
            "key_files": doc["key_files"][:_MAX_KEY_FILES],
        },
        "decisions": doc["decisions"],
        "artifacts": doc["artifacts"],
        "learnings": doc["learnings"],
        "blockers": doc["blockers"],
        "resume": {"next_steps": doc["next_steps"], "context_needed": context_needed,
                   "warnings": warnings},
        "notes": body or "",
        "extra": rest,
    }  # fmt: skip


def _from_fields(
    rest: dict[str, Any], kv: dict[str, str], title: str, source: Path | None
) -> dict[str, Any]:
    """What the YAML fields (and the Metadata block) say; mapped fields leave `rest`."""
    session_id = (
        _pop_text(rest, "session") or _pop_text(rest, "session_name") or kv.get("session name", "")
        or _session_from_path(source) or _text(rest.get("session_id")) or title
    )  # fmt: skip
    raw_status = rest.get("status") or kv.get("status") or rest.get("outcome")
    status = map_status(raw_status) if raw_status is not None else ""
    if isinstance(rest.get("status"), str) and rest["status"].strip().lower() == status:
        rest.pop("status")
    description = _pop_text(rest, "goal") or _pop_text(rest, "topic") or kv.get("goal", "") or title
    commit, branch = _git(rest, kv)
    done = rest.get("done_this_session") or rest.get("this_session")
    key_files = _dedupe(
        str(f) for entry in _as_list(done) if isinstance(entry, dict)
        for f in _as_list(entry.get("files")) if f
    )  # fmt: skip
    learnings = _learnings(rest.pop("worked", None), "WORKING_SOLUTION", "verified")
    learnings += _learnings(rest.pop("failed", None), "FAILED_APPROACH", "verified")
    learnings += _learnings(rest.pop("findings", None), "CODEBASE_PATTERN", "inferred")
    questions = _as_list(rest.pop("questions", None))
    return {
        "session_id": session_id,
        "started": _started(rest, kv, source),
        "status": status,
        "description": description,
        "commit": commit,
        "branch": branch,
        "key_files": key_files,
        "decisions": _decisions_from_yaml(rest.pop("decisions")) if "decisions" in rest else [],
        "learnings": learnings,
        "blockers": _blockers(_as_list(rest.pop("blockers", None))),
        "context_needed": [_entry_text(q) for q in questions if _entry_text(q)],
        "next_steps": _next_steps(rest),
        "artifacts": _artifacts(rest),
        "skills": [str(s) for s in _as_list(rest.pop("skills_used", None)) if s],
        "warnings": [],
    }


def _started(rest: dict[str, Any], kv: dict[str, str], source: Path | None) -> datetime | None:
    for key in ("date", "timestamp", "ts", "created"):
        raw = rest.get(key)
        started = as_datetime(raw)
        if started is not None:
            rest.pop(key)
            named = timestamp_from_name(source.name) if source is not None else None
            if not isinstance(raw, datetime) and named and named.date() == started.date():
                return named  # a bare date: the file name carries the time of day
            return started
    started = as_datetime(kv.get("created") or kv.get("date") or kv.get("updated"))
    if started is None and source is not None:
        started = timestamp_from_name(source.name)
    return started


def _git(rest: dict[str, Any], kv: dict[str, str]) -> tuple[str, str]:
    commit = _pop_text(rest, "git_commit") or kv.get("commit", "")
    branch = _pop_text(rest, "branch") or kv.get("branch", "")
    git = rest.get("git")
    if isinstance(git, dict):
        remaining = dict(git)
        commit = commit or _pop_text(remaining, "commit")
        branch = branch or _pop_text(remaining, "branch")
        if remaining:
            rest["git"] = remaining
        else:
            rest.pop("git")
    return commit, branch


def _next_steps(rest: dict[str, Any]) -> list[str]:
    steps = [_entry_text(n) for n in _as_list(rest.pop("next", None)) if _entry_text(n)]
    now = rest.get("now")
    if isinstance(now, str) and now.strip() and now.strip() not in steps:
        steps.insert(0, now.strip())
    return steps


def _artifacts(rest: dict[str, Any]) -> dict[str, list[str]]:
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
    return artifacts


def _fill_from_sections(doc: dict[str, Any], sections: Sequence[Section]) -> None:
    """Fill what the YAML fields left empty from the Markdown sections."""
    doc["next_steps"] = doc["next_steps"] or cm.list_items(cm.find(sections, _NEXT_SECTIONS))
    refs = cm.find(sections, ["critical references"])
    questions = cm.find(sections, ["open questions"])
    doc["context_needed"] = doc["context_needed"] or cm.list_items([*refs, *questions])
    doc["key_files"] = doc["key_files"] or cm.paths(refs)
    if not doc["learnings"]:
        worked = cm.list_items(cm.find(sections, ["what worked"]))
        failed = cm.list_items(cm.find(sections, ["what failed", "what could be improved"]))
        doc["learnings"] = _learnings(worked, "WORKING_SOLUTION", "verified")
        doc["learnings"] += _learnings(failed, "FAILED_APPROACH", "verified")
    decided = cm.find(sections, ["key decisions", "decisions"])
    doc["decisions"] = doc["decisions"] or _decisions_from_markdown(decided)
    if not any(doc["artifacts"].values()):
        doc["artifacts"]["modified"] = cm.paths(cm.find(sections, _FILE_SECTIONS))
    doc["blockers"] = doc["blockers"] or _blockers(cm.list_items(cm.find(sections, ["blockers"])))
    doc["warnings"] = cm.list_items(cm.find(sections, ["warnings"]))
    if not doc["description"]:
        goal = cm.plain_lines(cm.find(sections, ["goal", "task summary"]))
        doc["description"] = next((line for line in goal if line), "")
