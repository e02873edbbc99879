"""Step ``confirm``: a bare yes or no answers hrm's "Should I remember …?", which the model
never saw: hrm answers it, as it answers "queue" (D50); so does an answer that only corrects
what was asked about ("no I meant light mode", D502)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.reading.types import IntentKind
from hrm.turn.context import Outcome

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["confirm"]


def confirm(ctx: TurnContext) -> Outcome | None:
    answer = next(
        (i for i in ctx.reading.intents if i.kind in (IntentKind.YES, IntentKind.NO)), None
    )
    # An answer that only corrected what was asked about (D502) leaves nothing else said.
    nothing_else = ctx.heard is not None and not ctx.heard.text.strip()
    if ctx.confirmation is None or (
        not nothing_else and (answer is None or answer.slots.rest is not None)
    ):
        return None
    ctx.close_after_arbitration()
    ctx.record.notes.append(ctx.confirmation)
    return Outcome(ctx.confirmation, "confirm")
