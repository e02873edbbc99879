"""The handoff JSON Schema: one statement of a handoff's structure, and the errors it gives."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.continuity.test_handoffs_roundtrip import handoffs

from hrm.continuity._handoff_schema import handoff_schema, plainly_valid
from hrm.continuity.confidence import VerificationStatus
from hrm.continuity.handoffs import (
    LEARNING_TYPES,
    MAX_KEY_FILES,
    Blocker,
    BlockerSeverity,
    BlockerType,
    ContextInfo,
    Decision,
    HandoffData,
    HandoffLearning,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
    handoff_to_dict,
    serialize,
    validate_schema,
)
from hrm.errors import ErrorCode, HRMError

T0 = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
GOOD = HandoffData(
    session=SessionMetadata(id="s1", started_at=T0, ended_at=T0 + timedelta(hours=1)),
    task=TaskInfo(description="Index the notes", status=TaskStatus.PAUSED),
    context=ContextInfo(project_path="/repo", key_files=["a.py"]),
    decisions=[Decision("Use FTS5", "ranking")],
    learnings=[HandoffLearning("ERROR_FIX", "Quote the terms", VerificationStatus.VERIFIED)],
    blockers=[Blocker(BlockerType.EXTERNAL, "Waiting on review", BlockerSeverity.HIGH)],
    resume=ResumeInstructions(next_steps=["Write the query"]),
)


def test_the_schema_is_valid_json_schema_and_agrees_with_the_records() -> None:
    schema = handoff_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    assert props["task"]["properties"]["status"]["enum"] == [s.value for s in TaskStatus]
    assert props["learnings"]["items"]["properties"]["type"]["enum"] == list(LEARNING_TYPES)
    confidence = props["learnings"]["items"]["properties"]["confidence"]["enum"]
    assert confidence == [v.value for v in VerificationStatus]
    blocker = props["blockers"]["items"]["properties"]
    assert blocker["type"]["enum"] == [t.value for t in BlockerType]
    assert blocker["severity"]["enum"] == [s.value for s in BlockerSeverity]
    assert props["context"]["properties"]["key_files"]["maxItems"] == MAX_KEY_FILES
    written = handoff_to_dict(replace(GOOD, extra={"kept": 1}))
    assert list(props) == list(written)[2:]  # document order, after version and schema


def test_what_hrm_writes_validates_against_the_schema_file() -> None:
    doc = handoff_to_dict(GOOD)
    jsonschema.Draft202012Validator(handoff_schema()).validate(doc)


def _session(**changes: object) -> HandoffData:
    return replace(GOOD, session=replace(GOOD.session, **changes))


@pytest.mark.parametrize(
    ("handoff", "field", "constraint", "message"),
    [
        pytest.param(_session(id="  "), "session.id", "required", "session.id is required", id="blank"),
        pytest.param(_session(started_at=None), "session.started_at", "required", "session.started_at is required", id="missing-time"),
        pytest.param(_session(started_at=datetime(2026, 1, 1)), "session.started_at", "timezone",  # noqa: DTZ001
                     "session.started_at must be a timezone-aware time (an offset such as +00:00)", id="naive"),
        pytest.param(_session(ended_at=T0 - timedelta(seconds=1)), "session.ended_at", "order",
                     "session.ended_at is before session.started_at", id="order"),
        pytest.param(_session(duration_seconds=-5), "session.duration_seconds", "minimum",
                     "session.duration_seconds must be a non-negative integer", id="negative"),
        pytest.param(_session(duration_seconds="long"), "session.duration_seconds", "minimum",
                     "session.duration_seconds must be a non-negative integer", id="not-a-number"),
        pytest.param(replace(GOOD, task=TaskInfo("x", "half-done")), "task.status", "enum",
                     "task.status must be one of: completed, paused, blocked, failed", id="status"),
        pytest.param(replace(GOOD, task=TaskInfo("x", TaskStatus.PAUSED, "pytest")),  # type: ignore[arg-type]
                     "task.skills_used", "type", "task.skills_used must be a list", id="not-a-list"),
        pytest.param(replace(GOOD, context=ContextInfo("/r", key_files=[str(i) for i in range(11)])),
                     "context.key_files", "max_items", "context.key_files lists at most 10 items", id="too-many"),
        pytest.param(replace(GOOD, decisions=[Decision("ok"), Decision("")]), "decisions[1].decision",
                     "required", "decisions[1].decision is required", id="item-path"),
        pytest.param(replace(GOOD, resume=ResumeInstructions(next_steps=["go", 3])),  # type: ignore[list-item]
                     "resume.next_steps[1]", "type", "resume.next_steps[1] must be a string", id="item-type"),
        pytest.param(replace(GOOD, extra=[1]), "extra", "type", "extra must be a mapping", id="extra"),  # type: ignore[arg-type]
    ],
)
def test_each_violation_names_its_field_rule_and_fix(
    handoff: HandoffData, field: str, constraint: str, message: str
) -> None:
    report = validate_schema(handoff)
    assert not report.valid
    assert [(e.field, e.constraint, e.message) for e in report.errors] == [
        (field, constraint, message)
    ]


def test_an_aware_text_timestamp_is_accepted_and_written_as_given() -> None:
    handoff = _session(started_at="2026-01-12T09:00:00+00:00", ended_at=None)
    assert validate_schema(handoff).valid
    assert "started_at: '2026-01-12T09:00:00+00:00'" in serialize(handoff).content


_ANY = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.text(max_size=3)))


@settings(max_examples=150, deadline=None)
@given(handoffs(), st.sampled_from(["id", "description", "status", "project_path", "key_files"]),
       _ANY)  # fmt: skip
def test_a_damaged_handoff_is_reported_never_raised_and_never_written(
    handoff: HandoffData, where: str, value: object
) -> None:
    if where == "id":
        damaged = replace(handoff, session=replace(handoff.session, id=value))  # type: ignore[arg-type]
    elif where in ("description", "status"):
        damaged = replace(handoff, task=replace(handoff.task, **{where: value}))
    else:
        damaged = replace(handoff, context=replace(handoff.context, **{where: value}))
    report = validate_schema(damaged)
    if report.valid:
        assert serialize(damaged).content
        return
    assert all(e.field and e.constraint and e.message for e in report.errors)
    with pytest.raises(HRMError) as info:
        serialize(damaged)
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def _schema_errors(handoff: HandoffData) -> list[str]:
    from hrm.continuity._handoff_schema import _document

    validator = jsonschema.Draft202012Validator(handoff_schema())
    return [error.message for error in validator.iter_errors(_document(handoff))]


@settings(max_examples=150, deadline=None)
@given(handoffs())
def test_what_hrm_builds_is_valid_on_sight_without_jsonschema(handoff: HandoffData) -> None:
    assert plainly_valid(handoff)
    assert _schema_errors(handoff) == []


@settings(max_examples=300, deadline=None)
@given(handoffs(), st.sampled_from(["id", "description", "status", "project_path", "key_files",
                                    "started_at", "duration_seconds", "notes"]), _ANY)  # fmt: skip
def test_the_hooks_shortcut_never_accepts_what_the_schema_refuses(
    handoff: HandoffData, where: str, value: object
) -> None:
    if where in ("id", "started_at", "duration_seconds"):
        damaged = replace(handoff, session=replace(handoff.session, **{where: value}))
    elif where in ("description", "status"):
        damaged = replace(handoff, task=replace(handoff.task, **{where: value}))
    elif where == "notes":
        damaged = replace(handoff, notes=value)  # type: ignore[arg-type]
    else:
        damaged = replace(handoff, context=replace(handoff.context, **{where: value}))
    if plainly_valid(damaged):
        assert _schema_errors(damaged) == []
        assert validate_schema(damaged).valid


_WRITE_PROBE = """
import sys
from hrm.continuity.hook_entry import run_hook
run_hook(["pre-compact"])
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
"""


def test_the_hook_that_writes_a_handoff_imports_neither_jsonschema_nor_markdown_it(
    tmp_path: Path,
) -> None:
    from tests.continuity.test_hooks import transcript

    home = tmp_path / "home"
    # PreCompact writes the handoff SessionEnd writes, without SessionEnd's 1.5 s budget.
    payload = {"hook_event_name": "PreCompact", "session_id": "sess-1", "trigger": "manual",
               "transcript_path": str(transcript(tmp_path / "t.jsonl")), "cwd": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", _WRITE_PROBE], input=json.dumps(payload).encode(),
        capture_output=True, env={"HRM_HOME": str(home), "PATH": "/bin"}, check=True,
    )
    modules = set(proc.stderr.decode().split("MODULES ", 1)[1].split())
    assert "jsonschema" not in modules and "markdown_it" not in modules
    assert len(list((home / "handoffs").glob("*/*.yaml"))) == 1
