"""The learnings DTOs of 003 §2 ("Memory Repository", "Memory Schema", "Memory Search Request").

Plain records with no I/O, shared by the repository, the hooks and the command line. They are
`hrm._values` records rather than dataclasses because `hrm hook` recalls learnings on every
prompt in a fresh process, where importing `dataclasses` and generating these classes cost more
than the search itself; constructors are keyword-only with the defaults of 003. Enum parsing
accepts the spec's upper-case names and lower-case input (``"working_solution"``), so a
hook or a person typing a type never has to match case. Timestamps are aware UTC datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum

from hrm._values import Record, Value
from hrm.errors import HRMError

TYPE_CHECKING = False  # on the hook's path: no `typing` at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "LEARNING_STATUSES",
    "ConfidenceLevel",
    "DecayResult",
    "DecayStrategy",
    "Learning",
    "LearningId",
    "LearningInput",
    "LearningType",
    "SearchFilters",
    "SearchQuery",
    "SearchResult",
    "SearchResults",
    "parse_confidence",
    "parse_learning_type",
]

LEARNING_STATUSES = ("active", "pending_confirmation", "pruned", "superseded")
"""Every status a stored learning can have; nothing is ever deleted, only marked."""


class LearningType(str, Enum):
    """What kind of knowledge a learning holds (003 "Core Types")."""

    FAILED_APPROACH = "FAILED_APPROACH"
    WORKING_SOLUTION = "WORKING_SOLUTION"
    USER_PREFERENCE = "USER_PREFERENCE"
    CODEBASE_PATTERN = "CODEBASE_PATTERN"
    ARCHITECTURAL_DECISION = "ARCHITECTURAL_DECISION"
    ERROR_FIX = "ERROR_FIX"
    OPEN_THREAD = "OPEN_THREAD"


class ConfidenceLevel(str, Enum):
    """How well a learning is established (003 "Core Types")."""

    HIGH = "HIGH"
    """Empirically verified."""
    MEDIUM = "MEDIUM"
    """Logically sound but not tested."""
    LOW = "LOW"
    """Assumption or inference."""

    @property
    def rank(self) -> int:
        """1 for LOW up to 3 for HIGH, so a minimum confidence can be compared."""
        return _CONFIDENCE_RANK[self]


_CONFIDENCE_RANK = {ConfidenceLevel.LOW: 1, ConfidenceLevel.MEDIUM: 2, ConfidenceLevel.HIGH: 3}


def parse_learning_type(value: LearningType | str) -> LearningType:
    """Read a learning type in any case (``"error_fix"``, ``"ERROR_FIX"``, ``"error-fix"``).

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming the valid types.
    """
    if isinstance(value, LearningType):
        return value
    name = str(value).strip().upper().replace("-", "_").replace(" ", "_")
    try:
        return LearningType(name)
    except ValueError:
        valid = ", ".join(t.value for t in LearningType)
        raise HRMError.validation_failed(
            f"Unknown learning type {value!r}; use one of {valid}", field="type", value=str(value)
        ) from None


def parse_confidence(value: ConfidenceLevel | str) -> ConfidenceLevel:
    """Read a confidence level in any case (``"high"`` or ``"HIGH"``).

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming the valid levels.
    """
    if isinstance(value, ConfidenceLevel):
        return value
    try:
        return ConfidenceLevel(str(value).strip().upper())
    except ValueError:
        raise HRMError.validation_failed(
            f"Unknown confidence {value!r}; use HIGH, MEDIUM or LOW",
            field="confidence",
            value=str(value),
        ) from None


class LearningInput(Value):
    """What a caller asks to remember (003 ``LearningInput``)."""

    _fields = (
        "content", "type", "tags", "confidence", "context", "session_id", "expires_at", "source"
    )
    __slots__ = _fields
    content: str
    """The learning text; must not be blank. Secrets are scrubbed before it is stored."""
    type: LearningType | str
    """A `LearningType` or its name in any case."""
    tags: list[str]
    """Free labels; stored lower-cased and de-duplicated."""
    confidence: ConfidenceLevel | str
    """How well established the learning is."""
    context: str | None
    """Where it applies (a file, a task); searched with a lower weight than the content."""
    session_id: str | None
    """The session it came from."""
    expires_at: datetime | None
    """After this instant it is left out of searches unless ``include_expired`` asks for it."""
    source: str
    """Who said it (``user``, ``agent``, ``hook``, ``import``); preference truth uses it."""

    def __init__(
        self,
        *,
        content: str,
        type: LearningType | str,
        tags: list[str] | None = None,
        confidence: ConfidenceLevel | str = ConfidenceLevel.MEDIUM,
        context: str | None = None,
        session_id: str | None = None,
        expires_at: datetime | None = None,
        source: str = "user",
    ) -> None:
        self._init(
            content=content, type=type, tags=[] if tags is None else tags,
            confidence=confidence, context=context, session_id=session_id,
            expires_at=expires_at, source=source,
        )

class LearningId(Value):
    """The identity a stored learning got (003 ``LearningId``)."""

    _fields = ("id", "stored_at")
    __slots__ = _fields
    id: str
    stored_at: datetime

    def __init__(self, id: str, stored_at: datetime) -> None:
        self._init(id=id, stored_at=stored_at)


class Learning(Record):
    """A stored learning (003 "Memory Schema") plus its lifecycle status."""

    _fields = (
        "id", "session_id", "created_at", "accessed_at", "access_count", "content", "type",
        "tags", "confidence", "context", "expires_at", "metadata", "status", "pruned_at",
    )
    __slots__ = _fields
    id: str
    session_id: str | None
    created_at: datetime
    accessed_at: datetime
    access_count: int
    content: str
    type: LearningType
    tags: list[str]
    confidence: ConfidenceLevel
    context: str | None
    expires_at: datetime | None
    metadata: dict[str, Any]
    """``source`` (where it came from) and ``relevance_score`` (the decayed score, 0-1)."""
    status: str
    """``active``, ``pending_confirmation`` (an inferred preference) or ``pruned`` (decayed)."""
    pruned_at: datetime | None
    """When decay pruned it; pruned learnings are kept, only hidden from searches."""

    def __init__(
        self,
        *,
        id: str,
        session_id: str | None,
        created_at: datetime,
        accessed_at: datetime,
        access_count: int,
        content: str,
        type: LearningType,
        tags: list[str],
        confidence: ConfidenceLevel,
        context: str | None,
        expires_at: datetime | None,
        metadata: dict[str, Any],
        status: str = "active",
        pruned_at: datetime | None = None,
    ) -> None:
        self._init(
            id=id, session_id=session_id, created_at=created_at, accessed_at=accessed_at,
            access_count=access_count, content=content, type=type, tags=tags,
            confidence=confidence, context=context, expires_at=expires_at, metadata=metadata,
            status=status, pruned_at=pruned_at,
        )

    def is_expired(self, now: datetime) -> bool:
        """Whether its expiry has passed at `now`."""
        return self.expires_at is not None and self.expires_at <= now

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (ISO timestamps), the shape of export and of ``--json``."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "created_at": _iso(self.created_at),
            "accessed_at": _iso(self.accessed_at),
            "access_count": self.access_count,
            "content": self.content,
            "type": self.type.value,
            "tags": list(self.tags),
            "confidence": self.confidence.value,
            "context": self.context,
            "expires_at": _iso(self.expires_at),
            "metadata": dict(self.metadata),
            "status": self.status,
            "pruned_at": _iso(self.pruned_at),
        }


class SearchFilters(Record):
    """Narrow a search (003 ``SearchFilters``); every field left None means "any"."""

    _fields = ("types", "tags", "confidence", "date_range", "session_id", "include_pending")
    __slots__ = _fields
    types: list[LearningType | str] | None
    """Keep only these types."""
    tags: list[str] | None
    """Keep learnings carrying at least one of these tags."""
    confidence: ConfidenceLevel | str | None
    """Minimum confidence (``MEDIUM`` keeps MEDIUM and HIGH)."""
    date_range: tuple[datetime | None, datetime | None] | None
    """Created within ``[start, end]`` (both inclusive, either open)."""
    session_id: str | None
    """Only learnings from this session."""
    include_pending: bool
    """Also return inferred preferences still waiting for confirmation."""

    def __init__(
        self,
        *,
        types: list[LearningType | str] | None = None,
        tags: list[str] | None = None,
        confidence: ConfidenceLevel | str | None = None,
        date_range: tuple[datetime | None, datetime | None] | None = None,
        session_id: str | None = None,
        include_pending: bool = False,
    ) -> None:
        self._init(
            types=types, tags=tags, confidence=confidence, date_range=date_range,
            session_id=session_id, include_pending=include_pending,
        )


class SearchQuery(Record):
    """One search (003 ``SearchQuery``). Any user text is a safe query."""

    _fields = ("text", "filters", "limit", "include_expired")
    __slots__ = _fields
    text: str
    filters: SearchFilters | None
    limit: int
    """1 to 100."""
    include_expired: bool
    """Also return expired and decay-pruned learnings."""

    def __init__(
        self,
        *,
        text: str,
        filters: SearchFilters | None = None,
        limit: int = 10,
        include_expired: bool = False,
    ) -> None:
        self._init(text=text, filters=filters, limit=limit, include_expired=include_expired)


class SearchResult(Record):
    """One hit (003 ``SearchResult``)."""

    _fields = ("learning", "relevance_score", "highlights")
    __slots__ = _fields
    learning: Learning
    relevance_score: float
    """0.0 to 1.0, higher is more relevant."""
    highlights: list[str]
    """The matched words as they appear in the content, in order."""

    def __init__(
        self, *, learning: Learning, relevance_score: float, highlights: list[str]
    ) -> None:
        self._init(learning=learning, relevance_score=relevance_score, highlights=highlights)

    def to_dict(self) -> dict[str, Any]:
        """The 003 "Memory Search Response" shape of one result, plus the learning's fields."""
        data = self.learning.to_dict()
        data["relevance_score"] = round(self.relevance_score, 6)
        data["highlights"] = list(self.highlights)
        return data


