"""Storage: the shared SQLite database, tamper-evident ledgers and the index over them.

Ledgers are the truth and tables are views (ARCHITECTURE §4): `Ledger` appends hash-chained
records that several processes may share, `LedgerIndex` is a rebuildable SQLite index over
them, and `Database` is the one handle every store in a home opens on ``memory.db``.
"""

from hrm.storage.ledger import (
    GENESIS_HASH,
    Durability,
    Ledger,
    LedgerRecord,
    TornTail,
    VerifyError,
    VerifyReport,
    canonical_json,
    record_hash,
    verify_ledger,
)
from hrm.storage.ledger_index import IndexEntry, LedgerIndex, ReindexReport
from hrm.storage.sqlite import Database, wrap_sqlite_error

__all__ = [
    "GENESIS_HASH",
    "Database",
    "Durability",
    "IndexEntry",
    "Ledger",
    "LedgerIndex",
    "LedgerRecord",
    "ReindexReport",
    "TornTail",
    "VerifyError",
    "VerifyReport",
    "canonical_json",
    "record_hash",
    "verify_ledger",
    "wrap_sqlite_error",
]
