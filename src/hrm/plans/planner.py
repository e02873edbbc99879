"""The RecursivePlanner (002): plans from the AltitudePlanner, refinements from evaluations.

`generate` asks `hrm.altitude.AltitudePlanner` for a plan; the strategy follows the task
profile (depth 1 and a single clause ``quick_answer``; high stakes ``verification``;
uncertainty above 0.6 ``exploration``; otherwise ``decomposition``) unless one is given.

`refine_plan` turns an evaluation into `RefinementAction`s, in this order:

1. an ``unknown_tool`` or ``tool_not_allowed`` issue: MODIFY the step to run on the model;
2. a FAILED step: MODIFY (retry as it is) the first time, REPLACE by an alternative the second
   (a model's alternative when a real model is present, else the same work without its tool or
   agent); after that it stays failed;
3. a PENDING step blocked by a dependency that failed for good (or is missing): REMOVE;
4. a ``goal_gap`` issue from validation: ADD a step for it after the completed steps (once per
   gap).

Attempts are counted per plan and step id by the planner itself, so one planner serves one run
(or many runs with distinct plan ids). Thread-safe.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hrm.altitude.planner import STANCE_FORBIDDEN_STEPS, AltitudePlanner
from hrm.altitude.types import PLAN_ACTION_TYPES, AltitudeClassification, PlanStepStatus
from hrm.plans.types import RefinementAction
from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

if TYPE_CHECKING:
    from hrm.altitude.types import Plan, PlanStep
    from hrm.llm.types import ILLMAdapter
    from hrm.plans.types import TaskProfile, ValidationIssue

__all__ = ["MAX_ATTEMPTS", "RecursivePlanner"]

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 2
"""Refinements per failed step: one retry (MODIFY), one alternative (REPLACE)."""

_REPLACED = re.compile(r"_r\d+$")
_PARTS = re.compile(r"(?:[.;!?\n]+|\bthen\b)", re.IGNORECASE)
_LEVEL_BY_STRATEGY = {
    "quick_answer": AltitudeLevel.L1_MOMENT,
    "decomposition": AltitudeLevel.L2_OPERATIONS,
    "verification": AltitudeLevel.L2_OPERATIONS,
    "exploration": AltitudeLevel.L3_STRATEGY,
    "dialogue": AltitudeLevel.L4_IDENTITY,
}
_ALTERNATIVE_SYSTEM = (
    "A plan step failed. Propose one different way to do the same work. Answer with JSON "
    'only: {"description": str, "action_type": "research"|"execute"|"validate"|"respond"}.'
)


class RecursivePlanner:
    """Generates plans and refines them between passes.

    Args:
        planner: The Altitude planner (default: one with ``llm``).
        llm: The model for alternatives to failed steps (and for the default planner).
        stance: The stance plans must satisfy (steps the stance forbids are never added).
        allows_agents: Whether generated plans may suggest agents.
    """

    def __init__(
        self,
        planner: AltitudePlanner | None = None,
        *,
        llm: ILLMAdapter | None = None,
        stance: Stance = Stance.EXECUTION,
        allows_agents: bool = False,
    ) -> None:
        self.planner = planner if planner is not None else AltitudePlanner(llm)
        self.llm = llm
        self.stance = Stance(stance)
        self.allows_agents = allows_agents
        self._attempts: dict[tuple[str, str], int] = {}
        self._gaps: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def generate(
        self, request: str, task_profile: TaskProfile | None = None, *, strategy: str | None = None
    ) -> Plan:
        """A plan for ``request`` at the profile's depth (see the module docstring)."""
        chosen = strategy or _strategy_for(task_profile, request)
        level = _LEVEL_BY_STRATEGY.get(chosen, AltitudeLevel.L2_OPERATIONS)
        context = HRMContext(
            session_id="plan",
            turn_number=1,
            problem_id=None,
            altitude=level,
            stance=self.stance,
            commitment_id=None,
            commitment_turns_remaining=None,
        )
        turn = TurnInput(text=request, timestamp=datetime.now(UTC), context=context)
        classification = AltitudeClassification(
            level=level,
            confidence=1.0,
            signals=["plan engine"],
            suggested_stance=None,
            allows_agents=self.allows_agents,
        )
        return self.planner.generate_plan(turn, classification, chosen, stance=self.stance)

    def refine_plan(
        self,
        plan: Plan,
        *,
        validation_issues: Sequence[ValidationIssue] = (),
        convergence_reason_codes: Sequence[str] = (),
        blocked_step_ids: Sequence[str] = (),
        executed_step_ids: Sequence[str] = (),
    ) -> list[RefinementAction]:
        """The refinements for ``plan`` after an evaluation (see the module docstring).

        ``convergence_reason_codes`` and ``executed_step_ids`` are accepted for 002's contract;
        the decisions rest on step statuses, issues and ``blocked_step_ids``.
        """
        del convergence_reason_codes, executed_step_ids
        actions: list[RefinementAction] = []
        touched: set[str] = set()
        for issue in validation_issues:
            if issue.issue_type in ("unknown_tool", "tool_not_allowed") and issue.step_id:
                actions.append(RefinementAction(
                    action_type="MODIFY",
                    target_step_id=issue.step_id,
                    new_step={"tool": None},
                    reason=f"{issue.issue_type}: {issue.description}",
                ))
                touched.add(issue.step_id)
        with self._lock:
            for step in plan.steps:
                if step.status == PlanStepStatus.FAILED and step.step_id not in touched:
                    action = self._retry(plan, step)
                    if action is not None:
                        actions.append(action)
                        touched.add(step.step_id)
            exhausted = self._exhausted(plan, touched)
            for step in plan.steps:
                if step.status != PlanStepStatus.PENDING or step.step_id in touched:
                    continue
                if step.step_id in blocked_step_ids and _blocked_for_good(plan, step, exhausted):
                    actions.append(RefinementAction(
                        action_type="REMOVE",
                        target_step_id=step.step_id,
                        reason="blocked by a dependency that failed for good or is missing",
                    ))
            actions += self._gap_steps(plan, validation_issues)
        return actions

    def attempts(self, plan_id: str, step_id: str) -> int:
        """How many refinements this planner has made for a failed step."""
        with self._lock:
            return self._attempts.get((plan_id, step_id), 0)

    def _retry(self, plan: Plan, step: PlanStep) -> RefinementAction | None:
        key = (plan.id, step.step_id)
        attempts = self._attempts.get(key, 0)
        if attempts >= MAX_ATTEMPTS:
            return None
        self._attempts[key] = attempts + 1
        if attempts == 0:
            return RefinementAction(
                action_type="MODIFY",
                target_step_id=step.step_id,
                new_step={"status": PlanStepStatus.PENDING.value},
                reason="step failed: retry once",
            )
        alternative = self._alternative(step)
        alternative["step_id"] = _replacement_id(plan, step.step_id)
        # The replacement is the last try of this step: it gets no refinement of its own.
        self._attempts[(plan.id, alternative["step_id"])] = MAX_ATTEMPTS
        return RefinementAction(
            action_type="REPLACE",
            target_step_id=step.step_id,
            new_step=alternative,
            reason="step failed again: replace it with an alternative",
        )

    def _exhausted(self, plan: Plan, refined: set[str]) -> set[int]:
        """Orders of FAILED steps with no refinement left, other than those refined now."""
        out: set[int] = set()
        for step in plan.steps:
            if step.status != PlanStepStatus.FAILED or step.step_id in refined:
                continue
            if self._attempts.get((plan.id, step.step_id), 0) >= MAX_ATTEMPTS:
                out.add(step.order)
        return out

    def _alternative(self, step: PlanStep) -> dict[str, Any]:
        base: dict[str, Any] = {
            "description": f"Another way to: {step.description}"[:500],
            "action_type": step.action_type,
            "dependencies": list(step.dependencies),
        }
        if self.llm is None or str(self.llm.provider) == "offline":
            return base
        from hrm.llm import LLMCallConfig, Message, chat_json

        answer = chat_json(
            self.llm,
            [Message(role="user", content=f"Failed step: {step.description[:500]}\n"
                     f"Its error: {str(step.output or '')[:300]}")],
            _ALTERNATIVE_SYSTEM,
            config=LLMCallConfig(temperature=0.0, max_tokens=200),
            purpose="plan_refinement",
        )
        if isinstance(answer, dict):
            description = answer.get("description")
            action_type = answer.get("action_type")
            if isinstance(description, str) and description.strip():
                base["description"] = " ".join(description.split())[:500]
            if action_type in PLAN_ACTION_TYPES and self._allowed(action_type):
                base["action_type"] = action_type
        return base

    def _gap_steps(
        self, plan: Plan, issues: Sequence[ValidationIssue]
    ) -> list[RefinementAction]:
        complete = [s.order for s in plan.steps if s.status == PlanStepStatus.COMPLETE]
        kind = "execute" if self._allowed("execute") else "research"
        actions: list[RefinementAction] = []
        for issue in issues:
            if issue.issue_type != "goal_gap" or not issue.is_blocking:
                continue
            key = (plan.id, issue.description.lower())
            if key in self._gaps:
                continue
            self._gaps.add(key)
            actions.append(RefinementAction(
                action_type="ADD",
                new_step={
                    "description": (issue.proposed_fix or f"Cover: {issue.description}")[:500],
                    "action_type": kind,
                    "dependencies": complete,
                },
                reason=f"validation gap: {issue.description}",
            ))
        return actions

    def _allowed(self, action_type: str) -> bool:
        return action_type not in STANCE_FORBIDDEN_STEPS[self.stance]


def _blocked_for_good(plan: Plan, step: PlanStep, exhausted: set[int]) -> bool:
    orders = {s.order for s in plan.steps}
    return any(dep not in orders or dep in exhausted for dep in step.dependencies)


def _replacement_id(plan: Plan, step_id: str) -> str:
    base = _REPLACED.sub("", step_id)
    used = {s.step_id for s in plan.steps}
    n = 1
    while f"{base}_r{n}" in used:
        n += 1
    return f"{base}_r{n}"


def _strategy_for(profile: TaskProfile | None, request: str) -> str:
    if profile is None:
        return "decomposition"
    if profile.reasoning_depth <= 1:
        parts = [p for p in _PARTS.split(request) if len(p.strip()) > 2]
        return "quick_answer" if len(parts) <= 1 else "decomposition"
    if profile.stakes == "high":
        return "verification"
    if profile.uncertainty > 0.6:
        return "exploration"
    return "decomposition"
