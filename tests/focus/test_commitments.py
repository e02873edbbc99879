"""CommitmentManager: a persisted lease that ticks, completes, is abandoned, or expires."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.focus.commitments import CommitmentManager
from hrm.storage.sqlite import Database


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def manager() -> CommitmentManager:
    return CommitmentManager(Database(":memory:"), "ADMIN", clock=FakeClock(), max_turns=5)


def test_create_and_get_active(manager: CommitmentManager) -> None:
    c = manager.create("prob_1", "ship the login fix", 3)
    assert c.id.startswith("cmt_") and c.is_active
    assert manager.get_active() == c
    assert (c.turns_remaining, c.turns_total) == (3, 3)


def test_turns_are_capped_at_max(manager: CommitmentManager) -> None:
    assert manager.create("prob_1", "big job", 50).turns_total == 5


@pytest.mark.parametrize(("problem", "turns"), [("prob_1", 0), ("", 3)])
def test_invalid_commitments_are_rejected(
    manager: CommitmentManager, problem: str, turns: int
) -> None:
    with pytest.raises(HRMError) as info:
        manager.create(problem, "x", turns)
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_tick_counts_down_and_expires_on_the_last_turn(manager: CommitmentManager) -> None:
    c = manager.create("prob_1", "ship", 3)
    assert manager.tick().turns_remaining == 2  # type: ignore[union-attr]
    assert manager.tick().turns_remaining == 1  # type: ignore[union-attr]
    assert manager.tick() is None
    ended = manager.get(c.id)
    assert ended is not None and ended.status == "expired" and ended.turns_remaining == 0
    assert ended.end_reason == "lease expired" and ended.ended_at is not None
    assert manager.get_active() is None
    assert manager.tick() is None


def test_complete_and_abandon(manager: CommitmentManager) -> None:
    assert not manager.complete() and not manager.abandon("nothing")
    a = manager.create("prob_1", "ship", 3)
    assert manager.complete()
    assert manager.get(a.id).status == "completed"  # type: ignore[union-attr]
    b = manager.create("prob_2", "docs", 3)
    assert manager.abandon("user changed their mind")
    ended = manager.get(b.id)
    assert ended is not None and ended.status == "abandoned"
    assert ended.end_reason == "user changed their mind"


def test_new_commitment_abandons_the_old_with_a_reason(manager: CommitmentManager) -> None:
    old = manager.create("prob_1", "ship", 3)
    new = manager.create("prob_2", "docs", 2)
    ended = manager.get(old.id)
    assert ended is not None and ended.status == "abandoned"
    assert ended.end_reason == f"superseded by {new.id}"
    assert [c.id for c in manager.history()] == [new.id, old.id]


def test_state_is_shared_across_processes_and_scoped_by_agent_class(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Database(path) as db_a, Database(path) as db_b:
        first = CommitmentManager(db_a, "ADMIN")
        second = CommitmentManager(db_b, "ADMIN")
        other = CommitmentManager(db_b, "RESIDENT:DoPeJar")
        c = first.create("prob_1", "ship", 3)
        assert second.tick().turns_remaining == 2  # type: ignore[union-attr]
        assert first.get_active().turns_remaining == 2  # type: ignore[union-attr]
        assert other.get_active() is None and other.get(c.id) is None


def test_max_turns_must_be_positive() -> None:
    with pytest.raises(HRMError):
        CommitmentManager(Database(":memory:"), "ADMIN", max_turns=0)


def test_holds_focus_is_stored_and_read_back(manager: CommitmentManager) -> None:
    held = manager.create("prob_1", "the database layer", 3, holds_focus=True)
    assert manager.get_active() == held and held.holds_focus
    assert manager.tick().holds_focus  # type: ignore[union-attr]
    assert held.to_record()["holds_focus"] is True
    assert not manager.create("prob_1", "the pricing page", 3).holds_focus


def test_a_home_from_before_holds_focus_is_migrated_in_place(tmp_path: Path) -> None:
    from hrm.focus import commitments

    path = tmp_path / "memory.db"
    with Database(path) as db:  # the table as homes created before D56 have it
        db.migrate("focus.commitments", commitments._MIGRATIONS[:1])
        db.execute(
            "INSERT INTO commitments (id, agent_class, problem_id, description, turns_remaining,"
            " turns_total, created_at, status) VALUES ('cmt_old', 'ADMIN', 'prob_1', 'ship', 2,"
            " 3, '2026-01-01T12:00:00+00:00', 'active')"
        )
    with Database(path) as db:
        active = CommitmentManager(db, "ADMIN").get_active()
        assert active is not None and active.id == "cmt_old" and not active.holds_focus
