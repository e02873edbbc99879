"""Step ``forget``: a request to forget what hrm keeps (D77), as the `Reading` read it, is taken
before anything else so that "Forget that I prefer tabs" states no preference. "Forget that"
means what the turn before kept (after nothing kept the rules read no request); "Forget that I
asked, …" is a figure of speech unless something kept says it (D83). The request is acted on in
step ``memory`` (asked about first when read in the middle band); here its words are left out
of what arbitration weighs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.reading.rules.memory import ForgetRequest, bulk_kinds
from hrm.reading.types import IntentKind
from hrm.turn.preferences import without_sentence

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext
    from hrm.turn.state import TurnState

__all__ = ["forget", "just_kept"]


def just_kept(state: TurnState, turn: int) -> str | None:
    """What "forget that" refers to: the key the turn just before kept, if it kept one."""
    kept = state.last_kept if isinstance(state.last_kept, dict) else {}
    return str(kept["key"]) if kept.get("key") and kept.get("turn") == turn - 1 else None


def forget(ctx: TurnContext) -> Outcome | None:
    ctx.heard = ctx.heard or ctx.turn_input  # a correction (step ``correct``) took its words
    intent = ctx.reading.first(IntentKind.FORGET)
    if intent is None or ctx.confirmation is not None:
        return None
    if intent.confidence < ctx.services.bands.ask:
        return None  # an ordinary message (`answer` says a command-shaped one was not acted on)
    slots = intent.slots
    clause = ctx.reading.text_of(intent)
    if (
        slots.what is None and ctx.just_kept is None and not _says_memory(clause)
        and not bulk_kinds(None, clause)  # "forget everything I told you" (D436)
    ):
        # "Scratch that", "forget it" with nothing just kept takes back what the person said,
        # not what hrm keeps (D77), whichever reader heard it; "delete that from your memory"
        # asks of hrm's memory all the same, and is told that "that" names nothing (D416).
        return None
    ctx.forget_intent = intent
    ctx.forget = ForgetRequest(clause=clause, what=slots.what, sure=slots.sure)
    ctx.heard = without_sentence(ctx.heard, ctx.forget.clause)
    if ctx.heard is not ctx.turn_input:
        ctx.record.notes.append("the request to forget was left out of arbitration")
    return None


def _says_memory(clause: str) -> bool:
    """Does a request to forget name hrm's memory outright ("… from your memory")?"""
    low = clause.lower()
    return "memor" in low or "canon" in low or "your notes" in low
