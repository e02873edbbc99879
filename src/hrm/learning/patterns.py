"""The PatternStore (001 §5.1): learned patterns with their evidence, in the home's memory.db.

A pattern says "inputs with this signature went well with this action", and links the episodic
entries that prove it. Reasoning queries patterns every turn, so `search` reads an in-memory
copy and goes to the database only when another connection changed it (SQLite's
``PRAGMA data_version``); writes go through and update the copy.

Match confidence (`signature_similarity` x pattern confidence):

- domain: Jaccard similarity of the domain sets, weight 0.4;
- complexity, stakes, horizon: exact match, weight 0.2 each. A generalised pattern may hold a
  list of values for a field; the field matches when the values overlap. A field the pattern
  does not mention matches anything.

Patterns are never trimmed automatically (001 §10 ``auto_trim_enabled`` is False "per user
decision"); `remove` is the only way out, and it refuses protected patterns.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.reasoning.types import PatternMatch
from hrm.scrubbing import scrub
from hrm.types import Clock, system_clock

if TYPE_CHECKING:
    import sqlite3

    from hrm.storage.sqlite import Database

__all__ = [
    "MIGRATIONS",
    "MIN_SIMILARITY",
    "SHARED_SCOPE",
    "Pattern",
    "PatternStore",
    "PatternSummary",
    "signature_key",
    "signature_similarity",
]

logger = logging.getLogger(__name__)

SHARED_SCOPE = "*"
"""Scope of patterns shared by every stack (004: the Meta Learning Ledger is shared)."""
MIN_SIMILARITY = 0.5
"""Patterns less similar than this to the input are not returned by `search`."""
STRENGTHEN_RATE = 0.2
"""`strengthen` moves confidence this share of the way to 1.0."""
WEAKEN_FACTOR = 0.8
"""`weaken` multiplies confidence by this."""

_SCALAR_FIELDS = ("complexity", "stakes", "horizon")
_DOMAIN_WEIGHT, _FIELD_WEIGHT = 0.4, 0.2

MIGRATIONS = [
    """
    CREATE TABLE learning_patterns (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        pattern_type TEXT NOT NULL,
        signature_key TEXT NOT NULL,
        strategy TEXT,
        input_signature TEXT NOT NULL,
        recommended_action TEXT NOT NULL,
        confidence REAL NOT NULL,
        evidence_ids TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_matched_at TEXT,
        match_count INTEGER NOT NULL DEFAULT 0,
        protected INTEGER NOT NULL DEFAULT 0,
        weaken_reasons TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX learning_patterns_lookup ON learning_patterns (scope, signature_key, strategy);
    """,
    # Evidence moves to its own table: rewriting a growing JSON array on every success made a
    # long-lived pattern's turns O(evidence). The column stays (released schema) and reads '[]'.
    """
    CREATE TABLE learning_pattern_evidence (
        pattern_id TEXT NOT NULL,
        evidence_id TEXT NOT NULL,
        UNIQUE (pattern_id, evidence_id)
    );
    INSERT OR IGNORE INTO learning_pattern_evidence (pattern_id, evidence_id)
        SELECT p.id, j.value FROM learning_patterns AS p, json_each(p.evidence_ids) AS j
        ORDER BY p.rowid, j.key;
    UPDATE learning_patterns SET evidence_ids = '[]';
    """,
]
"""Schema of component ``learning.patterns``; released entries are never edited."""


@dataclass(kw_only=True)
class Pattern:
    """A learned pattern (001 §5.1) with hrm's protection flag and weakening history."""

    id: str
    pattern_type: str
    """``strategy`` | ``behavior`` | ``preference``."""
    input_signature: dict[str, Any]
    """What triggers it: `InputClassification.signature` (fields may hold lists once merged)."""
    recommended_action: dict[str, Any]
    """What to do, e.g. ``{"strategy": "quick_answer"}``."""
    confidence: float
    evidence_ids: list[str] = field(default_factory=list)
    """Ids of the episodic entries that support it."""
    created_at: datetime
    last_matched_at: datetime | None = None
    match_count: int = 0
    protected: bool = False
    """A protected pattern cannot be removed."""
    weaken_reasons: list[str] = field(default_factory=list)
    """Why it was weakened, oldest first."""

    @property
    def strategy(self) -> str:
        """The recommended strategy, or "" for a pattern that recommends something else."""
        value = self.recommended_action.get("strategy", "")
        return value if isinstance(value, str) else ""


class PatternSummary(NamedTuple):
    """What a reader that only shows or scores a pattern needs: no evidence list is copied."""

    id: str
    signature_text: str
    """The input signature as canonical JSON (`signature_key`): immutable, ready to show."""
    strategy: str
    confidence: float
    evidence_count: int


def signature_key(signature: dict[str, Any]) -> str:
    """A canonical string for an exact signature (fields of `InputClassification.signature`).

    Signatures repeat (a handful of field values), and a turn asks for a few keys: answers
    are kept per (field, type, value) combination.
    """
    parts = tuple(
        (name, type(value), tuple(value) if type(value) is list else value)
        for name in _KEY_FIELDS
        if name in signature
        for value in (signature[name],)
    )
    try:
        found = _KEYS.get(parts)
    except TypeError:  # an unhashable value: no memo
        return _signature_key(signature)
    if found is None:
        if len(_KEYS) >= 4096:
            _KEYS.clear()
        found = _KEYS[parts] = _signature_key(signature)
    return found


_KEY_FIELDS = (*_SCALAR_FIELDS, "domain")
_KEYS: dict[tuple[Any, ...], str] = {}


def _signature_key(signature: dict[str, Any]) -> str:
    normal = {
        name: signature[name] for name in (*_SCALAR_FIELDS, "domain") if name in signature
    }
    if isinstance(normal.get("domain"), list):
        normal["domain"] = sorted(str(d) for d in normal["domain"])
    return json.dumps(normal, sort_keys=True, separators=(",", ":"), default=str)


_Features = tuple[frozenset[str] | None, ...]
"""A signature prepared for scoring: one value set per scalar field, then the domain set
(``None`` where the signature does not mention the field)."""


def _values(value: Any) -> frozenset[str]:
    if isinstance(value, list | tuple | set | frozenset):
        return frozenset(str(v) for v in value)
    return frozenset((str(value),))


def _features(signature: dict[str, Any]) -> _Features:
    fields = [
        None if signature.get(name) is None else _values(signature[name])
        for name in (*_SCALAR_FIELDS, "domain")
    ]
    return tuple(fields)


def _score(pattern: _Features, signature: _Features) -> float:
    score = 0.0
    for wanted, given in zip(pattern[:-1], signature[:-1], strict=True):
        if wanted is None or (given is not None and wanted & given):
            score += _FIELD_WEIGHT
    mine, theirs = pattern[-1], signature[-1] or frozenset()
    if mine is None:
        score += _DOMAIN_WEIGHT
    elif not mine or not theirs:
        score += _DOMAIN_WEIGHT if not mine and not theirs else 0.0
    else:
        score += _DOMAIN_WEIGHT * len(mine & theirs) / len(mine | theirs)
    return round(min(1.0, score), 6)


def signature_similarity(pattern_signature: dict[str, Any], signature: dict[str, Any]) -> float:
    """How alike two signatures are, in [0, 1] (see the module docstring for the weights)."""
    return _score(_features(pattern_signature), _features(signature))


class PatternStore:
    """Patterns of one scope (a stack's agent class, or shared) in a `Database`.

    A scoped store reads its own patterns and the shared ones and writes into its own scope.
    Thread-safe through the database's lock; several processes may share the file.
    """

    COMPONENT = "learning.patterns"

    def __init__(
        self, db: Database, agent_class: str | None = None, *, clock: Clock = system_clock
    ) -> None:
        self.db = db
        self.scope = agent_class or SHARED_SCOPE
        self._clock = clock
        db.migrate(self.COMPONENT, MIGRATIONS)
        self._cache: dict[str, Pattern] | None = None
        self._data_version: int | None = None
        self._prepared: dict[str, _Features] = {}
        self._memo: dict[str, list[tuple[str, float]]] = {}
        """Per signature: the patterns alike enough and their similarity. Confidence is not
        in it, so strengthening (every turn) leaves it valid; only a signature change or a
        new or removed pattern clears it."""
        self._summaries: list[PatternSummary] | None = None
        self._signature_text: dict[str, str] = {}
        """`signature_key` per pattern id: a signature only changes through `_remember`."""

    # ── reads ─────────────────────────────────────────────────────────────

    def get_pattern(self, pattern_id: str) -> Pattern | None:
        """A copy of the pattern with this id in this store's view, or None."""
        pattern = self._patterns().get(pattern_id)
        return _copy(pattern) if pattern else None

    def all_patterns(self, limit: int | None = None) -> list[Pattern]:
        """Copies of every pattern this store sees (the first `limit`), oldest first.

        Only the returned patterns are copied: the attention pipeline asks for a few every turn.
        """
        ordered = sorted(self._patterns().values(), key=lambda p: (p.created_at, p.id))
        return [_copy(pattern) for pattern in ordered[:limit]]

    def summaries(self, limit: int | None = None) -> list[PatternSummary]:
        """Summaries of the first `limit` patterns, oldest first (read every turn: kept until
        the patterns change, and no evidence lists are copied)."""
        patterns = self._patterns()
        if self._summaries is None:
            ordered = sorted(patterns.values(), key=lambda p: (p.created_at, p.id))
            self._summaries = [self._summary(p) for p in ordered]
        return self._summaries[:limit]

    def peek(self, pattern_id: str) -> PatternSummary | None:
        """The summary of one pattern, or None (cheaper than `get_pattern`'s full copy)."""
        pattern = self._patterns().get(pattern_id)
        return None if pattern is None else self._summary(pattern)

    def refresh(self) -> None:
        """Drop the in-memory copy; the next read loads from the database.

        Call it after rolling back a transaction that wrapped this store's writes.
        """
        self._forget()

    def find(self, signature: dict[str, Any], strategy: str) -> Pattern | None:
        """The pattern for exactly this signature and recommended strategy, if any."""
        key = signature_key(signature)
        for pattern in self._patterns().values():
            if pattern.strategy == strategy and signature_key(pattern.input_signature) == key:
                return pattern
        return None

    def search(self, input_signature: dict[str, Any]) -> list[PatternMatch]:
        """Patterns matching a signature, best first (match confidence, then evidence, id).

        Which patterns are alike is remembered per signature until a signature changes, so a
        repeated signature costs a lookup, one product per match and a sort.
        """
        patterns = self._patterns()
        key = signature_key(input_signature)
        alike = self._memo.get(key)
        if alike is None:
            alike = self._memo[key] = self._scan(patterns, _features(input_signature))
        matches = [
            PatternMatch(
                pattern_id=pattern_id,
                match_confidence=round(similarity * pattern.confidence, 4),
                recommended_strategy=pattern.strategy,
                evidence_count=len(pattern.evidence_ids),
            )
            for pattern_id, similarity in alike
            if (pattern := patterns.get(pattern_id)) is not None
        ]
        matches.sort(key=lambda m: (-m.match_confidence, -m.evidence_count, m.pattern_id))
        return matches

    def _scan(self, patterns: dict[str, Pattern], wanted: _Features) -> list[tuple[str, float]]:
        alike: list[tuple[str, float]] = []
        for pattern in patterns.values():
            prepared = self._prepared.get(pattern.id)
            if prepared is None:
                prepared = self._prepared[pattern.id] = _features(pattern.input_signature)
            similarity = _score(prepared, wanted)
            if similarity >= MIN_SIMILARITY:
                alike.append((pattern.id, similarity))
        return alike

    # ── writes ────────────────────────────────────────────────────────────

    def add_pattern(self, pattern: Pattern) -> str:
        """Store a new pattern (scrubbed) and return its id (generated when empty).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a confidence outside [0, 1] or a taken id.
        """
        if not 0.0 <= pattern.confidence <= 1.0:
            raise HRMError.validation_failed(
                f"Pattern confidence {pattern.confidence} is outside [0, 1]",
                pattern_id=pattern.id,
            )
        stored = replace(
            pattern,
            id=pattern.id or new_id("pat"),
            input_signature=scrub(pattern.input_signature),
            recommended_action=scrub(pattern.recommended_action),
        )
        with self.db.transaction():
            if self.db.one("SELECT 1 FROM learning_patterns WHERE id = ?", (stored.id,)):
                raise HRMError.validation_failed(
                    f"Pattern id '{stored.id}' already exists; leave the id empty to get a new one",
                    pattern_id=stored.id,
                )
            self.db.execute(
                "INSERT INTO learning_patterns (id, scope, pattern_type, signature_key, strategy,"
                " input_signature, recommended_action, confidence, evidence_ids, created_at,"
                " last_matched_at, match_count, protected, weaken_reasons)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stored.id,
                    self.scope,
                    stored.pattern_type,
                    signature_key(stored.input_signature),
                    stored.strategy or None,
                    _dump(stored.input_signature),
                    _dump(stored.recommended_action),
                    stored.confidence,
                    "[]",
                    stored.created_at.isoformat(),
                    stored.last_matched_at.isoformat() if stored.last_matched_at else None,
                    stored.match_count,
                    int(stored.protected),
                    _dump(stored.weaken_reasons),
                ),
            )
            self._link(stored.id, stored.evidence_ids)
        self._remember(stored)
        return stored.id

    def strengthen(self, pattern_id: str, evidence_id: str) -> None:
        """Raise confidence by (1 - c) x 0.2, link the evidence, count the match.

        Costs the same however much evidence the pattern already has. Inside another
        transaction it is part of it (`Database.transaction(join=True)`): its failure must
        fail the caller's transaction too.
        """
        with self.db.transaction(join=True):
            pattern = self._current(pattern_id)
            gain = (1 - pattern.confidence) * STRENGTHEN_RATE
            pattern.confidence = round(pattern.confidence + gain, 6)
            pattern.match_count += 1
            pattern.last_matched_at = self._clock()
            self.db.execute(
                "UPDATE learning_patterns SET confidence = ?, match_count = ?,"
                " last_matched_at = ? WHERE id = ?",
                (
                    pattern.confidence,
                    pattern.match_count,
                    pattern.last_matched_at.isoformat(),
                    pattern_id,
                ),
            )
            added = self._link(pattern_id, [evidence_id])
        cached = self._cache.get(pattern_id) if self._cache is not None else None
        if cached is None:
            self._forget()
            return
        cached.confidence = pattern.confidence
        cached.match_count = pattern.match_count
        cached.last_matched_at = pattern.last_matched_at
        if added:
            cached.evidence_ids.append(evidence_id)
        # The signature did not change: its prepared features, text and similarities still
        # hold, and only this pattern's summary moves (a turn strengthens one, reads them all).
        summaries = self._summaries
        if summaries is not None:
            self._summaries = [
                self._summary(cached) if s.id == pattern_id else s for s in summaries
            ]

    def weaken(self, pattern_id: str, reason: str) -> None:
        """Multiply confidence by 0.8 and keep the reason (the pattern is never deleted)."""
        with self.db.transaction():
            pattern = self._require(pattern_id)
            pattern.confidence = round(pattern.confidence * WEAKEN_FACTOR, 6)
            pattern.weaken_reasons.append(str(scrub(reason)))
            self.db.execute(
                "UPDATE learning_patterns SET confidence = ?, weaken_reasons = ? WHERE id = ?",
                (pattern.confidence, _dump(pattern.weaken_reasons), pattern_id),
            )
        self._remember(pattern)

    def protect(self, pattern_id: str) -> None:
        """Mark a pattern so `remove` refuses it."""
        with self.db.transaction():
            pattern = self._require(pattern_id)
            pattern.protected = True
            self.db.execute(
                "UPDATE learning_patterns SET protected = 1 WHERE id = ?", (pattern_id,)
            )
        self._remember(pattern)

    def remove(self, pattern_id: str) -> None:
        """Delete a pattern on explicit request; nothing removes patterns automatically.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown id; ``VALIDATION_FAILED`` for a protected
                pattern (its ``context`` names it).
        """
        with self.db.transaction():
            pattern = self._require(pattern_id)
            if pattern.protected:
                raise HRMError.validation_failed(
                    f"Pattern '{pattern_id}' is protected and cannot be removed",
                    pattern_id=pattern_id,
                    protected=True,
                )
            self.db.execute("DELETE FROM learning_patterns WHERE id = ?", (pattern_id,))
            self.db.execute(
                "DELETE FROM learning_pattern_evidence WHERE pattern_id = ?", (pattern_id,)
            )
        if self._cache is not None:
            self._cache.pop(pattern_id, None)
        self._prepared.pop(pattern_id, None)
        self._changed()

    def replace_pattern(self, pattern: Pattern) -> None:
        """Overwrite a stored pattern's content (the Generalizer's merge result keeps an id)."""
        with self.db.transaction():
            self._require(pattern.id)
            self.db.execute(
                "UPDATE learning_patterns SET pattern_type = ?, signature_key = ?, strategy = ?,"
                " input_signature = ?, recommended_action = ?, confidence = ?, evidence_ids = ?,"
                " last_matched_at = ?, match_count = ?, protected = ?, weaken_reasons = ?"
                " WHERE id = ?",
                (
                    pattern.pattern_type,
                    signature_key(pattern.input_signature),
                    pattern.strategy or None,
                    _dump(scrub(pattern.input_signature)),
                    _dump(scrub(pattern.recommended_action)),
                    min(1.0, max(0.0, pattern.confidence)),
                    "[]",
                    pattern.last_matched_at.isoformat() if pattern.last_matched_at else None,
                    pattern.match_count,
                    int(pattern.protected),
                    _dump(pattern.weaken_reasons),
                    pattern.id,
                ),
            )
            self.db.execute(
                "DELETE FROM learning_pattern_evidence WHERE pattern_id = ?", (pattern.id,)
            )
            self._link(pattern.id, pattern.evidence_ids)
        self._forget()

    # ── cache ─────────────────────────────────────────────────────────────

    def _current(self, pattern_id: str) -> Pattern:
        """The pattern as stored now, without its evidence list (call inside a transaction).

        The cached copy serves when no other connection committed since it was loaded (the
        transaction holds the write lock, so none can until it ends); else it is re-read.
        """
        cached = self._cache.get(pattern_id) if self._cache is not None else None
        if cached is not None and self._current_version() == self._data_version:
            # A copy the caller may change (the cache changes only once the write is done);
            # `replace` would run every field through __init__ again, a turn's costliest copy.
            current = object.__new__(Pattern)
            current.__dict__.update(cached.__dict__, evidence_ids=[])
            return current
        return self._require(pattern_id, with_evidence=False)

    def _require(self, pattern_id: str, *, with_evidence: bool = True) -> Pattern:
        """The pattern, re-read inside the caller's transaction (another process may write)."""
        row = self.db.one(
            "SELECT * FROM learning_patterns WHERE id = ? AND scope IN (?, ?)",
            (pattern_id, self.scope, SHARED_SCOPE),
        )
        if row is None:
            raise HRMError.not_found("pattern", pattern_id, "list patterns with `all_patterns()`")
        pattern = _decode(row)
        if with_evidence:
            self._fill_evidence({pattern.id: pattern})
        return pattern

    def _link(self, pattern_id: str, evidence_ids: list[str]) -> bool:
        """Link evidence (kept in order, each once); True if anything new was linked."""
        added = self.db.executemany(
            "INSERT OR IGNORE INTO learning_pattern_evidence (pattern_id, evidence_id)"
            " VALUES (?, ?)",
            [(pattern_id, evidence_id) for evidence_id in evidence_ids],
        )
        return added > 0

    def _fill_evidence(self, patterns: dict[str, Pattern]) -> None:
        if not patterns:
            return
        for pattern in patterns.values():
            pattern.evidence_ids = []
        rows = self.db.execute(
            "SELECT e.pattern_id, e.evidence_id FROM learning_pattern_evidence AS e"
            " JOIN learning_patterns AS p ON p.id = e.pattern_id"
            " WHERE p.scope IN (?, ?) ORDER BY e.rowid",
            (self.scope, SHARED_SCOPE),
        ) if len(patterns) > 1 else self.db.execute(
            "SELECT pattern_id, evidence_id FROM learning_pattern_evidence"
            " WHERE pattern_id = ? ORDER BY rowid",
            (next(iter(patterns)),),
        )
        for row in rows:
            owner = patterns.get(row[0])
            if owner is not None:
                owner.evidence_ids.append(row[1])

    def _remember(self, pattern: Pattern) -> None:
        if self._cache is not None:
            self._cache[pattern.id] = _copy(pattern)
        self._prepared.pop(pattern.id, None)
        self._signature_text.pop(pattern.id, None)
        self._changed()
        # Our own commits leave data_version alone; another connection's commits since the
        # last load still change it, so the next read reloads them.

    def _forget(self) -> None:
        self._cache = None
        self._prepared.clear()
        self._signature_text.clear()
        self._changed()

    def _changed(self) -> None:
        self._memo.clear()
        self._summaries = None

    def _summary(self, pattern: Pattern) -> PatternSummary:
        text = self._signature_text.get(pattern.id)
        if text is None:
            text = self._signature_text[pattern.id] = signature_key(pattern.input_signature)
        return PatternSummary(
            pattern.id, text, pattern.strategy, pattern.confidence, len(pattern.evidence_ids)
        )

    def _current_version(self) -> int:
        return self.db.data_version()

    def _patterns(self) -> dict[str, Pattern]:
        version = self._current_version()
        if self._cache is None or version != self._data_version:
            rows = self.db.execute(
                "SELECT * FROM learning_patterns WHERE scope IN (?, ?)", (self.scope, SHARED_SCOPE)
            )
            self._forget()
            self._cache = {pattern.id: pattern for pattern in map(_decode, rows)}
            self._fill_evidence(self._cache)
            self._data_version = version
            logger.debug("pattern cache loaded: %s patterns", len(self._cache))
        return self._cache




