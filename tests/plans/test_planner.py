"""RecursivePlanner: plans by profile; retry, replace, remove and add as refinements."""

from __future__ import annotations

import json

from tests.plans.conftest import MakePlan, ScriptedModel, set_status

from hrm.plans.planner import MAX_ATTEMPTS, RecursivePlanner
from hrm.plans.refinement import apply_actions
from hrm.plans.types import TaskProfile, ValidationIssue
from hrm.types import Stance


def test_generate_follows_the_profile() -> None:
    planner = RecursivePlanner()
    assert planner.generate("hi", TaskProfile(reasoning_depth=1)).strategy == "quick_answer"
    assert planner.generate("Read it; then fix it", TaskProfile(reasoning_depth=1)).strategy == (
        "decomposition")
    assert planner.generate("x", TaskProfile(reasoning_depth=3, stakes="high")).strategy == (
        "verification")
    assert planner.generate("x", TaskProfile(reasoning_depth=3, uncertainty=0.9)).strategy == (
        "exploration")
    assert planner.generate("x", None, strategy="dialogue").steps[0].action_type == "ask"


def test_a_failed_step_is_retried_then_replaced_then_left(make_plan: MakePlan) -> None:
    planner = RecursivePlanner()
    plan = set_status(make_plan((1, "execute", []), (2, "validate", [1])), step_1="FAILED")
    [retry] = planner.refine_plan(plan)
    assert (retry.action_type, retry.target_step_id) == ("MODIFY", "step_1")
    [replace] = planner.refine_plan(plan, blocked_step_ids=["step_2"])
    assert replace.action_type == "REPLACE" and replace.new_step is not None
    assert replace.new_step["step_id"] == "step_1_r1", "dependents wait for the replacement"
    assert replace.new_step["description"].startswith("Another way to:")
    assert planner.attempts(plan.id, "step_1") == MAX_ATTEMPTS
    assert planner.refine_plan(plan) == []

    ok, replaced, _ = apply_actions(plan, [replace])
    assert ok
    set_status(replaced, step_1_r1="FAILED")
    [remove] = planner.refine_plan(replaced, blocked_step_ids=["step_2"])
    assert (remove.action_type, remove.target_step_id) == ("REMOVE", "step_2")


def test_blocked_steps_wait_while_their_dependency_can_still_be_retried(
    make_plan: MakePlan,
) -> None:
    planner = RecursivePlanner()
    plan = set_status(make_plan((1, "execute", []), (2, "validate", [1])), step_1="FAILED")
    actions = planner.refine_plan(plan, blocked_step_ids=["step_2"])
    assert [a.action_type for a in actions] == ["MODIFY"]


def test_tool_problems_move_the_step_to_the_model(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []))
    issue = ValidationIssue(issue_type="unknown_tool", severity="high", description="d",
                            step_id="step_1")
    [action] = RecursivePlanner().refine_plan(plan, validation_issues=[issue])
    assert (action.action_type, action.new_step) == ("MODIFY", {"tool": None})


def test_goal_gaps_add_one_step_each_once(make_plan: MakePlan) -> None:
    planner = RecursivePlanner(stance=Stance.SENSEMAKING)
    plan = set_status(make_plan((1, "research", []), (2, "research", [])), step_1="COMPLETE")
    gap = ValidationIssue(issue_type="goal_gap", severity="high", description="No costs",
                          proposed_fix="Estimate the costs")
    minor = ValidationIssue(issue_type="goal_gap", severity="low", description="style")
    [add] = planner.refine_plan(plan, validation_issues=[gap, minor])
    assert add.action_type == "ADD" and add.new_step == {
        "description": "Estimate the costs", "action_type": "research", "dependencies": [1]}
    assert planner.refine_plan(plan, validation_issues=[gap]) == []


def test_a_real_model_proposes_the_alternative(make_plan: MakePlan) -> None:
    model = ScriptedModel({"plan_refinement": [
        json.dumps({"description": "Use the backup source", "action_type": "research"})]})
    planner = RecursivePlanner(llm=model)
    plan = set_status(make_plan((1, "execute", [])), step_1="FAILED")
    planner.refine_plan(plan)
    [replace] = planner.refine_plan(plan)
    assert replace.new_step is not None
    assert (replace.new_step["description"], replace.new_step["action_type"]) == (
        "Use the backup source", "research")
