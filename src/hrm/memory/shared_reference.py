"""The Shared Reference compartment (001 §6.3): versioned, citable facts shared across problems.

Every version is kept (rows ``(agent_class, key, version, value_json, source, created_at)``), so
any earlier value can be read, cited and restored. A rollback never rewrites history: it
appends a new version whose stored JSON is byte-for-byte the old version's. Callers write here
through the write gate (`MemoryBus`); the store itself only enforces shape and scope.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime
from typing import Any

from hrm.errors import HRMError
from hrm.home import parse_agent_class
from hrm.memory.types import (
    SharedReference,
    decode_json,
    encode_json,
    format_timestamp,
    parse_timestamp,
)
from hrm.storage.sqlite import Database
from hrm.types import Clock, system_clock

__all__ = ["MIGRATIONS", "SharedReferenceStore"]

logger = logging.getLogger(__name__)

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS shared_references (
        agent_class TEXT NOT NULL,
        key TEXT NOT NULL,
        version INTEGER NOT NULL,
        value_json TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL,
        rollback_of INTEGER,
        PRIMARY KEY (agent_class, key, version)
    );
    """,
)
"""Schema of component ``memory.shared_reference``; append only, never edit a released entry."""

_COMPONENT = "memory.shared_reference"


class SharedReferenceStore:
    """Versioned, citable cross-problem facts of ONE stack (001 §6.3).

    Thread- and process-safe: a new version is numbered inside a write transaction, so two
    writers never produce the same version.
    """

    def __init__(self, db: Database, agent_class: str, *, clock: Clock = system_clock) -> None:
        """Bind the store to `agent_class` in `db`, creating its table if needed.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an invalid agent class.
        """
        parse_agent_class(agent_class)
        self.db = db
        self.agent_class = agent_class
        self._clock = clock
        db.migrate(_COMPONENT, MIGRATIONS)

    def get(self, key: str, version: int | None = None) -> SharedReference:
        """The latest version of `key`, or the given `version`.

        Raises:
            HRMError: ``NOT_FOUND`` naming the key (and the versions that exist).
        """
        if version is None:
            row = self.db.one(
                "SELECT * FROM shared_references WHERE agent_class = ? AND key = ?"
                " ORDER BY version DESC LIMIT 1",
                (self.agent_class, key),
            )
        else:
            row = self.db.one(
                "SELECT * FROM shared_references WHERE agent_class = ? AND key = ? AND version = ?",
                (self.agent_class, key, version),
            )
        if row is None:
            raise self._missing(key, version)
        return self._build(row, self._first_created(key))

    def set(self, key: str, value: Any, source: str) -> int:
        """Store `value` (scrubbed) as the next version of `key`, and return that version.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an empty key or source, or a value that is not
                JSON data (naming the key and where in the value); nothing is stored then.
        """
        _check_key(key)
        if not isinstance(source, str) or not source.strip():
            raise HRMError.validation_failed(
                f"Shared reference '{key}' needs a non-empty source (who set it)", key=key
            )
        value_json = encode_json(value, what=f"shared reference '{key}'")
        return self._append(key, value_json, source, rollback_of=None)

    def list_versions(self, key: str) -> list[int]:
        """Every version of `key`, ascending; empty when the key was never set."""
        rows = self.db.execute(
            "SELECT version FROM shared_references WHERE agent_class = ? AND key = ?"
            " ORDER BY version",
            (self.agent_class, key),
        )
        return [int(r["version"]) for r in rows]

    def history(self, key: str) -> list[SharedReference]:
        """Every version of `key` with its value, oldest first; empty when never set."""
        rows = self.db.execute(
            "SELECT * FROM shared_references WHERE agent_class = ? AND key = ? ORDER BY version",
            (self.agent_class, key),
        )
        if not rows:
            return []
        first = parse_timestamp(rows[0]["created_at"])
        return [self._build(r, first) for r in rows]

    def values_by_key(self) -> dict[str, list[Any]]:
        """Every key's values, oldest version first, in one read (what was ever said under
        each key: `CognitiveStack.forgotten` reads what a forget took away)."""
        rows = self.db.execute(
            "SELECT key, value_json FROM shared_references WHERE agent_class = ?"
            " ORDER BY key, version",
            (self.agent_class,),
        )
        out: dict[str, list[Any]] = {}
        for row in rows:
            out.setdefault(str(row["key"]), []).append(decode_json(row["value_json"]))
        return out

    def keys(self) -> list[str]:
        """Every key this stack has set, sorted."""
        rows = self.db.execute(
            "SELECT DISTINCT key FROM shared_references WHERE agent_class = ? ORDER BY key",
            (self.agent_class,),
        )
        return [str(r["key"]) for r in rows]

    def latest(self) -> tuple[tuple[str, Any], ...]:
        """Every key with its latest value, sorted by key: the canon as one read.

        One query instead of two a key (`keys` then `get`), cached until the table changes
        or another connection commits; a turn reads its canon several times. Treat the
        values as read-only: they are shared between callers.
        """
        return self.db.cached(
            ("shared_reference.latest", self.agent_class),
            self._load_latest,
            table="shared_references",
        )

    def _load_latest(self) -> tuple[tuple[str, Any], ...]:
        # SQLite takes a bare column of a MAX() aggregate from the row holding the maximum:
        # one pass over the primary key instead of a subquery per version.
        rows = self.db.execute(
            "SELECT key, value_json, MAX(version) FROM shared_references"
            " WHERE agent_class = ? GROUP BY key ORDER BY key",
            (self.agent_class,),
        )
        return tuple((str(r["key"]), decode_json(r["value_json"])) for r in rows)

    def rollback(self, key: str, to_version: int, *, source: str = "rollback") -> bool:
        """Restore the exact value of `to_version` as a new version of `key` (001 §6.3).

        Returns:
            True once the new version is stored; `restore` returns its number instead.

        Raises:
            HRMError: ``NOT_FOUND`` naming the key and its existing versions when `to_version`
                does not exist; nothing changes then.
        """
        self.restore(key, to_version, source=source)
        return True

    def restore(self, key: str, to_version: int, *, source: str = "rollback") -> int:
        """`rollback`, returning the number of the new version.

        The stored JSON is copied byte for byte, so the restored value is exactly the old one.

        Raises:
            HRMError: ``NOT_FOUND`` as `rollback` does.
        """
        with self.db.transaction():
            row = self.db.one(
                "SELECT value_json FROM shared_references"
                " WHERE agent_class = ? AND key = ? AND version = ?",
                (self.agent_class, key, to_version),
            )
            if row is None:
                raise self._missing(key, to_version)
            version = self._append(key, str(row["value_json"]), source, rollback_of=to_version)
        logger.info("shared reference %r rolled back to v%s as v%s", key, to_version, version)
        return version

    def cite(self, key: str) -> str:
        """A citation of the latest version: ``[ref:<key>@v3 by <source>, <updated_at>]``.

        Raises:
            HRMError: ``NOT_FOUND`` when the key was never set.
        """
        ref = self.get(key)
        when = ref.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"[ref:{ref.key}@v{ref.version} by {ref.source}, {when}]"

    # ── internals ──────────────────────────────────────────────────────────

    def _append(self, key: str, value_json: str, source: str, *, rollback_of: int | None) -> int:
        now = format_timestamp(self._clock())
        with self.db.transaction():
            row = self.db.one(
                "SELECT COALESCE(MAX(version), 0) AS v FROM shared_references"
                " WHERE agent_class = ? AND key = ?",
                (self.agent_class, key),
            )
            version = (int(row["v"]) if row is not None else 0) + 1
            self.db.execute(
                "INSERT INTO shared_references"
                " (agent_class, key, version, value_json, source, created_at, rollback_of)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.agent_class, key, version, value_json, source, now, rollback_of),
            )
        return version

    def _first_created(self, key: str) -> datetime:
        row = self.db.one(
            "SELECT created_at FROM shared_references WHERE agent_class = ? AND key = ?"
            " ORDER BY version LIMIT 1",
            (self.agent_class, key),
        )
        if row is None:
            raise self._missing(key, None)
        return parse_timestamp(row["created_at"])

    def _build(self, row: sqlite3.Row, created: datetime) -> SharedReference:
        return SharedReference(
            key=str(row["key"]),
            value=decode_json(row["value_json"]),
            version=int(row["version"]),
            source=str(row["source"]),
            created_at=created,
            updated_at=parse_timestamp(row["created_at"]),
            rollback_of=None if row["rollback_of"] is None else int(row["rollback_of"]),
        )

    def _missing(self, key: str, version: int | None) -> HRMError:
        versions = self.list_versions(key)
        if not versions:
            return HRMError.not_found(
                "shared reference", key, f"it was never set for stack {self.agent_class}"
            )
        return HRMError.not_found(
            "version",
            f"{key}@v{version}",
            f"shared reference '{key}' has versions {', '.join(map(str, versions))}",
        )


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not key.strip():
        raise HRMError.validation_failed(
            f"A shared reference key must be a non-empty string, got {key!r}"
        )