def _copy(pattern: Pattern) -> Pattern:
    return replace(
        pattern,
        input_signature=_clone(pattern.input_signature),
        recommended_action=_clone(pattern.recommended_action),
        evidence_ids=list(pattern.evidence_ids),
        weaken_reasons=list(pattern.weaken_reasons),
    )


def _clone(value: Any) -> Any:
    """A deep copy of JSON data as the database would give it back (tuples become lists).

    Callers get copies so they cannot change the cache; a JSON round trip did the same at
    several times the cost, every turn.
    """
    if isinstance(value, dict):
        return {str(k): _clone(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clone(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(_dump(value))


def _dump(value: Any) -> str:
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""One encoder for every row (`json.dumps` with options builds a new one each call)."""


def _decode(row: sqlite3.Row) -> Pattern:
    last = row["last_matched_at"]
    return Pattern(
        id=row["id"],
        pattern_type=row["pattern_type"],
        input_signature=json.loads(row["input_signature"]),
        recommended_action=json.loads(row["recommended_action"]),
        confidence=float(row["confidence"]),
        evidence_ids=list(json.loads(row["evidence_ids"])),
        created_at=datetime.fromisoformat(row["created_at"]),
        last_matched_at=datetime.fromisoformat(last) if last else None,
        match_count=int(row["match_count"]),
        protected=bool(row["protected"]),
        weaken_reasons=list(json.loads(row["weaken_reasons"])),
    )
