"""AltitudeEvaluator: results scored against plans; altitude moves on repeated failure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.altitude import (
    AltitudeEvaluator,
    Evaluation,
    ExecutionResult,
    Plan,
    PlanStep,
    PlanStepStatus,
)
from hrm.types import AltitudeLevel


def plan_of(*statuses: PlanStepStatus, turns: int = 1) -> Plan:
    steps = [
        PlanStep(order=i, description=f"s{i}", action_type="respond", status=status)
        for i, status in enumerate(statuses, start=1)
    ]
    return Plan(id="p", steps=steps, estimated_turns=turns, requires_agents=False,
                agent_suggestion=None)


evaluator = AltitudeEvaluator()


def test_a_clean_run_is_a_success() -> None:
    evaluation = evaluator.evaluate_result(
        ExecutionResult(success=True, outputs=["done"]), plan_of(PlanStepStatus.PENDING)
    )
    assert evaluation == Evaluation(
        success=True, completion_ratio=1.0, quality_score=1.0, issues=[], suggestions=[]
    )


def test_step_statuses_decide_completion_when_tracked() -> None:
    plan = plan_of(
        PlanStepStatus.COMPLETE, PlanStepStatus.FAILED, PlanStepStatus.SKIPPED,
        PlanStepStatus.PENDING,
    )
    evaluation = evaluator.evaluate_result(ExecutionResult(success=False, outputs=["a"]), plan)
    assert evaluation.completion_ratio == pytest.approx(1 / 3, abs=1e-4)
    assert not evaluation.success
    assert "step 2 failed" in evaluation.issues
    assert "retry the failed steps or revise the plan around them" in evaluation.suggestions


def test_errors_overrun_and_empty_output_lower_quality() -> None:
    plan = plan_of(PlanStepStatus.PENDING, turns=1)
    result = ExecutionResult(success=True, outputs=[" "], turns_used=3, errors=["boom"])
    evaluation = evaluator.evaluate_result(result, plan)
    assert not evaluation.success
    assert evaluation.quality_score == pytest.approx(1.0 - 0.2 - 0.1 - 0.1)
    assert "error: boom" in evaluation.issues
    assert "took 3 turns, estimated 1" in evaluation.issues
    assert "an output is empty" in evaluation.issues


def test_missing_outputs_mean_incomplete() -> None:
    evaluation = evaluator.evaluate_result(
        ExecutionResult(success=True, outputs=["one"]), plan_of(*[PlanStepStatus.PENDING] * 4)
    )
    assert evaluation.completion_ratio == 0.25
    assert not evaluation.success
    assert "continue with the remaining steps" in evaluation.suggestions


def failed() -> Evaluation:
    return Evaluation(success=False, completion_ratio=0.0, quality_score=0.0)


def succeeded() -> Evaluation:
    return Evaluation(success=True, completion_ratio=1.0, quality_score=1.0)


def test_repeated_failure_at_operations_rises_to_strategy() -> None:
    evaluator = AltitudeEvaluator()
    assert evaluator.should_transition(failed(), AltitudeLevel.L2_OPERATIONS) is None
    assert evaluator.failure_streak == 1
    assert evaluator.should_transition(failed(), AltitudeLevel.L2_OPERATIONS) == (
        AltitudeLevel.L3_STRATEGY
    )
    assert evaluator.failure_streak == 0


def test_success_resets_the_streak_and_strategy_descends() -> None:
    evaluator = AltitudeEvaluator(failure_streak=1)
    assert evaluator.should_transition(succeeded(), AltitudeLevel.L2_OPERATIONS) is None
    assert evaluator.failure_streak == 0
    assert evaluator.should_transition(succeeded(), AltitudeLevel.L3_STRATEGY) == (
        AltitudeLevel.L2_OPERATIONS
    )


def test_moment_failure_rises_and_identity_never_moves() -> None:
    evaluator = AltitudeEvaluator(failure_threshold=1)
    assert evaluator.should_transition(failed(), AltitudeLevel.L1_MOMENT) == (
        AltitudeLevel.L2_OPERATIONS
    )
    for evaluation in (failed(), succeeded(), failed()):
        assert evaluator.should_transition(evaluation, AltitudeLevel.L4_IDENTITY) is None
    assert evaluator.should_transition(failed(), AltitudeLevel.L3_STRATEGY) is None


def test_streak_is_caller_state() -> None:
    persisted = AltitudeEvaluator(failure_streak=1)
    assert persisted.should_transition(failed(), AltitudeLevel.L2_OPERATIONS) == (
        AltitudeLevel.L3_STRATEGY
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(list(PlanStepStatus)), max_size=6),
    st.booleans(),
    st.lists(st.text(max_size=5), max_size=4),
    st.lists(st.text(max_size=5), max_size=3),
    st.integers(min_value=0, max_value=10),
)
def test_scores_stay_in_the_unit_interval(
    statuses: list[PlanStepStatus],
    success: bool,
    outputs: list[str],
    errors: list[str],
    turns: int,
) -> None:
    result = ExecutionResult(success=success, outputs=outputs, errors=errors, turns_used=turns)
    evaluation = evaluator.evaluate_result(result, plan_of(*statuses))
    assert 0.0 <= evaluation.completion_ratio <= 1.0
    assert 0.0 <= evaluation.quality_score <= 1.0
    assert evaluation.success <= success
    if not evaluation.success:
        assert evaluation.issues or evaluation.suggestions
