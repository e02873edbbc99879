"""Handoffs (003 §3): what one session leaves for the next, as typed records, YAML and Markdown.

A handoff says what the task was, where it stands, what was decided and learned, and how to
resume. Our own formats are lossless: YAML is one document; Markdown is the same YAML as front
matter with the free-form notes as the body (the shape of 003's example). Reading is lenient
because real handoffs are irregular — Continuous-Claude v3 writes two YAML documents in one file,
Ring and Continuous-Claude v1 write Markdown with (or without) front matter, field names differ
between versions — so every field we cannot map is kept in ``extra`` and written back unchanged.
Only `validate_schema` is strict, and `serialize` refuses what it rejects.

The records themselves live in `hrm.continuity.handoff_types` and are re-exported here.
`hrm.continuity.handoff_store.HandoffStore` keeps them in the home.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
from dataclasses import replace
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import yaml

from hrm import _yaml
from hrm._atomic import atomic_write
from hrm.continuity._markdown import split_front_matter
from hrm.continuity._timestamps import as_datetime, timestamp_from_name
from hrm.continuity.confidence import VerificationStatus
from hrm.continuity.handoff_types import (
    ArtifactReferences,
    Blocker,
    BlockerSeverity,
    BlockerType,
    ContextInfo,
    Decision,
    HandoffData,
    HandoffFormat,
    HandoffLearning,
    HandoffMigrationResult,
    HandoffSummary,
    ResumeInstructions,
    SerializedHandoff,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
    ValidationError,
    ValidationReport,
)
from hrm.errors import ErrorCode, HRMError
from hrm.scrubbing import contains_secret, scrub

__all__ = [
    "HANDOFF_SCHEMA",
    "LEARNING_TYPES",
    "ArtifactReferences",
    "Blocker",
    "BlockerSeverity",
    "BlockerType",
    "ContextInfo",
    "Decision",
    "HandoffData",
    "HandoffFormat",
    "HandoffLearning",
    "HandoffMigrationResult",
    "HandoffSummary",
    "ResumeInstructions",
    "SerializedHandoff",
    "SessionMetadata",
    "TaskInfo",
    "TaskStatus",
    "ValidationError",
    "ValidationReport",
    "deserialize",
    "estimate_tokens",
    "fill_legacy_gaps",
    "handoff_from_dict",
    "handoff_to_dict",
    "migrate",
    "resume_brief",
    "serialize",
    "validate_schema",
]

logger = logging.getLogger(__name__)

HANDOFF_SCHEMA = "hrm-handoff-v1"
"""The ``schema`` value our own handoffs carry; 003's example ``ring-handoff-v1`` reads the same."""
_NATIVE_SCHEMAS = frozenset({HANDOFF_SCHEMA, "ring-handoff-v1"})
_VERSION = "1.0"
MAX_KEY_FILES = 10
"""003 §3: ``key_files`` lists at most the 10 most relevant files."""

LEARNING_TYPES: tuple[str, ...] = (
    "FAILED_APPROACH",
    "WORKING_SOLUTION",
    "USER_PREFERENCE",
    "CODEBASE_PATTERN",
    "ARCHITECTURAL_DECISION",
    "ERROR_FIX",
    "OPEN_THREAD",
)
"""003 LearningType values a handoff learning may carry."""


# ── tokens, dict form ────────────────────────────────────────────────────────


def estimate_tokens(text: str) -> int:
    """Estimate the tokens `text` costs a model: one per four characters, rounded up.

    The four-characters rule is the usual estimate for English and code with BPE tokenizers;
    it needs no tokenizer, so hooks can call it within their budget.
    """
    return (len(text) + 3) // 4


def _value(item: Enum | str) -> str:
    return item.value if isinstance(item, Enum) else item


def _iso(moment: datetime | None) -> str | None:
    if moment is None or isinstance(moment, datetime):
        return None if moment is None else moment.isoformat()
    return str(moment)  # text the schema accepted as an aware timestamp


