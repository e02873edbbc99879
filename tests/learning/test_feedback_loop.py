"""FeedbackLoop: outcomes with evidence, a pattern after three successes, persisted tallies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hrm.config import HRMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.learning import FeedbackLoop, LearningEvent, PatternStore
from hrm.reasoning import ReasoningRouter
from hrm.storage.sqlite import Database
from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

SIG = {"complexity": "simple", "stakes": "low", "horizon": "immediate", "domain": ["code"]}
ROUTE = {"strategy": "quick_answer", "pattern_match": None}


def loop(db: Database, episodic: Any, clock: Any, **kwargs: Any) -> FeedbackLoop:
    return FeedbackLoop(PatternStore(db, clock=clock), episodic, clock=clock, **kwargs)


def test_outcome_goes_to_the_episodic_trace_and_returns_its_id(
    db: Database, episodic: Any, clock: Any
) -> None:
    feedback = loop(db, episodic, clock)
    evidence = feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
    assert evidence == "ep_1"
    entry = episodic.entries[0]
    assert entry["event_type"] == "learning_outcome"
    assert entry["signal"] == SIG and entry["routing"] == ROUTE and entry["success"] is True
    (record,) = feedback.outcomes("s1")
    assert record.id == "ep_1" and record.success and record.effect == "recorded"


def test_pattern_appears_after_the_threshold_of_successes(
    db: Database, episodic: Any, clock: Any
) -> None:
    emitted: list[LearningEvent] = []
    feedback = loop(db, episodic, clock, emit=emitted.append)
    for _ in range(2):
        feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
        assert feedback.last_events == []
    feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
    (event,) = feedback.last_events
    assert event.event_type == "pattern_created"
    assert event.payload["evidence_ids"] == ["ep_1", "ep_2", "ep_3"]
    assert emitted == [event]
    pattern = feedback.store.get_pattern(event.payload["pattern_id"])
    assert pattern is not None
    assert pattern.recommended_action == {"strategy": "quick_answer"}
    assert pattern.confidence == pytest.approx(0.8)
    (match,) = feedback.get_patterns_for_signal(SIG)
    assert match.match_confidence >= 0.7  # usable at the default match threshold


def test_threshold_comes_from_config(db: Database, episodic: Any, clock: Any) -> None:
    feedback = FeedbackLoop(
        PatternStore(db, clock=clock), episodic, HRMConfig(pattern_creation_threshold=1),
        clock=clock,
    )
    feedback.record_outcome(SIG, ROUTE, {"success": True})
    assert [e.event_type for e in feedback.last_events] == ["pattern_created"]


def test_later_outcomes_strengthen_and_weaken(
    db: Database, episodic: Any, clock: Any
) -> None:
    feedback = loop(db, episodic, clock)
    for _ in range(3):
        feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
    pid = feedback.last_events[0].payload["pattern_id"]
    feedback.record_outcome(SIG, {"strategy": "quick_answer", "pattern_match": pid},
                            {"success": True}, session_id="s1")
    assert feedback.last_events[0].event_type == "pattern_strengthened"
    assert feedback.last_events[0].payload["confidence"] == pytest.approx(0.84)
    feedback.record_outcome(SIG, ROUTE, {"success": False, "reason": "wrong answer"},
                            session_id="s1")
    assert feedback.last_events[0].event_type == "pattern_weakened"
    pattern = feedback.store.get_pattern(pid)
    assert pattern is not None
    assert pattern.weaken_reasons == ["wrong answer"]
    assert pattern.evidence_ids == ["ep_1", "ep_2", "ep_3", "ep_4"]


def test_mostly_failing_signatures_do_not_become_patterns(
    db: Database, episodic: Any, clock: Any
) -> None:
    feedback = loop(db, episodic, clock)
    for _ in range(4):
        feedback.record_outcome(SIG, ROUTE, {"success": False})
    for _ in range(3):
        feedback.record_outcome(SIG, ROUTE, {"success": True})
    assert feedback.store.all_patterns() == []


def test_different_strategies_are_counted_apart(
    db: Database, episodic: Any, clock: Any
) -> None:
    feedback = loop(db, episodic, clock)
    for strategy in ("quick_answer", "exploration", "quick_answer", "exploration"):
        feedback.record_outcome(SIG, {"strategy": strategy}, {"success": True})
    assert feedback.store.all_patterns() == []


def prefixed_log(prefix: str) -> Any:
    entries: list[dict[str, Any]] = []

    def log(entry: dict[str, Any]) -> str:
        entries.append(entry)
        return f"{prefix}_{len(entries)}"

    return log


def test_tallies_survive_a_new_process(db_path: Path, clock: Any) -> None:
    with Database(db_path) as first:
        feedback = FeedbackLoop(PatternStore(first, clock=clock), prefixed_log("a"), clock=clock)
        feedback.record_outcome(SIG, ROUTE, {"success": True})
        feedback.record_outcome(SIG, ROUTE, {"success": True})
    with Database(db_path) as second:
        feedback = FeedbackLoop(PatternStore(second, clock=clock), prefixed_log("b"), clock=clock)
        feedback.record_outcome(SIG, ROUTE, {"success": True})
        (event,) = feedback.last_events
        assert event.payload["evidence_ids"] == ["a_1", "a_2", "b_1"]


def test_failed_episodic_log_records_nothing(db: Database, clock: Any) -> None:
    def broken(entry: dict[str, Any]) -> str:
        raise HRMError.db_locked("episodic")

    feedback = loop(db, broken, clock)
    with pytest.raises(HRMError):
        feedback.record_outcome(SIG, ROUTE, {"success": True})
    assert feedback.outcomes() == []


def test_duplicate_evidence_id_rolls_back(db: Database, clock: Any) -> None:
    feedback = loop(db, lambda entry: "same", clock)
    feedback.record_outcome(SIG, ROUTE, {"success": True})
    with pytest.raises(HRMError):
        feedback.record_outcome(SIG, ROUTE, {"success": True})
    assert len(feedback.outcomes()) == 1


def test_analyze_session(db: Database, episodic: Any, clock: Any) -> None:
    feedback = loop(db, episodic, clock)
    for turn in range(1, 4):
        feedback.record_outcome(SIG, ROUTE, {"success": True, "turn_number": turn},
                                session_id="s1")
    pid = feedback.last_events[0].payload["pattern_id"]
    for turn in (4, 5):
        feedback.record_outcome(SIG, {"strategy": "quick_answer", "pattern_match": pid},
                                {"success": False, "turn_number": turn}, session_id="s1")
    feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="other")
    analysis = feedback.analyze_session("s1")
    assert analysis.turn_count == 5 and analysis.outcomes_recorded == 5
    assert analysis.patterns_created == [pid]
    assert analysis.patterns_weakened == [pid]
    assert analysis.patterns_strengthened == []
    assert "3/5 outcomes succeeded" in analysis.insights
    assert feedback.analyze_session().session_id == "other"
    with pytest.raises(HRMError) as err:
        loop(db, episodic, clock).analyze_session()
    assert err.value.code == ErrorCode.VALIDATION_FAILED


def test_learned_after_three_successes_and_used_on_the_fourth_turn(
    db: Database, episodic: Any, clock: Any
) -> None:
    """The demo's promise: deterministic learning through the real router."""
    feedback = loop(db, episodic, clock)
    router = ReasoningRouter(pattern_source=feedback.get_patterns_for_signal)
    context = HRMContext(
        session_id="demo", turn_number=1, problem_id=None, altitude=AltitudeLevel.L2_OPERATIONS,
        stance=Stance.SENSEMAKING, commitment_id=None, commitment_turns_remaining=None,
    )
    created: list[str] = []
    routed_by: list[str | None] = []
    for turn in range(1, 5):
        text = "How do I rename a git branch?"
        result = router.reason(TurnInput(text=text, timestamp=datetime.now(UTC), context=context))
        routed_by.append(result.routing.pattern_match)
        feedback.record_outcome(
            result.classification.signature(),
            {"strategy": result.routing.strategy, "pattern_match": result.routing.pattern_match},
            {"success": True, "turn_number": turn},
            session_id="demo",
        )
        created += [e.payload["pattern_id"] for e in feedback.last_events
                    if e.event_type == "pattern_created"]
    assert len(created) == 1
    assert routed_by == [None, None, None, created[0]]


def test_a_database_from_before_the_partial_tally_index_keeps_counting_toward_a_pattern(
    tmp_path: Path, episodic: Any, clock: Any
) -> None:
    from hrm.learning.feedback import MIGRATIONS

    old = Database(tmp_path / "memory.db")
    old.migrate(FeedbackLoop.COMPONENT, MIGRATIONS[:1])  # a home made before migration 2
    old.close()
    db = Database(tmp_path / "memory.db")
    try:
        feedback = loop(db, episodic, clock)  # the default threshold: three successes
        for _ in range(2):
            feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
        indexes = {
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        assert "learning_outcomes_unclaimed" in indexes
        assert "learning_outcomes_tally" not in indexes
        feedback.record_outcome(SIG, ROUTE, {"success": True}, session_id="s1")
        assert [e.event_type for e in feedback.last_events] == ["pattern_created"]
    finally:
        db.close()
