"""Step ``confirm``: a bare yes or no answers hrm's "Should I remember …?", which the model
never saw: hrm answers it, as it answers "queue" (D50)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.context import Outcome
from hrm.turn.preferences import answers_only

if TYPE_CHECKING:
    from hrm.turn.context import TurnContext

__all__ = ["confirm"]


def confirm(ctx: TurnContext) -> Outcome | None:
    if ctx.confirmation is None or not answers_only(ctx.text):
        return None
    ctx.close_after_arbitration()
    ctx.record.notes.append(ctx.confirmation)
    return Outcome(ctx.confirmation, "confirm")
