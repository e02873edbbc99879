"""The SemanticValidator (002): what is wrong with a plan, its steps' outputs, and (with a model)
how far the outputs are from the goal.

Deterministic checks always run and are authoritative:

- structure (`structure_issues`): no steps, duplicate step ids or orders, unknown action types,
  dangling dependencies and dependency cycles — all ``critical``: such a plan cannot run;
- tools (with a registry): a step's tool that is not registered (``high``) or whose capability
  the step does not hold (``high``);
- outputs: a FAILED step (``high``) and a COMPLETE step with an empty output (``medium``).

With a real model (an adapter whose provider is not ``offline``) and outputs to review, one
bounded JSON call asks what the outputs miss against the goal. Its answer is parsed
defensively: at most `MAX_MODEL_ISSUES` well-formed items become ``goal_gap`` issues, the rest
is dropped, and a failed or malformed call adds nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.altitude.types import PLAN_ACTION_TYPES, PlanStepStatus
from hrm.plans.types import SEVERITIES, SemanticValidationReport, ValidationIssue

if TYPE_CHECKING:
    from hrm.altitude.types import Plan
    from hrm.llm.types import ILLMAdapter

__all__ = [
    "MAX_MODEL_ISSUES",
    "SemanticValidator",
    "find_cycle",
    "structure_issues",
]

logger = logging.getLogger(__name__)

MAX_MODEL_ISSUES = 3
"""The most ``goal_gap`` issues one model review may add."""
_MAX_OUTPUT_CHARS = 600
_MAX_PROMPT_CHARS = 6000
_REVIEW_SYSTEM = (
    "You review the results of a plan against its goal. Answer with JSON only: "
    '{"issues": [{"description": str, "severity": "low"|"medium"|"high", '
    '"proposed_fix": str}]}. List only what the results still miss for the goal; '
    'an empty list means the goal is met.'
)


def find_cycle(plan: Plan) -> list[str] | None:
    """The step ids of one dependency cycle (first id repeated at the end), or ``None``."""
    by_order = {step.order: step for step in plan.steps}
    graph = {s.order: [d for d in s.dependencies if d in by_order] for s in plan.steps}
    state: dict[int, int] = {}  # 1 = on the current path, 2 = finished
    for root, deps in graph.items():
        if root in state:
            continue
        path: list[int] = [root]
        stack = [iter(deps)]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                return [by_order[o].step_id for o in cycle]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(graph[nxt]))
    return None


def structure_issues(plan: Plan) -> list[ValidationIssue]:
    """Every structural problem: such a plan cannot run, so each is ``critical``."""
    if not plan.steps:
        return [_critical("no_steps", f"Plan {plan.id} has no steps")]
    issues: list[ValidationIssue] = []
    orders = [s.order for s in plan.steps]
    ids = [s.step_id for s in plan.steps]
    for order in sorted({o for o in orders if orders.count(o) > 1}):
        issues.append(_critical("duplicate_step", f"Step order {order} is used more than once"))
    for step_id in sorted({i for i in ids if ids.count(i) > 1}):
        issues.append(
            _critical("duplicate_step", f"Step id '{step_id}' is used more than once", step_id)
        )
    known = set(orders)
    for step in plan.steps:
        if step.action_type not in PLAN_ACTION_TYPES:
            issues.append(_critical(
                "unknown_action_type",
                f"Step '{step.step_id}' has action_type '{step.action_type}'; "
                f"expected one of {', '.join(PLAN_ACTION_TYPES)}",
                step.step_id,
            ))
        for dep in step.dependencies:
            if dep not in known:
                issues.append(_critical(
                    "dangling_dependency",
                    f"Step '{step.step_id}' depends on step {dep}, which is not in plan "
                    f"{plan.id} (known orders: {sorted(known)})",
                    step.step_id,
                ))
    cycle = find_cycle(plan)
    if cycle:
        issues.append(_critical(
            "dependency_cycle",
            f"Plan {plan.id} has a dependency cycle: {' -> '.join(cycle)} "
            "(each step waits for the next)",
            cycle[0],
        ))
    return issues


class SemanticValidator:
    """Validates plans before they run and their outputs after each batch.

    Args:
        llm: The model for the goal review; ``None`` or the offline model skips it.
        max_model_issues: Upper bound on ``goal_gap`` issues from one review.
    """

    def __init__(
        self, llm: ILLMAdapter | None = None, *, max_model_issues: int = MAX_MODEL_ISSUES
    ) -> None:
        self.llm = llm
        self.max_model_issues = max(0, max_model_issues)

    @property
    def uses_model(self) -> bool:
        """Whether a real model reviews outputs."""
        return self.llm is not None and str(self.llm.provider) != "offline"

    def validate(
        self,
        plan: Plan,
        *,
        goal: str = "",
        tool_registry: Any | None = None,
        execution_results: Sequence[dict[str, Any]] = (),
    ) -> SemanticValidationReport:
        """All issues of ``plan`` (see the module docstring for the checks).

        Args:
            plan: The plan, with the statuses and outputs the engine has set.
            goal: The request the plan serves (for the model's review).
            tool_registry: A `hrm.runtime.tools.ToolRegistry` to check steps' tools against.
            execution_results: The latest batch; a model review runs only when it is non-empty.
        """
        issues = structure_issues(plan)
        if tool_registry is not None:
            issues += _tool_issues(plan, tool_registry)
        issues += _output_issues(plan)
        source = "deterministic"
        if self.uses_model and execution_results and not any(i.is_blocking for i in issues):
            gaps = self._review(plan, goal)
            if gaps:
                issues += gaps
                source = "model"
        return SemanticValidationReport(
            validation_id=new_id("val", 12),
            issues=issues,
            overall_severity=_worst(issues),
            source=source,
        )

    def _review(self, plan: Plan, goal: str) -> list[ValidationIssue]:
        from hrm.llm import LLMCallConfig, Message, chat_json

        done = [s for s in plan.steps if s.status == PlanStepStatus.COMPLETE]
        if not done or self.llm is None or not self.max_model_issues:
            return []
        lines = [f"Goal: {goal[:1000]}", "Results:"]
        for step in done:
            lines.append(f"- {step.step_id} ({step.description[:120]}): "
                         f"{str(step.output)[:_MAX_OUTPUT_CHARS]}")
        prompt = "\n".join(lines)[:_MAX_PROMPT_CHARS]
        answer = chat_json(
            self.llm,
            [Message(role="user", content=prompt)],
            _REVIEW_SYSTEM,
            config=LLMCallConfig(temperature=0.0, max_tokens=400),
            purpose="plan_validation",
        )
        return parse_review(answer, limit=self.max_model_issues)


def parse_review(answer: Any, *, limit: int = MAX_MODEL_ISSUES) -> list[ValidationIssue]:
    """``goal_gap`` issues from a model's review answer; anything malformed is dropped."""
    raw = answer.get("issues") if isinstance(answer, dict) else None
    if not isinstance(raw, list):
        return []
    issues: list[ValidationIssue] = []
    for item in raw:
        if len(issues) >= limit:
            break
        if not isinstance(item, dict):
            continue
        description = item.get("description")
        if not isinstance(description, str) or not description.strip():
            continue
        severity = item.get("severity")
        severity = severity if severity in ("low", "medium", "high") else "medium"
        fix = item.get("proposed_fix")
        issues.append(ValidationIssue(
            issue_type="goal_gap",
            severity=severity,
            description=" ".join(description.split())[:300],
            proposed_fix=" ".join(fix.split())[:300] if isinstance(fix, str) and fix.strip()
            else None,
        ))
    return issues


def _tool_issues(plan: Plan, registry: Any) -> list[ValidationIssue]:
    issues: list[ValidationIssue] = []
    names = set(registry.names())
    for step in plan.steps:
        if not step.tool or step.status != PlanStepStatus.PENDING:
            continue
        if step.tool not in names:
            issues.append(ValidationIssue(
                issue_type="unknown_tool",
                severity="high",
                description=f"Step '{step.step_id}' calls tool '{step.tool}', which is not "
                f"registered (registered: {', '.join(sorted(names)) or 'none'})",
                step_id=step.step_id,
                proposed_fix="run the step on the model instead",
            ))
            continue
        capability = registry.get(step.tool).capability
        if capability not in step.capabilities:
            issues.append(ValidationIssue(
                issue_type="tool_not_allowed",
                severity="high",
                description=f"Step '{step.step_id}' calls tool '{step.tool}' but does not hold "
                f"its capability '{capability}'",
                step_id=step.step_id,
                proposed_fix="run the step on the model instead",
            ))
    return issues


def _output_issues(plan: Plan) -> list[ValidationIssue]:
    issues: list[ValidationIssue] = []
    for step in plan.steps:
        if step.status == PlanStepStatus.FAILED:
            issues.append(ValidationIssue(
                issue_type="step_failed",
                severity="high",
                description=f"Step '{step.step_id}' failed: {str(step.output or '')[:200]}",
                step_id=step.step_id,
            ))
        elif step.status == PlanStepStatus.COMPLETE and _is_empty(step.output):
            issues.append(ValidationIssue(
                issue_type="empty_output",
                severity="medium",
                description=f"Step '{step.step_id}' completed with an empty output",
                step_id=step.step_id,
            ))
    return issues


def _is_empty(output: Any) -> bool:
    if output is None:
        return True
    if isinstance(output, str):
        return not output.strip()
    if isinstance(output, dict | list | tuple):
        return not output
    return False


def _critical(kind: str, description: str, step_id: str | None = None) -> ValidationIssue:
    return ValidationIssue(
        issue_type=kind, severity="critical", description=description, step_id=step_id
    )


def _worst(issues: Sequence[ValidationIssue]) -> str:
    ranks = [SEVERITIES.index(i.severity) for i in issues if i.severity in SEVERITIES]
    return SEVERITIES[max(ranks)] if ranks else "none"
