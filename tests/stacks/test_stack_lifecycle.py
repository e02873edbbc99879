"""Lifecycle (004 §8): provisioning, teardown, recovery from ledgers, recorded degradation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.lifecycle import (
    MINIMAL_SYSTEM_PROMPT,
    degrade,
    lifecycle_events,
    provision,
    record_teardown,
    recover,
)
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"


def ledger_records(path: Any, kind: str | None = None) -> list[Any]:
    with Ledger(path) as ledger:
        return [r for r in ledger.records() if kind is None or r.kind == kind]


def test_degrade_answers_with_a_direct_call_and_records_it_in_ho1m(
    make_stack: Callable[..., Any],
) -> None:
    stack = make_stack("ADMIN")
    error = HRMError.internal("the supervisor crashed")
    response, record = degrade(stack, "what is 2 + 2?", error)
    assert response.strip()
    orders = ledger_records(stack.home.execution_ledger("ADMIN"))
    kinds = [r.kind for r in orders]
    assert kinds == ["work_order", "degradation"]
    assert orders[0].data["purpose"] == "degraded_direct"
    assert record["llm_wo_id"] == orders[0].data["wo_id"]
    assert record["reason"] == "internal_error"
    assert record["outcome"] == "ok"
    assert record["seq"] == orders[1].seq and record["hash"] == orders[1].hash


def test_degrade_when_the_budget_is_spent_says_so_and_is_still_recorded(
    make_stack: Callable[..., Any],
) -> None:
    stack = make_stack("ADMIN", stack_token_budget=1)
    error = HRMError.budget_exhausted("stack ADMIN", 1, 1)
    response, record = degrade(stack, "hello there, please answer at length", error)
    assert "budget" in response.lower() or "token" in response.lower()
    assert record["outcome"] == "failed"
    assert record["fallback_error"]["code"] in ("budget_exhausted", "token_limit")
    assert ledger_records(stack.home.execution_ledger("ADMIN"))[-1].kind == "degradation"


def test_minimal_prompt_carries_no_assembled_context() -> None:
    assert "context" not in MINIMAL_SYSTEM_PROMPT.lower()


def test_provision_and_teardown_record_phases_and_delete_nothing(
    home: HRMHome, config: Any
) -> None:
    created = provision(home, DPJ, config)
    assert created["templates"] == ["ATT-DEFAULT-001", "ATT-DPJ-001"]
    assert home.ho2_dir(DPJ).is_dir() and home.ho1_dir(DPJ).is_dir()
    with Ledger(home.decision_ledger(DPJ)) as ledger:
        ledger.append("turn", {"input": "keep me"})
    record_teardown(home, DPJ, reason="test")
    assert [e["kind"] for e in lifecycle_events(home, DPJ)] == ["stack_created", "stack_teardown"]
    assert [r.data["input"] for r in ledger_records(home.decision_ledger(DPJ))] == ["keep me"]


def test_teardown_of_an_unknown_stack_is_not_found(home: HRMHome) -> None:
    with pytest.raises(HRMError) as info:
        record_teardown(home, "RESIDENT:Nobody")
    assert info.value.code is ErrorCode.NOT_FOUND


def test_recover_reads_the_previous_sessions_from_ledgers(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as first:
        first.turn("Let us plan the closet design")
        first.turn("What shelves fit a small closet?")
        earlier = first.session_id
    with HRM.open(home, DPJ, "offline", new_session=True) as second:
        report = recover(second.stack)
        assert report.recovered
        assert report.turns == 2 and report.last_turn == 2
        assert report.previous_session_id == earlier
        assert report.work_orders >= 2 and report.tokens_used > 0
        assert [t["input"] for t in report.recent] == [
            "Let us plan the closet design", "What shelves fit a small closet?"]
        assert second.turn("and the doors?").decision.turn == 3
    recovered = [e for e in lifecycle_events(home, DPJ) if e["kind"] == "stack_recovered"]
    assert recovered and recovered[-1]["turns"] == 2


def test_a_first_session_has_nothing_to_recover(make_stack: Callable[..., Any]) -> None:
    stack = make_stack("RESIDENT:Fresh")
    report = recover(stack)
    assert not report.recovered
    assert not [e for e in lifecycle_events(stack.home) if e["kind"] == "stack_recovered"]
