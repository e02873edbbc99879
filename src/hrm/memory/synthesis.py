"""The Semantic Synthesis compartment (001 §6.3): patterns linked to the episodes they came from.

A pattern is only as good as its evidence, so every evidence id must name an entry of the same
stack's episodic trace when it is linked, and `get_evidence_chain` returns those entries in the
order they were linked. Strengthening adds evidence and raises confidence by a fifth of the
distance to 1; weakening lowers it by a fifth and keeps the reason (the same arithmetic as the
Learning layer's pattern store, 001 §5.1). Nothing is ever deleted.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.home import parse_agent_class
from hrm.memory.episodic import EpisodicTraceStore
from hrm.memory.types import (
    EpisodeEntry,
    SynthesizedPattern,
    encode_json,
    format_timestamp,
    parse_timestamp,
)
from hrm.scrubbing import scrub_text
from hrm.storage.sqlite import Database
from hrm.types import Clock, system_clock

__all__ = [
    "MIGRATIONS",
    "STRENGTHEN_RATE",
    "WEAKEN_RATE",
    "SemanticSynthesisStore",
    "Weakening",
    "new_pattern_id",
]

logger = logging.getLogger(__name__)

STRENGTHEN_RATE = 0.2
"""`strengthen` moves confidence this fraction of the way to 1.0."""
WEAKEN_RATE = 0.2
"""`weaken` multiplies confidence by ``1 - WEAKEN_RATE``."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS synthesis_patterns (
        agent_class TEXT NOT NULL,
        id TEXT NOT NULL,
        pattern_type TEXT NOT NULL,
        description TEXT NOT NULL,
        input_signature_json TEXT NOT NULL,
        recommended_action_json TEXT NOT NULL,
        confidence REAL NOT NULL,
        created_at TEXT NOT NULL,
        last_strengthened_at TEXT NOT NULL,
        PRIMARY KEY (agent_class, id)
    );
    CREATE INDEX IF NOT EXISTS synthesis_patterns_type
        ON synthesis_patterns (agent_class, pattern_type, confidence);
    CREATE TABLE IF NOT EXISTS synthesis_evidence (
        agent_class TEXT NOT NULL,
        pattern_id TEXT NOT NULL,
        episode_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        linked_at TEXT NOT NULL,
        PRIMARY KEY (agent_class, pattern_id, episode_id)
    );
    CREATE TABLE IF NOT EXISTS synthesis_weakenings (
        agent_class TEXT NOT NULL,
        pattern_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        confidence_after REAL NOT NULL,
        at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS synthesis_weakenings_pattern
        ON synthesis_weakenings (agent_class, pattern_id);
    """,
)
"""Schema of component ``memory.synthesis``; append only, never edit a released entry."""

_COMPONENT = "memory.synthesis"


@dataclass(frozen=True)
class Weakening:
    """One recorded weakening of a pattern."""

    reason: str
    confidence_after: float
    at: datetime


def new_pattern_id() -> str:
    """A fresh pattern id: ``syn_`` + 16 random hex characters."""
    return new_id("syn")


class SemanticSynthesisStore:
    """Evidence-linked patterns of ONE stack (001 §6.3). Thread/process-safe."""

    def __init__(
        self,
        db: Database,
        episodic: EpisodicTraceStore,
        *,
        clock: Clock = system_clock,
    ) -> None:
        """Bind the store to the stack of `episodic`, whose entries are the evidence.

        Raises:
            HRMError: ``VALIDATION_FAILED`` when `episodic` uses another database.
        """
        parse_agent_class(episodic.agent_class)
        if episodic.db is not db:
            raise HRMError.validation_failed(
                "The synthesis store and its episodic trace must share one database"
            )
        self.db = db
        self.episodic = episodic
        self.agent_class = episodic.agent_class
        self._clock = clock
        db.migrate(_COMPONENT, MIGRATIONS)

    def add_pattern(self, pattern: SynthesizedPattern) -> str:
        """Store `pattern` with its evidence links and return its id (``syn_<16 hex>`` if empty).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an empty type or description, a confidence
                outside [0, 1], non-JSON signature or action, an id already used, or evidence
                ids missing from the episodic trace (named). Nothing is stored then.
        """
        pattern_id = pattern.id or new_pattern_id()
        what = f"synthesized pattern '{pattern_id}'"
        for name in ("pattern_type", "description"):
            value = getattr(pattern, name)
            if not isinstance(value, str) or not value.strip():
                raise HRMError.validation_failed(f"{what} needs a non-empty {name}", id=pattern_id)
        _check_confidence(pattern.confidence, what)
        signature = encode_json(pattern.input_signature, what=f"{what} input_signature")
        action = encode_json(pattern.recommended_action, what=f"{what} recommended_action")
        evidence = list(dict.fromkeys(pattern.evidence_ids))
        self._check_evidence(evidence, what)
        now = self._clock()
        created = format_timestamp(pattern.created_at or now)
        strengthened = format_timestamp(pattern.last_strengthened_at or pattern.created_at or now)
        with self.db.transaction():
            if self._row(pattern_id) is not None:
                raise HRMError.validation_failed(
                    f"{what} already exists; leave id empty for a fresh one", id=pattern_id
                )
            self.db.execute(
                "INSERT INTO synthesis_patterns (agent_class, id, pattern_type, description,"
                " input_signature_json, recommended_action_json, confidence, created_at,"
                " last_strengthened_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.agent_class,
                    pattern_id,
                    pattern.pattern_type,
                    scrub_text(pattern.description),
                    signature,
                    action,
                    float(pattern.confidence),
                    created,
                    strengthened,
                ),
            )
            self.db.executemany(
                "INSERT INTO synthesis_evidence"
                " (agent_class, pattern_id, episode_id, position, linked_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [
                    (self.agent_class, pattern_id, eid, pos, created)
                    for pos, eid in enumerate(evidence)
                ],
            )
        return pattern_id

    def get_pattern(self, pattern_id: str) -> SynthesizedPattern:
        """The pattern with `pattern_id`.

        Raises:
            HRMError: ``NOT_FOUND`` naming the id.
        """
        row = self._row(pattern_id)
        if row is None:
            raise self._missing(pattern_id)
        return self._build(row)

    def has(self, pattern_id: str) -> bool:
        """Whether a pattern with `pattern_id` is stored."""
        return self._row(pattern_id) is not None

    def search(
        self, pattern_type: str | None = None, min_confidence: float = 0.0
    ) -> list[SynthesizedPattern]:
        """Patterns of `pattern_type` (any when None) with confidence ≥ `min_confidence`.

        Ordered by confidence, highest first, then newest.
        """
        sql = "SELECT * FROM synthesis_patterns WHERE agent_class = ? AND confidence >= ?"
        params: list[Any] = [self.agent_class, float(min_confidence)]
        if pattern_type is not None:
            sql += " AND pattern_type = ?"
            params.append(pattern_type)
        sql += " ORDER BY confidence DESC, created_at DESC, id"
        return [self._build(r) for r in self.db.execute(sql, params)]

    def strengthen(self, pattern_id: str, new_evidence_id: str) -> None:
        """Link `new_evidence_id` and raise confidence by ``(1 - c) * STRENGTHEN_RATE``.

        Linking evidence that is already linked changes nothing (it is one observation).

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown pattern or an evidence id missing from the
                episodic trace.
        """
        self._check_evidence([new_evidence_id], f"synthesized pattern '{pattern_id}'")
        now = format_timestamp(self._clock())
        with self.db.transaction():
            row = self._row(pattern_id)
            if row is None:
                raise self._missing(pattern_id)
            if self.db.one(
                "SELECT 1 FROM synthesis_evidence"
                " WHERE agent_class = ? AND pattern_id = ? AND episode_id = ?",
                (self.agent_class, pattern_id, new_evidence_id),
            ):
                logger.debug("pattern %s already has evidence %s", pattern_id, new_evidence_id)
                return
            position_row = self.db.one(
                "SELECT COALESCE(MAX(position), -1) + 1 AS p FROM synthesis_evidence"
                " WHERE agent_class = ? AND pattern_id = ?",
                (self.agent_class, pattern_id),
            )
            position = 0 if position_row is None else int(position_row["p"])
            self.db.execute(
                "INSERT INTO synthesis_evidence"
                " (agent_class, pattern_id, episode_id, position, linked_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (self.agent_class, pattern_id, new_evidence_id, position, now),
            )
            confidence = float(row["confidence"])
            confidence = min(1.0, confidence + (1.0 - confidence) * STRENGTHEN_RATE)
            self.db.execute(
                "UPDATE synthesis_patterns SET confidence = ?, last_strengthened_at = ?"
                " WHERE agent_class = ? AND id = ?",
                (confidence, now, self.agent_class, pattern_id),
            )

    def refresh(self, pattern: SynthesizedPattern) -> int:
        """Bring a stored pattern up to what its source now says: its description, signature,
        action and confidence replaced, the evidence it lacks linked after the rest.

        For a pattern mirrored from the Learning layer (D286): the write gate approved it
        when it entered; what the learning store learns later (more evidence, a merge that
        broadened its signature) follows it here. Evidence is only ever added. Returns how
        many evidence ids were newly linked.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown pattern or evidence missing from the trace;
                ``VALIDATION_FAILED`` for a bad confidence or non-JSON signature or action.
        """
        what = f"synthesized pattern '{pattern.id}'"
        _check_confidence(pattern.confidence, what)
        signature = encode_json(pattern.input_signature, what=f"{what} input_signature")
        action = encode_json(pattern.recommended_action, what=f"{what} recommended_action")
        evidence = list(dict.fromkeys(pattern.evidence_ids))
        self._check_evidence(evidence, what)
        now = format_timestamp(self._clock())
        with self.db.transaction():
            if self._row(pattern.id) is None:
                raise self._missing(pattern.id)
            linked = set(self._evidence_ids(pattern.id))
            fresh = [eid for eid in evidence if eid not in linked]
            self.db.execute(
                "UPDATE synthesis_patterns SET description = ?, input_signature_json = ?,"
                " recommended_action_json = ?, confidence = ?, last_strengthened_at = ?"
                " WHERE agent_class = ? AND id = ?",
                (scrub_text(pattern.description), signature, action, float(pattern.confidence),
                 now, self.agent_class, pattern.id),
            )
            self.db.executemany(
                "INSERT INTO synthesis_evidence"
                " (agent_class, pattern_id, episode_id, position, linked_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [
                    (self.agent_class, pattern.id, eid, len(linked) + offset, now)
                    for offset, eid in enumerate(fresh)
                ],
            )
        return len(fresh)

    def weaken(self, pattern_id: str, reason: str) -> None:
        """Lower confidence to ``c * (1 - WEAKEN_RATE)`` and record `reason`.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown pattern; ``VALIDATION_FAILED`` for an empty
                reason.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise HRMError.validation_failed(
                f"Weakening pattern '{pattern_id}' needs a reason", id=pattern_id
            )
        now = format_timestamp(self._clock())
        with self.db.transaction():
            row = self._row(pattern_id)
            if row is None:
                raise self._missing(pattern_id)
            confidence = max(0.0, float(row["confidence"]) * (1.0 - WEAKEN_RATE))
            self.db.execute(
                "UPDATE synthesis_patterns SET confidence = ? WHERE agent_class = ? AND id = ?",
                (confidence, self.agent_class, pattern_id),
            )
            self.db.execute(
                "INSERT INTO synthesis_weakenings"
                " (agent_class, pattern_id, reason, confidence_after, at) VALUES (?, ?, ?, ?, ?)",
                (
                    self.agent_class,
                    pattern_id,
                    scrub_text(reason),
                    confidence,
                    now,
                ),
            )

    def weakenings(self, pattern_id: str) -> list[Weakening]:
        """Every recorded weakening of the pattern, oldest first."""
        rows = self.db.execute(
            "SELECT reason, confidence_after, at FROM synthesis_weakenings"
            " WHERE agent_class = ? AND pattern_id = ? ORDER BY at, rowid",
            (self.agent_class, pattern_id),
        )
        return [
            Weakening(
                reason=str(r["reason"]),
                confidence_after=float(r["confidence_after"]),
                at=parse_timestamp(r["at"]),
            )
            for r in rows
        ]

    def get_evidence_chain(self, pattern_id: str) -> list[EpisodeEntry]:
        """The episodes behind the pattern, in the order they were linked.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown pattern, or naming an evidence episode that
                is no longer in the trace's index (rebuild it from the ledger).
        """
        if self._row(pattern_id) is None:
            raise self._missing(pattern_id)
        return self.episodic.get_many(self._evidence_ids(pattern_id))

    # ── internals ──────────────────────────────────────────────────────────

    def _row(self, pattern_id: str) -> sqlite3.Row | None:
        return self.db.one(
            "SELECT * FROM synthesis_patterns WHERE agent_class = ? AND id = ?",
            (self.agent_class, pattern_id),
        )

    def _evidence_ids(self, pattern_id: str) -> list[str]:
        rows = self.db.execute(
            "SELECT episode_id FROM synthesis_evidence WHERE agent_class = ? AND pattern_id = ?"
            " ORDER BY position",
            (self.agent_class, pattern_id),
        )
        return [str(r["episode_id"]) for r in rows]

    def _build(self, row: sqlite3.Row) -> SynthesizedPattern:
        return SynthesizedPattern(
            id=str(row["id"]),
            pattern_type=str(row["pattern_type"]),
            description=str(row["description"]),
            input_signature=json.loads(row["input_signature_json"]),
            recommended_action=json.loads(row["recommended_action_json"]),
            confidence=float(row["confidence"]),
            evidence_ids=self._evidence_ids(str(row["id"])),
            created_at=parse_timestamp(row["created_at"]),
            last_strengthened_at=parse_timestamp(row["last_strengthened_at"]),
        )

    def _check_evidence(self, evidence_ids: list[str], what: str) -> None:
        missing = self.episodic.missing(evidence_ids)
        if missing:
            raise HRMError.not_found(
                "evidence episode",
                missing[0],
                f"{what} links {len(missing)} episode(s) not in the episodic trace of "
                f"{self.agent_class}: {', '.join(missing[:5])}",
            )

    def _missing(self, pattern_id: str) -> HRMError:
        return HRMError.not_found(
            "synthesized pattern", pattern_id, f"not in the synthesis store of {self.agent_class}"
        )


def _check_confidence(confidence: float, what: str) -> None:
    if not isinstance(confidence, int | float) or not 0.0 <= float(confidence) <= 1.0:
        raise HRMError.validation_failed(
            f"{what}: confidence must be in [0, 1], got {confidence!r}"
        )
