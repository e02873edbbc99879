"""The memory journal: every change to a home's memory.db is in the memory ledger first."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome, initialize
from hrm.storage import Database, Ledger
from hrm.storage.journal import MEMORY_KIND, SNAPSHOT_KIND, memory_ledger_path
from hrm.storage.rebuild import table_dump

FIXTURES = Path(__file__).parents[1] / "fixtures" / "storage"
NOTES = [
    "CREATE TABLE notes (id TEXT PRIMARY KEY, agent_class TEXT NOT NULL, body TEXT NOT NULL,"
    " n INTEGER NOT NULL DEFAULT 0, score REAL);",
]


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    return HRMHome(initialize(tmp_path / "home").path)


def open_db(home: HRMHome) -> Database:
    db = Database(home.memory_db)
    db.migrate("test.notes", NOTES)
    return db


def memory_records(home: HRMHome) -> list[tuple[str, dict]]:
    path = memory_ledger_path(home.memory_db)
    if not path.exists():
        return []
    with Ledger(path, read_only=True) as ledger:
        return [(r.kind, r.data) for r in ledger.records()]


def row_ops(home: HRMHome) -> list[dict]:
    return [
        op for kind, data in memory_records(home) if kind in (MEMORY_KIND, SNAPSHOT_KIND)
        for op in data["ops"] if op["op"] != "schema"
    ]


def test_a_committed_change_is_in_the_ledger_with_its_row(home: HRMHome) -> None:
    with open_db(home) as db, db.transaction():
        db.execute("INSERT INTO notes (id, agent_class, body, score) VALUES ('a', 'ADMIN', "
                   "'first', 0.1 + 0.2)")
    (op,) = row_ops(home)
    assert op == {"op": "put", "t": "notes", "row": {
        "rowid": 1, "id": "a", "agent_class": "ADMIN", "body": "first", "n": 0,
        "score": 0.30000000000000004,  # floats exactly as stored
    }}


def test_one_record_per_transaction_holds_each_row_once_in_last_change_order(
    home: HRMHome,
) -> None:
    with open_db(home) as db, db.transaction():
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('b', 'ADMIN', 'y')")
        db.execute("UPDATE notes SET body = 'x2' WHERE id = 'a'")
    kinds = [k for k, d in memory_records(home) if any(o["op"] != "schema" for o in d["ops"])]
    assert kinds == [MEMORY_KIND]
    assert [(o["op"], o["row"]["id"], o["row"]["body"]) for o in row_ops(home)] == [
        ("put", "b", "y"), ("put", "a", "x2"),
    ]


def test_an_update_journals_only_what_it_changed(home: HRMHome) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
        db.execute("UPDATE notes SET n = n + 1, body = body WHERE id = 'a'")
        db.execute("UPDATE notes SET body = body WHERE id = 'a'")  # changes nothing
        db.execute("DELETE FROM notes WHERE id = 'a'")
    assert [o["op"] for o in row_ops(home)] == ["put", "set", "gone"]
    assert row_ops(home)[1] == {"op": "set", "t": "notes", "key": {"id": "a"}, "cols": {"n": 1}}
    assert row_ops(home)[2] == {"op": "gone", "t": "notes", "key": {"id": "a"}}


def test_a_rolled_back_transaction_leaves_nothing(home: HRMHome) -> None:
    with open_db(home) as db:
        with pytest.raises(RuntimeError), db.transaction():
            db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
            raise RuntimeError("the caller fails")
        with db.transaction():
            db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('b', 'ADMIN', 'y')")
            with pytest.raises(RuntimeError), db.transaction():  # a savepoint
                db.execute("UPDATE notes SET body = 'changed' WHERE id = 'b'")
                db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('c', 'ADMIN', 'z')")
                raise RuntimeError("the inner block fails")
    assert [(o["row"]["id"], o["row"]["body"]) for o in row_ops(home)] == [("b", "y")]


def test_a_write_outside_a_transaction_is_journaled_too(home: HRMHome) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
        db.executemany("INSERT INTO notes (id, agent_class, body) VALUES (?, 'ADMIN', ?)",
                       [("b", "y"), ("c", "z")])
    assert [o["row"]["id"] for o in row_ops(home)] == ["a", "b", "c"]


def test_a_connection_that_does_not_journal_cannot_write_a_journaled_table(
    home: HRMHome,
) -> None:
    with open_db(home):
        pass
    raw = sqlite3.connect(home.memory_db)
    with pytest.raises(sqlite3.OperationalError, match="hrm_journal"):
        raw.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
    raw.close()


def test_a_secret_a_store_wrote_is_scrubbed_in_the_ledger_and_the_database(
    home: HRMHome,
) -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 8
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', ?)",
                   (f"key {secret}",))
        stored = db.one("SELECT body FROM notes WHERE id = 'a'")
    assert stored is not None and secret not in stored["body"]
    assert secret not in memory_ledger_path(home.memory_db).read_text()
    assert row_ops(home)[0]["row"]["body"] == stored["body"]


def test_a_private_span_a_store_wrote_is_cut_from_the_ledger_and_the_database(
    home: HRMHome,
) -> None:
    # No secret's hint in it, so only the private span makes the journal scrub it; the clean
    # row written after it is remembered as clean and stored as it is.
    # Not hex digits alone: "4711" turned up inside a record's hash one run in a few hundred.
    body = "the door code is <private>zulu-4711</private> downstairs"
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', ?)", (body,))
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('b', 'ADMIN', 'plain')")
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('c', 'ADMIN', 'plain')")
        stored = db.one("SELECT body FROM notes WHERE id = 'a'")
    assert stored is not None and "zulu-4711" not in stored["body"]
    assert "zulu-4711" not in memory_ledger_path(home.memory_db).read_text()
    assert [o["row"]["body"] for o in row_ops(home)][1:] == ["plain", "plain"]


def test_a_record_a_crash_left_unapplied_is_applied_by_the_next_transaction(
    home: HRMHome,
) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
    # A writer appended and died before SQLite committed: the ledger is ahead.
    with Ledger(memory_ledger_path(home.memory_db)) as ledger:
        ledger.append(MEMORY_KIND, {"ops": [
            {"op": "put", "t": "notes", "row": {"rowid": 2, "id": "b", "agent_class": "ADMIN",
                                                 "body": "acknowledged", "n": 0, "score": None}},
        ]})
    with open_db(home) as db:
        assert db.one("SELECT body FROM notes WHERE id = 'b'") is None  # reads do not wait
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('c', 'ADMIN', 'z')")
        rows = [r["id"] for r in db.execute("SELECT id FROM notes ORDER BY rowid")]
    assert rows == ["a", "b", "c"]


def test_when_sqlite_cannot_commit_the_ledger_record_is_taken_back(home: HRMHome) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
        before = memory_ledger_path(home.memory_db).read_bytes()
        db._conn.execute("PRAGMA foreign_keys = ON")
        db._conn.execute("CREATE TABLE kids (p TEXT REFERENCES notes(id) DEFERRABLE "
                         "INITIALLY DEFERRED)")
        with pytest.raises(HRMError), db.transaction():
            db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('b', 'ADMIN', 'y')")
            db.execute("INSERT INTO kids (p) VALUES ('nobody')")  # fails only at COMMIT
        assert db.one("SELECT id FROM notes WHERE id = 'b'") is None
    assert memory_ledger_path(home.memory_db).read_bytes() == before


def test_untracked_columns_alone_write_nothing(home: HRMHome) -> None:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput, SearchQuery

    with LearningsRepository.open(home, embeddings="off") as repo:
        repo.store_learning(LearningInput(content="Deploys run on Tuesdays", type="ERROR_FIX"))
        size = memory_ledger_path(home.memory_db).stat().st_size
        results = repo.search_memories(SearchQuery(text="deploys"))  # stamps access
        assert results.results
    assert memory_ledger_path(home.memory_db).stat().st_size == size


def test_triggers_are_checked_once_per_schema_change(home: HRMHome) -> None:
    with open_db(home) as db:
        calls = []
        journal = db.journal
        assert journal is not None
        original = journal._cover
        journal._cover = lambda *a: calls.append(a) or original(*a)  # type: ignore[method-assign]
        db.migrate("test.notes", NOTES)  # nothing new: no look at the triggers
        assert calls == []
        db.migrate("test.more", ["CREATE TABLE more (k TEXT PRIMARY KEY);"])
        assert "more" in {c[0] for c in calls}


def test_a_deleted_memory_db_is_rebuilt_from_the_ledger_when_opened(home: HRMHome) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'kept')")
    before = table_dump(home.memory_db)
    for suffix in ("", "-wal", "-shm"):
        Path(str(home.memory_db) + suffix).unlink(missing_ok=True)
    with open_db(home) as db:
        row = db.one("SELECT body FROM notes WHERE id = 'a'")
    assert row is not None and row["body"] == "kept"
    assert table_dump(home.memory_db) == before


def test_a_home_made_before_the_journal_is_exported_once_and_rebuilds_equal(
    home: HRMHome,
) -> None:
    """The fixture is a memory.db written by the code before the journal (see its script)."""
    home.memory_db.write_bytes(gzip.decompress(
        (FIXTURES / "home_before_journal.db.gz").read_bytes()
    ))
    from hrm import HRM

    original = table_dump(home.memory_db)
    assert {"learnings", "problems", "shared_references", "commitments"} <= set(original)
    with HRM.open(home.root, llm="offline") as hrm:
        assert hrm.status()["agent_class"] == "ADMIN"
    kinds = [kind for kind, _ in memory_records(home)]
    assert SNAPSHOT_KIND in kinds
    exported = {op["t"] for op in row_ops(home)}
    assert {"learnings", "learning_tags", "problems", "shared_references"} <= exported
    with HRM.open(home.root, llm="offline"):
        pass
    assert [kind for kind, _ in memory_records(home)].count(SNAPSHOT_KIND) == kinds.count(
        SNAPSHOT_KIND
    )  # once
    from hrm.storage.rebuild import rebuild

    now = table_dump(home.memory_db)
    stack_now = table_dump(home.stack_memory_db("ADMIN"))  # the stack's rows moved (D322)
    rebuild(home)
    assert table_dump(home.memory_db) == now
    assert table_dump(home.stack_memory_db("ADMIN")) == stack_now
    for table, rows in original.items():  # nothing the old home held was lost
        kept = set(now.get(table, [])) | set(stack_now.get(table, []))
        assert set(rows) <= kept or table == "focus_stance", table
    assert "problems" not in now and "shared_references" not in now


def test_a_ledger_that_lost_records_memory_db_applied_stops_writes(home: HRMHome) -> None:
    with open_db(home) as db:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('a', 'ADMIN', 'x')")
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('b', 'ADMIN', 'y')")
    path = memory_ledger_path(home.memory_db)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))
    for side in (path.with_name(path.name + ".anchor"), home.root / "HOT/ledger/manifest.json"):
        side.unlink(missing_ok=True)
    with open_db(home) as db, pytest.raises(HRMError) as refused:
        db.execute("INSERT INTO notes (id, agent_class, body) VALUES ('c', 'ADMIN', 'z')")
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT
    assert "hrm ledger" in refused.value.message


_STATEMENTS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(0, 6), st.text(max_size=12)),
        st.tuples(st.just("update"), st.integers(0, 6), st.text(max_size=12)),
        st.tuples(st.just("bump"), st.integers(0, 6), st.just("")),
        st.tuples(st.just("delete"), st.integers(0, 6), st.just("")),
        st.tuples(st.just("savepoint_fails"), st.integers(0, 6), st.text(max_size=12)),
        st.tuples(st.just("commit"), st.just(0), st.just("")),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statements=_STATEMENTS)
def test_any_sequence_of_writes_rebuilds_equal(
    tmp_path_factory: pytest.TempPathFactory, statements: list[tuple[str, int, str]]
) -> None:
    """Inserts, updates, deletes and failed savepoints in any order: the ledger alone makes
    the same table (rowids included)."""
    from hrm.storage.rebuild import rebuild

    home = HRMHome(initialize(tmp_path_factory.mktemp("j") / "home").path)
    with open_db(home) as db:
        tx = db.transaction()
        tx.__enter__()
        for verb, n, text in statements:
            key = f"k{n}"
            if verb == "insert":
                db.execute("INSERT OR REPLACE INTO notes (id, agent_class, body) VALUES (?, ?, ?)",
                           (key, "ADMIN", text))
            elif verb == "update":
                db.execute("UPDATE notes SET body = ? WHERE id = ?", (text, key))
            elif verb == "bump":
                db.execute("UPDATE notes SET n = n + 1, score = n * 0.5 WHERE id = ?", (key,))
            elif verb == "delete":
                db.execute("DELETE FROM notes WHERE id = ?", (key,))
            elif verb == "savepoint_fails":
                with pytest.raises(RuntimeError), db.transaction():
                    db.execute("INSERT OR REPLACE INTO notes (id, agent_class, body)"
                               " VALUES (?, 'ADMIN', ?)", (key, text))
                    raise RuntimeError
            else:
                tx.__exit__(None, None, None)
                tx = db.transaction()
                tx.__enter__()
        tx.__exit__(None, None, None)
    before = table_dump(home.memory_db)
    rebuild(home)
    assert table_dump(home.memory_db) == before


def test_two_processes_writing_at_once_lose_nothing_and_rebuild_equal(home: HRMHome) -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from hrm.storage import Database\n"
        "db = Database(sys.argv[1]); db.migrate('test.notes', " + repr(NOTES) + ")\n"
        "for i in range(60):\n"
        "    with db.transaction():\n"
        "        db.execute('INSERT INTO notes (id, agent_class, body) VALUES (?, ?, ?)',\n"
        "                   (f'{sys.argv[2]}-{i}', 'ADMIN', 'x'))\n"
        "        db.execute('UPDATE notes SET n = n + 1 WHERE id = ?', (f'{sys.argv[2]}-0',))\n"
        "db.close()\n"
    )
    with open_db(home):
        pass
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(home.memory_db), name])
        for name in ("a", "b")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    from hrm.storage.home_verify import verify_home
    from hrm.storage.rebuild import rebuild

    with open_db(home) as db:
        counts = {r["id"]: r["n"] for r in db.execute("SELECT id, n FROM notes")}
    assert len(counts) == 120 and counts["a-0"] == 60 and counts["b-0"] == 60
    assert verify_home(home).ok
    before = table_dump(home.memory_db)
    rebuild(home)
    assert table_dump(home.memory_db) == before
