"""SessionStart shows the project's newest handoff, from hrm's store or the project's own files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import (
    ContextInfo,
    HandoffData,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
)
from hrm.continuity.hooks import (
    FileInfo,
    HookOrchestrator,
    HookSettings,
    SessionContext,
    SessionMode,
)
from hrm.home import HRMHome

RING_HANDOFF = """---
date: 2026-01-14T21:24:35Z
session_name: parser-hardening
status: in_progress
---

# Handoff: harden the config parser

## Task(s)
Make every parser error name the key and the file.

## Next Steps
1. Wire the messages through the loader
2. Add property tests for the error table
"""


def stored(project: Path, description: str, *, when: datetime, session: str,
           source: str | None = None) -> HandoffData:
    return HandoffData(
        session=SessionMetadata(id=session, started_at=when, ended_at=when),
        task=TaskInfo(description=description, status=TaskStatus.PAUSED),
        context=ContextInfo(project_path=str(project)),
        resume=ResumeInstructions(next_steps=[f"continue: {description}"]),
        extra={"source": source} if source else {},
    )


def index_project_handoff(home: HRMHome, project: Path, session: str) -> Path:
    path = project / "thoughts" / "shared" / "handoffs" / "parser" / "2026-01-14_handoff.md"
    path.parent.mkdir(parents=True)
    path.write_text(RING_HANDOFF, encoding="utf-8")
    orchestrator = HookOrchestrator(home)
    response = orchestrator.on_post_write(FileInfo(
        path=path, content_preview=RING_HANDOFF[:500], file_type="markdown",
        session_id=session, project_path=project,
    ))
    orchestrator.close()
    assert response.indexed
    return path


def session_start(home: HRMHome, project: Path) -> str:
    orchestrator = HookOrchestrator(home, HookSettings(memory_search_budget_ms=30_000))
    try:
        response = orchestrator.on_session_start(
            SessionContext(session_id="next", mode=SessionMode.STARTUP, project_path=project)
        )
    finally:
        orchestrator.close()
    assert not orchestrator.failures
    return response.additional_context or ""


def test_a_handoff_claude_wrote_into_the_project_beats_a_stale_stored_one(
    home: HRMHome, tmp_path: Path
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    old = datetime(2025, 6, 1, tzinfo=UTC)
    HandoffStore(home).write(stored(project, "Migrated long ago", when=old, session="old"))
    index_project_handoff(home, project, "writer")
    context = session_start(home, project)
    assert "Wire the messages through the loader" in context
    assert "Migrated long ago" not in context
    assert "Source: written into the project at thoughts/shared/handoffs/parser/" in context


def test_a_newer_stored_handoff_of_another_session_wins_and_says_so(
    home: HRMHome, tmp_path: Path
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    index_project_handoff(home, project, "writer")
    later = datetime.now(UTC) + timedelta(hours=1)
    HandoffStore(home).write(stored(project, "Newest work in the store", when=later, session="b"))
    context = session_start(home, project)
    assert "Newest work in the store" in context
    assert "Source: from hrm's handoff store" in context


def test_the_deliberate_handoff_of_a_session_beats_its_automatic_summary(
    home: HRMHome, tmp_path: Path
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    index_project_handoff(home, project, "writer")
    later = datetime.now(UTC) + timedelta(hours=1)
    automatic = HandoffStore(home).write(
        stored(project, "Automatic summary", when=later, session="writer", source="hrm-hook")
    )
    context = session_start(home, project)
    assert "Wire the messages through the loader" in context
    assert "Automatic summary" not in context
    assert f"automatic handoff of the same session is at {automatic}" in context


def test_handoffs_of_other_projects_are_never_shown(home: HRMHome, tmp_path: Path) -> None:
    project, other = tmp_path / "app", tmp_path / "app-other"
    project.mkdir()
    other.mkdir()
    index_project_handoff(home, other, "writer")
    assert "Wire the messages" not in session_start(home, project)


def test_a_handoffs_learnings_are_shown_with_their_confidence_markers(
    home: HRMHome, tmp_path: Path
) -> None:
    from dataclasses import replace

    from hrm.continuity.handoffs import HandoffLearning

    project = tmp_path / "app"
    project.mkdir()
    base = stored(project, "Tune the importer", when=datetime.now(UTC), session="s")
    HandoffStore(home).write(replace(base, learnings=[
        HandoffLearning("ERROR_FIX", "BOM-prefixed files need utf-8-sig", "verified"),
        HandoffLearning("FAILED_APPROACH", "csv.Sniffer guesses wrong on one column", "inferred"),
        HandoffLearning("CODEBASE_PATTERN", "Importers live in app/io", "uncertain"),
    ]))
    context = session_start(home, project)
    assert "- ✓ [ERROR_FIX] BOM-prefixed files need utf-8-sig" in context
    assert "- ? [FAILED_APPROACH] csv.Sniffer guesses wrong on one column" in context
    assert "- ✗ [CODEBASE_PATTERN] Importers live in app/io" in context
