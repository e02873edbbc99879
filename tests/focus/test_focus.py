"""FocusHRM: turn processing (stay, switch, queue, ask) and governing the selected action."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hrm.focus.focus import FocusHRM
from hrm.governance.arbiter import ArbitrationDisposition
from hrm.governance.problems import ProblemStatus
from hrm.governance.signals import DerivedSignals
from hrm.reasoning.types import (
    AgentBundleProposal,
    CandidateAction,
    InputClassification,
    SelectedAction,
)
from hrm.storage.sqlite import Database
from hrm.types import (
    AltitudeLevel,
    BlastRadius,
    Complexity,
    ConflictLevel,
    GateType,
    HRMContext,
    ReducerType,
    Stakes,
    Stance,
    TurnInput,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def focus(clock: FakeClock) -> FocusHRM:
    return FocusHRM.open(
        Database(":memory:"), "ADMIN", agent_registry={"researcher", "critic"}, clock=clock
    )


def turn(text: str, **metadata: Any) -> TurnInput:
    context = HRMContext("s", 1, None, AltitudeLevel.L2_OPERATIONS, Stance.SENSEMAKING, None, None)
    return TurnInput(text=text, timestamp=datetime(2026, 1, 1, tzinfo=UTC), context=context,
                     metadata=metadata)  # fmt: skip


def signals(urgency: float) -> DerivedSignals:
    return DerivedSignals(
        conflict_level=ConflictLevel.NONE, blast_radius=BlastRadius.MINIMAL,
        source_quality=0.5, alignment_score=0.5, urgency=urgency,
    )  # fmt: skip


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["event_type"] for e in events]


def test_first_turn_creates_and_activates_the_problem(focus: FocusHRM) -> None:
    result = focus.process_turn(turn("Fix the flaky CI pipeline"))
    assert result.action == "continue"
    assert result.arbitration.disposition is ArbitrationDisposition.SWITCH
    active = focus.problem_registry.get_active()
    assert active is not None and active.id == result.switched_to
    assert active.title == "Fix the flaky CI pipeline"
    assert kinds(result.events) == ["arbitration", "problem_switched"]
    assert result.stance_after is Stance.SENSEMAKING


def test_sensemaking_lasts_two_turns_then_execution_through_framing(focus: FocusHRM) -> None:
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    second = focus.process_turn(turn("the CI pipeline fails on the cache step"))
    assert second.arbitration.disposition is ArbitrationDisposition.STAY
    assert "problem_progress" in kinds(second.events)
    change = second.events[-1]
    assert change["event_type"] == "stance_change"
    assert change["payload"]["via_gate"] == "framing"
    assert (second.stance_before, second.stance_after) == (Stance.SENSEMAKING, Stance.EXECUTION)


def test_ask_returns_the_question_and_changes_nothing(focus: FocusHRM) -> None:
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    focus.commit("stabilise CI", 4)
    before = (
        focus.problem_registry.list(), focus.commitments.get_active(), focus.stance.state()
    )
    result = focus.process_turn(turn("Write the quarterly newsletter"), signals(1.0))
    assert result.action == "ask_user"
    assert "Write the quarterly newsletter" in result.message
    assert result.arbitration.disposition is ArbitrationDisposition.ASK
    assert kinds(result.events) == ["arbitration"]
    after = (
        focus.problem_registry.list(), focus.commitments.get_active(), focus.stance.state()
    )
    assert after == before
    assert result.commitment_after == result.commitment_before


def test_queue_persists_the_candidate_and_stays(focus: FocusHRM) -> None:
    first = focus.process_turn(turn("Fix the flaky CI pipeline"))
    result = focus.process_turn(turn("Someday rename the docs folder"), signals(0.3))
    assert result.arbitration.disposition is ArbitrationDisposition.QUEUE
    queued = focus.problem_registry.get(result.queued or "")
    assert queued is not None and queued.status is ProblemStatus.QUEUED
    assert queued.id == result.arbitration.candidate_problem_id  # the arbiter's provisional id
    assert focus.problem_registry.get_active().id == first.switched_to  # type: ignore[union-attr]


def test_switch_pauses_the_active_problem_and_abandons_its_commitment(
    focus: FocusHRM, clock: FakeClock
) -> None:
    first = focus.process_turn(turn("Fix the flaky CI pipeline"))
    focus.commit("stabilise CI", 4)
    assert focus.stance.get_current() is Stance.EXECUTION
    clock.now += timedelta(hours=1)
    result = focus.process_turn(turn("Write the quarterly newsletter"), signals(1.0))
    assert result.arbitration.disposition is ArbitrationDisposition.SWITCH
    paused = focus.problem_registry.get(first.switched_to or "")
    assert paused is not None and paused.status is ProblemStatus.PAUSED
    assert focus.commitments.get_active() is None
    assert result.commitment_before is not None and result.commitment_after is None
    assert "commitment_abandoned" in kinds(result.events)
    assert result.stance_after is Stance.SENSEMAKING  # reframed through FRAMING


def test_emergency_switches_into_execution_through_the_emergency_gate(focus: FocusHRM) -> None:
    focus.process_turn(turn("Write the quarterly newsletter"))
    result = focus.process_turn(turn("Production is down, checkout returns 500"))
    assert result.arbitration.emergency
    moves = [e for e in result.events if e["event_type"] == "stance_change"]
    assert moves[0]["payload"]["via_gate"] == "emergency"
    assert result.stance_after is Stance.EXECUTION


def test_commitment_ticks_expires_and_moves_to_evaluation(focus: FocusHRM) -> None:
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    change = focus.commit("stabilise CI", 2)
    assert change.stance is Stance.EXECUTION
    assert kinds(change.events) == ["commitment_created", "stance_change"]
    one = focus.process_turn(turn("the CI pipeline cache step again"))
    assert one.commitment_after is not None and one.commitment_after.turns_remaining == 1
    two = focus.process_turn(turn("the CI pipeline cache step still fails"))
    assert two.commitment_after is None
    assert "commitment_expired" in kinds(two.events)
    assert two.stance_after is Stance.EVALUATION
    three = focus.process_turn(turn("the CI pipeline looks fine now"))
    assert three.stance_after is Stance.SENSEMAKING  # one evaluation turn, no commitment


def test_delivery_completes_the_commitment_and_evaluates(focus: FocusHRM) -> None:
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    focus.commit("stabilise CI", 5)
    change = focus.record_delivery()
    assert kinds(change.events) == ["commitment_completed", "stance_change"]
    assert change.stance is Stance.EVALUATION and change.commitment is None


def test_delivery_leaves_a_lease_the_person_gave_running(focus: FocusHRM) -> None:
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    focus.commit("stabilise CI", 3, holds_focus=True)
    stance = focus.stance.get_current()
    change = focus.record_delivery()
    assert change.events == []
    assert change.commitment is not None and change.commitment.turns_remaining == 3
    assert change.stance is stance
    assert focus.commitments.get_active() is not None


def test_commit_needs_a_problem(focus: FocusHRM) -> None:
    from hrm.errors import HRMError

    with pytest.raises(HRMError):
        focus.commit("nothing to do", 3)


def test_state_is_shared_with_a_second_process(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "memory.db"
    with Database(path) as a, Database(path) as b:
        first = FocusHRM.open(a, "ADMIN", clock=clock)
        second = FocusHRM.open(b, "ADMIN", clock=clock)
        created = first.process_turn(turn("Fix the flaky CI pipeline"))
        first.commit("stabilise CI", 3)
        result = second.process_turn(turn("the CI pipeline cache step"))
        assert result.arbitration.disposition is ArbitrationDisposition.STAY
        assert result.arbitration.active_problem_id == created.switched_to
        assert first.commitments.get_active().turns_remaining == 2  # type: ignore[union-attr]


# ── govern ─────────────────────────────────────────────────────────────────

CLASSIFICATION = InputClassification(
    complexity=Complexity.MODERATE, uncertainty=0.3, conflict=ConflictLevel.NONE,
    stakes=Stakes.MEDIUM, horizon="near", domain=["ci"], confidence=0.8,
)  # fmt: skip


def action(kind: str, ident: str = "", **kwargs: Any) -> CandidateAction:
    return CandidateAction(id=ident or kind, action_type=kind, description=kind, **kwargs)


def bundle(strategy: str = "exploration", agents: list[str] | None = None) -> AgentBundleProposal:
    return AgentBundleProposal(
        strategy=strategy, classification=CLASSIFICATION,
        agents=agents or ["researcher", "critic"], reducer=ReducerType.MERGE,
        reason="check the ci cache",
    )  # fmt: skip


def select(primary: CandidateAction, fallback: CandidateAction | None = None,
           batch: list[CandidateAction] | None = None) -> SelectedAction:  # fmt: skip
    return SelectedAction(primary=primary, rationale="r", priority_score=0.5, fallback=fallback,
                          batch=batch)  # fmt: skip


def test_allowed_primary_passes(focus: FocusHRM) -> None:
    outcome = focus.govern(select(action("respond")), CLASSIFICATION)
    assert outcome.allowed_action.id == "respond" and not outcome.fallback_used
    assert outcome.denied == []
    assert outcome.events[0]["event_type"] == "action_governed"


def test_denied_primary_uses_the_fallback_with_a_reason(focus: FocusHRM) -> None:
    outcome = focus.govern(select(action("execute"), action("ask", "clarify")), CLASSIFICATION)
    assert outcome.allowed_action.id == "clarify" and outcome.fallback_used
    assert "sensemaking does not allow 'execute'" in outcome.denied[0]


def test_denied_fallback_falls_back_to_respond(focus: FocusHRM) -> None:
    outcome = focus.govern(select(action("execute"), action("execute", "e2")), CLASSIFICATION)
    assert outcome.allowed_action.action_type == "respond"
    assert outcome.allowed_action.source == "focus"
    assert len(outcome.denied) == 2


def test_delegate_goes_through_agent_approval(focus: FocusHRM) -> None:
    ok = focus.govern(select(action("delegate", agent_proposal=bundle())), CLASSIFICATION)
    assert ok.allowed_action.action_type == "delegate"
    assert [d.gate.value for d in ok.gate_decisions] == ["agent_approval"]
    unknown = select(action("delegate", agent_proposal=bundle(agents=["ghost"])))
    denied = focus.govern(unknown, CLASSIFICATION)
    assert denied.fallback_used and "Unknown agent" in denied.denied[0]
    assert not denied.gate_decisions[0].approved
    missing = focus.govern(select(action("delegate")), CLASSIFICATION)
    assert "sensemaking allows 'delegate' only for" in missing.denied[0]


def test_irreversible_high_stakes_needs_a_commitment(focus: FocusHRM) -> None:
    risky = InputClassification(
        complexity=Complexity.COMPLEX, uncertainty=0.2, conflict=ConflictLevel.NONE,
        stakes=Stakes.HIGH, horizon="immediate", domain=["ci"], confidence=0.9, irreversible=True,
    )  # fmt: skip
    focus.process_turn(turn("Fix the flaky CI pipeline"))
    focus.stance.transition(Stance.EXECUTION, "test", GateType.EMERGENCY, {"emergency": True})
    outcome = focus.govern(select(action("execute")), risky)
    assert outcome.fallback_used and outcome.interrupt == "high_stakes_irreversible"
    focus.commit("stabilise CI", 3)
    assert not focus.govern(select(action("execute")), risky).fallback_used


def test_batch_kept_only_when_every_member_passes(focus: FocusHRM) -> None:
    members = [action("respond", "r1"), action("ask", "a1")]
    kept = focus.govern(select(members[0], batch=members), CLASSIFICATION)
    assert kept.batch == members
    mixed = [action("respond", "r1"), action("execute", "x1")]
    dropped = focus.govern(select(mixed[0], batch=mixed), CLASSIFICATION)
    assert dropped.batch is None and "micro-batch dropped" in dropped.denied[-1]
