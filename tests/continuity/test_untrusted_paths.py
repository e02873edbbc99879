"""Paths from hook payloads and project files are data: a FIFO, a device or a link out of its
folder is refused, never read, and no hook hangs on one (each call runs under a timeout)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from hrm.continuity.hook_entry import HookRun, answer_hook
from hrm.continuity.transcript import read_transcript
from hrm.home import HRMHome, initialize

EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd")


def answer_within(raw: bytes, home: Path, project: Path, seconds: float = 60.0) -> HookRun:
    """`answer_hook` on a thread: the test fails, instead of hanging, if the hook blocks."""
    box: dict[str, Any] = {}

    def run() -> None:
        env = {"HRM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        box["run"] = answer_hook(raw, [], environ=env, cwd=project)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the hook blocked"
    return box["run"]  # type: ignore[no-any-return]


def log_messages(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return "\n".join(json.loads(line).get("message", "") for line in path.read_text().splitlines())


def payload(event: str, project: Path, **fields: object) -> bytes:
    base: dict[str, object] = {
        "hook_event_name": event,
        "session_id": "3f1c2b9e-0000-4000-8000-000000000001",
        "cwd": str(project),
        "prompt": "Fix the typo in the README",
        "source": "startup",
        "trigger": "auto",
        "reason": "other",
        "stop_hook_active": False,
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "notes.md"), "content": "x"},
    }
    base.update(fields)
    return json.dumps(base).encode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def home_root(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    initialize(HRMHome(root))
    return root


@pytest.mark.parametrize("event", EVENTS)
def test_a_fifo_as_transcript_path_never_hangs_any_hook(
    event: str, project: Path, home_root: Path
) -> None:
    fifo = project / "transcript.jsonl"
    os.mkfifo(fifo)
    run = answer_within(payload(event, project, transcript_path=str(fifo)), home_root, project)
    assert run.event == event


@pytest.mark.parametrize("event", ["PreCompact", "SessionEnd"])
def test_a_transcript_that_is_a_fifo_is_logged_and_only_the_minimal_handoff_stays(
    event: str, project: Path, home_root: Path
) -> None:
    """The FIFO is never read, and the session's handoff is not lost with it (D240)."""
    fifo = project / "transcript.jsonl"
    os.mkfifo(fifo)
    answer_within(payload(event, project, transcript_path=str(fifo)), home_root, project)
    assert "FIFO" in log_messages(home_root)
    [written] = (home_root / "handoffs").rglob("*.yaml")
    document = json.loads(written.read_text(encoding="utf-8"))
    assert document["extra"]["stage"] == "minimal"
    assert document["extra"]["transcript_path"] == str(fifo)


def test_read_transcript_refuses_a_device_and_says_why() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    summary = read_transcript("/dev/zero")
    assert summary.is_empty and summary.problem is not None
    assert "character device" in summary.problem


def test_a_fifo_written_by_a_tool_is_not_read_for_indexing(project: Path, home_root: Path) -> None:
    target = project / "thoughts" / "shared" / "handoffs" / "next.md"
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    tool = {"file_path": str(target), "content": "# Handoff"}
    run = answer_within(payload("PostToolUse", project, tool_input=tool), home_root, project)
    assert run.event == "PostToolUse"
    assert "FIFO" in log_messages(home_root)


def test_a_handoff_linking_out_of_the_project_is_not_indexed(
    project: Path, home_root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "id_rsa.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n")
    link = project / "thoughts" / "handoffs" / "handoff.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere)
    tool = {"file_path": str(link), "content": "x"}
    answer_within(payload("PostToolUse", project, tool_input=tool), home_root, project)
    assert "outside" in log_messages(home_root)
    stored = [p.read_bytes() for p in home_root.rglob("*") if p.is_file()]
    assert not any(b"b3BlbnNzaC1rZXk" in data for data in stored)


def test_a_fifo_as_the_project_config_or_git_head_never_hangs(
    project: Path, home_root: Path
) -> None:
    (project / ".hrm").mkdir()
    os.mkfifo(project / ".hrm" / "config.yaml")
    (project / ".git").mkdir()
    os.mkfifo(project / ".git" / "HEAD")
    for event in ("SessionStart", "UserPromptSubmit", "SessionEnd"):
        assert answer_within(payload(event, project), home_root, project).event == event
