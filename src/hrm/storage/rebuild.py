"""Rebuilding ``memory.db`` from the ledgers alone (`hrm ledger reindex`).

``memory.db`` is a view: the memory ledger holds every change to its tables (`hrm.storage.
journal`), the episodic ledgers hold the episodes, every ledger is indexed by `LedgerIndex`.
`rebuild` makes a new database from nothing — running every known component's migrations,
replaying the memory ledger with the same `apply` the live journal uses, and re-deriving the
indexes — in a file beside the old one, and then puts it in place. A damaged database is moved
aside first (``memory.db.damaged-<UTC time>``, with its ``-wal`` and ``-shm``), never deleted, and
never opened: a file SQLite calls malformed cannot lock a person out of repairing it.

The components: each store in hrm creates its tables through `Database.migrate` when it is
first opened. A rebuild cannot wait for that, so `COMPONENTS` names every component's
migrations by module and attribute (imported only here, so the storage layer keeps no import of
the layers above it); a migration the list does not know is in the ledger itself (a ``schema``
operation) and runs where it ran. `table_dump` is how tests and `verify` compare two databases.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import ErrorCode, HRMError
from hrm.storage._journal_sql import DERIVED_TABLES, quote
from hrm.storage.journal import (
    MEMORY_KIND,
    SNAPSHOT_KIND,
    is_stack_database,
    memory_ledger_path,
)

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.storage.journal import Journal
    from hrm.storage.sqlite import Database

__all__ = [
    "COMPONENTS",
    "DERIVED_COLUMNS",
    "RebuildReport",
    "after_quarantine",
    "component_migrations",
    "move_aside",
    "rebuild",
    "replay_into",
    "table_dump",
]

logger = logging.getLogger(__name__)

COMPONENTS: tuple[tuple[str, str], ...] = (
    ("storage.stack_db", "hrm.storage.stack_db:ORIGIN_MIGRATIONS"),
    ("continuity.learnings", "hrm.continuity._learnings_sql:MIGRATIONS"),
    ("memory.shared_reference", "hrm.memory.shared_reference:MIGRATIONS"),
    ("memory.working_set", "hrm.memory.working_set:MIGRATIONS"),
    ("memory.synthesis", "hrm.memory.synthesis:MIGRATIONS"),
    ("memory.episodic", "hrm.memory.episodic:MIGRATIONS"),
    ("governance.problems", "hrm.governance.problems:_MIGRATIONS"),
    ("focus.commitments", "hrm.focus.commitments:_MIGRATIONS"),
    ("focus.stance", "hrm.focus.stance:_MIGRATIONS"),
    ("learning.patterns", "hrm.learning.patterns:MIGRATIONS"),
    ("learning.feedback", "hrm.learning.feedback:MIGRATIONS"),
    ("learning.consolidation", "hrm.learning.consolidation:_MIGRATIONS"),
    ("storage.ledger_index", "hrm.storage.ledger_index:MIGRATIONS"),
    ("stacks.budget", "hrm.stacks.checkpoint:_BUDGET_MIGRATIONS"),
    ("stacks.recovery", "hrm.stacks.checkpoint:_RECOVERY_MIGRATIONS"),
)
"""Every component that keeps tables in ``memory.db``: (name, ``module:attribute`` of its
migrations). A test opens a whole stack and checks that every table it made is here."""

DERIVED_COLUMNS: dict[str, tuple[str, ...]] = {
    # Recall bookkeeping the prompt hook writes without journaling (D182): a rebuild restores
    # each learning's values as of its last journaled change.
    "learnings": ("accessed_at", "access_count"),
}
"""Columns a rebuild does not promise to restore exactly, besides `DERIVED_TABLES`."""


@dataclass(frozen=True, kw_only=True)
class RebuildReport:
    """What `rebuild` did."""

    path: Path
    records: int
    """Memory ledger records replayed."""
    moved_aside: list[Path] = field(default_factory=list)
    """The old database files, under their new names."""
    indexed: int = 0
    """Ledger records indexed."""
    counts: dict[str, int] = field(default_factory=dict)
    """Records indexed per ledger (relative path)."""
    databases: dict[str, int] = field(default_factory=dict)
    """Memory ledger records replayed per database (relative path): the home's and each
    stack's own (D320)."""
    resynced: bool = False
    """The memory ledger lost records to a quarantine and the database, whole, was exported
    into it again instead of being rebuilt from it."""
    errors: dict[str, str] = field(default_factory=dict)
    """Derived indexes that could not be rebuilt (the database itself is whole)."""

    @property
    def ok(self) -> bool:
        """Whether everything was rebuilt."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` output."""
        return {
            "ok": self.ok,
            "path": str(self.path),
            "records": self.records,
            "moved_aside": [str(p) for p in self.moved_aside],
            "indexed": self.indexed,
            "counts": self.counts,
            "databases": self.databases,
            "resynced": self.resynced,
            "errors": self.errors,
        }


