"""Rebuilding memory.db from the ledgers alone: every table, row for row, as real use left it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm import HRM
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput
from hrm.home import HRMHome, initialize
from hrm.memory.bus import MemoryBus
from hrm.memory.types import EpisodeEntry, SynthesizedPattern
from hrm.storage._journal_sql import DERIVED_TABLES
from hrm.storage.rebuild import DERIVED_COLUMNS, rebuild, table_dump

runner = CliRunner()

FAULTS = Path(__file__).resolve().parents[2] / "faults"


def _turns() -> tuple[str, ...]:
    """The real-use conversation of `faults/homes.py`, and a decision for a working set."""
    import importlib
    import sys

    if str(FAULTS) not in sys.path:
        sys.path.insert(0, str(FAULTS))
    homes = importlib.import_module("homes")
    return (*homes.TURNS, "Let's go with exponential backoff for the webhook retries.")


def use(home: HRMHome) -> None:
    """A home built through real use of every compartment."""
    with HRM.open(home.root, llm="offline") as hrm:
        for text in _turns():
            hrm.turn(text)
    with MemoryBus.open(home) as bus:
        bus.write_to_working("p-invoices", "rounding", "half-even")
        bus.shared.set("fact.region", "eu-west-1", "test")
        bus.shared.set("fact.region", "eu-central-1", "test")
        bus.rollback_shared("fact.region", 1)
        evidence = bus.log_episode(EpisodeEntry(entry_type="observation", content={"x": 1}))
        more = bus.log_episode(EpisodeEntry(entry_type="observation", content={"x": 2}))
        pattern = bus.synthesis.add_pattern(SynthesizedPattern(
            pattern_type="strategy", description="retries help", evidence_ids=[evidence],
            confidence=0.6,
        ))
        bus.synthesis.strengthen(pattern, more)
        bus.synthesis.weaken(pattern, "one miss")
    with LearningsRepository.open(home, embeddings="off") as repo:
        repo.store_learning(LearningInput(content="Run the linter before pushing",
                                          type="ARCHITECTURAL_DECISION", tags=["ci", "lint"]))
        repo.store_learning(LearningInput(content="Flaky upload test needs one retry",
                                          type="ERROR_FIX", tags=["ci"]))
        repo.import_([
            {"content": "Cache keys include the tenant id", "type": "WORKING_SOLUTION"},
            {"content": "Use UTC timestamps everywhere", "type": "WORKING_SOLUTION",
             "status": "pruned"},
        ])
        repo.forget("Flaky upload test")


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    return HRMHome(initialize(tmp_path / "home").path)


def dumps(home: HRMHome) -> dict[str, dict[str, list[tuple[object, ...]]]]:
    """Every database of the home (its own and each stack's, D320), table by table."""
    return {
        path.relative_to(home.root).as_posix(): table_dump(path)
        for path in home.memory_databases()
    }


def test_deleted_databases_are_rebuilt_equal_table_by_table(home: HRMHome) -> None:
    use(home)
    before = dumps(home)
    assert set(before) == {"memory.db", "HO2/ledger/ADMIN/memory.db"}
    # Every compartment holds rows, so the comparison covers each of them: learnings in the
    # home's database, every per-stack table in the stack's own.
    assert {"learnings", "learning_tags"} == set(before["memory.db"])
    assert {
        "shared_references", "working_sets", "problems",
        "commitments", "focus_stance", "learning_patterns", "learning_pattern_evidence",
        "learning_outcomes", "synthesis_patterns", "synthesis_evidence", "synthesis_weakenings",
    } <= set(before["HO2/ledger/ADMIN/memory.db"]), sorted(before["HO2/ledger/ADMIN/memory.db"])
    for database in home.memory_databases():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{database}{suffix}").unlink(missing_ok=True)
    phases: list[str] = []
    report = rebuild(home, progress=lambda phase, count: phases.append(phase))
    assert report.ok and report.records > 0 and report.moved_aside == []
    assert set(report.databases) == set(before) and all(report.databases.values())
    assert "replay" in phases and "index" in phases
    after = dumps(home)
    for name in before:
        for table in sorted(set(before[name]) | set(after[name])):
            assert after[name].get(table) == before[name].get(table), (name, table)


def test_only_the_listed_derived_tables_and_columns_are_left_out(home: HRMHome) -> None:
    use(home)
    for database in home.memory_databases():
        everything = table_dump(database, exclude_derived=False)
        compared = table_dump(database)
        left_out = {t for t in everything if t not in compared and not t.startswith(
            ("learnings_fts", "artifacts_fts")
        )}
        assert left_out <= DERIVED_TABLES | {"schema_migrations"}
    assert set(DERIVED_COLUMNS) <= {"learnings"}


def test_every_table_a_home_makes_is_made_by_a_rebuild(home: HRMHome, tmp_path: Path) -> None:
    from hrm.storage.stack_db import open_stack_db

    use(home)
    empty = HRMHome(initialize(tmp_path / "empty").path)
    open_stack_db(empty, "ADMIN").close()
    rebuild(empty)  # no ledger records at all: the schema alone

    def tables(path: Path) -> set[str]:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}

    assert tables(home.memory_db) <= tables(empty.memory_db)
    stack = tables(home.stack_memory_db("ADMIN"))
    assert stack <= tables(empty.stack_memory_db("ADMIN"))
    assert not {"learnings", "artifacts", "ledger_index"} & stack  # the home's, not a stack's


def test_a_damaged_memory_db_is_moved_aside_and_never_locks_out_repair(home: HRMHome) -> None:
    from hrm.cli.ledger import app

    use(home)
    before = table_dump(home.memory_db)
    home.memory_db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    for suffix in ("-wal", "-shm"):
        Path(f"{home.memory_db}{suffix}").unlink(missing_ok=True)
    args = ["--home", str(home.root)]

    verified = runner.invoke(app, ["verify", *args])
    assert verified.exit_code == 0, verified.output
    assert "memory.db" in verified.stderr and "warning" in verified.stderr
    rebuilt = runner.invoke(app, ["reindex", *args])

    assert rebuilt.exit_code == 0, rebuilt.output
    assert "memory.db.damaged-" in rebuilt.stdout
    (aside,) = home.root.glob("memory.db.damaged-*[0-9]Z")
    assert aside.read_bytes().startswith(b"SQLite format 3\x00\x00\x01")
    assert table_dump(home.memory_db) == before
    with HRM.open(home.root, llm="offline") as hrm:  # and the home works on
        assert hrm.turn("What's still open?").response
