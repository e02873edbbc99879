"""Step ``moves``: a bare "switch" and a bare "Where were we?" are answered by hrm itself, with
no model call (D75): the move is the whole message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.problems import extract_keywords
from hrm.reading.reader import without_span_text
from hrm.reading.types import IntentKind
from hrm.turn.context import Outcome
from hrm.turn.topics import RESUMED, TOPIC_WORDS, move_topic, titled

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["moves"]


def moves(ctx: TurnContext) -> Outcome | None:
    problem = ctx.problem
    if ctx.bare_switch:
        ctx.close_after_arbitration()
        if ctx.switch_to is None or problem is None:
            return Outcome(
                "No topic is waiting to switch to. `/problems` lists the open ones, and "
                "“switch to” with a few words of a title moves to it.", "switch",
            )
        move_topic(ctx.state, {
            "problem_id": problem.id,
            "keywords": list(extract_keywords(problem.title)[:TOPIC_WORDS]),
        })  # fmt: skip
        ctx.hctx.topic_id = problem.id
        return Outcome(f"Switched to {titled(problem.title)}", "switch")
    match = str(ctx.arbitration.arbitration.candidate_match or "")
    if problem is None or not match.startswith(RESUMED):
        return None
    resume = ctx.reading.first(IntentKind.RESUME)
    said = ctx.reading.said
    if extract_keywords(without_span_text(said, resume.span) if resume else said):
        return None
    # "Where were we?" and nothing else: hrm says where, as it answers "switch" (D75).
    left = ctx.state.earlier_topic if isinstance(ctx.state.earlier_topic, dict) else {}
    last = left.get("last_input") if left.get("problem_id") == problem.id else None
    # What was last said there is what a follow-up now continues.
    move_topic(ctx.state, {
        "problem_id": problem.id,
        "keywords": list(extract_keywords(last or problem.title)[:TOPIC_WORDS]),
    })  # fmt: skip
    ctx.close_after_arbitration()
    ctx.hctx.topic_id = problem.id
    where = f" The last thing you said there: “{last}”" if last else ""
    return Outcome(f"Back to {titled(problem.title)}{where}", "switch")
