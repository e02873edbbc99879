"""Handoffs: the real legacy files load as they are; our formats validate, store and migrate."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import (
    Blocker,
    ContextInfo,
    Decision,
    HandoffData,
    HandoffFormat,
    HandoffLearning,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
    deserialize,
    estimate_tokens,
    fill_legacy_gaps,
    migrate,
    resume_brief,
    serialize,
    validate_schema,
)
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome

DATA = Path(__file__).resolve().parents[1] / "fixtures"
RING = DATA / "ring" / "handoffs"
CC = DATA / "continuous-claude" / "handoffs"
LEGACY_FILES = sorted(p for p in [*RING.rglob("*"), *CC.rglob("*")] if p.is_file())
T0 = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)


def make_handoff(**changes: object) -> HandoffData:
    base = HandoffData(
        session=SessionMetadata(id="ctx-mgmt", started_at=T0, ended_at=T0 + timedelta(hours=2)),
        task=TaskInfo(description="Implement FTS5 indexing", status=TaskStatus.COMPLETED),
        context=ContextInfo(project_path="/repo", git_commit="abc123", git_branch="main"),
        decisions=[Decision("Use FTS5", "BM25 ranking", ["FTS3"])],
        learnings=[
            HandoffLearning("WORKING_SOLUTION", "Triggers keep the index in sync", "verified")
        ],
        blockers=[Blocker("technical", "CI is red", "high")],
        resume=ResumeInstructions(next_steps=["Add the query script"]),
        notes="# Session Notes\n\nDone.\n",
        extra={"outcome": "SUCCEEDED"},
    )
    return HandoffData(**{**vars(base), **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize("path", LEGACY_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_real_legacy_file_loads_and_converts_losslessly(path: Path) -> None:
    """Each fixture reads leniently, and once its gaps are filled survives our YAML unchanged."""
    handoff = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    assert handoff.source_format in (HandoffFormat.YAML, HandoffFormat.MARKDOWN)
    filled, _ = fill_legacy_gaps(handoff, source_path=path, project_path="/proj")
    assert validate_schema(filled).valid, validate_schema(filled).errors
    for fmt in HandoffFormat:
        assert deserialize(serialize(filled, fmt).content) == filled


def test_cc_v3_two_document_yaml_maps_goal_now_and_keeps_the_rest() -> None:
    path = CC / "general" / "2026-01-10_07-01_fix-hooks-path-spaces.yaml"
    handoff = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    assert handoff.source_format is HandoffFormat.YAML
    assert handoff.session.id == "general"
    assert handoff.session.started_at == datetime(2026, 1, 10, 7, 1, tzinfo=UTC)
    assert handoff.task.description.startswith("Fix Claude Code hooks")
    assert handoff.task.status is TaskStatus.PAUSED
    assert handoff.extra["status"] == "partial"
    assert handoff.extra["outcome"] == "PARTIAL_PLUS"
    assert handoff.resume.next_steps[0] == handoff.extra["now"]
    assert handoff.context.git_branch == "fix/hooks-path-spaces"
    assert handoff.extra["git"]["remote"].startswith("fork")
    assert [d.decision for d in handoff.decisions] == ["bash c wrapper", "leave home unchanged"]
    kinds = {item.type for item in handoff.learnings}
    assert kinds == {"WORKING_SOLUTION", "FAILED_APPROACH", "CODEBASE_PATTERN"}


def test_literal_block_with_indented_dashes_stays_in_one_document() -> None:
    path = next(CC.glob("Continuous-Claude-v3-d6v*/*.yaml"))
    handoff = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    prompt = handoff.extra["continuation_prompt"]
    assert prompt.startswith("---\nContinue implementing") and prompt.endswith("session end\n---")
    assert handoff.extra["metadata"]["original_format"] == "handoff"
    # The migrated table header "Decision: Reasoning" is template residue, not a decision.
    assert "Decision" not in [d.decision for d in handoff.decisions]
    assert len(handoff.decisions) == 3


def test_ring_markdown_with_front_matter_reads_sections_not_fenced_comments() -> None:
    path = RING / "codereview-integration" / "2026-01-14_21-24-35_security-hardening-complete.md"
    handoff = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    assert handoff.source_format is HandoffFormat.MARKDOWN
    assert handoff.session.id == "codereview-integration"
    assert handoff.task.status is TaskStatus.COMPLETED
    assert handoff.extra["outcome"] == "SUCCESS"
    assert handoff.extra["root_span_id"] is None
    assert handoff.context.git_commit.startswith("186a5a2d")
    assert handoff.notes.startswith("\n# Handoff:")
    assert all("Verify $secure_copy" not in step for step in handoff.resume.next_steps)
    assert handoff.resume.next_steps and handoff.decisions and handoff.learnings


@pytest.mark.parametrize(
    ("name", "commit"),
    [
        ("codereview-phase3/2026-01-14_05-06-00_call-graph-complete.md", "9f83ac49"),
        ("ring-multiplatform-adaptation/2026-01-05_01-01-23_docs-crawled.md", "7e449aa4"),
    ],
)
def test_ring_markdown_without_front_matter_reads_its_metadata_block(
    name: str, commit: str
) -> None:
    path = RING / name
    handoff = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    assert handoff.source_format is HandoffFormat.MARKDOWN
    assert handoff.context.git_commit.startswith(commit)
    assert handoff.context.git_branch == "main"
    assert handoff.session.started_at is not None
    assert handoff.session.id == path.parent.name
    assert len(handoff.context.key_files) <= 10


def test_validate_reports_every_error_with_its_field_path() -> None:
    bad = make_handoff(
        session=SessionMetadata(id="", started_at=datetime(2026, 1, 1)),  # noqa: DTZ001
        task=TaskInfo(description="x", status="half-done"),
        context=ContextInfo(project_path="", key_files=[f"f{i}" for i in range(11)]),
        decisions=[Decision("")],
        learnings=[HandoffLearning("GUESS", "", "sure")],
        blockers=[Blocker("weather", "rain", "apocalyptic")],
    )
    report = validate_schema(bad)
    assert not report.valid
    found = {(e.field, e.constraint) for e in report.errors}
    assert found == {
        ("session.id", "required"),
        ("session.started_at", "timezone"),
        ("task.status", "enum"),
        ("context.project_path", "required"),
        ("context.key_files", "max_items"),
        ("decisions[0].decision", "required"),
        ("learnings[0].type", "enum"),
        ("learnings[0].content", "required"),
        ("learnings[0].confidence", "enum"),
        ("blockers[0].type", "enum"),
        ("blockers[0].severity", "enum"),
    }


def test_serialize_refuses_invalid_with_every_error_in_context() -> None:
    with pytest.raises(HRMError) as caught:
        serialize(make_handoff(task=TaskInfo(description="", status="??")))
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    fields = [e["field"] for e in caught.value.context["errors"]]
    assert fields == ["task.description", "task.status"]


def test_serialized_markdown_is_front_matter_plus_notes() -> None:
    result = serialize(make_handoff(), HandoffFormat.MARKDOWN)
    assert result.content.startswith("---\nversion: '1.0'\nschema: hrm-handoff-v1\n")
    assert result.content.endswith("---\n\n# Session Notes\n\nDone.\n")
    assert result.byte_size == len(result.content.encode())
    assert result.token_estimate == estimate_tokens(result.content)
    assert deserialize(result.content).source_format is HandoffFormat.MARKDOWN


def test_spec_example_with_ring_schema_reads_as_native_markdown() -> None:
    text = (
        '---\nversion: "1.0"\nschema: ring-handoff-v1\nsession:\n  id: s1\n'
        "  started_at: 2026-01-12T09:00:00Z\ntask:\n  description: Index\n  status: completed\n"
        "context:\n  project_path: /r\n---\n\n# Session Notes\n"
    )
    handoff = deserialize(text)
    assert handoff.session.started_at == T0
    assert handoff.task.status is TaskStatus.COMPLETED
    assert handoff.notes == "# Session Notes\n"


@pytest.mark.parametrize(
    ("content", "fmt", "code"),
    [
        ("session: [unclosed\n", None, ErrorCode.PARSE_ERROR),
        ("a: 1\nb: 2\n", None, ErrorCode.SCHEMA_MISMATCH),
        ("- just\n- a list\n", HandoffFormat.YAML, ErrorCode.SCHEMA_MISMATCH),
        ("plain words, no structure at all", None, ErrorCode.UNKNOWN_FORMAT),
        (
            "session: 5\ntask: {description: x}\nschema: hrm-handoff-v1\n",
            None,
            ErrorCode.SCHEMA_MISMATCH,
        ),
        ("   \n", None, ErrorCode.VALIDATION_FAILED),
    ],
)
def test_deserialize_errors_name_the_problem(
    content: str, fmt: HandoffFormat | None, code: ErrorCode
) -> None:
    with pytest.raises(HRMError) as caught:
        deserialize(content, fmt, path="handoff.txt")
    assert caught.value.code is code


def test_parse_error_carries_the_line_number_in_the_file() -> None:
    text = "---\nsession: general\n---\ngoal: ok\nnow: [broken\n"
    with pytest.raises(HRMError) as caught:
        deserialize(text, HandoffFormat.YAML, path="h.yaml")
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert caught.value.context["line"] >= 5


def test_estimate_tokens_is_a_quarter_of_the_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_store_writes_lists_newest_first_and_loads_by_id(home: HRMHome) -> None:
    times = iter([T0, T0 + timedelta(minutes=1)])
    store = HandoffStore(home, clock=lambda: next(times))
    first = store.write(make_handoff())
    second = store.write(
        make_handoff(session=SessionMetadata(id="other", started_at=T0 + timedelta(hours=5))),
        format=HandoffFormat.MARKDOWN,
    )
    assert first.parent.name == "ctx-mgmt" and first.name.startswith("2026-01-12_09-00-00")
    assert second.suffix == ".md"
    listed = store.list()
    assert [s.path for s in listed] == [second, first]
    assert store.list(limit=1)[0].session_id == "other"
    assert store.list(project_path="/elsewhere") == []
    assert store.load(f"ctx-mgmt/{first.stem}") == make_handoff()
    assert store.load(first.stem) == make_handoff()
    latest = store.latest()
    assert latest is not None and latest[0] == second


def test_store_never_overwrites_and_scrubs_secrets(home: HRMHome) -> None:
    store = HandoffStore(home, clock=lambda: T0)
    secret = "token ghp_" + "a" * 36
    a = store.write(make_handoff(notes=secret))
    b = store.write(make_handoff())
    assert a != b and a.exists() and b.exists()
    assert "ghp_" not in a.read_text()
    with pytest.raises(HRMError) as caught:
        store.write(make_handoff(), filename=a.name)
    assert caught.value.code is ErrorCode.PATH_EXISTS


def test_store_skips_unreadable_files_and_unknown_ids(home: HRMHome) -> None:
    store = HandoffStore(home, clock=lambda: T0)
    store.write(make_handoff())
    (home.handoffs_dir / "ctx-mgmt" / "broken.yaml").write_text("a: [", encoding="utf-8")
    assert len(store.list()) == 1
    with pytest.raises(HRMError) as caught:
        store.load("no-such-handoff")
    assert caught.value.code is ErrorCode.NOT_FOUND


def test_migrate_writes_yaml_beside_the_original_and_keeps_it(tmp_path: Path) -> None:
    source = tmp_path / "docs" / "handoffs" / "s" / "2025-12-29_18-34-46_x.md"
    source.parent.mkdir(parents=True)
    original = RING / "context-management" / "2025-12-29_18-34-46_code-review-fixes-complete.md"
    source.write_bytes(original.read_bytes())
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    result = migrate(source)
    assert result.destination == source.with_suffix(".yaml")
    assert result.preserved_original and result.format_from is HandoffFormat.MARKDOWN
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
    converted = deserialize(result.destination.read_text())
    assert converted.context.project_path == str(tmp_path)
    assert converted.task.description == "Automatic Context Management - Code Review and Fixes"
    with pytest.raises(HRMError) as caught:
        migrate(source)
    assert caught.value.code is ErrorCode.PATH_EXISTS


def test_migrate_missing_source(tmp_path: Path) -> None:
    with pytest.raises(HRMError) as caught:
        migrate(tmp_path / "nope.md")
    assert caught.value.code is ErrorCode.SOURCE_NOT_FOUND


def test_resume_brief_leads_with_task_and_next_steps() -> None:
    brief = resume_brief(make_handoff())
    assert brief.splitlines()[0] == "Resuming: Implement FTS5 indexing"
    assert "  - Add the query script" in brief
    assert len(resume_brief(make_handoff(), max_chars=40)) == 40


def test_migrate_to_a_directory_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    source = tmp_path / "x.md"
    source.write_bytes(
        (RING / "context-management" / "2025-12-29_18-34-46_code-review-fixes-complete.md")
        .read_bytes()
    )
    with pytest.raises(HRMError) as caught:
        migrate(source, tmp_path / "missing" / "x.yaml")
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert "does not exist" in caught.value.message
    assert not (tmp_path / "missing").exists()
