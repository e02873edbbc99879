"""Step ``attend``: assemble what the model sees (004 §6) under the token budget; back on a
problem after a long detour, its earlier turns are read back from the ledger first (D86)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hrm.turn.state import RECALL_REACH, RECALLED_TURNS, exchange_of, shown, topic_of_turn

if TYPE_CHECKING:
    from hrm.storage.ledger import Ledger
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["attend", "topic_history"]


def attend(ctx: TurnContext) -> Outcome | None:
    went_to = ctx.hctx.topic_id
    if (
        went_to is not None
        and not ctx.topic_is_new
        and not any(shown(t) and t.get("problem") == went_to for t in ctx.state.recent)
    ):
        ctx.hctx.topic_history = topic_history(ctx.services.decisions, went_to)
    with ctx.tracer.span("attention", "assemble", "AttentionPipeline") as span:
        ctx.assembled = ctx.services.stack.assemble_context(ctx.text, ctx.hctx, ctx.problem)
        span.add_metadata("tokens", ctx.assembled.tokens)
    ctx.record.attention_state = ctx.assembled.attention_state()
    return None


def topic_history(decisions: Ledger, problem_id: str) -> list[dict[str, Any]]:
    """The last exchanges on `problem_id` in the decision ledger's last `RECALL_REACH` bytes,
    oldest first (D86): after a long detour, what was said about the problem the person came
    back to. Only the `turn` records that name it as their topic are parsed."""
    found: list[dict[str, Any]] = []
    needles = (b'"topic":' + json.dumps(problem_id).encode(), b'"kind":"turn"')
    for stored in decisions.holding_back(needles, reach=RECALL_REACH):
        if stored.kind != "turn" or topic_of_turn(stored.data) != problem_id:
            continue
        exchange = exchange_of(stored.data)
        if shown(exchange):
            found.append(exchange)
            if len(found) >= RECALLED_TURNS:
                break
    return found[::-1]
