"""Closing the learning loop when a session ends (issue 33 §3, D286).

During a session the FeedbackLoop creates, strengthens and weakens patterns turn by turn. When
the session is over, `consolidate_session`:

1. analyses it (`FeedbackLoop.analyze_session`: outcomes, pattern changes, insights);
2. lets the `Generalizer` merge similar patterns (one broader pattern keeps both evidence
   lists; the absorbed one is removed from the learning store);
3. fills Semantic Synthesis from the learned patterns with their evidence: a pattern new to
   synthesis asks the write gate (`MemoryBus.add_synthesis`, the high bar of 001 §6.2); one
   already there follows the learning store (`SemanticSynthesisStore.refresh`); one merged
   away is weakened there with the reason, since synthesis never deletes.

Each session is consolidated once, whichever process notices it ended: `pending_sessions` names
the sessions with outcomes and no consolidation yet (a table in memory.db, rebuildable: a
session consolidated again changes nothing, as merges and refreshes are idempotent).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm.learning.generalizer import Generalizer
from hrm.learning.patterns import Pattern

if TYPE_CHECKING:
    from hrm.learning.feedback import FeedbackLoop, SessionAnalysis
    from hrm.memory.bus import MemoryBus
    from hrm.types import Clock

__all__ = [
    "MIN_SYNTHESIS_EVIDENCE",
    "Consolidation",
    "consolidate_session",
    "pending_sessions",
    "synthesis_id",
]

logger = logging.getLogger(__name__)

MIN_SYNTHESIS_EVIDENCE = 2
"""A pattern enters synthesis with at least this many episodes behind it: one success is an
anecdote, and synthesis is the durable layer."""

_COMPONENT = "learning.consolidation"
_MIGRATIONS = [
    "CREATE TABLE learning_consolidations (scope TEXT NOT NULL, session_id TEXT NOT NULL,"
    " at TEXT NOT NULL, PRIMARY KEY (scope, session_id));",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Consolidation:
    """What consolidating one session did."""

    session_id: str
    analysis: SessionAnalysis
    merged: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(the pattern kept, the patterns it absorbed)."""
    synthesized: tuple[tuple[str, int], ...] = ()
    """(synthesis id, evidence linked) of each pattern added to or refreshed in synthesis."""
    denied: tuple[tuple[str, str], ...] = ()
    """(pattern id, the gate's reason) of each pattern the write gate kept out."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Learning events for the decision record (what /why shows)."""


def synthesis_id(pattern_id: str) -> str:
    """The id of a learned pattern's entry in synthesis (stable, so it is refreshed in place)."""
    return f"learned_{pattern_id}"


def pending_sessions(feedback: FeedbackLoop, current: str | None) -> list[str]:
    """Sessions with recorded outcomes, other than `current`, not consolidated yet."""
    db = feedback.store.db
    db.migrate(_COMPONENT, _MIGRATIONS)
    rows = db.execute(
        "SELECT session_id, MIN(recorded_at) AS first FROM learning_outcomes"
        " WHERE scope = ? AND session_id IS NOT NULL AND session_id != ?"
        " AND session_id NOT IN (SELECT session_id FROM learning_consolidations WHERE scope = ?)"
        " GROUP BY session_id ORDER BY first",
        (feedback.store.scope, current or "", feedback.store.scope),
    )
    return [str(row["session_id"]) for row in rows]


def consolidate_session(
    feedback: FeedbackLoop,
    bus: MemoryBus,
    session_id: str,
    *,
    clock: Clock,
    generalizer: Generalizer | None = None,
) -> Consolidation:
    """Analyse `session_id`, merge similar patterns, fill synthesis (module docstring)."""
    analysis = feedback.analyze_session(session_id)
    merged = _merge(feedback, generalizer or Generalizer())
    synthesized, denied = _synthesize(feedback, bus, merged)
    db = feedback.store.db
    db.migrate(_COMPONENT, _MIGRATIONS)
    with db.transaction():
        db.execute(
            "INSERT OR IGNORE INTO learning_consolidations (scope, session_id, at)"
            " VALUES (?, ?, ?)",
            (feedback.store.scope, session_id, clock().isoformat()),
        )
    result = Consolidation(session_id=session_id, analysis=analysis, merged=merged,
                           synthesized=synthesized, denied=denied)
    result.events.extend(_events(result, feedback))
    return result


