"""Step ``execute``: the allowed action runs (HO1): ``respond`` (one gateway call, streamed),
``execute`` (a plan), ``delegate`` (an agent bundle), ``ask``, ``wait``. Provider failures
become a recorded outcome with a recovery decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["execute"]


def execute(ctx: TurnContext) -> Outcome | None:
    action = ctx.action
    with ctx.tracer.span("execution", action.action_type, "StackExecutor") as span:
        ctx.outcome = ctx.services.stack.execute(
            action, ctx.turn_input, ctx.assembled, ctx.reasoning, ctx.classification, ctx.event
        )
        span.set_output("ok" if ctx.outcome.result.success else "failed")
    ctx.record.execution = ctx.outcome.to_record()
    ctx.notes += ctx.outcome.notes
    return None
