"""create_expiration_response: history, partial results, where the TTL ran out."""

from __future__ import annotations

import json

from tests.plans.conftest import MakePlan, set_status

from hrm.plans.ttl import create_expiration_response
from hrm.plans.types import ExecutionPass, OrchestrationState


def test_response_carries_history_partial_results_and_place(make_plan: MakePlan) -> None:
    plan = set_status(make_plan((1, "research", []), (2, "execute", [1])), step_1="COMPLETE")
    plan.steps[0].output = "found it"
    state = OrchestrationState(plan=plan, ttl_remaining=0, global_ttl=1, ttl_used=1)
    passes = [ExecutionPass(pass_number=0, phase="B", plan_state={}),
              ExecutionPass(pass_number=1, phase="C", plan_state={},
                            execution_results=[{"step_id": "step_1", "status": "COMPLETE"}],
                            refinement_changes=[{"action_type": "ADD"}])]
    ok, response, error = create_expiration_response(
        "mid_phase", "C", passes[-1], passes, state, "run_1", "do it")
    assert ok and error is None
    assert response["status"] == "ttl_expired" and response["ttl_remaining"] == 0
    assert response["partial_results"] == {"step_1": "found it"}
    expiration = response["ttl_expiration"]
    assert (expiration["expiration_type"], expiration["phase"], expiration["pass_number"]) == (
        "mid_phase", "C", 1)
    assert "during phase C" in expiration["message"]
    history = response["execution_history"]
    assert history["execution_id"] == "run_1" and len(history["passes"]) == 2
    assert history["overall_statistics"]["total_refinements"] == 1
    json.dumps(response)


def test_without_state_defaults_are_used() -> None:
    last = ExecutionPass(pass_number=0, phase="A", plan_state={"id": "p"})
    ok, response, _ = create_expiration_response(
        "phase_boundary", "B", last, [last], None, "run_2", "x")
    assert ok and response["ttl_remaining"] == 0 and response["partial_results"] == {}
    assert response["ttl_expiration"]["plan_state"] == {"id": "p"}


def test_a_broken_pass_returns_an_error_instead_of_raising() -> None:
    ok, response, error = create_expiration_response(
        "mid_phase", "C", None, [], None, "run_3", "x")  # type: ignore[arg-type]
    assert not ok and response == {} and error
