"""Schema, filter SQL and row decoding of the learnings store: pure code, no connection.

The content table ``learnings`` is the truth; ``learnings_fts`` is an FTS5 index over its
``content``, ``tags`` and ``context`` columns and, since migration 2, the text of each learning's
session neighbours (``nearby``, `hrm.continuity._learnings_nearby`, D340), with porter stemming
over unicode61, accents folded. Triggers keep it in step and fire only when those columns (or a
learning's place in its session) change, so the access bookkeeping a search does never touches
the index. Timestamps are stored as fixed-width
ISO-8601 UTC text, so string order is time order.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hrm._values import Record
from hrm.continuity._learnings_nearby import NEARBY_MIGRATION, NEARBY_WEIGHT, TOKENIZER
from hrm.continuity.learnings_types import (
    ConfidenceLevel,
    Learning,
    LearningType,
    SearchFilters,
    parse_confidence,
    parse_learning_type,
)
from hrm.errors import HRMError

TYPE_CHECKING = False  # on the hook's path: no `typing` at run time
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

__all__ = [
    "COMPONENT",
    "FTS_WEIGHTS",
    "INSERT_LEARNING",
    "LEARNING_COLUMNS",
    "MIGRATIONS",
    "FilterSQL",
    "build_filters",
    "format_ts",
    "learning_params",
    "new_id",
    "parse_ts",
    "row_to_learning",
]

COMPONENT = "continuity.learnings"

_MIGRATION_1_WEIGHTS = (1.0, 0.5, 0.25)
"""Migration 1's BM25 weights (kept as released: migration 2 replaces its index)."""
_MIGRATION_1_RANK = "bm25({}, {}, {})".format(*_MIGRATION_1_WEIGHTS)

FTS_WEIGHTS = (*_MIGRATION_1_WEIGHTS, NEARBY_WEIGHT)
"""BM25 column weights: the learning's own words count most, tags half, context a quarter,
its session neighbours' words `NEARBY_WEIGHT` (D340)."""

_TOKENIZER = TOKENIZER


MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE learnings (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT,
        created_at TEXT NOT NULL,
        accessed_at TEXT NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        content TEXT NOT NULL,
        type TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        confidence TEXT NOT NULL,
        context TEXT,
        expires_at TEXT,
        source TEXT NOT NULL DEFAULT 'user',
        relevance_score REAL NOT NULL DEFAULT 1.0,
        status TEXT NOT NULL DEFAULT 'active',
        pruned_at TEXT,
        preference_class TEXT,
        content_key TEXT NOT NULL
    );
    CREATE INDEX learnings_content_key ON learnings (content_key);
    CREATE INDEX learnings_session ON learnings (session_id, created_at);
    CREATE INDEX learnings_type ON learnings (type, created_at);
    CREATE INDEX learnings_created ON learnings (created_at);
    CREATE INDEX learnings_status ON learnings (status, created_at);
    CREATE TABLE learning_tags (
        tag TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES learnings (seq),
        PRIMARY KEY (tag, seq)
    ) WITHOUT ROWID;
    CREATE VIRTUAL TABLE learnings_fts USING fts5(
        content, tags, context,
        content='learnings', content_rowid='seq', tokenize='{_TOKENIZER}'
    );
    INSERT INTO learnings_fts (learnings_fts, rank)
        VALUES ('rank', '{_MIGRATION_1_RANK}');
    CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
        INSERT INTO learnings_fts (rowid, content, tags, context)
        VALUES (new.seq, new.content, new.tags, new.context);
    END;
    CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
        INSERT INTO learnings_fts (learnings_fts, rowid, content, tags, context)
        VALUES ('delete', old.seq, old.content, old.tags, old.context);
    END;
    CREATE TRIGGER learnings_fts_update AFTER UPDATE OF content, tags, context ON learnings BEGIN
        INSERT INTO learnings_fts (learnings_fts, rowid, content, tags, context)
        VALUES ('delete', old.seq, old.content, old.tags, old.context);
        INSERT INTO learnings_fts (rowid, content, tags, context)
        VALUES (new.seq, new.content, new.tags, new.context);
    END;
    CREATE TABLE learning_vectors (
        vid INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE REFERENCES learnings (seq),
        model_id TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX learning_vectors_model ON learning_vectors (model_id, vid);
    CREATE TABLE artifacts (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        content TEXT NOT NULL,
        session_id TEXT,
        indexed_at TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE artifacts_fts USING fts5(
        path, content, content='artifacts', content_rowid='seq', tokenize='{_TOKENIZER}'
    );
    CREATE TRIGGER artifacts_fts_insert AFTER INSERT ON artifacts BEGIN
        INSERT INTO artifacts_fts (rowid, path, content) VALUES (new.seq, new.path, new.content);
    END;
    CREATE TRIGGER artifacts_fts_delete AFTER DELETE ON artifacts BEGIN
        INSERT INTO artifacts_fts (artifacts_fts, rowid, path, content)
        VALUES ('delete', old.seq, old.path, old.content);
    END;
    CREATE TRIGGER artifacts_fts_update AFTER UPDATE OF path, content ON artifacts BEGIN
        INSERT INTO artifacts_fts (artifacts_fts, rowid, path, content)
        VALUES ('delete', old.seq, old.path, old.content);
        INSERT INTO artifacts_fts (rowid, path, content) VALUES (new.seq, new.path, new.content);
    END;
    """,
    NEARBY_MIGRATION,
)
"""Ordered migrations of the learnings component; never edit a released entry, append."""

LEARNING_COLUMNS = (
    "l.seq, l.id, l.session_id, l.created_at, l.accessed_at, l.access_count, l.content, l.type,"
    " l.tags, l.confidence, l.context, l.expires_at, l.source, l.relevance_score, l.status,"
    " l.pruned_at, l.preference_class"
)


INSERT_LEARNING = (
    "INSERT INTO learnings (id, session_id, created_at, accessed_at, access_count, content, type,"
    " tags, confidence, context, expires_at, source, relevance_score, status, pruned_at,"
    " preference_class, content_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def learning_params(record: dict[str, Any]) -> tuple[Any, ...]:
    """The `INSERT_LEARNING` parameters of a prepared record (tags as a JSON array)."""
    return (
        record["id"],
        record["session_id"],
        record["created_at"],
        record["accessed_at"],
        record["access_count"],
        record["content"],
        record["type"],
        json.dumps(record["tags"]),
        record["confidence"],
        record["context"],
        record["expires_at"],
        record["source"],
        record["relevance_score"],
        record["status"],
        record["pruned_at"],
        record["preference_class"],
        record["content_key"],
    )


def new_id(prefix: str) -> str:
    """A fresh id: ``<prefix>-`` and 20 hex characters of a uuid4."""
    import uuid  # deferred: only writes need an id, and the hook's reads must start fast

    return f"{prefix}-{uuid.uuid4().hex[:20]}"


def format_ts(value: datetime) -> str:
    """Fixed-width ISO-8601 UTC (``2026-01-12T10:30:00.000000Z``): string order is time order."""
    if value.tzinfo is None:
        raise HRMError.validation_failed(
            f"Timestamp {value.isoformat()} has no timezone; pass an aware datetime (UTC)",
            value=value.isoformat(),
        )
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        raise HRMError.validation_failed(
            f"Timestamp {value.isoformat()} is out of range in UTC", value=value.isoformat()
        ) from None
    # Not strftime: glibc writes year 999 as "999", which no longer sorts or parses back.
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def parse_ts(value: str | None) -> datetime | None:
    """Read a stored or exported timestamp back (naive input is taken as UTC)."""
    if value is None or value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value)  # Python 3.11 reads a trailing "Z" as UTC
    except ValueError:
        raise HRMError.validation_failed(
            f"Cannot read timestamp {value!r}; use ISO-8601 like 2026-01-12T10:30:00Z",
            value=value,
        ) from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed if parsed.tzinfo is UTC else parsed.astimezone(UTC)
    except OverflowError:
        raise HRMError.validation_failed(
            f"Timestamp {value!r} is out of range in UTC", value=value
        ) from None


_TYPES = {t.value: t for t in LearningType}
_CONFIDENCES = {c.value: c for c in ConfidenceLevel}


def row_to_learning(row: sqlite3.Row) -> Learning:
    """Decode one row selected with `LEARNING_COLUMNS`."""
    metadata: dict[str, Any] = {
        "source": row["source"],
        "relevance_score": float(row["relevance_score"]),
    }
    if row["preference_class"]:
        metadata["preference_class"] = row["preference_class"]
    created = parse_ts(row["created_at"])
    accessed = parse_ts(row["accessed_at"])
    if created is None or accessed is None:
        raise HRMError.internal(f"Learning {row['id']} has no timestamps", id=row["id"])
    return Learning(
        id=row["id"],
        session_id=row["session_id"],
        created_at=created,
        accessed_at=accessed,
        access_count=int(row["access_count"]),
        content=row["content"],
        type=_TYPES.get(row["type"]) or LearningType(row["type"]),
        tags=[] if row["tags"] in (None, "", "[]") else list(json.loads(row["tags"])),
        confidence=_CONFIDENCES.get(row["confidence"]) or ConfidenceLevel(row["confidence"]),
        context=row["context"],
        expires_at=parse_ts(row["expires_at"]),
        metadata=metadata,
        status=row["status"],
        pruned_at=parse_ts(row["pruned_at"]),
    )


class FilterSQL(Record):
    """A WHERE fragment over alias ``l`` and its bound parameters."""

    _fields = ("clauses", "params", "selective")
    __slots__ = _fields
    clauses: list[str]
    params: list[Any]
    selective: bool
    """Whether a caller filter (type, tag, session, date, confidence) is present."""

    def __init__(
        self,
        clauses: list[str] | None = None,
        params: list[Any] | None = None,
        selective: bool = False,
    ) -> None:
        self._init(
            clauses=[] if clauses is None else clauses,
            params=[] if params is None else params,
            selective=selective,
        )

    @property
    def where(self) -> str:
        """The clauses AND-ed (``1`` when there are none)."""
        return " AND ".join(self.clauses) if self.clauses else "1"


def build_filters(
    filters: SearchFilters | None, *, include_expired: bool, now: datetime
) -> FilterSQL:
    """Translate search filters to SQL; statuses and expiry follow `include_expired`.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for an unknown type or confidence.
    """
    sql = FilterSQL()
    statuses = ["active"]
    if filters is not None and filters.include_pending:
        statuses.append("pending_confirmation")
    if include_expired:
        statuses.extend(("pruned", "superseded"))
    else:
        sql.clauses.append("(l.expires_at IS NULL OR l.expires_at > ?)")
        sql.params.append(format_ts(now))
    sql.clauses.append(f"l.status IN ({', '.join('?' for _ in statuses)})")
    sql.params.extend(statuses)
    if filters is None:
        return sql
    if filters.types:
        types = [parse_learning_type(t).value for t in filters.types]
        sql.clauses.append(f"l.type IN ({', '.join('?' for _ in types)})")
        sql.params.extend(types)
        sql.selective = True
    if filters.tags:
        tags = sorted({t.strip().lower() for t in filters.tags if t.strip()})
        if tags:
            sql.clauses.append(
                f"l.seq IN (SELECT seq FROM learning_tags WHERE tag IN"
                f" ({', '.join('?' for _ in tags)}))"
            )
            sql.params.extend(tags)
            sql.selective = True
    if filters.confidence is not None:
        minimum = parse_confidence(filters.confidence).rank
        allowed = [c.value for c in ConfidenceLevel if c.rank >= minimum]
        sql.clauses.append(f"l.confidence IN ({', '.join('?' for _ in allowed)})")
        sql.params.extend(allowed)
        sql.selective = True
    if filters.date_range is not None:
        start, end = filters.date_range
        if start is not None:
            sql.clauses.append("l.created_at >= ?")
            sql.params.append(format_ts(start))
            sql.selective = True
        if end is not None:
            sql.clauses.append("l.created_at <= ?")
            sql.params.append(format_ts(end))
            sql.selective = True
    if filters.session_id is not None:
        sql.clauses.append("l.session_id = ?")
        sql.params.append(filters.session_id)
        sql.selective = True
    return sql
