"""The AltitudeEvaluator (001 §2.3): how well a plan's run went, and whether altitude moves.

Scoring (`evaluate_result`):

- ``completion_ratio``: COMPLETE steps over steps not SKIPPED, when the plan's steps carry a
  status the engine moved; otherwise outputs produced over steps (a one-step plan with one
  output is complete).
- ``quality_score``: the completion ratio, less 0.2 per error (at most 0.6), 0.2 per failed
  step (at most 0.6), 0.1 for an overrun of ``estimated_turns`` and 0.1 when an output is
  empty; clamped to [0, 1].
- ``success``: the result says success, nothing failed and every step completed.

Transitions (`should_transition`), with ``failure_streak`` counting consecutive failed
evaluations (the caller persists it, like the governor's level):

- L1 failure -> L2: a moment-level answer failed; the work needs operations.
- L2 failure, ``failure_threshold`` times in a row (default 2) -> L3: rethink the approach.
- L3 success -> L2: the approach worked; continue at operations.
- L4 never moves by evaluation: identity changes only by explicit transition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.altitude.types import Evaluation, PlanStepStatus
from hrm.types import AltitudeLevel

if TYPE_CHECKING:
    from hrm.altitude.types import ExecutionResult, Plan

__all__ = ["AltitudeEvaluator"]

_DONE = PlanStepStatus.COMPLETE
_UNTRACKED = {PlanStepStatus.PENDING}


class AltitudeEvaluator:
    """Assesses execution results against plans and proposes altitude changes."""

    def __init__(self, *, failure_threshold: int = 2, failure_streak: int = 0) -> None:
        self.failure_threshold = max(1, failure_threshold)
        self.failure_streak = max(0, failure_streak)
        """Consecutive failed evaluations seen by `should_transition`; persist it per stack."""

    def evaluate_result(self, result: ExecutionResult, plan: Plan) -> Evaluation:
        """Score a result against its plan (see the module docstring for the rules)."""
        total = max(1, len(plan.steps))
        statuses = [step.status for step in plan.steps]
        tracked = any(status not in _UNTRACKED for status in statuses)
        failed = [s.order for s in plan.steps if s.status == PlanStepStatus.FAILED]
        issues = [f"error: {error}" for error in result.errors]
        if tracked:
            counted = [s for s in statuses if s != PlanStepStatus.SKIPPED]
            done = sum(1 for s in counted if s == _DONE)
            ratio = done / len(counted) if counted else 1.0
        else:
            ratio = min(len(result.outputs), total) / total
        issues += [f"step {order} failed" for order in failed]
        if ratio < 1.0:
            issues.append(f"plan {round(ratio * 100)}% complete")
        overran = result.turns_used > max(1, plan.estimated_turns)
        if overran:
            issues.append(f"took {result.turns_used} turns, estimated {plan.estimated_turns}")
        empty_output = not result.outputs or any(not out.strip() for out in result.outputs)
        if empty_output:
            issues.append("no output produced" if not result.outputs else "an output is empty")
        quality = (
            ratio
            - min(0.6, 0.2 * len(result.errors))
            - min(0.6, 0.2 * len(failed))
            - (0.1 if overran else 0.0)
            - (0.1 if empty_output else 0.0)
        )
        success = result.success and not failed and not result.errors and ratio >= 1.0
        return Evaluation(
            success=success,
            completion_ratio=round(ratio, 4),
            quality_score=round(min(1.0, max(0.0, quality)), 4),
            issues=issues,
            suggestions=_suggestions(success, failed, result.errors, ratio, overran),
        )

    def should_transition(
        self, evaluation: Evaluation, current_level: AltitudeLevel
    ) -> AltitudeLevel | None:
        """The level to move to after this evaluation, or None to stay.

        Updates `failure_streak` (reset on success and after a move).
        """
        level = AltitudeLevel(current_level)
        if evaluation.success:
            self.failure_streak = 0
            return AltitudeLevel.L2_OPERATIONS if level == AltitudeLevel.L3_STRATEGY else None
        self.failure_streak += 1
        if level == AltitudeLevel.L1_MOMENT:
            self.failure_streak = 0
            return AltitudeLevel.L2_OPERATIONS
        if level == AltitudeLevel.L2_OPERATIONS and self.failure_streak >= self.failure_threshold:
            self.failure_streak = 0
            return AltitudeLevel.L3_STRATEGY
        return None


def _suggestions(
    success: bool, failed: list[int], errors: list[str], ratio: float, overran: bool
) -> list[str]:
    if success and not overran:
        return []
    suggestions: list[str] = []
    if failed:
        suggestions.append("retry the failed steps or revise the plan around them")
    if errors:
        suggestions.append("investigate the errors before continuing")
    if ratio < 1.0:
        suggestions.append("continue with the remaining steps")
    if overran:
        suggestions.append("re-estimate: the plan needed more turns than expected")
    if not suggestions:
        suggestions.append("review the result: the run reported failure")
    return suggestions
