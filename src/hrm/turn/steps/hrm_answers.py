"""Step ``hrm_answers``: a message that only stated a preference, asked hrm to keep or forget
something, or asked about a problem is answered by hrm itself, with the notes of what it did
(D50). The canon carries a preference into every later prompt; a model shown it has nothing to
add and echoes it back (D58)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.context import Outcome

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["hrm_answers", "said_only"]


def said_only(ctx: TurnContext) -> str:
    """What a message made only of statements was about: ``preference`` or ``memory``."""
    return "preference" if ctx.memo is None and ctx.forget is None else "memory"


def hrm_answers(ctx: TurnContext) -> Outcome | None:
    arbitrated = ctx.arbitrated or ctx.turn_input
    if not (
        ctx.notes and ctx.confirmation is None and arbitrated is not ctx.turn_input
        and not arbitrated.text and not ctx.told_of_closed
    ):
        return None
    ctx.close_after_arbitration()
    ctx.record.notes += ctx.notes
    only_problem = (
        ctx.asked_of is not None and ctx.memo is None and ctx.forget is None
        and (ctx.preference is None or ctx.preference.statement is None)
    )
    if only_problem and ctx.asked_of is not None:
        return Outcome("\n".join(ctx.notes), ctx.asked_of.kind)
    return Outcome(
        "\n".join(ctx.notes), "remember", asked=asked_this_turn(ctx), kind=said_only(ctx)
    )


def asked_this_turn(ctx: TurnContext) -> bool:
    """Does the turn ask the person something to answer next: a middle-band request (D150) or
    a preference held for their yes or no (D36, D70)? The decision record's `asked` says so
    (the server's `hrm` extension and `/why` read it; D493)."""
    turn = ctx.record.turn
    intent = ctx.state.pending_intent or {}
    preference = ctx.state.pending_preference or {}
    return intent.get("asked_turn") == turn or preference.get("asked_turn") == turn
