"""Running an approved agent bundle for a turn through the MapReduce runtime (001 §4.5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hrm.stacks.executor import ExecutionOutcome, StackExecutor

__all__ = ["run_bundle"]


def run_bundle(
    executor: StackExecutor,
    proposal: Any,
    turn_input: Any,
    assembled: Any,
    event: Callable[..., None],
) -> ExecutionOutcome:
    """Run the bundle; when this build has no agent runtime, answer directly and say so."""
    try:
        import hrm.runtime.orchestrator  # noqa: F401
    except ImportError:
        outcome = executor._respond(turn_input, assembled)
        outcome.notes.append(
            f"Delegation to {', '.join(proposal.agents)} was approved, but this build has no "
            "agent runtime; answered directly."
        )
        return outcome
    from hrm.stacks.runtime_bridge import execute_bundle

    result: ExecutionOutcome = execute_bundle(executor, proposal, turn_input, assembled, event)
    return result
