"""Running a multi-step plan for a turn: the plan engine (002) when installed in this build,
otherwise each step in dependency order as one model call through the gateway."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import ExecutionResult, Plan, PlanStepStatus
from hrm.errors import HRMError

if TYPE_CHECKING:
    from hrm.stacks.executor import ExecutionOutcome, StackExecutor

__all__ = ["run_plan"]


def run_plan(
    executor: StackExecutor,
    plan: Plan,
    turn_input: Any,
    assembled: Any,
    reasoning: Any,
    event: Callable[..., None],
    *,
    commitment_turns_remaining: int | None,
) -> ExecutionOutcome:
    """Run `plan` within the step budget; the outcome carries every step's status."""
    from hrm.stacks.executor import ExecutionOutcome

    stack = executor.stack
    ttl = stack.config.plan_default_ttl
    if commitment_turns_remaining is not None:
        ttl = min(ttl, max(1, commitment_turns_remaining * len(plan.steps)))
    outputs: dict[int, str] = {}
    errors: list[str] = []
    budget = ttl
    for step in _ordered(plan):
        if budget <= 0:
            step.status = PlanStepStatus.SKIPPED
            continue
        if any(
            plan.step(d) is None or plan.step(d).status is not PlanStepStatus.COMPLETE  # type: ignore[union-attr]
            for d in step.dependencies
        ):
            step.status = PlanStepStatus.SKIPPED
            continue
        step.incoming_context = {str(d): outputs[d] for d in step.dependencies if d in outputs}
        prompt = _step_prompt(turn_input.text, step.description, step.incoming_context)
        budget -= 1
        step.status = PlanStepStatus.RUNNING
        try:
            out = executor._chat(assembled.system, prompt, purpose=f"plan_step:{step.action_type}")
        except HRMError as exc:
            step.status = PlanStepStatus.FAILED
            errors.append(f"step {step.order}: {exc}")
            event("plan_step", plan_id=plan.id, order=step.order, status="failed", error=str(exc))
            continue
        step.status = PlanStepStatus.COMPLETE
        step.output = out
        outputs[step.order] = out
        event("plan_step", plan_id=plan.id, order=step.order, status="complete")
    done = [s for s in plan.steps if s.status is PlanStepStatus.COMPLETE]
    final = plan.steps[-1].output if plan.steps[-1].status is PlanStepStatus.COMPLETE else None
    lines = [f"Plan ({plan.strategy}, {len(done)}/{len(plan.steps)} steps done):"]
    for s in plan.steps:
        lines.append(f"  {s.order}. [{s.status.value}] {s.description[:80]}")
    response = (str(final).strip() + "\n\n" if final else "") + "\n".join(lines)
    success = len(done) == len(plan.steps)
    event(
        "plan_finished",
        plan_id=plan.id,
        completed=len(done),
        total=len(plan.steps),
        ttl=ttl,
        ttl_remaining=budget,
    )
    return ExecutionOutcome(
        response,
        ExecutionResult(
            success=success, outputs=list(outputs.values()), errors=errors, turns_used=1
        ),
        plan,
        "execute",
        delivered=success,
        details={"ttl": ttl, "ttl_remaining": budget},
    )


def _ordered(plan: Plan) -> list[Any]:
    return sorted(plan.steps, key=lambda s: (max(s.dependencies, default=0), s.order))


def _step_prompt(goal: str, description: str, incoming: dict[str, str]) -> str:
    parts = [f"Goal: {goal[:4000]}", f"This step: {description}"]
    for order, output in incoming.items():
        parts.append(f"Result of step {order}: {output[:1500]}")
    return "\n\n".join(parts)
