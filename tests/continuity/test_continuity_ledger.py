"""Continuity ledgers: found where Ring and Continuous-Claude keep them, summarized for a session."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hrm.continuity.continuity_ledger import (
    find_active_ledger,
    find_ledgers,
    parse_ledger,
    summarize_ledger,
)
from hrm.errors import HRMError

DATA = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLE = DATA / "ring" / "CONTINUITY-example.md"
TEMPLATE = DATA / "ring" / "CONTINUITY-template.md"
CURRENT = DATA / "continuous-claude" / "handoffs" / "continuity-system" / "current.md"


def test_ring_example_parses_every_section() -> None:
    ledger = parse_ledger(EXAMPLE.read_text(), path=EXAMPLE)
    assert ledger.session == "context-management-system"
    assert ledger.updated == datetime(2025, 12, 27, 14, 30, tzinfo=UTC)
    assert ledger.goal.startswith("Implement context management system")
    assert len(ledger.done) == 5 and ledger.done[0].startswith("Phase 1")
    assert ledger.now == ["Phase 6: Create templates and documentation"]
    assert ledger.next == ["Phase 7: Integration testing", "Phase 8: Clean up test artifacts"]
    assert ledger.open_questions[0].startswith("Does Claude Code support PreCompact")
    assert len(ledger.constraints) == 4 and len(ledger.decisions) == 3
    assert ledger.working_set[0] == "Branch: main"


@pytest.mark.parametrize("path", [TEMPLATE, CURRENT], ids=["template", "synthesised"])
def test_other_real_ledgers_read(path: Path) -> None:
    ledger = parse_ledger(path.read_text(), path=path)
    assert ledger.goal and ledger.now


def test_summary_puts_goal_and_now_first_and_respects_the_limit() -> None:
    summary = summarize_ledger(EXAMPLE)
    lines = summary.splitlines()
    assert lines[0].startswith("Continuity ledger: context-management-system (updated 2025-12-27")
    assert lines[1].startswith("Goal: ") and lines[2].startswith("Now: Phase 6")
    short = summarize_ledger(EXAMPLE, max_chars=120)
    assert len(short) == 120 and short.endswith("…")


def test_summary_of_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HRMError):
        summarize_ledger(tmp_path / "CONTINUITY-x.md")


def test_find_active_ledger_picks_the_newest_across_layouts(tmp_path: Path) -> None:
    assert find_active_ledger(tmp_path) is None
    ring = tmp_path / ".ring" / "ledgers" / "CONTINUITY-a.md"
    claude = tmp_path / "thoughts" / "ledgers" / "CONTINUITY_CLAUDE-b.md"
    synthesised = tmp_path / "thoughts" / "shared" / "handoffs" / "stream" / "current.md"
    ignored = tmp_path / "thoughts" / "ledgers" / "notes.md"
    for age, path in enumerate([ring, claude, synthesised, ignored]):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Session: x\n")
        os.utime(path, (1_000_000 - age * 10, 1_000_000 - age * 10))
    assert find_ledgers(tmp_path) == [ring, claude, synthesised]
    os.utime(claude, (2_000_000, 2_000_000))
    assert find_active_ledger(tmp_path) == claude
