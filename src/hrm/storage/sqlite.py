"""The embedded SQLite backend: one `Database` per file, shared by every store in a home.

Why this shape: several processes (hooks, the CLI, a server) open the same ``memory.db`` at once.
WAL mode lets readers run beside one writer; ``BEGIN IMMEDIATE`` takes the write lock up front so
two writers never deadlock on an upgrade; a busy timeout absorbs short contention, and anything
longer surfaces as ``DB_LOCKED`` (retryable). Within a process one connection is shared and
guarded by a re-entrant lock, so threads never interleave statements of two transactions.

Each component owns its schema as an ordered list of migrations, applied idempotently by
`Database.migrate` and recorded in ``schema_migrations``. A released migration is never edited;
a change is a new entry at the end of the list.

A home's ``memory.db`` is a view of the home's ledgers: its connection journals every change
into the memory ledger before committing it (`hrm.storage.journal`), so every write path —
including one written after this — is in a ledger before it is acknowledged (D180).
"""

from __future__ import annotations

import _thread  # not `threading` (nor `contextlib`): `hrm hook` opens this on every prompt
import functools
import re
import sqlite3
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

from hrm._private import prepare_private_file
from hrm.errors import ErrorCode, HRMError

TYPE_CHECKING = False  # `hrm hook` opens the memory database: no `typing` at run time
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from hrm.storage.journal import Journal

    T = TypeVar("T")

__all__ = ["Database", "wrap_sqlite_error"]

if TYPE_CHECKING:
    _Deferred = tuple[str, tuple[Any, ...], str, dict[Hashable, object], int]
    """A `Database.defer`red write: sql, params, table, what it leaves, the data_version seen."""

_BUSY_TIMEOUT_MS = 5000
CHECKPOINT_COMMITS = 32
"""Commits between two deferred checkpoints (a steady turn commits once, D32)."""