def handoff_to_dict(handoff: HandoffData, *, include_notes: bool = True) -> dict[str, Any]:
    """The native document of a handoff: plain, YAML- and JSON-ready values."""
    session: dict[str, Any] = {
        "id": handoff.session.id,
        "started_at": _iso(handoff.session.started_at),
    }
    if handoff.session.ended_at is not None:
        session["ended_at"] = _iso(handoff.session.ended_at)
    if handoff.session.duration_seconds is not None:
        session["duration_seconds"] = handoff.session.duration_seconds
    doc: dict[str, Any] = {
        "version": _VERSION,
        "schema": HANDOFF_SCHEMA,
        "session": session,
        "task": {
            "description": handoff.task.description,
            "status": _value(handoff.task.status),
            "skills_used": list(handoff.task.skills_used),
        },
        "context": {
            "project_path": handoff.context.project_path,
            "git_commit": handoff.context.git_commit,
            "git_branch": handoff.context.git_branch,
            "key_files": list(handoff.context.key_files),
        },
        "decisions": [
            {"decision": d.decision, "rationale": d.rationale, "alternatives": list(d.alternatives)}
            for d in handoff.decisions
        ],
        "artifacts": {
            "created": list(handoff.artifacts.created),
            "modified": list(handoff.artifacts.modified),
            "deleted": list(handoff.artifacts.deleted),
        },
        "learnings": [
            {"type": item.type, "content": item.content, "confidence": _value(item.confidence)}
            for item in handoff.learnings
        ],
        "blockers": [
            {"type": _value(b.type), "description": b.description, "severity": _value(b.severity)}
            for b in handoff.blockers
        ],
        "resume": {
            "next_steps": list(handoff.resume.next_steps),
            "context_needed": list(handoff.resume.context_needed),
            "warnings": list(handoff.resume.warnings),
        },
    }
    if include_notes:
        doc["notes"] = handoff.notes
    if handoff.extra:
        doc["extra"] = handoff.extra
    return doc


def _mismatch(message: str, path: str | None, **context: Any) -> HRMError:
    where = f"{path}: " if path else ""
    return HRMError(
        ErrorCode.SCHEMA_MISMATCH,
        where + message,
        recoverable=False,
        context={"path": path, **context},
    )


_E = TypeVar("_E", bound=Enum)


def _enum_or_raw(kind: type[_E], raw: Any) -> _E | str:
    text = "" if raw is None else str(raw).strip()
    for member in kind:
        if text.lower() in (str(member.value).lower(), member.name.lower()):
            return member
    return text


def _strings(raw: Any, where: str, path: str | None) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list):
        raise _mismatch(f"'{where}' must be a list of strings", path, field=where)
    return [str(item) for item in raw if item is not None]


def _mapping(raw: Any, where: str, path: str | None) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _mismatch(f"'{where}' must be a mapping, got {type(raw).__name__}", path, field=where)
    return raw


def _datetime(raw: Any, where: str, path: str | None) -> datetime | None:
    parsed = as_datetime(raw)
    if raw not in (None, "") and parsed is None:
        raise _mismatch(f"'{where}' is not an ISO-8601 timestamp: {raw!r}", path, field=where)
    return parsed


def handoff_from_dict(
    doc: dict[str, Any],
    *,
    notes: str | None = None,
    path: str | None = None,
    source_format: HandoffFormat | None = None,
) -> HandoffData:
    """Build a handoff from its native document (the inverse of `handoff_to_dict`).

    Unknown top-level keys join ``extra``.

    Raises:
        HRMError: ``SCHEMA_MISMATCH`` naming the field when a section has the wrong shape.
    """
    known = {"version", "schema", "session", "task", "context", "decisions", "artifacts"}
    known |= {"learnings", "blockers", "resume", "notes", "extra"}
    session = _mapping(doc.get("session"), "session", path)
    task = _mapping(doc.get("task"), "task", path)
    context = _mapping(doc.get("context"), "context", path)
    artifacts = _mapping(doc.get("artifacts"), "artifacts", path)
    resume = _mapping(doc.get("resume"), "resume", path)
    duration = session.get("duration_seconds")
    extra = {key: value for key, value in doc.items() if key not in known}
    extra.update(_mapping(doc.get("extra"), "extra", path))
    return HandoffData(
        session=SessionMetadata(
            id=str(session.get("id") or ""),
            started_at=_datetime(session.get("started_at"), "session.started_at", path),
            ended_at=_datetime(session.get("ended_at"), "session.ended_at", path),
            duration_seconds=duration if isinstance(duration, int) else None,
        ),
        task=TaskInfo(
            description=str(task.get("description") or ""),
            status=_enum_or_raw(TaskStatus, task.get("status")),
            skills_used=_strings(task.get("skills_used"), "task.skills_used", path),
        ),
        context=ContextInfo(
            project_path=str(context.get("project_path") or ""),
            git_commit=str(context.get("git_commit") or ""),
            git_branch=str(context.get("git_branch") or ""),
            key_files=_strings(context.get("key_files"), "context.key_files", path),
        ),
        decisions=[_decision(item, i, path) for i, item in _items(doc, "decisions", path)],
        artifacts=ArtifactReferences(
            created=_strings(artifacts.get("created"), "artifacts.created", path),
            modified=_strings(artifacts.get("modified"), "artifacts.modified", path),
            deleted=_strings(artifacts.get("deleted"), "artifacts.deleted", path),
        ),
        learnings=[_learning(item, i, path) for i, item in _items(doc, "learnings", path)],
        blockers=[_blocker(item, i, path) for i, item in _items(doc, "blockers", path)],
        resume=ResumeInstructions(
            next_steps=_strings(resume.get("next_steps"), "resume.next_steps", path),
            context_needed=_strings(resume.get("context_needed"), "resume.context_needed", path),
            warnings=_strings(resume.get("warnings"), "resume.warnings", path),
        ),
        notes=str(doc.get("notes") or "") if notes is None else notes,
        extra=extra,
        source_format=source_format,
    )


