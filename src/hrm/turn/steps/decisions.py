"""Step ``decisions``: a decision the person states about the work ("Decision: Netlify.") goes
to its problem's working set (D88), which the context shows whenever that problem is at hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.arbiter import EXPLICIT_SWITCH
from hrm.reading.rules.decisions import StatedDecision
from hrm.reading.types import IntentKind
from hrm.turn.facts import keep_decision

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["decisions"]


def decisions(ctx: TurnContext) -> Outcome | None:
    went_to = ctx.hctx.topic_id
    if went_to is None:
        return None
    intent = ctx.reading.first(IntentKind.DECISION)
    if ctx.record.arbitration.get("candidate_match") == EXPLICIT_SWITCH:
        # "let's switch to the newsletter" chose where to work, not how (D430): no decision.
        return None
    if intent is not None and intent.confidence >= ctx.services.bands.act:
        stated = StatedDecision(intent.slots.statement or "", ctx.reading.text_of(intent))
        ctx.record.writes.append(
            keep_decision(ctx.services.stack, went_to, stated, turn=ctx.record.turn,
                          event=ctx.event)
        )  # fmt: skip
    return None
