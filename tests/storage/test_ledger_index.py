"""The SQLite index over ledgers: incremental, queryable, rebuildable, and suspicious of rewrites."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.storage import Database, IndexEntry, Ledger, LedgerIndex

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class StepClock:
    """One minute later on every call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> datetime:
        self.calls += 1
        return T0 + timedelta(minutes=self.calls - 1)


@pytest.fixture
def db(home: HRMHome) -> Iterator[Database]:
    with Database(home.memory_db) as database:
        yield database


@pytest.fixture
def index(db: Database, home: HRMHome) -> LedgerIndex:
    return LedgerIndex(db, home=home)


def write(path: Path, kinds: list[str], clock: StepClock | None = None) -> None:
    with Ledger(path, clock=clock or StepClock()) as ledger:
        for i, kind in enumerate(kinds):
            ledger.append(kind, {"i": i})


def test_index_new_is_incremental(index: LedgerIndex, home: HRMHome) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn", "turn"])
    with Ledger(path) as ledger:
        assert index.index_new(ledger) == 2
        assert index.index_new(ledger) == 0
        ledger.append("turn", {})
        assert index.index_new(ledger) == 1
    assert index.count(path) == 3
    last = index.last(path)
    assert last is not None and last.seq == 3


def test_paths_inside_the_home_are_stored_relative(index: LedgerIndex, home: HRMHome) -> None:
    path = home.decision_ledger("RESIDENT:DoPeJar")
    assert index.key(path) == "HO2/ledger/RESIDENT_DoPeJar/workorder.jsonl"
    assert index.key("HO2/ledger/RESIDENT_DoPeJar/workorder.jsonl") == index.key(path)


