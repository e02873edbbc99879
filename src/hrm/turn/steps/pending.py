"""Step ``pending``: the answer to a question hrm asked last turn.

A yes or no settles a preference held for confirmation (D36, D70); "switch" or "queue" answers
arbitration's question and decides this turn's arbitration, and after a switch the input that
was asked about is the one answered (D43). A bare "switch" with no question pending refers to
the topic hrm just said it queued; it is never a topic of its own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hrm.turn.preferences import resolve_pending
from hrm.turn.switch import asks_to_switch, last_queued, read_answer

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["pending"]


def pending(ctx: TurnContext) -> Outcome | None:
    services, state = ctx.services, ctx.state
    ctx.confirmation = resolve_pending(services.stack, state, ctx.text, ctx.record, ctx.event)
    held = state.pending_switch
    if isinstance(held, dict):
        choice = read_answer(ctx.text) if ctx.confirmation is None else None
        if choice is None:
            ctx.record.notes.append(f"the question about {held.get('title')!r} went unanswered")
            ctx.event("switch_unanswered", problem_id=held.get("problem_id"))
        else:
            ctx.decided = services.focus.answered(held, choice)
            if choice == "switch" and held.get("input"):
                ctx.turn_input = replace(ctx.turn_input, text=str(held["input"]))
    state.pending_switch = None
    ctx.bare_switch = (
        ctx.decided is None and ctx.confirmation is None and asks_to_switch(ctx.text)
    )
    if ctx.bare_switch:
        ctx.switch_to = last_queued(state.last_topic, services.focus.problem_registry)
        ctx.decided = (
            services.focus.answered({"problem_id": ctx.switch_to.id}, "switch", asked=False)
            if ctx.switch_to is not None
            else services.focus.stay("The person asked to switch; no topic was queued last")
        )
    return None