Progress = Callable[[str, int], None]
"""Called with a phase name and a count as the rebuild advances (the CLI shows it)."""


def rebuild(
    home: HRMHome, *, progress: Progress | None = None, clock: Callable[[], datetime] | None = None
) -> RebuildReport:
    """Make every database of the home anew from its own ledger: the home's ``memory.db`` and
    each stack's own (D320); the old files are moved aside.

    Stop other hrm processes of the home first: one holding an old database open would keep
    writing to it.

    Raises:
        HRMError: ``LEDGER_CORRUPT`` when a memory ledger is damaged (quarantine it first:
            `hrm ledger quarantine`); ``DISK_FULL`` / ``PERMISSION_DENIED`` from the
            filesystem. Each old database is left where it was until its new one is complete.
    """
    stamp = (clock or _now)().strftime("%Y%m%dT%H%M%S%fZ")
    moved: list[Path] = []
    replayed: dict[str, int] = {}
    for target in _databases(home):
        count, aside = _rebuild_file(target, stamp, progress, _page_size(home, target))
        moved.extend(aside)
        replayed[target.relative_to(home.root).as_posix()] = count
    counts, errors = _rebuild_indexes(home, progress)
    return RebuildReport(
        path=home.memory_db, records=sum(replayed.values()), moved_aside=moved,
        indexed=sum(counts.values()), counts=counts, databases=replayed, errors=errors,
    )


def _databases(home: HRMHome) -> list[Path]:
    """The home's ``memory.db`` and every stack database that exists or has a ledger."""
    found = [home.memory_db]
    for agent_class in home.stack_classes():
        path = home.stack_memory_db(agent_class)
        if path.is_file() or home.stack_memory_ledger(agent_class).is_file():
            found.append(path)
    return found


def _page_size(home: HRMHome, target: Path) -> int | None:
    """The page size `target` is rebuilt with: a stack database's (D405), or SQLite's default."""
    from hrm.storage.stack_db import STACK_PAGE_SIZE

    return None if target == home.memory_db else STACK_PAGE_SIZE


def _rebuild_file(
    target: Path, stamp: str, progress: Progress | None, page_size: int | None = None
) -> tuple[int, list[Path]]:
    """Rebuild one database from its memory ledger; returns (records, files moved aside)."""
    from hrm.storage.sqlite import Database

    building = target.with_name(f"{target.name}.rebuilding-{stamp}")
    _remove_database(building)
    try:
        # Beside the old file, so its journal is the old one's. Made empty first: a file that
        # did not exist would be replayed as it opens, where no progress can be reported.
        building.touch(mode=0o600)
        with Database(building, journal=True, page_size=page_size) as db:
            records = replay_into(db, progress=progress)
    except BaseException:
        _remove_database(building)
        raise
    moved = move_aside(target, "replaced" if _readable(target) else "damaged", stamp)
    os.replace(building, target)
    with contextlib.suppress(OSError):
        os.chmod(target, 0o600)
    return records, moved


