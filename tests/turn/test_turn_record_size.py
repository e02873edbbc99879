"""A turn's record does not grow with history (issue 35, D330, D331): the matched patterns it
lists are bounded, and events that only repeat its parts are not records of their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hrm.learning.patterns import Pattern
from hrm.pipeline import HRM
from hrm.reasoning.types import PatternMatch
from hrm.turn.runner import IN_THE_TURN_RECORD
from hrm.turn.steps.reason import PATTERNS_KEPT, kept_patterns

_MATCHES = st.lists(
    st.builds(
        PatternMatch,
        pattern_id=st.text("abcdef0123", min_size=1, max_size=6),
        match_confidence=st.floats(0, 1),
        recommended_strategy=st.sampled_from(["quick_answer", "dialogue", "deep_analysis"]),
        evidence_count=st.integers(0, 500),
    ),
    max_size=40,
    unique_by=lambda m: m.pattern_id,
)


@given(matches=_MATCHES, pick=st.integers(0, 60), decided=st.booleans())
def test_the_record_keeps_the_best_matches_and_the_decider(
    matches: list[PatternMatch], pick: int, decided: bool
) -> None:
    decider = matches[pick % len(matches)].pattern_id if matches and decided else None
    kept = kept_patterns(matches, decider)
    ids = [k["pattern_id"] for k in kept]
    best = [m.pattern_id for m in matches[:PATTERNS_KEPT]]
    assert ids[: len(best)] == best  # the best first, in the order Learning ranked them
    assert len(kept) <= PATTERNS_KEPT + 1
    if decider is not None:
        assert decider in ids and ids.count(decider) == 1
    else:
        assert ids == best
    first = matches[0] if matches else None
    if first is not None:
        assert kept[0] == {"pattern_id": first.pattern_id,
                           "match_confidence": first.match_confidence,
                           "recommended_strategy": first.recommended_strategy,
                           "evidence_count": first.evidence_count}


def test_a_turn_lists_a_few_of_many_matching_patterns_and_counts_them(tmp_path: Path) -> None:
    at = datetime(2026, 3, 2, 9, tzinfo=UTC)
    with HRM.open(tmp_path / "home", "ADMIN", "offline", clock=lambda: at) as h:
        first = h.turn("How do I rename a git branch?")
        read = first.decision.classification
        signature = {name: read[name] for name in ("complexity", "stakes", "horizon", "domain")}
        store = h.stack.feedback.store
        for n in range(12):  # twelve learned patterns all alike to this input
            store.add_pattern(Pattern(
                id=f"pat_many_{n:02d}", pattern_type="strategy", input_signature=signature,
                recommended_action={"strategy": "quick_answer"}, confidence=0.5 + n / 100,
                created_at=at + timedelta(seconds=n),
            ))
        result = h.turn("How do I rename a git branch?")
        stored = h.last_decision()
    record = result.decision
    assert record.patterns_matched >= 12
    assert len(record.patterns) <= PATTERNS_KEPT + 1
    assert record.patterns[0]["pattern_id"] == "pat_many_11"  # the most confident first
    decider = record.strategy.get("pattern_id")
    if decider:
        assert decider in {p["pattern_id"] for p in record.patterns}
    assert stored is not None
    assert stored["patterns"] == record.patterns
    assert stored["patterns_matched"] == record.patterns_matched


def test_events_that_repeat_the_turn_record_are_not_appended(tmp_path: Path) -> None:
    at = datetime(2026, 3, 2, 9, tzinfo=UTC)
    with HRM.open(tmp_path / "home", "ADMIN", "offline", clock=lambda: at) as h:
        for text in ["Let's plan the v2 launch", "Write the migration step for invoices",
                     "Write the migration step for invoices", "Write the migration step"]:
            h.turn(text)
        records = list(h.decisions.records())
    kinds = {r.kind for r in records}
    assert not kinds & IN_THE_TURN_RECORD
    turns = [r.data for r in records if r.kind == "turn"]
    # What those records held is in the turn record: arbitration, governance with its stance.
    assert all(t["arbitration_outcomes"] for t in turns)
    governed = [t["decision"]["governance"] for t in turns if t["decision"]["governance"]]
    assert governed and all(g["stance"] for g in governed)
