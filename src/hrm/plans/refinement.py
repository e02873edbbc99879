"""Plan refinement (002 PlanRefinement): apply ADD, MODIFY, REMOVE and REPLACE to a plan.

`apply_actions` works on a copy and returns ``(success, plan, error)``; it never raises.

- ADD appends a step built from ``new_step`` (``description`` and ``action_type`` required); it
  gets the next free order and ``step_<order>`` unless it names an unused ``step_id``.
- MODIFY changes the target's fields from ``new_step`` and puts it back to PENDING with no
  output (a changed step must run again) unless ``new_step`` sets ``status``.
- REMOVE drops the target.
- REPLACE puts a new PENDING step in the target's place, keeping its order (so the steps
  depending on it still do) under a new id (``<old id>_r<n>`` unless one is given).

``dependencies`` in ``new_step`` may name steps by order (int) or by ``step_id`` (str). An action
that is malformed, names a missing step, or would leave a dangling dependency or a cycle is
skipped; the skip is noted in ``plan.signals`` and the other actions still apply.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hrm.altitude.types import PLAN_ACTION_TYPES, Plan, PlanStep, PlanStepStatus
from hrm.plans.step_prep import populate_step_indices
from hrm.plans.types import REFINEMENT_ACTION_TYPES, RefinementAction, copy_plan
from hrm.plans.validation import structure_issues

__all__ = ["apply_actions"]

logger = logging.getLogger(__name__)

_REPLACED = re.compile(r"_r\d+$")
_EDITABLE = ("description", "action_type", "dependencies", "tool", "agent", "capabilities")


class _Skip(Exception):
    """An action that cannot apply; carries why."""


def apply_actions(
    plan: Plan, refinement_actions: Sequence[RefinementAction]
) -> tuple[bool, Plan, str | None]:
    """Apply ``refinement_actions`` in order to a copy of ``plan``.

    Returns:
        ``(True, updated_plan, None)``, with skipped actions noted in ``updated_plan.signals``;
        or ``(False, plan, error)`` when something unexpected went wrong (the original plan).
    """
    try:
        updated = copy_plan(plan)
        for action in refinement_actions:
            try:
                candidate = _apply(copy_plan(updated), action)
                broken = [i for i in structure_issues(candidate) if i.issue_type != "no_steps"]
                if broken:
                    raise _Skip(broken[0].description)
                updated = candidate
            except _Skip as skip:
                note = f"refinement skipped ({_describe(action)}): {skip}"
                logger.info("%s", note)
                updated.signals.append(note)
        populate_step_indices(updated)
        return True, updated, None
    except Exception as exc:  # 002: refinement returns an error instead of raising
        logger.exception("applying refinement actions to plan %s failed", plan.id)
        return False, plan, f"applying refinement actions failed: {exc}"


def _apply(plan: Plan, action: RefinementAction) -> Plan:
    kind = str(action.action_type).upper()
    if kind not in REFINEMENT_ACTION_TYPES:
        raise _Skip(f"unknown action type '{action.action_type}'")
    if kind == "ADD":
        plan.steps.append(_new_step(plan, action.new_step, order=None, step_id=None))
        return plan
    target = _target(plan, action.target_step_id)
    if kind == "REMOVE":
        plan.steps.remove(target)
    elif kind == "MODIFY":
        _modify(plan, target, action.new_step)
    else:
        index = plan.steps.index(target)
        fresh_id = _replacement_id(plan, target.step_id)
        plan.steps[index] = _new_step(plan, action.new_step, order=target.order, step_id=fresh_id)
    return plan


def _target(plan: Plan, step_id: str | None) -> PlanStep:
    for step in plan.steps:
        if step.step_id == step_id:
            return step
    raise _Skip(f"no step '{step_id}' in plan {plan.id}")


def _new_step(
    plan: Plan, raw: Mapping[str, Any] | None, *, order: int | None, step_id: str | None
) -> PlanStep:
    if not isinstance(raw, Mapping):
        raise _Skip("new_step is missing")
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _Skip("new_step has no description")
    action_type = raw.get("action_type")
    if action_type not in PLAN_ACTION_TYPES:
        raise _Skip(f"new_step has action_type {action_type!r}")
    if order is None:
        order = max((s.order for s in plan.steps), default=0) + 1
    given_id = raw.get("step_id")
    if isinstance(given_id, str) and given_id.strip():
        if any(s.step_id == given_id for s in plan.steps if s.order != order):
            raise _Skip(f"step id '{given_id}' is already used")
        step_id = given_id.strip()
    step = PlanStep(
        order=order,
        description=description.strip()[:500],
        action_type=action_type,
        dependencies=_dependencies(plan, raw.get("dependencies")),
        step_id=step_id or f"step_{order}",
        tool=_optional_text(raw.get("tool")),
        agent=_optional_text(raw.get("agent")),
        capabilities=_texts(raw.get("capabilities")),
    )
    arguments = raw.get("tool_arguments")
    if isinstance(arguments, Mapping):
        step.incoming_context["tool_arguments"] = dict(arguments)
    return step


def _modify(plan: Plan, step: PlanStep, raw: Mapping[str, Any] | None) -> None:
    if not isinstance(raw, Mapping):
        raise _Skip("new_step is missing")
    changes = {k: raw[k] for k in _EDITABLE if k in raw}
    if "description" in changes:
        text = changes["description"]
        if not isinstance(text, str) or not text.strip():
            raise _Skip("description must be non-empty text")
        step.description = text.strip()[:500]
    if "action_type" in changes:
        if changes["action_type"] not in PLAN_ACTION_TYPES:
            raise _Skip(f"action_type {changes['action_type']!r} is unknown")
        step.action_type = changes["action_type"]
    if "dependencies" in changes:
        step.dependencies = _dependencies(plan, changes["dependencies"])
    if "tool" in changes:
        step.tool = _optional_text(changes["tool"])
    if "agent" in changes:
        step.agent = _optional_text(changes["agent"])
    if "capabilities" in changes:
        step.capabilities = _texts(changes["capabilities"])
    status = raw.get("status", PlanStepStatus.PENDING.value)
    try:
        step.status = PlanStepStatus(status)
    except ValueError:
        raise _Skip(f"status {status!r} is unknown") from None
    if step.status == PlanStepStatus.PENDING:
        step.output = None
        step.handoff_to_next = None


def _dependencies(plan: Plan, raw: Any) -> list[int]:
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise _Skip("dependencies must be a list")
    by_id = {s.step_id: s.order for s in plan.steps}
    orders: list[int] = []
    for item in raw:
        if isinstance(item, bool):
            raise _Skip(f"dependency {item!r} is not a step")
        if isinstance(item, int):
            orders.append(item)
        elif isinstance(item, str) and item in by_id:
            orders.append(by_id[item])
        else:
            raise _Skip(f"dependency {item!r} names no step of the plan")
    return sorted(set(orders))


def _replacement_id(plan: Plan, old_id: str) -> str:
    base = _REPLACED.sub("", old_id)
    used = {s.step_id for s in plan.steps}
    n = 1
    while f"{base}_r{n}" in used:
        n += 1
    return f"{base}_r{n}"


def _optional_text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _texts(value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [v for v in value if isinstance(v, str) and v]


def _describe(action: RefinementAction) -> str:
    target = f" {action.target_step_id}" if action.target_step_id else ""
    return f"{action.action_type}{target}"