def after_quarantine(
    home: HRMHome, repaired: Sequence[Path], *, progress: Progress | None = None
) -> RebuildReport:
    """Bring the home's databases in line with ledgers a quarantine repaired.

    For each database whose memory ledger was repaired and which still reads whole, the
    database is the better copy of what the skipped records held: it is exported into the
    ledger again (`Journal.resync`) and kept. Every other database is rebuilt from its
    ledger. The derived indexes are re-derived either way.
    """
    from hrm.storage.sqlite import Database

    stamp = _now().strftime("%Y%m%dT%H%M%S%fZ")
    fixed = set(repaired)
    replayed: dict[str, int] = {}
    moved: list[Path] = []
    resynced = False
    for target in _databases(home):
        name = target.relative_to(home.root).as_posix()
        if memory_ledger_path(target) in fixed and _readable(target):
            with Database(target) as db:
                replayed[name] = _journal_of(db).resync()
            resynced = True
            continue
        replayed[name], aside = _rebuild_file(target, stamp, progress, _page_size(home, target))
        moved.extend(aside)
    counts, errors = _rebuild_indexes(home, progress)
    return RebuildReport(
        path=home.memory_db, records=sum(replayed.values()), moved_aside=moved,
        indexed=sum(counts.values()), counts=counts, databases=replayed, errors=errors,
        resynced=resynced,
    )


def _journal_of(db: Database) -> Journal:
    journal = db.journal
    if journal is None:
        raise HRMError.internal(f"{db.path} was opened without its memory journal")
    return journal


def replay_into(db: Database, *, progress: Progress | None = None) -> int:
    """Run every migration and replay the memory ledger into `db`, a new, empty database.

    What `Database` does when it creates ``memory.db`` beside a ledger that has records.
    """
    journal = _journal_of(db)
    journal.applying = True
    try:
        count = _replay(db, journal.path, progress)
        _point_cursor(db, journal.path)
    finally:
        journal.applying = False
    return count


def move_aside(path: Path, why: str, stamp: str) -> list[Path]:
    """Rename a database and its ``-wal`` / ``-shm`` to ``<name>.<why>-<stamp>``."""
    moved: list[Path] = []
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            destination = path.with_name(f"{path.name}.{why}-{stamp}{suffix}")
            os.replace(source, destination)
            moved.append(destination)
    return moved


# ── replay ──────────────────────────────────────────────────────────────────


def _replay(db: Database, ledger_path: Path, progress: Progress | None) -> int:
    from hrm.storage._journal_sql import apply_ops
    from hrm.storage.ledger import Ledger

    for component, migrations in _components_of(db):
        db.migrate(component, migrations)
    shapes: dict[str, Any] = {}
    count = 0
    if not ledger_path.exists():
        return 0
    with Ledger(ledger_path, read_only=True) as ledger, db.transaction() as conn:
        conn.execute("PRAGMA defer_foreign_keys = ON")
        for record in ledger.records():
            if record.kind not in (MEMORY_KIND, SNAPSHOT_KIND):
                continue
            try:
                apply_ops(
                    conn, record.data.get("ops", ()), shapes,
                    replace=record.data.get("replace", ()),
                )
            except sqlite3.Error as exc:
                raise HRMError(
                    ErrorCode.LEDGER_CORRUPT,
                    f"Cannot replay {ledger_path}:{record.line} (seq {record.seq}): {exc}",
                    recoverable=False,
                    context={"path": str(ledger_path), "seq": record.seq},
                ) from exc
            count += 1
            if progress is not None and count % 1000 == 0:
                progress("replay", count)
    if progress is not None:
        progress("replay", count)
    return count


def _point_cursor(db: Database, ledger_path: Path) -> None:
    """Record that `db` holds everything the ledger holds (what was just replayed)."""
    from hrm.storage.journal import _CURSOR_SQL
    from hrm.storage.ledger import Ledger

    if not ledger_path.exists():
        return
    with Ledger(ledger_path, read_only=True) as ledger:
        last = ledger.last()
        size = ledger.size()
    if last is None:
        return
    with db.transaction() as conn:
        conn.execute(_CURSOR_SQL)
        conn.execute(
            "INSERT INTO journal_cursor (id, seq, hash, size, offset) VALUES (1, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,"
            " size = excluded.size, offset = excluded.offset",
            (last.seq, last.hash, size, last.offset),
        )
    journal = db.journal
    if journal is not None:
        journal.mark_synced(None, size)


