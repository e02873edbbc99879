"""Storage: the shared SQLite database, tamper-evident ledgers and the index over them.

Ledgers are the truth and tables are views (ARCHITECTURE §4): `Ledger` appends hash-chained
records that several processes may share, `LedgerIndex` is a rebuildable SQLite index over
them, and `Database` is the one handle every store in a home opens on ``memory.db``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "Database": "hrm.storage.sqlite",
    "wrap_sqlite_error": "hrm.storage.sqlite",
}


def __getattr__(name: str) -> Any:
    # Lazy: the Claude Code hook needs only storage.sqlite, and must start fast.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hrm.storage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
