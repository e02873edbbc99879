"""GateController: registered evaluators, default evaluators, and failing closed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hrm.config import PolicySurface
from hrm.focus.commitments import Commitment
from hrm.focus.gates import GateController, GateDecision
from hrm.types import GateType, Stance

POLICY = PolicySurface()


def test_unregistered_gate_is_denied() -> None:
    gates = GateController(POLICY, defaults=False)
    decision = gates.attempt_gate(GateType.FRAMING, {"problem_id": "p"})
    assert not decision.approved and "No evaluator" in decision.reason
    assert not gates.passes(GateType.AGENT_APPROVAL, {})


def test_registered_bool_evaluator_is_wrapped() -> None:
    gates = GateController(POLICY, defaults=False)
    gates.register_gate(GateType.EMERGENCY, lambda ctx: bool(ctx.get("fire")))
    assert gates.passes(GateType.EMERGENCY, {"fire": True})
    decision = gates.attempt_gate(GateType.EMERGENCY, {})
    assert decision == GateDecision(
        approved=False, gate=GateType.EMERGENCY, reason="Gate emergency denied"
    )


def test_raising_or_odd_evaluators_deny() -> None:
    gates = GateController(POLICY)

    def broken(ctx: Any) -> bool:
        raise KeyError("oops")

    gates.register_gate(GateType.FRAMING, broken)
    decision = gates.attempt_gate(GateType.FRAMING, {"problem_id": "p"})
    assert not decision.approved and decision.metadata == {"error": "KeyError"}
    gates.register_gate(GateType.COMMITMENT, lambda ctx: "yes")
    assert not gates.passes(GateType.COMMITMENT, {})


def test_decision_for_another_gate_is_relabelled() -> None:
    gates = GateController(POLICY, defaults=False)
    gates.register_gate(
        GateType.FRAMING,
        lambda ctx: GateDecision(approved=True, gate=GateType.EMERGENCY, reason="ok"),
    )
    assert gates.attempt_gate(GateType.FRAMING, {}).gate is GateType.FRAMING


def test_default_framing_gate() -> None:
    gates = GateController(POLICY)
    forward = {"from_stance": Stance.SENSEMAKING, "to_stance": Stance.EXECUTION}
    assert not gates.passes(GateType.FRAMING, {**forward, "turns_in_stance": 1})
    assert gates.passes(GateType.FRAMING, {**forward, "turns_in_stance": 2})
    assert gates.passes(GateType.FRAMING, {**forward, "problem_id": "prob_1"})
    back = {"from_stance": Stance.EXECUTION, "to_stance": Stance.SENSEMAKING}
    assert not gates.passes(GateType.FRAMING, {**back, "problem_id": "prob_1"})
    assert gates.passes(GateType.FRAMING, {**back, "reframe": True})


def test_default_commitment_gate() -> None:
    gates = GateController(POLICY)
    active = Commitment(
        id="c", problem_id="p", description="d", turns_remaining=2, turns_total=3,
        created_at=datetime(2026, 1, 1, tzinfo=UTC), status="active",
    )  # fmt: skip
    assert gates.passes(GateType.COMMITMENT, {"commitment": active})
    assert not gates.passes(GateType.COMMITMENT, {"commitment": None})
    assert not gates.passes(GateType.COMMITMENT, {"commitment": {"status": "expired"}})
    assert not gates.passes(
        GateType.COMMITMENT, {"commitment": {"status": "active", "turns_remaining": 0}}
    )


def test_default_evaluation_emergency_and_write_gates() -> None:
    gates = GateController(POLICY)
    leave_exec = {"from_stance": "execution", "to_stance": "evaluation"}
    assert not gates.passes(GateType.EVALUATION, leave_exec)
    assert gates.passes(GateType.EVALUATION, {**leave_exec, "delivered": True})
    assert gates.passes(GateType.EVALUATION, {**leave_exec, "lease_expired": True})
    leave_eval = {"from_stance": Stance.EVALUATION, "to_stance": Stance.SENSEMAKING}
    assert not gates.passes(GateType.EVALUATION, {**leave_eval, "turns_in_stance": 0})
    assert gates.passes(GateType.EVALUATION, {**leave_eval, "turns_in_stance": 1})
    assert not gates.passes(GateType.EVALUATION, {"from_stance": "sensemaking"})
    assert gates.passes(GateType.EMERGENCY, {"emergency": True})
    assert not gates.passes(GateType.EMERGENCY, {"emergency": "yes"})
    assert gates.passes(GateType.WRITE_APPROVAL, {"write_decision": {"approved": True}})
    assert not gates.passes(GateType.WRITE_APPROVAL, {"write_decision": {"approved": False}})
    assert not gates.passes(GateType.AGENT_APPROVAL, {})  # no approval gate given


def test_decision_record_is_json_ready() -> None:
    import json

    decision = GateDecision(
        approved=True, gate=GateType.FRAMING, reason="ok",
        transitions_stance_to=Stance.EXECUTION, metadata={"stance": Stance.DISCOVERY, "n": {1}},
    )  # fmt: skip
    record = decision.to_record()
    assert json.loads(json.dumps(record))["transitions_stance_to"] == "execution"
