"""The GateController (001 §4.2): checkpoints every state change must pass.

A gate is a named evaluator over a context dict. 001 §4.2 returns a bool; 000 §4.2 returned a
`GateDecision`. We return the decision (a value with its reason, so the caller can record why
and fall back) and offer `GateController.passes` as the bool convenience — the bool of 001 is
``attempt_gate(...).approved``.

Gates fail closed: an unregistered gate, an evaluator that raises, or one that answers anything
but a bool or a `GateDecision` is a denial with a reason, never an approval.

The default evaluators read these context keys (the stance machine adds ``from_stance``,
``to_stance`` and ``turns_in_stance`` itself):

=================  ========================================================================
gate               approves when
=================  ========================================================================
FRAMING            into SENSEMAKING: ``reframe`` is true (a new or switched problem);
                   otherwise a problem is framed (``problem_id`` or ``problem_framed``), or
                   sensemaking has run ``SENSEMAKING_MAX_TURNS``
COMMITMENT         ``commitment`` is an active commitment with turns remaining
EVALUATION         from EXECUTION: ``delivered`` or ``lease_expired``; from EVALUATION:
                   ``evaluated`` or ``EVALUATION_MAX_TURNS`` spent evaluating
EMERGENCY          ``emergency`` is true
WRITE_APPROVAL     ``write_decision`` (a WriteGate decision) is approved
AGENT_APPROVAL     the `AgentApprovalGate` given to the controller approves ``proposal`` in
                   ``stance`` under ``commitment`` (no approval gate → denied)
=================  ========================================================================
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from hrm.types import GateType, Stance

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.focus.approval import AgentApprovalGate

__all__ = ["GateController", "GateDecision", "GateEvaluator"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    """A gate's verdict with its reason (000 §4.2's shape)."""

    approved: bool
    gate: GateType
    reason: str
    transitions_stance_to: Stance | None = None
    """The stance this approval moves Focus into, when it moves one."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Details for the decision record (rule that failed, agent ids, ...)."""

    def to_record(self) -> dict[str, Any]:
        """The ``gate_decision`` event payload."""
        return {
            "gate": self.gate.value,
            "approved": self.approved,
            "reason": self.reason,
            "transitions_stance_to": (
                self.transitions_stance_to.value if self.transitions_stance_to else None
            ),
            "metadata": _jsonable(self.metadata),
        }


GateEvaluator: TypeAlias = Callable[[Mapping[str, Any]], "GateDecision | bool"]
"""Decides one gate from a context dict; a bare bool is wrapped into a decision."""


