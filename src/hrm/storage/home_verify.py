"""Verifying a whole home, read-only: every ledger, the manifest, and the databases against both.

`verify_home` is what `hrm ledger verify` runs. It opens every file read-only and creates
none — no temporary file, no SQLite ``-shm`` — so it works on a full disk, and it needs no
``memory.db``: the ledgers, their anchors and the manifest say everything it reports. When
``memory.db`` can be read, two more checks run on it: the ledger index must not hold records
a ledger lost, and the journal's cursor must name a record the memory ledger still holds as it
was (else the database holds changes its ledger does not). The same cursor check runs on every
stack's own database against its own memory ledger (D320). A database that cannot be opened
is a warning, never a reason not to verify the ledgers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.storage.journal import memory_ledger_path
from hrm.storage.ledger import Ledger, VerifyReport
from hrm.storage.manifest import ManifestProblem, read_manifest, verify_manifest

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.types import ProgressCallback

__all__ = ["HomeReport", "verify_home"]


@dataclass(frozen=True, kw_only=True)
class HomeReport:
    """What `verify_home` found."""

    ledgers: list[VerifyReport] = field(default_factory=list)
    problems: list[ManifestProblem] = field(default_factory=list)
    """Findings across ledgers: the manifest, the index, the journal's cursor."""

    @property
    def ok(self) -> bool:
        """No ledger failed and no problem (warnings aside) was found."""
        return all(r.ok for r in self.ledgers) and not any(
            not p.warning for p in self.problems
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "ok": self.ok,
            "ledgers": [r.to_dict() for r in self.ledgers],
            "problems": [p.to_dict() for p in self.problems],
        }


def verify_home(
    home: HRMHome,
    *,
    paths: list[Path] | None = None,
    progress: ProgressCallback | None = None,
    on_ledger: Callable[[Path], None] | None = None,
) -> HomeReport:
    """Verify the home's ledgers (or only `paths`), read-only.

    With `paths` None, the manifest and the creation records are checked too: a ledger they
    name that is missing, or that ends before its committed head, is a problem. `progress` is
    told the bytes checked across all the ledgers; `on_ledger` each ledger as it starts.
    """
    targets = home.all_ledgers() if paths is None else paths
    try:
        heads = read_manifest(home.root) or {}
    except (ValueError, KeyError, TypeError, OSError):
        heads = {}
    reports: list[VerifyReport] = []
    tails: dict[str, tuple[int, str, dict[int, str]]] = {}
    sizes = [_size(path) for path in targets] if progress is not None else []
    for number, path in enumerate(targets):
        if on_ledger is not None:
            on_ledger(path)
        with Ledger(path, read_only=True) as ledger:
            report = ledger.verify(progress=_across(progress, sizes, number))
            reports.append(report)
            name = _relative(path, home)
            if name is not None and report.ok:
                head = heads.get(name)
                at: dict[int, str] = {}
                if head is not None and head.seq <= report.last_seq:
                    found = _hash_of(ledger, head.seq, head.end)
                    if found is not None:
                        at[head.seq] = found
                tails[name] = (report.last_seq, report.last_hash, at)
            elif name is not None:
                tails[name] = (report.last_seq, report.last_hash, {})
    problems: list[ManifestProblem] = []
    if paths is None:
        problems.extend(verify_manifest(home.root, tails))
    problems.extend(_check_database(home, reports))
    return HomeReport(ledgers=reports, problems=problems)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _across(
    progress: ProgressCallback | None, sizes: list[int], number: int
) -> ProgressCallback | None:
    """The callback for ledger `number` of several, counting the bytes of those before it."""
    if progress is None:
        return None
    base, total = sum(sizes[:number]), sum(sizes)

    def report(done: int, _size: int) -> None:
        progress(min(base + done, total), total)

    return report


def _relative(path: Path, home: HRMHome) -> str | None:
    try:
        return path.relative_to(home.root).as_posix()
    except ValueError:
        return None


