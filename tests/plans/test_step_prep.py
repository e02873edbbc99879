"""Step preparation: which steps are ready and what context they carry."""

from __future__ import annotations

from typing import Any

from tests.plans.conftest import MakePlan, set_status

from hrm.plans.step_prep import (
    DEPENDENCIES_KEY,
    get_ready_steps,
    handoff_key,
    output_key,
    populate_incoming_context,
    populate_step_indices,
)
from hrm.plans.types import StepMemory


def test_only_pending_steps_with_complete_dependencies_are_ready(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "execute", [1, 2]),
                     (4, "validate", [3]))
    assert [s.step_id for s in get_ready_steps(plan, StepMemory())] == ["step_1", "step_2"]
    set_status(plan, step_1="COMPLETE")
    assert [s.step_id for s in get_ready_steps(plan, StepMemory())] == ["step_2"]
    set_status(plan, step_2="COMPLETE")
    assert [s.step_id for s in get_ready_steps(plan, StepMemory())] == ["step_3"]


def test_failed_or_missing_dependency_is_unsatisfied(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [1]), (3, "execute", [9]))
    set_status(plan, step_1="FAILED")
    assert get_ready_steps(plan, StepMemory()) == []


def test_context_comes_from_memory_then_from_the_dependency_step(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "research", []), (3, "respond", [1, 2]))
    set_status(plan, step_1="COMPLETE", step_2="COMPLETE")
    plan.steps[1].output = "from the step"
    plan.steps[1].handoff_to_next = "step handoff"
    memory = StepMemory()
    memory.set(output_key(plan.id, "step_1"), "from memory")
    memory.set(handoff_key(plan.id, "step_1"), "memory handoff")
    plan.steps[2].incoming_context["tool_arguments"] = {"query": "x"}
    [ready] = get_ready_steps(plan, memory)
    deps = ready.incoming_context[DEPENDENCIES_KEY]
    assert deps["step_1"]["output"] == "from memory"
    assert deps["step_1"]["handoff"] == "memory handoff"
    assert deps["step_2"] == {"description": "Work item 2", "output": "from the step",
                              "handoff": "step handoff"}
    assert ready.incoming_context["tool_arguments"] == {"query": "x"}


class BrokenMemory:
    def get(self, key: str) -> Any:
        raise OSError("disk gone")

    def set(self, key: str, value: Any) -> None:
        raise OSError("disk gone")


def test_a_failing_memory_read_leaves_that_context_out(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [1]))
    set_status(plan, step_1="COMPLETE")
    plan.steps[0].output = "kept"
    populate_incoming_context(plan.steps[1], plan, BrokenMemory())
    assert plan.steps[1].incoming_context[DEPENDENCIES_KEY]["step_1"]["output"] == "kept"


def test_get_ready_steps_never_raises(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    plan.steps = None  # type: ignore[assignment]
    assert get_ready_steps(plan, StepMemory()) == []


def test_indices_are_one_based_positions(make_plan: MakePlan) -> None:
    plan = make_plan((5, "research", []), (2, "execute", [5]), (9, "validate", [2]))
    populate_step_indices(plan)
    assert [(s.step_index, s.total_steps) for s in plan.steps] == [(1, 3), (2, 3), (3, 3)]
