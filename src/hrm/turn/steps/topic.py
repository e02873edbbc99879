"""Step ``topic``: what a follow-up may continue next turn — the problem this input went to
(the active one, or the one it was queued as, D51) and its words. A message that was only a
preference has no topic and keeps the last one; so do "Ok" and "Where were we?", which have no
words of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.arbiter import ArbitrationDisposition
from hrm.governance.problems import extract_keywords
from hrm.scrubbing import scrub_text
from hrm.turn.topics import TOPIC_WORDS, move_topic

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["topic"]


def topic(ctx: TurnContext) -> Outcome | None:
    arbitration = ctx.arbitration.arbitration
    problem = ctx.problem
    went_to = (
        arbitration.candidate_problem_id
        if arbitration.disposition is ArbitrationDisposition.QUEUE
        else problem.id if problem is not None else None
    )
    ctx.hctx.topic_id = went_to  # the recent turns the model sees are this problem's (D80)
    ctx.topic_is_new = arbitration.is_new_candidate
    arbitrated = ctx.arbitrated or ctx.turn_input
    # The words are stored in the turn state: never a secret the message carried.
    words = extract_keywords(scrub_text(arbitrated.text))[:TOPIC_WORDS]
    last = ctx.state.last_topic if isinstance(ctx.state.last_topic, dict) else {}
    kept_words = not words and went_to is not None and last.get("problem_id") == went_to
    if (words or arbitrated is ctx.turn_input) and not kept_words:
        queued = arbitration.disposition is ArbitrationDisposition.QUEUE
        move_topic(ctx.state, None if went_to is None else {
            "problem_id": went_to, "keywords": list(words), **({"queued": True} if queued else {}),
        })  # fmt: skip
    return None