def test_paths_outside_the_home_are_stored_absolute(index: LedgerIndex, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "x.jsonl"
    assert index.key(outside) == outside.as_posix()


def test_query_filters_by_kind_time_and_limit(index: LedgerIndex, home: HRMHome) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn", "escalation", "turn", "turn", "escalation"])
    with Ledger(path) as ledger:
        index.index_new(ledger)
    seqs = lambda entries: [e.seq for e in entries]  # noqa: E731
    assert seqs(index.query(path, kind="turn")) == [1, 3, 4]
    assert seqs(index.query(path, since=T0 + timedelta(minutes=2))) == [3, 4, 5]
    assert seqs(index.query(path, until=T0 + timedelta(minutes=2))) == [1, 2]
    assert seqs(index.query(path, since="2026-03-01T12:01:00+00:00", kind="escalation")) == [2, 5]
    assert seqs(index.query(path, limit=2)) == [1, 2]
    entry = index.query(path, kind="escalation", limit=1)[0]
    assert isinstance(entry, IndexEntry) and entry.ts == "2026-03-01T12:01:00.000000Z"


def test_query_rejects_a_bad_time_and_a_negative_limit(index: LedgerIndex) -> None:
    with pytest.raises(HRMError, match="ISO-8601"):
        index.query("x.jsonl", since="yesterday")
    with pytest.raises(HRMError, match="limit"):
        index.query("x.jsonl", limit=-1)


def test_search_returns_records_from_the_ledger(index: LedgerIndex, home: HRMHome) -> None:
    path = home.execution_ledger("ADMIN")
    write(path, ["work_order", "note", "work_order"])
    with Ledger(path) as ledger:
        found = index.search(ledger, kind="work_order")
    assert [(r.seq, r.data) for r in found] == [(1, {"i": 0}), (3, {"i": 2})]


def test_rebuild_restores_a_deleted_index(index: LedgerIndex, db: Database, home: HRMHome) -> None:
    write(home.decision_ledger("ADMIN"), ["turn"] * 3)
    write(home.execution_ledger("ADMIN"), ["work_order"] * 2)
    write(home.governance_ledger, ["policy_change"])
    db.execute("DROP TABLE ledger_index")
    report = LedgerIndex(db, home=home).rebuild()
    # Every ledger of the home, the memory journal and the ledger-creation records included.
    lines = {
        p.relative_to(home.root).as_posix(): len(p.read_bytes().splitlines())
        for p in home.all_ledgers()
    }
    assert report.ok and report.counts == lines
    assert report.counts["HO1/ledger/ADMIN/worker.jsonl"] == 2
    assert report.counts["HO2/ledger/ADMIN/workorder.jsonl"] == 3
    assert index.count(home.decision_ledger("ADMIN")) == 3


def test_rebuild_replaces_a_tampered_index(index: LedgerIndex, db: Database, home: HRMHome) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn"] * 2)
    with Ledger(path) as ledger:
        index.index_new(ledger)
    with db.transaction():
        db.execute("UPDATE ledger_index SET hash = 'bogus', kind = 'forged'")
    with Ledger(path) as ledger, pytest.raises(HRMError):
        index.index_new(ledger)
    index.rebuild(home)
    assert {e.kind for e in index.query(path)} == {"turn"}


def test_rebuild_indexes_a_damaged_ledger_up_to_the_damage(
    index: LedgerIndex, home: HRMHome
) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn"] * 4)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"i":2', '"i":9')
    path.write_text("".join(lines))
    report = index.rebuild(home)
    key = "HO2/ledger/ADMIN/workorder.jsonl"
    assert not report.ok
    assert report.counts[key] == 2
    assert ":3, sequence 3" in report.errors[key]


def test_a_rewritten_ledger_is_not_silently_reindexed(index: LedgerIndex, home: HRMHome) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn"] * 3)
    with Ledger(path) as ledger:
        index.index_new(ledger)
    path.unlink()
    path.with_name(path.name + ".anchor").unlink()
    # The manifest too (else the append below is refused: it knows three were committed).
    (home.root / "HOT" / "ledger" / "manifest.json").unlink()
    write(path, ["other"] * 3)
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        index.index_new(ledger)
    assert info.value.code is ErrorCode.LEDGER_CORRUPT
    assert "rewritten" in info.value.message


def test_a_ledger_cut_below_the_index_is_reported(index: LedgerIndex, home: HRMHome) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn"] * 4)
    with Ledger(path) as ledger:
        index.index_new(ledger)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    path.with_name(path.name + ".anchor").unlink()
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        index.index_new(ledger)
    assert info.value.code is ErrorCode.LEDGER_CORRUPT
    assert "cut or replaced" in info.value.message


def test_rebuild_without_a_home_is_a_caller_mistake(db: Database) -> None:
    with pytest.raises(HRMError) as info:
        LedgerIndex(db).rebuild()
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_other_iso_timestamps_are_normalised_for_time_queries(
    index: LedgerIndex, home: HRMHome
) -> None:
    from hrm.storage import GENESIS_HASH, canonical_json, record_hash

    path = home.decision_ledger("ADMIN")
    fields = {"data": {}, "kind": "turn", "prev": GENESIS_HASH, "seq": 1,
              "ts": "2026-03-01T12:30:00+00:00"}
    path.write_text(canonical_json({**fields, "hash": record_hash(**fields)}) + "\n")
    with Ledger(path) as ledger:
        index.index_new(ledger)
    assert [e.ts for e in index.query(path, since=T0 + timedelta(minutes=15))] == [
        "2026-03-01T12:30:00.000000Z"
    ]
    assert index.query(path, since=T0 + timedelta(minutes=45)) == []


def test_check_compares_the_ledger_with_its_last_indexed_record(
    index: LedgerIndex, home: HRMHome
) -> None:
    path = home.decision_ledger("ADMIN")
    write(path, ["turn"] * 3)
    with Ledger(path) as ledger:
        assert index.check(ledger) is None  # nothing indexed yet
        index.index_new(ledger)
        assert index.check(ledger) is None
        ledger.append("turn", {})
        assert index.check(ledger) is None  # behind is fine
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    with Ledger(path) as ledger:
        problem = index.check(ledger)
    assert problem is not None and (problem.line, problem.seq) == (3, 3)
    assert "cut or rewritten" in problem.reason
