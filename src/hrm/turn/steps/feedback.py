"""Step ``feedback``: negative feedback on the previous answer weakens what chose it.

Only a routed answer is judged: after a question (arbitration's ask, Focus's fallback to ask),
a wait or a degraded answer there is none, and a "No." that answers hrm's own question judges
nothing. Either way this turn sets the last routing again only when its own answer is routed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["feedback", "is_negative_feedback"]

_NEGATIVE_FEEDBACK = re.compile(
    r"^\s*(no[,.!]|wrong|that'?s (wrong|not (it|right|what)|incorrect)|incorrect|"
    r"that (didn'?t|does ?n'?t) work|not helpful|bad answer)",
    re.IGNORECASE,
)
_NEGATIVE_STARTS = ("no", "wrong", "that", "incorrect", "bad")


def is_negative_feedback(text: str) -> bool:
    """Does `text` say the last answer was wrong or unhelpful?"""
    # Every form starts with one of these: a cheap test first (for ASCII text, where ignoring
    # case is exactly `lower`).
    if text.isascii() and not text.lstrip()[:9].lower().startswith(_NEGATIVE_STARTS):
        return False
    return _NEGATIVE_FEEDBACK.match(text) is not None


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
    if not (state.last_signal and state.last_routing) or not is_negative_feedback(ctx.text):
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
    for le in loop.last_events:
        record.learning.append({"event_type": le.event_type, **le.payload})
        ctx.event(le.event_type, **le.payload)
    record.learning.append({"event_type": "negative_feedback", "turn": record.turn - 1})
