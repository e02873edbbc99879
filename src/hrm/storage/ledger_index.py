"""A derived SQLite index over ledger records: find records by ledger, kind and time fast.

Ledgers are the truth; this table is a view (ARCHITECTURE §4). It holds, per record, the
ledger's path (relative to the home when inside it), seq, ts, kind, hash and the byte offset of
its line, so a query answers with offsets and `Ledger.read_at` fetches the records themselves.
Nothing here is ever the only copy of anything: `LedgerIndex.rebuild` drops the table and
re-derives it from every ledger in the home, which is the answer to a damaged or deleted index
(`hrm ledger reindex`).

The index also serves as a second anchor: `index_new` resumes from the last indexed record and
first checks that the ledger still holds it (same seq, same hash, same offset), so a ledger cut
or rewritten below what was indexed is reported instead of silently re-indexed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.storage.ledger import Ledger, LedgerRecord, VerifyError

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.storage.sqlite import Database
    from hrm.types import ProgressCallback

__all__ = ["MIGRATIONS", "IndexEntry", "LedgerIndex", "ReindexReport"]

COMPONENT = "storage.ledger_index"

MIGRATIONS = [
    """
    CREATE TABLE IF NOT EXISTS ledger_index (
        path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        ts TEXT NOT NULL,
        kind TEXT NOT NULL,
        hash TEXT NOT NULL,
        byte_offset INTEGER NOT NULL,
        PRIMARY KEY (path, seq)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS ledger_index_kind_ts ON ledger_index (path, kind, ts);
    CREATE INDEX IF NOT EXISTS ledger_index_ts ON ledger_index (path, ts);
    """,
]
"""Schema of the index (component ``storage.ledger_index``); never edit a released entry."""

_BATCH = 5000
_TS_WIDTH = len("2026-01-02T03:04:05.000000Z")  # what hrm writes; other ISO forms are normalised


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One indexed record: enough to find it again with `Ledger.read_at`."""

    path: str
    """The ledger, relative to the home root when inside it."""
    seq: int
    ts: str
    kind: str
    hash: str
    offset: int
    """Byte offset of the record's line in its ledger."""


@dataclass(frozen=True, kw_only=True)
class ReindexReport:
    """What `LedgerIndex.rebuild` did, per ledger."""

    counts: dict[str, int] = field(default_factory=dict)
    """Records indexed per ledger (for a damaged ledger, those before the damage)."""
    errors: dict[str, str] = field(default_factory=dict)
    """Why a ledger could not be indexed completely."""

    @property
    def ok(self) -> bool:
        """True when every ledger was indexed to its end."""
        return not self.errors

    @property
    def total(self) -> int:
        """Records indexed across all ledgers."""
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` output."""
        return {"ok": self.ok, "total": self.total, "counts": self.counts, "errors": self.errors}


class LedgerIndex:
    """The ``ledger_index`` table in a home's ``memory.db``.

    Thread-safe as far as `Database` is. `index_new` commits in batches of a few thousand rows;
    records before a bad one stay indexed, and the next call resumes after them.
    """

    def __init__(self, db: Database, *, home: HRMHome | None = None) -> None:
        """Bind to `db` (migrating the table) and to `home`, the root paths are relative to."""
        self._db = db
        self._root = home.root if home is not None else None
        db.migrate(COMPONENT, MIGRATIONS)

    def key(self, path: str | Path) -> str:
        """The stored name of a ledger: relative to the home root when inside it."""
        candidate = Path(path)
        if not candidate.is_absolute() and self._root is not None:
            candidate = self._root / candidate
        resolved = candidate.absolute()
        if self._root is not None:
            try:
                return resolved.relative_to(self._root).as_posix()
            except ValueError:
                pass
        return resolved.as_posix()

    def index_new(self, ledger: Ledger, *, progress: ProgressCallback | None = None) -> int:
        """Index the records appended since the last indexed one; return how many.

        Args:
            ledger: The ledger to catch up with.
            progress: Called as ``progress(byte_offset, ledger_size)`` after each batch of
                rows committed, and once at the end.

        Raises:
            HRMError: ``LEDGER_CORRUPT`` if the ledger no longer holds the last indexed record
                as indexed (it was cut or rewritten), or a new record is bad.
        """
        key = self.key(ledger.path)
        last = self._last(key)
        size = ledger.size() if progress is not None else 0
        if last is None:
            return self._insert(key, ledger.records(), progress, size)
        try:
            anchor = ledger.read_at(last.offset)
        except HRMError as exc:
            raise HRMError.ledger_corrupt(
                ledger.path, last.seq, last.seq,
                f"record {last.seq} was indexed at offset {last.offset} but is gone "
                f"({exc.message}); the ledger was cut or replaced",
            ) from None
        if anchor.seq != last.seq or anchor.hash != last.hash:
            raise HRMError.ledger_corrupt(
                ledger.path, last.seq, last.seq,
                f"record {last.seq} does not match its index entry: the ledger was rewritten",
            )
        return self._insert(key, ledger.records_after(anchor), progress, size)

    def check(self, ledger: Ledger) -> VerifyError | None:
        """Whether `ledger` still holds the last record indexed from it (a second anchor).

        Returns None when it does (or nothing was indexed), else where and why it does not:
        records the index saw were cut from the ledger or rewritten.
        """
        last = self._last(self.key(ledger.path))
        if last is None:
            return None
        try:
            found: LedgerRecord | None = ledger.read_at(last.offset)
        except HRMError:
            found = None
        if found is not None and (found.seq, found.hash) == (last.seq, last.hash):
            return None
        return VerifyError(
            line=last.seq,
            seq=last.seq,
            reason=(
                f"the index holds record {last.seq} but the ledger no longer does: records "
                "were cut or rewritten (if the ledger is right, run `hrm ledger reindex`)"
            ),
            offset=last.offset,
        )

    def rebuild(
        self, home: HRMHome | None = None, *, progress: ProgressCallback | None = None
    ) -> ReindexReport:
        """Drop the index and re-derive it from every ledger in `home` (default: the bound one).

        A damaged ledger is indexed up to its first bad record and named in the report; the
        others are indexed completely.

        Args:
            home: The home whose ledgers are indexed.
            progress: Called as ``progress(bytes_read, bytes_total)`` over all the ledgers.
        """
        target = home if home is not None else self._home_or_fail()
        if home is not None:
            self._root = home.root
        self._db.execute("DROP TABLE IF EXISTS ledger_index")
        with self._db.transaction():
            self._db.execute("DELETE FROM schema_migrations WHERE component = ?", (COMPONENT,))
        self._db.migrate(COMPONENT, MIGRATIONS)
        report = ReindexReport()
        paths = target.all_ledgers()
        sizes = [_size(path) for path in paths] if progress is not None else [0] * len(paths)
        total, base = sum(sizes), 0
        for path, size in zip(paths, sizes, strict=True):
            key = self.key(path)
            step = None if progress is None else _shifted(progress, base, total)
            with Ledger(path) as ledger:
                try:
                    self.index_new(ledger, progress=step)
                except HRMError as exc:
                    report.errors[key] = str(exc)
            report.counts[key] = self.count(key)
            base += size
            if progress is not None:
                progress(base, total)
        return report

    def query(
        self,
        path: str | Path,
        *,
        kind: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
    ) -> list[IndexEntry]:
        """Indexed records of one ledger in seq order, filtered by kind and ``since <= ts < until``.

        Call `index_new` first to include records appended since the last indexing.
        """
        clauses, params = ["path = ?"], [self.key(path)]
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if since is not None:
            clauses.append("ts >= ?")
            params.append(_ts_bound(since))
        if until is not None:
            clauses.append("ts < ?")
            params.append(_ts_bound(until))
        sql = (
            "SELECT path, seq, ts, kind, hash, byte_offset FROM ledger_index WHERE "
            + " AND ".join(clauses)
            + " ORDER BY seq"
        )
        if limit is not None:
            if limit < 0:
                raise HRMError.validation_failed(f"limit must be >= 0, got {limit}", limit=limit)
            sql += f" LIMIT {int(limit)}"
        return [IndexEntry(*tuple(row)) for row in self._db.execute(sql, params)]

    def search(
        self,
        ledger: Ledger,
        *,
        kind: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
    ) -> list[LedgerRecord]:
        """Bring the index up to date with `ledger`, then return the matching records."""
        self.index_new(ledger)
        entries = self.query(ledger.path, kind=kind, since=since, until=until, limit=limit)
        return [ledger.read_at(entry.offset) for entry in entries]

    def count(self, path: str | Path) -> int:
        """How many records of the ledger at `path` are indexed."""
        row = self._db.one("SELECT COUNT(*) FROM ledger_index WHERE path = ?", (self.key(path),))
        return int(row[0]) if row is not None else 0

    def last(self, path: str | Path) -> IndexEntry | None:
        """The last indexed record of the ledger at `path`."""
        return self._last(self.key(path))

    def _last(self, key: str) -> IndexEntry | None:
        row = self._db.one(
            "SELECT path, seq, ts, kind, hash, byte_offset FROM ledger_index"
            " WHERE path = ? ORDER BY seq DESC LIMIT 1",
            (key,),
        )
        return IndexEntry(*tuple(row)) if row is not None else None

    def _insert(
        self, key: str, records: Any, progress: ProgressCallback | None = None, size: int = 0
    ) -> int:
        total = 0
        batch: list[tuple[str, int, str, str, str, int]] = []
        sql = (
            "INSERT OR REPLACE INTO ledger_index (path, seq, ts, kind, hash, byte_offset)"
            " VALUES (?, ?, ?, ?, ?, ?)"
        )
        try:
            for record in records:
                ts = record.ts if len(record.ts) == _TS_WIDTH else _ts_bound(record.ts)
                batch.append((key, record.seq, ts, record.kind, record.hash, record.offset))
                if len(batch) >= _BATCH:
                    with self._db.transaction():
                        self._db.executemany(sql, batch)
                    total += len(batch)
                    if progress is not None:
                        progress(min(record.offset, size), size)
                    batch = []
        finally:
            # Records before a bad one are still true: keep them indexed.
            if batch:
                with self._db.transaction():
                    self._db.executemany(sql, batch)
                total += len(batch)
        if progress is not None:
            progress(size, size)
        return total

    def _home_or_fail(self) -> HRMHome:
        if self._root is None:
            raise HRMError.validation_failed(
                "LedgerIndex.rebuild needs a home: pass one here or to the constructor"
            )
        from hrm.home import HRMHome

        return HRMHome(self._root)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _shifted(progress: ProgressCallback, base: int, total: int) -> ProgressCallback:
    """`progress` for one ledger of several: its bytes counted after those of the ones before."""

    def report(done: int, _size: int) -> None:
        progress(min(base + done, total), total)

    return report


def _ts_bound(value: datetime | str) -> str:
    """A bound comparable with stored ``ts`` strings (``YYYY-MM-DDTHH:MM:SS.ffffffZ``)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise HRMError.validation_failed(
                f"Not an ISO-8601 time: {value!r}", value=value
            ) from None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    try:
        utc = aware.astimezone(UTC)
    except OverflowError:
        raise HRMError.validation_failed(
            f"Time {value.isoformat()} is out of range in UTC", value=value.isoformat()
        ) from None
    # isoformat, not strftime: glibc writes year 999 as "999", which sorts after "2026".
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
