"""The StanceMachine (001 §4.1): four exclusive stances, changed only through gates.

Why stances: what the assistant may do depends on where the work is. Exploring a problem it
does not understand yet is a different mode from executing an agreed plan, and the actions each
mode allows differ (`ACTION_RULES`). A stance changes only through a gate whose evaluator
approves, and only along the pairs the gate is allowed to move (`GATE_TRANSITIONS`); everything
else is refused with a reason. Each attempt returns a `StanceTransition` whose `event()` is the
``stance_change`` record the caller appends to the decision ledger (001 §8.3). 001 §4.1's
``transition(...) -> bool`` is kept and is ``attempt(...).success``.

Allowed actions per stance, and why:

=============  ==============================================================================
SENSEMAKING    respond, ask, wait; delegate only for exploration or verification — the problem
               is not understood yet: gather and check, do not act on the world
DISCOVERY      respond, ask; delegate for exploration or decomposition; execute only research
               (exploration, decomposition) — momentum on finding out, no waiting
EXECUTION      respond, execute, delegate (any strategy or reducer), ask, wait — an agreed
               commitment is being carried out
EVALUATION     respond, ask, wait; delegate only for verification or a vote — judge what was
               delivered, do not produce more of it
=============  ==============================================================================

Which gate may move which pair:

=============  ==============================================================================
FRAMING        sensemaking → discovery | execution (problem framed); discovery | execution |
               evaluation → sensemaking (reframe for a new or switched problem)
COMMITMENT     sensemaking | discovery | evaluation → execution (a commitment is active)
EVALUATION     execution → evaluation (delivered, or lease expired); evaluation → sensemaking |
               execution (evaluation done)
EMERGENCY      any stance → execution | sensemaking
=============  ==============================================================================

Starting a session (`start_session`) is not a transition: it resets to the policy's
``NEW_SESSION_STANCE`` and is recorded as a ``stance_reset`` event.

State (stance, turns spent in it, when it was entered) lives in ``memory.db`` per agent class,
so every process sees the same stance.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hrm.focus.gates import GateController, GateDecision
from hrm.types import Clock, GateType, Stance, system_clock

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.reasoning.types import AgentBundleProposal, CandidateAction
    from hrm.storage.sqlite import Database

__all__ = [
    "ACTIONS",
    "ACTION_RULES",
    "GATE_TRANSITIONS",
    "StanceMachine",
    "StanceProposal",
    "StanceState",
    "StanceTransition",
    "action_purposes",
    "proposal_purposes",
    "propose_default",
]

ACTIONS = ("respond", "execute", "delegate", "ask", "wait")
"""The action types Reasoning may select (001 §3.6)."""

_ANY = None
ACTION_RULES: dict[Stance, dict[str, frozenset[str] | None]] = {
    Stance.SENSEMAKING: {
        "respond": _ANY,
        "ask": _ANY,
        "wait": _ANY,
        "delegate": frozenset({"exploration", "verification"}),
    },
    Stance.DISCOVERY: {
        "respond": _ANY,
        "ask": _ANY,
        "delegate": frozenset({"exploration", "decomposition"}),
        "execute": frozenset({"research", "exploration", "decomposition"}),
    },
    Stance.EXECUTION: {
        "respond": _ANY,
        "execute": _ANY,
        "delegate": _ANY,
        "ask": _ANY,
        "wait": _ANY,
    },
    Stance.EVALUATION: {
        "respond": _ANY,
        "ask": _ANY,
        "wait": _ANY,
        "delegate": frozenset({"verification", "vote"}),
    },
}
"""Stance → action → the purposes it is allowed for (None: any purpose)."""

_S, _D, _E, _V = Stance.SENSEMAKING, Stance.DISCOVERY, Stance.EXECUTION, Stance.EVALUATION
GATE_TRANSITIONS: dict[GateType, frozenset[tuple[Stance, Stance]]] = {
    GateType.FRAMING: frozenset({(_S, _D), (_S, _E), (_D, _S), (_E, _S), (_V, _S)}),
    GateType.COMMITMENT: frozenset({(_S, _E), (_D, _E), (_V, _E)}),
    GateType.EVALUATION: frozenset({(_E, _V), (_V, _S), (_V, _E)}),
    GateType.EMERGENCY: frozenset(
        (a, b) for a in Stance for b in (_E, _S) if a is not b
    ),
    GateType.WRITE_APPROVAL: frozenset(),
    GateType.AGENT_APPROVAL: frozenset(),
}
"""Gate → the (from, to) stance pairs it may move."""

_RESEARCH = re.compile(r"\b(?:research|investigat\w*|explor\w*|look(?:ing)? up|survey\w*)\b", re.I)

_COMPONENT = "focus.stance"
_MIGRATIONS = [
    """
    CREATE TABLE focus_stance (
        agent_class TEXT PRIMARY KEY,
        stance TEXT NOT NULL,
        turns_in_stance INTEGER NOT NULL DEFAULT 0,
        entered_at TEXT NOT NULL
    );
    """,
]


def proposal_purposes(proposal: AgentBundleProposal) -> frozenset[str]:
    """What an agent bundle is for: its strategy, plus ``vote`` for a VOTE reducer."""
    purposes = {proposal.strategy}
    if proposal.reducer.value == "vote":
        purposes.add("vote")
    return frozenset(purposes)


def action_purposes(candidate: CandidateAction) -> frozenset[str]:
    """What a candidate action is for: its bundle's purposes, or ``research`` by description."""
    if candidate.agent_proposal is not None:
        return proposal_purposes(candidate.agent_proposal)
    return _described_purposes(candidate.description)


