"""A stack's own database, and the move of a home's old rows into it (D320, D322).

The home is one written by the code before the split (commit 44865ee, see
`tests/fixtures/storage/make_home_before_stack_dbs.py`): three stacks' rows in one memory.db.
"""

from __future__ import annotations

import shutil
import sqlite3
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm import HRM
from hrm.home import HRMHome, initialize
from hrm.storage import stack_db
from hrm.storage._journal_sql import DERIVED_TABLES
from hrm.storage.home_verify import verify_home
from hrm.storage.journal import is_stack_database, memory_ledger_path
from hrm.storage.rebuild import rebuild, table_dump
from hrm.storage.stack_db import STACK_PAGE_SIZE, STACK_TABLES, move_phase, open_stack_db

FIXTURE = Path(__file__).parents[1] / "fixtures" / "storage" / "home_before_stack_dbs.tar.gz"
STACKS = ("ADMIN", "RESIDENT:b", "RESIDENT:c")
B = "RESIDENT:b"


class Crash(BaseException):
    """A process dying at a chosen point (nothing catches it, as nothing survives a kill)."""


@pytest.fixture
def old_home(tmp_path: Path) -> HRMHome:
    root = tmp_path / "home"
    root.mkdir(mode=0o700)
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(root, filter="data")
    return HRMHome(root)


Rows = dict[str, set[tuple[Any, ...]]]


def rows_of(path: Path, agent_class: str | None) -> Rows:
    """A stack's rows (with rowids) of every journaled per-stack table in the database at
    `path`; `agent_class` None: every row of those tables."""
    found: Rows = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        for table in STACK_TABLES:
            if table.name not in present or table.name in DERIVED_TABLES:
                continue
            where, params = (table.owned, (agent_class,)) if agent_class else ("1", ())
            rows = conn.execute(
                f'SELECT rowid, * FROM "{table.name}" WHERE {where}', params
            ).fetchall()
            if rows:
                found[table.name] = set(rows)
    return found


def test_the_fixture_holds_every_stacks_rows_in_the_home_database(old_home: HRMHome) -> None:
    for agent_class in STACKS:
        rows = rows_of(old_home.memory_db, agent_class)
        assert {"shared_references", "problems", "learning_outcomes"} <= set(rows), agent_class
    assert not any(old_home.stack_memory_db(c).exists() for c in STACKS)


def test_the_first_open_moves_every_stacks_rows_out_of_the_home(old_home: HRMHome) -> None:
    before = {c: rows_of(old_home.memory_db, c) for c in STACKS}
    learnings = table_dump(old_home.memory_db)["learnings"]
    with HRM.open(old_home.root, B, "offline") as hrm:
        canon = dict(hrm.stack.canon())
        assert any("bravo" in key for key in canon)
        assert not any("charlie" in key for key in canon)
        assert hrm.turn("What should we check next about the bravo migration?").response
    for agent_class in STACKS:
        moved = rows_of(old_home.stack_memory_db(agent_class), None)
        for table, rows in before[agent_class].items():
            if agent_class == B:  # its turn moved on: the same rows by rowid
                assert {r[0] for r in rows} <= {r[0] for r in moved[table]}, table
            else:  # the others were moved, not opened: the same rows exactly
                assert rows == moved[table], (agent_class, table)
    assert rows_of(old_home.memory_db, None) == {}  # no stack's rows left in the home's
    assert table_dump(old_home.memory_db)["learnings"] == learnings  # the home's stay
    report = verify_home(old_home)
    assert report.ok, [p.describe() for p in report.problems]


def test_a_moved_home_rebuilds_equal_database_by_database(old_home: HRMHome) -> None:
    with HRM.open(old_home.root, B, "offline"):
        pass
    before = {p: table_dump(p) for p in old_home.memory_databases()}
    assert len(before) == 4
    rebuild(old_home)
    assert {p: table_dump(p) for p in old_home.memory_databases()} == before


