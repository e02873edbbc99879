"""One turn from input to ledger: opening it, running the steps (`hrm.turn.loop`), degrading
when the supervisor fails, and writing the turn's events and decision record to HO2m in one
locked append (ARCHITECTURE §3)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hrm.errors import ErrorCode, HRMError
from hrm.tracing import get_tracer
from hrm.turn.context import Outcome, TurnContext
from hrm.turn.loop import run_steps
from hrm.turn.records import DecisionRecord, TurnResult, jsonable
from hrm.turn.state import RECENT_TURNS, clip, recent_exchange, shown
from hrm.types import HRMContext, TurnInput

if TYPE_CHECKING:
    from hrm.storage.ledger import LedgerRecord
    from hrm.turn.context import TurnServices
    from hrm.turn.session import Sessions
    from hrm.types import Clock

__all__ = ["IN_THE_TURN_RECORD", "TurnRunner"]

logger = logging.getLogger(__name__)

_STORED_ONCE = frozenset({"attention_state", "arbitration"})
"""Decision-record fields stored only as the turn record's HO2m fields (D24)."""

IN_THE_TURN_RECORD = frozenset({
    "arbitration", "problem_progress", "problem_queued", "action_governed", "gate_decision",
    "escalation", "deescalation", "pattern_created", "pattern_strengthened", "pattern_weakened",
})
"""Events a turn does not append as records of their own: each only repeats a part of the
`turn` record appended with it — arbitration and what its disposition did to the problems
(``arbitration_outcomes``: a queue names the candidate queued and stamped, a stay stamps
the active problem it names), what Focus allowed
(``decision.governance`` and ``decision.selected``), the gates (``decision.gate_decisions``),
escalations (``escalation_events``), the patterns learning changed (``decision.learning``).
Nothing reads them apart from it; every other event is still a record, since readers look
for those by kind (D331)."""


