"""AdaptiveDepth (002): how deep a request goes, and how many steps it may take.

Inference (`AdaptiveDepth.infer_task_profile`), from the request's `InputClassification` (the
one it was given, else `hrm.reasoning.InputClassifier` on the text):

- depth starts at 1 (simple), 2 (moderate) or 3 (complex);
- +1 when uncertainty is above 0.6; +1 when stakes are high; clamped to 1-5;
- the confidence requirement follows stakes (low, medium, high).

TTL (`allocate_ttl`): `DEPTH_TTL` steps for the depth, bounded by the global TTL and by the
active commitment's ``turns_remaining`` (ARCHITECTURE §1: the TTL is the run's step budget).

Updates at pass boundaries (`update_task_profile`, 002 Phase D):

- deeper by one when the pass left a step BLOCKED, or blocking validation issues, or the run
  is not converging (the work is harder than inferred);
- shallower by one when every step of the pass was CLEAR, nothing blocks, and the depth is above
  the inferred baseline (an earlier raise is no longer needed);
- otherwise no update.

`adjust_ttl` moves the remaining TTL by the change in allocation, never above what the global
TTL and the commitment leave, and never (when lowering) below the plan's pending steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import PlanStepStatus
from hrm.plans.types import TaskProfile
from hrm.types import Complexity, Stakes

if TYPE_CHECKING:
    from hrm.plans.types import OrchestrationState
    from hrm.reasoning.types import InputClassification

__all__ = ["DEPTH_TTL", "AdaptiveDepth"]

DEPTH_TTL = {1: 6, 2: 10, 3: 14, 4: 18, 5: 24}
"""Steps allotted per reasoning depth before the global and commitment bounds apply."""

_BASE_DEPTH = {Complexity.SIMPLE: 1, Complexity.MODERATE: 2, Complexity.COMPLEX: 3}
_CONFIDENCE = {Stakes.LOW: "low", Stakes.MEDIUM: "medium", Stakes.HIGH: "high"}


class AdaptiveDepth:
    """Infers a request's `TaskProfile` and sizes its TTL; updates both between passes.

    Args:
        classification: The request's classification; ``None`` classifies the text.
        commitment_turns_remaining: The active commitment's remaining turns, bounding the TTL.
    """

    def __init__(
        self,
        classification: InputClassification | None = None,
        *,
        commitment_turns_remaining: int | None = None,
    ) -> None:
        self.classification = classification
        self.commitment_turns_remaining = commitment_turns_remaining
        self._baseline: int | None = None

    def infer_task_profile(self, request: str) -> TaskProfile:
        """The profile of ``request`` (see the module docstring for the rules)."""
        classification = self.classification
        if classification is None:
            from hrm.reasoning.classifier import InputClassifier

            classification = InputClassifier().classify_text(request)
        complexity = Complexity(classification.complexity)
        stakes = Stakes(classification.stakes)
        depth = _BASE_DEPTH[complexity]
        reasons = [f"complexity {complexity.value}: depth {depth}"]
        if classification.uncertainty > 0.6:
            depth += 1
            reasons.append(f"uncertainty {classification.uncertainty:.2f} > 0.6: +1")
        if stakes == Stakes.HIGH:
            depth += 1
            reasons.append("high stakes: +1")
        depth = max(1, min(5, depth))
        self._baseline = depth
        return TaskProfile(
            reasoning_depth=depth,
            complexity=complexity.value,
            uncertainty=float(classification.uncertainty),
            stakes=stakes.value,
            confidence_requirement=_CONFIDENCE[stakes],
            reasons=reasons,
        )

    def allocate_ttl(self, task_profile: TaskProfile, global_ttl: int) -> int:
        """Steps for this profile, bounded by ``global_ttl`` and the commitment (never < 0)."""
        wanted = DEPTH_TTL[max(1, min(5, task_profile.reasoning_depth))]
        bounds = [wanted, global_ttl]
        if self.commitment_turns_remaining is not None:
            bounds.append(self.commitment_turns_remaining)
        return max(0, min(bounds))

    def update_task_profile(
        self,
        task_profile: TaskProfile,
        *,
        convergence_assessment: dict[str, Any],
        semantic_validation: dict[str, Any],
        clarity_states: Sequence[str],
    ) -> TaskProfile | None:
        """A deeper or shallower profile after a pass, or ``None`` when it stays."""
        blocking = [
            i for i in semantic_validation.get("issues") or []
            if isinstance(i, dict) and i.get("severity") in ("high", "critical")
        ]
        converged = bool(convergence_assessment.get("converged"))
        depth = task_profile.reasoning_depth
        baseline = self._baseline if self._baseline is not None else depth
        if "BLOCKED" in clarity_states or blocking or (not converged and not clarity_states):
            if depth >= 5:
                return None
            why = "a step was blocked" if "BLOCKED" in clarity_states else (
                "blocking validation issues" if blocking else "no progress this pass"
            )
            return self._moved(task_profile, depth + 1, f"pass: {why}: depth +1")
        if clarity_states and all(c == "CLEAR" for c in clarity_states) and depth > baseline:
            return self._moved(task_profile, depth - 1, "pass: all steps clear: depth -1")
        return None

    def adjust_ttl(
        self,
        old_profile: TaskProfile,
        new_profile: TaskProfile,
        state: OrchestrationState,
        global_ttl: int,
    ) -> int:
        """The remaining TTL after a profile change (see the module docstring)."""
        delta = self.allocate_ttl(new_profile, global_ttl) - self.allocate_ttl(
            old_profile, global_ttl
        )
        ceiling = max(0, min(global_ttl, state.step_cap()) - state.ttl_used)
        proposed = state.ttl_remaining + delta
        if delta < 0:
            pending = sum(1 for s in state.plan.steps if s.status == PlanStepStatus.PENDING)
            proposed = max(proposed, min(state.ttl_remaining, pending))
        return max(0, min(proposed, ceiling))

    @staticmethod
    def _moved(profile: TaskProfile, depth: int, reason: str) -> TaskProfile:
        return replace(
            profile,
            reasoning_depth=depth,
            profile_version=profile.profile_version + 1,
            reasons=[*profile.reasons, reason],
        )
