"""Step ``feedback``: negative feedback on the previous answer weakens what chose it.

Only a routed answer is judged: after a question (arbitration's ask, Focus's fallback to ask),
a wait or a degraded answer there is none, and a "No." that answers hrm's own question judges
nothing. Either way this turn sets the last routing again only when its own answer is routed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.reading.types import IntentKind

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["feedback"]

def feedback(ctx: TurnContext) -> Outcome | None:
    state = ctx.state
    if ctx.confirmation is None and ctx.decided is None:
        _judge_previous(ctx)
    # Feedback judges the last answer only: this turn sets them again when its own answer is
    # a routed outcome.
    state.last_signal = state.last_routing = None
    return None


def _judge_previous(ctx: TurnContext) -> None:
    state, record, loop = ctx.state, ctx.record, ctx.services.feedback
    said_so = ctx.reading.has(IntentKind.NEGATIVE_FEEDBACK)
    if not (state.last_signal and state.last_routing) or not said_so:
        return
    loop.record_outcome(
        state.last_signal,
        state.last_routing,
        {
            "success": False,
            "reason": "the person said the last answer was wrong",
            "turn_number": record.turn - 1,  # the answer judged, not the turn judging it
            "feedback_turn": record.turn,
        },
        session_id=state.session_id,
    )
    for le in loop.last_events:  # in the record's ``learning`` only (D331)
        record.learning.append({"event_type": le.event_type, **le.payload})
    record.learning.append({"event_type": "negative_feedback", "turn": record.turn - 1})