def wrap_sqlite_error(exc: sqlite3.Error, path: str | Path) -> HRMError:
    """Map a `sqlite3` error to the `HRMError` a caller can act on.

    The one place SQLite errors are classified, by SQLite's result code
    (`sqlite3.Error.sqlite_errorcode`, Python 3.11+; its low byte is the primary code), never by
    the message: messages change between SQLite versions, and "database is locked" and
    "database table is locked" are two codes with one word in common. An error SQLite did not
    raise (a closed connection, a wrong parameter count) has no code and is internal.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name = getattr(exc, "sqlite_errorname", None)
    where = {"path": str(path), "sqlite_error": name}
    if primary in _LOCKED:
        return HRMError.db_locked(path)
    if primary == sqlite3.SQLITE_FULL:
        return HRMError(
            ErrorCode.DISK_FULL, f"Disk full while writing '{path}'", recoverable=False,
            context=where,
        )  # fmt: skip
    if primary in _DENIED:
        return HRMError(
            ErrorCode.PERMISSION_DENIED,
            f"Cannot open or write database '{path}': {exc}",
            recoverable=False,
            context=where,
        )
    if primary in _DAMAGED:
        return HRMError(
            ErrorCode.DB_UNAVAILABLE,
            f"Database '{path}' is damaged: {exc}; rebuild indexes with `hrm ledger reindex`",
            recoverable=False,
            context=where,
        )
    if primary == sqlite3.SQLITE_IOERR:
        return HRMError(
            ErrorCode.DB_UNAVAILABLE,
            f"Disk I/O error on database '{path}' ({name}): check the disk and retry",
            context=where,
        )
    if primary == sqlite3.SQLITE_CONSTRAINT:
        return HRMError.validation_failed(f"Constraint violated in '{path}': {exc}", **where)
    return HRMError.internal(f"SQLite error on '{path}': {exc}", **where)


_LOCKED = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
"""Another connection holds the lock past the busy timeout: retryable."""
_DENIED = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH}
)
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class Database:
    """A thread-safe handle on one SQLite file with migrations and nested transactions.

    Use as a context manager or call `close`. ``path=":memory:"`` gives a private in-memory
    database (tests). `journal`: journal every change into the database's memory ledger
    (`hrm.storage.journal.memory_ledger_path`: the home's, or the one beside a stack's own
    database); by default on for a file named ``memory.db``, off otherwise. `page_size`: the
    page size a database without pages yet is made with (SQLite's default, 4,096, otherwise);
    one that has pages keeps its own.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_ms: int = _BUSY_TIMEOUT_MS,
        journal: bool | None = None,
        page_size: int | None = None,
    ) -> None:
        self.path = str(path)
        self._journal: Journal | None = None
        self._lock = _thread.RLock()
        self._depth = 0
        self._generation = 0
        """Bumped by every transaction and write through this handle (see `cached`)."""
        self._table_generation: dict[str, int] = {}
        """Per table: bumped by every write to it through this handle (see `cached(table=)`)."""
        self._epoch = 0
        """Bumped by writes whose table is not known (schema changes, unusual statements)."""
        self._cache: dict[Hashable, tuple[int, int, int, Any]] = {}
        """`cached` values: (data_version, generation or epoch, table generation or -1,
        value)."""
        self._staged: dict[Hashable, tuple[str, tuple[int, int], Any]] = {}
        """Values `remember`ed in the open transaction: (table, stamp, value) per cache key."""
        self._pinned: int | None = None
        """`data_version` as read when the outermost `pinned` block began (see there)."""
        self._doomed = False
        """A joined block failed inside the open transaction: it may only roll back."""
        self._tx_version: int | None = None
        """`data_version` inside the open transaction, read once: while this handle holds the
        write lock no other connection can commit, so it cannot change before COMMIT."""
        self._deferred: list[_Deferred] = []
        """Writes `defer`red to the next transaction: (sql, params, table, what they leave,
        the `data_version` their caller's reads saw)."""
        self._deferred_tables: set[str] = set()
        self._deferring = 0
        """Open `deferring` blocks: outside one, `defer` writes at once."""
        self._overlay: dict[Hashable, object] = {}
        """What `cached` reads while a deferred write that leaves it is pending."""
        self._checkpoints_deferred = False
        self._commits_since_checkpoint = 0
        self._checkpointer: sqlite3.Connection | None = None
        self._checkpoint_lock = _thread.allocate_lock()
        fresh = self.path == ":memory:" or not Path(self.path).exists()
        try:
            if self.path != ":memory:":
                prepare_private_file(self.path)  # memory.db and its -wal/-shm: 0600
            self._conn = sqlite3.connect(
                self.path,
                timeout=timeout_ms / 1000,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,
            )
            self._conn.row_factory = sqlite3.Row
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
            if page_size is not None:
                # Takes effect only while the file holds no page yet (new, or made empty for
                # a rebuild); a database with pages, in WAL mode, keeps its own size.
                self._conn.execute(f"PRAGMA page_size = {int(page_size)}")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " component TEXT NOT NULL, version INTEGER NOT NULL,"
                " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),"
                " PRIMARY KEY (component, version))"
            )
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc
        if journal is None:
            journal = self.path != ":memory:" and Path(self.path).name == "memory.db"
        if journal:
            self._attach_journal(fresh)

    def _attach_journal(self, fresh: bool) -> None:
        from hrm.storage.journal import Journal

        try:
            self._journal = Journal(self, Path(self.path))
            if fresh:
                self._journal.restore_if_fresh()
        except BaseException:
            self._conn.close()
            raise

    @property
    def journal(self) -> Journal | None:
        """The memory journal of this connection (None: not a home's memory.db)."""
        return self._journal

    def journal_commit(self) -> None:
        """A group-commit boundary for the memory ledger (no-op without a journal)."""
        journal = self._journal
        if journal is not None:
            with self._lock:
                journal.commit_ledger()

    # ── lifecycle ──────────────────────────────────────────────────────────

    def close(self) -> None:
        """Store what is still `defer`red, then release the file (even if storing failed)."""
        try:
            if self._deferred:
                self.flush_deferred()
        finally:
            self.discard_deferred()
            if self._journal is not None:
                with self._lock:
                    self._journal.close()
            with self._checkpoint_lock:
                if self._checkpointer is not None:
                    self._checkpointer.close()
                    self._checkpointer = None
            with self._lock:
                self._conn.close()

    # ── checkpoints ────────────────────────────────────────────────────────

    def defer_checkpoints(self) -> None:
        """Stop this handle's commits from checkpointing the WAL; `checkpoint` does it instead.

        SQLite copies the write-ahead log into the database file (and fsyncs it) inside the
        commit that crosses 1,000 pages: one commit in forty took ~4 ms, on the turn's path.
        A caller with a background thread (the stack's group committer) defers that work and
        calls `checkpoint` from there. Other connections keep their automatic checkpoints.
        """
        if self.path == ":memory:":
            return
        with self._lock:
            try:
                self._conn.execute("PRAGMA wal_autocheckpoint = 0")
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc
            self._checkpoints_deferred = True

    def checkpoint(self, *, min_commits: int = CHECKPOINT_COMMITS) -> bool:
        """Checkpoint the WAL if this handle committed `min_commits` times since the last one.

        Runs on a connection of its own in ``PASSIVE`` mode, so it never waits for, nor
        blocks, this handle's readers and writers; only meaningful after `defer_checkpoints`.
        Returns whether a checkpoint ran.
        """
        with self._lock:
            if not self._checkpoints_deferred or self._commits_since_checkpoint < min_commits:
                return False
            self._commits_since_checkpoint = 0
        with self._checkpoint_lock:
            try:
                if self._checkpointer is None:
                    self._checkpointer = sqlite3.connect(
                        self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                        check_same_thread=False,
                    )
                self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc
        return True

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── schema ─────────────────────────────────────────────────────────────

    def migrate(self, component: str, migrations: Sequence[str]) -> int:
        """Apply the migrations of `component` not yet applied, in order, each atomically.

        Args:
            component: A stable name owning the migrations (e.g. ``"memory.shared_reference"``).
            migrations: SQL scripts; entry *i* is version *i + 1*. Never edit a released entry.

        Returns:
            How many migrations ran now.
        """
        ran = 0
        with self._lock:
            try:
                done = {
                    row[0]
                    for row in self._conn.execute(
                        "SELECT version FROM schema_migrations WHERE component = ?", (component,)
                    )
                }
                for version, script in enumerate(migrations, start=1):
                    if version in done:
                        continue
                    with self.transaction():
                        # Another process may have applied it while we waited for the lock.
                        if self._conn.execute(
                            "SELECT 1 FROM schema_migrations WHERE component = ? AND version = ?",
                            (component, version),
                        ).fetchone():
                            continue
                        self._epoch += 1  # a migration may reshape or fill any table
                        if self._journal is not None:
                            self._journal.note_schema(component, version, script)
                        for statement in _split_sql(script):
                            self._conn.execute(statement)
                        self._conn.execute(
                            "INSERT INTO schema_migrations (component, version) VALUES (?, ?)",
                            (component, version),
                        )
                        ran += 1
                if self._journal is not None:
                    self._journal.ensure_triggers()
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc
        return ran

    # ── statements ─────────────────────────────────────────────────────────

    def transaction(self, *, join: bool = False) -> _Transaction:
        """A write transaction (``BEGIN IMMEDIATE``); nested use becomes a savepoint.

        Everything inside commits together or not at all. sqlite3 errors leave as `HRMError`.
        Use as ``with db.transaction() as conn:``.

        `join`: nested, run inside the enclosing transaction without a savepoint of its own
        (two statements saved). For a block that is one unit inside a larger one, whose
        failure fails its caller too: should it fail and the caller go on regardless, the
        outermost transaction rolls back at its end and raises, instead of committing half
        of the block. Outermost, `join` changes nothing.
        """
        return _Transaction(self, join)

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run one statement and return all its rows (reads, or writes inside `transaction`)."""
        with self._lock:
            if self._journal is not None and not self._depth and not _is_read(sql):
                with self.transaction():  # a journaled write is committed by the journal
                    return self.execute(sql, params)
            if self._deferred and self._touches_deferred(sql):
                self.flush_deferred()
            if not _is_read(sql):
                self._note_write(sql)
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run one statement for many parameter rows (call inside `transaction`).

        Returns how many rows it inserted, updated or deleted (an ignored conflict is none).
        """
        with self._lock:
            if self._journal is not None and not self._depth:
                with self.transaction():
                    return self.executemany(sql, rows)
            if self._deferred and self._touches_deferred(sql):
                self.flush_deferred()
            self._note_write(sql)
            try:
                return max(0, self._conn.executemany(sql, rows).rowcount)
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        """The first row of a query, or None."""
        with self._lock:
            if self._journal is not None and not self._depth and not _is_read(sql):
                with self.transaction():
                    return self.one(sql, params)
            if self._deferred and self._touches_deferred(sql):
                self.flush_deferred()
            if not _is_read(sql):
                self._note_write(sql)
            try:
                row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
                return row
            except sqlite3.Error as exc:
                raise wrap_sqlite_error(exc, self.path) from exc

    def cached(self, key: Hashable, load: Callable[[], T], *, table: str | None = None) -> T:
        """`load()`'s result, reused until the data it was read from changes.

        The value is reloaded after any commit by another connection (``PRAGMA data_version``)
        and after any write through this handle — or, when `table` names the one table `load`
        reads (no joins, no trigger writing into it), only after a write to that table, so a
        turn's many unrelated writes stop invalidating its stance, commitment and problem
        reads. Inside a transaction a value is never stored, so a rolled-back read cannot
        linger; a stored one still serves while its table is untouched, and so does what
        `remember` staged. Return only immutable values.
        """
        with self._lock:
            if self._deferred:
                if key in self._overlay:
                    value: T = self._overlay[key]  # type: ignore[assignment]
                    return value
                if table is None or table in self._deferred_tables:
                    self.flush_deferred()
            # `_data_version` inlined, and the stamp kept as two numbers rather than a tuple:
            # a turn makes some thirty of these reads.
            depth = self._depth
            if depth:
                version = self._tx_version
                if version is None:
                    version = self._tx_version = self._read_data_version()
            else:
                version = self._pinned
                if version is None:
                    version = self._read_data_version()
            if table is None:
                first, second = self._generation, -1
            else:
                first, second = self._epoch, self._table_generation.get(table, 0)
            if depth:
                staged = self._staged.get(key)
                if staged is not None and staged[0] == table and staged[1] == (first, second):
                    value = staged[2]
                    return value
            entry = self._cache.get(key)
            if (
                entry is not None
                and entry[0] == version
                and entry[1] == first
                and entry[2] == second
            ):
                value = entry[3]
                return value
            value = load()
            if not depth:
                self._cache[key] = (version, first, second, value)
            return value

    def remember(self, key: Hashable, value: object, *, table: str) -> None:
        """Say what `cached(key, table=table)` reads now, right after this handle wrote it.

        A store that knows the result of its own write (a stance counted, a lease ticked)
        saves the next read's query. Call it inside the write's transaction, after the
        last statement that changes what `key` reads: the value is published when the
        outermost transaction commits, and only if nothing wrote `table` since; any
        rollback, even of a savepoint, drops what was staged. Outside a transaction it does
        nothing (the next read loads).
        """
        with self._lock:
            if not self._depth:
                return
            self._data_version()  # read inside the write lock: the version the commit keeps
            stamp = (self._epoch, self._table_generation.get(table, 0))
            self._staged[key] = (table, stamp, value)

    def defer(
        self,
        sql: str,
        params: Sequence[Any],
        *,
        table: str,
        leaves: dict[Hashable, object] | None = None,
    ) -> None:
        """Inside a `deferring` block, run a write with the next transaction, not one of its own.

        For bookkeeping a caller knows the result of (a turn counted, progress stamped): a
        turn's own transaction then carries it, in one commit with the turn's other changes,
        instead of paying a transaction (BEGIN, COMMIT, its own WAL pages) for it. `leaves`
        maps `cached` keys of `table` to what they read once the write is done; until then
        `cached` answers them from there. Any other read of `table` through this handle, and
        any transaction, runs the pending writes first; the block's end (and `close`) runs
        what is left. Inside a transaction the write runs at once (and `leaves` is
        `remember`ed); outside both, in a transaction of its own.

        Pending writes are this handle's alone: other connections see them when the
        transaction that carries them commits; should it roll back, they wait for the next
        one (only the `deferring` block's failure drops them). Write
        `sql` so it is right whatever another connection committed meanwhile (an increment,
        not a computed total): `leaves` is only trusted when no other connection committed
        since the caller's reads; otherwise the next read loads what the database holds.
        """
        with self._lock:
            if self._depth:  # one statement: atomic without a savepoint of its own
                self._write_now(sql, params, table, leaves or {})
                return
            if not self._deferring:
                with self.transaction():
                    self._write_now(sql, params, table, leaves or {})
                return
            seen = self._data_version()
            self._deferred.append((sql, tuple(params), table, dict(leaves or {}), seen))
            self._deferred_tables.add(table)
            self._overlay.update(leaves or {})

    def _write_now(
        self, sql: str, params: Sequence[Any], table: str, leaves: dict[Hashable, object]
    ) -> None:
        self._note_write(sql)
        try:
            self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc
        for key, value in leaves.items():
            self.remember(key, value, table=table)

    def deferring(self) -> _Deferring:
        """A block (a turn) in which `defer`red writes wait for the next transaction.

        At its end what is still pending is written in a transaction of its own; when the
        block ends by an exception, it is dropped instead: a turn that did not happen leaves
        no bookkeeping behind. Nested blocks end with the outermost. The block is also
        `pinned`, so what a deferred write leaves and the reads it was computed from are
        checked against one `data_version`.
        """
        return _Deferring(self)

    @property
    def has_deferred(self) -> bool:
        """Whether `defer`red writes are waiting for a transaction."""
        return bool(self._deferred)

    def flush_deferred(self) -> None:
        """Run the `defer`red writes now, in a transaction of their own (no-op when none)."""
        with self._lock:
            if not self._deferred or self._depth:
                return
            with self.transaction():
                pass  # the transaction runs them first

    def discard_deferred(self) -> None:
        """Drop the `defer`red writes unrun (their table reads come from the database again)."""
        with self._lock:
            self._deferred.clear()
            self._deferred_tables.clear()
            self._overlay.clear()

    def _touches_deferred(self, sql: str) -> bool:
        """Whether `sql` may read or write a table with pending writes (by name: may over-flush)."""
        return any(table in sql for table in self._deferred_tables)

    def _run_deferred(self) -> list[_Deferred]:
        """Inside a new outermost transaction: run the pending writes, stage what they leave.

        Returns them, for `_requeue` should this transaction roll back.
        """
        pending = self._deferred
        self._deferred = []
        self._deferred_tables = set()
        self._overlay = {}
        for sql, params, table, leaves, seen in pending:
            self._note_write(sql)
            self._conn.execute(sql, params)
            if self._data_version() == seen:  # nobody else committed: the caller's values hold
                for key, value in leaves.items():
                    self.remember(key, value, table=table)
        return pending

    def _requeue(self, carried: list[_Deferred]) -> None:
        """Put back the deferred writes a rolled-back transaction carried (they were not its
        own: only the deferring block's failure drops them)."""
        if not carried:
            return
        self._deferred = carried + self._deferred
        for _, _, table, leaves, _ in carried:
            self._deferred_tables.add(table)
            for key, value in leaves.items():
                self._overlay.setdefault(key, value)

    def data_version(self) -> int:
        """A number that changes when another connection commits (``PRAGMA data_version``).

        Inside `pinned` and outside a transaction, the number read when the block began.
        """
        with self._lock:
            return self._data_version()

    def pinned(self) -> _Pinned:
        """A block (a turn) whose cached reads check for other connections' commits once.

        Every `cached` read, and every cache keyed on `data_version`, otherwise asks SQLite
        whether another connection committed — twenty times a turn. Inside the block the
        answer read at its start stands, so the block's reads see the database as it was
        then plus this handle's own writes (which invalidate by table as always). Inside a
        transaction the live value is used: writes never act on a stale read. Nested blocks
        keep the outer one's pin.
        """
        return _Pinned(self)

    def _data_version(self) -> int:
        if self._depth:
            if self._tx_version is None:
                self._tx_version = self._read_data_version()
            return self._tx_version
        if self._pinned is not None:
            return self._pinned
        return self._read_data_version()

    def _read_data_version(self) -> int:
        try:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc

    def _publish_staged(self) -> None:
        """After the outermost COMMIT: store what `remember` staged, where still current."""
        staged, self._staged = self._staged, {}
        version = self._tx_version
        if version is None:
            return
        for key, (table, stamp, value) in staged.items():
            if stamp == (self._epoch, self._table_generation.get(table, 0)):
                self._cache[key] = (version, stamp[0], stamp[1], value)

    def _note_write(self, sql: str) -> None:
        """Invalidate what a write statement may change (caller holds the lock)."""
        self._generation += 1
        table = _written_table(sql)
        if table is None:
            self._epoch += 1
        else:
            self._table_generation[table] = self._table_generation.get(table, 0) + 1

    def has_fts5(self) -> bool:
        """Whether this SQLite build has FTS5 (declared capability, never a silent no-op)."""
        try:
            rows = self.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')")
            if rows and rows[0][0]:
                return True
            self._conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp._fts5_probe USING fts5(x)")
            self._conn.execute("DROP TABLE IF EXISTS temp._fts5_probe")
            return True
        except (sqlite3.Error, HRMError):
            return False