@functools.lru_cache(maxsize=256)
def _described_purposes(description: str) -> frozenset[str]:
    """``research`` when the description says so (descriptions repeat: cached)."""
    return frozenset({"research"}) if _RESEARCH.search(description) else frozenset()


@dataclass(frozen=True, slots=True)
class StanceState:
    """The persisted stance of one agent class."""

    stance: Stance
    turns_in_stance: int
    entered_at: datetime | None
    """None until the stance was first written (a fresh stack)."""


@dataclass(frozen=True, slots=True)
class StanceProposal:
    """A stance the policy wants next, and the gate it must pass to get there."""

    to: Stance
    via_gate: GateType
    reason: str


@dataclass(frozen=True, kw_only=True)
class StanceTransition:
    """The outcome of one transition attempt (000 §4.1's shape; 001 reduces it to a bool)."""

    success: bool
    from_stance: Stance
    to_stance: Stance
    via_gate: GateType
    reason: str
    """Why the caller asked for it."""
    outcome: str
    """Why it happened or was refused."""
    timestamp: datetime
    gate_decision: GateDecision | None = None

    def event(self) -> dict[str, Any]:
        """The event to append: ``stance_change`` or ``stance_change_denied`` (001 §8.3)."""
        return {
            "event_type": "stance_change" if self.success else "stance_change_denied",
            "payload": {
                "from": self.from_stance.value,
                "to": self.to_stance.value,
                "via_gate": self.via_gate.value,
                "reason": self.reason,
                "outcome": self.outcome,
                "gate_decision": self.gate_decision.to_record() if self.gate_decision else None,
            },
        }


def propose_default(
    policy: PolicySurface,
    current: Stance,
    *,
    turns_in_stance: int,
    commitment_active: bool,
    delivered: bool,
    lease_expired: bool = False,
) -> StanceProposal | None:
    """The stance the policy's defaults want next (DoPeJar mode, 001 §12.1), or None to stay.

    Delivery in execution → POST_DELIVERY_STANCE; evaluation spent → MID_COMMITMENT_STANCE under
    a commitment, else NEW_SESSION_STANCE; a commitment outside execution → MID_COMMITMENT_STANCE;
    sensemaking for SENSEMAKING_MAX_TURNS → execution ("then transition to execution").
    """
    post_delivery = Stance(policy.POST_DELIVERY_STANCE)
    mid_commitment = Stance(policy.MID_COMMITMENT_STANCE)
    new_session = Stance(policy.NEW_SESSION_STANCE)
    if current is Stance.EXECUTION and (delivered or lease_expired) and current != post_delivery:
        why = "work delivered" if delivered else "commitment lease expired"
        return StanceProposal(post_delivery, GateType.EVALUATION, why)
    if current is Stance.EVALUATION and turns_in_stance >= policy.EVALUATION_MAX_TURNS:
        target = mid_commitment if commitment_active else new_session
        if target is not current:
            return StanceProposal(target, GateType.EVALUATION, "evaluation turns spent")
    exploring = current in (Stance.SENSEMAKING, Stance.DISCOVERY)
    if commitment_active and exploring and mid_commitment is not current:
        return StanceProposal(mid_commitment, GateType.COMMITMENT, "mid-commitment")
    if current is Stance.SENSEMAKING and turns_in_stance >= policy.SENSEMAKING_MAX_TURNS:
        return StanceProposal(Stance.EXECUTION, GateType.FRAMING, "sensemaking turns spent")
    return None


