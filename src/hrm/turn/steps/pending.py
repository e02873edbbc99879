"""Step ``pending``: the answer to a question hrm asked last turn, as the `Reading` read it.

A yes or no settles a preference held for confirmation (D36, D70) or a request read in the
middle confidence band and asked about (D150); "switch" or "queue" answers arbitration's
question and decides this turn's arbitration, and after a switch the input that was asked about
is the one answered (D43), read again. A bare "switch" with no question pending refers to the
topic hrm just said it queued; it is never a topic of its own. An input that answers nothing
lets the question go, recorded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hrm.reading.rules.corrections import corrected, correction_clause, correction_slots
from hrm.reading.rules.memory import kept_matching
from hrm.reading.types import IntentKind
from hrm.turn.intents import settle_intent
from hrm.turn.preferences import resolve_pending, without_sentence
from hrm.turn.steps.read import reread
from hrm.turn.switch import last_queued

if TYPE_CHECKING:
    from hrm.reading.types import Reading
    from hrm.turn.context import Outcome, TurnContext
    from hrm.turn.state import TurnState

__all__ = ["pending"]


def pending(ctx: TurnContext) -> Outcome | None:
    services, state, reading = ctx.services, ctx.state, ctx.reading
    answer = _answer(reading, IntentKind.YES, IntentKind.NO) or _takes_back_held(reading, state)
    if _corrects_held(ctx):
        answer = IntentKind.YES  # the person said what they meant: kept as they said it
    ctx.confirmation = resolve_pending(services.stack, state, answer, ctx.record, ctx.event)
    if ctx.confirmation is None and state.pending_intent:
        ctx.confirmation = settle_intent(ctx, answer)
    held = state.pending_switch
    choice = _answer(reading, IntentKind.SWITCH, IntentKind.QUEUE)
    if isinstance(held, dict):
        if choice is None or ctx.confirmation is not None:
            ctx.record.notes.append(f"the question about {held.get('title')!r} went unanswered")
            ctx.event("switch_unanswered", problem_id=held.get("problem_id"))
        else:
            ctx.decided = services.focus.answered(held, choice.value)
            if choice is IntentKind.SWITCH and held.get("input"):
                ctx.turn_input = replace(ctx.turn_input, text=str(held["input"]))
                reread(ctx)
    state.pending_switch = None
    ctx.bare_switch = not isinstance(held, dict) and ctx.confirmation is None and (
        choice is IntentKind.SWITCH
    )
    if ctx.bare_switch:
        ctx.switch_to = last_queued(state.last_topic, services.focus.problem_registry)
        ctx.decided = (
            services.focus.answered({"problem_id": ctx.switch_to.id}, "switch", asked=False)
            if ctx.switch_to is not None
            else services.focus.stay("The person asked to switch; no topic was queued last")
        )
    return None


def _answer(reading: Reading, *kinds: IntentKind) -> IntentKind | None:
    return next((i.kind for i in reading.intents if i.kind in kinds), None)


def _corrects_held(ctx: TurnContext) -> bool:
    """Does the answer correct the preference hrm is asking about (D502)? "no I meant light
    mode" after "Should I remember “Dark mode seems better for my eyes” …?" is light mode,
    said by the person: the held statement becomes the corrected one, and the words of the
    correction are no new input."""
    held = ctx.state.pending_preference
    if not isinstance(held, dict) or not held.get("statement"):
        return False
    said = ctx.reading.said
    now = corrected(str(held["statement"]), correction_slots(said))
    if now is None:
        return False
    ctx.state.pending_preference = {**held, "statement": now}
    ctx.heard = without_sentence(ctx.turn_input, correction_clause(said))
    ctx.record.notes.append("the answer corrected the preference asked about")
    return True


def _takes_back_held(reading: Reading, state: TurnState) -> IntentKind | None:
    """A request to forget the preference hrm is asking about is a no (D431): "ok, forget the
    German thing" after "Should I remember “I'd like answers in German …”?" keeps nothing,
    where it used to be told that nothing kept matched "the German thing"."""
    held = state.pending_preference
    forget = reading.first(IntentKind.FORGET)
    if not isinstance(held, dict) or forget is None or not forget.slots.what:
        return None
    asked = {"preference.asked": str(held.get("statement") or "")}
    return IntentKind.NO if kept_matching(asked, forget.slots.what) else None