def _merge(
    feedback: FeedbackLoop, generalizer: Generalizer
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    store = feedback.store
    before = store.all_patterns()
    after = generalizer.generalize_batch(before)
    kept = {p.id for p in after}
    absorbed = [p for p in before if p.id not in kept]
    if not absorbed:
        return ()
    originals = {p.id: p for p in before}
    merges: list[tuple[str, tuple[str, ...]]] = []
    for pattern in after:
        if pattern == originals.get(pattern.id):
            continue
        store.replace_pattern(pattern)
        took = tuple(p.id for p in absorbed if set(p.evidence_ids) <= set(pattern.evidence_ids))
        merges.append((pattern.id, took))
    for pattern in absorbed:
        store.remove(pattern.id)
    return tuple(merges)


def _synthesize(
    feedback: FeedbackLoop,
    bus: MemoryBus,
    merges: tuple[tuple[str, tuple[str, ...]], ...],
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]:
    from hrm.errors import HRMError

    synthesized: list[tuple[str, int]] = []
    denied: list[tuple[str, str]] = []
    for pattern in feedback.store.all_patterns():
        if len(pattern.evidence_ids) < MIN_SYNTHESIS_EVIDENCE:
            continue
        try:
            outcome = _fill(bus, pattern)
        except HRMError as exc:  # evidence the trace lost: the learning store keeps it
            logger.warning("pattern %s not synthesized: %s", pattern.id, exc.message)
            denied.append((pattern.id, exc.message))
            continue
        if isinstance(outcome, str):
            denied.append((pattern.id, outcome))
        else:
            synthesized.append((synthesis_id(pattern.id), outcome))
    for kept, absorbed in merges:
        for pattern_id in absorbed:
            _retire(bus, pattern_id, kept)
    return tuple(synthesized), tuple(denied)


def _fill(bus: MemoryBus, pattern: Pattern) -> int | str:
    """Add or refresh `pattern` in synthesis: the evidence linked, or the gate's refusal."""
    from hrm.memory.types import MemoryTarget, SynthesizedPattern, WriteSignals
    from hrm.types import BlastRadius, ConflictLevel

    entry = SynthesizedPattern(
        id=synthesis_id(pattern.id),
        pattern_type=pattern.pattern_type,
        description=describe(pattern),
        input_signature=dict(pattern.input_signature),
        recommended_action=dict(pattern.recommended_action),
        confidence=pattern.confidence,
        evidence_ids=list(pattern.evidence_ids),
    )
    if bus.synthesis.has(entry.id):
        return bus.synthesis.refresh(entry)
    # The gate weighs it like any synthesis: its confidence is both how good the source is
    # and how well it fits (a pattern that keeps failing is weakened below the bar).
    signals = WriteSignals(
        progress_delta=0.0, conflict_level=ConflictLevel.NONE,
        source_quality=pattern.confidence, alignment_score=pattern.confidence,
        blast_radius=BlastRadius.MINIMAL,
    )
    decision = bus.add_synthesis(entry, signals, reason="learned at session end",
                                 source="learning")
    if not decision.approved or decision.target is not MemoryTarget.SYNTHESIS:
        return decision.reason  # denied, or sent to the episodic trace only: not synthesis
    return len(entry.evidence_ids)


def _retire(bus: MemoryBus, pattern_id: str, into: str) -> None:
    entry = synthesis_id(pattern_id)
    if bus.synthesis.has(entry):
        bus.synthesis.weaken(
            entry, f"merged into {synthesis_id(into)} by the Generalizer at session end"
        )


def describe(pattern: Pattern) -> str:
    """A pattern in words: when it applies and what it recommends, with its evidence count."""
    when = ", ".join(
        f"{name} {'/'.join(map(str, value)) if isinstance(value, list) else value}"
        for name, value in sorted(pattern.input_signature.items())
    ) or "any input"
    action = ", ".join(f"{k} {v}" for k, v in sorted(pattern.recommended_action.items()))
    return f"For {when}: {action or 'no action'} ({len(pattern.evidence_ids)} episodes)"


def _events(result: Consolidation, feedback: FeedbackLoop) -> list[dict[str, Any]]:
    analysis = result.analysis
    events: list[dict[str, Any]] = [{
        "event_type": "session_consolidated",
        "session_id": result.session_id,
        "summary": (
            f"session {result.session_id}: {analysis.outcomes_recorded} outcomes; "
            + "; ".join(analysis.insights[:3])
        ),
    }]
    for kept, absorbed in result.merged:
        pattern = feedback.store.get_pattern(kept)
        events.append({
            "event_type": "patterns_merged",
            "pattern_id": kept,
            "absorbed": list(absorbed),
            "confidence": pattern.confidence if pattern else None,
            "summary": f"absorbed {', '.join(absorbed) or 'a similar pattern'}",
        })
    for entry, linked in result.synthesized:
        if not linked:  # refreshed with nothing new: nothing to tell
            continue
        events.append({
            "event_type": "synthesis_filled",
            "pattern_id": entry,
            "summary": f"{linked} evidence episode(s) linked",
        })
    return events
