"""A plan run from a turn answers with its deliverable and the verdict beside it, and a model
too small for plans answers directly, saying so, before any step runs (issue 33 §5, D283, D284).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hrm.config import load_config
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.plans import run_plan
from hrm.storage.ledger import Ledger
from hrm.testing import ScriptedAdapter
from hrm.types import TurnInput

TEXT = "First write a migration plan, then write the scripts for the billing tables."


def _run(h: HRM) -> tuple[Any, list[str]]:
    h.turn("Let's plan the billing tables migration")  # into execution, where plans may run
    h.turn("What matters most for the billing tables migration?")
    before = _calls(h)
    turn_input = TurnInput(text=TEXT, timestamp=h._clock(), context=h._runner._context(3))
    reasoning = h.router.reason(turn_input, stance=h.stance)
    altitude = h.altitude.classify_input(turn_input)
    assembled = h.stack.assemble_context(TEXT, turn_input.context, None)
    plan = h.planner.generate_plan(turn_input, altitude, "decomposition", stance=h.stance)
    kinds: list[str] = []

    def event(kind: str, /, **payload: Any) -> None:
        kinds.append(kind)

    outcome = run_plan(h.stack.executor, plan, turn_input, assembled, reasoning, event,
                       commitment_turns_remaining=None)
    kinds.append(f"calls:{_calls(h) - before}")
    return outcome, kinds


def _calls(h: HRM) -> int:
    return int(h.stack.gateway.usage()["calls"])


def _plan_calls(home: HRMHome) -> list[dict[str, Any]]:
    with Ledger(home.execution_ledger("ADMIN")) as ledger:
        return [r.data for r in ledger.records() if r.kind == "work_order"
                and str(r.data.get("purpose", "")).startswith("plan_step:")]


def test_the_answer_is_the_deliverable_with_an_unverified_verdict(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        outcome, _kinds = _run(h)
    assert outcome.details["plan_status"] == "converged"
    answer = outcome.response
    assert answer.index("Do: write the scripts") < answer.index("Verification: unverified")
    assert answer.index("Verification: unverified") < answer.index("Plan (decomposition")
    assert not answer.startswith("(offline model) From the context I was given, the lines most "
                                 "relevant to \"Check the result")
    assert outcome.details["verdict"]["status"] == "unverified"
    assert outcome.details["deliverable"]["step_ids"][-1] != outcome.plan.steps[-1].step_id


def test_a_small_local_model_answers_directly_and_says_why(home: HRMHome) -> None:
    config = load_config(home).config
    config = replace(config, llm=replace(config.llm, provider="local"))
    model = ScriptedAdapter(["A direct answer."], provider="local", model="smollm2-135m",
                            repeat=True)
    with HRM.open(home, "ADMIN", model, config=config) as h:
        outcome, kinds = _run(h)
    assert "plan_refused" in kinds and "plan_run_started" not in kinds
    assert outcome.response.startswith("A direct answer.")
    [note] = [n for n in outcome.notes if "multi-step plan" in n]
    assert "too small for structured work" in note and "hrm models" in note
    assert _plan_calls(home) == []
    assert "calls:1" in kinds  # one direct answer, no step
