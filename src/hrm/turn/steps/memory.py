"""Step ``memory``: what the person asked hrm to forget (D77), the preference the message
states (001 §12.4, §12.6) and a fact the person asked to be remembered (D73), written through
the write gate now that arbitration has placed the turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.facts import forget_kept, remember_fact
from hrm.turn.preferences import handle_preference

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["memory"]


def memory(ctx: TurnContext) -> Outcome | None:
    stack, record = ctx.services.stack, ctx.record
    if ctx.forget is not None:
        ctx.notes += forget_kept(
            stack, ctx.forget, just_kept=ctx.just_kept, record=record, event=ctx.event
        )
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
    return None
