"""A stack's own database, and the move of its rows out of the home's shared one.

Every stack keeps its per-stack tables (canon, working sets, episodes' index, synthesis,
problems, commitments, stance, patterns and their outcomes, checkpoints) in a SQLite file of
its own inside its partition, ``HO2/ledger/<class>/memory.db`` (issue 31 item 7, D320). A
connection on that file can read nothing of another stack's, whatever SQL it runs: isolation
no longer depends on each query remembering ``agent_class = ?``. The home's ``memory.db`` keeps
what is not per stack (learnings, the artifact index, the ledger index). Each database journals
into a memory ledger of its own (D321).

Homes made before the split keep every stack's rows in the home's ``memory.db``. The first open
of a stack moves them (D322), for every stack the home database holds rows of, so no handle on
the home database can read a stack's rows afterwards:

1. copy: in one transaction of the stack's database, its rows (journaled tables only: derived
   ones are re-derived from their ledgers) and a ``stack_origin`` marker in phase ``copied``;
2. delete: in one transaction of the home's database, the stack's rows of every per-stack table;
3. done: the marker moves to ``done``.

Each step is journaled in its database's own ledger and is idempotent, so a crash anywhere
resumes at the next open without losing or duplicating a row a stack can see: a stack reads
only its own database, which holds the rows once from step 1 on. Once ``done``, an open reads
the marker and nothing of the home's database.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm._private import make_private_dirs
from hrm.errors import HRMError
from hrm.storage._journal_sql import DERIVED_TABLES, quote, read_shape
from hrm.storage.sqlite import Database, wrap_sqlite_error

if TYPE_CHECKING:
    from hrm.home import HRMHome

__all__ = [
    "ORIGIN_COMPONENT",
    "ORIGIN_MIGRATIONS",
    "STACK_PAGE_SIZE",
    "STACK_TABLES",
    "StackTable",
    "move_phase",
    "open_stack_db",
    "stack_components",
]

logger = logging.getLogger(__name__)

ORIGIN_COMPONENT = "storage.stack_db"
ORIGIN_MIGRATIONS = [
    "CREATE TABLE stack_origin (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " agent_class TEXT NOT NULL, phase TEXT NOT NULL CHECK (phase IN ('copied', 'done')),"
    " moved INTEGER NOT NULL, at TEXT NOT NULL);",
]
"""The marker of the move out of the home's database (journaled: a rebuild restores it)."""

_SHARED_SCOPE = "*"
"""`hrm.learning.patterns.SHARED_SCOPE`: patterns every stack reads (copied, not moved)."""


@dataclass(frozen=True, slots=True)
class StackTable:
    """A per-stack table: how one stack's rows are selected in the home's database."""

    name: str
    owned: str
    """SQL condition on one bound agent class: the rows the move deletes from the home."""
    copied: str = ""
    """SQL condition of the rows the move copies, when wider than `owned` (shared patterns)."""

    @property
    def copy_where(self) -> str:
        return self.copied or self.owned


_BY_CLASS = "agent_class = ?"
_BY_SCOPE = "scope = ?"
_OWN_PATTERNS = "pattern_id IN (SELECT id FROM learning_patterns WHERE scope = ?)"

STACK_TABLES: tuple[StackTable, ...] = (
    StackTable("shared_references", _BY_CLASS),
    StackTable("working_sets", _BY_CLASS),
    StackTable("episodes", _BY_CLASS),
    StackTable("episode_tags", _BY_CLASS),
    StackTable("episode_index_state", _BY_CLASS),
    StackTable("synthesis_patterns", _BY_CLASS),
    StackTable("synthesis_evidence", _BY_CLASS),
    StackTable("synthesis_weakenings", _BY_CLASS),
    StackTable("problems", _BY_CLASS),
    StackTable("commitments", _BY_CLASS),
    StackTable("focus_stance", _BY_CLASS),
    # Evidence first: its rows are selected through the patterns the move deletes after it.
    StackTable("learning_pattern_evidence", _OWN_PATTERNS,
               "pattern_id IN (SELECT id FROM learning_patterns WHERE scope IN (?, '*'))"),
    StackTable("learning_patterns", _BY_SCOPE, "scope IN (?, '*')"),
    StackTable("learning_outcomes", _BY_SCOPE),
    StackTable("learning_consolidations", _BY_SCOPE),
    StackTable("stack_budget", _BY_CLASS),
    StackTable("stack_recovery", _BY_CLASS),
    StackTable("stack_recovery_sessions", _BY_CLASS),
)
"""Every table whose rows belong to one stack (the inventory in docs/architecture.md): a
table with an ``agent_class`` (or a pattern's ``scope``) column, and the evidence of patterns."""