_WRITE_TARGET = (
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
    r"\s+[\"`\[]?(\w+)[\"`\]]?(?=[\s(;]|$)"
)
"""Compiled by `re` on the first write (0.7 ms): the prompt hook reads this module's
databases on every prompt and never writes them (D397)."""


def _is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper().startswith(("SELECT", "PRAGMA"))


@functools.lru_cache(maxsize=1024)
def _written_table(sql: str) -> str | None:
    """The table a plain INSERT/REPLACE/UPDATE/DELETE writes; None for anything else.

    Memoised per statement text (the stores reuse a few dozen statements). A qualified name
    (``main.t``) or a CTE is not recognised, which only costs a wider invalidation.
    """
    match = re.match(_WRITE_TARGET, sql, re.IGNORECASE)
    return match.group(1).lower() if match else None


class _Deferring:
    """`Database.deferring` as a plain context manager (see there); it also `pinned`s."""

    __slots__ = ("_db", "_pin")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._pin = _Pinned(db)

    def __enter__(self) -> None:
        with self._db._lock:
            self._pin.__enter__()
            self._db._deferring += 1

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        db = self._db
        with db._lock:
            try:
                db._deferring -= 1
                if db._deferring:
                    return
                if exc_type is not None:
                    db.discard_deferred()
                else:
                    db.flush_deferred()
            finally:
                self._pin.__exit__()