def _hash_of(ledger: Ledger, seq: int, end: int) -> str | None:
    """The hash of record `seq`: where the manifest says it ends, else found by a scan."""
    at = ledger._hash_at(end) if end > 0 else None
    if at is not None and at[0] == seq:
        return at[1].decode()
    try:
        for record in ledger.records(start_seq=seq):
            return record.hash if record.seq == seq else None
    except HRMError:
        return None
    return None


def _check_database(home: HRMHome, reports: list[VerifyReport]) -> list[ManifestProblem]:
    """The index and each database's journal cursor against the ledgers, where it reads: the
    home's ``memory.db`` and every stack's own (D320)."""
    found: list[ManifestProblem] = []
    for database in home.memory_databases():
        found.extend(_check_one(database, home, reports))
    return found


def _check_one(
    database: Path, home: HRMHome, reports: list[VerifyReport]
) -> list[ManifestProblem]:
    name = _relative(database, home) or str(database)
    # Without a WAL (the last connection closed cleanly) the file is all there is: opened
    # immutable, SQLite makes no -wal or -shm beside it. With one, another process is using
    # the database and its -shm exists already.
    wal = database.with_name(database.name + "-wal").exists()
    mode = "mode=ro" if wal else "immutable=1"
    try:
        conn = sqlite3.connect(f"file:{database}?{mode}", uri=True)
    except sqlite3.Error as exc:
        return [ManifestProblem(name, f"cannot be opened ({exc}); not checked", True)]
    try:
        return _check_index(conn, home, reports) + _check_cursor(conn, database, home, reports)
    except sqlite3.Error as exc:
        return [ManifestProblem(
            name, f"cannot be read ({exc}); the ledgers verify without it — rebuild it "
            "with `hrm ledger reindex`", True,
        )]
    finally:
        conn.close()


def _check_index(
    conn: sqlite3.Connection, home: HRMHome, reports: list[VerifyReport]
) -> list[ManifestProblem]:
    """A ledger that ends before the last record the index holds of it lost records."""
    try:
        rows = conn.execute("SELECT path, MAX(seq) FROM ledger_index GROUP BY path").fetchall()
    except sqlite3.OperationalError:
        return []  # no index yet
    indexed = {str(r[0]): int(r[1]) for r in rows}
    problems = []
    for report in reports:
        name = _relative(report.path, home)
        if name is None or not report.ok or name not in indexed:
            continue
        if indexed[name] > report.last_seq:
            problems.append(ManifestProblem(
                name, f"ends at seq {report.last_seq} but the home's index holds seq "
                f"{indexed[name]}: records were cut from the end",
            ))
    return problems


def _check_cursor(
    conn: sqlite3.Connection, database: Path, home: HRMHome, reports: list[VerifyReport]
) -> list[ManifestProblem]:
    try:
        row = conn.execute("SELECT seq, hash FROM journal_cursor WHERE id = 1").fetchone()
    except sqlite3.OperationalError:
        return []
    if row is None or int(row[0]) == 0:
        return []
    path = memory_ledger_path(database)
    name = _relative(path, home) or str(path)
    db_name = _relative(database, home) or str(database)
    seq, digest = int(row[0]), str(row[1])
    if not path.exists():
        return [ManifestProblem(
            name, f"is missing, but {db_name} has applied its record {seq}: the database "
            "holds changes no ledger does",
        )]
    report = next((r for r in reports if r.path == path), None)
    if report is None or not report.ok:
        return []
    if seq > report.last_seq:
        return [ManifestProblem(
            name, f"{db_name} has applied record {seq}, but its memory ledger ends at seq "
            f"{report.last_seq}: the database holds changes its ledger lost",
        )]
    with Ledger(path, read_only=True) as ledger:
        found = _hash_of(ledger, seq, 0)
    if found != digest:
        return [ManifestProblem(
            name, f"record {seq} is not the one {db_name} applied: the ledger was rewritten",
        )]
    return []
