"""AltitudePlanner: templates per strategy, validated model plans, stance violations."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.altitude import (
    AltitudeClassification,
    AltitudePlanner,
    Plan,
    PlanStep,
    PlanStepStatus,
    plan_violations,
)
from hrm.types import AltitudeLevel, Stance


def altitude(level: AltitudeLevel = AltitudeLevel.L2_OPERATIONS, *, agents: bool = True) -> (
    AltitudeClassification
):
    return AltitudeClassification(
        level=level, confidence=0.8, signals=[], suggested_stance=None, allows_agents=agents
    )


def shape(plan: Plan) -> list[tuple[str, list[int]]]:
    return [(step.action_type, step.dependencies) for step in plan.steps]


@pytest.mark.parametrize(
    ("strategy", "expected", "turns"),
    [
        ("quick_answer", [("respond", [])], 1),
        ("dialogue", [("ask", [])], 1),
        ("exploration", [("research", []), ("research", []), ("respond", [1, 2])], 2),
        (
            "verification",
            [("execute", []), ("validate", [1]), ("validate", [1]), ("respond", [2, 3])],
            3,
        ),
    ],
)
def test_templates_per_strategy(make_input, strategy: str, expected: list[object], turns: int) -> (  # type: ignore[no-untyped-def]
    None
):
    plan = AltitudePlanner().generate_plan(make_input("do it"), altitude(), strategy)
    assert shape(plan) == expected
    assert plan.estimated_turns == turns
    assert plan.strategy == strategy and plan.source == "template"
    assert all(step.status == PlanStepStatus.PENDING for step in plan.steps)
    assert [s.step_index for s in plan.steps] == list(range(1, len(plan.steps) + 1))
    assert {s.total_steps for s in plan.steps} == {len(plan.steps)}


def test_decomposition_has_one_execute_step_per_part(make_input) -> None:  # type: ignore[no-untyped-def]
    text = "Plan the release:\n1. bump the version\n2. write the changelog\n3. tag the commit"
    plan = AltitudePlanner().generate_plan(make_input(text), altitude(), "decomposition")
    assert shape(plan) == [
        ("research", []),
        ("execute", [1]),
        ("execute", [2]),
        ("execute", [3]),
        ("validate", [2, 3, 4]),
    ]
    assert plan.steps[1].description == "Do: bump the version"
    assert plan.requires_agents and plan.agent_suggestion == "planner"
    assert plan.estimated_turns == 5


def test_a_dot_inside_a_clause_does_not_split_it(make_input) -> None:  # type: ignore[no-untyped-def]
    text = (
        "Write a Python 3.11 script that reads orders.csv and writes orders_clean.parquet. "
        "Then add a test."
    )
    plan = AltitudePlanner().generate_plan(make_input(text), altitude(), "decomposition")
    assert [s.description for s in plan.steps[1:-1]] == [
        "Do: Write a Python 3.11 script that reads orders.csv and writes orders_clean.parquet",
        "Do: add a test",
    ]


def test_agents_only_when_the_level_allows(make_input) -> None:  # type: ignore[no-untyped-def]
    plan = AltitudePlanner().generate_plan(
        make_input("x"), altitude(agents=False), "exploration"
    )
    assert not plan.requires_agents and plan.agent_suggestion is None


@pytest.mark.parametrize(
    ("level", "strategy"),
    [
        (AltitudeLevel.L1_MOMENT, "quick_answer"),
        (AltitudeLevel.L2_OPERATIONS, "decomposition"),
        (AltitudeLevel.L3_STRATEGY, "exploration"),
        (AltitudeLevel.L4_IDENTITY, "dialogue"),
    ],
)
def test_strategy_defaults_from_the_level(make_input, level: AltitudeLevel, strategy: str) -> None:  # type: ignore[no-untyped-def]
    assert AltitudePlanner().generate_plan(make_input("x"), altitude(level)).strategy == strategy


def test_stance_rules() -> None:
    execute = Plan(
        id="p", steps=[PlanStep(order=1, description="run", action_type="execute")],
        estimated_turns=1, requires_agents=False, agent_suggestion=None,
    )
    planner = AltitudePlanner()
    assert not planner.validate_plan(execute, Stance.SENSEMAKING)
    assert not planner.validate_plan(execute, Stance.EVALUATION)
    assert planner.validate_plan(execute, Stance.EXECUTION)
    assert planner.validate_plan(execute, Stance.DISCOVERY)
    assert planner.plan_violations(execute, Stance.SENSEMAKING) == [
        "step 1: execute steps are not allowed in sensemaking stance"
    ]


def test_structural_violations_are_listed() -> None:
    steps = [
        PlanStep(order=1, description="a", action_type="research", dependencies=[2]),
        PlanStep(order=2, description="b", action_type="validate", dependencies=[1]),
        PlanStep(order=3, description="c", action_type="dance", dependencies=[9]),
        PlanStep(order=3, description="d", action_type="ask", dependencies=[3]),
    ]
    plan = Plan(id="p", steps=steps, estimated_turns=1, requires_agents=False,
                agent_suggestion=None)
    violations = plan_violations(plan, Stance.EXECUTION)
    assert "step order 3 is used more than once" in violations
    assert "step 3: unknown action_type 'dance'" in violations
    assert "step 3 depends on missing step 9" in violations
    assert "step 3 depends on itself" in violations
    assert "dependency cycle: 1 -> 2 -> 1" in violations
    empty = Plan(id="e", steps=[], estimated_turns=0, requires_agents=False, agent_suggestion=None)
    assert plan_violations(empty, Stance.EXECUTION) == ["plan has no steps"]


def test_a_valid_model_plan_replaces_the_template(make_input, scripted_model) -> None:  # type: ignore[no-untyped-def]
    answer = json.dumps({"steps": [
        {"description": "Read the failing test", "action_type": "research", "dependencies": []},
        {"description": "Explain the cause", "action_type": "respond", "dependencies": [1]},
    ]})
    plan = AltitudePlanner(llm=scripted_model(answer)).generate_plan(
        make_input("why does the test fail?", stance=Stance.SENSEMAKING), altitude(), "exploration"
    )
    assert plan.source == "model"
    assert shape(plan) == [("research", []), ("respond", [1])]
    assert plan.estimated_turns == 2


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        pytest.param("no json here", "malformed output", id="prose"),
        pytest.param('{"steps": [{"description": "x", "action_type": "fly"}]}',
                     "unknown action_type", id="unknown-action"),
        pytest.param(json.dumps({"steps": [
            {"description": "a", "action_type": "research", "dependencies": [2]},
            {"description": "b", "action_type": "research", "dependencies": [1]},
        ]}), "dependency cycle", id="cycle"),
        pytest.param(json.dumps({"steps": [
            {"description": "a", "action_type": "research", "dependencies": [5]},
        ]}), "missing step 5", id="dangling"),
        pytest.param(json.dumps({"steps": [
            {"description": f"s{i}", "action_type": "research"} for i in range(9)
        ]}), "more than 8", id="too-long"),
        pytest.param(json.dumps({"steps": [
            {"description": "ship it", "action_type": "execute"},
        ]}), "not allowed in sensemaking", id="stance"),
    ],
)
def test_invalid_model_plans_fall_back_to_the_template(
    make_input, scripted_model, answer: str, why: str  # type: ignore[no-untyped-def]
) -> None:
    plan = AltitudePlanner(llm=scripted_model(answer)).generate_plan(
        make_input("do it", stance=Stance.SENSEMAKING), altitude(), "exploration"
    )
    assert plan.source == "template"
    assert shape(plan)[0] == ("research", [])
    assert any(why in signal for signal in plan.signals), plan.signals


def test_offline_model_is_not_asked(make_input, scripted_model) -> None:  # type: ignore[no-untyped-def]
    model = scripted_model(provider="offline")
    AltitudePlanner(llm=model).generate_plan(make_input("x"), altitude(), "exploration")
    assert model.calls == []


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["research", "execute", "validate", "ask", "respond"]),
            st.lists(st.integers(min_value=1, max_value=8), max_size=3),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_violations_and_depth_are_total(specs: list[tuple[str, list[int]]]) -> None:
    from hrm.altitude.planner import _depth

    steps = [
        PlanStep(order=i, description=f"s{i}", action_type=a, dependencies=d)
        for i, (a, d) in enumerate(specs, start=1)
    ]
    plan = Plan(id="p", steps=steps, estimated_turns=1, requires_agents=False,
                agent_suggestion=None)
    violations = plan_violations(plan, Stance.DISCOVERY)
    acyclic_and_closed = all(
        all(dep < step.order for dep in step.dependencies) for step in steps
    )
    if acyclic_and_closed:
        assert violations == []
    assert 1 <= _depth(steps) <= len(steps)
