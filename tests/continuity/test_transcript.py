"""Reading Claude Code transcripts leniently, and turning one into a session handoff."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import TaskStatus, deserialize
from hrm.continuity.hooks import SessionCheckpoint
from hrm.continuity.transcript import (
    TranscriptSummary,
    build_session_handoff,
    read_transcript,
    summarize_entries,
)
from hrm.home import HRMHome


def user(text: object, ts: str = "2026-01-12T10:00:00.000Z", **extra: object) -> dict[str, object]:
    return {"type": "user", "timestamp": ts, "message": {"role": "user", "content": text}, **extra}


def assistant(*parts: dict[str, object], ts: str = "2026-01-12T10:05:00.000Z") -> dict[str, object]:
    return {"type": "assistant", "timestamp": ts, "message": {"role": "assistant", "content": list(parts)}}


def tool(name: str, **tool_input: object) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}


def text(value: str) -> dict[str, object]:
    return {"type": "text", "text": value}


def write_transcript(path: Path, entries: list[object], tail: str = "") -> Path:
    lines = [json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + "\n" + tail, encoding="utf-8")
    return path


SESSION = [
    {"type": "summary", "summary": "x"},
    user("<command-name>/clear</command-name>"),
    user("Add a retry to the fetcher\nwith backoff", gitBranch="feat/retry", cwd="/p"),
    assistant(text("Looking."), tool("Read", file_path="/p/a.py")),
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "..."}]),
    assistant(
        tool("Write", file_path="/p/retry.py", content="..."),
        tool("Edit", file_path="/p/a.py", old_string="a", new_string="b"),
        tool("MultiEdit", file_path="/p/b.py", edits=[]),
        tool("Skill", skill="test-driven-development"),
    ),
    user([text("now the tests")], ts="2026-01-12T10:10:00.000Z"),
    user("side", isSidechain=True),
    assistant(
        text("Done. Next:\n- run the integration suite\n2. update the changelog"),
        ts="2026-01-12T10:20:00.000Z",
    ),
]


def test_summary_of_a_session(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", SESSION, tail='{"type": "assistant", "mess')
    summary = read_transcript(path)
    assert summary.user_prompts == ("Add a retry to the fetcher\nwith backoff", "now the tests")
    assert summary.files_written == ("/p/retry.py",)
    assert summary.files_edited == ("/p/a.py", "/p/b.py")
    assert summary.files_modified == ("/p/retry.py", "/p/a.py", "/p/b.py")
    assert summary.skills_used == ("test-driven-development",)
    assert summary.last_assistant_message is not None
    assert summary.last_assistant_message.startswith("Done.")
    assert summary.git_branch == "feat/retry"
    assert summary.started_at == datetime(2026, 1, 12, 10, 0, tzinfo=UTC)
    assert summary.ended_at == datetime(2026, 1, 12, 10, 20, tzinfo=UTC)
    assert summary.lines_skipped == 1
    assert not summary.truncated


def test_missing_or_unreadable_transcript_is_empty(tmp_path: Path) -> None:
    assert read_transcript(tmp_path / "nope.jsonl").is_empty
    assert read_transcript(None).is_empty
    assert read_transcript(tmp_path).is_empty  # a directory


def test_large_transcript_reads_head_and_tail(tmp_path: Path) -> None:
    filler = [assistant(text("x" * 500)) for _ in range(400)]
    entries = [user("the first task"), *filler, assistant(tool("Write", file_path="/p/late.py"))]
    path = write_transcript(tmp_path / "big.jsonl", entries)
    summary = read_transcript(path, max_bytes=50_000)
    assert summary.truncated
    assert summary.user_prompts == ("the first task",)
    assert summary.files_written == ("/p/late.py",)
    assert summary.lines_read < len(entries)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=200) | st.text(max_size=200), max_size=30))
def test_garbage_lines_never_raise(lines: list[bytes | str]) -> None:
    summary = summarize_entries(lines)
    assert summary.lines_read + summary.lines_skipped <= len(lines)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["user", "assistant", "x"]), "message": json_values},
            optional={"timestamp": json_values, "cwd": json_values, "isMeta": json_values},
        ),
        max_size=10,
    )
)
def test_entries_of_any_shape_never_raise(entries: list[dict[str, object]]) -> None:
    summary = summarize_entries(json.dumps(e) for e in entries)
    assert summary.lines_read == len(entries)


def checkpoint(kind: str = "session_end", trigger: str = "logout") -> SessionCheckpoint:
    return SessionCheckpoint(
        kind=kind,  # type: ignore[arg-type]
        session_id="sess-1",
        project_path=Path("/p"),
        trigger=trigger,
    )


def test_handoff_from_a_session(tmp_path: Path) -> None:
    summary = read_transcript(write_transcript(tmp_path / "t.jsonl", SESSION))
    handoff = build_session_handoff(summary, checkpoint())
    assert handoff is not None
    assert handoff.task.description == "Add a retry to the fetcher"
    assert handoff.task.status is TaskStatus.PAUSED
    assert handoff.task.skills_used == ["test-driven-development"]
    assert handoff.artifacts.modified == ["/p/retry.py", "/p/a.py", "/p/b.py"]
    assert handoff.resume.next_steps == ["run the integration suite", "update the changelog"]
    assert handoff.context.project_path == "/p"
    assert handoff.context.git_branch == "feat/retry"
    assert handoff.session.duration_seconds == 20 * 60
    assert "session end (logout)" in handoff.notes


def test_a_session_that_changed_many_files_still_writes_its_handoff(
    tmp_path: Path, home: HRMHome
) -> None:
    edits = [tool("Write", file_path=f"/p/f{i}.py", content="x") for i in range(25)]
    entries = [user("Rename the fetcher module", cwd="/p"), assistant(*edits)]
    summary = read_transcript(write_transcript(tmp_path / "t.jsonl", entries))
    handoff = build_session_handoff(summary, checkpoint())
    assert handoff is not None and len(handoff.artifacts.modified) == 25
    path = HandoffStore(home).write(handoff)
    assert deserialize(path.read_text(encoding="utf-8"), path=str(path)).context.key_files


def test_handoff_is_valid_and_round_trips_through_the_store(tmp_path: Path, home: HRMHome) -> None:
    summary = read_transcript(write_transcript(tmp_path / "t.jsonl", SESSION))
    handoff = build_session_handoff(summary, checkpoint("pre_compact", "auto"))
    assert handoff is not None
    path = HandoffStore(home).write(handoff)
    back = deserialize(path.read_text(encoding="utf-8"), path=str(path))
    assert back.task.description == handoff.task.description
    assert back.resume.next_steps == handoff.resume.next_steps


def test_last_reply_without_a_list_becomes_one_next_step() -> None:
    summary = TranscriptSummary(user_prompts=("do x",), last_assistant_message="All green now.")
    handoff = build_session_handoff(summary, checkpoint())
    assert handoff is not None
    assert handoff.resume.next_steps == ["Pick up from the last reply: All green now."]


def test_nothing_to_hand_off() -> None:
    assert build_session_handoff(TranscriptSummary(), checkpoint()) is None


def test_missing_timestamps_use_the_clock() -> None:
    now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    summary = TranscriptSummary(user_prompts=("do x",))
    handoff = build_session_handoff(summary, checkpoint(), clock=lambda: now)
    assert handoff is not None
    assert handoff.session.started_at == now
    assert handoff.session.duration_seconds == 0
