"""The TTL expiration response (002 TTLStrategy): what a run that ran out of steps returns.

The TTL is the run's step budget. When it is spent the run stops and returns the execution
history so far, the partial results (every COMPLETE step's output) and where it stopped: at a
``phase_boundary`` (the named phase could not start) or ``mid_phase`` (phase C had ready steps
it could not start).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from hrm.altitude.types import PlanStepStatus
from hrm.plans.types import ExecutionHistory, TTLExpirationResponse, plan_to_dict

if TYPE_CHECKING:
    from hrm.plans.types import ExecutionPass, OrchestrationState

__all__ = ["create_expiration_response"]

logger = logging.getLogger(__name__)


def create_expiration_response(
    expiration_type: Literal["phase_boundary", "mid_phase"],
    phase: Literal["A", "B", "C", "D"],
    execution_pass: ExecutionPass,
    execution_passes: Sequence[ExecutionPass],
    state: OrchestrationState | None,
    execution_id: str,
    task_input: str,
) -> tuple[bool, dict[str, Any], str | None]:
    """Build the response of a run whose TTL expired.

    Args:
        expiration_type: Where the TTL ran out.
        phase: The phase that could not start (boundary) or could not finish (mid-phase).
        execution_pass: The last pass.
        execution_passes: Every pass, the last one included.
        state: The run's state; ``None`` reports no partial results and a TTL of 0.
        execution_id: The run's id.
        task_input: The request the run served.

    Returns:
        ``(True, response, None)`` where ``response`` has ``status`` (``ttl_expired``),
        ``execution_history``, ``ttl_expiration``, ``ttl_remaining`` and ``partial_results``
        (``{step_id: output}`` of COMPLETE steps); ``(False, {}, error)`` if it could not be
        built.
    """
    try:
        ttl_remaining = state.ttl_remaining if state is not None else 0
        partial: dict[str, Any] = {}
        plan_state = execution_pass.plan_state
        if state is not None:
            plan_state = plan_to_dict(state.plan)
            partial = {
                s.step_id: s.output for s in state.plan.steps if s.status == PlanStepStatus.COMPLETE
            }
        where = "before" if expiration_type == "phase_boundary" else "during"
        expiration = TTLExpirationResponse(
            expiration_type=expiration_type,
            phase=phase,
            pass_number=execution_pass.pass_number,
            ttl_remaining=ttl_remaining,
            plan_state=plan_state,
            execution_results=list(execution_pass.execution_results),
            message=(
                f"TTL expired {where} phase {phase} in pass {execution_pass.pass_number} "
                f"({len(partial)} step(s) complete); raise --ttl or split the request"
            ),
        )
        passes = list(execution_passes)
        history = ExecutionHistory(
            execution_id=execution_id,
            task_input=task_input,
            passes=passes,
            final_result={"status": "ttl_expired", "expiration": expiration.model_dump()},
            overall_statistics={
                "total_passes": len(passes),
                "total_refinements": sum(len(p.refinement_changes) for p in passes),
                "convergence_achieved": False,
                "steps_executed": state.ttl_used if state is not None else 0,
            },
        )
        response = {
            "status": "ttl_expired",
            "execution_history": history.model_dump(),
            "ttl_expiration": expiration.model_dump(),
            "ttl_remaining": ttl_remaining,
            "partial_results": partial,
        }
        return True, response, None
    except Exception as exc:  # 002: returns an error instead of raising
        logger.exception("building the TTL expiration response failed")
        return False, {}, f"building the TTL expiration response failed: {exc}"
