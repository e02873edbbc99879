"""PlanEngine: whole runs — convergence, TTL expiry at each phase, refinement, bad plans."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.plans.conftest import FlakyModel, MakePlan, ScriptedModel, build_plan

from hrm.altitude.types import PlanStepStatus
from hrm.errors import ErrorCode, HRMError
from hrm.llm.offline import OfflineAdapter
from hrm.plans.engine import PlanEngine
from hrm.plans.types import plan_from_dict, plan_to_dict
from hrm.reasoning.types import InputClassification
from hrm.types import Complexity, ConflictLevel, Stakes


def simple() -> InputClassification:
    return InputClassification(complexity=Complexity.SIMPLE, uncertainty=0.1,
                               conflict=ConflictLevel.NONE, stakes=Stakes.LOW,
                               horizon="immediate", domain=[], confidence=0.9)


def chain(n: int) -> Any:
    return build_plan(*[(i, "execute", [i - 1] if i > 1 else [], f"Part {i}")
                        for i in range(1, n + 1)])


@pytest.fixture
def engine() -> Any:
    with PlanEngine(OfflineAdapter()) as e:
        yield e


def test_an_offline_run_converges_deterministically(engine: PlanEngine) -> None:
    goal = "Read the config; then update the parser; then write tests"
    first = engine.run(goal)
    second = engine.run(goal)
    assert first.status == second.status == "converged"
    assert [s.description for s in first.plan.steps] == [s.description for s in second.plan.steps]
    assert list(first.outputs.values()) == list(second.outputs.values())
    assert all(s.status == PlanStepStatus.COMPLETE for s in first.plan.steps)
    assert first.final_output == first.plan.steps[-1].output
    stats = first.history.overall_statistics
    assert stats["convergence_achieved"] and stats["steps_executed"] == len(first.plan.steps)
    json.dumps(first.model_dump())


def test_the_given_plan_is_copied_not_changed(engine: PlanEngine, make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "respond", [1]))
    result = engine.run("x", plan=plan)
    assert result.status == "converged"
    assert [s.status for s in plan.steps] == [PlanStepStatus.PENDING] * 2


def test_independent_steps_share_a_pass(engine: PlanEngine, make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "respond", [1, 2]))
    result = engine.run("x", plan=plan)
    batches = [[r["step_id"] for r in p.execution_results] for p in result.history.passes[1:]]
    assert batches == [["step_1", "step_2"], ["step_3"]]
    assert "step_1" in result.plan.steps[2].incoming_context["dependencies"]


def test_a_cycle_is_a_clear_validation_error(engine: PlanEngine, make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", [2]), (2, "execute", [1]))
    with pytest.raises(HRMError) as caught:
        engine.run("x", plan=plan)
    assert caught.value.code == ErrorCode.VALIDATION_FAILED
    assert "dependency cycle: step_1 -> step_2 -> step_1" in str(caught.value)


def test_a_dangling_dependency_is_a_clear_validation_error(
    engine: PlanEngine, make_plan: MakePlan
) -> None:
    with pytest.raises(HRMError, match="depends on step 4, which is not in plan"):
        engine.run("x", plan=make_plan((1, "research", []), (2, "execute", [4])))


def test_a_negative_ttl_is_refused(engine: PlanEngine) -> None:
    with pytest.raises(HRMError, match="ttl must not be negative"):
        engine.run("x", ttl=-1)


# ── TTL expiry at each phase ────────────────────────────────────────────


def test_a_spent_commitment_expires_at_the_boundary_before_b(engine: PlanEngine) -> None:
    result = engine.run("x", commitment_turns_remaining=0)
    assert result.status == "ttl_expired" and result.expiration is not None
    assert (result.expiration["expiration_type"], result.expiration["phase"]) == (
        "phase_boundary", "B")
    assert result.history.overall_statistics["steps_executed"] == 0


def test_ready_steps_beyond_the_ttl_expire_mid_phase_c(
    engine: PlanEngine, make_plan: MakePlan
) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "respond", [1, 2]))
    result = engine.run("x", plan=plan, ttl=1)
    assert result.status == "ttl_expired" and result.expiration is not None
    assert (result.expiration["expiration_type"], result.expiration["phase"]) == (
        "mid_phase", "C")
    assert list(result.outputs) == ["step_1"], "the partial result is returned"
    assert result.plan.steps[1].status == PlanStepStatus.PENDING


def test_a_spent_step_cap_expires_at_the_boundary_before_d(engine: PlanEngine) -> None:
    result = engine.run("x", plan=chain(4), ttl=2)
    assert result.status == "ttl_expired" and result.expiration is not None
    assert (result.expiration["expiration_type"], result.expiration["phase"]) == (
        "phase_boundary", "D")
    assert list(result.outputs) == ["step_1", "step_2"]
    assert result.expiration["ttl_remaining"] == 0


def test_a_spent_allocation_expires_at_the_boundary_before_c(engine: PlanEngine) -> None:
    # Depth 1 allocates 6 of the 12 allowed; a clean run does not deepen, so pass 7 cannot run.
    result = engine.run("x", plan=chain(8), classification=simple())
    assert result.status == "ttl_expired" and result.expiration is not None
    assert (result.expiration["expiration_type"], result.expiration["phase"]) == (
        "phase_boundary", "C")
    assert len(result.outputs) == 6
    assert result.history.configuration["allocated_ttl"] == 6


def test_without_adaptive_depth_the_ttl_is_the_budget(make_plan: MakePlan) -> None:
    with PlanEngine(OfflineAdapter(), adaptive=False) as engine:
        result = engine.run("x", plan=chain(3), ttl=3)
    assert result.status == "converged"
    assert result.history.configuration["allocated_ttl"] == 3


# ── refinement ──────────────────────────────────────────────────────────


def test_a_failed_step_is_retried_and_the_plan_converges() -> None:
    model = FlakyModel({"Part 2": 1})
    with PlanEngine(model) as engine:
        result = engine.run("x", plan=chain(3))
    assert result.status == "converged"
    changes = [c for p in result.history.passes for c in p.refinement_changes]
    assert [(c["action_type"], c["target_step_id"]) for c in changes] == [("MODIFY", "step_2")]
    assert sum("Part 2" in call for call in model.calls) == 2


def test_a_step_failing_twice_is_replaced_by_an_alternative() -> None:
    model = FlakyModel({"Part 2": 2})
    with PlanEngine(model) as engine:
        result = engine.run("x", plan=chain(3))
    assert result.status == "converged"
    kinds = [c["action_type"] for p in result.history.passes for c in p.refinement_changes]
    assert kinds == ["MODIFY", "REPLACE"]
    assert [s.step_id for s in result.plan.steps] == ["step_1", "step_2_r1", "step_3"]
    assert result.plan.steps[1].description == "Another way to: Part 2"


def test_a_step_that_keeps_failing_fails_the_run_and_its_dependents_go() -> None:
    model = FlakyModel({"Part 2": -1})
    with PlanEngine(model) as engine:
        result = engine.run("x", plan=chain(3), ttl=20)
    assert result.status == "failed" and result.error is not None
    assert "failed for good" in result.error and "step_2_r1" in result.error
    kinds = [c["action_type"] for p in result.history.passes for c in p.refinement_changes]
    assert kinds == ["MODIFY", "REPLACE", "REMOVE"]
    assert [s.step_id for s in result.plan.steps] == ["step_1", "step_2_r1"]


def test_failure_deepens_the_profile_and_raises_the_ttl() -> None:
    model = FlakyModel({"Part 2": 1})
    with PlanEngine(model) as engine:
        result = engine.run("x", plan=chain(3), classification=simple())
    adjustments = [a for p in result.history.passes for a in p.ttl_adjustments]
    assert adjustments and adjustments[0]["to"] > adjustments[0]["from"]
    assert adjustments[0]["reasoning_depth"] == 2


def test_events_follow_the_run(make_plan: MakePlan) -> None:
    events: list[str] = []
    with PlanEngine(FlakyModel({"Part 2": 1})) as engine:
        engine.run("x", plan=chain(2), on_event=lambda kind, data: events.append(kind))
    assert events[:3] == ["run_started", "profile", "plan"]
    assert events[-1] == "run_finished"
    for kind in ("pass_started", "step_started", "step_finished", "evaluation", "refinement",
                 "ttl_adjusted"):
        assert kind in events


def test_a_broken_listener_does_not_break_the_run(engine: PlanEngine) -> None:
    def listener(kind: str, data: dict[str, Any]) -> None:
        raise RuntimeError("display crashed")

    assert engine.run("hello", on_event=listener).status == "converged"


# ── with a real model ───────────────────────────────────────────────────


def test_a_real_model_can_end_the_plan_early() -> None:
    model = ScriptedModel({
        "plan_validation": ['{"issues": []}'] * 3,
        "plan_convergence": ['{"converged": true, "confidence": 0.95, "reason": "done"}'],
    })
    with PlanEngine(model) as engine:  # type: ignore[arg-type]
        result = engine.run("x", plan=chain(3))
    assert result.status == "converged"
    assert [s.status for s in result.plan.steps] == [
        PlanStepStatus.COMPLETE, PlanStepStatus.SKIPPED, PlanStepStatus.SKIPPED]
    assert "plan_step:execute" in model.purposes


def test_a_real_model_gap_adds_a_step() -> None:
    model = ScriptedModel({
        "plan_validation": [
            '{"issues": [{"description": "no rollback plan", "severity": "high", '
            '"proposed_fix": "Write a rollback plan"}]}',
            '{"issues": []}',
        ],
    })
    with PlanEngine(model) as engine:  # type: ignore[arg-type]
        result = engine.run("x", plan=chain(1))
    assert result.status == "converged"
    assert [s.description for s in result.plan.steps] == ["Part 1", "Write a rollback plan"]
    assert result.plan.steps[1].dependencies == [1]


def test_history_round_trips_through_json(engine: PlanEngine) -> None:
    result = engine.run("Read it; then fix it")
    data = json.loads(json.dumps(result.history.model_dump()))
    plan = plan_from_dict(data["final_result"]["plan"])
    assert plan_to_dict(plan) == plan_to_dict(result.plan)
