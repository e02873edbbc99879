"""The memory journal: every change to ``memory.db``'s tables is in the memory ledger first.

Ledgers are the truth and ``memory.db`` is a view (ARCHITECTURE §4), for every compartment:
learnings, canon and its versions, working sets, problems, commitments, stance, patterns and
their outcomes, synthesis. Rather than each store writing its own events, the database reports
its own changes: a trigger on each table calls back into the connection with the row a
statement left (or the key it deleted), and just before a transaction commits, the changes it
made — one row image per row, in the order each row last changed — are appended to the home's
memory ledger, ``HOT/ledger/memory.jsonl``, as one ``memory`` record. Only then does SQLite
commit, and only then is the write acknowledged. A write path another module adds tomorrow is
journaled the day it lands; a table nobody listed as derived is journaled by default (D180).

The ledger is the commit point, as a write-ahead log is: a crash after the append and before
SQLite's commit leaves a record the database has not applied. ``journal_cursor`` in the
database holds the seq, hash and size of the last record applied, and every write
transaction begins by comparing the ledger's size with it — one ``stat`` — and applying what
it is behind by before anything else is written. Nothing acknowledged is lost, and nothing the
ledger holds is missing from the database for longer than a crash. Should SQLite fail to
commit after the append (a full disk), the record is cut off again (`Ledger.retract`), since
the caller is told the write failed.

Old homes: the first time the journal covers a table that already holds rows, it writes a
``snapshot`` of the table into the ledger (replacing it whole), so a home made before the
journal existed becomes rebuildable. Migrations are journaled too (``schema`` operations), so
a rebuild can run one no registry knows.

One ledger per database file (D180, D321): a database's commit order is the one order its
journal must keep; a ledger of its own keeps it by construction, lets the crash check be one
``stat`` per transaction, and leaves nothing to merge on a rebuild. The home's ``memory.db``
journals into ``HOT/ledger/memory.jsonl``; each stack's own database (D320) into
``memory.jsonl`` beside it in the stack's partition. Row images still carry the agent class
as the rows do.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from hrm.errors import ErrorCode, HRMError
from hrm.storage._journal_sql import (
    Shape,
    apply_ops,
    gone_op,
    journaled_tables,
    put_op,
    quote,
    read_shape,
    set_op,
    trigger_names,
    trigger_sql,
)

TYPE_CHECKING = False  # `hrm hook` opens memory.db: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from hrm.storage.ledger import Ledger, LedgerRecord
    from hrm.storage.sqlite import Database

__all__ = [
    "MEMORY_KIND", "SNAPSHOT_KIND", "Journal", "is_stack_database", "memory_ledger_path"
]



def _logger() -> Any:
    import logging  # deferred: the prompt hook opens memory.db and must not import it

    return logging.getLogger(__name__)


MEMORY_KIND = "memory"
"""Ledger record kind of one committed transaction's row changes."""
SNAPSHOT_KIND = "snapshot"
"""Ledger record kind of rows exported from a table the journal did not cover before."""
_SNAPSHOT_CHUNK = 500
_TRIGGERS_VERSION = 3
"""Bumped when `trigger_sql` writes other triggers: every database then checks its own."""
_CURSOR_SQL = (
    "CREATE TABLE IF NOT EXISTS journal_cursor (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " seq INTEGER NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,"
    " offset INTEGER NOT NULL, schema_version INTEGER NOT NULL DEFAULT -1)"
)


_ABSENT = object()


def memory_ledger_path(database: Path) -> Path:
    """The memory ledger of the database at `database` (D321).

    A stack's own database lives in its HO2 partition (``HO2/ledger/<class>/memory.db``) and
    journals beside itself, into ``memory.jsonl`` there; any other (the home's ``memory.db``)
    journals into ``HOT/ledger/memory.jsonl`` of the directory holding it. Decided by where
    the file lies, so a database opened by path alone — a rebuild's new file beside the old,
    a reopened one — finds the same ledger as the stack that made it.
    """
    parent = database.parent
    if is_stack_database(database):
        return parent / "memory.jsonl"
    return parent / "HOT" / "ledger" / "memory.jsonl"