def test_once_done_an_open_reads_nothing_of_the_home_database(
    old_home: HRMHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_stack_db(old_home, B).close()

    def no_scan(*_: object, **__: object) -> None:
        raise AssertionError("the home database was read after the move was done")

    monkeypatch.setattr(stack_db, "_classes_in_home", no_scan)
    monkeypatch.setattr(stack_db, "_read_home_rows", no_scan)
    monkeypatch.setattr(stack_db, "_delete_from_home", no_scan)
    for agent_class in STACKS:  # the others were moved by the first open too
        with open_stack_db(old_home, agent_class) as db:
            assert move_phase(db) == "done"


def test_a_new_stack_on_a_new_home_never_makes_the_home_database(tmp_path: Path) -> None:
    home = HRMHome(initialize(tmp_path / "home").path)
    with open_stack_db(home, B) as db:
        assert move_phase(db) == "done"
    assert not home.memory_db.exists()


def page_size(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


def test_a_stack_database_is_made_with_small_pages_and_the_home_keeps_the_default(
    tmp_path: Path,
) -> None:
    """A turn rewrites small rows in a few places of the stack's database; the write-ahead
    log takes each changed page whole, so its pages are small (D405)."""
    with HRM.open(tmp_path / "home", B, "offline") as hrm:
        hrm.turn("Remember that the staging database is db3")
        hrm.turn("How do I rename a git branch?")
    home = HRMHome(tmp_path / "home")
    assert page_size(home.stack_memory_db(B)) == STACK_PAGE_SIZE == 1024
    with open_stack_db(home, "RESIDENT:c") as db:
        assert move_phase(db) == "done"
    assert page_size(home.stack_memory_db("RESIDENT:c")) == 1024
    with sqlite3.connect(tmp_path / "home.db") as conn:  # what the home's database is made with
        conn.execute("CREATE TABLE t (x)")
        default = int(conn.execute("PRAGMA page_size").fetchone()[0])
    if home.memory_db.exists():
        assert page_size(home.memory_db) == default


def test_a_stack_database_made_with_large_pages_keeps_them_until_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_db, "STACK_PAGE_SIZE", 4096)
    with HRM.open(tmp_path / "home", B, "offline") as hrm:
        hrm.turn("Remember that the staging database is db3")
    monkeypatch.undo()
    home = HRMHome(tmp_path / "home")
    path = home.stack_memory_db(B)
    assert page_size(path) == 4096
    with HRM.open(home.root, B, "offline") as hrm:  # opens, and turns go on, at its own size
        hrm.turn("How do I rename a git branch?")
    assert page_size(path) == 4096
    before = table_dump(path)
    rebuild(home)
    assert page_size(path) == 1024
    assert table_dump(path) == before


def _crash_in_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stack_db._mark

    def mark(db: Any, agent_class: str, phase: str, moved: int) -> None:
        if phase == "copied" and agent_class == B:  # its rows inserted, not committed
            raise Crash
        real(db, agent_class, phase, moved)

    monkeypatch.setattr(stack_db, "_mark", mark)


def _crash_before_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stack_db._delete_from_home

    def delete(home: HRMHome, agent_class: str) -> None:
        if agent_class == B:
            raise Crash
        real(home, agent_class)

    monkeypatch.setattr(stack_db, "_delete_from_home", delete)


def _crash_inside_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stack_db._delete_rows

    def delete_rows(hdb: Any, agent_class: str) -> None:
        with hdb.transaction():
            real(hdb, agent_class)  # nested: a savepoint; the crash rolls all of it back
            if agent_class == B:
                raise Crash

    monkeypatch.setattr(stack_db, "_delete_rows", delete_rows)


def _crash_before_done(monkeypatch: pytest.MonkeyPatch) -> None:
    real = stack_db._delete_from_home

    def delete(home: HRMHome, agent_class: str) -> None:
        real(home, agent_class)
        if agent_class == B:
            raise Crash

    monkeypatch.setattr(stack_db, "_delete_from_home", delete)


@pytest.mark.parametrize(
    ("crash", "copied", "deleted"),
    [
        pytest.param(_crash_in_copy, False, False, id="inside-the-copy"),
        pytest.param(_crash_before_delete, True, False, id="after-the-copy"),
        pytest.param(_crash_inside_delete, True, False, id="inside-the-delete"),
        pytest.param(_crash_before_done, True, True, id="before-done"),
    ],
)
def test_an_interrupted_move_resumes_and_loses_or_doubles_nothing(
    old_home: HRMHome, monkeypatch: pytest.MonkeyPatch, crash: Any, copied: bool,
    deleted: bool,
) -> None:
    before = rows_of(old_home.memory_db, B)
    with monkeypatch.context() as patch:
        crash(patch)
        with pytest.raises(Crash):
            open_stack_db(old_home, "RESIDENT:zed")  # any stack's first open moves b's
    partial = old_home.stack_memory_db(B)
    assert (rows_of(partial, None) if partial.exists() else {}) == (before if copied else {})
    assert rows_of(old_home.memory_db, B) == ({} if deleted else before)
    with open_stack_db(old_home, B) as db:
        assert move_phase(db) == "done"
    assert rows_of(old_home.stack_memory_db(B), None) == before
    assert rows_of(old_home.memory_db, None) == {}
    assert verify_home(old_home).ok


def test_a_copy_in_the_ledger_but_not_in_the_database_is_applied_not_repeated(
    old_home: HRMHome, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The process died after the copy's ledger append, before SQLite committed it: the
    database is as it was just before the copy, its ledger holds the copy."""
    before = rows_of(old_home.memory_db, B)
    path = old_home.stack_memory_db(B)
    saved = tmp_path / "before-copy.db"
    real_copy = stack_db._copy

    def copy(home: HRMHome, db: Any, agent_class: str) -> None:
        if agent_class == B:
            with sqlite3.connect(saved) as target:
                db._conn.backup(target)  # the database as the crash will leave it
        real_copy(home, db, agent_class)

    with monkeypatch.context() as patch:
        patch.setattr(stack_db, "_copy", copy)
        _crash_before_delete(patch)
        with pytest.raises(Crash):
            open_stack_db(old_home, B)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(saved, path)
    path.chmod(0o600)
    assert rows_of(path, None) == {}
    with open_stack_db(old_home, B) as db:
        assert move_phase(db) == "done"
    assert rows_of(path, None) == before
    assert rows_of(old_home.memory_db, None) == {}


@given(
    name=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,30}", fullmatch=True).filter(
        lambda n: ".." not in n
    ),
    root=st.lists(st.sampled_from(["h", "HO2", "ledger", "home", "x"]), min_size=1, max_size=4),
)
def test_every_database_finds_its_own_memory_ledger(name: str, root: list[str]) -> None:
    """A stack's database (and a rebuild's file beside it) journals into the ledger beside it;
    the home's into HOT/ledger, wherever the home lies."""
    home = HRMHome(Path("/", *root))
    for agent_class in ("ADMIN", f"RESIDENT:{name}"):
        database = home.stack_memory_db(agent_class)
        assert is_stack_database(database)
        assert memory_ledger_path(database) == home.stack_memory_ledger(agent_class)
        building = database.with_name("memory.db.rebuilding-20261127T000000Z")
        assert memory_ledger_path(building) == home.stack_memory_ledger(agent_class)
    assert not is_stack_database(home.memory_db)
    assert memory_ledger_path(home.memory_db) == home.root / "HOT" / "ledger" / "memory.jsonl"