def _items(doc: dict[str, Any], key: str, path: str | None) -> builtins.list[tuple[int, Any]]:
    raw = doc.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _mismatch(f"'{key}' must be a list", path, field=key)
    return list(enumerate(raw))


def _decision(item: Any, index: int, path: str | None) -> Decision:
    if isinstance(item, str):
        return Decision(decision=item)
    entry = _mapping(item, f"decisions[{index}]", path)
    return Decision(
        decision=str(entry.get("decision") or ""),
        rationale=str(entry.get("rationale") or ""),
        alternatives=_strings(entry.get("alternatives"), f"decisions[{index}].alternatives", path),
    )


def _learning(item: Any, index: int, path: str | None) -> HandoffLearning:
    entry = _mapping(item, f"learnings[{index}]", path)
    return HandoffLearning(
        type=str(entry.get("type") or "").upper(),
        content=str(entry.get("content") or ""),
        confidence=_enum_or_raw(VerificationStatus, entry.get("confidence")),
    )


def _blocker(item: Any, index: int, path: str | None) -> Blocker:
    if isinstance(item, str):
        return Blocker(type=BlockerType.TECHNICAL, description=item)
    entry = _mapping(item, f"blockers[{index}]", path)
    return Blocker(
        type=_enum_or_raw(BlockerType, entry.get("type")),
        description=str(entry.get("description") or ""),
        severity=_enum_or_raw(BlockerSeverity, entry.get("severity")),
    )


# ── validation ───────────────────────────────────────────────────────────────


def validate_schema(handoff: HandoffData) -> ValidationReport:
    """Check every constraint of 003 §3 and return all violations with their field paths.

    The constraints are ``hrm/data/schemas/handoff.schema.json`` (checked with jsonschema):
    required ``session.id``, an aware ``session.started_at``, ``task.description``, a known
    ``task.status``, ``context.project_path``; enum fields hold known values, lists at most
    their limits, items their required text; and a session ends after it starts. Warnings (never
    blocking) point at what a reader will miss: no next steps, text that looks like a secret,
    fields kept only in ``extra``.
    """
    from hrm.continuity._handoff_schema import violations

    errors = violations(handoff)
    return ValidationReport(valid=not errors, errors=errors, warnings=_warnings(handoff))


def _warnings(handoff: HandoffData) -> list[str]:
    warnings: list[str] = []
    if not handoff.resume.next_steps and handoff.task.status is not TaskStatus.COMPLETED:
        warnings.append("resume.next_steps is empty: the next session will not know where to start")
    texts = [handoff.notes, handoff.task.description, *handoff.resume.next_steps]
    texts += [item.content for item in handoff.learnings]
    if any(isinstance(t, str) and contains_secret(t) for t in texts):
        warnings.append("text looks like it contains a secret; it is redacted when stored")
    if isinstance(handoff.extra, dict) and handoff.extra:
        keys = ", ".join(sorted(str(k) for k in handoff.extra)[:8])
        warnings.append(f"{len(handoff.extra)} field(s) kept as-is in extra: {keys}")
    return warnings


