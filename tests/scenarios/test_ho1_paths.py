"""HO1 carries out governed actions through the plan engine and the agent runtime."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reasoning.types import AgentBundleProposal, CandidateAction
from hrm.stacks.plans import run_plan
from hrm.storage.ledger import Ledger
from hrm.types import ReducerType, TurnInput

TEXT = (
    "First design the schema, then write the loader, then add tests, and finally document "
    "the analytics migration."
)


@pytest.fixture
def hrm(home: HRMHome) -> Iterator[HRM]:
    h = HRM.open(home, "ADMIN", "offline")
    h.turn("Let's plan the analytics migration")
    h.turn("What matters most for the analytics migration?")
    yield h
    h.close()


def _prepare(h: HRM) -> tuple[TurnInput, Any, Any, Any, list[tuple[str, dict[str, Any]]]]:
    turn_input = TurnInput(text=TEXT, timestamp=h._clock(), context=h._runner._context(3))
    reasoning = h.router.reason(turn_input, stance=h.stance)
    altitude = h.altitude.classify_input(turn_input)
    assembled = h.stack.assemble_context(TEXT, turn_input.context, None)
    return turn_input, reasoning, altitude, assembled, []


def test_a_decomposition_plan_runs_to_convergence_in_the_engine(hrm: HRM, home: HRMHome) -> None:
    turn_input, reasoning, altitude, assembled, events = _prepare(hrm)
    plan = hrm.planner.generate_plan(turn_input, altitude, "decomposition", stance=hrm.stance)
    assert len(plan.steps) > 2

    def event(kind: str, /, **payload: Any) -> None:
        events.append((kind, payload))

    outcome = run_plan(hrm.stack.executor, plan, turn_input, assembled, reasoning, event,
                       commitment_turns_remaining=None)
    assert outcome.delivered and outcome.result.success
    assert outcome.details["plan_status"] == "converged"
    assert all(s.status.value == "COMPLETE" for s in outcome.plan.steps)
    kinds = {k for k, _ in events}
    assert {"plan_run_started", "plan_step_finished", "plan_run_finished"} <= kinds
    hrm.stack.execution_ledger.commit()
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        calls = [r.data for r in ledger.records()
                 if r.kind == "work_order" and r.data.get("type") == "llm_call"]
    step_calls = [c for c in calls if str(c.get("purpose", "")).startswith("plan_step:")]
    assert len(step_calls) == len(plan.steps)  # one model call per step, each a work order


def test_a_step_the_stance_forbids_is_refused_by_focus(hrm: HRM) -> None:
    from hrm.altitude.types import PlanStep
    from hrm.stacks.plans import FocusSupervisor

    hrm.focus.stance.start_session("test")  # back to sensemaking
    step = PlanStep(order=1, description="deploy it", action_type="execute")
    assert FocusSupervisor(hrm.stack).review_step(step) is not None


def test_an_approved_bundle_runs_in_the_agent_runtime(hrm: HRM) -> None:
    turn_input, reasoning, altitude, assembled, events = _prepare(hrm)
    proposal = AgentBundleProposal(
        strategy="exploration", classification=reasoning.classification,
        agents=["researcher", "analyst"], reducer=ReducerType.MERGE, parallel=True,
        reducer_config={"strategy": "concatenate"},
    )
    action = CandidateAction(id="delegate_agents", action_type="delegate",
                             description="explore", agent_proposal=proposal)

    def event(kind: str, /, **payload: Any) -> None:
        events.append((kind, payload))

    outcome = hrm.stack.execute(action, turn_input, assembled, reasoning, altitude, event)
    assert outcome.result.success and outcome.delivered
    assert outcome.details["agents"] == ["researcher", "analyst"]
    assert [k for k, _ in events] == ["agent_activated", "agent_bundle_finished"]
    assert events[0][1]["reducer"] == "merge"
