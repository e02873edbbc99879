"""Step ``arbitrate``: stay, switch, queue or ask (001 §12.3, §12.7).

Focus weighs what is left of the message once the commands are out. An ask returns the question
and changes nothing else; a "queue" the person answered is said back. Otherwise the problem in
focus after arbitration is the turn's problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.arbiter import ArbitrationDisposition
from hrm.reading.pasted import spoken
from hrm.turn.context import Outcome
from hrm.turn.records import CommitmentRecord, ProblemRef
from hrm.turn.switch import held_question
from hrm.turn.topics import titled

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["arbitrate"]


def arbitrate(ctx: TurnContext) -> Outcome | None:
    focus, record = ctx.services.focus, ctx.record
    arbitrated = ctx.arbitrated or ctx.turn_input
    # The reading's cues were read from what is left once the commands it set apart are out;
    # when the commands this turn acted on leave another text (an answer that settled a
    # question, a request that named nothing kept), arbitration reads that text's own.
    reading = ctx.reading
    same = arbitrated is ctx.turn_input and reading.rest == reading.said.strip()
    cues = reading.cues if same or spoken(arbitrated.text) == reading.rest else None
    with ctx.tracer.span("focus", "process_turn", "FocusHRM") as span:
        result = focus.process_turn(arbitrated, ctx.signals, decided=ctx.decided, cues=cues)
        span.set_output(result.arbitration.disposition.value)
    ctx.arbitration = result
    record.arbitration = result.arbitration_record or result.arbitration.to_record()
    record.stance_before = result.stance_before.value
    record.commitment_before = CommitmentRecord.of(result.commitment_before)
    ctx.events_of(result)
    if result.action == "ask_user":
        ctx.close_after_arbitration()
        record.notes.append("arbitration asked the person; nothing else changed")
        ctx.state.pending_switch = held_question(result.arbitration, ctx.text, record.turn)
        return Outcome(result.message, "ask_user", asked=True)
    decided = ctx.decided
    if decided is not None and decided.disposition is ArbitrationDisposition.QUEUE:
        ctx.close_after_arbitration()
        queued = decided.candidate.title if decided.candidate is not None else ""
        active = focus.problem_registry.get_active()
        staying = f"; staying on {titled(active.title)}" if active is not None else "."
        return Outcome(f"Queued ‘{queued}’ for later{staying}", "queue")
    problem = focus.problem_registry.get_active()
    ctx.problem = problem
    record.problem = None if problem is None else ProblemRef(id=problem.id, title=problem.title)
    ctx.hctx.problem_id = problem.id if problem else None
    return None
