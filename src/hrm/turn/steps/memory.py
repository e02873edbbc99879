"""Step ``memory``: what the person asked hrm to forget (D77), the preference the message
states (001 §12.4, §12.6) and a fact the person asked to be remembered (D73), written through
the write gate now that arbitration has placed the turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm._text import shorten
from hrm.reading.other_languages import asks_in_another_language
from hrm.reading.rules.memory import bulk_kinds, names_fully
from hrm.reading.types import COMMANDS, IntentKind
from hrm.turn.facts import forget_kept, remember_fact
from hrm.turn.intents import ask_to_forget, ask_to_forget_all
from hrm.turn.preferences import handle_preference

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["memory"]


def memory(ctx: TurnContext) -> Outcome | None:
    stack, record = ctx.services.stack, ctx.record
    intent = ctx.forget_intent
    if ctx.forget is not None and intent is not None:
        bulk = bulk_kinds(ctx.forget.what, ctx.forget.clause)
        # Acted on at once only when it names what it forgets by every word it says: "forget
        # the billing migration" shares one word with "the billing db host is pg-billing-2"
        # and forgot it; now that is asked about (D377). Forgetting all is always asked (D436).
        if bulk:
            ctx.notes += ask_to_forget_all(ctx, intent, ctx.forget, bulk)
        elif intent.confidence >= ctx.services.bands.act and names_fully(
            stack.forgettable(), ctx.forget.what
        ):
            ctx.notes += forget_kept(
                stack, ctx.forget, just_kept=ctx.just_kept, record=record, event=ctx.event
            )
        else:  # the middle band: one short question, settled by the next yes or no (D150)
            ctx.notes += ask_to_forget(ctx, intent, ctx.forget)
    if ctx.confirmation is None:
        ctx.notes += handle_preference(
            stack, ctx.state, ctx.preference, signals=ctx.signals, record=record,
            event=ctx.event,
        )
    else:
        ctx.notes.append(ctx.confirmation)
    if ctx.memo is not None:
        ctx.notes += remember_fact(
            stack, ctx.memo, signals=ctx.signals, record=record, event=ctx.event
        )
    ctx.notes += not_acted_on(ctx)
    return None


def not_acted_on(ctx: TurnContext) -> list[str]:
    """Never silent: a request read below the ask threshold is an ordinary message, and the
    answer says hrm did not act on it; so does one said in another language (D494)."""
    ask = ctx.services.bands.ask
    notes: list[str] = []
    if not ctx.reading.has_command and asks_in_another_language(ctx.reading.said):
        notes.append(
            "I read requests to keep or forget things in English only, so nothing of this was "
            "kept. Say it in English if you want me to (“I prefer …”, “Remember that …”)."
        )
    for intent in ctx.reading.intents:
        if intent.kind in COMMANDS and intent.confidence < ask:
            said = shorten(ctx.reading.text_of(intent), 80)
            notes.append(
                f"“{said}” may ask me to {_VERBS.get(intent.kind, intent.kind.value)}; I was not "
                "sure enough to act on it. Say it plainly if you meant it."
            )
    return notes


_VERBS = {
    IntentKind.PREFERENCE: "keep a preference", IntentKind.FACT: "remember a fact",
    IntentKind.FORGET: "forget something I keep", IntentKind.RESOLVE: "resolve a problem",
    IntentKind.PARK: "park a problem", IntentKind.FOCUS: "focus for a while",
    IntentKind.RESUME: "go back to earlier work", IntentKind.LIST_OPEN: "list what is open",
    IntentKind.LIST_KEPT: "list what I keep about you",
    IntentKind.DECISION: "record a decision", IntentKind.SET_ASIDE: "set the work aside",
}  # fmt: skip
