"""The AltitudePlanner (001 §2.2): a plan per strategy, and the checks a plan must pass.

Plans come from deterministic templates, one per reasoning strategy. With a real model (an
adapter whose provider is not ``offline``) the planner asks for a plan as JSON and keeps it only
if it passes `plan_violations` for the current stance and has at most `MAX_MODEL_STEPS` steps;
otherwise the template stands and `Plan.signals` says why.

Templates (dependencies by step order):

================  ==============================================================
strategy          steps
================  ==============================================================
quick_answer      1 respond
dialogue          1 ask
exploration       1 research, 2 research (parallel) -> 3 respond (synthesize)
decomposition     1 research -> 2..N+1 execute (in sequence) -> N+2 validate
verification      1 execute -> 2 validate, 3 validate (parallel) -> 4 respond
                  (reconcile)
================  ==============================================================

Stance rules (`STANCE_FORBIDDEN_STEPS`): SENSEMAKING and EVALUATION forbid ``execute`` steps
(understand, or assess, before producing new work); DISCOVERY and EXECUTION allow every step.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from hrm._process import new_id
from hrm.altitude.governor import ask_model_json
from hrm.altitude.types import PLAN_ACTION_TYPES, Plan, PlanStep
from hrm.reasoning.types import STRATEGIES
from hrm.types import AltitudeLevel, Stance

if TYPE_CHECKING:
    from hrm.altitude.types import AltitudeClassification
    from hrm.llm.types import ILLMAdapter
    from hrm.types import TurnInput

__all__ = [
    "MAX_MODEL_STEPS",
    "MAX_PLAN_STEPS",
    "STANCE_FORBIDDEN_STEPS",
    "AltitudePlanner",
    "plan_violations",
]

logger = logging.getLogger(__name__)

MAX_PLAN_STEPS = 20
"""Longer plans are a violation: a plan is a turn's worth of work, not a project."""
MAX_MODEL_STEPS = 8
"""A model-generated plan longer than this falls back to the template."""
_MAX_EXECUTE_STEPS = 5

STANCE_FORBIDDEN_STEPS: dict[Stance, frozenset[str]] = {
    Stance.SENSEMAKING: frozenset({"execute"}),
    Stance.DISCOVERY: frozenset(),
    Stance.EXECUTION: frozenset(),
    Stance.EVALUATION: frozenset({"execute"}),
}
"""Step action types each stance forbids (see the module docstring)."""

_STRATEGY_BY_LEVEL = {
    AltitudeLevel.L1_MOMENT: "quick_answer",
    AltitudeLevel.L2_OPERATIONS: "decomposition",
    AltitudeLevel.L3_STRATEGY: "exploration",
    AltitudeLevel.L4_IDENTITY: "dialogue",
}
_AGENT_BY_STRATEGY = {
    "exploration": "researcher",
    "decomposition": "planner",
    "verification": "verifier",
}
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$", re.MULTILINE)
_PART = re.compile(
    r"(?:[.;!?]+(?=\s|$)|\n+|\bthen\b|\band then\b|\bafter that\b)", re.IGNORECASE
)
"""Where a request's clauses end: a sentence's stop before a space, not the dot of
"orders.csv", "Python 3.11" or "e.g" inside one."""
_PLAN_SYSTEM = (
    "Write a short plan for the user's request. Answer with JSON only: "
    '{"steps": [{"description": str, "action_type": "research"|"execute"|"validate"|"ask"|'
    '"respond", "dependencies": [order of earlier steps]}]}. Steps are numbered from 1 in '
    "list order; at most 8 steps."
)