class TurnRunner:
    """Runs the turns of one stack; `HRM.turn` calls `run` under its locks."""

    def __init__(self, services: TurnServices, sessions: Sessions, clock: Clock) -> None:
        self.services = services
        self.sessions = sessions
        self._clock = clock
        self.json_repairs = 0
        """Turns whose records held a value JSON cannot (stored converted; see `_append`)."""
        self._consolidation_checked: str | None = None
        """The session this process last looked for ended sessions in (D286)."""

    def run(self, text: str, source: str, priority: int, metadata: dict[str, Any]) -> TurnResult:
        sessions, stack = self.sessions, self.services.stack
        sessions.refresh()
        sessions.roll_over_if_idle()
        ended = self._ended_sessions()
        tracer = get_tracer()
        state = sessions.state
        number = state.turn_number + 1
        events: list[tuple[str, dict[str, Any]]] = []
        work_orders: list[dict[str, Any]] = []
        stack.work_order_sink = work_orders
        record = DecisionRecord(
            turn=number, session_id=state.session_id, agent_class=sessions.agent_class,
            trace_id=tracer.generate_id("hrm"), input_summary=clip(text, 200),
        )  # fmt: skip

        def event(kind: str, /, **payload: Any) -> None:
            events.append((kind, payload))  # JSON-ready parts; the ledger copies (`_append`)

        self._consolidate(ended, record, event)

        hctx = self._context(number)
        turn_input = TurnInput(text=text, timestamp=self._clock(), context=hctx, source=source,
                               priority=priority, metadata=metadata)  # fmt: skip
        ctx = TurnContext(services=self.services, state=state, record=record,
                          turn_input=turn_input, event=event, tracer=tracer)  # fmt: skip
        interrupted: KeyboardInterrupt | None = None
        # Whole, not cut here: the tracer scrubs before it cuts (a cut secret goes unseen).
        with tracer.span("pipeline", "turn", "HRM", input_data=text) as span:
            try:
                outcome = run_steps(ctx)
            except KeyboardInterrupt as stop:
                # The person stopped the turn (Ctrl-C): record how far it got, then let the
                # interrupt through, so a stopped answer is a recorded turn, not a lost one.
                interrupted = stop
                record.notes.append("interrupted by the person")
                event("turn_interrupted")
                outcome = Outcome("The turn was interrupted before it finished.", "interrupted")
            except Exception as exc:
                outcome = self._degrade(exc, turn_input, record, event)
            span.set_output(outcome.response)
        # As read: a step that took intents out of the reading (``correct``) recorded it first.
        record.reading = record.reading or ctx.reading.to_record()
        record.work_orders = list(work_orders)
        stack.work_order_sink = None
        self._store_bookkeeping(record)
        stored = self._record(text, source, outcome, record, hctx, events)
        stack.end_turn()
        if interrupted is not None:
            raise interrupted
        return TurnResult(response=outcome.response, action=outcome.action, decision=record,
                          asked=outcome.asked, record=stored)  # fmt: skip

    def _ended_sessions(self) -> list[str]:
        """The sessions that ended with their learning not yet consolidated: looked for once
        per session a process serves, so a turn of a running session pays nothing (D286)."""
        session = self.sessions.state.session_id
        if session == self._consolidation_checked:
            return []
        self._consolidation_checked = session
        from hrm.learning.consolidation import pending_sessions

        try:
            return pending_sessions(self.services.stack.feedback, session)
        except HRMError:
            logger.warning("could not list the sessions to consolidate", exc_info=True)
            return []

    def _consolidate(self, ended: list[str], record: DecisionRecord, event: Any) -> None:
        """Session end closes the learning loop: analyse, generalise, fill synthesis (D286).
        Its events go into this turn's record, so /why shows what the last session taught;
        a failure is logged and noted, never the turn's end."""
        if not ended:
            return
        from hrm.learning.consolidation import consolidate_session

        stack = self.services.stack
        for session in ended:
            try:
                done = consolidate_session(stack.feedback, stack.bus, session, clock=self._clock)
            except HRMError as exc:
                logger.warning("consolidating session %s failed: %s", session, exc.message)
                # The record belongs to this turn's session; the one consolidated is named apart.
                event("consolidation_failed", consolidated_session_id=session, error=exc.message)
                continue
            record.learning.extend(done.events)
            event("session_consolidated", consolidated_session_id=session, merged=len(done.merged),
                  synthesized=len(done.synthesized))

    def _degrade(
        self, exc: Exception, turn_input: TurnInput, record: DecisionRecord, event: Any
    ) -> Outcome:
        """The supervisor (HO2) failed: degrade to a direct model call through the gateway,
        recorded in HO1m (004 §8) — never silent."""
        error = exc if isinstance(exc, HRMError) else HRMError.internal(
            f"{type(exc).__name__}: {exc}"
        )
        if not isinstance(exc, HRMError):
            logger.exception("supervisor failed; degrading to a direct model call")
        from hrm.stacks.lifecycle import degrade

        response, degradation = degrade(self.services.stack, turn_input, error)
        record.notes.append(f"supervisor failed ({error.code.value}); degraded to a "
                            "direct model call")  # fmt: skip
        event("turn_degraded", error=error.to_dict(), degradation_seq=degradation.get("seq"))
        return Outcome(response, "degraded")

    def _record(
        self,
        text: str,
        source: str,
        outcome: Outcome,
        record: DecisionRecord,
        hctx: HRMContext,
        events: list[tuple[str, dict[str, Any]]],
    ) -> LedgerRecord:
        """Append the turn's events and its ``turn`` record (with the state) to HO2m; returns
        the ``turn`` record as stored.

        The turn record carries what a ``turn_started`` event used to repeat (the input, its
        length, where it came from): one record less a turn, and nothing read it (D315).
        """
        sessions, stack = self.sessions, self.services.stack
        state, number = sessions.state, record.turn
        state.turn_number = number
        state.last_at = self._clock().isoformat()
        kept = _kept(record.writes)
        if kept is not None:
            state.last_kept = {"key": kept, "turn": number}
        response = outcome.response
        exchange = recent_exchange(text, len(text), response, len(response), outcome.action,
                                   outcome.kind, hctx.topic_id)  # fmt: skip
        state.recent = [*state.recent, exchange][-RECENT_TURNS:]
        turn_record = {
            **stack.ho2m_fields(
                work_orders=record.work_orders,
                arbitration=record.arbitration,
                escalations=[step.to_record() for step in record.escalations],
                attention_state=record.attention_state,
                meta_episodes=_meta_episodes(record),
            ),
            "turn": number,
            "input": clip(text),
            "input_length": len(text),
            "source": source,
            "response": clip(response),
            "response_length": len(response),
            "action": outcome.action,
            "asked": outcome.asked,
            # What the exchange was about, for the recent turns a new process rebuilds (D80)
            # and the turns read back after a detour (D86): only an exchange the model is
            # shown names its topic, so that read parses no other.
            **({"kind": outcome.kind} if outcome.kind is not None else {}),
            **({"topic": hctx.topic_id} if hctx.topic_id is not None and shown(exchange) else {}),
            # attention_state and arbitration are stored once, as the HO2m fields (D24).
            "decision": record.fields(omit=_STORED_ONCE),
            "state": state.to_dict(),
        }
        items = [
            (kind, {"session_id": state.session_id, "agent_class": sessions.agent_class,
                    "turn": number, **payload})
            for kind, payload in events
            if kind not in IN_THE_TURN_RECORD
        ]  # fmt: skip
        items.append(("turn", turn_record))
        written = self._append(number, items)
        # Our own append is not a change by another process; one that came after it is.
        sessions.mark(written[-1].seq, self.services.decisions.appended_end)
        return written[-1]

    def _store_bookkeeping(self, record: DecisionRecord) -> None:
        """Commit Focus's deferred bookkeeping if no transaction of the turn carried it.

        The turn's outcome transaction usually does; a degraded turn may end without one.
        Failing to store a progress stamp or a stance count must not lose the turn: it is
        dropped and said in the record.
        """
        db = self.services.db
        if not db.has_deferred:
            return
        try:
            db.flush_deferred()
        except HRMError as exc:
            db.discard_deferred()
            record.notes.append(
                f"focus bookkeeping (progress stamp, stance turn) not stored: {exc.message}"
            )

    def _append(
        self, number: int, items: list[tuple[str, dict[str, Any]]]
    ) -> list[LedgerRecord]:
        """Append the turn's records to HO2m as they were built, or their JSON-safe form.

        Events and the decision record are built from JSON-ready parts (`to_record` forms,
        numbers, strings), and the ledger validates and copies what it stores, so they are
        handed over without a copy of their own. Should a part carry something JSON cannot
        hold (a datetime, a dataclass), the ledger refuses the whole batch, having written
        nothing; the turn is then stored in its `jsonable` form and the slip is logged: a
        bug to fix, never a lost turn.
        """
        decisions = self.services.decisions
        try:
            return decisions.append_many(items)
        except HRMError as exc:
            if exc.code is not ErrorCode.VALIDATION_FAILED:
                raise
            logger.warning("turn %d: %s; stored its JSON-safe form instead", number, exc.message)
            self.json_repairs += 1
        return decisions.append_many([(kind, jsonable(data)) for kind, data in items])

    def _context(self, number: int) -> HRMContext:
        services, state = self.services, self.sessions.state
        commitment = services.focus.commitments.get_active()
        problem = services.focus.problem_registry.get_active()
        return HRMContext(
            session_id=state.session_id,
            turn_number=number,
            problem_id=problem.id if problem else None,
            altitude=services.altitude.current_level,
            stance=services.stance,
            commitment_id=commitment.id if commitment else None,
            commitment_turns_remaining=commitment.turns_remaining if commitment else None,
            recent_inputs=[t["input"] for t in state.recent],
            recent_outputs=[t["output"] for t in state.recent],
            recent_decisions=[
                {"action": t.get("action", "respond"), "kind": t.get("kind"),
                 "problem": t.get("problem")}
                for t in state.recent
            ],
            trace_enabled=services.config.trace_enabled,
            agent_class=self.sessions.agent_class,
            last_topic=state.last_topic,
            earlier_topic=state.earlier_topic,
        )


def _kept(writes: list[dict[str, Any]]) -> str | None:
    """The key of the last preference or fact this turn's writes kept in the canon, or of the
    decision it kept in a working set (D424), if any."""
    for write in reversed(writes):
        if write.get("approved") and write.get("kept_as"):
            return str(write["kept_as"])
        key = str(write.get("key") or "")
        if (
            write.get("approved") and write.get("target") == "shared_reference"
            and key.startswith(("preference.", "fact.")) and not write.get("retracted")
        ):
            return key
    return None


def _meta_episodes(record: DecisionRecord) -> list[dict[str, Any]]:
    """Higher-order observations about the session (004 §4 meta_episodes)."""
    episodes: list[dict[str, Any]] = []
    if record.arbitration.get("disposition") == "switch":
        episodes.append({"observation": "the person changed problems", "turn": record.turn})
    if record.escalations:
        episodes.append({"observation": "the input needed escalation", "turn": record.turn})
    if any(le.get("event_type") == "pattern_created" for le in record.learning):
        episodes.append({"observation": "a routing pattern was learned", "turn": record.turn})
    return episodes