_HOME_ONLY_COMPONENTS = frozenset({"continuity.learnings", "storage.ledger_index"})

STACK_PAGE_SIZE = 1024
"""The page size a stack's database is made with (D405): a quarter of SQLite's default.

A turn changes a few small rows in some eight places of it (an outcome and its two indexes,
a pattern and its evidence, the journal's cursor, Focus's stance count), and the write-ahead
log takes each changed page whole: with 1 KiB pages a turn writes ~29 KB to disk instead of
~50 KB, for the same CPU. The home's database, which holds the learnings and their full-text
index (large rows, long scans), keeps the default. A stack database made before keeps its
size; `hrm rebuild` makes it anew with this one."""


def stack_components() -> list[tuple[str, Sequence[str]]]:
    """The migrations a stack's database runs: every per-stack component's, and the marker's."""
    from hrm.storage.rebuild import component_migrations

    return [(c, m) for c, m in component_migrations() if c not in _HOME_ONLY_COMPONENTS]


def open_stack_db(home: HRMHome, agent_class: str) -> Database:
    """The stack's own database, opened (created 0600 in its 0700 partition when new).

    The caller owns it (`Database.close`). The first open on a home whose ``memory.db`` still
    holds per-stack rows moves them (every stack's) into the stacks' own databases first.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for a bad agent class; the database's own errors.
    """
    path = home.stack_memory_db(agent_class)
    _refuse_links(path, agent_class)
    make_private_dirs(path.parent)
    db = Database(path, page_size=STACK_PAGE_SIZE)
    try:
        db.migrate(ORIGIN_COMPONENT, ORIGIN_MIGRATIONS)
        if move_phase(db) != "done":
            _move_home_rows(home, db, agent_class)
    except BaseException:
        db.close()
        raise
    return db


def _refuse_links(path: Path, agent_class: str) -> None:
    """A stack's database reached through a link could be another stack's: refused here too,
    for the readers that open it without building the stack (`create_stack` guards and
    records it first, `hrm.stacks.visibility.guard_partitions`)."""
    for candidate in (path.parent, path):
        linked = candidate.is_symlink() or (
            candidate.is_file() and candidate.stat().st_nlink > 1
        )
        if linked:
            raise HRMError.visibility_denied(
                agent_class, str(candidate), "a stack's database is never opened through a link"
            )


def move_phase(db: Database) -> str | None:
    """Where the move out of the home's database stands in this stack database: ``None``
    (not begun), ``copied`` or ``done``."""
    row = db.one("SELECT phase FROM stack_origin WHERE id = 1")
    return None if row is None else str(row["phase"])


# ── the move ─────────────────────────────────────────────────────────────────


def _move_home_rows(home: HRMHome, db: Database, agent_class: str) -> None:
    """Move this stack's rows and every other stack's still in the home's database."""
    from hrm.home import parse_agent_class

    held = _classes_in_home(home)
    for other in sorted(held - {agent_class, _SHARED_SCOPE}):
        try:
            parse_agent_class(other)
        except HRMError:
            logger.warning("home database holds rows of %r, not an agent class: left", other)
            continue
        path = home.stack_memory_db(other)
        _refuse_links(path, other)
        make_private_dirs(path.parent)
        with Database(path, page_size=STACK_PAGE_SIZE) as other_db:
            other_db.migrate(ORIGIN_COMPONENT, ORIGIN_MIGRATIONS)
            if move_phase(other_db) != "done":
                _move_one(home, other_db, other, held=True)
    _move_one(home, db, agent_class, held=agent_class in held or _SHARED_SCOPE in held)


def _move_one(home: HRMHome, db: Database, agent_class: str, *, held: bool) -> None:
    """The three steps for one stack; each idempotent, so an interrupted move resumes.

    `held`: the home's database holds rows of this stack (or shared patterns to copy); when
    it does not (a new stack), the marker is written ``done`` and the home is not touched.
    """
    if not held and move_phase(db) is None:
        with db.transaction():
            _mark(db, agent_class, "done", 0)
        return
    if move_phase(db) is None:
        for component, migrations in stack_components():
            db.migrate(component, migrations)
        _copy(home, db, agent_class)
    _delete_from_home(home, agent_class)
    with db.transaction():
        db.execute("UPDATE stack_origin SET phase = 'done' WHERE id = 1")