class StanceMachine:
    """The 4-state exclusive stance machine of ONE agent class (001 §4.1).

    Args:
        policy: Stance defaults and turn limits.
        store: The shared database holding the stance row.
        agent_class: The stack this stance belongs to.
        gates: The gate controller transitions go through (default evaluators if omitted).
        clock: "Now" for ``entered_at`` and event timestamps.
    """

    def __init__(
        self,
        policy: PolicySurface,
        store: Database,
        agent_class: str,
        *,
        gates: GateController | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.policy = policy
        self._db = store
        self.agent_class = agent_class
        self.gates = gates if gates is not None else GateController(policy)
        self._clock = clock
        self.last_transition: StanceTransition | None = None
        store.migrate(_COMPONENT, _MIGRATIONS)

    # ── reads ──────────────────────────────────────────────────────────────

    def state(self) -> StanceState:
        """Stance, turns spent in it, and when it was entered (new-session stance if unset)."""
        return self._db.cached(
            ("focus.stance", self.agent_class), self._read_state, table="focus_stance"
        )

    def _read_state(self) -> StanceState:
        row = self._db.one(
            "SELECT stance, turns_in_stance, entered_at FROM focus_stance WHERE agent_class = ?",
            (self.agent_class,),
        )
        if row is None:
            return StanceState(Stance(self.policy.NEW_SESSION_STANCE), 0, None)
        return StanceState(
            Stance(row["stance"]),
            int(row["turns_in_stance"]),
            datetime.fromisoformat(row["entered_at"]),
        )

    def get_current(self) -> Stance:
        """The current stance."""
        return self.state().stance

    def get_allowed_actions(self) -> list[str]:
        """The action types the current stance allows (some only for certain purposes)."""
        return list(ACTION_RULES[self.get_current()])

    def allows(
        self,
        action_type: str,
        purposes: frozenset[str] = frozenset(),
        *,
        stance: Stance | None = None,
    ) -> tuple[bool, str]:
        """Whether `stance` (default: current) allows `action_type` for `purposes`, and why."""
        stance = stance or self.get_current()
        rules = ACTION_RULES[stance]
        if action_type not in rules:
            return False, f"{stance.value} does not allow '{action_type}'"
        allowed = rules[action_type]
        if allowed is None or purposes & allowed:
            return True, f"{stance.value} allows '{action_type}'"
        wanted = ", ".join(sorted(purposes)) or "unspecified purpose"
        return False, (
            f"{stance.value} allows '{action_type}' only for {', '.join(sorted(allowed))},"
            f" not {wanted}"
        )

    # ── transitions ────────────────────────────────────────────────────────

    def transition(
        self,
        to_stance: Stance,
        reason: str,
        via_gate: GateType,
        context: Mapping[str, Any] | None = None,
    ) -> bool:
        """Attempt a transition through `via_gate` (001 §4.1); True when it happened.

        The full outcome, with its event, is in `last_transition`.
        """
        return self.attempt(to_stance, reason, via_gate, context).success

    def attempt(
        self,
        to_stance: Stance,
        reason: str,
        via_gate: GateType,
        context: Mapping[str, Any] | None = None,
    ) -> StanceTransition:
        """Attempt a transition through `via_gate` and return its outcome and event."""
        with self._db.transaction():
            current = self.state()
            now = self._clock()

            def refused(outcome: str, decision: GateDecision | None = None) -> StanceTransition:
                return StanceTransition(
                    success=False, from_stance=current.stance, to_stance=to_stance,
                    via_gate=via_gate, reason=reason, outcome=outcome, timestamp=now,
                    gate_decision=decision,
                )  # fmt: skip

            if to_stance is current.stance:
                result = refused(f"Already in {to_stance.value}")
            elif (current.stance, to_stance) not in GATE_TRANSITIONS.get(via_gate, frozenset()):
                result = refused(
                    f"Gate {via_gate.value} cannot move {current.stance.value} → {to_stance.value}"
                )
            else:
                gate_context = {
                    **(context or {}),
                    "from_stance": current.stance,
                    "to_stance": to_stance,
                    "turns_in_stance": current.turns_in_stance,
                }
                decision = self.gates.attempt_gate(via_gate, gate_context)
                if not decision.approved:
                    result = refused(decision.reason, decision)
                else:
                    self._write(to_stance, turns=0, entered_at=now)
                    result = StanceTransition(
                        success=True, from_stance=current.stance, to_stance=to_stance,
                        via_gate=via_gate, reason=reason, outcome=decision.reason, timestamp=now,
                        gate_decision=decision,
                    )  # fmt: skip
        self.last_transition = result
        return result

    def default_transition(
        self,
        turns_in_stance: int | None = None,
        commitment: object | None = None,
        delivered: bool = False,
        *,
        lease_expired: bool = False,
    ) -> StanceProposal | None:
        """The stance the policy wants next from the current one; it still has to pass its gate.

        Args:
            turns_in_stance: Turns spent in the current stance (default: the stored count).
            commitment: The active commitment, if any (only its presence matters here).
            delivered: Work was delivered this turn.
            lease_expired: The commitment's lease ran out this turn.
        """
        state = self.state()
        return propose_default(
            self.policy,
            state.stance,
            turns_in_stance=state.turns_in_stance if turns_in_stance is None else turns_in_stance,
            commitment_active=commitment is not None,
            delivered=delivered,
            lease_expired=lease_expired,
        )

    def record_turn(self) -> int:
        """Count one processed turn in the current stance; returns the new count.

        Bookkeeping every turn does: the count is `Database.defer`red to the turn's next
        transaction (at once inside one), written as an increment of the stored count for
        the same stance, so a stance another process set meanwhile is not overwritten.
        """
        state = self.state()
        turns = state.turns_in_stance + 1
        entered_at = state.entered_at or self._clock()
        self._db.defer(
            "INSERT INTO focus_stance (agent_class, stance, turns_in_stance, entered_at)"
            " VALUES (?, ?, 1, ?) ON CONFLICT (agent_class) DO UPDATE SET"
            " turns_in_stance = focus_stance.turns_in_stance + 1"
            " WHERE focus_stance.stance = excluded.stance",
            (self.agent_class, state.stance.value, entered_at.isoformat()),
            table="focus_stance",
            leaves={
                ("focus.stance", self.agent_class): StanceState(state.stance, turns, entered_at)
            },
        )
        return turns

    def start_session(self, reason: str = "new session") -> dict[str, Any]:
        """Reset to the policy's NEW_SESSION_STANCE; returns the ``stance_reset`` event.

        A session boundary is not a transition between stances, so no gate is involved.
        """
        to_stance = Stance(self.policy.NEW_SESSION_STANCE)
        with self._db.transaction():
            before = self.state().stance
            self._write(to_stance, turns=0, entered_at=self._clock())
        return {
            "event_type": "stance_reset",
            "payload": {"from": before.value, "to": to_stance.value, "reason": reason},
        }

    def _write(self, stance: Stance, *, turns: int, entered_at: datetime) -> None:
        self._db.execute(
            "INSERT INTO focus_stance (agent_class, stance, turns_in_stance, entered_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (agent_class) DO UPDATE SET"
            " stance = excluded.stance, turns_in_stance = excluded.turns_in_stance,"
            " entered_at = excluded.entered_at",
            (self.agent_class, stance.value, turns, entered_at.isoformat()),
        )
        self._db.remember(
            ("focus.stance", self.agent_class),
            StanceState(stance, turns, entered_at),
            table="focus_stance",
        )
