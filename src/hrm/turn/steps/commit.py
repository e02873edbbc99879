"""Step ``commit``: a commitment on explicit commitment language ("for the next 3 turns"), or
for planned execution.

Arbitration has already moved focus to the problem a focus request is about (D54), so the
commitment is on the active problem; a request that names nothing of its own ("let's stay on
this for the next 3 turns") is described by that problem's title.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.governance.problems import extract_keywords
from hrm.reading.rules.focus import DEFAULT_TURNS, FocusRequest
from hrm.reading.types import IntentKind

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["commit"]


def commit(ctx: TurnContext) -> Outcome | None:
    focus, config = ctx.services.focus, ctx.services.config
    problem = focus.problem_registry.get_active()
    if problem is None:
        return None
    text = ctx.text
    intent = ctx.reading.first(IntentKind.FOCUS)
    request = (
        FocusRequest(intent.slots.turns, intent.slots.topic or "")
        if intent is not None and intent.confidence >= ctx.services.bands.act
        else None
    )
    if request is not None:
        turns = max(1, min(request.turns or DEFAULT_TURNS, config.max_commitment_turns))
        description = request.description
        if not extract_keywords(description):
            description = problem.title
    elif ctx.action.action_type == "execute" and focus.commitments.get_active() is None:
        turns = max(2, min(config.max_commitment_turns, 3))
        description = f"{ctx.reasoning.strategy.strategy}: {text[:60]}".strip()
    else:
        return None
    holds = request is not None and request.turns is not None
    ctx.events_of(focus.commit(description, turns, holds_focus=holds))
    ctx.record.notes.append(f"commitment created: {description!r} for {turns} turn(s)")
    return None
