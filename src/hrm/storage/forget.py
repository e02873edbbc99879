"""Forgetting for real: a text leaves every store under the home, and the chains still verify.

`forget(home, texts)` is what `hrm memory erase TEXT` and `hrm memory forget` come down to
(D184, D450); "Forget that I live in Lisbon" in conversation retracts instead (D77). In order:

1. Every database (the home's ``memory.db`` and each stack's own, D320): every row holding a
   text has it replaced by `MARKER` (a learning is deleted, with its tags and vectors; a row
   whose key holds the text is deleted), with ``secure_delete`` on, so SQLite zeroes the freed
   bytes. The journal writes these changes to the database's memory ledger as it writes any
   change.
2. Every ledger of the home is redacted in place (`hrm.storage.redaction`), the memory ledger
   while holding the database's write lock (so no journal append interleaves); copies a
   quarantine set aside are rewritten too. The indexes that point into rewritten ledgers by
   offset are re-derived.
3. FTS5 indexes are optimized (merged into one segment, so no old segment keeps a deleted
   row's terms), the WAL is checkpointed with TRUNCATE, and if the text still shows in the
   database's bytes (a page freed before ``secure_delete`` was on), it is vacuumed.
4. Every other file under the home: ``cache/`` is emptied (derived, safe to delete), handoffs
   and other text files are rewritten with the marker, anything else has the text's bytes
   overwritten.

The texts themselves are never written anywhere, not even as hashes. What could not be done —
a WAL another process holds open — is reported, not hidden.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.storage._journal_sql import DERIVED_TABLES, FORGET_RULES, quote, read_shape
from hrm.storage.journal import is_stack_database
from hrm.storage.redaction import (
    LedgerRedaction,
    Needles,
    redact_copy,
    redact_ledger,
    redact_value,
)
from hrm.types import Clock, system_clock

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.storage.sqlite import Database

__all__ = ["ForgetReport", "forget", "residue"]

logger = logging.getLogger(__name__)

_SKIP_TABLES = frozenset({"schema_migrations", "journal_cursor", "ledger_index", "stack_budget"})
_TEXT_SUFFIXES = frozenset({".yaml", ".yml", ".md", ".txt", ".log", ".json", ".jsonl", ".toml"})


@dataclass(frozen=True, kw_only=True)
class ForgetReport:
    """What `forget` changed. It names places and counts, never the forgotten text."""

    rows: dict[str, int] = field(default_factory=dict)
    """Per table: rows rewritten or deleted."""
    ledgers: dict[str, list[int]] = field(default_factory=dict)
    """Per ledger (relative path): the seqs of the records redacted."""
    files: list[str] = field(default_factory=list)
    """Other files rewritten (handoffs, logs, quarantine copies)."""
    removed: list[str] = field(default_factory=list)
    """Derived files deleted (the cache)."""
    remaining: list[str] = field(default_factory=list)
    """Where the text could not be removed, and why."""

    @property
    def ok(self) -> bool:
        """Whether no byte of the text is known to remain."""
        return not self.remaining

    @property
    def found(self) -> bool:
        """Whether the text was found anywhere."""
        return bool(self.rows or self.ledgers or self.files)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "ok": self.ok, "rows": self.rows, "ledgers": self.ledgers, "files": self.files,
            "removed": self.removed, "remaining": self.remaining,
        }


def forget(
    home: HRMHome,
    texts: Sequence[str],
    *,
    db: Database | None = None,
    reason: str = "forget",
    clock: Clock = system_clock,
) -> ForgetReport:
    """Remove every occurrence of `texts` from every store under `home`.

    Args:
        home: The home.
        texts: What to forget (each at least `MIN_TEXT` characters), matched without regard
            to case.
        db: The home's open database, when the caller has one (the turn loop); else it is
            opened and closed here.
        reason: Recorded in each redaction record (e.g. ``"forget"``, ``"learning lrn-…"``).
        clock: Time of the redaction records.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for a text too short to forget safely.
    """
    needles = Needles(texts)
    report = ForgetReport()
    with contextlib.ExitStack() as opened:
        handles = _databases(home, db, opened)
        for handle in handles.values():
            _forget_rows(handle, needles, report)
        _forget_ledgers(home, handles, needles, report, reason, clock)
        for path, handle in handles.items():
            _compact(handle, path, home, needles, report)
    _forget_files(home, needles, report)
    return report


def _databases(
    home: HRMHome, db: Database | None, opened: contextlib.ExitStack
) -> dict[Path, Database]:
    """Every database of the home, by path: the home's (`db` when given) and each stack's own
    (D320); those opened here close with `opened`."""
    from hrm.storage.sqlite import Database

    handles: dict[Path, Database] = {}
    for path in [home.memory_db, *home.memory_databases()]:
        if path in handles:
            continue
        if path == home.memory_db and db is not None:
            handles[path] = db
        else:
            handles[path] = opened.enter_context(Database(path))
    return handles


# ── memory.db ───────────────────────────────────────────────────────────────


def _forget_rows(db: Database, needles: Needles, report: ForgetReport) -> None:
    with db.transaction() as conn:
        conn.execute("PRAGMA secure_delete = ON")
        for table in _text_tables(conn):
            count = _forget_table(conn, table, needles)
            if count:
                report.rows[table] = report.rows.get(table, 0) + count
    db._epoch += 1  # every cached read may hold a changed row


def _text_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [str(r[0]) for r in rows if str(r[1] or "").upper().startswith("CREATE VIRTUAL")]
    return sorted(
        str(name) for name, sql in rows
        if not name.startswith("sqlite_")
        and name not in _SKIP_TABLES
        and name not in virtual
        and not any(name.startswith(v + "_") for v in virtual)
    )


def _forget_table(conn: sqlite3.Connection, table: str, needles: Needles) -> int:
    shape = read_shape(conn, table)
    columns = list(shape.columns)
    if not columns:
        return 0
    patterns = needles.like_patterns()
    where = " OR ".join(
        f"CAST({quote(c)} AS TEXT) LIKE ? ESCAPE '\\'" for c in columns for _ in patterns
    )
    params = [p for _ in columns for p in patterns]
    key = ["rowid"] if shape.has_rowid else [quote(k) for k in shape.key]
    select = ", ".join(key + [quote(c) for c in columns])
    found = conn.execute(f"SELECT {select} FROM {quote(table)} WHERE {where}", params).fetchall()
    for row in found:
        ident = tuple(row[: len(key)])
        values = dict(zip(columns, row[len(key) :], strict=True))
        in_key = any(
            isinstance(values.get(k), str) and needles.pattern.search(values[k])
            for k in shape.key if k != "rowid"
        )
        if table in FORGET_RULES or table in DERIVED_TABLES or in_key:
            _delete_row(conn, table, shape.key, values, key, ident)
            continue
        changed = {
            c: redact_value(v, needles) for c, v in values.items()
            if isinstance(v, str) and needles.pattern.search(v)
        }
        if changed:
            sets = ", ".join(f"{quote(c)} = ?" for c in changed)
            match = " AND ".join(f"{k} = ?" for k in key)
            conn.execute(
                f"UPDATE {quote(table)} SET {sets} WHERE {match}", [*changed.values(), *ident]
            )
    return len(found)


def _delete_row(
    conn: sqlite3.Connection,
    table: str,
    pk: tuple[str, ...],
    values: dict[str, Any],
    key: list[str],
    ident: tuple[Any, ...],
) -> None:
    """Delete one row, and first the rows of its child tables that name it (`FORGET_RULES`)."""
    for child in FORGET_RULES.get(table, ()):
        column = pk[0]
        with contextlib.suppress(sqlite3.OperationalError):  # a child table not made yet
            conn.execute(
                f"DELETE FROM {quote(child)} WHERE {quote(column)} = ?", (values[column],)
            )
    match = " AND ".join(f"{k} = ?" for k in key)
    conn.execute(f"DELETE FROM {quote(table)} WHERE {match}", ident)


def _compact(
    db: Database, path: Path, home: HRMHome, needles: Needles, report: ForgetReport
) -> None:
    """Leave no copy in FTS segments, freed pages or the WAL (vacuum as the last resort)."""
    with db.transaction() as conn:
        conn.execute("PRAGMA secure_delete = ON")
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND sql LIKE 'CREATE VIRTUAL%fts5%'"
        ).fetchall():
            conn.execute(f"INSERT INTO {quote(name)} ({quote(name)}) VALUES ('optimize')")
    name = path.relative_to(home.root).as_posix()
    if not _checkpoint(db, name, report):
        return
    if residue(path, needles):
        with db._lock:
            db._conn.execute("PRAGMA secure_delete = ON")
            db._conn.execute("VACUUM")
        journal = db.journal
        if journal is not None:
            journal.resnapshot()  # VACUUM may renumber rowids the ledger names rows by
        _checkpoint(db, name, report)
        if residue(path, needles):
            report.remaining.append(f"{name}: the text is still in the database file")


def _checkpoint(db: Database, name: str, report: ForgetReport) -> bool:
    if db.path == ":memory:":
        return False
    with db._lock:
        busy = db._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy is not None and busy[0]:
        report.remaining.append(
            f"{name}-wal: another process is reading the database; the text leaves the WAL "
            "when it closes (run the forget again then)"
        )
        return False
    return True


def residue(path: Path, needles: Needles) -> list[Path]:
    """The files among `path` and its ``-wal``/``-shm`` whose bytes still hold a text."""
    found = []
    for suffix in ("", "-wal", "-shm"):
        candidate = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            if needles.in_bytes(candidate.read_bytes()):
                found.append(candidate)
    return found


# ── ledgers ─────────────────────────────────────────────────────────────────


def _forget_ledgers(
    home: HRMHome,
    handles: dict[Path, Database],
    needles: Needles,
    report: ForgetReport,
    reason: str,
    clock: Clock,
) -> None:
    from hrm.storage.journal import memory_ledger_path

    journaled = {memory_ledger_path(path): db for path, db in handles.items()}
    rewritten: list[LedgerRedaction] = []
    for path in home.all_ledgers():
        db = journaled.get(path)
        if db is not None:
            # Under the database's write lock: no journal append can come in between, and
            # the cursor moves with the rewrite.
            with db.transaction():
                done = redact_ledger(path, needles, reason=reason, clock=clock)
                journal = db.journal
                if done is not None and journal is not None:
                    journal.after_rewrite()
        else:
            done = redact_ledger(path, needles, reason=reason, clock=clock)
        if done is not None:
            rewritten.append(done)
            report.ledgers[path.relative_to(home.root).as_posix()] = done.seqs
    for copy in _ledger_copies(home):
        if redact_copy(copy, needles):
            report.files.append(copy.relative_to(home.root).as_posix())
    if rewritten:
        _reindex(home, handles, [r.path for r in rewritten])


def _ledger_copies(home: HRMHome) -> list[Path]:
    found: list[Path] = []
    for tier in ("HOT", "HO2", "HO1"):
        base = home.root / tier / "ledger"
        if base.is_dir():
            found.extend(p for p in base.rglob("*.quarantined-*") if p.is_file())
    return sorted(found)


def _reindex(home: HRMHome, handles: dict[Path, Database], paths: list[Path]) -> None:
    """Re-derive what points into the rewritten ledgers by byte offset."""
    from hrm.errors import HRMError
    from hrm.storage.ledger import Ledger
    from hrm.storage.ledger_index import LedgerIndex

    db = handles[home.memory_db]
    index = LedgerIndex(db, home=home)
    with db.transaction():
        for path in paths:
            db.execute("DELETE FROM ledger_index WHERE path = ?", (index.key(path),))
    for handle in handles.values():
        # The episodic index re-reads its ledgers from the start on their next open.
        with handle.transaction():
            for table in ("episode_index_state", "episodes", "episode_tags"):
                with contextlib.suppress(HRMError):  # not made yet in this database
                    handle.execute(f"DELETE FROM {table}")
    for path in paths:
        with Ledger(path, read_only=True) as ledger:
            index.index_new(ledger)


# ── other files ─────────────────────────────────────────────────────────────


def _forget_files(home: HRMHome, needles: Needles, report: ForgetReport) -> None:
    cache = home.cache_dir
    for path in sorted(home.root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(home.root).as_posix()
        if _is_handled(path, home):
            continue
        if path.is_relative_to(cache):
            path.unlink()  # derived, safe to delete: whatever it was made from may be gone
            report.removed.append(rel)
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            report.remaining.append(f"{rel}: {exc.strerror}")
            continue
        if path.suffix in (".yaml", ".yml") and _forget_yaml(path, raw, needles):
            report.files.append(rel)
            continue
        if not needles.in_bytes(raw):
            continue
        _rewrite_file(path, raw, needles)
        report.files.append(rel)


def _is_handled(path: Path, home: HRMHome) -> bool:
    """Files the steps before handle: ledgers, their sidecars, the live databases."""
    name = path.name
    live = name in ("memory.db", "memory.db-wal", "memory.db-shm")
    if live and (path.parent == home.root or is_stack_database(path.with_name("memory.db"))):
        return True
    return any(
        path.is_relative_to(home.root / tier / "ledger")
        and (name.endswith(".jsonl") or name.endswith(".anchor") or ".quarantined-" in name
             or name in ("manifest.json", "manifest.lock"))
        for tier in ("HOT", "HO2", "HO1")
    )


def _forget_yaml(path: Path, raw: bytes, needles: Needles) -> bool:
    """A YAML file (a handoff) whose strings hold a text, folded across lines or not."""
    import yaml

    from hrm._yaml import safe_load

    try:
        doc = safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return False
    redacted = redact_value(doc, needles)
    if redacted is doc:
        return False
    text = yaml.safe_dump(redacted, sort_keys=False, allow_unicode=True, width=1 << 20)
    _write_like(path, text.encode("utf-8"))
    return True


def _rewrite_file(path: Path, raw: bytes, needles: Needles) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and path.suffix in _TEXT_SUFFIXES:
        data = needles.sub(text).encode("utf-8")
    else:  # binary (a database moved aside): overwrite the bytes, keep the structure
        data = needles.byte_pattern.sub(lambda m: b"x" * len(m.group()), raw)
    _write_like(path, data)


def _write_like(path: Path, data: bytes) -> None:
    temp = path.with_name(path.name + ".forget-tmp")
    mode = path.stat().st_mode & 0o777
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(temp, mode)
    os.replace(temp, path)
