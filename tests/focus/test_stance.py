"""StanceMachine: allowed actions per stance, transitions only through approving gates."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.focus.gates import GateController
from hrm.focus.stance import (
    ACTION_RULES,
    GATE_TRANSITIONS,
    StanceMachine,
    StanceProposal,
    propose_default,
)
from hrm.storage.sqlite import Database
from hrm.types import GateType, Stance

POLICY = PolicySurface()
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def machine(db: Database | None = None, gates: GateController | None = None) -> StanceMachine:
    return StanceMachine(POLICY, db or Database(":memory:"), "ADMIN", gates=gates,
                         clock=lambda: NOW)  # fmt: skip


def test_new_stack_starts_in_the_new_session_stance() -> None:
    m = machine()
    assert m.get_current() is Stance.SENSEMAKING
    assert m.get_allowed_actions() == ["respond", "ask", "wait", "delegate"]


@pytest.mark.parametrize(
    ("stance", "action", "purposes", "allowed"),
    [
        (Stance.SENSEMAKING, "execute", frozenset(), False),
        (Stance.SENSEMAKING, "delegate", frozenset({"exploration"}), True),
        (Stance.SENSEMAKING, "delegate", frozenset({"decomposition"}), False),
        (Stance.DISCOVERY, "execute", frozenset({"research"}), True),
        (Stance.DISCOVERY, "execute", frozenset(), False),
        (Stance.DISCOVERY, "wait", frozenset(), False),
        (Stance.EXECUTION, "delegate", frozenset({"quick_answer"}), True),
        (Stance.EVALUATION, "delegate", frozenset({"vote"}), True),
        (Stance.EVALUATION, "execute", frozenset(), False),
    ],
)
def test_actions_allowed_per_stance(
    stance: Stance, action: str, purposes: frozenset[str], allowed: bool
) -> None:
    ok, reason = machine().allows(action, purposes, stance=stance)
    assert ok is allowed, reason


def test_transition_through_an_approving_gate_emits_stance_change() -> None:
    m = machine()
    assert m.transition(Stance.EXECUTION, "framed", GateType.FRAMING, {"problem_id": "prob_1"})
    assert m.get_current() is Stance.EXECUTION
    event = m.last_transition.event()  # type: ignore[union-attr]
    assert event["event_type"] == "stance_change"
    assert event["payload"] | {"gate_decision": None} == {
        "from": "sensemaking", "to": "execution", "via_gate": "framing", "reason": "framed",
        "outcome": "The problem is framed", "gate_decision": None,
    }  # fmt: skip
    assert m.state().turns_in_stance == 0


def test_denied_gate_changes_nothing() -> None:
    m = machine()
    result = m.attempt(Stance.EXECUTION, "too early", GateType.FRAMING, {})
    assert not result.success and result.gate_decision is not None
    assert result.event()["event_type"] == "stance_change_denied"
    assert m.get_current() is Stance.SENSEMAKING


def test_a_gate_cannot_move_pairs_outside_its_table() -> None:
    m = machine()
    result = m.attempt(Stance.EVALUATION, "skip", GateType.EMERGENCY, {"emergency": True})
    assert not result.success and result.gate_decision is None
    assert "cannot move" in result.outcome
    assert not m.transition(Stance.EXECUTION, "x", GateType.WRITE_APPROVAL, {})
    assert not m.transition(Stance.SENSEMAKING, "same", GateType.EMERGENCY, {"emergency": True})


def test_turns_are_counted_and_reset_on_transition_and_session_start() -> None:
    m = machine()
    assert m.record_turn() == 1 and m.record_turn() == 2
    m.transition(Stance.EXECUTION, "go", GateType.FRAMING)  # 2 turns of sensemaking suffice
    assert m.state().turns_in_stance == 0 and m.get_current() is Stance.EXECUTION
    event = m.start_session()
    assert event["event_type"] == "stance_reset" and event["payload"]["from"] == "execution"
    assert m.get_current() is Stance.SENSEMAKING


def test_stance_is_shared_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Database(path) as a, Database(path) as b:
        machine(a).transition(Stance.EXECUTION, "go", GateType.EMERGENCY, {"emergency": True})
        assert machine(b).get_current() is Stance.EXECUTION
        other = StanceMachine(POLICY, b, "RESIDENT:DoPeJar")
        assert other.get_current() is Stance.SENSEMAKING


@pytest.mark.parametrize(
    ("current", "kwargs", "expected"),
    [
        (Stance.SENSEMAKING, {"turns_in_stance": 1}, None),
        (Stance.SENSEMAKING, {"turns_in_stance": 2},
         StanceProposal(Stance.EXECUTION, GateType.FRAMING, "sensemaking turns spent")),
        (Stance.DISCOVERY, {"commitment_active": True},
         StanceProposal(Stance.EXECUTION, GateType.COMMITMENT, "mid-commitment")),
        (Stance.EXECUTION, {"delivered": True},
         StanceProposal(Stance.EVALUATION, GateType.EVALUATION, "work delivered")),
        (Stance.EVALUATION, {"turns_in_stance": 1},
         StanceProposal(Stance.SENSEMAKING, GateType.EVALUATION, "evaluation turns spent")),
        (Stance.EVALUATION, {"turns_in_stance": 1, "commitment_active": True},
         StanceProposal(Stance.EXECUTION, GateType.EVALUATION, "evaluation turns spent")),
        (Stance.EXECUTION, {"turns_in_stance": 9}, None),
    ],
)  # fmt: skip
def test_policy_defaults(current: Stance, kwargs: dict[str, Any], expected: object) -> None:
    args: dict[str, Any] = {
        "turns_in_stance": 0, "commitment_active": False, "delivered": False, **kwargs
    }
    assert propose_default(POLICY, current, **args) == expected


gate_contexts = st.fixed_dictionaries(
    {},
    optional={
        "problem_id": st.sampled_from(["prob_1", None]),
        "reframe": st.booleans(),
        "emergency": st.booleans(),
        "delivered": st.booleans(),
        "evaluated": st.booleans(),
        "commitment": st.sampled_from([None, {"status": "active", "turns_remaining": 2}]),
    },
)
steps = st.lists(
    st.tuples(st.sampled_from(list(Stance)), st.sampled_from(list(GateType)), gate_contexts),
    max_size=12,
)


@settings(max_examples=100, deadline=None)
@given(steps=steps, deny_all=st.booleans())
def test_no_transition_without_an_approving_gate(
    steps: list[tuple[Stance, GateType, dict[str, Any]]], deny_all: bool
) -> None:
    gates = GateController(POLICY, defaults=not deny_all)
    m = machine(gates=gates)
    for to_stance, gate, context in steps:
        before = m.get_current()
        decision = gates.attempt_gate(
            gate, {**context, "from_stance": before, "to_stance": to_stance,
                   "turns_in_stance": m.state().turns_in_stance},
        )  # fmt: skip
        moved = m.transition(to_stance, "prop", gate, context)
        after = m.get_current()
        if moved:
            assert decision.approved
            assert (before, to_stance) in GATE_TRANSITIONS[gate]
            assert after is to_stance
        else:
            assert after is before
        if deny_all:
            assert not moved
        m.record_turn()


def test_every_stance_allows_respond_and_ask() -> None:
    for rules in ACTION_RULES.values():
        assert rules["respond"] is None and rules["ask"] is None