def _mark(db: Database, agent_class: str, phase: str, moved: int) -> None:
    db.execute(
        "INSERT OR IGNORE INTO stack_origin (id, agent_class, phase, moved, at)"
        " VALUES (1, ?, ?, ?, ?)",
        (agent_class, phase, moved, datetime.now(UTC).isoformat()),
    )


def _copy(home: HRMHome, db: Database, agent_class: str) -> None:
    """Step 1: the stack's journaled rows and the marker, in one transaction."""
    rows = _read_home_rows(home, agent_class)
    with db.transaction() as conn:
        if move_phase(db) is not None:  # another process copied them while we read
            return
        conn.execute("PRAGMA defer_foreign_keys = ON")
        moved = 0
        for table, (columns, values) in rows.items():
            names = ", ".join(quote(c) for c in columns)
            marks = ", ".join("?" for _ in columns)
            conn.executemany(
                f"INSERT OR IGNORE INTO {quote(table)} ({names}) VALUES ({marks})", values
            )
            moved += len(values)
        _mark(db, agent_class, "copied", moved)
        logger.info("copied %s rows of %s into %s", moved, agent_class, db.path)


def _read_home_rows(
    home: HRMHome, agent_class: str
) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """The stack's rows of every journaled per-stack table in the home's database, with
    their rowids (queries order by them), read in one transaction that first applies what
    the home's memory ledger holds beyond it."""
    if not home.memory_db.is_file():
        return {}
    with Database(home.memory_db) as hdb:
        _cover(hdb)
        return _select_rows(hdb, agent_class)


def _cover(hdb: Database) -> None:
    """Have the home database's journal cover every table it holds (exporting a table it
    never covered, as any first open does), so the delete of step 2 is journaled too."""
    if hdb.journal is not None:
        hdb.journal.ensure_triggers()


def _select_rows(
    hdb: Database, agent_class: str
) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    found: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
    with hdb.transaction() as conn:
        present = _tables(conn)
        for table in STACK_TABLES:
            if table.name not in present or table.name in DERIVED_TABLES:
                continue
            shape = read_shape(conn, table.name)
            columns = (["rowid"] if shape.has_rowid else []) + list(shape.columns)
            select = ", ".join(quote(c) for c in columns)
            values = [
                tuple(r) for r in conn.execute(
                    f"SELECT {select} FROM {quote(table.name)} WHERE {table.copy_where}",
                    (agent_class,),
                )
            ]
            if values:
                found[table.name] = (columns, values)
    return found


def _delete_from_home(home: HRMHome, agent_class: str) -> None:
    """Step 2: the stack's rows leave the home's database (journaled in its ledger)."""
    if not home.memory_db.is_file():
        return
    with Database(home.memory_db) as hdb:
        _cover(hdb)
        _delete_rows(hdb, agent_class)


def _delete_rows(hdb: Database, agent_class: str) -> None:
    with hdb.transaction() as conn:
        present = _tables(conn)
        for table in STACK_TABLES:
            if table.name in present:
                conn.execute(f"DELETE FROM {quote(table.name)} WHERE {table.owned}",
                             (agent_class,))


def _classes_in_home(home: HRMHome) -> set[str]:
    """The agent classes (and pattern scopes) the home's database holds per-stack rows of."""
    if not home.memory_db.is_file():
        return set()
    found: set[str] = set()
    conn = sqlite3.connect(f"file:{Path(home.memory_db)}?mode=ro", uri=True)
    try:
        present = _tables(conn)
        for table in STACK_TABLES:
            column = "scope" if table.owned == _BY_SCOPE else "agent_class"
            if table.name in present and table.owned in (_BY_CLASS, _BY_SCOPE):
                found.update(
                    str(r[0]) for r in conn.execute(
                        f"SELECT DISTINCT {column} FROM {quote(table.name)}"
                    )
                )
    except sqlite3.Error as exc:
        # Not "holds nothing": a stack marked done over rows it could not read would lose
        # them to the next rebuild of the home's database. Repair first (`hrm ledger reindex`).
        raise wrap_sqlite_error(exc, home.memory_db) from exc
    finally:
        conn.close()
    return found


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
