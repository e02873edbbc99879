"""Step preparation (002 StepPreparation): which steps may run, and what they are told.

A step is ready when it is PENDING and every dependency is a step of the plan that is COMPLETE.
Before it runs, its ``incoming_context`` gets each dependency's output and handoff, read from
`Memory` (where the batch that ran the dependency stored them) and falling back to the
dependency step's own fields. None of these functions raises: a failing memory read leaves that
piece of context out, and anything else unexpected is logged and yields no ready steps.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import PlanStepStatus

if TYPE_CHECKING:
    from hrm.altitude.types import Plan, PlanStep
    from hrm.plans.types import Memory

__all__ = [
    "DEPENDENCIES_KEY",
    "get_ready_steps",
    "handoff_key",
    "output_key",
    "populate_incoming_context",
    "populate_step_indices",
]

logger = logging.getLogger(__name__)

DEPENDENCIES_KEY = "dependencies"
"""The ``incoming_context`` key holding ``{step_id: {description, output, handoff}}``."""


def output_key(plan_id: str, step_id: str) -> str:
    """The memory key of a step's output."""
    return f"plan:{plan_id}:step:{step_id}:output"


def handoff_key(plan_id: str, step_id: str) -> str:
    """The memory key of a step's handoff to the steps depending on it."""
    return f"plan:{plan_id}:step:{step_id}:handoff"


def get_ready_steps(plan: Plan, memory: Memory) -> list[PlanStep]:
    """PENDING steps whose dependencies are all COMPLETE, with their context filled, in order."""
    try:
        by_order = {step.order: step for step in plan.steps}
        ready: list[PlanStep] = []
        for step in plan.steps:
            if step.status != PlanStepStatus.PENDING:
                continue
            deps = [by_order.get(order) for order in step.dependencies]
            if all(d is not None and d.status == PlanStepStatus.COMPLETE for d in deps):
                populate_incoming_context(step, plan, memory)
                ready.append(step)
        return ready
    except Exception:  # 002: step preparation never raises
        logger.exception("could not work out the ready steps of plan %s", plan.id)
        return []


def populate_incoming_context(step: PlanStep, plan: Plan, memory: Memory) -> None:
    """Set ``step.incoming_context[DEPENDENCIES_KEY]`` from the dependencies' outputs.

    Other keys of ``incoming_context`` (``tool_arguments`` set by whoever wrote the step) are
    kept.
    """
    context: dict[str, dict[str, Any]] = {}
    for order in step.dependencies:
        dep = plan.step(order)
        if dep is None:
            continue
        output = _read(memory, output_key(plan.id, dep.step_id))
        handoff = _read(memory, handoff_key(plan.id, dep.step_id))
        context[dep.step_id] = {
            "description": dep.description,
            "output": output if output is not None else dep.output,
            "handoff": handoff if handoff is not None else dep.handoff_to_next,
        }
    step.incoming_context[DEPENDENCIES_KEY] = context


def populate_step_indices(plan: Plan) -> None:
    """Number the steps 1..n in list order and set each one's ``total_steps``."""
    total = len(plan.steps)
    for index, step in enumerate(plan.steps, start=1):
        step.step_index = index
        step.total_steps = total


def _read(memory: Memory, key: str) -> Any:
    try:
        return memory.get(key)
    except Exception:  # 002: a failing memory read leaves that context out
        logger.warning("memory read of %s failed; continuing without it", key, exc_info=True)
        return None
