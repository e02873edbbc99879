"""Running a multi-step plan for a turn through the plan engine (002), supervised by Focus."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import ExecutionResult, Plan, PlanStep, PlanStepStatus

if TYPE_CHECKING:
    from hrm.stacks.executor import ExecutionOutcome, StackExecutor
    from hrm.stacks.factory import CognitiveStack

__all__ = ["FocusSupervisor", "run_plan"]

_STEP_ACTIONS = {"research": ("execute", frozenset({"research"})),
                 "execute": ("execute", frozenset()),
                 "validate": ("respond", frozenset({"verification"})),
                 "respond": ("respond", frozenset()),
                 "ask": ("ask", frozenset())}


class FocusSupervisor:
    """002's Supervisor is Focus (ARCHITECTURE §1): a step runs only if the stance allows it."""

    def __init__(self, stack: CognitiveStack) -> None:
        self.stack = stack

    def review_step(self, step: PlanStep) -> str | None:
        action, purposes = _STEP_ACTIONS.get(step.action_type, ("execute", frozenset()))
        ok, why = self.stack.focus.stance.allows(action, purposes)
        return None if ok else f"Focus: {why}"


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
    """Run `plan` in the plan engine within the step budget; the outcome carries every step.

    A model too small for plans answers directly instead, saying why, before any step runs
    (D284); the answer of a run is its deliverable with the checks' verdict beside it (D283).
    """
    from hrm.llm.capability import model_capability
    from hrm.plans.deliverable import plan_report
    from hrm.plans.engine import PlanEngine
    from hrm.plans.fitness import plan_refusal
    from hrm.stacks.executor import ExecutionOutcome
    from hrm.stacks.runtime_bridge import agent_runtime, stack_tools

    stack = executor.stack
    capability = model_capability(stack.config.llm)
    refusal = plan_refusal(capability)
    if refusal is not None:
        event("plan_refused", plan_id=plan.id, reason=capability.reason)
        outcome = executor._respond(turn_input, assembled)
        outcome.notes.append(f"{refusal}. Answered directly instead.")
        return outcome

    def on_event(kind: str, data: dict[str, Any]) -> None:
        event(f"plan_{kind}", plan_id=plan.id, **{k: v for k, v in data.items() if k != "plan_id"})

    engine = PlanEngine.from_config(
        stack.config,
        stack.gateway,
        record=stack.record_work_order,
        tool_registry=stack_tools(stack),
        orchestrator=agent_runtime(stack) if any(s.agent for s in plan.steps) else None,
        supervisor=FocusSupervisor(stack),
        stance=stack.focus.stance.get_current(),
    )
    with engine:
        run = engine.run(
            f"{turn_input.text[:8000]}",
            classification=reasoning.classification,
            plan=plan,
            commitment_turns_remaining=commitment_turns_remaining,
            on_event=on_event,
        )
    final = run.plan
    done = [s for s in final.steps if s.status is PlanStepStatus.COMPLETE]
    lines = [f"Plan ({final.strategy or plan.strategy}, {run.status}, "
             f"{len(done)}/{len(final.steps)} steps done):"]
    lines += [f"  {s.order}. [{s.status.value}] {s.description[:80]}" for s in final.steps]
    report = plan_report(final, capability)
    response = report.text() + "\n\n" + "\n".join(lines)
    notes: list[str] = []
    if run.status == "ttl_expired":
        notes.append("The step budget ran out; partial results are above and in the history.")
    elif run.status == "failed":
        notes.append(f"The plan failed: {run.error}")
    return ExecutionOutcome(
        response,
        ExecutionResult(success=run.status == "converged",
                        outputs=[str(v)[:2000] for v in run.outputs.values()],
                        errors=[run.error] if run.error else [], turns_used=1),
        final,
        "execute",
        delivered=run.status == "converged",
        notes=notes,
        details={"plan_status": run.status, "passes": len(run.history.passes),
                 "expiration": run.expiration, **report.to_dict()},
    )
