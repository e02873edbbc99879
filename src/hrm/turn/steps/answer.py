"""Step ``answer``: the routed answer, with the turn's notes after it when the answer shows
notes (never silent), and the stance and commitment the turn leaves. A message that only
stated a preference is canon now, not conversation (D50): its exchange is marked so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.context import Outcome
from hrm.turn.records import CommitmentRecord
from hrm.turn.state import NOTES_START
from hrm.turn.steps.hrm_answers import asked_this_turn, said_only

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["answer"]


def answer(ctx: TurnContext) -> Outcome | None:
    services, record, notes = ctx.services, ctx.record, ctx.notes
    record.stance_after = services.stance.value
    record.commitment_after = CommitmentRecord.of(services.focus.commitments.get_active())
    record.notes += notes
    response = ctx.outcome.response
    if notes and ctx.outcome.show_notes:
        response = response.rstrip() + NOTES_START + "\n• ".join(notes)
    arbitrated = ctx.arbitrated or ctx.turn_input
    only_statements = arbitrated is not ctx.turn_input and not arbitrated.text
    action = ctx.action.action_type
    return Outcome(
        response, action, asked=action == "ask" or asked_this_turn(ctx),
        kind=said_only(ctx) if only_statements else None,
    )
