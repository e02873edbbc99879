"""Handoffs are never lost: minimal first, enriched after, concurrent hooks all land (issue 31 #3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hrm.continuity._durable_handoff import is_minimal, publish, session_dirname
from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.hooks import HookOrchestrator, HookSettings, SessionCheckpoint
from hrm.home import HRMHome, initialize

SRC = Path(__file__).resolve().parents[2] / "src"


def transcript(path: Path, prompt: str = "Add a retry to the fetcher", lines: int = 3) -> Path:
    entries: list[dict[str, Any]] = [
        {"type": "user", "timestamp": "2026-01-12T10:00:00Z",
         "message": {"role": "user", "content": prompt}},
    ]
    for i in range(lines):
        entries.append({"type": "assistant", "timestamp": f"2026-01-12T10:0{i + 1}:00Z",
                        "message": {"role": "assistant", "content": [
                            {"type": "tool_use", "id": f"t{i}", "name": "Write",
                             "input": {"file_path": f"/p/part{i}.py", "content": "x"}},
                            {"type": "text", "text": f"Done {i}. Next:\n- review part {i}"}]}})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def checkpoint(project: Path, path: Path | None, session: str = "s-1") -> SessionCheckpoint:
    return SessionCheckpoint(kind="session_end", session_id=session, project_path=project,
                             transcript_path=path, trigger="logout")


def documents(home: HRMHome) -> list[tuple[Path, Any]]:
    found = []
    for path in sorted(home.handoffs_dir.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        try:
            found.append((path, json.loads(text)))
        except ValueError:
            found.append((path, text))
    return found


class GatedStore(HandoffStore):
    """A store whose enrichment waits for the test: the hook's budget runs out first."""

    def __init__(self, home: HRMHome, gate: threading.Event, done: threading.Event) -> None:
        super().__init__(home)
        self.gate, self.done = gate, done

    def enrich(self, path: Path, handoff: Any) -> Path:
        self.gate.wait(30)
        try:
            return super().enrich(path, handoff)
        finally:
            self.done.set()


def test_the_minimal_handoff_is_on_disk_before_enrichment_and_survives_an_overrun(
    home: HRMHome, tmp_path: Path
) -> None:
    gate, done = threading.Event(), threading.Event()
    orchestrator = HookOrchestrator(
        home, HookSettings(session_end_budget_ms=50),
        handoff_store=lambda: GatedStore(home, gate, done),
    )
    response = orchestrator.on_session_end(checkpoint(tmp_path, transcript(tmp_path / "t.jsonl")))
    assert response.metadata["handoff_stage"] == "minimal"
    [(path, document)] = documents(home)
    assert is_minimal(document)
    assert document["task"]["description"] == "Add a retry to the fetcher"
    assert document["extra"]["transcript_path"] == str(tmp_path / "t.jsonl")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    gate.set()
    assert done.wait(30)
    [(same, enriched)] = documents(home)
    assert same == path and "stage: enriched" in enriched
    assert HandoffStore(home).load(path).artifacts.modified == [f"/p/part{i}.py" for i in range(3)]


def test_enrichment_replaces_the_minimal_handoff_in_place(home: HRMHome, tmp_path: Path) -> None:
    orchestrator = HookOrchestrator(home, HookSettings(session_end_budget_ms=30_000))
    response = orchestrator.on_session_end(checkpoint(tmp_path, transcript(tmp_path / "t.jsonl")))
    assert response.metadata["handoff_stage"] == "enriched"
    [(path, _)] = documents(home)
    assert str(path) == response.metadata["handoff_path"]
    loaded = HandoffStore(home).load(path)
    assert loaded.extra["stage"] == "enriched"
    assert loaded.task.description == "Add a retry to the fetcher"


