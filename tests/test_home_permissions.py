"""Everything in the home is owner-only (folders 0700, files 0600) whatever the umask, and a
home or database found open to other users is tightened on open with one warning."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrm import HRM
from hrm.continuity.hook_entry import answer_hook
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput
from hrm.home import HRMHome, initialize
from hrm.storage.sqlite import Database
from hrm.tracing import get_tracer, set_tracer


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: what hrm creates must still be private."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def loose_paths(root: Path) -> list[str]:
    """Every path under `root` (itself included) whose mode is not exactly 0700 / 0600."""
    found = []
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) != want:
            found.append(f"{path.relative_to(root)} {oct(stat.S_IMODE(info.st_mode))}")
    return found


def _hook(event: str, home: HRMHome, project: Path, **fields: object) -> None:
    payload = {"hook_event_name": event, "session_id": "s-1", "cwd": str(project), **fields}
    env = {"HRM_HOME": str(home.root), "CLAUDE_PROJECT_DIR": str(project)}
    answer_hook(json.dumps(payload).encode(), [], environ=env, cwd=project)


def test_everything_hrm_creates_is_owner_only_under_an_open_umask(
    tmp_path: Path, open_umask: None
) -> None:
    home = HRMHome(tmp_path / "home")
    initialize(home)
    home.config_path.write_text("trace_enabled: true\n")  # traces too (a file the test wrote)
    os.chmod(home.config_path, 0o600)
    previous = get_tracer()  # a stack opened with tracing on installs its tracer globally
    try:
        with HRM.open(home.root, "ADMIN", "offline") as hrm:
            for text in ("How do I rename a git branch?", "I prefer short answers with examples"):
                hrm.turn(text)
    finally:
        set_tracer(previous)
    with LearningsRepository.open(home) as repo:
        repo.store_learning(LearningInput(content="Use uv for installs", type="WORKING_SOLUTION"))
    project = tmp_path / "project"
    (project / ".claude" / "skills").mkdir(parents=True)
    (project / ".claude" / "skills" / "skill-rules.json").write_text(
        json.dumps({"version": "1", "skills": {"git": {"promptTriggers": {"keywords": ["git"]}}}})
    )
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps(
        {"type": "user", "message": {"role": "user", "content": "Fix the README typo"}}) + "\n")
    _hook("UserPromptSubmit", home, project, prompt="rename the git branch")
    _hook("SessionEnd", home, project, transcript_path=str(transcript), reason="other")
    _hook("SessionStart", home, project, source="startup")
    assert (home.root / "memory.db-wal").exists() or (home.root / "memory.db").exists()
    assert loose_paths(home.root) == []


def test_a_loose_home_is_tightened_on_init_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = HRMHome(tmp_path / "home")
    initialize(home)
    os.chmod(home.root, 0o755)
    os.chmod(home.config_path, 0o644)
    os.chmod(home.handoffs_dir, 0o777)
    with caplog.at_level(logging.WARNING, logger="hrm"):
        initialize(home)
    assert loose_paths(home.root) == []
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "owner-only" in warnings[0].getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hrm"):
        initialize(home)
    assert not caplog.records  # already private: nothing to say


def test_a_readable_database_and_its_sidecars_are_tightened_when_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.db"
    db = Database(str(path))
    db.execute("CREATE TABLE t (x)")
    db.close()
    for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
        if (tmp_path / name).exists():
            os.chmod(tmp_path / name, 0o644)
    with caplog.at_level(logging.WARNING, logger="hrm"):
        Database(str(path)).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert any("owner-only" in r.getMessage() for r in caplog.records)


def test_a_hook_tightens_a_loose_home_and_logs_it(tmp_path: Path) -> None:
    home = HRMHome(tmp_path / "home")
    initialize(home)
    os.chmod(home.root, 0o755)
    project = tmp_path / "project"
    project.mkdir()
    _hook("Stop", home, project, stop_hook_active=False)
    assert stat.S_IMODE(home.root.stat().st_mode) == 0o700
    log = (home.logs_dir / "hooks.log").read_text()
    assert "owner-only" in log


def test_a_handoff_linking_out_of_the_home_is_not_read(tmp_path: Path) -> None:
    from hrm.continuity.handoff_store import HandoffStore
    from hrm.continuity.hooks import SessionCheckpoint
    from hrm.continuity.transcript import build_session_handoff, summarize_entries

    home, other = HRMHome(tmp_path / "home"), HRMHome(tmp_path / "other")
    initialize(home)
    initialize(other)
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "planted task"}})
    checkpoint = SessionCheckpoint(kind="session_end", session_id="s", project_path=tmp_path)
    handoff = build_session_handoff(summarize_entries([line]), checkpoint)
    assert handoff is not None
    outside = HandoffStore(other).write(handoff)
    (home.handoffs_dir / "s").mkdir()
    (home.handoffs_dir / "s" / "planted.yaml").symlink_to(outside)
    (home.handoffs_dir / "s" / "inside.yaml").symlink_to(home.handoffs_dir / "s" / "x.yaml")
    (home.handoffs_dir / "s" / "x.yaml").write_bytes(outside.read_bytes())
    listed = HandoffStore(home).list()
    assert sorted(p.path.name for p in listed) == ["inside.yaml", "x.yaml"]  # not planted.yaml
    assert len(HandoffStore(other).list()) == 1