class _Pinned:
    """`Database.pinned` as a plain context manager (re-entrant: the outer pin stands)."""

    __slots__ = ("_db", "_outer")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._outer = False

    def __enter__(self) -> None:
        db = self._db
        with db._lock:
            if db._pinned is None:
                db._pinned = None if db._depth else db._data_version()
                self._outer = db._pinned is not None

    def __exit__(self, *_: object) -> None:
        if self._outer:
            with self._db._lock:
                self._db._pinned = None


class _Transaction:
    """`Database.transaction` as a plain context manager.

    Not a `contextlib.contextmanager` generator: `hrm hook` writes access times through this
    on every prompt, and `contextlib` is an import it otherwise never needs. The handle's lock
    is held from ``__enter__`` to ``__exit__``, so one thread's transaction excludes others.
    """

    __slots__ = ("_carried", "_db", "_depth", "_join", "_joined")

    def __init__(self, db: Database, join: bool = False) -> None:
        self._db = db
        self._depth = 0
        self._join = join
        self._joined = False
        self._carried: list[_Deferred] = []

    def __enter__(self) -> sqlite3.Connection:
        db = self._db
        db._lock.acquire()
        try:
            depth = self._depth = db._depth
            db._generation += 1
            if depth == 0:
                db._conn.execute("BEGIN IMMEDIATE")
                if db._journal is not None:
                    _begin_journal(db, db._journal)
            elif self._join:
                self._joined = True
            else:
                db._conn.execute(f"SAVEPOINT sp{depth}")
                if db._journal is not None:
                    db._journal.savepoint()
        except sqlite3.Error as exc:
            db._lock.release()
            raise wrap_sqlite_error(exc, db.path) from exc
        except BaseException:
            db._lock.release()
            raise
        db._depth += 1
        self._carried = []
        if depth == 0 and db._deferred:
            try:
                self._carried = db._run_deferred()
            except BaseException as exc:
                db._depth -= 1
                db._staged.clear()
                db._tx_version = None
                try:  # noqa: SIM105 - contextlib is the import this class avoids
                    db._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the deferred write's error is the one worth raising
                db._lock.release()
                if isinstance(exc, sqlite3.Error):
                    raise wrap_sqlite_error(exc, db.path) from exc
                raise
        return db._conn

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        db, depth = self._db, self._depth
        committed = False
        try:
            db._depth -= 1
            db._generation += 1
            if self._joined:
                self._joined = False
                if exc_type is not None:
                    db._doomed = True  # nothing to roll back to here: the whole must go
                    db._staged.clear()
                return
            if depth == 0 and db._doomed and exc_type is None:
                db._doomed = False
                db._staged.clear()
                try:  # noqa: SIM105 - contextlib is the import this class avoids
                    db._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the error below says what happened
                if db._journal is not None:
                    db._journal.rolled_back()
                raise HRMError.internal(
                    f"A block joined to a transaction on '{db.path}' failed and its caller went"
                    " on: the whole transaction was rolled back, not committed in part"
                )
            if depth == 0:
                db._doomed = False
            if exc_type is not None:
                db._staged.clear()
                try:
                    if depth == 0:
                        db._conn.execute("ROLLBACK")
                    else:
                        db._conn.execute(f"ROLLBACK TO sp{depth}")
                        db._conn.execute(f"RELEASE sp{depth}")
                except sqlite3.Error:
                    pass  # the original exception is the one worth raising
                if db._journal is not None:
                    if depth == 0:
                        db._journal.rolled_back()
                    else:
                        db._journal.rollback_to()
                return
            if depth == 0 and db._journal is not None:
                _commit_journaled(db, db._journal)
                committed = True
                return
            try:
                if depth == 0:
                    db._conn.execute("COMMIT")
                    committed = True
                    db._commits_since_checkpoint += 1
                    if db._staged:
                        db._publish_staged()
                else:
                    db._conn.execute(f"RELEASE sp{depth}")
                    if db._journal is not None:
                        db._journal.release()
            except sqlite3.Error as exc:
                try:  # noqa: SIM105 - contextlib is the import this class avoids
                    db._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the commit's error is the one worth raising
                db._staged.clear()
                raise wrap_sqlite_error(exc, db.path) from exc
        finally:
            if depth == 0:
                db._tx_version = None
                if not committed and not self._joined:
                    db._requeue(self._carried)  # bookkeeping it carried waits for the next
                self._carried = []
            db._lock.release()