class SearchResults(Record):
    """The answer to a search (003 ``SearchResults``), sorted by relevance, best first."""

    _fields = ("results", "total_count", "query_time_ms", "mode", "timed_out", "total_exact")
    __slots__ = _fields
    results: list[SearchResult]
    total_count: int
    """Matches before the limit (full-text matches passing the filters)."""
    query_time_ms: int
    mode: str
    """``fts`` (full-text only) or ``hybrid`` (full-text and vectors, fused)."""
    timed_out: bool
    """The budget ran out; ``results`` holds what was found by then."""
    total_exact: bool
    """False when ``total_count`` is an estimate, used when counting exactly would cost more
    than the search itself: FTS5's raw match count (may include expired, pruned or pending
    learnings), the matches of the rarer words when common ones were left out of ranking, or,
    when every word is common, a count capped at the ranked-row budget."""

    def __init__(
        self,
        *,
        results: list[SearchResult],
        total_count: int,
        query_time_ms: int,
        mode: str,
        timed_out: bool = False,
        total_exact: bool = True,
    ) -> None:
        self._init(
            results=results, total_count=total_count, query_time_ms=query_time_ms, mode=mode,
            timed_out=timed_out, total_exact=total_exact,
        )

    def to_dict(self) -> dict[str, Any]:
        """The 003 "Memory Search Response" JSON shape."""
        return {
            "results": [r.to_dict() for r in self.results],
            "total_count": self.total_count,
            "query_time_ms": self.query_time_ms,
            "mode": self.mode,
            "timed_out": self.timed_out,
            "total_exact": self.total_exact,
        }


class DecayStrategy(Value):
    """How decay weighs age against use (003 ``DecayStrategy``); weights sum to at most 1."""

    _fields = ("age_weight", "access_weight", "min_score")
    __slots__ = _fields
    age_weight: float
    access_weight: float
    min_score: float
    """Learnings scoring below this are pruned (marked, never deleted)."""

    def __init__(self, age_weight: float, access_weight: float, min_score: float) -> None:
        self._init(age_weight=age_weight, access_weight=access_weight, min_score=min_score)


class DecayResult(Value):
    """What one decay pass did (003 ``DecayResult``)."""

    _fields = ("memories_decayed", "memories_pruned", "average_age_days")
    __slots__ = _fields
    memories_decayed: int
    memories_pruned: int
    average_age_days: float

    def __init__(
        self, memories_decayed: int, memories_pruned: int, average_age_days: float
    ) -> None:
        self._init(
            memories_decayed=memories_decayed, memories_pruned=memories_pruned,
            average_age_days=average_age_days,
        )


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
