"""The phase functions: 002's tuple contracts, None collaborators, and never raising."""

from __future__ import annotations

from typing import Any

from tests.plans.conftest import FlakyModel, MakePlan, set_status

from hrm.altitude.types import PlanStep, PlanStepStatus
from hrm.llm.offline import OfflineAdapter
from hrm.plans.depth import AdaptiveDepth
from hrm.plans.executor import StepExecutor
from hrm.plans.phases import (
    TTL_EXPIRED,
    phase_a_taskprofile_ttl,
    phase_b_initial_plan_refinement,
    phase_c_evaluate,
    phase_c_execute_batch,
    phase_c_refine,
    phase_d_adaptive_depth,
)
from hrm.plans.planner import RecursivePlanner
from hrm.plans.step_prep import output_key
from hrm.plans.types import (
    ExecutionPass,
    OrchestrationState,
    StepMemory,
    TaskProfile,
    ValidationIssue,
)
from hrm.plans.validation import SemanticValidator
from hrm.runtime.tools import Tool, ToolRegistry


class Broken:
    """Any collaborator whose every method raises."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"{name} broke")

        return fail


class HalfBrokenDepth(AdaptiveDepth):
    def allocate_ttl(self, task_profile: TaskProfile, global_ttl: int) -> int:
        raise RuntimeError("no budget today")


# ── Phase A ─────────────────────────────────────────────────────────────


def test_phase_a_without_adaptive_depth_gives_the_default_profile_and_global_ttl() -> None:
    ok, (profile, ttl), error = phase_a_taskprofile_ttl("x", None, 9)
    assert ok and error is None and ttl == 9 and isinstance(profile, TaskProfile)


def test_phase_a_allocates_a_bounded_ttl() -> None:
    ok, (profile, ttl), _ = phase_a_taskprofile_ttl(
        "x", AdaptiveDepth(commitment_turns_remaining=2), 12)
    assert ok and profile is not None and ttl == 2


def test_phase_a_failures_are_returned() -> None:
    assert phase_a_taskprofile_ttl("x", Broken(), 5) == (  # type: ignore[arg-type]
        False, (None, 5), "task profile inference failed: infer_task_profile broke")
    ok, (profile, ttl), error = phase_a_taskprofile_ttl("x", HalfBrokenDepth(), 5)
    assert not ok and profile is not None and ttl == 5 and "no budget today" in str(error)


# ── Phase B ─────────────────────────────────────────────────────────────


def test_phase_b_with_no_collaborators_keeps_the_plan(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [1]))
    ok, refined, error = phase_b_initial_plan_refinement("x", plan, TaskProfile(), None, None, None)
    assert ok and error is None and [s.step_id for s in refined.steps] == ["step_1", "step_2"]
    assert refined is not plan


def test_phase_b_generates_an_empty_plan(make_plan: MakePlan) -> None:
    ok, refined, _ = phase_b_initial_plan_refinement(
        "Read it; then fix it", make_plan(), TaskProfile(reasoning_depth=2),
        RecursivePlanner(), SemanticValidator(), None)
    assert ok and refined.strategy == "decomposition" and len(refined.steps) == 4


def test_phase_b_refines_what_validation_finds(make_plan: MakePlan) -> None:
    registry = ToolRegistry([Tool(name="lookup", description="d", capability="search",
                                  handler=lambda a: a)])
    plan = make_plan((1, "research", []))
    plan.steps[0].tool = "missing"
    ok, refined, _ = phase_b_initial_plan_refinement(
        "x", plan, TaskProfile(), RecursivePlanner(), SemanticValidator(), registry)
    assert ok and refined.steps[0].tool is None
    assert plan.steps[0].tool == "missing", "the caller's plan is untouched"


def test_phase_b_reports_a_cycle_and_returns_the_original(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", [2]), (2, "execute", [1]))
    ok, same, error = phase_b_initial_plan_refinement(
        "x", plan, TaskProfile(), RecursivePlanner(), SemanticValidator(), None)
    assert not ok and same is plan and "dependency cycle" in str(error)


def test_phase_b_collaborator_failure_is_returned(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    ok, same, error = phase_b_initial_plan_refinement(
        "x", plan, TaskProfile(), None, Broken(), None)  # type: ignore[arg-type]
    assert not ok and same is plan and "validate broke" in str(error)


# ── Phase C: execute ────────────────────────────────────────────────────


def _state(plan: Any, ttl: int) -> OrchestrationState:
    return OrchestrationState(plan=plan, ttl_remaining=ttl, global_ttl=ttl, goal="g")


def test_phase_c_runs_ready_steps_and_spends_one_ttl_each(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "respond", [1, 2]))
    state, memory = _state(plan, 5), StepMemory()
    results = phase_c_execute_batch(plan, state, StepExecutor(OfflineAdapter()), None, memory,
                                    None)
    assert [(r["step_id"], r["status"]) for r in results] == [
        ("step_1", "COMPLETE"), ("step_2", "COMPLETE")]
    assert state.ttl_remaining == 3 and state.ttl_used == 2
    assert state.executed_step_ids == ["step_1", "step_2"]
    assert memory.get(output_key(plan.id, "step_1")) == plan.steps[0].output
    assert plan.steps[2].status == PlanStepStatus.PENDING


def test_phase_c_leaves_steps_beyond_the_ttl_unstarted(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "research", []))
    state = _state(plan, 1)
    results = phase_c_execute_batch(plan, state, StepExecutor(OfflineAdapter()), None,
                                    StepMemory(), None)
    assert [r.get("skipped_reason") for r in results] == [None, TTL_EXPIRED, TTL_EXPIRED]
    assert state.ttl_remaining == 0
    assert [s.status for s in plan.steps] == [
        PlanStepStatus.COMPLETE, PlanStepStatus.PENDING, PlanStepStatus.PENDING]


class DenyExecute:
    def review_step(self, step: PlanStep) -> str | None:
        return "no execute steps now" if step.action_type == "execute" else None


def test_a_supervisor_denial_fails_the_step_without_spending_ttl(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", []))
    state = _state(plan, 5)
    results = phase_c_execute_batch(plan, state, StepExecutor(OfflineAdapter()), None,
                                    StepMemory(), DenyExecute())
    denied = next(r for r in results if r["step_id"] == "step_2")
    assert denied["status"] == "FAILED" and denied["error_code"] == "gate_denied"
    assert state.ttl_used == 1


def test_a_raising_supervisor_fails_closed(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    results = phase_c_execute_batch(plan, _state(plan, 5), StepExecutor(OfflineAdapter()), None,
                                    StepMemory(), Broken())  # type: ignore[arg-type]
    assert results[0]["status"] == "FAILED" and "supervisor failed" in results[0]["error"]


def test_phase_c_batch_never_raises(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    results = phase_c_execute_batch(plan, _state(plan, 5), Broken(), None,  # type: ignore[arg-type]
                                    StepMemory(), None)
    assert results[0]["status"] == "FAILED" and results[0]["error_code"] == "internal_error"
    assert plan.steps[0].status == PlanStepStatus.FAILED


# ── Phase C: evaluate and refine ────────────────────────────────────────


def test_evaluate_without_collaborators_uses_the_deterministic_rule(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", [])), step_1="COMPLETE")
    plan.steps[0].output = "x"
    evaluation = phase_c_evaluate(plan, [], None, None, None)
    assert evaluation["converged"] and not evaluation["needs_refinement"]
    assert evaluation["convergence_reason_codes"] == ["ALL_STEPS_COMPLETE"]
    assert evaluation["semantic_validation"]["issues"] == []


def test_evaluate_finds_failures_and_blocked_steps(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])), step_1="FAILED")
    evaluation = phase_c_evaluate(plan, [], SemanticValidator(), None, None)
    assert not evaluation["converged"] and evaluation["needs_refinement"]
    assert evaluation["blocked_step_ids"] == ["step_2"]
    assert [i.issue_type for i in evaluation["validation_issues"]] == ["step_failed"]


def test_evaluate_survives_broken_collaborators(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    evaluation = phase_c_evaluate(plan, [], Broken(), Broken(), None)  # type: ignore[arg-type]
    assert not evaluation["converged"]
    assert evaluation["convergence_reason_codes"] == ["ASSESSMENT_FAILED"]
    assert len(evaluation["errors"]) == 2


def test_refine_without_a_planner_changes_nothing(make_plan: MakePlan) -> None:
    assert phase_c_refine(make_plan((1, "research", [])), {}, None) == (True, [], None)


def test_refine_returns_dumped_actions(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", [])), step_1="FAILED")
    evaluation = {"validation_issues": [ValidationIssue(issue_type="step_failed",
                                                        severity="high", description="x")]}
    ok, changes, error = phase_c_refine(plan, evaluation, RecursivePlanner())
    assert ok and error is None
    assert changes == [{"action_type": "MODIFY", "target_step_id": "step_1",
                        "new_step": {"status": "PENDING"}, "reason": "step failed: retry once"}]


def test_refine_failure_is_returned(make_plan: MakePlan) -> None:
    ok, changes, error = phase_c_refine(make_plan(), {}, Broken())  # type: ignore[arg-type]
    assert not ok and changes == [] and "refine_plan broke" in str(error)


# ── Phase D ─────────────────────────────────────────────────────────────


def test_phase_d_without_adaptive_depth_changes_nothing(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    assert phase_d_adaptive_depth(TaskProfile(), {}, plan, None, _state(plan, 3), 12, []) == (
        True, None, None)


def test_phase_d_raises_the_ttl_after_a_blocked_step_and_records_it(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])), step_1="FAILED")
    state = OrchestrationState(plan=plan, ttl_remaining=1, global_ttl=20, ttl_used=5)
    depth = AdaptiveDepth()
    profile = TaskProfile(reasoning_depth=1)
    current = ExecutionPass(pass_number=1, phase="C", plan_state={}, execution_results=[
        {"step_id": "step_1", "status": "FAILED", "clarity_state": "BLOCKED"}])
    ok, updated, error = phase_d_adaptive_depth(profile, {}, plan, depth, state, 20, [current])
    assert ok and error is None and updated is not None and updated.reasoning_depth == 2
    assert state.ttl_remaining == 5
    [adjustment] = current.ttl_adjustments
    assert (adjustment["from"], adjustment["to"], adjustment["profile_version"]) == (1, 5, 2)


def test_phase_d_failure_is_returned(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    ok, updated, error = phase_d_adaptive_depth(
        TaskProfile(), {}, plan, Broken(), _state(plan, 3), 12, [])  # type: ignore[arg-type]
    assert not ok and updated is None and "update_task_profile broke" in str(error)


def test_phase_c_with_a_flaky_model_records_failures(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", [], "Find the bug"), (2, "research", [], "Read the log"))
    results = phase_c_execute_batch(plan, _state(plan, 5),
                                    StepExecutor(FlakyModel({"bug": -1})), None, StepMemory(),
                                    None)
    assert {r["step_id"]: r["status"] for r in results} == {"step_1": "FAILED",
                                                            "step_2": "COMPLETE"}