# ── serialize / deserialize ──────────────────────────────────────────────────


class _Dumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings as literal blocks, so notes stay readable."""


_YAML_BREAKS = frozenset("\r\x85\u2028\u2029")
"""Characters YAML reads as line breaks; only double quotes (escaped) keep them exactly."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _YAML_BREAKS.intersection(value) else ("|" if "\n" in value else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def serialize(
    handoff: HandoffData, format: HandoffFormat = HandoffFormat.YAML
) -> SerializedHandoff:
    """Render a handoff; deserializing the result gives an equal handoff.

    YAML is one document with ``notes`` as a key. Markdown is the same document as front matter
    (without ``notes``) followed by a blank line and the notes.

    Raises:
        HRMError: ``VALIDATION_FAILED`` with ``context["errors"]`` (every violation, as dicts
            with ``field``, ``constraint``, ``message``) when `validate_schema` rejects it.
    """
    report = validate_schema(handoff)
    if not report.valid:
        first = report.errors[0]
        raise HRMError.validation_failed(
            f"Handoff is invalid: {first.message} ({len(report.errors)} error(s) in total)",
            errors=[vars(error) for error in report.errors],
        )
    if format is HandoffFormat.YAML:
        content = _dump(handoff_to_dict(handoff))
    else:
        front = _dump(handoff_to_dict(handoff, include_notes=False))
        content = f"---\n{front}---\n" + (f"\n{handoff.notes}" if handoff.notes else "")
    return SerializedHandoff(
        content=content,
        format=format,
        byte_size=len(content.encode("utf-8")),
        token_estimate=estimate_tokens(content),
    )


def deserialize(
    content: str, format: HandoffFormat | None = None, *, path: str | None = None
) -> HandoffData:
    """Read a handoff in any format we know, detecting it when `format` is None.

    Understood: our YAML and Markdown; Continuous-Claude v3 YAML (two documents: front matter and
    body, merged); Ring and Continuous-Claude v1 Markdown with or without front matter; ledger
    event files. `path` improves messages and lets a legacy file's folder name its session; a
    ``.yaml``/``.yml`` path is read as YAML when `format` is None.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for empty content; ``PARSE_ERROR`` with the line number
            for broken YAML; ``UNKNOWN_FORMAT`` when the text is neither YAML nor Markdown;
            ``SCHEMA_MISMATCH`` when it is YAML but not a handoff, or a section has the wrong shape.
    """
    if not content.strip():
        raise HRMError.validation_failed("Handoff content is empty", path=path)
    if format is None and path is not None and path.lower().endswith((".yaml", ".yml")):
        format = HandoffFormat.YAML  # a .yaml file with a broken body is an error, not prose
    front = split_front_matter(content)
    if front.yaml_text is not None:
        meta = _load_yaml(front.yaml_text, path, first_line=2)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise _mismatch("front matter is not a mapping", path)
        if str(meta.get("schema", "")) in _NATIVE_SCHEMAS:
            notes = front.body[1:] if front.body.startswith("\n") else front.body
            markdown = HandoffFormat.MARKDOWN
            return handoff_from_dict(meta, notes=notes, path=path, source_format=markdown)
        body_doc = None
        if format is not HandoffFormat.MARKDOWN and front.body.strip():
            strict = format is HandoffFormat.YAML
            body_doc = _body_mapping(front.body, path, front.body_line, strict=strict)
        if body_doc is not None:
            merged = dict(meta)
            for key, value in body_doc.items():
                merged[key if key not in merged else f"body.{key}"] = value
            return _from_legacy(merged, None, path, HandoffFormat.YAML)
        if not front.body.strip() and _is_legacy(meta):
            return _from_legacy(meta, None, path, HandoffFormat.YAML)
        return _from_legacy(meta, front.body, path, HandoffFormat.MARKDOWN)
    return _without_front_matter(content, format, path)


