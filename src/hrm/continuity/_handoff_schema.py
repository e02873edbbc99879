"""A handoff's structure, checked against ``hrm/data/schemas/handoff.schema.json`` (003 §3).

The JSON Schema is the one statement of what a valid handoff holds: required texts, known enum
values, timezone-aware times, at most ten key files. `violations` checks a `HandoffData` in its
JSON form with jsonschema and names each failure by its field path (``decisions[2].decision``)
and the rule it breaks; the one rule JSON Schema cannot say (a session ends after it starts)
is checked here after the schema.

jsonschema is imported on the first check: it costs a process about as much as the
interpreter's own start-up, which only the commands and hooks that write or validate a
handoff pay.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import datetime
from enum import Enum

from hrm.continuity.confidence import VerificationStatus
from hrm.continuity.handoffs import (
    LEARNING_TYPES,
    MAX_KEY_FILES,
    Blocker,
    BlockerSeverity,
    BlockerType,
    Decision,
    HandoffData,
    HandoffLearning,
    TaskStatus,
    ValidationError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = ["handoff_schema", "plainly_valid", "violations"]

_CONSTRAINTS = {"pattern": "required", "maxItems": "max_items", "minimum": "minimum"}
"""The rule a failing keyword breaks, unless its subschema names one in ``x-constraints``."""
_KINDS = {"string": "a string", "array": "a list", "object": "a mapping", "integer": "an integer"}



@functools.cache
def handoff_schema() -> dict[str, Any]:
    """The handoff JSON Schema shipped in the package."""
    from importlib import resources

    text = resources.files("hrm").joinpath("data", "schemas", "handoff.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(handoff_schema())


def violations(handoff: HandoffData) -> list[ValidationError]:
    """Every way `handoff` breaks the schema, in document order; empty when it is valid."""
    if plainly_valid(handoff):
        return []
    found = [_violation(error) for error in _validator().iter_errors(_document(handoff))]
    session = handoff.session
    started, ended = session.started_at, session.ended_at
    aware = [m for m in (started, ended) if isinstance(m, datetime) and m.tzinfo is not None]
    if len(aware) == 2 and ended < started:  # type: ignore[operator]
        message = "session.ended_at is before session.started_at"
        found.append(ValidationError("session.ended_at", "order", message))
    return found


def plainly_valid(handoff: HandoffData) -> bool:
    """Whether `handoff` is valid on sight: exactly typed and within every rule of the schema.

    Kept by hand for the hooks that write a handoff (PreCompact, SessionEnd): importing
    jsonschema made that hook process 60 % slower (bench/RESULTS.md, issue 34), and a handoff hrm
    builds itself is always of the exact types this accepts. It only accepts; whatever it does
    not is left to the schema, which reports it, and a property test holds it to the schema.
    """
    session, task, context, resume = handoff.session, handoff.task, handoff.context, handoff.resume
    started, ended, duration = session.started_at, session.ended_at, session.duration_seconds
    return (
        _text(session.id)
        and _aware(started)
        and (ended is None or (_aware(ended) and ended >= started))  # type: ignore[operator]
        and (duration is None or (type(duration) is int and duration >= 0))
        and _text(task.description)
        and type(task.status) is TaskStatus
        and _texts(task.skills_used)
        and _text(context.project_path)
        and type(context.git_commit) is str
        and type(context.git_branch) is str
        and _texts(context.key_files)
        and len(context.key_files) <= MAX_KEY_FILES
        and _each(handoff.decisions, _plain_decision)
        and all(_texts(getattr(handoff.artifacts, n)) for n in ("created", "modified", "deleted"))
        and _each(handoff.learnings, _plain_learning)
        and _each(handoff.blockers, _plain_blocker)
        and all(_texts(getattr(resume, n)) for n in ("next_steps", "context_needed", "warnings"))
        and type(handoff.notes) is str
        and type(handoff.extra) is dict
    )


def _aware(moment: object) -> bool:
    return type(moment) is datetime and moment.tzinfo is not None


def _text(value: object) -> bool:
    return type(value) is str and value != "" and not value.isspace()


def _texts(values: object) -> bool:
    return _each(values, _text)


def _each(values: object, plain: Callable[[Any], bool]) -> bool:
    return type(values) is list and all(plain(value) for value in values)


def _plain_decision(item: object) -> bool:
    return (
        isinstance(item, Decision) and _text(item.decision) and type(item.rationale) is str
        and _texts(item.alternatives)
    )  # fmt: skip


def _plain_learning(item: object) -> bool:
    return (
        isinstance(item, HandoffLearning) and item.type in LEARNING_TYPES
        and _text(item.content) and type(item.confidence) is VerificationStatus
    )  # fmt: skip


def _plain_blocker(item: object) -> bool:
    return (
        isinstance(item, Blocker) and type(item.type) is BlockerType
        and _text(item.description) and type(item.severity) is BlockerSeverity
    )  # fmt: skip


def _document(handoff: HandoffData) -> dict[str, Any]:
    """The handoff as JSON values, keeping whatever is of the wrong type for the schema to see."""
    doc: dict[str, Any] = _jsonable(handoff)
    session = doc.get("session", {})
    for optional in ("ended_at", "duration_seconds"):
        if session.get(optional) is None:
            session.pop(optional, None)
    return doc


def _jsonable(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields if f.compare}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def _violation(error: Any) -> ValidationError:
    field = _field_path(error.absolute_path)
    keyword = str(error.validator)
    named = error.schema.get("x-constraints", {}).get(keyword) if error.schema else None
    if named is not None:
        constraint = str(named)
    elif error.instance is None:
        constraint = "required"
    else:
        constraint = _CONSTRAINTS.get(keyword, keyword)
    return ValidationError(field, constraint, _message(field, constraint, error))


def _message(field: str, constraint: str, error: Any) -> str:
    if constraint == "required":
        return f"{field} is required"
    if constraint == "timezone":
        return f"{field} must be a timezone-aware time (an offset such as +00:00)"
    if constraint == "enum":
        return f"{field} must be one of: {', '.join(map(str, error.validator_value))}"
    if constraint == "max_items":
        return f"{field} lists at most {error.validator_value} items"
    if constraint == "minimum":
        return f"{field} must be a non-negative integer"
    if constraint == "type":
        return f"{field} must be {_KINDS.get(str(error.validator_value), error.validator_value)}"
    return f"{field}: {error.message}"


def _field_path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(handoff)"