def is_stack_database(database: Path) -> bool:
    """Whether `database` lies in a stack's HO2 partition (``HO2/ledger/<class>/``, the
    partition named as `hrm.home.stack_dirname` names them)."""
    parent = database.parent
    name = parent.name
    return (
        (name == "ADMIN" or name.startswith("RESIDENT_"))
        and parent.parent.name == "ledger"
        and parent.parent.parent.name == "HO2"
    )


class _Cursor:
    __slots__ = ("hash", "offset", "seq", "size")

    def __init__(self, seq: int = 0, digest: str = "0" * 64, size: int = 0, offset: int = 0):
        self.seq, self.hash, self.size, self.offset = seq, digest, size, offset


class Journal:
    """The journal of one `Database` connection on a home's ``memory.db``.

    Not thread-safe by itself: every call comes from the `Database` holding its lock.
    """

    def __init__(self, db: Database, database: Path) -> None:
        self._db = db
        self._conn: sqlite3.Connection = db._conn
        self.path = memory_ledger_path(database)
        self._ledger: Ledger | None = None
        self._shapes: dict[str, Shape] = {}
        self._covered: dict[str, str] = {}
        """Table → its ``CREATE`` statement when `ensure_triggers` last covered it."""
        self._pending: dict[tuple[Any, ...], Any] = {}
        """Per row key, in the order rows last changed: the image of a new row (a tuple), None
        for a deleted row, or the columns an update changed (a dict)."""
        self._saved: list[dict[tuple[Any, ...], Any]] = []
        self._extra: list[tuple[str, dict[str, Any]]] = []
        """Records to append with the pending changes: snapshots, schema operations."""
        self._appended: list[LedgerRecord] = []
        self._appended_end = 0
        self._synced_size = -1
        """The ledger's size when this connection last knew the database to match it."""
        self._schema_checked = -2
        self.applying = False
        """Replaying the ledger: triggers fire but report nothing (it is already there)."""
        self.sync_each_commit = False
        """Sync the ledger after every commit (``ledger_durability: fsync``)."""
        self._conn.create_function("hrm_journal", -1, self._put)
        self._conn.create_function("hrm_journal_set", -1, self._set)
        self._conn.create_function("hrm_journal_gone", -1, self._gone)

    # ── trigger callbacks ──────────────────────────────────────────────────

    def _put(self, table: str, *values: Any) -> None:
        if self.applying:
            return
        shape = self._shape(table)
        key = (table, *(values[i] for i in shape.key_positions))
        pending = self._pending
        pending.pop(key, None)  # last-change order: a row moves to the end
        pending[key] = values

    def _set(self, table: str, *values: Any) -> None:
        """An update: `values` holds the new image (`Shape.image`), the old key, and the old
        values of the tracked columns."""
        if self.applying:
            return
        shape = self._shape(table)
        width = len(shape.image)
        new = values[:width]
        old_key = values[width : width + len(shape.key)]
        new_key = tuple(new[i] for i in shape.key_positions)
        if new_key != old_key:  # the key itself moved: gone under the old one, new under this
            self._gone(table, *old_key)
            self._put(table, *new)
            return
        old = values[width + len(shape.key) :]
        cols: dict[str, Any] = {}
        for j, position in enumerate(shape.tracked_positions):
            value, before = new[position], old[j]
            if value is not before and (value != before or type(value) is not type(before)):
                cols[shape.tracked[j]] = value
        if not cols:
            return  # an update that changed nothing is no change
        key = (table, *new_key)
        pending = self._pending
        found: Any = pending.pop(key, _ABSENT)
        if type(found) is tuple:  # a row this transaction made: keep its whole image
            pending[key] = new
        elif type(found) is dict:  # changed earlier in this transaction too (never mutated:
            pending[key] = {**found, **cols}  # a savepoint may hold the earlier dict)
        else:
            pending[key] = cols

    def _gone(self, table: str, *key_values: Any) -> None:
        if self.applying:
            return
        key = (table, *key_values)
        self._pending.pop(key, None)
        self._pending[key] = None

    def _shape(self, table: str) -> Shape:
        shape = self._shapes.get(table)
        if shape is None:
            shape = self._shapes[table] = read_shape(self._conn, table)
        return shape

    # ── transaction hooks (called by `Database` under its lock) ────────────

    def begin(self) -> None:
        """At the start of a write transaction: apply what the ledger holds beyond the cursor."""
        if self.applying:
            return
        size = self._ledger_size()
        if size == self._synced_size:
            return
        cursor = self._read_cursor()
        if cursor.size == size:
            self._synced_size = size
            return
        self._catch_up(cursor)

    def savepoint(self) -> None:
        """A nested savepoint opened: remember the changes so far."""
        self._saved.append(dict(self._pending))

    def release(self) -> None:
        """The innermost savepoint was released: its changes stay."""
        if self._saved:
            self._saved.pop()

    def rollback_to(self) -> None:
        """The innermost savepoint rolled back: forget the changes made inside it."""
        if self._saved:
            self._pending = self._saved.pop()

    def before_commit(self) -> None:
        """Append the transaction's changes to the ledger (SQLite commits right after)."""
        if self.applying:  # replaying what the ledger already holds
            self._pending.clear()
            self._extra.clear()
            return
        if not self._pending and not self._extra:
            return
        items = self._extra
        self._extra = []
        if self._pending:
            items.append((MEMORY_KIND, {"ops": self._ops()}))
        scrubbed = [op for _, data in items for op in _scrub_ops(data.get("ops", ()))]
        ledger = self._open_ledger()
        records = ledger.append_many(items, scrubbed=True)
        self._appended = records
        self._appended_end = ledger.appended_end
        try:
            if scrubbed:
                self._write_back(scrubbed)
            self._write_cursor(records[-1], self._appended_end)
        except BaseException:
            self._retract()
            raise

    def after_commit(self) -> None:
        """SQLite committed: the appended records are applied."""
        if self._appended:
            self._appended = []
            self._synced_size = self._appended_end
            if self.sync_each_commit and self._ledger is not None:
                self._ledger.commit()

    def commit_failed(self) -> None:
        """SQLite could not commit after the append: take the records back."""
        self._retract()
        self._pending.clear()

    def rolled_back(self) -> None:
        """The transaction rolled back: nothing it changed is journaled."""
        self._pending.clear()
        self._saved.clear()
        self._extra.clear()
        if self._appended:
            self._retract()

    def _retract(self) -> None:
        records, self._appended = self._appended, []
        if records and self._ledger is not None and not self._ledger.retract(records):
            # Only a commit racing this one could have synced them; they are then applied
            # by the next transaction's catch-up, as after a crash.
            _logger().warning("could not take back memory ledger records %s", records[0].seq)
        self._synced_size = -1

    def note_schema(self, component: str, version: int, script: str) -> None:
        """Journal a migration run in the current transaction."""
        if self.applying:
            return
        self._extra.append((MEMORY_KIND, {"ops": [
            {"op": "schema", "component": component, "version": version, "sql": script}
        ]}))

    # ── triggers ───────────────────────────────────────────────────────────

    def ensure_triggers(self) -> None:
        """Cover every journaled table with its triggers (after migrations ran).

        A table covered for the first time that already holds rows is exported whole as a
        ``snapshot`` in the same transaction, so nothing in it exists only in the database.
        Cheap when nothing changed: the schema version (and the version of the triggers this
        code writes) is compared first.
        """
        version = self._schema_version()
        if version == self._schema_checked:
            return
        if version * 100 + _TRIGGERS_VERSION == self._stored_schema_version():
            self._schema_checked = version
            return
        with self._db.transaction():
            self._conn.execute(_CURSOR_SQL)
            existing = {
                str(r[0]): str(r[1] or "")
                for r in self._conn.execute(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
                    " AND name LIKE 'hrm_journal_%'"
                )
            }
            tables = dict(
                self._conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            )
            for table in journaled_tables(self._conn):
                # A table whose definition is as it was when its triggers were last written
                # keeps its shape: skip reading it again (a fresh database runs a dozen
                # migrations, each followed by this, and every table would be read each time).
                sql = str(tables.get(table) or "")
                names = trigger_names(table)
                if self._covered.get(table) == sql and all(n in existing for n in names):
                    continue
                self._shapes.pop(table, None)
                self._cover(table, existing)
                self._covered[table] = sql
            # Read inside the transaction: it counts this transaction's own DDL.
            checked = self._schema_version()
            self._conn.execute(
                "INSERT INTO journal_cursor (id, seq, hash, size, offset, schema_version)"
                " VALUES (1, 0, ?, 0, 0, ?) ON CONFLICT (id) DO UPDATE SET"
                " schema_version = excluded.schema_version",
                ("0" * 64, checked * 100 + _TRIGGERS_VERSION),
            )
        self._schema_checked = checked

    def _cover(self, table: str, existing: dict[str, str]) -> None:
        shape = self._shape(table)
        wanted = trigger_sql(shape)
        names = trigger_names(table)
        have = [existing.get(name) for name in names]
        if have == list(wanted):
            return
        for name in names:
            self._conn.execute(f"DROP TRIGGER IF EXISTS {quote(name)}")
        for sql in wanted:
            self._conn.execute(sql)
        if all(h is None for h in have) and not self.applying:
            self._snapshot(shape)

    def _snapshot(self, shape: Shape, *, empty_too: bool = False) -> None:
        columns = ", ".join(
            (["rowid"] if shape.has_rowid else []) + [quote(c) for c in shape.columns]
        )
        order = "rowid" if shape.has_rowid else ", ".join(quote(k) for k in shape.key)
        cursor = self._conn.execute(f"SELECT {columns} FROM {quote(shape.name)} ORDER BY {order}")
        first = True
        while True:
            rows = cursor.fetchmany(_SNAPSHOT_CHUNK)
            if not rows and not first:
                return
            if not rows and not empty_too:
                return  # an empty table: nothing exists only here
            data: dict[str, Any] = {"ops": [put_op(shape, tuple(r)) for r in rows]}
            if first:
                data = {"replace": [shape.name], **data}
                _logger().info("journal: exporting table %s into the memory ledger", shape.name)
            self._extra.append((SNAPSHOT_KIND, data))
            first = False

    def resnapshot(self) -> None:
        """Export every journaled table whole again (after a VACUUM may have renumbered the
        rowids the ledger names rows by)."""
        with self._db.transaction():
            for table in journaled_tables(self._conn):
                self._snapshot(self._shape(table), empty_too=True)

    def resync(self) -> int:
        """Take the database as the truth of its tables after the memory ledger lost records
        (a quarantine set damaged ones aside): export every table whole, replacing what the
        ledger held. Returns the records appended."""
        ledger = self._open_ledger()
        size = ledger.size()
        self._synced_size = size  # do not replay the repaired ledger over the database
        with self._db.transaction():
            self.mark_synced(ledger.last(), size)
            self._shapes.clear()
            for table in journaled_tables(self._conn):
                self._snapshot(self._shape(table), empty_too=True)
            count = len(self._extra)
        return count

    def after_rewrite(self) -> None:
        """The memory ledger was rewritten in place (a forget), inside the current write
        transaction: the database still holds all of it; move the cursor to its new end."""
        ledger = self._open_ledger()
        last = ledger.last()
        self.mark_synced(last, ledger.size())

    # ── ledger ─────────────────────────────────────────────────────────────

    def commit_ledger(self) -> None:
        """A group-commit boundary: make the appended records durable (and anchor them)."""
        if self._ledger is not None:
            self._ledger.commit()

    def close(self) -> None:
        """Commit and release the ledger."""
        if self._ledger is not None:
            ledger, self._ledger = self._ledger, None
            ledger.close()

    def _open_ledger(self) -> Ledger:
        if self._ledger is None:
            from hrm.storage.ledger import Ledger

            self._ledger = Ledger(self.path)
        return self._ledger

    def restore_if_fresh(self) -> None:
        """A database created just now beside a memory ledger with records: rebuild it from
        the ledger at once (``memory.db`` was deleted; the ledgers are the truth)."""
        if self._ledger_size() == 0:
            return
        from hrm.storage.rebuild import replay_into

        if Path(self._db.path).name == "memory.db":  # not a `rebuild`'s own new file
            _logger().warning("%s is new but its ledger holds records: rebuilding it from %s",
                              self._db.path, self.path)
        replay_into(self._db)

    def _ledger_size(self) -> int:
        fd = self._ledger._fd if self._ledger is not None else None
        if fd is not None:  # the open ledger's own descriptor: one fstat, no path lookup
            try:
                return os.fstat(fd).st_size
            except OSError:
                pass
        try:
            return os.stat(self.path).st_size
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise HRMError.internal(f"Cannot read the memory ledger '{self.path}': {exc}") from exc

    # ── cursor ─────────────────────────────────────────────────────────────

    def _read_cursor(self) -> _Cursor:
        try:
            row = self._conn.execute(
                "SELECT seq, hash, size, offset FROM journal_cursor WHERE id = 1"
            ).fetchone()
        except sqlite3.OperationalError:
            self._conn.execute(_CURSOR_SQL)
            row = None
        if row is None:
            return _Cursor()
        return _Cursor(int(row[0]), str(row[1]), int(row[2]), int(row[3]))

    def _write_cursor(self, record: LedgerRecord, size: int) -> None:
        updated = self._conn.execute(
            "UPDATE journal_cursor SET seq = ?, hash = ?, size = ?, offset = ? WHERE id = 1",
            (record.seq, record.hash, size, record.offset),
        ).rowcount
        if not updated:  # the first record this database applies
            self._conn.execute(_CURSOR_SQL)
            self._conn.execute(
                "INSERT OR REPLACE INTO journal_cursor (id, seq, hash, size, offset)"
                " VALUES (1, ?, ?, ?, ?)",
                (record.seq, record.hash, size, record.offset),
            )

    def mark_synced(self, record: LedgerRecord | None, size: int) -> None:
        """Record (inside a transaction) that the database matches the ledger up to `record`
        (None: up to the record it had reached, the ledger's size having changed around it)."""
        if record is not None:
            self._write_cursor(record, size)
        else:
            self._conn.execute(_CURSOR_SQL)
            self._conn.execute("UPDATE journal_cursor SET size = ? WHERE id = 1", (size,))
        self._synced_size = size

    def _schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA schema_version").fetchone()[0])

    def _stored_schema_version(self) -> int:
        try:
            row = self._conn.execute(
                "SELECT schema_version FROM journal_cursor WHERE id = 1"
            ).fetchone()
        except sqlite3.OperationalError:
            return -1
        return -1 if row is None else int(row[0])

    # ── catching up ────────────────────────────────────────────────────────

    def _catch_up(self, cursor: _Cursor) -> None:
        ledger = self._open_ledger()
        last: LedgerRecord | None = None
        count = 0
        self.applying = True
        try:
            for record in self._records_after(ledger, cursor):
                last = record
                if record.kind in (MEMORY_KIND, SNAPSHOT_KIND):
                    self.apply(record.data)
                    count += 1
        except sqlite3.Error as exc:
            raise HRMError(
                ErrorCode.DB_UNAVAILABLE,
                f"memory.db cannot apply the memory ledger '{self.path}': {exc}; rebuild it "
                "from the ledgers with `hrm ledger reindex`",
                recoverable=False,
            ) from exc
        finally:
            self.applying = False
        size = ledger.size()
        self.mark_synced(last, size)
        if count:
            _logger().warning(
                "memory.db was %s record(s) behind its ledger (a write interrupted before it "
                "committed): applied them", count,
            )

    def apply(self, data: dict[str, Any]) -> None:
        """Apply one ``memory`` or ``snapshot`` record's data to this database."""
        apply_ops(self._conn, data.get("ops", ()), self._shapes, replace=data.get("replace", ()))

    def _records_after(self, ledger: Ledger, cursor: _Cursor) -> Any:
        if cursor.seq == 0:
            return ledger.records()
        try:
            at = ledger.read_at(cursor.offset)
            if at.seq == cursor.seq and at.hash == cursor.hash:
                return ledger.records_after(at)
        except HRMError:
            pass  # moved (a forget rewrote the ledger): find it by seq below
        return self._records_from_seq(ledger, cursor)

    def _records_from_seq(self, ledger: Ledger, cursor: _Cursor) -> Any:
        found = False
        for record in ledger.records():
            if record.seq == cursor.seq:
                if record.hash != cursor.hash:
                    break
                found = True
                continue
            if found:
                yield record
        if not found:
            raise HRMError(
                ErrorCode.LEDGER_CORRUPT,
                f"memory.db has applied record {cursor.seq} of '{self.path}', which the ledger "
                "no longer holds as it was: the two disagree; rebuild memory.db from the "
                "ledgers with `hrm ledger reindex`",
                recoverable=False,
                context={"path": str(self.path), "seq": cursor.seq},
            )

    # ── internals ──────────────────────────────────────────────────────────

    def _ops(self) -> list[dict[str, Any]]:
        ops: list[dict[str, Any]] = []
        shapes = self._shapes
        for key, values in self._pending.items():
            shape = shapes.get(key[0]) or self._shape(key[0])
            if values is None:
                ops.append(gone_op(shape, key[1:]))
            elif type(values) is dict:
                ops.append(set_op(shape, key[1:], values))
            else:
                ops.append(put_op(shape, values))
        self._pending.clear()
        self._saved.clear()
        return ops

    def _write_back(self, ops: list[dict[str, Any]]) -> None:
        """Where a secret a store wrote was scrubbed out of its row image, write the scrubbed
        row back too: the database must hold what the ledger holds (D190)."""
        self.applying = True
        try:
            apply_ops(self._conn, ops, self._shapes)
        finally:
            self.applying = False


