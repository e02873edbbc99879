"""Step ``kept``: "What do you know about me?" is answered by hrm itself, from the canon, as
"What's still open?" is from the registry (D87, D421): what it keeps is what the person can
see and take back, and no model is asked to recall it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hrm.reading.rules.memory import kept_text
from hrm.reading.types import IntentKind
from hrm.turn.preferences import without_sentence

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["kept", "what_is_kept"]

_LISTED = 12
"""Entries of each kind listed in an answer; `hrm chat`'s /canon shows them all."""


def kept(ctx: TurnContext) -> Outcome | None:
    intent = ctx.reading.first(IntentKind.LIST_KEPT)
    if intent is None or ctx.confirmation is not None or ctx.decided is not None:
        return None
    if intent.confidence < ctx.services.bands.ask:
        return None
    ctx.notes.append(what_is_kept(ctx.services.stack.canon()))
    ctx.event("kept_listed")
    before = ctx.heard or ctx.turn_input
    ctx.heard = without_sentence(before, ctx.reading.text_of(intent))
    if ctx.heard is not before:
        ctx.record.notes.append("the question about what is kept was left out of arbitration")
    return None


def what_is_kept(canon: Any) -> str:
    """The preferences and facts the canon keeps now, newest wording as kept, as an answer."""
    kinds: dict[str, list[str]] = {"preference": [], "fact": []}
    for key, value in sorted(canon.items()):
        kind = key.partition(".")[0]
        text = kept_text(value)
        if kind in kinds and text is not None:
            kinds[kind].append(f"“{text}”")
    if not any(kinds.values()):
        return ("I keep nothing about you yet: a preference you state (“I prefer …”) or a fact "
                "you ask me to remember (“Remember that …”) is kept, and shown here.")
    lines = []
    for kind, label in (("preference", "Your preferences"), ("fact", "Facts you asked me to keep")):
        items = kinds[kind]
        if items:
            more = f"; and {len(items) - _LISTED} more" if len(items) > _LISTED else ""
            lines.append(f"{label}: {'; '.join(items[:_LISTED])}{more}.")
    lines.append("“Forget …” takes one back.")
    return "\n".join(lines)
