"""migrate_legacy_data: legacy projects import into the home, once, without touching the source."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import TaskStatus
from hrm.continuity.migration import DataType, detect_layout, migrate_legacy_data
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome

DATA = Path(__file__).resolve().parents[1] / "fixtures"


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def ring_project(tmp_path: Path) -> Path:
    project = tmp_path / "ringproj"
    shutil.copytree(DATA / "ring" / "handoffs", project / "docs" / "handoffs")
    ledgers = project / ".ring" / "ledgers"
    ledgers.mkdir(parents=True)
    shutil.copy(DATA / "ring" / "CONTINUITY-example.md", ledgers / "CONTINUITY-ctx.md")
    state = project / ".ring" / "state"
    state.mkdir()
    (state / "todos-state-abc.json").write_text(json.dumps({"token": "ghp_" + "b" * 36}))
    (state / "broken.json").write_text("{")
    return project


@pytest.fixture
def cc_project(tmp_path: Path) -> Path:
    project = tmp_path / "ccproj"
    shutil.copytree(
        DATA / "continuous-claude" / "handoffs", project / "thoughts" / "shared" / "handoffs"
    )
    return project


def test_detect_layout(ring_project: Path, cc_project: Path, tmp_path: Path) -> None:
    assert detect_layout(ring_project) == "ring"
    assert detect_layout(cc_project) == "continuous-claude"
    assert detect_layout(DATA / "continuous-claude" / "handoffs") == "continuous-claude"
    assert detect_layout(DATA / "ring" / "handoffs") == "ring"
    assert detect_layout(tmp_path / "empty-nowhere") == "unknown"


def test_ring_project_migrates_everything_once_and_source_is_untouched(
    ring_project: Path, home: HRMHome
) -> None:
    before = tree_digest(ring_project)
    seen: list[tuple[int, int]] = []
    handoffs = migrate_legacy_data(
        ring_project, DataType.HANDOFFS, home, progress=lambda d, t: seen.append((d, t))
    )
    assert (handoffs.items_migrated, handoffs.items_skipped, handoffs.warnings) == (6, 0, [])
    assert seen[-1] == (6, 6) and handoffs.destination == home.handoffs_dir
    ledgers = migrate_legacy_data(ring_project, DataType.LEDGERS, home)
    assert (ledgers.items_migrated, ledgers.items_skipped) == (1, 0)
    state = migrate_legacy_data(ring_project, DataType.STATE, home)
    assert (state.items_migrated, state.items_skipped) == (1, 1)
    assert "broken.json" in state.warnings[0]
    copied = (state.destination / ".ring" / "state" / "todos-state-abc.json").read_text()
    assert "ghp_" not in copied

    again = [migrate_legacy_data(ring_project, kind, home) for kind in DataType]
    assert [r.items_migrated for r in again] == [0, 0, 0]
    assert tree_digest(ring_project) == before

    store = HandoffStore(home)
    stored = store.list(project_path=str(ring_project))
    assert len(stored) == 7
    ledger = next(s for s in stored if s.path.name == "ledger-CONTINUITY-ctx.yaml")
    assert ledger.status == TaskStatus.PAUSED.value
    loaded = store.load(ledger.path)
    assert loaded.resume.next_steps[0] == "Phase 6: Create templates and documentation"
    assert loaded.extra["hrm_migrated_from"] == ".ring/ledgers/CONTINUITY-ctx.md"


def test_continuous_claude_project_migrates_handoffs_and_ledger_events(
    cc_project: Path, home: HRMHome
) -> None:
    handoffs = migrate_legacy_data(cc_project, DataType.HANDOFFS, home)
    assert (handoffs.items_migrated, handoffs.items_skipped) == (4, 0)
    ledgers = migrate_legacy_data(cc_project, DataType.LEDGERS, home)
    # current.md and the handoff event migrate; the session_end event carries nothing.
    assert (ledgers.items_migrated, ledgers.items_skipped) == (2, 1)
    spaced = [
        s for s in HandoffStore(home).list() if s.session_id.startswith("Continuous-Claude-v3-d6v")
    ]
    assert spaced and all(s.project_path == str(cc_project) for s in spaced)


def test_missing_source_is_source_not_found(home: HRMHome, tmp_path: Path) -> None:
    with pytest.raises(HRMError) as caught:
        migrate_legacy_data(tmp_path / "nope", DataType.HANDOFFS, home)
    assert caught.value.code is ErrorCode.SOURCE_NOT_FOUND


def test_unreadable_handoff_is_a_warning_not_a_failure(home: HRMHome, tmp_path: Path) -> None:
    folder = tmp_path / "p" / "thoughts" / "shared" / "handoffs" / "s"
    folder.mkdir(parents=True)
    (folder / "2026-01-01_10-00_bad.yaml").write_text("---\nsession: s\n---\ngoal: [oops\n")
    shutil.copy(
        DATA / "continuous-claude/handoffs/general/2026-01-10_07-01_fix-hooks-path-spaces.yaml",
        folder / "2026-01-10_07-01_ok.yaml",
    )
    result = migrate_legacy_data(tmp_path / "p", DataType.HANDOFFS, home)
    assert (result.items_migrated, result.items_skipped) == (1, 1)
    assert "2026-01-01_10-00_bad.yaml" in result.warnings[0]


def test_the_shipped_samples_as_given_are_detected_by_their_content(tmp_path: Path) -> None:
    for name, layout in (("ring", "ring"), ("continuous-claude", "continuous-claude")):
        copy = tmp_path / name
        shutil.copytree(DATA / name, copy)
        assert detect_layout(copy) == layout
    readme_only = tmp_path / "plain"
    readme_only.mkdir()
    (readme_only / "README.md").write_text("# a project\n")
    assert detect_layout(readme_only) == "unknown"


def test_a_ledger_template_is_skipped_with_a_warning_not_resumed(
    tmp_path: Path, home: HRMHome
) -> None:
    source = tmp_path / "ring"
    shutil.copytree(DATA / "ring", source)
    result = migrate_legacy_data(source, DataType.LEDGERS, home)
    assert result.items_skipped == 1
    assert any("CONTINUITY-template.md" in w and "template" in w for w in result.warnings)
    descriptions = [s.description for s in HandoffStore(home).list()]
    assert not any("<" in d and ">" in d for d in descriptions), descriptions


def test_state_goes_to_the_layout_the_user_named(tmp_path: Path, home: HRMHome) -> None:
    source = tmp_path / "project"
    (source / ".claude" / "state").mkdir(parents=True)
    (source / ".claude" / "state" / "s.json").write_text('{"a": 1}')
    (source / "README.md").write_text("# x\n")
    result = migrate_legacy_data(source, DataType.STATE, home, layout="continuous-claude")
    assert result.destination == home.root / "imports" / "continuous-claude"
    assert result.items_migrated == 1


def test_a_state_file_linking_out_of_the_project_is_skipped_not_copied(
    tmp_path: Path, home: HRMHome
) -> None:
    source = tmp_path / "project"
    (source / ".claude" / "state").mkdir(parents=True)
    (source / ".claude" / "state" / "s.json").write_text('{"a": 1}')
    outside = tmp_path / "outside.json"
    outside.write_text('{"planted": "not the project\'s"}')
    (source / ".claude" / "state" / "link.json").symlink_to(outside)
    (source / "README.md").write_text("# x\n")
    result = migrate_legacy_data(source, DataType.STATE, home, layout="continuous-claude")
    assert (result.items_migrated, result.items_skipped) == (1, 1)
    assert any("outside" in warning for warning in result.warnings)
    copied = b"".join(p.read_bytes() for p in result.destination.rglob("*") if p.is_file())
    assert b"planted" not in copied
