"""The write path of the learnings repository: validate, scrub, de-duplicate, insert.

`LearningsRepository.store_learning` and `LearningsRepository.import_` share the row preparation
(`_prepare`: type and confidence parsing, secret scrubbing, the preference truth model) and the
inserts, so both live here, as functions over the repository. Only ``hrm memory learn`` and
``hrm memory import`` write; the `hrm hook` process only recalls, so the repository imports this
module on first write and the hook never loads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hrm.continuity import _fts
from hrm.continuity._corrections import Closeness, compare, typo_jaccard
from hrm.continuity._learnings_sql import (
    INSERT_LEARNING,
    format_ts,
    learning_params,
    new_id,
    parse_ts,
)

# The public module owns the near-duplicate threshold and the logger (log records keep its name).
from hrm.continuity.learnings import CORRECTION_JACCARD, NEAR_DUPLICATE_JACCARD, _logger
from hrm.continuity.learnings_types import (
    ConfidenceLevel,
    LearningId,
    LearningInput,
    LearningType,
    parse_confidence,
    parse_learning_type,
)
from hrm.errors import HRMError
from hrm.scrubbing import scrub_text

TYPE_CHECKING = False  # as in `learnings`: type-only imports cost nothing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime
    from typing import Any

    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import Learning
    from hrm.home import HRMHome
    from hrm.storage.forget import ForgetReport
    from hrm.types import ProgressCallback

__all__ = ["LearningForgotten", "forget_learning", "import_learnings", "store_learning"]

_IMPORT_CHUNK = 5000
_SQL_IN_CHUNK = 500


# ── store ───────────────────────────────────────────────────────────────────


def store_learning(repo: LearningsRepository, learning: LearningInput) -> LearningId:
    """`LearningsRepository.store_learning`: validate, scrub, de-duplicate, store one learning."""
    record = _prepare(repo, learning)
    close = _find_close(repo, record["content"])
    if close is not None and close.closeness is Closeness.REPEAT:
        raise HRMError.duplicate_detected(close.id)
    vector = repo._embed_one(record["content"])
    with repo._db.transaction():
        again = _exact_duplicate(repo, record["content_key"])
        if again is not None:
            raise HRMError.duplicate_detected(again)
        seq = _insert(repo, record)
        if vector is not None:
            repo._insert_vector(seq, vector)
        if close is not None:
            _supersede(repo, close.id)
    stored_at = parse_ts(record["created_at"])
    _logger().debug("stored learning %s (%s)", record["id"], record["type"])
    return LearningId(id=record["id"], stored_at=stored_at or repo._clock())


def _supersede(repo: LearningsRepository, old_id: str) -> None:
    """Take a corrected learning out of search; it stays stored, marked ``superseded``."""
    repo._db.execute(
        "UPDATE learnings SET status = 'superseded' WHERE id = ? AND status != 'pruned'",
        (old_id,),
    )
    _logger().info("learning %s superseded by a correction", old_id)


def _prepare(
    repo: LearningsRepository, learning: LearningInput, *, now: datetime | None = None
) -> dict[str, Any]:
    content = learning.content
    if not isinstance(content, str):
        raise HRMError.validation_failed(
            f"Learning content must be text, got {type(content).__name__}", field="content"
        )
    if not content.strip():
        raise HRMError.validation_failed(
            "Learning content is empty; pass the text to remember", field="content"
        )
    kind = parse_learning_type(learning.type)
    confidence = parse_confidence(learning.confidence)
    tags = _normalise_tags(learning.tags)
    text = scrub_text(content.strip())
    status, preference_class = "active", None
    if kind is LearningType.USER_PREFERENCE:
        status, preference_class = _classify_preference(repo, text, learning.source)
        if preference_class in ("INFERRED_SILENT", "BEHAVIORAL"):
            confidence = ConfidenceLevel.LOW
            tags = _normalise_tags([*tags, "inferred"])
    stamp = format_ts(now or repo._clock())
    return {
        "id": new_id("lrn"),
        "session_id": scrub_text(learning.session_id) if learning.session_id else None,
        "created_at": stamp,
        "accessed_at": stamp,
        "access_count": 0,
        "content": text,
        "type": kind.value,
        "tags": tags,
        "confidence": confidence.value,
        "context": scrub_text(learning.context) if learning.context else None,
        "expires_at": format_ts(learning.expires_at) if learning.expires_at else None,
        "source": scrub_text(learning.source) if learning.source else learning.source,
        "relevance_score": 1.0,
        "status": status,
        "pruned_at": None,
        "preference_class": preference_class,
        "content_key": _fts.content_key(text),
    }


def _classify_preference(
    repo: LearningsRepository, text: str, source: str
) -> tuple[str, str | None]:
    """Apply 001 §12.4: explicit → active; confirm-required → pending; else LOW + inferred."""
    classifier = repo._preference_classifier
    if classifier is None:
        try:
            from hrm.config import PolicySurface
            from hrm.governance.preferences import PreferenceClassifier
        except ImportError:
            # Fail closed: without the truth model nothing becomes canon unconfirmed.
            _logger().warning(
                "preference classifier unavailable; learning held for confirmation"
            )
            return "pending_confirmation", "INFERRED_CONFIRM_REQUIRED"
        classifier = repo._preference_classifier = PreferenceClassifier(PolicySurface())
    verdict = classifier.classify(text, source=source)
    name = str(getattr(verdict.preference_class, "name", verdict.preference_class)).upper()
    if name == "EXPLICIT":
        return "active", name
    if name == "INFERRED_CONFIRM_REQUIRED":
        return "pending_confirmation", name
    return "active", name


def _exact_duplicate(repo: LearningsRepository, key: str) -> str | None:
    row = repo._db.one(
        "SELECT id FROM learnings WHERE content_key = ?"
        " AND status NOT IN ('pruned', 'superseded') LIMIT 1",
        (key,),
    )
    return None if row is None else str(row["id"])


@dataclass(frozen=True, slots=True)
class _Close:
    """A stored learning close to a new one, and whether the new one repeats or corrects it."""

    id: str
    closeness: Closeness


def _find_close(repo: LearningsRepository, content: str) -> _Close | None:
    """The stored learning `content` repeats or corrects, if any (D234).

    A repeat: the same normalised text, or a word set at least `NEAR_DUPLICATE_JACCARD` alike
    (a typo counting as the same word) that says the same thing. A correction: a word set at
    least `CORRECTION_JACCARD` alike that differs in a negation, a number or a value swapped
    for its opposite. A learning with another word replaced is neither: it is stored beside.
    """
    exact = _exact_duplicate(repo, _fts.content_key(content))
    if exact is not None:
        return _Close(exact, Closeness.REPEAT)
    words = _fts.token_set(content)
    searchable = sorted(w for w in words if w.strip("_"))
    if len(searchable) < 4:
        return None  # short texts: only an exact (normalised) match is a duplicate
    # Candidates hold one of the rarest words (`plan_terms`), which keeps the check's cost
    # independent of how many rows share the common ones; any of them, not all, so that a
    # typo or the replaced word of a correction does not hide the stored learning.
    plan = repo._plan(_fts.query_terms(content))
    rows = repo._db.execute(
        "SELECT l.id, l.content FROM learnings_fts CROSS JOIN learnings l"
        " ON l.seq = learnings_fts.rowid WHERE learnings_fts MATCH ?"
        " AND l.status NOT IN ('pruned', 'superseded') ORDER BY learnings_fts.rank LIMIT 20",
        (_fts.match_any(searchable if plan.all_common else plan.ranked),),
    )
    for row in rows:
        stored = _fts.token_set(row["content"])
        alike = typo_jaccard(words, stored)
        if alike < CORRECTION_JACCARD:
            continue
        closeness = compare(words, stored)
        if closeness is Closeness.CORRECTION:
            return _Close(str(row["id"]), closeness)
        if closeness is Closeness.REPEAT and alike >= NEAR_DUPLICATE_JACCARD:
            return _Close(str(row["id"]), closeness)
    return None


def _insert(repo: LearningsRepository, record: dict[str, Any]) -> int:
    rows = repo._db.execute(INSERT_LEARNING + " RETURNING seq", learning_params(record))
    seq = int(rows[0]["seq"])
    if record["tags"]:
        repo._db.executemany(
            "INSERT OR IGNORE INTO learning_tags (tag, seq) VALUES (?, ?)",
            [(tag, seq) for tag in record["tags"]],
        )
    return seq


def _insert_many(repo: LearningsRepository, records: list[dict[str, Any]]) -> None:
    """Bulk insert (one statement, many rows) inside the caller's transaction."""
    repo._db.executemany(INSERT_LEARNING, [learning_params(r) for r in records])
    tagged = {r["id"]: r["tags"] for r in records if r["tags"]}
    ids = list(tagged)
    for start in range(0, len(ids), _SQL_IN_CHUNK):
        part = ids[start : start + _SQL_IN_CHUNK]
        rows = repo._db.execute(
            f"SELECT seq, id FROM learnings WHERE id IN ({', '.join('?' for _ in part)})",
            part,
        )
        repo._db.executemany(
            "INSERT OR IGNORE INTO learning_tags (tag, seq) VALUES (?, ?)",
            [(tag, int(r["seq"])) for r in rows for tag in tagged[r["id"]]],
        )


