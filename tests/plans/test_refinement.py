"""apply_actions: ADD, MODIFY, REMOVE, REPLACE, and what it skips."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings
from tests.plans.conftest import MakePlan, build_plan, set_status

from hrm.altitude.types import PlanStepStatus
from hrm.plans.refinement import apply_actions
from hrm.plans.types import RefinementAction
from hrm.plans.validation import structure_issues


def test_add_appends_a_step_with_the_next_order(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [1]))
    ok, updated, error = apply_actions(plan, [RefinementAction(
        action_type="ADD",
        new_step={"description": "Check it", "action_type": "validate",
                  "dependencies": ["step_2"], "tool_arguments": {"path": "a"}},
    )])
    assert ok and error is None
    added = updated.steps[-1]
    assert (added.order, added.step_id, added.dependencies) == (3, "step_3", [2])
    assert added.incoming_context["tool_arguments"] == {"path": "a"}
    assert [s.step_index for s in updated.steps] == [1, 2, 3]
    assert len(plan.steps) == 2, "the original plan is not changed"


def test_modify_changes_fields_and_puts_the_step_back_to_pending(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "execute", [])), step_1="FAILED")
    plan.steps[0].output = "error: boom"
    plan.steps[0].tool = "read_file"
    ok, updated, _ = apply_actions(plan, [RefinementAction(
        action_type="MODIFY", target_step_id="step_1",
        new_step={"description": "Try again", "tool": None},
    )])
    step = updated.steps[0]
    assert ok
    assert (step.description, step.tool, step.status, step.output) == (
        "Try again", None, PlanStepStatus.PENDING, None)


def test_remove_drops_the_target(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", []))
    ok, updated, _ = apply_actions(plan, [RefinementAction(action_type="REMOVE",
                                                           target_step_id="step_2")])
    assert ok and [s.step_id for s in updated.steps] == ["step_1"]


def test_replace_keeps_the_order_so_dependents_still_point_at_it(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "execute", []), (2, "validate", [1])), step_1="FAILED")
    ok, updated, _ = apply_actions(plan, [RefinementAction(
        action_type="REPLACE", target_step_id="step_1",
        new_step={"description": "Another way", "action_type": "execute"},
    )])
    first = updated.steps[0]
    assert ok
    assert (first.order, first.step_id, first.status) == (1, "step_1_r1", PlanStepStatus.PENDING)
    assert updated.steps[1].dependencies == [1]
    ok, again, _ = apply_actions(updated, [RefinementAction(
        action_type="REPLACE", target_step_id="step_1_r1",
        new_step={"description": "Third way", "action_type": "execute"},
    )])
    assert again.steps[0].step_id == "step_1_r2"


def test_invalid_actions_are_skipped_and_noted_while_the_rest_apply(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [1]))
    actions = [
        RefinementAction(action_type="MODIFY", target_step_id="nope", new_step={}),
        RefinementAction(action_type="ADD", new_step={"description": "x", "action_type": "fly"}),
        RefinementAction(action_type="ADD", new_step={"description": "x", "action_type": "ask",
                                                      "dependencies": [42]}),
        RefinementAction(action_type="EXPLODE", target_step_id="step_1"),
        RefinementAction(action_type="MODIFY", target_step_id="step_1",
                         new_step={"dependencies": [2]}),  # would close a cycle
        RefinementAction(action_type="REMOVE", target_step_id="step_2"),
    ]
    ok, updated, error = apply_actions(plan, actions)
    assert ok and error is None
    assert [s.step_id for s in updated.steps] == ["step_1"]
    assert updated.steps[0].dependencies == []
    notes = [s for s in updated.signals if s.startswith("refinement skipped")]
    assert len(notes) == 5
    assert any("dependency cycle" in note for note in notes)


def test_unexpected_failure_returns_the_original_plan(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    ok, same, error = apply_actions(plan, [object()])  # type: ignore[list-item]
    assert not ok and same is plan and error


_actions = st.lists(
    st.builds(
        RefinementAction,
        action_type=st.sampled_from(["ADD", "MODIFY", "REMOVE", "REPLACE", "bogus"]),
        target_step_id=st.sampled_from([None, "step_1", "step_2", "step_3", "step_9"]),
        new_step=st.one_of(st.none(), st.fixed_dictionaries({
            "description": st.sampled_from(["", "Do x", "Check y"]),
            "action_type": st.sampled_from(["research", "execute", "nope"]),
            "dependencies": st.lists(st.one_of(st.integers(0, 5), st.sampled_from(["step_1"])),
                                     max_size=3),
        })),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(actions=_actions)
def test_any_action_sequence_leaves_a_runnable_plan(actions: list[RefinementAction]) -> None:
    plan = build_plan((1, "research", []), (2, "execute", [1]), (3, "validate", [2]))
    ok, updated, _ = apply_actions(plan, actions)
    assert ok
    assert [i for i in structure_issues(updated) if i.issue_type != "no_steps"] == []
    assert [s.step_index for s in updated.steps] == list(range(1, len(updated.steps) + 1))
