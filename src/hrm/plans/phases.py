"""The phase functions (002 PhaseOrchestrator): A task profile and TTL, B initial plan
refinement, C execute / evaluate / refine, D adaptive depth.

Each takes snapshots (the engine passes copies of its plan and state), returns the tuple or
dict 002 gives it, and never raises: a failing collaborator becomes an error value, and a
``None`` collaborator takes the fallback 002 names. The engine (`hrm.plans.engine`) decides what
to do with each result.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import PlanStepStatus
from hrm.plans.convergence import ConvergenceEngine
from hrm.plans.refinement import apply_actions
from hrm.plans.step_prep import (
    get_ready_steps,
    handoff_key,
    output_key,
    populate_step_indices,
)
from hrm.plans.types import (
    ConvergenceAssessment,
    SemanticValidationReport,
    TaskProfile,
    ValidationIssue,
    copy_plan,
)
from hrm.plans.validation import structure_issues

if TYPE_CHECKING:
    from hrm.altitude.types import Plan, PlanStep
    from hrm.plans.depth import AdaptiveDepth
    from hrm.plans.executor import StepExecutor
    from hrm.plans.planner import RecursivePlanner
    from hrm.plans.types import ExecutionPass, Memory, OrchestrationState, Supervisor
    from hrm.plans.validation import SemanticValidator

__all__ = [
    "TTL_EXPIRED",
    "phase_a_taskprofile_ttl",
    "phase_b_initial_plan_refinement",
    "phase_c_evaluate",
    "phase_c_execute_batch",
    "phase_c_refine",
    "phase_d_adaptive_depth",
]

logger = logging.getLogger(__name__)

TTL_EXPIRED = "ttl_expired"
"""``skipped_reason`` of a ready step phase C could not start because the TTL ran out."""


def phase_a_taskprofile_ttl(
    request: str, adaptive_depth: AdaptiveDepth | None, global_ttl: int
) -> tuple[bool, tuple[TaskProfile | None, int], str | None]:
    """Phase A: infer the task profile and allocate the TTL.

    Returns:
        ``(True, (profile, ttl), None)``; with no ``adaptive_depth`` the default profile and
        ``global_ttl``; ``(False, (None | profile, global_ttl), error)`` when inference or
        allocation fails.
    """
    if adaptive_depth is None:
        return True, (TaskProfile(reasons=["default profile"]), global_ttl), None
    try:
        profile = adaptive_depth.infer_task_profile(request)
    except Exception as exc:  # 002: phases return errors
        logger.warning("task profile inference failed: %s", exc, exc_info=True)
        return False, (None, global_ttl), f"task profile inference failed: {exc}"
    try:
        ttl = adaptive_depth.allocate_ttl(profile, global_ttl)
    except Exception as exc:  # 002: phases return errors
        logger.warning("TTL allocation failed: %s", exc, exc_info=True)
        return False, (profile, global_ttl), f"TTL allocation failed: {exc}"
    return True, (profile, ttl), None


def phase_b_initial_plan_refinement(
    request: str,
    plan: Plan,
    task_profile: TaskProfile,
    recursive_planner: RecursivePlanner | None,
    semantic_validator: SemanticValidator | None,
    tool_registry: Any | None,
) -> tuple[bool, Plan, str | None]:
    """Phase B: (re)generate an empty plan, validate it and refine what validation found.

    Returns:
        ``(True, refined_plan, None)``; ``(False, plan, error)`` when the plan still cannot run
        (a cycle, a dangling dependency, no steps...) or a collaborator failed.
    """
    try:
        refined = copy_plan(plan)
        if not refined.steps and recursive_planner is not None:
            refined = recursive_planner.generate(request, task_profile)
        if semantic_validator is not None:
            report = semantic_validator.validate(
                refined, goal=request, tool_registry=tool_registry
            )
            if report.issues and recursive_planner is not None:
                actions = recursive_planner.refine_plan(
                    refined, validation_issues=report.issues
                )
                if actions:
                    ok, updated, error = apply_actions(refined, actions)
                    if not ok:
                        return False, plan, error
                    refined = updated
        broken = structure_issues(refined)
        if broken:
            return False, plan, "; ".join(issue.description for issue in broken)
        populate_step_indices(refined)
        return True, refined, None
    except Exception as exc:  # 002: phases return errors
        logger.warning("phase B failed: %s", exc, exc_info=True)
        return False, plan, f"initial plan refinement failed: {exc}"


def phase_c_execute_batch(
    plan: Plan,
    state: OrchestrationState,
    step_executor: StepExecutor,
    tool_registry: Any | None,
    memory: Memory,
    supervisor: Supervisor | None,
) -> list[dict[str, Any]]:
    """Phase C: run the ready steps (up to the TTL), independent ones in parallel.

    ``plan`` should be ``state.plan`` (the engine's snapshot); its steps get their status,
    output and handoff, ``memory`` the outputs and handoffs, and ``state`` one TTL unit less
    per executed step. A step the supervisor refuses fails without spending TTL. Ready steps
    the TTL does not cover come back PENDING with ``skipped_reason`` `TTL_EXPIRED`.

    Returns:
        One dict per ready step, in plan order: ``step_id``, ``status``, ``output``,
        ``clarity_state`` and the executor's other fields.
    """
    del tool_registry  # the step executor holds the registry it calls through
    results: list[dict[str, Any]] = []
    try:
        ready = get_ready_steps(plan, memory)
        budget = max(0, state.ttl_remaining)
        runnable: list[PlanStep] = []
        for step in ready:
            denial = _review(supervisor, step)
            if denial is not None:
                step.status = PlanStepStatus.FAILED
                step.output = f"error: denied: {denial}"
                results.append(_denied(step, denial))
            elif len(runnable) < budget:
                runnable.append(step)
            else:
                results.append(_not_started(step))
        for step in runnable:
            step.status = PlanStepStatus.RUNNING
        outcomes = step_executor.execute_batch(runnable, goal=state.goal, plan_id=plan.id)
        for step, outcome in zip(runnable, outcomes, strict=True):
            _settle(step, outcome, plan.id, state, memory)
            results.append(outcome)
        position = {step.step_id: index for index, step in enumerate(ready)}
        return sorted(results, key=lambda r: position.get(r["step_id"], len(position)))
    except Exception as exc:  # 002: errors go into the results
        logger.warning("phase C batch failed: %s", exc, exc_info=True)
        for step in plan.steps:
            if step.status == PlanStepStatus.RUNNING:
                step.status = PlanStepStatus.FAILED
                step.output = f"error: {exc}"
                results.append({
                    "step_id": step.step_id, "status": PlanStepStatus.FAILED.value,
                    "output": step.output, "clarity_state": "BLOCKED",
                    "error": str(exc), "error_code": "internal_error",
                })
        return results


def phase_c_evaluate(
    plan: Plan,
    execution_results: Sequence[dict[str, Any]],
    semantic_validator: SemanticValidator | None,
    convergence_engine: ConvergenceEngine | None,
    tool_registry: Any | None,
    *,
    goal: str = "",
) -> dict[str, Any]:
    """Phase C: validate the plan and its outputs, then assess convergence.

    Without a convergence engine the deterministic rule applies (every step complete and no
    blocking issue). ``goal`` is an hrm addition: the model's review and judgement need it.

    Returns:
        ``converged``, ``needs_refinement``, ``semantic_validation`` and
        ``convergence_assessment`` (``model_dump()`` dicts), ``validation_issues``
        (`ValidationIssue` objects), ``convergence_reason_codes``, ``blocked_step_ids`` and
        ``errors``.
    """
    errors: list[str] = []
    report = SemanticValidationReport(validation_id="none")
    if semantic_validator is not None:
        try:
            report = semantic_validator.validate(
                plan, goal=goal, tool_registry=tool_registry,
                execution_results=list(execution_results),
            )
        except Exception as exc:  # 002: continue with an empty report
            logger.warning("semantic validation failed: %s", exc, exc_info=True)
            errors.append(f"semantic validation failed: {exc}")
    engine = convergence_engine if convergence_engine is not None else ConvergenceEngine()
    try:
        assessment = engine.assess(plan, goal=goal, validation_report=report)
    except Exception as exc:  # 002: a conservative assessment
        logger.warning("convergence assessment failed: %s", exc, exc_info=True)
        errors.append(f"convergence assessment failed: {exc}")
        assessment = ConvergenceAssessment(converged=False, reason_codes=["ASSESSMENT_FAILED"])
    blocked = _blocked(plan)
    needs_refinement = not assessment.converged and bool(
        report.issues or blocked or any(s.status == PlanStepStatus.FAILED for s in plan.steps)
    )
    return {
        "converged": assessment.converged,
        "needs_refinement": needs_refinement,
        "semantic_validation": report.model_dump(),
        "convergence_assessment": assessment.model_dump(),
        "validation_issues": list(report.issues),
        "convergence_reason_codes": list(assessment.reason_codes),
        "blocked_step_ids": blocked,
        "errors": errors,
    }


def phase_c_refine(
    plan: Plan,
    evaluation_results: dict[str, Any],
    recursive_planner: RecursivePlanner | None,
) -> tuple[bool, list[dict[str, Any]], str | None]:
    """Phase C: the refinements the evaluation calls for.

    Returns:
        ``(True, [RefinementAction.model_dump()...], None)`` (empty without a planner);
        ``(False, [], error)`` when the planner failed.
    """
    if recursive_planner is None:
        return True, [], None
    try:
        issues = [
            i for i in evaluation_results.get("validation_issues") or []
            if isinstance(i, ValidationIssue)
        ]
        executed = [
            s.step_id for s in plan.steps
            if s.status in (PlanStepStatus.COMPLETE, PlanStepStatus.FAILED)
        ]
        actions = recursive_planner.refine_plan(
            plan,
            validation_issues=issues,
            convergence_reason_codes=list(evaluation_results.get("convergence_reason_codes") or []),
            blocked_step_ids=list(evaluation_results.get("blocked_step_ids") or []),
            executed_step_ids=executed,
        )
        return True, [action.model_dump() for action in actions], None
    except Exception as exc:  # 002: phases return errors
        logger.warning("refinement failed: %s", exc, exc_info=True)
        return False, [], f"refinement failed: {exc}"


def phase_d_adaptive_depth(
    task_profile: TaskProfile,
    evaluation_results: dict[str, Any],
    plan: Plan,
    adaptive_depth: AdaptiveDepth | None,
    state: OrchestrationState,
    global_ttl: int,
    execution_passes: list[ExecutionPass],
) -> tuple[bool, TaskProfile | None, str | None]:
    """Phase D: update the profile at a pass boundary and move the TTL with it.

    On an update, ``state.ttl_remaining`` takes the adjusted TTL and the last pass records
    ``{from, to, reason, profile_version}`` in ``ttl_adjustments``.

    Returns:
        ``(True, updated_profile, None)``; ``(True, None, None)`` when nothing changes (or there
        is no ``adaptive_depth``); ``(False, None, error)`` when the update failed.
    """
    if adaptive_depth is None:
        return True, None, None
    try:
        clarity: list[str] = []
        if execution_passes:
            clarity = [
                str(r["clarity_state"]) for r in execution_passes[-1].execution_results
                if r.get("clarity_state") and not r.get("skipped_reason")
            ]
        updated = adaptive_depth.update_task_profile(
            task_profile,
            convergence_assessment=dict(evaluation_results.get("convergence_assessment") or {}),
            semantic_validation=dict(evaluation_results.get("semantic_validation") or {}),
            clarity_states=clarity,
        )
        if updated is None:
            return True, None, None
        before = state.ttl_remaining
        after = adaptive_depth.adjust_ttl(task_profile, updated, state, global_ttl)
        state.ttl_remaining = after
        if execution_passes:
            execution_passes[-1].ttl_adjustments.append({
                "from": before,
                "to": after,
                "reason": updated.reasons[-1] if updated.reasons else "profile updated",
                "profile_version": updated.profile_version,
                "reasoning_depth": updated.reasoning_depth,
            })
        del plan  # the state's plan is the one the adjustment reads
        return True, updated, None
    except Exception as exc:  # 002: phases return errors
        logger.warning("adaptive depth update failed: %s", exc, exc_info=True)
        return False, None, f"adaptive depth update failed: {exc}"


def _review(supervisor: Supervisor | None, step: PlanStep) -> str | None:
    if supervisor is None:
        return None
    try:
        return supervisor.review_step(step)
    except Exception as exc:  # gates fail closed
        return f"the supervisor failed ({exc})"


def _settle(
    step: PlanStep,
    outcome: dict[str, Any],
    plan_id: str,
    state: OrchestrationState,
    memory: Memory,
) -> None:
    step.status = PlanStepStatus(outcome["status"])
    step.output = outcome.get("output")
    step.handoff_to_next = outcome.get("handoff_to_next")
    state.ttl_remaining = max(0, state.ttl_remaining - 1)
    state.ttl_used += 1
    state.executed_step_ids.append(step.step_id)
    state.step_outputs[step.step_id] = step.output
    state.clarity_states[step.step_id] = str(outcome.get("clarity_state", "BLOCKED"))
    if step.status == PlanStepStatus.COMPLETE:
        try:
            memory.set(output_key(plan_id, step.step_id), step.output)
            memory.set(handoff_key(plan_id, step.step_id), step.handoff_to_next)
        except Exception:  # the step's own fields still carry the output
            logger.warning("memory write for step %s failed", step.step_id, exc_info=True)


def _denied(step: PlanStep, reason: str) -> dict[str, Any]:
    return {
        "step_id": step.step_id,
        "status": PlanStepStatus.FAILED.value,
        "output": step.output,
        "clarity_state": "BLOCKED",
        "error": f"denied: {reason}",
        "error_code": "gate_denied",
        "executor": "supervisor",
    }


def _not_started(step: PlanStep) -> dict[str, Any]:
    return {
        "step_id": step.step_id,
        "status": PlanStepStatus.PENDING.value,
        "output": None,
        "clarity_state": None,
        "skipped_reason": TTL_EXPIRED,
    }


def _blocked(plan: Plan) -> list[str]:
    by_order = {s.order: s for s in plan.steps}
    blocked: list[str] = []
    for step in plan.steps:
        if step.status != PlanStepStatus.PENDING:
            continue
        deps = [by_order.get(order) for order in step.dependencies]
        if any(d is None or d.status == PlanStepStatus.FAILED for d in deps):
            blocked.append(step.step_id)
    return blocked
