"""The shared SQLite handle: migrations, nested transactions, error mapping."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.storage.sqlite import Database, wrap_sqlite_error

MIGRATIONS = [
    "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);",
    "ALTER TABLE t ADD COLUMN w TEXT;\nCREATE TRIGGER t_ai AFTER INSERT ON t BEGIN\n  UPDATE t SET w = 'x' WHERE id = new.id;\nEND;",
]


def test_migrations_apply_once_in_order(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.db")
    assert db.migrate("test", MIGRATIONS) == 2
    assert db.migrate("test", MIGRATIONS) == 0
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('a')")
    assert db.one("SELECT w FROM t")[0] == "x"
    db.close()
    again = Database(tmp_path / "m.db")
    assert again.migrate("test", [*MIGRATIONS, "CREATE INDEX t_v ON t(v);"]) == 1


def test_failed_migration_leaves_nothing_half_applied(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.db")
    with pytest.raises(HRMError):
        db.migrate("bad", ["CREATE TABLE a (x);\nCREATE TABLE a (x);"])
    assert db.one("SELECT name FROM sqlite_master WHERE name = 'a'") is None
    assert db.execute("SELECT * FROM schema_migrations WHERE component = 'bad'") == []


def test_nested_transaction_rolls_back_only_the_savepoint(tmp_path: Path) -> None:
    db = Database(tmp_path / "n.db")
    db.migrate("test", MIGRATIONS[:1])
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('outer')")
        with pytest.raises(ValueError), db.transaction():
            db.execute("INSERT INTO t (v) VALUES ('inner')")
            raise ValueError("boom")
    assert [r[0] for r in db.execute("SELECT v FROM t")] == ["outer"]


def test_a_failed_transaction_rolls_back_and_frees_the_handle_for_other_threads(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "r.db", timeout_ms=50)
    db.migrate("test", MIGRATIONS[:1])
    with pytest.raises(KeyError), db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('lost')")
        raise KeyError("boom")
    blocker = sqlite3.connect(tmp_path / "r.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock: BEGIN must fail…
    with pytest.raises(HRMError) as info, db.transaction():
        pass
    assert info.value.code is ErrorCode.DB_LOCKED
    blocker.execute("ROLLBACK")
    done = threading.Event()

    def write() -> None:  # …and neither failure may leave the handle's lock held
        with db.transaction():
            db.execute("INSERT INTO t (v) VALUES ('kept')")
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert done.wait(5)
    assert [r[0] for r in db.execute("SELECT v FROM t")] == ["kept"]


def test_errors_are_mapped(tmp_path: Path) -> None:
    db = Database(tmp_path / "e.db")
    db.migrate("test", MIGRATIONS[:1])
    with pytest.raises(HRMError) as info, db.transaction():
        db.execute("INSERT INTO t (v) VALUES (NULL)")
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.context["sqlite_error"] == "SQLITE_CONSTRAINT_NOTNULL"


def _raised(action: Callable[[], object]) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as info:
        action()
    return info.value


def test_a_real_lock_maps_to_db_locked_and_is_retryable(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (v)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, timeout=0, isolation_level=None)
    error = wrap_sqlite_error(_raised(lambda: waiter.execute("BEGIN IMMEDIATE")), path)
    assert (error.code, error.recoverable) == (ErrorCode.DB_LOCKED, True)
    assert str(path) in error.message
    holder.close()
    waiter.close()


def test_real_file_errors_map_by_code(tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_bytes(b"not a database " * 300)
    damaged = wrap_sqlite_error(
        _raised(lambda: sqlite3.connect(not_a_db).execute("SELECT * FROM sqlite_master")),
        not_a_db,
    )
    assert damaged.code is ErrorCode.DB_UNAVAILABLE and "reindex" in damaged.message
    missing = tmp_path / "no-such-dir" / "x.db"
    cannot_open = wrap_sqlite_error(_raised(lambda: sqlite3.connect(missing)), missing)
    assert cannot_open.code is ErrorCode.PERMISSION_DENIED
    sqlite3.connect(tmp_path / "ro.db").execute("CREATE TABLE t (v)")
    read_only = sqlite3.connect(f"file:{tmp_path / 'ro.db'}?mode=ro", uri=True)
    denied = wrap_sqlite_error(_raised(lambda: read_only.execute("INSERT INTO t VALUES (1)")), "r")
    assert denied.code is ErrorCode.PERMISSION_DENIED


def _coded(code: int | None, message: str = "some text") -> sqlite3.Error:
    error = sqlite3.OperationalError(message)
    if code is not None:
        error.sqlite_errorcode = code
        error.sqlite_errorname = f"code {code}"
    return error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(_coded(sqlite3.SQLITE_BUSY), ErrorCode.DB_LOCKED, id="busy"),
        pytest.param(_coded(sqlite3.SQLITE_LOCKED), ErrorCode.DB_LOCKED, id="table-locked"),
        pytest.param(_coded(517), ErrorCode.DB_LOCKED, id="busy-snapshot-extended"),
        pytest.param(_coded(sqlite3.SQLITE_FULL), ErrorCode.DISK_FULL, id="full"),
        pytest.param(_coded(sqlite3.SQLITE_READONLY), ErrorCode.PERMISSION_DENIED, id="readonly"),
        pytest.param(_coded(sqlite3.SQLITE_CORRUPT), ErrorCode.DB_UNAVAILABLE, id="corrupt"),
        pytest.param(_coded(sqlite3.SQLITE_IOERR), ErrorCode.DB_UNAVAILABLE, id="ioerr"),
        pytest.param(_coded(266), ErrorCode.DB_UNAVAILABLE, id="ioerr-read-extended"),
        pytest.param(_coded(sqlite3.SQLITE_ERROR), ErrorCode.INTERNAL_ERROR, id="generic"),
        # The text alone decides nothing: an error SQLite did not raise has no code.
        pytest.param(_coded(None, "database is locked"), ErrorCode.INTERNAL_ERROR, id="no-code"),
    ],
)
def test_errors_are_classified_by_sqlite_code_not_text(
    error: sqlite3.Error, expected: ErrorCode
) -> None:
    assert wrap_sqlite_error(error, "x.db").code is expected


def test_threads_share_one_handle_safely(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db")
    db.migrate("test", MIGRATIONS[:1])

    def work(n: int) -> None:
        for i in range(50):
            with db.transaction():
                db.execute("INSERT INTO t (v) VALUES (?)", (f"{n}-{i}",))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.one("SELECT count(*) FROM t")[0] == 200


def test_fts5_is_available() -> None:
    assert Database(":memory:").has_fts5()


def test_cached_reads_see_own_writes_other_connections_and_rollbacks(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.db")
    other = Database(tmp_path / "c.db")
    db.migrate("test", MIGRATIONS[:1])
    loads: list[int] = []

    def count() -> int:
        loads.append(1)
        return int(db.one("SELECT count(*) FROM t")[0])

    assert db.cached("n", count) == 0
    assert db.cached("n", count) == 0 and len(loads) == 1  # reused while nothing changed
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('a')")
    assert db.cached("n", count) == 1  # own write
    with other.transaction():
        other.execute("INSERT INTO t (v) VALUES ('b')")
    assert db.cached("n", count) == 2  # another connection's commit
    with pytest.raises(ValueError), db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('c')")
        assert db.cached("n", count) == 3  # inside a transaction: never cached
        raise ValueError
    assert db.cached("n", count) == 2  # the rolled-back read did not linger


def test_a_pinned_block_checks_other_connections_once_and_transactions_stay_live(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "p.db")
    other = Database(tmp_path / "p.db")
    db.migrate("test", MIGRATIONS[:1])

    def count() -> int:
        return int(db.one("SELECT count(*) FROM t")[0])

    with db.pinned():
        assert db.cached("n", count) == 0
        with other.transaction():
            other.execute("INSERT INTO t (v) VALUES ('b')")
        assert db.cached("n", count) == 0  # the view the block began with
        with db.pinned():  # nested: the outer pin stands
            assert db.cached("n", count) == 0
        with db.transaction():
            assert db.cached("n", count) == 1  # a transaction always reads live
            db.execute("INSERT INTO t (v) VALUES ('a')")
        assert db.cached("n", count) == 2  # its own write invalidates, as always
        with other.transaction():
            other.execute("INSERT INTO t (v) VALUES ('c')")
        pinned_version = db.data_version()
    assert db.data_version() != pinned_version  # outside, the other commit is seen
    assert db.cached("n", count) == 3


def test_a_table_scoped_cache_survives_writes_to_other_tables_only(tmp_path: Path) -> None:
    db = Database(tmp_path / "s.db")
    other = Database(tmp_path / "s.db")
    db.migrate("test", [MIGRATIONS[0], "CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT);"])
    loads: list[int] = []

    def count() -> int:
        loads.append(1)
        return int(db.one("SELECT count(*) FROM t")[0])

    def cached() -> int:
        return db.cached("t", count, table="t")

    assert cached() == 0
    with db.transaction():
        db.execute("INSERT INTO u (v) VALUES ('x')")
        db.executemany("UPDATE u SET v = ? WHERE id = ?", [("y", 1)])
    assert cached() == 0 and len(loads) == 1  # writes to u do not touch t's reads
    for write in (
        lambda: db.execute("INSERT INTO t (v) VALUES ('a')"),
        lambda: db.executemany("INSERT OR REPLACE INTO t (id, v) VALUES (?, ?)", [(9, "b")]),
        lambda: db.one("DELETE FROM t WHERE v = 'a' RETURNING id"),
        lambda: db.execute("WITH w AS (SELECT 1) INSERT INTO t (v) SELECT 'c' FROM w"),  # not parsed
    ):
        cached()
        reads = len(loads)
        with db.transaction():
            write()
        assert cached() == int(db.one("SELECT count(*) FROM t")[0])
        assert len(loads) == reads + 1  # every kind of write to t was noticed
    reads = len(loads)
    assert cached() == cached() and len(loads) == reads
    with other.transaction():  # another connection's commit, to any table
        other.execute("INSERT INTO t (v) VALUES ('d')")
    assert cached() == int(db.one("SELECT count(*) FROM t")[0]) and len(loads) == reads + 1
    with pytest.raises(ValueError), db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('rolled back')")
        raise ValueError
    assert cached() == int(db.one("SELECT count(*) FROM t")[0])
    db.migrate("more", ["INSERT INTO t (v) VALUES ('from a migration');"])
    assert cached() == int(db.one("SELECT count(*) FROM t")[0])


def test_a_remembered_value_serves_after_commit_and_never_outlives_a_rollback(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "r.db")
    other = Database(tmp_path / "r.db")
    db.migrate("test", [MIGRATIONS[0], "CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT);"])
    loads: list[int] = []

    def count() -> int:
        loads.append(1)
        return int(db.one("SELECT count(*) FROM t")[0])

    def cached() -> int:
        return db.cached("n", count, table="t")

    def insert(value: str) -> int:
        db.execute("INSERT INTO t (v) VALUES (?)", (value,))
        return int(db.one("SELECT count(*) FROM t")[0])

    assert cached() == 0 and len(loads) == 1
    with db.transaction():
        db.remember("n", insert("a"), table="t")
        assert cached() == 1 and len(loads) == 1  # the staged value serves inside, too
        db.execute("INSERT INTO u (v) VALUES ('other table')")
    assert cached() == 1 and len(loads) == 1  # published at commit: no read needed

    with pytest.raises(ValueError), db.transaction():
        db.remember("n", insert("b"), table="t")
        raise ValueError
    assert cached() == 1 and len(loads) == 2  # rolled back: reloaded, not the staged 2

    with db.transaction():
        db.remember("n", insert("c"), table="t")
        with pytest.raises(ValueError), db.transaction():  # a savepoint rolls back
            raise ValueError
    assert cached() == 2 and len(loads) == 3  # anything staged before it is dropped too

    with db.transaction():
        db.remember("n", insert("d"), table="t")
        db.execute("INSERT INTO t (v) VALUES ('written after remembering')")
    assert cached() == 4 and len(loads) == 4  # a later write to t outdated the staged value

    db.remember("n", 999, table="t")  # outside a transaction: nothing to publish
    assert cached() == 4 and len(loads) == 4
    with db.transaction():
        db.remember("n", insert("e"), table="t")
    with other.transaction():
        other.execute("INSERT INTO t (v) VALUES ('another connection')")
    assert cached() == 6 and len(loads) == 5  # another connection's commit still reloads


@given(
    verb=st.sampled_from(
        ["INSERT INTO", "insert or replace into", "REPLACE INTO", "UPDATE", "update or ignore",
         "DELETE FROM"]
    ),
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
    quote=st.sampled_from(["", '"', "`"]),
    space=st.sampled_from([" ", "  ", "\n\t"]),
    rest=st.sampled_from([" (a) VALUES (?)", "(a) VALUES (?)", " SET a = 1", " WHERE 1", ""]),
)
def test_the_written_table_is_read_from_any_plain_write(
    verb: str, name: str, quote: str, space: str, rest: str
) -> None:
    from hrm.storage.sqlite import _written_table

    sql = f"{space}{verb}{space}{quote}{name}{quote}{rest}"
    assert _written_table(sql) == name.lower()
    assert _written_table(f"SELECT * FROM {name}") is None
    assert _written_table(f"UPDATE main.{name} SET a = 1") is None  # qualified: not guessed


def test_deferred_checkpoints_leave_commits_in_the_wal_until_checkpoint_runs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.db"
    db = Database(path)
    db.migrate("test", MIGRATIONS[:1])
    db.defer_checkpoints()
    before = path.stat().st_size
    for i in range(40):
        with db.transaction():
            db.execute("INSERT INTO t (v) VALUES (?)", ("x" * 3000 + str(i),))
    assert path.stat().st_size == before  # nothing copied into the database file yet
    assert not db.checkpoint(min_commits=1000)  # not enough commits yet: nothing to do
    assert db.checkpoint(min_commits=40)
    assert path.stat().st_size > before + 40 * 3000
    assert not db.checkpoint(min_commits=1)  # the count starts again
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('y')")
    assert db.checkpoint(min_commits=1)
    assert db.one("SELECT count(*) FROM t")[0] == 41
    db.close()
    assert Database(path).one("SELECT count(*) FROM t")[0] == 41


def test_checkpoint_is_a_no_op_unless_deferred(tmp_path: Path) -> None:
    db = Database(tmp_path / "n.db")
    db.migrate("test", MIGRATIONS[:1])
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('a')")
    assert not db.checkpoint(min_commits=0)
    memory = Database(":memory:")
    memory.defer_checkpoints()
    assert not memory.checkpoint(min_commits=0)


def _count(db: Database) -> int:
    return int(db.one("SELECT count(*) FROM t")[0])


def test_a_deferred_write_rides_with_the_next_transaction(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    db, other = Database(path), Database(path)
    db.migrate("test", [MIGRATIONS[0], "CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT);"])
    traced: list[str] = []
    db._conn.set_trace_callback(traced.append)

    def statements() -> list[str]:  # what ran, without the data_version checks
        return [s for s in traced if not s.startswith("PRAGMA")]

    with db.deferring():
        db.defer("INSERT INTO t (v) VALUES (?)", ("a",), table="t", leaves={"n": 1})
        assert db.has_deferred and statements() == []  # nothing ran
        assert db.cached("n", lambda: _count(db), table="t") == 1  # what the write will leave
        assert statements() == [] and _count(other) == 0  # still pending: unseen by others
        with db.transaction():
            db.execute("INSERT INTO u (v) VALUES ('the turn')")
        assert not db.has_deferred and _count(other) == 1  # in the same commit
    assert statements()[:2] == ["BEGIN IMMEDIATE", "INSERT INTO t (v) VALUES ('a')"]
    traced.clear()
    assert db.cached("n", lambda: _count(db), table="t") == 1 and statements() == []


def test_outside_a_deferring_block_a_deferred_write_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    db, other = Database(path), Database(path)
    db.migrate("test", MIGRATIONS[:1])
    db.defer("INSERT INTO t (v) VALUES (?)", ("a",), table="t", leaves={"n": 1})
    assert not db.has_deferred and _count(other) == 1
    with db.transaction():
        db.defer("INSERT INTO t (v) VALUES (?)", ("b",), table="t", leaves={"n": 2})
        assert not db.has_deferred
    assert _count(other) == 2 and db.cached("n", lambda: -1, table="t") == 2


def test_a_read_of_a_deferred_table_stores_the_write_first(tmp_path: Path) -> None:
    db = Database(tmp_path / "r.db")
    db.migrate("test", MIGRATIONS[:1])
    with db.deferring():
        db.defer("INSERT INTO t (v) VALUES (?)", ("a",), table="t")
        assert _count(db) == 1 and not db.has_deferred
        db.defer("INSERT INTO t (v) VALUES (?)", ("b",), table="t")
        assert db.cached("other key", lambda: _count(db), table="t") == 2  # no value left
        db.defer("INSERT INTO t (v) VALUES (?)", ("c",), table="t")
    assert not db.has_deferred and _count(Database(tmp_path / "r.db")) == 3  # the end stores it
    db._deferring += 1  # as if a block were open when the handle is closed
    db.defer("INSERT INTO t (v) VALUES (?)", ("d",), table="t")
    db.close()
    assert _count(Database(tmp_path / "r.db")) == 4


def test_deferred_writes_outlive_a_rollback_go_with_their_block_and_run_at_once_inside(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "b.db")
    db.migrate("test", MIGRATIONS[:1])
    with db.deferring():
        db.defer("INSERT INTO t (v) VALUES (?)", ("a",), table="t", leaves={"n": 1})
        with pytest.raises(ValueError), db.transaction():  # carried them, then rolled back
            raise ValueError
        assert db.has_deferred and db.cached("n", lambda: -1, table="t") == 1  # waiting again
        with db.transaction():
            pass
        assert not db.has_deferred and _count(db) == 1  # the next transaction stored them
        with db.transaction():
            db.defer("INSERT INTO t (v) VALUES (?)", ("b",), table="t", leaves={"n": 2})
            assert not db.has_deferred and _count(db) == 2
        db.defer("INSERT INTO t (v) VALUES (?)", ("c",), table="t", leaves={"n": 3})
        db.discard_deferred()
        assert not db.has_deferred and db.cached("n", lambda: _count(db), table="t") == 2
    with pytest.raises(KeyboardInterrupt), db.deferring():  # a turn that did not happen
        db.defer("INSERT INTO t (v) VALUES (?)", ("d",), table="t", leaves={"n": 3})
        raise KeyboardInterrupt
    assert not db.has_deferred and _count(db) == 2


def test_what_a_deferred_write_leaves_is_not_trusted_after_another_connection_commits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "o.db"
    db, other = Database(path), Database(path)
    db.migrate("test", MIGRATIONS[:1])
    with db.deferring():
        db.defer("INSERT INTO t (v) VALUES (?)", ("mine",), table="t", leaves={"n": 1})
        with other.transaction():
            other.execute("INSERT INTO t (v) VALUES ('theirs')")
    assert db.cached("n", lambda: _count(db), table="t") == 2  # read, not the stale 1


def test_a_joined_block_runs_without_a_savepoint_and_its_failure_fails_the_whole(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "j.db")
    db.migrate("test", MIGRATIONS[:1])
    traced: list[str] = []
    db._conn.set_trace_callback(traced.append)
    with db.transaction():
        db.execute("INSERT INTO t (v) VALUES ('outer')")
        with db.transaction(join=True):
            db.execute("INSERT INTO t (v) VALUES ('joined')")
    assert not [s for s in traced if s.startswith(("SAVEPOINT", "RELEASE"))]
    assert _count(db) == 2

    with pytest.raises(ValueError), db.transaction():  # the failure propagates: all goes
        db.execute("INSERT INTO t (v) VALUES ('outer')")
        with db.transaction(join=True):
            db.execute("INSERT INTO t (v) VALUES ('joined')")
            raise ValueError
    assert _count(db) == 2

    with pytest.raises(HRMError) as info, db.transaction():  # the caller goes on regardless
        db.execute("INSERT INTO t (v) VALUES ('outer')")
        with pytest.raises(ValueError), db.transaction(join=True):
            db.execute("INSERT INTO t (v) VALUES ('half')")
            raise ValueError
    assert "rolled back" in info.value.message and _count(db) == 2  # nothing committed in part
    with db.transaction(join=True):  # outermost: an ordinary transaction, not doomed
        db.execute("INSERT INTO t (v) VALUES ('after')")
    assert _count(db) == 3
