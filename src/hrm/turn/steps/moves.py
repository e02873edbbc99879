"""Step ``moves``: a bare "switch" and a bare "Where were we?" are answered by hrm itself, with
no model call (D75): the move is the whole message. So is "resume the garden project" when no
open problem is the garden project: hrm says so and asks whether to start it (D410)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.arbiter import asks_for_the_other, others_open, resume_target
from hrm.governance.problems import ProblemStatus, extract_keywords
from hrm.reading.reader import without_span_text
from hrm.reading.types import IntentKind
from hrm.turn.context import Outcome
from hrm.turn.intents import START
from hrm.turn.topics import RESUMED, TOPIC_WORDS, move_topic, problem_title, titled

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
    which = _which_other(ctx)
    if which is not None:
        return which
    cues = ctx.reading.cues
    named = ctx.reading.first(IntentKind.RESUME)
    # Only the rules' sure forms: the sentence model also reads "go back to the previous
    # version of the function" as a move, which names no work to go back to.
    sure = named is not None and named.reader.startswith("rules")
    if sure and cues.resume_to and not _names_open_work(ctx, cues.resume_to):
        return _nothing_named(ctx, cues.resume_to, alone=cues.resume_only)
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


def _names_open_work(ctx: TurnContext, named: str) -> bool:
    """Does `named` name a problem that was open before this turn (not one the turn's own
    words just opened)?"""
    found = resume_target(named, ctx.services.focus.problem_registry)
    arbitration = ctx.arbitration.arbitration
    return found is not None and not (
        arbitration.is_new_candidate and arbitration.candidate_problem_id == found.id
    )


def _which_other(ctx: TurnContext) -> Outcome | None:
    """"The other one" when more than one problem is open besides the work in focus: hrm asks
    which, naming them, instead of answering as if something had moved (D495)."""
    arbitration = ctx.arbitration.arbitration
    if arbitration.explicit_request or not asks_for_the_other(ctx.reading.said):
        return None
    others = others_open(ctx.services.focus.problem_registry)
    if len(others) < 2:
        return None
    ctx.close_after_arbitration()
    listed = "; ".join(f"‘{p.title.rstrip(' .')}’" for p in others[:4])
    more = "; …" if len(others) > 4 else ""
    return Outcome(
        f"Which one? Open now: {listed}{more}. Say a few words of its title "
        "(“back to …”).", "ask_user", asked=True,
    )


def _nothing_named(ctx: TurnContext, named: str, *, alone: bool) -> Outcome | None:
    """"Resume the garden project" with no open problem by that name: said, never answered as
    if it had moved (D410). Said alone, hrm asks whether to start it, and the next yes opens it
    (`hrm.turn.intents.settle_intent`); with more said, the rest is answered and a note says
    nothing open matched."""
    title = problem_title(named)
    if not alone:
        new = ctx.arbitration.arbitration.is_new_candidate
        taken = ", so this is taken as new work." if new else "."
        ctx.notes.append(f"Nothing open is called “{named}”{taken}")
        return None
    ctx.close_after_arbitration()
    ctx.state.pending_intent = {
        "kind": START, "title": title, "said": named, "asked_turn": ctx.record.turn,
    }  # fmt: skip
    ctx.event("intent_pending", kind=START, title=title)
    registry = ctx.services.focus.problem_registry
    opened = [
        p.title.rstrip(" .") for p in registry.list() if p.status is not ProblemStatus.RESOLVED
    ]
    listed = "; ".join(f"‘{t}’" for t in opened[:3]) + ("; …" if len(opened) > 3 else "")
    now = f" Open now: {listed}." if opened else " Nothing is open."
    return Outcome(
        f"Nothing open is called “{named}”, so there is nothing to go back to.{now} "
        f"Should I start ‘{title}’ as a new problem? (yes/no)", "ask_user", asked=True,
    )
