"""Step ``statements``: a stated preference (D46) and a request to remember a fact (D73) are
about the person and their world, not a problem to work on: they are read here and left out of
what arbitration weighs. They are written after arbitration, in step ``memory``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.reading.rules.memory import POINTING, MemoryRequest, pointed_request
from hrm.reading.types import IntentKind
from hrm.turn.preferences import preference_reading, without_preference, without_sentence

if TYPE_CHECKING:
    from hrm.reading.types import Intent
    from hrm.turn.context import Outcome, TurnContext
    from hrm.types import TurnInput

__all__ = ["statements"]


def statements(ctx: TurnContext) -> Outcome | None:
    heard = ctx.heard or ctx.turn_input
    if ctx.confirmation is not None:
        ctx.arbitrated = heard
        return None
    reading = preference_reading(ctx.reading, ctx.services.bands)
    ctx.preference = reading
    arbitrated = without_preference(heard, reading)
    if arbitrated is not heard:
        ctx.record.notes.append("the preference statement was left out of arbitration")
        arbitrated = _without_more_preferences(ctx, arbitrated)
    # A preference said as a request to remember ("Keep in mind I prefer tabs") is the
    # preference's; a fact in a sentence of its own beside a preference ("Remember that our
    # prod database is db-prod-7. Also, from now on answer in bullet points.") is kept too.
    fact = ctx.reading.first(IntentKind.FACT)
    if fact is not None and (
        reading is None or reading.statement is None or _apart(ctx, fact)
    ):
        said = ctx.reading.text_of(fact)
        ctx.memo = (_pointed_at(ctx, said) if fact.reader == POINTING else None) or (
            MemoryRequest(
                statement=said, fact=fact.slots.statement or "",
                subject=fact.slots.subject or fact.slots.statement or "",
            )
        )  # fmt: skip
    if ctx.memo is not None:
        before = arbitrated
        arbitrated = without_sentence(arbitrated, ctx.memo.statement)
        if arbitrated is not before:
            ctx.record.notes.append("the request to remember was left out of arbitration")
    ctx.arbitrated = arbitrated
    return None


def _apart(ctx: TurnContext, fact: Intent) -> bool:
    """Does the fact lie outside the preference's span (another sentence of the message)?"""
    preference = ctx.reading.first(IntentKind.PREFERENCE)
    return preference is not None and (
        fact.span[1] <= preference.span[0] or preference.span[1] <= fact.span[0]
    )


def _without_more_preferences(ctx: TurnContext, arbitrated: TurnInput) -> TurnInput:
    """Leave every further preference sentence out of arbitration too: "I hate passive voice.
    Active voice always." is about the person, not a problem, however many sentences it takes.
    One preference is written a turn, so the person is told which others were not kept."""
    bands = ctx.services.bands
    first = ctx.reading.first(IntentKind.PREFERENCE)
    for intent in ctx.reading.intents:
        if intent is first or intent.kind is not IntentKind.PREFERENCE:
            continue
        if intent.confidence < bands.ask:
            continue
        sentence = ctx.reading.text_of(intent)
        arbitrated = without_sentence(arbitrated, sentence)
        ctx.notes.append(
            f"I took one preference from this message; say “{sentence.strip()}” on its own "
            "if you want me to remember it too."
        )
    return arbitrated


def _pointed_at(ctx: TurnContext, said: str) -> MemoryRequest | None:
    """What "remember it please" asks to keep: the person's message just before, when it
    stated something (D435); None leaves the request naming nothing ("What should I keep?")."""
    recent = ctx.state.recent
    before = recent[-1].get("input") if recent else None
    return pointed_request(said, before) if isinstance(before, str) else None