# ── import ──────────────────────────────────────────────────────────────────


def import_learnings(
    repo: LearningsRepository,
    items: Sequence[dict[str, Any]],
    progress: ProgressCallback | None = None,
) -> tuple[int, int]:
    """`LearningsRepository.import_`: validate every item, then insert the new ones in bulk."""
    records = [_record_from_item(repo, i, item) for i, item in enumerate(items)]
    imported = skipped = 0
    seen_keys: set[str] = set()
    seen_ids: set[str] = set()
    for start in range(0, len(records), _IMPORT_CHUNK):
        chunk = records[start : start + _IMPORT_CHUNK]
        with repo._db.transaction():
            stored_keys, stored_ids = _stored(repo, chunk)
            fresh: list[dict[str, Any]] = []
            corrected: list[tuple[dict[str, Any], str]] = []
            for record in chunk:
                key, learning_id = record["content_key"], record["id"]
                known = key in seen_keys or key in stored_keys
                if known or learning_id in seen_ids or learning_id in stored_ids:
                    skipped += 1
                    continue
                close = _find_close(repo, record["content"])
                if close is not None and close.closeness is Closeness.REPEAT:
                    skipped += 1
                    continue
                if close is not None:
                    corrected.append((record, close.id))
                seen_keys.add(key)
                seen_ids.add(learning_id)
                fresh.append(record)
            _insert_many(repo, fresh)
            _settle_corrections(repo, corrected)
            imported += len(fresh)
        if progress is not None:
            progress(start + len(chunk), len(records))
    return imported, skipped