def _without_front_matter(
    content: str, format: HandoffFormat | None, path: str | None
) -> HandoffData:
    if format is not HandoffFormat.MARKDOWN:
        # YAML first: hrm's own handoffs are YAML, and reading them (SessionStart reads every
        # stored one) never needs the Markdown parser.
        try:
            doc = _load_yaml(content, path, first_line=1)
        except HRMError:
            if format is HandoffFormat.YAML or not _looks_like_markdown(content):
                raise
            doc = None
        if isinstance(doc, dict):
            if _is_native(doc):
                return handoff_from_dict(doc, path=path, source_format=HandoffFormat.YAML)
            if _is_legacy(doc):
                return _from_legacy(doc, None, path, HandoffFormat.YAML)
            if not _looks_like_markdown(content):
                raise _mismatch("YAML mapping has no handoff fields (session, task, goal)", path)
        elif format is HandoffFormat.YAML:
            raise _mismatch("a YAML handoff must be a mapping", path)
    if _looks_like_markdown(content):
        return _from_legacy({}, content, path, HandoffFormat.MARKDOWN)
    raise HRMError(
        ErrorCode.UNKNOWN_FORMAT,
        f"{path + ': ' if path else ''}not a handoff: neither a YAML mapping nor Markdown with"
        " headings",
        recoverable=False,
        context={"path": path},
    )


# The legacy mapping and the Markdown parser load only for legacy files: hrm's own handoffs,
# which the hooks read, are native YAML (or front matter naming our schema).


def _is_legacy(doc: dict[str, Any]) -> bool:
    from hrm.continuity._legacy_handoff import is_legacy_mapping

    return is_legacy_mapping(doc)


def _looks_like_markdown(text: str) -> bool:
    from hrm.continuity._commonmark import looks_like_markdown

    return looks_like_markdown(text)


def _is_native(doc: dict[str, Any]) -> bool:
    if str(doc.get("schema", "")) in _NATIVE_SCHEMAS:
        return True
    return isinstance(doc.get("session"), dict) and isinstance(doc.get("task"), dict)


def _load_yaml(text: str, path: str | None, *, first_line: int) -> Any:
    try:
        return _yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + mark.line if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise HRMError.parse_error(f"invalid YAML: {problem}", path=path, line=line) from exc


def _body_mapping(
    body: str, path: str | None, first_line: int, *, strict: bool
) -> dict[str, Any] | None:
    try:
        doc = _load_yaml(body, path, first_line=first_line)
    except HRMError:
        if strict:
            raise
        return None
    if isinstance(doc, dict) and (
        _is_legacy(doc) or strict or not _looks_like_markdown(body)
    ):
        return doc
    return None


def _from_legacy(
    meta: dict[str, Any], body: str | None, path: str | None, fmt: HandoffFormat
) -> HandoffData:
    from hrm.continuity._legacy_handoff import legacy_document

    doc = legacy_document(meta, body, path)
    return handoff_from_dict(doc, path=path, source_format=fmt)


# ── legacy gaps, migrate, resume brief ───────────────────────────────────────


def fill_legacy_gaps(
    handoff: HandoffData, *, source_path: Path | None = None, project_path: str | None = None
) -> tuple[HandoffData, list[str]]:
    """Fill the required fields a legacy file does not carry, saying what was assumed.

    The session start falls back to the timestamp in the file name, then the file's mtime; the
    project to `project_path`, the project a ``thoughts/``, ``docs/`` or ``.ring/`` layout points
    at, then the file's folder; an unknown status becomes ``paused``; a missing description the
    session id. Only empty fields are touched.
    """
    warnings: list[str] = []
    session, task, context = handoff.session, handoff.task, handoff.context
    if session.started_at is None and source_path is not None:
        started = timestamp_from_name(source_path.name)
        if started is None:
            started = datetime.fromtimestamp(source_path.stat().st_mtime, tz=UTC)
            warnings.append("no date in the handoff or its name: used the file's modification time")
        session = replace(session, started_at=started)
    if not session.id:
        session = replace(session, id="general")
        warnings.append("no session name: filed under 'general'")
    if not context.project_path:
        from hrm.continuity._legacy_handoff import project_from_path

        derived = project_path or project_from_path(source_path)
        if derived is None and source_path is not None:
            derived = str(source_path.parent.resolve())
            warnings.append(f"no project path: used the handoff's folder {derived}")
        context = replace(context, project_path=derived or "")
    if not isinstance(task.status, TaskStatus):
        if task.status:
            warnings.append(f"status {task.status!r} is not one of ours: recorded as 'paused'")
        task = replace(task, status=TaskStatus.PAUSED)
    if not task.description.strip():
        task = replace(task, description=f"Session {session.id}")
    if len(context.key_files) > MAX_KEY_FILES:
        context = replace(context, key_files=context.key_files[:MAX_KEY_FILES])
    return replace(handoff, session=session, task=task, context=context), warnings


