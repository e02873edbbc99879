"""Step ``decisions``: a decision the person states about the work ("Decision: Netlify.") goes
to its problem's working set (D88), which the context shows whenever that problem is at hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.stated_decisions import read_stated_decision
from hrm.turn.facts import keep_decision

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["decisions"]


def decisions(ctx: TurnContext) -> Outcome | None:
    went_to = ctx.hctx.topic_id
    if went_to is None:
        return None
    stated = read_stated_decision(ctx.said)
    if stated is not None:
        ctx.record.writes.append(
            keep_decision(ctx.services.stack, went_to, stated, turn=ctx.record.turn,
                          event=ctx.event)
        )  # fmt: skip
    return None
