"""The ten conformance rules at the end of 004 (FMWK-010), one test each."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.factory import CognitiveStack
from hrm.stacks.lifecycle import lifecycle_events
from hrm.stacks.visibility import StackScope
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"
HO2M_FIELDS = {"session_id", "agent_class", "work_order_log", "arbitration_outcomes",
               "escalation_events", "meta_episodes", "attention_state", "active_templates"}


def turns(path: Any) -> list[dict[str, Any]]:
    with Ledger(path) as ledger:
        return [r.data for r in ledger.records() if r.kind == "turn"]


def test_1_shared_infrastructure_and_isolated_state(make_stack: Callable[..., Any]) -> None:
    admin, resident = make_stack("ADMIN"), make_stack(DPJ)
    assert admin.governance_ledger.path == resident.governance_ledger.path  # S1 HO3
    assert type(admin.gateway) is type(resident.gateway)  # S2 same KERNEL.syntactic code
    assert admin.home.meta_learning_ledger == resident.home.meta_learning_ledger  # S4
    assert admin.decision_ledger.path != resident.decision_ledger.path  # I1
    assert admin.execution_ledger.path != resident.execution_ledger.path  # I2
    assert admin.active_template_ids() != resident.active_template_ids()  # I3


def test_2_stacks_come_from_the_factory(home: HRMHome, make_stack: Callable[..., Any]) -> None:
    stack = make_stack(DPJ)
    assert isinstance(stack, CognitiveStack)
    assert stack.session_id.startswith("SES-")
    assert stack.budget_ceiling == stack.config.stack_token_budget
    [created] = [e for e in lifecycle_events(home, DPJ) if e["kind"] == "stack_created"]
    assert created["session_id"] == stack.session_id
    assert created["templates"] == ["ATT-DEFAULT-001", "ATT-DPJ-001"]


def test_3_ho2m_entries_carry_the_section_4_fields(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as resident:
        resident.turn("hello")
    [turn] = turns(home.decision_ledger(DPJ))
    assert set(turn) >= HO2M_FIELDS
    assert turn["agent_class"] == DPJ
    assert turn["active_templates"] == ["ATT-DEFAULT-001", "ATT-DPJ-001"]
    assert turn["work_order_log"] and all(w["state"] == "completed"
                                          for w in turn["work_order_log"])


def test_4_per_stack_state_lives_in_agent_class_directories(home: HRMHome) -> None:
    for agent_class in ("ADMIN", DPJ):
        with HRM.open(home, agent_class, "offline") as stack:
            stack.turn("Explain how binary search works")  # a model call: HO1m is written
    for agent_class, dirname in (("ADMIN", "ADMIN"), (DPJ, "RESIDENT_DoPeJar")):
        assert (home.root / "HO2" / "ledger" / dirname / "workorder.jsonl").is_file()
        assert (home.root / "HO1" / "ledger" / dirname / "worker.jsonl").is_file()
        with Ledger(home.root / "HO1" / "ledger" / dirname / "worker.jsonl") as ledger:
            assert {r.data.get("agent_class") for r in ledger.records()} == {agent_class}


def test_5_templates_bind_through_applies_to(home: HRMHome,
                                             make_stack: Callable[..., Any]) -> None:
    template = {"template_id": "ATT-OTHER-001", "applies_to": {"agent_class": ["RESIDENT:Other"]},
                "pipeline": [{"stage": "recent", "type": "recent_turns"}]}
    (home.hot_config_dir / "attention" / "ATT-OTHER-001.json").write_text(json.dumps(template))
    assert make_stack("ADMIN").active_template_ids() == ["ATT-ADMIN-001", "ATT-DEFAULT-001"]
    assert make_stack(DPJ).active_template_ids() == ["ATT-DEFAULT-001", "ATT-DPJ-001"]
    assert make_stack("RESIDENT:Other").active_template_ids() == [
        "ATT-DEFAULT-001", "ATT-DPJ-001", "ATT-OTHER-001"]


def test_6_cross_stack_visibility_is_enforced(make_stack: Callable[..., Any]) -> None:
    admin = make_stack("ADMIN")
    make_stack(DPJ)
    with pytest.raises(HRMError) as info:
        StackScope(admin.home, "ADMIN").open_ledger(admin.home.decision_ledger(DPJ))
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    with Ledger(admin.home.governance_ledger) as gov:
        assert [r.kind for r in gov.records()][-1] == "visibility_denied"


def test_7_lifecycle_phases_are_recorded_and_teardown_deletes_nothing(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as first:
        first.turn("remember the closet")
    sizes = {p: p.stat().st_size for p in home.all_ledgers() if "RESIDENT_DoPeJar" in str(p)}
    with HRM.open(home, DPJ, "offline", new_session=True):
        pass  # a new session of the same class recovers from the ledgers by itself
    for path, size in sizes.items():
        assert path.stat().st_size >= size
    assert [e["kind"] for e in lifecycle_events(home, DPJ)] == [
        "stack_created", "stack_teardown", "stack_created", "stack_recovered", "stack_teardown"]


def test_8_no_stack_reads_another_stacks_state(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as admin:
        admin.turn("the zebra-admin-codeword is kept by ADMIN")
    with HRM.open(home, DPJ, "offline") as resident:
        result = resident.turn("what is the zebra-admin-codeword?")
    shown = json.dumps(result.decision.attention_state) + result.response
    assert "kept by ADMIN" not in shown
    assert "kept by ADMIN" not in home.decision_ledger(DPJ).read_text()


def test_9_no_internal_state_between_sessions(home: HRMHome) -> None:
    with HRM.open(home, DPJ, "offline") as first:
        first.turn("first")
        state = turns(home.decision_ledger(DPJ))[-1]["state"]
    forged = {**state, "turn_number": 41}
    with Ledger(home.decision_ledger(DPJ)) as ledger:
        ledger.append("turn", {"turn": 41, "state": forged})
    with HRM.open(home, DPJ, "offline") as second:
        assert second.turn_number == 41  # read from the ledger, not remembered
        assert second.turn("next").decision.turn == 42


def test_10_no_shared_ho2_or_ho1_instances(make_stack: Callable[..., Any]) -> None:
    admin, resident = make_stack("ADMIN"), make_stack(DPJ)
    for part in ("focus", "altitude", "router", "planner", "evaluator", "executor", "gateway",
                 "attention", "bus", "patterns", "feedback"):
        assert getattr(admin, part) is not getattr(resident, part), part
    assert admin.gateway.agent_class == "ADMIN" and resident.gateway.agent_class == DPJ
    assert admin.executor.stack is admin and resident.executor.stack is resident
    assert admin.focus.problem_registry.agent_class == "ADMIN"
    assert resident.focus.problem_registry.agent_class == DPJ