def migrate(source_path: Path, destination: Path | None = None) -> HandoffMigrationResult:
    """Convert a handoff file (typically legacy Markdown) to our YAML, keeping the original.

    The default destination is the source with a ``.yaml`` suffix (``.hrm.yaml`` when the source
    already ends in ``.yaml``). Secrets are redacted in the copy. Nothing is overwritten.

    Raises:
        HRMError: ``SOURCE_NOT_FOUND``; ``PARSE_ERROR``/``UNKNOWN_FORMAT``/``SCHEMA_MISMATCH``
            when the source cannot be read; ``VALIDATION_FAILED`` with ``context["errors"]`` and
            ``context["partial_result"]`` when it cannot be made valid; ``PATH_EXISTS`` when the
            destination exists; ``PERMISSION_DENIED`` when it cannot be written.
    """
    source = Path(source_path)
    if not source.is_file():
        raise HRMError(
            ErrorCode.SOURCE_NOT_FOUND,
            f"No handoff file at '{source}'",
            recoverable=False,
            context={"path": str(source)},
        )
    raw = source.read_bytes()
    handoff = deserialize(raw.decode("utf-8", errors="replace"), path=str(source))
    handoff, warnings = fill_legacy_gaps(handoff, source_path=source)
    report = validate_schema(handoff)
    if not report.valid:
        raise HRMError.validation_failed(
            f"'{source}' cannot be converted: {report.errors[0].message}",
            errors=[vars(error) for error in report.errors],
            partial_result=handoff_to_dict(handoff),
        )
    if destination is None:
        suffix = ".hrm.yaml" if source.suffix in (".yaml", ".yml") else ".yaml"
        destination = source.with_name(source.stem + suffix)
    if destination.exists():
        raise HRMError.path_exists(destination, hint="choose another destination with --dest")
    if not destination.parent.is_dir():
        # Like `cp`: a mistyped directory is an error, not a new tree.
        raise HRMError.validation_failed(
            f"Cannot write '{destination}': the directory '{destination.parent}' does not exist",
            path=str(destination),
        )
    content = _dump(scrub(handoff_to_dict(handoff)))
    try:
        atomic_write(destination, content)
    except PermissionError as exc:
        raise HRMError.permission_denied(destination) from exc
    digest = hashlib.sha256(raw).digest()
    preserved = source.is_file() and hashlib.sha256(source.read_bytes()).digest() == digest
    return HandoffMigrationResult(
        source=source,
        destination=destination,
        format_from=handoff.source_format or HandoffFormat.MARKDOWN,
        format_to=HandoffFormat.YAML,
        preserved_original=preserved,
        warnings=warnings,
    )


def resume_brief(handoff: HandoffData, *, max_chars: int = 4000) -> str:
    """A short plain-text brief to start the next session with (`hrm handoff resume`)."""
    status = _value(handoff.task.status) or "unknown"
    lines = [f"Resuming: {handoff.task.description or handoff.session.id}"]
    lines.append(f"Session: {handoff.session.id} · status: {status}")
    where = handoff.context.project_path
    if handoff.context.git_branch:
        where += f" (branch {handoff.context.git_branch})"
    if where.strip():
        lines.append(f"Project: {where.strip()}")
    now = handoff.extra.get("now")
    if isinstance(now, str) and now.strip() and now not in handoff.resume.next_steps:
        lines.append(f"Now: {now.strip()}")

    def block(title: str, items: list[str]) -> None:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"  - {item}" for item in items)

    block("Next steps", handoff.resume.next_steps)
    block("Blockers", [b.description for b in handoff.blockers])
    block("Warnings", handoff.resume.warnings)
    block("Context needed", handoff.resume.context_needed)
    decided = [d.decision + (f" — {d.rationale}" if d.rationale else "") for d in handoff.decisions]
    block("Decisions", decided)
    block("Key files", handoff.context.key_files)
    test = handoff.extra.get("test")
    if isinstance(test, str) and test.strip():
        lines.append(f"Verify with: {test.strip().splitlines()[-1]}")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