def _components_of(db: Database) -> list[tuple[str, Sequence[str]]]:
    """The migrations a rebuild of `db` runs: a stack's database gets the per-stack components
    only; the home's gets every component (a home made before stacks had databases of their
    own holds per-stack rows in its ledger, D322)."""
    if is_stack_database(Path(db.path)):
        from hrm.storage.stack_db import stack_components

        return stack_components()
    return [(c, m) for c, m in component_migrations() if c != "storage.stack_db"]


def component_migrations() -> list[tuple[str, Sequence[str]]]:
    """Every component of `COMPONENTS` with its migrations, imported."""
    found: list[tuple[str, Sequence[str]]] = []
    for component, target in COMPONENTS:
        module, _, attribute = target.partition(":")
        found.append((component, getattr(importlib.import_module(module), attribute)))
    return found


def _rebuild_indexes(
    home: HRMHome, progress: Progress | None
) -> tuple[dict[str, int], dict[str, str]]:
    """The derived indexes: every ledger's index entries (in the home's database) and each
    stack's episodic index (in the stack's own database)."""
    from hrm.storage.ledger_index import LedgerIndex
    from hrm.storage.sqlite import Database

    errors: dict[str, str] = {}
    with Database(home.memory_db) as db:
        report = LedgerIndex(db, home=home).rebuild()
        errors.update(report.errors)
        if progress is not None:
            progress("index", report.total)
    for agent_class in home.stack_classes():
        ledger = home.episodic_ledger(agent_class)
        if not ledger.exists():
            continue
        try:
            _rebuild_episodes(home, agent_class)
        except HRMError as exc:
            errors[ledger.relative_to(home.root).as_posix()] = exc.message
    return dict(report.counts), errors


def _rebuild_episodes(home: HRMHome, agent_class: str) -> None:
    from hrm.memory.episodic import EpisodicTraceStore
    from hrm.storage.stack_db import open_stack_db

    with open_stack_db(home, agent_class) as db:
        store = EpisodicTraceStore(db, home, agent_class)
        try:
            store.rebuild_index()
        finally:
            store.close()


# ── files ───────────────────────────────────────────────────────────────────


def _now() -> datetime:
    return datetime.now(UTC)


def _readable(path: Path) -> bool:
    """Whether `path` is a database SQLite can read whole (opened read-only, nothing written)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("PRAGMA quick_check").fetchone()
            return row is not None and row[0] == "ok"
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


# ── comparing ───────────────────────────────────────────────────────────────


def table_dump(
    path: Path, *, exclude_derived: bool = True
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the database at `path`, sorted, for comparing two.

    Read-only. With `exclude_derived`, the tables and columns a rebuild re-derives rather
    than restores (`DERIVED_TABLES`, `DERIVED_COLUMNS`, FTS indexes) are left out; the rowid
    of a rowid table is included, since queries order by it.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        from hrm.storage._journal_sql import journaled_tables, read_shape

        tables = journaled_tables(conn) if exclude_derived else [
            str(r[0]) for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        dump: dict[str, list[tuple[Any, ...]]] = {}
        for table in tables:
            if exclude_derived and table in DERIVED_TABLES:
                continue
            shape = read_shape(conn, table)
            skip = DERIVED_COLUMNS.get(table, ()) if exclude_derived else ()
            columns = [c for c in shape.columns if c not in skip]
            select = (["rowid"] if shape.has_rowid else []) + [quote(c) for c in columns]
            rows = conn.execute(f"SELECT {', '.join(select)} FROM {quote(table)}").fetchall()
            if rows:  # an empty table equals one never made (a rebuild makes every table)
                dump[table] = sorted((tuple(r) for r in rows), key=repr)
        return dump
    finally:
        conn.close()
