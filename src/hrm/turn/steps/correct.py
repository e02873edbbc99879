"""Step ``correct``: "no I meant Fahrenheit", "actually, make that Tuesday", "scratch that, I
prefer answers in English" right after hrm kept something replace what it kept (D469).

Taken before feedback and forget read the message: its "no" judges no answer, its "scratch
that" forgets nothing of its own, and the statement it carries is not kept a second time. With
nothing kept the turn before the step does nothing, and the message is the model's to answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hrm.reading.rules.corrections import corrected, correction_clause
from hrm.reading.rules.decisions import read_decision_intents
from hrm.reading.rules.memory import DECISION_KEY, kept_text
from hrm.reading.types import IntentKind
from hrm.turn.preferences import without_sentence

if TYPE_CHECKING:
    from hrm.reading.types import Intent, Reading
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["correct"]

_TAKEN = frozenset({IntentKind.PREFERENCE, IntentKind.FACT, IntentKind.FORGET,
                    IntentKind.DECISION, IntentKind.NO, IntentKind.NEGATIVE_FEEDBACK})
"""What a correction's own words are not read as besides (its "no", "scratch that", its
statement)."""


def correct(ctx: TurnContext) -> Outcome | None:
    intent = ctx.reading.first(IntentKind.CORRECT)
    key = ctx.just_kept
    if intent is None or key is None or ctx.confirmation is not None or ctx.decided is not None:
        return None
    if intent.confidence < ctx.services.bands.act:
        return None
    stack = ctx.services.stack
    was = kept_text(stack.forgettable().get(key))
    if was is None:
        return None
    clause = correction_clause(ctx.reading.text_of(intent))
    new = _new_text(ctx.reading, intent, was, decision=key.startswith(DECISION_KEY))
    if new is None and intent.slots.what:
        return None  # it replaces words the kept statement does not hold: not a correction of it
    ctx.record.reading = ctx.reading.to_record()  # /why shows the message as it was read
    ctx.reading = _without_taken(ctx.reading, intent)
    ctx.heard = without_sentence(ctx.heard or ctx.turn_input, clause)
    ctx.record.notes.append("the correction was left out of arbitration")
    if new is None:
        ctx.notes.append(
            f"I could not tell which words of “{was}” that changes, so it is kept as it was; "
            "say it whole to change it (“scratch that, …”)."
        )
        return None
    write = stack.correct_kept(key, new, was=was, said=clause)
    ctx.record.writes.append(write)
    ctx.event("kept_corrected", key=key, was=was, now=new)
    ctx.notes.append(f"Corrected: “{new}” (was “{was}”).")
    return None


def _new_text(reading: Reading, intent: Intent, was: str, *, decision: bool) -> str | None:
    """What the kept statement reads as corrected. A decision is kept as the decision reader
    words it: "go with Vue" of "let's go with Vue instead of React"."""
    new = corrected(was, intent.slots)
    if decision and new is not None:
        stated = [i.slots.statement for i in read_decision_intents(new) if i.slots.statement]
        return stated[0] if stated else new
    return new


def _without_taken(reading: Reading, intent: Intent) -> Reading:
    """`reading` without the intents inside the correction's span (its own words)."""
    start, end = intent.span
    kept = tuple(
        i for i in reading.intents
        if i is intent or i.kind not in _TAKEN or not (start <= i.span[0] and i.span[1] <= end)
    )
    return replace(reading, intents=kept)
