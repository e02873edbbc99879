"""FocusHRM (001 §4, §12.7): arbitration, stance, commitments and gates for one turn.

`process_turn` runs 001 §12.7: the kernel arbitrates the input against the problem registry,
then Focus acts on the disposition —

* **ask**: the question goes back to the person and NOTHING else changes (no problem created,
  no commitment tick, no stance turn counted);
* **switch**: the candidate becomes the active problem (persisted under the arbiter's id when
  new; the previous active problem is paused), a commitment on another problem is abandoned,
  and the stance moves — to execution through the EMERGENCY gate for an emergency, otherwise
  back to sensemaking through the FRAMING gate (a new problem is framed first);
* **queue**: the candidate is persisted as queued (progress is recorded on it: the person
  talked about it) and work stays on the active problem, which did not progress (D51);
* **stay**: progress is recorded on the active problem.

Then the turn is counted: the commitment ticks (its last turn expires it), the stance counts a
turn, and the policy's default transition (`StanceMachine.default_transition`) is attempted
through its gate. Every change is an event in `FocusResult.events` for the caller to append to
the decision ledger; Focus itself writes only its own tables, all in one transaction.

`govern` is the other half of Focus: the single action Reasoning selected must be allowed by
the stance, and a delegation must pass the AgentApprovalGate. A denied action falls back to
`SelectedAction.fallback`, then to ``respond``, then ``ask`` — never silently: every denial is
a reason in the outcome.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from hrm.focus.approval import AgentApprovalGate
from hrm.focus.commitments import Commitment, CommitmentManager
from hrm.focus.gates import GateController, GateDecision
from hrm.focus.stance import StanceMachine, action_purposes
from hrm.governance.arbiter import ArbitrationDecision, ArbitrationDisposition, FocusState
from hrm.governance.kernel import GovernanceKernel
from hrm.governance.problems import ProblemRegistry, ProblemStatus
from hrm.reasoning.types import CandidateAction
from hrm.types import Clock, GateType, Stakes, Stance, TurnInput, system_clock

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from hrm.config import PolicySurface
    from hrm.governance.signals import DerivedSignals
    from hrm.reading.types import Cues
    from hrm.reasoning.types import InputClassification, SelectedAction
    from hrm.storage.sqlite import Database

__all__ = ["FocusChange", "FocusHRM", "FocusResult", "GovernanceOutcome"]


def _event(event_type: str, **payload: Any) -> dict[str, Any]:
    return {"event_type": event_type, "payload": payload}


@dataclass(frozen=True, kw_only=True)
class FocusResult:
    """What Focus did with one turn (001 §12.7), with the events that record it."""

    action: Literal["ask_user", "continue"]
    message: str
    """The question for the person (ask), or a one-line summary (continue)."""
    arbitration: ArbitrationDecision
    switched_to: str | None = None
    """The problem id now active, when the turn switched."""
    queued: str | None = None
    """The problem id queued by this turn."""
    stance_before: Stance
    stance_after: Stance
    commitment_before: Commitment | None = None
    commitment_after: Commitment | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    """``{"event_type", "payload"}`` records, in order, for the decision ledger."""
    arbitration_record: dict[str, Any] = field(default_factory=dict)
    """``arbitration.to_record()``, built once for its event and the decision record."""


@dataclass(frozen=True, kw_only=True)
class FocusChange:
    """The result of a Focus operation outside a turn (commit, delivery)."""

    stance: Stance
    commitment: Commitment | None
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class GovernanceOutcome:
    """Focus's verdict on Reasoning's selected action."""

    allowed_action: CandidateAction
    """The action to carry out: the primary, its fallback, or a synthesized respond/ask."""
    denied: list[str] = field(default_factory=list)
    """Why each refused candidate was refused, in order."""
    gate_decisions: list[GateDecision] = field(default_factory=list)
    fallback_used: bool = False
    batch: list[CandidateAction] | None = None
    """The micro-batch, when every member passed with the primary."""
    interrupt: str | None = None
    """An INTERRUPT_CONDITIONS entry the caller should surface (e.g. high_stakes_irreversible)."""
    events: list[dict[str, Any]] = field(default_factory=list)


class FocusHRM:
    """Focus for ONE agent class: arbitration, stance, commitments and action governance.

    Args:
        kernel: The governance kernel (signals, arbiter).
        problems: The agent class's problem registry.
        commitments: Its commitment manager.
        stance: Its stance machine (its gate controller is used for every gate).
        approval: The agent approval gate for delegations; without one, delegation is denied.
        db: The shared database; when given, each turn's writes commit together.
        clock: "Now" for events.
    """

    def __init__(
        self,
        kernel: GovernanceKernel,
        problems: ProblemRegistry,
        commitments: CommitmentManager,
        stance: StanceMachine,
        *,
        approval: AgentApprovalGate | None = None,
        db: Database | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.kernel = kernel
        self.problem_registry = problems
        self.commitments = commitments
        self.stance = stance
        self.gates: GateController = stance.gates
        self.approval = approval
        if approval is not None and GateType.AGENT_APPROVAL not in self.gates.evaluators:
            gate = approval
            self.gates.register_gate(
                GateType.AGENT_APPROVAL,
                lambda ctx: gate.evaluate(ctx["proposal"], ctx["stance"], ctx.get("commitment")),
            )
        self._db = db
        self._clock = clock

    @classmethod
    def open(
        cls,
        db: Database,
        agent_class: str,
        *,
        policy: PolicySurface | None = None,
        kernel: GovernanceKernel | None = None,
        agent_registry: Callable[[str], bool] | Collection[str] = (),
        max_agents: int | None = None,
        max_commitment_turns: int = 10,
        clock: Clock = system_clock,
    ) -> FocusHRM:
        """Build Focus and its components over `db` for `agent_class` (config values injected)."""
        kernel = kernel or GovernanceKernel.create(policy, clock=clock)
        policy = kernel.policy
        approval = AgentApprovalGate(policy, agent_registry, max_agents=max_agents)
        gates = GateController(policy, agent_gate=approval)
        return cls(
            kernel,
            ProblemRegistry(db, agent_class, clock=clock, priority_scale=policy.PRIORITY_SCALE),
            CommitmentManager(db, agent_class, clock=clock, max_turns=max_commitment_turns),
            StanceMachine(policy, db, agent_class, gates=gates, clock=clock),
            approval=approval,
            db=db,
            clock=clock,
        )

    # ── turns ──────────────────────────────────────────────────────────────

    def focus_state(self, turn_input: TurnInput) -> FocusState:
        """Focus as arbitration sees it for this turn."""
        return FocusState(
            context=turn_input.context,
            stance=self.stance.get_current(),
            commitment=self.commitments.get_active(),
        )

    def process_turn(
        self,
        turn_input: TurnInput,
        signals: DerivedSignals | None = None,
        *,
        decided: ArbitrationDecision | None = None,
        cues: Cues | None = None,
    ) -> FocusResult:
        """Arbitrate one input and move focus accordingly (001 §12.7).

        ``decided`` is an arbitration the person made (`answered`): it is applied as the
        arbiter's would be, and the arbiter is not asked. ``cues`` are what the reading stage
        read in the input (`hrm.reading`); without them the arbiter reads them itself.
        """
        stance_before = self.stance.get_current()
        commitment_before = self.commitments.get_active()
        if decided is not None:
            arbitration = decided
        else:
            state = FocusState(
                context=turn_input.context, stance=stance_before, commitment=commitment_before
            )
            arbitration = self.kernel.arbitrate(
                turn_input, state, self.problem_registry, signals=signals, cues=cues
            )
        arbitration_record = arbitration.to_record()
        events = [_event("arbitration", **arbitration_record)]
        if arbitration.disposition is ArbitrationDisposition.ASK:
            return FocusResult(
                action="ask_user",
                message=self._question(arbitration),
                arbitration=arbitration,
                stance_before=stance_before,
                stance_after=stance_before,
                commitment_before=commitment_before,
                commitment_after=commitment_before,
                events=events,
                arbitration_record=arbitration_record,
            )
        # A switch, a newly queued problem or an expiring lease changes several rows that
        # must land together. Otherwise a turn only stamps progress, ticks a lease with turns
        # to spare and counts the stance turn: bookkeeping that rides with the turn's next
        # transaction (`Database.defer`); a stance move it triggers takes a transaction of its
        # own that carries the bookkeeping first.
        moves = _changes_rows(arbitration) or (
            commitment_before is not None and commitment_before.turns_remaining <= 1
        )
        with self._atomic() if moves else contextlib.nullcontext():
            switched_to, queued = self._apply(arbitration, events)
            commitment_after = self._count_turn(turn_input, events)
        stance_after = self.stance.get_current()
        return FocusResult(
            action="continue",
            message=arbitration.reason,
            arbitration=arbitration,
            switched_to=switched_to,
            queued=queued,
            stance_before=stance_before,
            stance_after=stance_after,
            commitment_before=commitment_before,
            commitment_after=commitment_after,
            events=events,
            arbitration_record=arbitration_record,
        )

    def answered(
        self, held: dict[str, Any], choice: str, *, asked: bool = True
    ) -> ArbitrationDecision:
        """The arbitration the person chose when asked: switch to the problem, or queue it.

        ``held`` is what the turn kept of the question (`hrm.turn.switch.held_question`). The
        problem asked about is the one switched to or queued: the same one when it still
        exists and is not resolved, else a new one with its title (it may have been resolved,
        or, when the question was about a new topic, never saved). ``asked=False``: no
        question was pending; the person said "switch" after hrm said it queued the topic.
        """
        registry = self.problem_registry
        known = registry.get(held["problem_id"]) if held.get("problem_id") else None
        if known is not None and known.status is not ProblemStatus.RESOLVED:
            candidate, new = known, False
        else:
            candidate, new = registry.build(
                str(held.get("title") or "untitled"),
                description=str(held.get("description") or ""),
                priority=int(held.get("priority") or 5),
                problem_id=None if known is not None else held.get("problem_id"),
            ), True
        active = registry.get_active()
        switch = choice == "switch"
        return ArbitrationDecision(
            active_problem_id=active.id if active else None,
            disposition=ArbitrationDisposition.SWITCH if switch else ArbitrationDisposition.QUEUE,
            preempt_score=float(held.get("score") or 0.0),
            reason=(
                "The person chose to switch to the topic just queued" if not asked
                else "The person chose to switch when asked" if switch
                else "The person chose to queue it when asked"
            ),
            candidate_problem_id=candidate.id,
            candidate=candidate,
            is_new_candidate=new,
            candidate_match="the person's answer",
            explicit_request=True,
        )

    def stay(self, reason: str) -> ArbitrationDecision:
        """An arbitration the person's words decided without naming a problem: stay."""
        active = self.problem_registry.get_active()
        return ArbitrationDecision(
            active_problem_id=active.id if active else None,
            disposition=ArbitrationDisposition.STAY,
            preempt_score=0.0,
            reason=reason,
            candidate_problem_id=active.id if active else None,
            candidate=active,
            candidate_match="the person's words",
        )

    def commit(
        self,
        description: str,
        turns: int,
        problem_id: str | None = None,
        *,
        holds_focus: bool = False,
    ) -> FocusChange:
        """Commit to the active (or given) problem for `turns`, then enter execution.

        `holds_focus`: the person gave the length, so passing topics stay with it (D56).

        Raises:
            HRMError: VALIDATION_FAILED when there is no problem to commit to.
        """
        from hrm.errors import HRMError

        target = problem_id or getattr(self.problem_registry.get_active(), "id", None)
        if target is None:
            raise HRMError.validation_failed(
                "No active problem to commit to; pass problem_id", field="problem_id"
            )
        events: list[dict[str, Any]] = []
        with self._atomic():
            previous = self.commitments.get_active()
            commitment = self.commitments.create(
                target, description, turns, holds_focus=holds_focus
            )
            if previous is not None:
                reason = f"superseded by {commitment.id}"
                events.append(_event("commitment_abandoned", id=previous.id, reason=reason))
            events.append(_event("commitment_created", **commitment.to_record()))
            mid = Stance(self.kernel.policy.MID_COMMITMENT_STANCE)
            if self.stance.get_current() is not mid:
                move = self.stance.attempt(
                    mid, "commitment created", GateType.COMMITMENT, {"commitment": commitment}
                )
                events.append(move.event())
        return FocusChange(
            stance=self.stance.get_current(), commitment=commitment, events=events
        )

    def record_delivery(self, *, complete: bool = True) -> FocusChange:
        """Work was delivered: complete the commitment (optional) and move to evaluation.

        A lease whose length the person gave ("focus on the parser for the next 3 turns",
        D56) runs its turns: the first answer delivered by agents or a plan does not end it,
        and the stance stays for the work it holds (D72). Its expiry evaluates, as any does.
        """
        events: list[dict[str, Any]] = []
        with self._atomic():
            active = self.commitments.get_active()
            if active is not None and active.holds_focus:
                return FocusChange(stance=self.stance.get_current(), commitment=active, events=[])
            if complete and active is not None and self.commitments.complete():
                events.append(_event("commitment_completed", id=active.id))
            target = Stance(self.kernel.policy.POST_DELIVERY_STANCE)
            if self.stance.get_current() is not target:
                move = self.stance.attempt(
                    target, "work delivered", GateType.EVALUATION, {"delivered": True}
                )
                events.append(move.event())
        return FocusChange(
            stance=self.stance.get_current(),
            commitment=self.commitments.get_active(),
            events=events,
        )

    # ── governing the selected action ──────────────────────────────────────

    def govern(
        self, selected_action: SelectedAction, classification: InputClassification
    ) -> GovernanceOutcome:
        """Check Reasoning's action against stance and gates; fall back, never silently.

        Order tried: the primary, `SelectedAction.fallback`, then a synthesized ``respond``,
        then ``ask``. An execute or delegate on an irreversible, high-stakes input also needs
        an active commitment (the COMMITMENT gate); without one the outcome names the
        ``high_stakes_irreversible`` interrupt so the caller can surface it.
        """
        stance = self.stance.get_current()
        commitment = self.commitments.get_active()
        denied: list[str] = []
        decisions: list[GateDecision] = []
        interrupt: str | None = None
        chain = [selected_action.primary]
        if selected_action.fallback is not None:
            chain.append(selected_action.fallback)
        chain += [_synthesized("respond"), _synthesized("ask")]
        allowed = chain[-1]
        for candidate in chain:
            reasons, gate_decisions, needs = self._check(
                candidate, stance, commitment, classification
            )
            decisions += gate_decisions
            interrupt = interrupt or needs
            if not reasons:
                allowed = candidate
                break
            denied += [f"{candidate.action_type} ({candidate.id}): {r}" for r in reasons]
        batch = self._govern_batch(selected_action, allowed, stance, commitment, classification)
        if selected_action.is_batch() and batch is None:
            denied.append("micro-batch dropped: not every member passed")
        fallback_used = allowed is not selected_action.primary
        events = [
            _event(
                "action_governed",
                primary=selected_action.primary.id,
                primary_type=selected_action.primary.action_type,
                allowed=allowed.id,
                allowed_type=allowed.action_type,
                stance=stance.value,
                denied=list(denied),
                fallback_used=fallback_used,
                interrupt=interrupt,
            ),
            *(_event("gate_decision", **d.to_record()) for d in decisions),
        ]
        return GovernanceOutcome(
            allowed_action=allowed,
            denied=denied,
            gate_decisions=decisions,
            fallback_used=fallback_used,
            batch=batch,
            interrupt=interrupt if fallback_used else None,
            events=events,
        )

    # ── internals ──────────────────────────────────────────────────────────

    @contextlib.contextmanager
    def _atomic(self) -> Iterator[None]:
        if self._db is None:
            yield
            return
        with self._db.transaction():
            yield

    @staticmethod
    def _question(arbitration: ArbitrationDecision) -> str:
        candidate = arbitration.candidate
        topic = f"'{candidate.title}'" if candidate else "this"
        return (
            f"This looks like a different problem ({topic}). Interrupt the current work to"
            " switch to it, or queue it for later? Say “switch” or “queue”."
            f" (score: {arbitration.preempt_score:.2f})"
        )

    def _apply(
        self,
        arbitration: ArbitrationDecision,
        events: list[dict[str, Any]],
    ) -> tuple[str | None, str | None]:
        """Persist the disposition; returns (switched_to, queued)."""
        candidate = arbitration.candidate
        disposition = arbitration.disposition
        if disposition is ArbitrationDisposition.SWITCH and candidate is not None:
            previous = self.problem_registry.get_active()
            if arbitration.is_new_candidate:
                self.problem_registry.add(replace(candidate, status=ProblemStatus.ACTIVE))
            else:
                self.problem_registry.set_active(candidate.id)
            events.append(
                _event(
                    "problem_switched",
                    to=candidate.id,
                    title=candidate.title,
                    paused=previous.id if previous else None,
                    created=arbitration.is_new_candidate,
                )
            )
            self._leave_commitment_for(candidate.id, events)
            self._move_stance_for_switch(candidate.id, arbitration.emergency, events)
            return candidate.id, None
        if disposition is ArbitrationDisposition.QUEUE and candidate is not None:
            if arbitration.is_new_candidate:
                self.problem_registry.add(replace(candidate, status=ProblemStatus.QUEUED))
            else:
                if candidate.status is not ProblemStatus.QUEUED:
                    self.problem_registry.queue(candidate.id)
                # The person talked about it; the active problem did not progress, and its
                # staleness is what lets a later input ask to switch (D51).
                self.problem_registry.record_progress(candidate.id)
                events.append(_event("problem_progress", id=candidate.id))
            events.append(_event("problem_queued", id=candidate.id, title=candidate.title))
            return None, candidate.id
        self._progress_active(events)
        return None, None

    def _progress_active(self, events: list[dict[str, Any]]) -> None:
        active = self.problem_registry.get_active()
        if active is not None:
            self.problem_registry.record_progress(active.id)
            events.append(_event("problem_progress", id=active.id))

    def _leave_commitment_for(self, problem_id: str, events: list[dict[str, Any]]) -> None:
        active = self.commitments.get_active()
        if active is not None and active.problem_id != problem_id:
            reason = f"switched to problem {problem_id}"
            self.commitments.abandon(reason)
            events.append(_event("commitment_abandoned", id=active.id, reason=reason))

    def _move_stance_for_switch(
        self, problem_id: str, emergency: bool, events: list[dict[str, Any]]
    ) -> None:
        current = self.stance.get_current()
        if emergency:
            if current is not Stance.EXECUTION:
                move = self.stance.attempt(
                    Stance.EXECUTION, "emergency switch", GateType.EMERGENCY, {"emergency": True}
                )
                events.append(move.event())
            return
        if current is not Stance.SENSEMAKING:
            move = self.stance.attempt(
                Stance.SENSEMAKING,
                f"switched to problem {problem_id}",
                GateType.FRAMING,
                {"reframe": True, "problem_id": problem_id},
            )
            events.append(move.event())

    def _count_turn(
        self, turn_input: TurnInput, events: list[dict[str, Any]]
    ) -> Commitment | None:
        """Tick the lease, count the stance turn, and attempt the policy's default move."""
        before = self.commitments.get_active()
        after = self.commitments.tick()
        lease_expired = before is not None and after is None
        if before is not None:
            if after is None:
                events.append(_event("commitment_expired", id=before.id))
            else:
                events.append(
                    _event("commitment_tick", id=after.id, turns_remaining=after.turns_remaining)
                )
        self.stance.record_turn()
        metadata = turn_input.metadata or {}
        delivered = metadata.get("delivered") is True
        proposal = self.stance.default_transition(
            commitment=after, delivered=delivered, lease_expired=lease_expired
        )
        if proposal is not None:
            active = self.problem_registry.get_active()
            move = self.stance.attempt(
                proposal.to,
                proposal.reason,
                proposal.via_gate,
                {
                    "problem_id": active.id if active else None,
                    "commitment": after,
                    "delivered": delivered,
                    "lease_expired": lease_expired,
                    "evaluated": metadata.get("evaluated") is True,
                },
            )
            events.append(move.event())
        return after

    def _check(
        self,
        candidate: CandidateAction,
        stance: Stance,
        commitment: Commitment | None,
        classification: InputClassification,
    ) -> tuple[list[str], list[GateDecision], str | None]:
        """(denial reasons, gate decisions, interrupt) for one candidate; no reasons = allowed."""
        purposes = action_purposes(candidate)
        ok, why = self.stance.allows(candidate.action_type, purposes, stance=stance)
        if not ok:
            return [why], [], None
        decisions: list[GateDecision] = []
        acts = candidate.action_type in ("execute", "delegate")
        if acts and classification.irreversible and classification.stakes is Stakes.HIGH:
            decision = self.gates.attempt_gate(GateType.COMMITMENT, {"commitment": commitment})
            decisions.append(decision)
            if not decision.approved:
                why = f"irreversible high-stakes work needs a commitment: {decision.reason}"
                return [why], decisions, "high_stakes_irreversible"
        if candidate.action_type == "delegate":
            if candidate.agent_proposal is None:
                return ["delegate without an agent bundle proposal"], decisions, None
            decision = self.gates.attempt_gate(
                GateType.AGENT_APPROVAL,
                {"proposal": candidate.agent_proposal, "stance": stance, "commitment": commitment},
            )
            decisions.append(decision)
            if not decision.approved:
                return [decision.reason], decisions, None
        return [], decisions, None

    def _govern_batch(
        self,
        selected: SelectedAction,
        allowed: CandidateAction,
        stance: Stance,
        commitment: Commitment | None,
        classification: InputClassification,
    ) -> list[CandidateAction] | None:
        if not selected.is_batch() or allowed is not selected.primary or selected.batch is None:
            return None
        for member in selected.batch:
            reasons, _, _ = self._check(member, stance, commitment, classification)
            if reasons:
                return None
        return list(selected.batch)


def _changes_rows(arbitration: ArbitrationDecision) -> bool:
    """Whether applying `arbitration` writes the problem registry (see `FocusHRM._apply`)."""
    disposition, candidate = arbitration.disposition, arbitration.candidate
    if disposition is ArbitrationDisposition.SWITCH:
        return candidate is not None
    if disposition is ArbitrationDisposition.QUEUE and candidate is not None:
        return arbitration.is_new_candidate or candidate.status is not ProblemStatus.QUEUED
    return False


def _synthesized(action_type: Literal["respond", "ask"]) -> CandidateAction:
    description = {
        "respond": "Answer directly instead of the denied action",
        "ask": "Ask the person how to proceed",
    }[action_type]
    return CandidateAction(
        id=f"focus_fallback_{action_type}",
        action_type=action_type,
        description=description,
        source="focus",
    )