def _rollback_quietly(db: Database) -> None:
    """ROLLBACK after a failure whose own error is the one worth raising."""
    try:  # noqa: SIM105 - contextlib is the import this module avoids
        db._conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _begin_journal(db: Database, journal: Journal) -> None:
    """After BEGIN: let the journal catch up; on failure the transaction never started."""
    try:
        journal.begin()
    except BaseException:
        _rollback_quietly(db)
        raise


def _commit_journaled(db: Database, journal: Journal) -> None:
    """COMMIT a journaled transaction: its changes go to the memory ledger first.

    The append is the commit point; should SQLite then fail to commit, the journal takes
    the records back, so a write reported as failed leaves no trace either way.
    """
    try:
        journal.before_commit()
    except BaseException:
        _rollback_quietly(db)
        db._staged.clear()
        journal.rolled_back()
        raise
    try:
        db._conn.execute("COMMIT")
    except sqlite3.Error as exc:
        journal.commit_failed()
        _rollback_quietly(db)
        db._staged.clear()
        raise wrap_sqlite_error(exc, db.path) from exc
    journal.after_commit()
    db._commits_since_checkpoint += 1
    if db._staged:
        db._publish_staged()


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements, keeping trigger bodies (BEGIN…END) whole."""
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines(keepends=True):
        buffer.append(line)
        candidate = "".join(buffer).strip()
        if candidate and sqlite3.complete_statement(candidate):
            statements.append(candidate)
            buffer = []
    rest = "".join(buffer).strip()
    if rest:
        statements.append(rest)
    return statements