def _scrub_ops(ops: Any) -> list[dict[str, Any]]:
    """Scrub the column values of `ops` in place; return the operations a scrub changed.

    Row images come from the database, where every store writes scrubbed text, so this is the
    second line of defence, and it is on every turn's path: a value is only handed to the
    scrubber when it holds one of the scrubber's hints (`_might_hold_secret`), the way the
    scrubber itself skips a pattern whose hints a text lacks. Keys (a row's identity) and
    column names are not scrubbed.
    """
    changed: list[dict[str, Any]] = []
    for op in ops:
        values = op.get("row") if op.get("op") == "put" else op.get("cols")
        if not values:
            continue
        dirty = False
        for name, value in values.items():
            if type(value) is str and value:
                clean = _scrub(value)
                if clean is not value and clean != value:
                    values[name] = clean
                    dirty = True
        if dirty:
            changed.append(op)
    return changed


def _scrub(text: str) -> str:
    return (_SCRUBBER[0] if _SCRUBBER else _load_scrubber())(text)


_SCRUBBER: list[Callable[[str], str]] = []


def _load_scrubber() -> Callable[[str], str]:
    """The scrubber, screened: a text holding none of its hints and no private span is returned
    as it is (and remembered as clean), the way the scrubber itself skips a pattern whose hints
    a text lacks (a pattern with no hints, or a scrubber of another shape, disables the
    screen)."""
    from hrm.scrubbing import SCRUBBED, remember_clean, scrub_text

    try:
        from hrm.scrubbing import SECRET_PATTERNS

        hints = tuple(sorted({h.lower() for p in SECRET_PATTERNS for h in p.hints}))
        screened = bool(hints) and all(p.hints for p in SECRET_PATTERNS)
    except (ImportError, AttributeError):
        hints, screened = (), False
    memo = SCRUBBED.get
    import re

    screen = re.compile("|".join(re.escape(hint) for hint in hints)).search

    def scrub(text: str) -> str:
        done = memo(text)
        if done is not None:
            return done
        lower = text.lower()
        if screened and screen(lower) is None and "private" not in lower:
            # Row values repeat turn after turn (a scope, a strategy, a signature): the next
            # time, one lookup.
            remember_clean(text)
            return text
        return scrub_text(text)

    _SCRUBBER.append(scrub)
    return scrub