def _settle_corrections(
    repo: LearningsRepository, corrected: list[tuple[dict[str, Any], str]]
) -> None:
    """Of each imported correction and the learning it corrects, the older is superseded."""
    for record, old_id in corrected:
        row = repo._db.one("SELECT created_at FROM learnings WHERE id = ?", (old_id,))
        if row is not None and str(row["created_at"]) > record["created_at"]:
            _supersede(repo, record["id"])
        else:
            _supersede(repo, old_id)


def _stored(repo: LearningsRepository, records: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """Content keys (of unpruned learnings) and ids among `records` already stored."""
    keys: set[str] = set()
    ids: set[str] = set()
    for start in range(0, len(records), _SQL_IN_CHUNK):
        part = records[start : start + _SQL_IN_CHUNK]
        marks = ", ".join("?" for _ in part)
        keys.update(
            r["content_key"]
            for r in repo._db.execute(
                f"SELECT content_key FROM learnings WHERE content_key IN ({marks})"
                " AND status != 'pruned'",
                [x["content_key"] for x in part],
            )
        )
        ids.update(
            r["id"]
            for r in repo._db.execute(
                f"SELECT id FROM learnings WHERE id IN ({marks})", [x["id"] for x in part]
            )
        )
    return keys, ids


def _record_from_item(repo: LearningsRepository, index: int, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise HRMError.validation_failed(
            f"Import item {index} is not an object", index=index
        )
    try:
        record = _prepare_import(repo, item)
    except HRMError as exc:
        raise HRMError.validation_failed(
            f"Import item {index}: {exc.message}", index=index, **exc.context
        ) from exc
    return record


def _prepare_import(repo: LearningsRepository, item: dict[str, Any]) -> dict[str, Any]:
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise HRMError.validation_failed(
            f"metadata must be an object, got {type(metadata).__name__}", field="metadata"
        )
    tags = item.get("tags") or []
    if not isinstance(tags, list):
        raise HRMError.validation_failed("tags must be a list", field="tags")
    base = LearningInput(
        content=item.get("content", ""),
        type=item.get("type", ""),
        tags=tags,
        confidence=item.get("confidence") or ConfidenceLevel.MEDIUM,
        context=item.get("context"),
        session_id=item.get("session_id"),
        expires_at=parse_ts(item.get("expires_at")),
        source=str(metadata.get("source") or item.get("source") or "import"),
    )
    created = parse_ts(item.get("created_at"))
    record = _prepare(repo, base, now=created)
    status = item.get("status") or record["status"]
    if status not in ("active", "pending_confirmation", "pruned"):
        raise HRMError.validation_failed(f"Unknown status {status!r}", field="status")
    accessed = parse_ts(item.get("accessed_at"))
    pruned_at = parse_ts(item.get("pruned_at"))
    record.update(
        id=scrub_text(str(item.get("id") or record["id"])),  # an import file is data
        status=status,
        access_count=_count(item.get("access_count"), "access_count"),
        accessed_at=format_ts(accessed) if accessed else record["accessed_at"],
        pruned_at=format_ts(pruned_at) if pruned_at else None,
        relevance_score=_number(metadata.get("relevance_score"), 1.0, "metadata.relevance_score"),
        preference_class=_scrubbed(metadata.get("preference_class")) or record["preference_class"],
    )
    return record


def _scrubbed(value: object) -> str | None:
    return scrub_text(str(value)) if value else None


def _count(raw: object, field: str) -> int:
    """A non-negative whole count that fits SQLite's INTEGER, or an error naming `field`."""
    value = _number(raw, 0, field)
    if value < 0 or value != int(value) or value > _MAX_INTEGER:
        raise HRMError.validation_failed(
            f"{field} must be a whole number from 0 to {_MAX_INTEGER}, got {raw!r}", field=field
        )
    return int(value)


_MAX_INTEGER = 2**63 - 1
"""SQLite's largest INTEGER."""


def _number(raw: object, default: float, field: str) -> float:
    """A number from an import item (absent or null: `default`), or an error naming `field`.

    Exports written by hand or by other tools carry numbers as text too ("3"); those are read.
    """
    if raw is None or raw == "":
        return default
    if not isinstance(raw, bool) and isinstance(raw, int | float | str):
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return value
    raise HRMError.validation_failed(f"{field} must be a number, got {raw!r}", field=field)


def _normalise_tags(tags: Sequence[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise HRMError.validation_failed(
                f"Tag {tag!r} is not text", field="tags", value=str(tag)
            )
        # Scrubbed before lower-casing: a provider's prefix (AKIA, AIza, eyJ) has its case.
        clean = scrub_text(tag.strip()).lower()
        if clean and clean not in out:
            out.append(clean)
    return out


# ── forget ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class LearningForgotten:
    """What `LearningsRepository.forget` deleted and where the sweep took its text from."""

    learning: Learning
    """The learning as it was (returned to the caller; written nowhere)."""
    report: ForgetReport | None
    """The home-wide sweep; None for a repository over a database outside a home."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the id and where the text was removed, never the text."""
        return {
            "id": self.learning.id,
            "forgotten": self.report.to_dict() if self.report is not None else None,
        }


def forget_learning(repo: LearningsRepository, id_or_query: str) -> LearningForgotten:
    """`LearningsRepository.forget`: find exactly one learning, then forget its text."""
    from hrm.storage.forget import forget
    from hrm.storage.redaction import MIN_TEXT

    learning = _find_one(repo, id_or_query)
    home = repo._home or _home_of(repo)
    with repo._db.transaction():  # the row goes whatever its text: tags and vectors first
        row = repo._db.one("SELECT seq FROM learnings WHERE id = ?", (learning.id,))
        if row is not None:
            for table in ("learning_tags", "learning_vectors"):
                repo._db.execute(f"DELETE FROM {table} WHERE seq = ?", (row["seq"],))
            repo._db.execute("DELETE FROM learnings WHERE seq = ?", (row["seq"],))
    with repo._vector_lock:
        repo._vectors = None  # the cache holds its vector
    report = None
    if home is not None and len("".join(learning.content.split())) >= MIN_TEXT:
        report = forget(home, [learning.content], db=repo._db, reason=f"learning {learning.id}")
    _logger().info("forgot learning %s", learning.id)
    return LearningForgotten(learning=learning, report=report)


def _find_one(repo: LearningsRepository, id_or_query: str) -> Learning:
    text = id_or_query.strip() if isinstance(id_or_query, str) else ""
    if not text:
        raise HRMError.validation_failed("Give a learning's id or words its text holds")
    row = repo._db.one("SELECT id FROM learnings WHERE id = ?", (text,))
    if row is not None:
        return repo.get(str(row["id"]))
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = repo._db.execute(
        "SELECT id, content FROM learnings WHERE content LIKE ? ESCAPE '\\' ORDER BY seq"
        " LIMIT 6",
        (pattern,),
    )
    if len(rows) == 1:
        return repo.get(str(rows[0]["id"]))
    if not rows:
        raise HRMError.not_found(
            "learning", text, "no learning has this id or holds these words; "
            "`hrm memory search` finds one"
        )
    listed = "; ".join(f"{r['id']} ({_short(str(r['content']))})" for r in rows[:5])
    raise HRMError.validation_failed(
        f"{len(rows) if len(rows) < 6 else 'More than 5'} learnings hold these words: {listed}; "
        "give the id of the one to forget",
        matches=len(rows),
    )


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _home_of(repo: LearningsRepository) -> HRMHome | None:
    """The home whose memory.db the repository writes, if it is one."""
    from pathlib import Path

    from hrm.home import HRMHome

    path = Path(repo._db.path)
    if path.name != "memory.db" or not (path.parent / "HOT").is_dir():
        return None
    return HRMHome(path.parent)