class AltitudePlanner:
    """Makes plans per strategy and checks them against the stance.

    Stateless apart from the optional model; safe to share between threads.
    """

    def __init__(self, llm: ILLMAdapter | None = None) -> None:
        self.llm = llm

    def generate_plan(
        self,
        input: TurnInput,
        classification: AltitudeClassification,
        strategy: str | None = None,
        *,
        stance: Stance | None = None,
    ) -> Plan:
        """A plan for the input at its altitude.

        Args:
            input: The turn's input; its text sizes decomposition and prompts the model.
            classification: The input's altitude; picks the strategy when none is given
                (L1 quick_answer, L2 decomposition, L3 exploration, L4 dialogue).
            strategy: The reasoning strategy to realise (one of ``STRATEGIES``).
            stance: The stance a model plan must satisfy; defaults to the input's context.

        Returns:
            The model's plan when a real model gave a valid one, else the template.
        """
        chosen = strategy if strategy in STRATEGIES else _STRATEGY_BY_LEVEL[classification.level]
        signals = [] if strategy in (None, chosen) else [f"unknown strategy {strategy!r}"]
        plan = _template(chosen, input.text, allows_agents=classification.allows_agents)
        plan.signals = [*signals, f"template:{chosen}"]
        if self.llm is None or str(self.llm.provider) == "offline":
            return plan
        model_plan = self._model_plan(input.text, plan, stance or input.context.stance)
        return model_plan or plan

    def validate_plan(self, plan: Plan, stance: Stance) -> bool:
        """True when the plan has no violations under this stance (see `plan_violations`)."""
        return not plan_violations(plan, stance)

    def plan_violations(self, plan: Plan, stance: Stance) -> list[str]:
        """What is wrong with the plan; the caller logs each as an event (000 PlanValidation)."""
        return plan_violations(plan, stance)

    def _model_plan(self, text: str, template: Plan, stance: Stance) -> Plan | None:
        answer = ask_model_json(self.llm, _PLAN_SYSTEM, text[:4000], purpose="plan")
        raw_steps = answer.get("steps") if answer else None
        problem = _model_steps_problem(raw_steps)
        if problem is None and isinstance(raw_steps, list):
            steps = [
                PlanStep(
                    order=index,
                    description=str(item["description"]).strip()[:500],
                    action_type=str(item["action_type"]),
                    dependencies=[int(dep) for dep in item.get("dependencies") or []],
                )
                for index, item in enumerate(raw_steps, start=1)
            ]
            plan = _assemble(steps, template.strategy or "quick_answer", template.requires_agents)
            violations = plan_violations(plan, stance)
            if not violations:
                plan.source = "model"
                plan.signals = [f"model plan for {template.strategy}"]
                return plan
            problem = "; ".join(violations)
        template.signals.append(f"model plan rejected ({problem}), kept template")
        logger.info("model plan rejected: %s", problem)
        return None


def plan_violations(plan: Plan, stance: Stance) -> list[str]:
    """Every rule the plan breaks: shape (no steps, too many, unknown action types, duplicate
    orders), dependencies (dangling, self, cycles) and the stance's forbidden step types."""
    violations: list[str] = []
    if not plan.steps:
        return ["plan has no steps"]
    if len(plan.steps) > MAX_PLAN_STEPS:
        violations.append(f"plan has {len(plan.steps)} steps, more than {MAX_PLAN_STEPS}")
    orders = [step.order for step in plan.steps]
    for order in sorted({o for o in orders if orders.count(o) > 1}):
        violations.append(f"step order {order} is used more than once")
    known = set(orders)
    forbidden = STANCE_FORBIDDEN_STEPS[Stance(stance)]
    for step in plan.steps:
        if step.action_type not in PLAN_ACTION_TYPES:
            violations.append(f"step {step.order}: unknown action_type {step.action_type!r}")
        elif step.action_type in forbidden:
            violations.append(
                f"step {step.order}: {step.action_type} steps are not allowed in "
                f"{Stance(stance).value} stance"
            )
        for dep in step.dependencies:
            if dep == step.order:
                violations.append(f"step {step.order} depends on itself")
            elif dep not in known:
                violations.append(f"step {step.order} depends on missing step {dep}")
    cycle = _find_cycle(plan)
    if cycle:
        violations.append("dependency cycle: " + " -> ".join(str(o) for o in cycle))
    return violations


