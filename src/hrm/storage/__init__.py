"""Storage: the shared SQLite database, tamper-evident ledgers and the index over them.

Ledgers are the truth and tables are views (ARCHITECTURE §4): `Ledger` appends hash-chained
records that several processes may share, `LedgerIndex` is a rebuildable SQLite index over
them, `quarantine_damage` sets a damaged ledger's bad records aside, and `Database` is the one
handle every store in a home opens on ``memory.db``.
"""

from __future__ import annotations

from hrm._lazy import lazy_exports

TYPE_CHECKING = False  # `hrm hook` opens the memory database through here: no `typing`
if TYPE_CHECKING:
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
    from hrm.storage.ledger_quarantine import QuarantineReport, quarantine_damage
    from hrm.storage.sqlite import Database, wrap_sqlite_error

__all__ = [
    "GENESIS_HASH",
    "Database",
    "Durability",
    "IndexEntry",
    "Ledger",
    "LedgerIndex",
    "LedgerRecord",
    "QuarantineReport",
    "ReindexReport",
    "TornTail",
    "VerifyError",
    "VerifyReport",
    "canonical_json",
    "quarantine_damage",
    "record_hash",
    "verify_ledger",
    "wrap_sqlite_error",
]

_LAZY = {
    "GENESIS_HASH": "hrm.storage.ledger",
    "Durability": "hrm.storage.ledger",
    "Ledger": "hrm.storage.ledger",
    "LedgerRecord": "hrm.storage.ledger",
    "TornTail": "hrm.storage.ledger",
    "VerifyError": "hrm.storage.ledger",
    "VerifyReport": "hrm.storage.ledger",
    "canonical_json": "hrm.storage.ledger",
    "record_hash": "hrm.storage.ledger",
    "verify_ledger": "hrm.storage.ledger",
    "IndexEntry": "hrm.storage.ledger_index",
    "LedgerIndex": "hrm.storage.ledger_index",
    "ReindexReport": "hrm.storage.ledger_index",
    "QuarantineReport": "hrm.storage.ledger_quarantine",
    "quarantine_damage": "hrm.storage.ledger_quarantine",
    "Database": "hrm.storage.sqlite",
    "wrap_sqlite_error": "hrm.storage.sqlite",
}

__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
