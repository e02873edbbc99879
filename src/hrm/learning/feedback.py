"""The FeedbackLoop (001 §5.2): outcomes in, patterns out, with evidence in the episodic trace.

Each `record_outcome` logs a signal -> routing -> outcome entry to the episodic trace (through
the injected ``episodic_log``, whose returned id is the evidence id) and tallies it in
memory.db, so a new process continues counting where the last one stopped. Then:

- the routing used a pattern, or a pattern exists for exactly this signature and strategy:
  success strengthens it, failure weakens it;
- no pattern yet, and this signature + strategy has now succeeded
  ``pattern_creation_threshold`` times (default 3) with a success rate of at least one half:
  a ``strategy`` pattern is created from those successes (its evidence), with confidence
  ``min(0.9, 0.5 + 0.1 x successes) x success rate`` (0.8 after three clean successes, so it
  clears the default match threshold of 0.7 on the next identical input).

Every change is also reported as a `LearningEvent` (``pattern_created``,
``pattern_strengthened``, ``pattern_weakened``) in `FeedbackLoop.last_events` and to the
optional ``emit`` callback, for the caller's decision ledger (001 §8.3).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from hrm.errors import HRMError
from hrm.learning.patterns import Pattern, PatternStore, PatternSummary, signature_key
from hrm.scrubbing import scrub
from hrm.types import Clock, JSONDict, system_clock

if TYPE_CHECKING:
    import sqlite3

    from hrm.reasoning.types import PatternMatch

__all__ = [
    "MIGRATIONS",
    "EpisodicLog",
    "FeedbackLoop",
    "LearningEvent",
    "LearningSettings",
    "OutcomeRecord",
    "SessionAnalysis",
]

logger = logging.getLogger(__name__)

EpisodicLog = Callable[[JSONDict], str]
"""Appends an entry to the episodic trace and returns its id (e.g. ``MemoryBus.log_episode``)."""

_SIGNATURE_FIELDS = ("complexity", "stakes", "horizon", "domain")

MIGRATIONS = [
    """
    CREATE TABLE learning_outcomes (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        session_id TEXT,
        turn_number INTEGER,
        signature_key TEXT NOT NULL,
        strategy TEXT,
        success INTEGER NOT NULL,
        signal TEXT NOT NULL,
        routing TEXT NOT NULL,
        outcome TEXT NOT NULL,
        pattern_id TEXT,
        effect TEXT NOT NULL DEFAULT 'recorded',
        recorded_at TEXT NOT NULL
    );
    CREATE INDEX learning_outcomes_tally
        ON learning_outcomes (scope, signature_key, strategy, pattern_id);
    CREATE INDEX learning_outcomes_session ON learning_outcomes (scope, session_id);
    """,
    # The tally only ever looks for outcomes no pattern has claimed yet, and most outcomes are
    # claimed as they are written (a known pattern learns from them): a partial index leaves
    # those out, and a turn writes one index page fewer.
    """
    DROP INDEX IF EXISTS learning_outcomes_tally;
    CREATE INDEX learning_outcomes_unclaimed
        ON learning_outcomes (scope, signature_key, strategy) WHERE pattern_id IS NULL;
    """,
]
"""Schema of component ``learning.feedback``; released entries are never edited."""


class LearningSettings(Protocol):
    """What the loop reads from configuration (`hrm.config.HRMConfig` satisfies it)."""

    @property
    def pattern_creation_threshold(self) -> int: ...


@dataclass(frozen=True, kw_only=True)
class OutcomeRecord:
    """One signal -> routing -> outcome tuple (001 §5.2), as tallied."""

    id: str
    """The evidence id: the episodic entry that holds this record."""
    signal: JSONDict
    routing: JSONDict
    outcome: JSONDict
    success: bool
    timestamp: datetime
    session_id: str | None = None
    pattern_id: str | None = None
    """The pattern this outcome created, strengthened or weakened."""
    effect: str = "recorded"
    """``recorded`` | ``created`` | ``strengthened`` | ``weakened``."""


@dataclass(kw_only=True)
class SessionAnalysis:
    """What one session taught (001 §5.2)."""

    session_id: str
    turn_count: int
    outcomes_recorded: int
    patterns_strengthened: list[str] = field(default_factory=list)
    patterns_weakened: list[str] = field(default_factory=list)
    patterns_created: list[str] = field(default_factory=list)
    insights: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LearningEvent:
    """A change to the patterns, for the decision ledger."""

    event_type: str
    payload: JSONDict


class FeedbackLoop:
    """Records outcomes and turns repeated success into patterns.

    Thread-safe through the database; several processes may record into one home (pattern
    creation re-checks inside a write transaction, so a pattern is created once).
    """

    COMPONENT = "learning.feedback"

    def __init__(
        self,
        store: PatternStore,
        episodic_log: EpisodicLog,
        config: LearningSettings | None = None,
        *,
        clock: Clock = system_clock,
        emit: Callable[[LearningEvent], object] | None = None,
    ) -> None:
        self.store = store
        self.episodic_log = episodic_log
        threshold = config.pattern_creation_threshold if config is not None else 3
        self.pattern_creation_threshold = max(1, int(threshold))
        self._clock = clock
        self._emit = emit
        self.last_events: list[LearningEvent] = []
        """The events of the last `record_outcome` call."""
        self._last_session: str | None = None
        store.db.migrate(self.COMPONENT, MIGRATIONS)

    # ── 001 §5.2 ──────────────────────────────────────────────────────────

    def record_outcome(
        self,
        signal: JSONDict,
        routing: JSONDict,
        outcome: JSONDict,
        *,
        session_id: str | None = None,
    ) -> str:
        """Record one outcome and learn from it; returns the evidence id.

        Args:
            signal: The input signature (`InputClassification.signature`), may carry more.
            routing: How it was routed: ``strategy`` and, if a pattern chose it,
                ``pattern_match`` (as in `RoutingDecision`).
            outcome: What happened: ``success`` (bool), ``turn_number`` (the turn whose answer
                is judged: `analyze_session` counts distinct turns) and anything else worth
                keeping. ``turn_number`` may come in `signal` or `routing` instead.
            session_id: The session, for `analyze_session` (else ``outcome["session_id"]``).

        Raises:
            HRMError: when the episodic log or the database fails; nothing is half-recorded.
        """
        signal, routing, outcome = scrub(dict(signal)), scrub(dict(routing)), scrub(dict(outcome))
        session = session_id or _text(outcome.get("session_id")) or _text(signal.get("session_id"))
        success = outcome.get("success") is True
        strategy = _text(routing.get("strategy"))
        signature = _signature(signal)
        now = self._clock()
        events: list[LearningEvent] = []
        db = self.store.db
        try:
            # One transaction for the outcome and its pattern change: one commit a turn (inside
            # a turn's transaction, part of it: this block's failure fails the turn's, so no
            # savepoint of its own). The evidence is a ledger line (indexed later, in a batch:
            # D27). Should the outcome fail, that line stays in the trace and no outcome row
            # claims it.
            with db.transaction(join=True):
                evidence_id = self.episodic_log(
                    {
                        "event_type": "learning_outcome",
                        "session_id": session,
                        "signal": signal,
                        "routing": routing,
                        "outcome": outcome,
                        "success": success,
                        "timestamp": now.isoformat(),
                    }
                )
                # A known pattern learns first, so the outcome row is written once, with its
                # effect; a new pattern is counted from the outcome rows, this one included.
                pattern = self._pattern_for(signature, strategy, routing)
                effect = (
                    None if pattern is None
                    else self._apply(pattern, evidence_id, success=success, outcome=outcome)
                )
                self._insert_outcome(
                    evidence_id, session, (signal, routing, outcome), signature, strategy,
                    now=now, effect=effect,
                )
                if pattern is None and success and strategy:
                    effect = self._maybe_create(signature, strategy)
                    if effect is not None:
                        db.execute(
                            "UPDATE learning_outcomes SET effect = ?, pattern_id = ? WHERE id = ?",
                            (effect[0], effect[1], evidence_id),
                        )
                if effect is not None:
                    kind, _, payload = effect
                    events.append(LearningEvent(f"pattern_{kind}", payload))
        except BaseException:
            self.store.refresh()
            raise
        self._last_session = session or self._last_session
        self._publish(events)
        return evidence_id

    def _insert_outcome(
        self,
        evidence_id: str,
        session: str | None,
        parts: tuple[JSONDict, JSONDict, JSONDict],
        signature: JSONDict,
        strategy: str | None,
        *,
        now: datetime,
        effect: tuple[str, str, JSONDict] | None,
    ) -> None:
        """The outcome's row: the (signal, routing, outcome) `parts` as JSON, with the pattern
        change it made (``recorded`` when none)."""
        signal, routing, outcome = parts
        self.store.db.execute(
            "INSERT INTO learning_outcomes (id, scope, session_id, turn_number,"
            " signature_key, strategy, success, signal, routing, outcome, recorded_at,"
            " effect, pattern_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                evidence_id,
                self.store.scope,
                session,
                _turn(signal, routing, outcome),
                signature_key(signature),
                strategy,
                int(outcome.get("success") is True),
                _dump(signal),
                _dump(routing),
                _dump(outcome),
                now.isoformat(),
                "recorded" if effect is None else effect[0],
                None if effect is None else effect[1],
            ),
        )

    def _publish(self, events: list[LearningEvent]) -> None:
        """Keep the outcome's pattern events for the turn record, log and emit them."""
        self.last_events = events
        for event in events:
            logger.info("%s %s", event.event_type, event.payload.get("pattern_id"))
            if self._emit is not None:
                self._emit(event)

    def get_patterns_for_signal(self, signal: JSONDict) -> list[PatternMatch]:
        """Patterns matching a signal, best first (Reasoning's query, 001 §8.2)."""
        return self.store.search(_signature(signal))

    def analyze_session(self, session_id: str | None = None) -> SessionAnalysis:
        """What a session taught: outcomes, pattern changes and plain-language insights.

        Args:
            session_id: The session; defaults to the last one this loop recorded into.

        Raises:
            HRMError: ``VALIDATION_FAILED`` when no session is given or known.
        """
        session = session_id or self._last_session
        if session is None:
            raise HRMError.validation_failed(
                "No session to analyze: pass session_id or record an outcome first"
            )
        records = self.outcomes(session)
        turns = {t for t in self._turn_numbers(session) if t is not None}
        analysis = SessionAnalysis(
            session_id=session,
            turn_count=len(turns) if turns else len(records),
            outcomes_recorded=len(records),
        )
        for record in records:
            target = {
                "created": analysis.patterns_created,
                "strengthened": analysis.patterns_strengthened,
                "weakened": analysis.patterns_weakened,
            }.get(record.effect)
            if target is not None and record.pattern_id and record.pattern_id not in target:
                target.append(record.pattern_id)
        analysis.insights = self._insights(records)
        return analysis

    def outcomes(self, session_id: str | None = None) -> list[OutcomeRecord]:
        """Recorded outcomes of this scope (one session's, or all), oldest first."""
        if session_id is None:
            rows = self.store.db.execute(
                "SELECT * FROM learning_outcomes WHERE scope = ? ORDER BY recorded_at, rowid",
                (self.store.scope,),
            )
        else:
            rows = self.store.db.execute(
                "SELECT * FROM learning_outcomes WHERE scope = ? AND session_id = ?"
                " ORDER BY recorded_at, rowid",
                (self.store.scope, session_id),
            )
        return [_decode(row) for row in rows]

    # ── learning ──────────────────────────────────────────────────────────

    def _pattern_for(
        self, signature: JSONDict, strategy: str | None, routing: JSONDict
    ) -> Pattern | PatternSummary | None:
        """The pattern this outcome speaks to: the one that routed it, else the exact one."""
        used = _text(routing.get("pattern_match")) or _text(routing.get("pattern_id"))
        pattern: Pattern | PatternSummary | None = self.store.peek(used) if used else None
        if pattern is None and strategy:
            pattern = self.store.find(signature, strategy)
        return pattern

    def _apply(
        self,
        pattern: Pattern | PatternSummary,
        evidence_id: str,
        *,
        success: bool,
        outcome: JSONDict,
    ) -> tuple[str, str, JSONDict]:
        """Strengthen or weaken `pattern` with this outcome; returns the effect."""
        if success:
            self.store.strengthen(pattern.id, evidence_id)
            kind = "strengthened"
        else:
            reason = _text(outcome.get("reason")) or f"failed outcome {evidence_id}"
            self.store.weaken(pattern.id, reason)
            kind = "weakened"
        after = self.store.peek(pattern.id)
        confidence = after.confidence if after else pattern.confidence
        return kind, pattern.id, {"pattern_id": pattern.id, "confidence": confidence}

    def _maybe_create(self, signature: JSONDict, strategy: str) -> tuple[str, str, JSONDict] | None:
        rows = self.store.db.execute(
            "SELECT id, success FROM learning_outcomes WHERE scope = ? AND signature_key = ?"
            " AND strategy = ? AND pattern_id IS NULL ORDER BY recorded_at, rowid",
            (self.store.scope, signature_key(signature), strategy),
        )
        successes = [row["id"] for row in rows if row["success"]]
        if len(successes) < self.pattern_creation_threshold:
            return None
        rate = len(successes) / len(rows)
        if rate < 0.5:
            return None
        confidence = round(min(0.9, 0.5 + 0.1 * len(successes)) * rate, 4)
        pattern_id = self.store.add_pattern(
            Pattern(
                id="",
                pattern_type="strategy",
                input_signature=signature,
                recommended_action={"strategy": strategy},
                confidence=confidence,
                evidence_ids=successes,
                created_at=self._clock(),
            )
        )
        self.store.db.executemany(
            "UPDATE learning_outcomes SET pattern_id = ? WHERE id = ?",
            [(pattern_id, row["id"]) for row in rows],
        )
        payload = {
            "pattern_id": pattern_id,
            "strategy": strategy,
            "signature": signature,
            "confidence": confidence,
            "evidence_ids": successes,
        }
        return "created", pattern_id, payload

    def _turn_numbers(self, session: str) -> set[int | None]:
        rows = self.store.db.execute(
            "SELECT DISTINCT turn_number FROM learning_outcomes WHERE scope = ? AND session_id = ?",
            (self.store.scope, session),
        )
        return {row[0] for row in rows}

    @staticmethod
    def _insights(records: list[OutcomeRecord]) -> list[str]:
        if not records:
            return ["no outcomes recorded in this session"]
        wins = sum(1 for r in records if r.success)
        insights = [f"{wins}/{len(records)} outcomes succeeded"]
        totals: Counter[str] = Counter()
        successes: Counter[str] = Counter()
        for record in records:
            strategy = _text(record.routing.get("strategy")) or "unrouted"
            totals[strategy] += 1
            successes[strategy] += int(record.success)
        for strategy, count in totals.most_common(3):
            insights.append(f"{strategy}: {successes[strategy]}/{count} succeeded")
            failures = count - successes[strategy]
            if failures >= 2 and successes[strategy] < failures:
                insights.append(
                    f"{strategy} failed {failures} of {count} times: similar inputs may need "
                    "a more effortful strategy"
                )
        for record in records:
            if record.effect == "created":
                insights.append(
                    f"pattern {record.pattern_id} learned for "
                    f"{_text(record.routing.get('strategy'))}"
                )
        return insights


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _signature(signal: JSONDict) -> JSONDict:
    nested = signal.get("signature")
    source: JSONDict = nested if isinstance(nested, dict) else signal
    return {name: source[name] for name in _SIGNATURE_FIELDS if name in source}


def _turn(*sources: JSONDict) -> int | None:
    for source in sources:
        value = source.get("turn_number")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _dump(value: Any) -> str:
    """A column's JSON text: orjson, keys sorted (a third of the standard encoder's time on a
    turn's three columns); what orjson cannot write (an integer past 64 bits) takes the
    standard encoder. Read back with `json.loads` either way."""
    try:
        return orjson.dumps(value, default=str, option=_ORJSON_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError:
        return _ENCODER.encode(value)


_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""The fallback encoder (`json.dumps` with options builds a new one each call)."""


def _decode(row: sqlite3.Row) -> OutcomeRecord:
    return OutcomeRecord(
        id=row["id"],
        signal=json.loads(row["signal"]),
        routing=json.loads(row["routing"]),
        outcome=json.loads(row["outcome"]),
        success=bool(row["success"]),
        timestamp=datetime.fromisoformat(row["recorded_at"]),
        session_id=row["session_id"],
        pattern_id=row["pattern_id"],
        effect=row["effect"],
    )