def _find_cycle(plan: Plan) -> list[int] | None:
    graph = {step.order: [d for d in step.dependencies if d != step.order] for step in plan.steps}
    state: dict[int, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: int, path: list[int]) -> list[int] | None:
        state[node] = 1
        for dep in graph.get(node, []):
            if dep not in graph:
                continue
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep, [*path, dep])
                if found:
                    return found
        state[node] = 2
        return None

    for node in graph:
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def _depth(steps: list[PlanStep]) -> int:
    """Turns needed when independent steps share a turn (longest dependency chain).

    Cycles are cut where they close (``seen``), so a malformed plan still gets a finite depth.
    """
    by_order = {step.order: step for step in steps}
    memo: dict[int, int] = {}

    def depth(order: int, seen: frozenset[int]) -> int:
        if order in memo:
            return memo[order]
        seen = seen | {order}
        deps = [d for d in by_order[order].dependencies if d in by_order and d not in seen]
        memo[order] = 1 + max((depth(d, seen) for d in deps), default=0)
        return memo[order]

    return max((depth(step.order, frozenset()) for step in steps), default=1)


def _assemble(steps: list[PlanStep], strategy: str, requires_agents: bool) -> Plan:
    for step in steps:
        step.step_index, step.total_steps = step.order, len(steps)
    return Plan(
        id=new_id("plan", 12),
        steps=steps,
        estimated_turns=_depth(steps),
        requires_agents=requires_agents,
        agent_suggestion=_AGENT_BY_STRATEGY.get(strategy) if requires_agents else None,
        strategy=strategy,
    )


def _template(strategy: str, text: str, *, allows_agents: bool) -> Plan:
    def step(order: int, action: str, description: str, deps: list[int] | None = None) -> PlanStep:
        return PlanStep(
            order=order, action_type=action, description=description, dependencies=deps or []
        )

    if strategy == "dialogue":
        steps = [step(1, "ask", "Ask the user what they mean or want")]
    elif strategy == "exploration":
        steps = [
            step(1, "research", "Research the first angle on the question"),
            step(2, "research", "Research an alternative angle in parallel"),
            step(3, "respond", "Synthesize the findings into options", [1, 2]),
        ]
    elif strategy == "decomposition":
        parts = _parts(text)
        steps = [step(1, "research", "Gather what the task needs")]
        for index, part in enumerate(parts, start=2):
            steps.append(step(index, "execute", f"Do: {part}", [index - 1]))
        last = len(steps)
        steps.append(step(last + 1, "validate", "Check the result", list(range(2, last + 1))))
    elif strategy == "verification":
        steps = [
            step(1, "execute", "Produce the result"),
            step(2, "validate", "Verify the result independently", [1]),
            step(3, "validate", "Verify the result a second way", [1]),
            step(4, "respond", "Reconcile the verifications into one verdict", [2, 3]),
        ]
    else:
        steps = [step(1, "respond", "Answer directly")]
    requires_agents = allows_agents and strategy in _AGENT_BY_STRATEGY
    return _assemble(steps, strategy, requires_agents)


def _parts(text: str) -> list[str]:
    """The sub-tasks of a request: its list items, else its clauses (1 to 5 of them)."""
    head = text[:4000]
    items = [m.group(1).strip() for m in _ITEM.finditer(head)]
    if len(items) < 2:
        items = [p.strip() for p in _PART.split(head) if p and len(p.strip()) > 2]
    items = [" ".join(item.split())[:120] for item in items][:_MAX_EXECUTE_STEPS]
    return items or ["the task"]


def _model_steps_problem(raw_steps: object) -> str | None:
    if not isinstance(raw_steps, list) or not raw_steps:
        return "malformed output"
    if len(raw_steps) > MAX_MODEL_STEPS:
        return f"{len(raw_steps)} steps, more than {MAX_MODEL_STEPS}"
    for index, item in enumerate(raw_steps, start=1):
        if not isinstance(item, dict):
            return f"step {index} is not an object"
        if not isinstance(item.get("description"), str) or not item["description"].strip():
            return f"step {index} has no description"
        if item.get("action_type") not in PLAN_ACTION_TYPES:
            return f"step {index} has unknown action_type {item.get('action_type')!r}"
        deps = item.get("dependencies") or []
        if not isinstance(deps, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in deps
        ):
            return f"step {index} has malformed dependencies"
    return None