def test_a_secret_in_the_first_prompt_never_reaches_the_minimal_handoff(
    home: HRMHome, tmp_path: Path
) -> None:
    secret = "OPENAI_API_KEY=sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    path = transcript(tmp_path / "t.jsonl", prompt=f"Deploy with {secret} <private>my pin</private>")
    gate, done = threading.Event(), threading.Event()
    orchestrator = HookOrchestrator(
        home, HookSettings(session_end_budget_ms=10),
        handoff_store=lambda: GatedStore(home, gate, done),
    )
    orchestrator.on_session_end(checkpoint(tmp_path, path))
    [(written, _)] = documents(home)
    raw = written.read_text(encoding="utf-8")
    assert "a1B2c3D4e5F6" not in raw and "my pin" not in raw
    assert "[REDACTED" in raw
    gate.set()
    assert done.wait(30)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b'{"type": "user", "message": {"role": "user", "content": "Fix the par',
                     id="truncated"),
        pytest.param(b"\x00\xff not json at all\n<html>\n", id="not-json-lines"),
        pytest.param(b"", id="empty-but-unreadable-as-a-session"),
    ],
)
def test_a_bad_transcript_never_loses_the_handoff(
    content: bytes, home: HRMHome, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    orchestrator = HookOrchestrator(home, HookSettings(session_end_budget_ms=30_000))
    response = orchestrator.on_session_end(checkpoint(tmp_path, path))
    # Nothing in the transcript: the session had nothing to hand off, and the minimal
    # handoff it wrote first is taken back; otherwise one handoff stays.
    assert not orchestrator.failures
    assert response.metadata["handoff_stage"] is None
    assert documents(home) == []


def test_a_missing_transcript_keeps_the_minimal_handoff(home: HRMHome, tmp_path: Path) -> None:
    orchestrator = HookOrchestrator(home, HookSettings(session_end_budget_ms=30_000))
    response = orchestrator.on_session_end(checkpoint(tmp_path, tmp_path / "gone.jsonl"))
    assert response.metadata["handoff_stage"] == "minimal"
    [(_, document)] = documents(home)
    assert is_minimal(document)
    assert HandoffStore(home).latest(project_path=str(tmp_path)) is not None


def test_publish_never_replaces_a_file_of_the_same_name(tmp_path: Path) -> None:
    first = publish(tmp_path, "stamp", ".yaml", b"one")
    second = publish(tmp_path, "stamp", ".yaml", b"two")
    assert (first.name, second.name) == ("stamp.yaml", "stamp-1.yaml")
    assert (first.read_bytes(), second.read_bytes()) == (b"one", b"two")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_publish_from_many_threads_keeps_every_file(tmp_path: Path) -> None:
    barrier = threading.Barrier(8)
    written: list[Path] = []

    def one(index: int) -> None:
        barrier.wait()
        written.append(publish(tmp_path, "same", ".yaml", str(index).encode()))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(written)) == 8
    assert sorted(p.read_bytes() for p in written) == [str(i).encode() for i in range(8)]


def test_session_folder_names_match_the_store() -> None:
    assert session_dirname("../../etc/passwd") == "etc-passwd"
    assert session_dirname("") == "general"
    assert session_dirname("8f14e45f-ea6b") == "8f14e45f-ea6b"


def _hook_process(home: Path, project: Path, session: str, path: Path) -> subprocess.Popen[bytes]:
    payload = {"hook_event_name": "SessionEnd", "session_id": session, "cwd": str(project),
               "reason": "logout", "transcript_path": str(path)}
    env = {**os.environ, "HRM_HOME": str(home), "PYTHONPATH": str(SRC)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "hrm", "hook", "session-end"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(payload).encode())
    process.stdin.close()
    return process


@pytest.mark.slow
@pytest.mark.parametrize("same_session", [False, True], ids=["three-sessions", "one-session"])
def test_three_concurrent_session_end_hooks_all_land(tmp_path: Path, same_session: bool) -> None:
    home = HRMHome(tmp_path / "home")
    initialize(home)
    project = tmp_path / "project"
    project.mkdir()
    processes = [
        _hook_process(home.root, project, "shared" if same_session else f"session-{i}",
                      transcript(tmp_path / f"t{i}.jsonl", prompt=f"Task number {i}"))
        for i in range(3)
    ]
    for process in processes:
        assert process.wait(timeout=120) == 0
        assert process.stderr is not None and process.stdout is not None
        assert process.stderr.read() == b""
        process.stderr.close()
        process.stdout.close()
    listed = HandoffStore(home).list(project_path=str(project))
    assert sorted(s.description for s in listed) == ["Task number 0", "Task number 1",
                                                     "Task number 2"]
