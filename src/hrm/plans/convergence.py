"""The ConvergenceEngine (002): is the plan's goal met?

The deterministic rule is authoritative: a plan converges when every step is COMPLETE (SKIPPED
steps count as done, but at least one step must be COMPLETE) and the validation report has no
blocking issue. A real model (provider not ``offline``) is asked only while steps remain
PENDING and none FAILED: when it judges the goal met with confidence at least
``model_threshold``, the plan converges early (``MODEL_JUDGED_COMPLETE``); its answer is parsed
defensively and anything else leaves the deterministic verdict standing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import PlanStepStatus
from hrm.plans.types import ConvergenceAssessment

if TYPE_CHECKING:
    from hrm.altitude.types import Plan
    from hrm.llm.types import ILLMAdapter
    from hrm.plans.types import SemanticValidationReport

__all__ = ["REASON_CODES", "ConvergenceEngine"]

logger = logging.getLogger(__name__)

REASON_CODES = (
    "ALL_STEPS_COMPLETE",
    "STEPS_PENDING",
    "STEPS_FAILED",
    "BLOCKING_ISSUES",
    "NO_STEPS",
    "MODEL_JUDGED_COMPLETE",
    "MODEL_JUDGED_INCOMPLETE",
    "ASSESSMENT_FAILED",
)
"""Every reason code an assessment may carry."""

_JUDGE_SYSTEM = (
    "Decide whether the results so far already achieve the goal. Answer with JSON only: "
    '{"converged": true|false, "confidence": 0.0-1.0, "reason": str}.'
)
_MAX_OUTPUT_CHARS = 600
_MAX_PROMPT_CHARS = 6000


class ConvergenceEngine:
    """Assesses convergence after each batch.

    Args:
        llm: The model that may judge early convergence; ``None`` or offline never does.
        model_threshold: The confidence a model's "converged" needs to count.
    """

    def __init__(self, llm: ILLMAdapter | None = None, *, model_threshold: float = 0.7) -> None:
        self.llm = llm
        self.model_threshold = model_threshold

    @property
    def uses_model(self) -> bool:
        """Whether a real model may judge convergence."""
        return self.llm is not None and str(self.llm.provider) != "offline"

    def assess(
        self,
        plan: Plan,
        *,
        goal: str = "",
        validation_report: SemanticValidationReport | None = None,
    ) -> ConvergenceAssessment:
        """The assessment of ``plan`` as it stands (see the module docstring)."""
        steps = plan.steps
        if not steps:
            return ConvergenceAssessment(converged=False, reason_codes=["NO_STEPS"])
        complete = sum(1 for s in steps if s.status == PlanStepStatus.COMPLETE)
        done = sum(1 for s in steps if s.status in (PlanStepStatus.COMPLETE,
                                                    PlanStepStatus.SKIPPED))
        failed = any(s.status == PlanStepStatus.FAILED for s in steps)
        pending = any(s.status in (PlanStepStatus.PENDING, PlanStepStatus.RUNNING) for s in steps)
        score = round(complete / len(steps), 4)
        blocking = bool(validation_report is not None and validation_report.blocking)
        codes: list[str] = []
        if done == len(steps) and complete:
            codes.append("ALL_STEPS_COMPLETE")
        if pending:
            codes.append("STEPS_PENDING")
        if failed:
            codes.append("STEPS_FAILED")
        if blocking:
            codes.append("BLOCKING_ISSUES")
        converged = codes == ["ALL_STEPS_COMPLETE"]
        if converged or failed or blocking or not pending or not complete or not self.uses_model:
            return ConvergenceAssessment(
                converged=converged, reason_codes=codes, completeness_score=score
            )
        verdict = self._judge(plan, goal)
        if verdict is None:
            return ConvergenceAssessment(
                converged=False, reason_codes=codes, completeness_score=score
            )
        judged, confidence = verdict
        if judged and confidence >= self.model_threshold:
            return ConvergenceAssessment(
                converged=True,
                reason_codes=[*codes, "MODEL_JUDGED_COMPLETE"],
                completeness_score=score,
                confidence=confidence,
                source="model",
            )
        return ConvergenceAssessment(
            converged=False,
            reason_codes=[*codes, "MODEL_JUDGED_INCOMPLETE"],
            completeness_score=score,
            confidence=confidence,
            source="model",
        )

    def _judge(self, plan: Plan, goal: str) -> tuple[bool, float] | None:
        from hrm.llm import LLMCallConfig, Message, chat_json

        if self.llm is None:
            return None
        lines = [f"Goal: {goal[:1000]}", "Results so far:"]
        for step in plan.steps:
            if step.status == PlanStepStatus.COMPLETE:
                lines.append(f"- {step.description[:120]}: {str(step.output)[:_MAX_OUTPUT_CHARS]}")
        lines.append("Steps not yet run:")
        lines += [f"- {s.description[:120]}" for s in plan.steps
                  if s.status == PlanStepStatus.PENDING]
        answer = chat_json(
            self.llm,
            [Message(role="user", content="\n".join(lines)[:_MAX_PROMPT_CHARS])],
            _JUDGE_SYSTEM,
            config=LLMCallConfig(temperature=0.0, max_tokens=200),
            purpose="plan_convergence",
        )
        return parse_judgement(answer)


def parse_judgement(answer: Any) -> tuple[bool, float] | None:
    """``(converged, confidence)`` from a model's answer, or ``None`` when malformed."""
    if not isinstance(answer, dict) or not isinstance(answer.get("converged"), bool):
        return None
    confidence = answer.get("confidence", 0.5)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    return answer["converged"], max(0.0, min(1.0, float(confidence)))
