"""SemanticValidator: structure, tools, outputs, and a bounded model review."""

from __future__ import annotations

import itertools
import json

import hypothesis.strategies as st
from hypothesis import given, settings
from tests.plans.conftest import MakePlan, ScriptedModel, build_plan, set_status

from hrm.plans.validation import SemanticValidator, find_cycle, parse_review, structure_issues
from hrm.runtime.tools import Tool, ToolRegistry


def test_a_cycle_is_a_critical_issue_naming_the_steps(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", [3]), (2, "execute", [1]), (3, "validate", [2]))
    [issue] = structure_issues(plan)
    assert issue.issue_type == "dependency_cycle" and issue.severity == "critical"
    assert "step_1 -> step_3 -> step_2 -> step_1 (each step waits for the next)" in issue.description


def test_dangling_dependency_names_the_missing_order(make_plan: MakePlan) -> None:
    plan = make_plan((1, "research", []), (2, "execute", [7]))
    [issue] = structure_issues(plan)
    assert issue.issue_type == "dangling_dependency" and issue.step_id == "step_2"
    assert "depends on step 7" in issue.description


def test_empty_duplicate_and_unknown_types_are_structural(make_plan: MakePlan) -> None:
    assert structure_issues(make_plan())[0].issue_type == "no_steps"
    kinds = {i.issue_type for i in structure_issues(make_plan((1, "dance", []), (1, "ask", [])))}
    assert kinds == {"duplicate_step", "unknown_action_type"}


def test_failed_and_empty_outputs_are_reported(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", []), (3, "execute", [])),
                      step_1="FAILED", step_2="COMPLETE", step_3="COMPLETE")
    plan.steps[1].output = "  "
    plan.steps[2].output = "fine"
    report = SemanticValidator().validate(plan)
    assert [(i.issue_type, i.severity, i.step_id) for i in report.issues] == [
        ("step_failed", "high", "step_1"), ("empty_output", "medium", "step_2")]
    assert report.overall_severity == "high" and len(report.blocking) == 1


def test_tools_are_checked_against_the_registry_and_capabilities(make_plan: MakePlan) -> None:
    registry = ToolRegistry([Tool(name="lookup", description="d", capability="search",
                                  handler=lambda args: args)])
    plan = make_plan((1, "research", []), (2, "research", []), (3, "research", []))
    plan.steps[0].tool = "missing"
    plan.steps[1].tool = "lookup"
    plan.steps[2].tool, plan.steps[2].capabilities = "lookup", ["search"]
    report = SemanticValidator().validate(plan, tool_registry=registry)
    assert [(i.issue_type, i.step_id) for i in report.issues] == [
        ("unknown_tool", "step_1"), ("tool_not_allowed", "step_2")]


def test_the_offline_model_never_reviews(make_plan: MakePlan) -> None:
    from hrm.llm.offline import OfflineAdapter

    plan = set_status(make_plan((1, "research", [])), step_1="COMPLETE")
    plan.steps[0].output = "done"
    validator = SemanticValidator(OfflineAdapter())
    assert not validator.uses_model
    assert validator.validate(plan, goal="g", execution_results=[{"step_id": "step_1"}]).issues == []


def test_a_real_model_review_adds_bounded_goal_gaps(make_plan: MakePlan) -> None:
    answer = {"issues": [{"description": f"gap {n}", "severity": "high",
                          "proposed_fix": f"fix {n}"} for n in range(5)]}
    model = ScriptedModel({"plan_validation": [json.dumps(answer)]})
    plan = set_status(make_plan((1, "research", [])), step_1="COMPLETE")
    plan.steps[0].output = "partial"
    report = SemanticValidator(model, max_model_issues=2).validate(
        plan, goal="g", execution_results=[{"step_id": "step_1"}])
    assert report.source == "model"
    assert [(i.issue_type, i.description, i.proposed_fix) for i in report.issues] == [
        ("goal_gap", "gap 0", "fix 0"), ("goal_gap", "gap 1", "fix 1")]


def test_a_malformed_review_adds_nothing(make_plan: MakePlan) -> None:
    model = ScriptedModel({"plan_validation": ["I think it is fine!"]})
    plan = set_status(make_plan((1, "research", [])), step_1="COMPLETE")
    plan.steps[0].output = "x"
    report = SemanticValidator(model).validate(plan, goal="g", execution_results=[{}])
    assert report.issues == [] and report.source == "deterministic"


def test_parse_review_drops_what_is_malformed() -> None:
    answer = {"issues": [1, {"description": ""}, {"description": "ok", "severity": "weird"},
                         {"description": "x", "proposed_fix": 3}]}
    issues = parse_review(answer)
    assert [(i.description, i.severity, i.proposed_fix) for i in issues] == [
        ("ok", "medium", None), ("x", "medium", None)]
    assert parse_review(["not", "a", "dict"]) == [] and parse_review({"issues": "x"}) == []


def _has_cycle_by_peeling(edges: dict[int, list[int]]) -> bool:
    remaining = {n: {d for d in deps if d in edges} for n, deps in edges.items()}
    while True:
        free = [n for n, deps in remaining.items() if not deps]
        if not free:
            return bool(remaining)
        for n in free:
            del remaining[n]
        for deps in remaining.values():
            deps.difference_update(free)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(1, 7), st.lists(st.integers(1, 7), max_size=3),
                       min_size=1, max_size=7))
def test_find_cycle_agrees_with_topological_peeling(edges: dict[int, list[int]]) -> None:
    plan = build_plan(*[(order, "research", deps) for order, deps in edges.items()])
    cycle = find_cycle(plan)
    assert (cycle is not None) == _has_cycle_by_peeling(edges)
    if cycle is not None:
        assert cycle[0] == cycle[-1]
        by_id = {s.step_id: s for s in plan.steps}
        for here, there in itertools.pairwise(cycle):
            assert by_id[there].order in by_id[here].dependencies