class GateController:
    """Holds one evaluator per gate and runs them, failing closed (001 §4.2).

    Args:
        policy: Turn limits the default FRAMING and EVALUATION evaluators read.
        agent_gate: Evaluates AGENT_APPROVAL; without it that gate denies.
        defaults: Register the default evaluators (see the module table). ``False`` gives an
            empty controller where every gate denies until one is registered.
    """

    def __init__(
        self,
        policy: PolicySurface,
        *,
        agent_gate: AgentApprovalGate | None = None,
        defaults: bool = True,
    ) -> None:
        self.policy = policy
        self.evaluators: dict[GateType, GateEvaluator] = {}
        if defaults:
            self.evaluators.update(
                {
                    GateType.FRAMING: self._framing,
                    GateType.COMMITMENT: _commitment,
                    GateType.EVALUATION: self._evaluation,
                    GateType.EMERGENCY: _emergency,
                    GateType.WRITE_APPROVAL: _write_approval,
                }
            )
            if agent_gate is not None:
                self.evaluators[GateType.AGENT_APPROVAL] = _agent_approval(agent_gate)

    def register_gate(self, gate: GateType, evaluator: GateEvaluator) -> None:
        """Register (or replace) the evaluator of `gate`."""
        self.evaluators[gate] = evaluator

    def attempt_gate(self, gate: GateType, context: Mapping[str, Any]) -> GateDecision:
        """Try to pass through `gate`; the decision says whether and why."""
        evaluator = self.evaluators.get(gate)
        if evaluator is None:
            return GateDecision(
                approved=False, gate=gate, reason=f"No evaluator registered for gate {gate.value}"
            )
        try:
            verdict = evaluator(context)
        except Exception as exc:  # a broken evaluator must deny, never approve
            logger.warning("gate %s evaluator failed; denying: %s", gate.value, exc)
            return GateDecision(
                approved=False,
                gate=gate,
                reason=f"Gate {gate.value} evaluator failed: {exc}",
                metadata={"error": type(exc).__name__},
            )
        if isinstance(verdict, GateDecision):
            if verdict.gate is gate:
                return verdict
            return GateDecision(
                approved=verdict.approved,
                gate=gate,
                reason=verdict.reason,
                transitions_stance_to=verdict.transitions_stance_to,
                metadata=verdict.metadata,
            )
        if isinstance(verdict, bool):
            word = "approved" if verdict else "denied"
            return GateDecision(approved=verdict, gate=gate, reason=f"Gate {gate.value} {word}")
        return GateDecision(
            approved=False,
            gate=gate,
            reason=f"Gate {gate.value} evaluator returned {type(verdict).__name__}, not a decision",
        )

    def passes(self, gate: GateType, context: Mapping[str, Any]) -> bool:
        """001 §4.2's bool: whether `gate` approves in `context`."""
        return self.attempt_gate(gate, context).approved

    # ── default evaluators that read the policy ────────────────────────────

    def _framing(self, context: Mapping[str, Any]) -> GateDecision:
        to_stance = _stance(context.get("to_stance"))
        gate = GateType.FRAMING
        if to_stance is Stance.SENSEMAKING:
            if context.get("reframe") is True:
                return _ok(gate, "A new or switched problem is framed from the start", to_stance)
            return _no(gate, "Returning to sensemaking needs a new or switched problem (reframe)")
        if context.get("problem_id") or context.get("problem_framed") is True:
            return _ok(gate, "The problem is framed", to_stance)
        turns = int(context.get("turns_in_stance") or 0)
        if turns >= self.policy.SENSEMAKING_MAX_TURNS:
            return _ok(
                gate,
                f"Sensemaking ran its {self.policy.SENSEMAKING_MAX_TURNS} turns",
                to_stance,
            )
        return _no(gate, "The problem is not framed yet")

    def _evaluation(self, context: Mapping[str, Any]) -> GateDecision:
        from_stance = _stance(context.get("from_stance"))
        to_stance = _stance(context.get("to_stance"))
        gate = GateType.EVALUATION
        if from_stance is Stance.EXECUTION:
            if context.get("delivered") is True:
                return _ok(gate, "Work was delivered; evaluate it", to_stance)
            if context.get("lease_expired") is True:
                return _ok(gate, "The commitment lease expired; evaluate what was done", to_stance)
            return _no(gate, "Nothing delivered to evaluate")
        if from_stance is Stance.EVALUATION:
            if context.get("evaluated") is True:
                return _ok(gate, "Evaluation finished", to_stance)
            turns = int(context.get("turns_in_stance") or 0)
            if turns >= self.policy.EVALUATION_MAX_TURNS:
                limit = self.policy.EVALUATION_MAX_TURNS
                return _ok(gate, f"Evaluation ran its {limit} turn(s)", to_stance)
            return _no(gate, "Evaluation has not run yet")
        return _no(gate, "The evaluation gate only leaves execution or evaluation")


def _commitment(context: Mapping[str, Any]) -> GateDecision:
    commitment = context.get("commitment")
    gate = GateType.COMMITMENT
    to_stance = _stance(context.get("to_stance"))
    if commitment is None:
        return _no(gate, "No active commitment")
    status = _field(commitment, "status")
    remaining = _field(commitment, "turns_remaining")
    if status != "active":
        return _no(gate, f"Commitment is {status}, not active")
    if not isinstance(remaining, int) or remaining <= 0:
        return _no(gate, "Commitment has no turns remaining")
    return _ok(gate, f"Active commitment with {remaining} turn(s) remaining", to_stance)


def _emergency(context: Mapping[str, Any]) -> GateDecision:
    to_stance = _stance(context.get("to_stance"))
    if context.get("emergency") is True:
        return _ok(GateType.EMERGENCY, "Emergency", to_stance)
    return _no(GateType.EMERGENCY, "No emergency")


def _write_approval(context: Mapping[str, Any]) -> GateDecision:
    decision = context.get("write_decision")
    if decision is not None and _field(decision, "approved") is True:
        reason = _field(decision, "reason")
        return _ok(GateType.WRITE_APPROVAL, str(reason or "Write approved"), None)
    return _no(GateType.WRITE_APPROVAL, "No approved write decision")


def _agent_approval(agent_gate: AgentApprovalGate) -> GateEvaluator:
    def evaluate(context: Mapping[str, Any]) -> GateDecision:
        proposal = context.get("proposal")
        stance = _stance(context.get("stance"))
        if proposal is None or stance is None:
            return _no(GateType.AGENT_APPROVAL, "Agent approval needs a proposal and a stance")
        return agent_gate.evaluate(proposal, stance, context.get("commitment"))

    return evaluate


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _stance(value: Any) -> Stance | None:
    if isinstance(value, Stance):
        return value
    if isinstance(value, str):
        try:
            return Stance(value)
        except ValueError:
            return None
    return None


def _ok(gate: GateType, reason: str, to_stance: Stance | None) -> GateDecision:
    return GateDecision(approved=True, gate=gate, reason=reason, transitions_stance_to=to_stance)


def _no(gate: GateType, reason: str) -> GateDecision:
    return GateDecision(approved=False, gate=gate, reason=reason)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Stance | GateType):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
