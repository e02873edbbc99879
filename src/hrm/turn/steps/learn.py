"""Step ``learn``: what the work changed commits together — a delivered plan or bundle
completes the commitment hrm made, the evaluation may move altitude (001 §2.3), and Learning
strengthens, weakens or creates patterns (001 §5).

One transaction holds the delivery, the evaluation's consequences and the learning, with
Focus's deferred bookkeeping (progress stamp, lease tick, stance count: D32) first in it: they
land together or not at all, in one commit, after the model call, so no write lock is held
while a model answers. A rollback may undo pattern changes the pattern store already cached,
so its cache is dropped then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hrm.turn.records import jsonable

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["learn"]

_LEARNED_FROM = ("respond", "execute", "delegate")
"""Actions whose outcome teaches Learning something about the routing that chose them."""


def learn(ctx: TurnContext) -> Outcome | None:
    services = ctx.services
    with _consequences(services):
        if ctx.outcome.delivered:
            ctx.events_of(services.focus.record_delivery(complete=True))
        with ctx.tracer.span("altitude", "evaluate_result", "AltitudeEvaluator"):
            evaluation = services.evaluator.evaluate_result(ctx.outcome.result,
                                                            ctx.outcome.plan)  # fmt: skip
        ctx.record.evaluation = jsonable(evaluation)
        _move_altitude(ctx, evaluation)
        ctx.state.failure_streak = services.evaluator.failure_streak
        ctx.state.altitude = services.altitude.current_level.value
        if ctx.action.action_type in _LEARNED_FROM:
            _record_outcome(ctx, evaluation)
    return None


@contextlib.contextmanager
def _consequences(services: Any) -> Iterator[None]:
    try:
        with services.db.transaction():
            yield
    except BaseException:
        services.feedback.store.refresh()
        raise


def _move_altitude(ctx: TurnContext, evaluation: Any) -> None:
    governor = ctx.services.altitude
    new_level = ctx.services.evaluator.should_transition(evaluation, governor.current_level)
    if new_level is None or new_level is governor.current_level:
        return
    from_level = governor.current_level
    if governor.transition(new_level, "evaluation of the result"):
        ctx.event("altitude_transition", **{"from": from_level.value, "to": new_level.value,
                                            "reason": "evaluation of the result"})  # fmt: skip


def _record_outcome(ctx: TurnContext, evaluation: Any) -> None:
    state, reasoning, loop = ctx.state, ctx.reasoning, ctx.services.feedback
    signal = {**reasoning.classification.signature(), "session_id": state.session_id}
    routing = {
        "strategy": reasoning.strategy.strategy,
        "pattern_match": reasoning.routing.pattern_match,
        "action": ctx.action.action_type,
    }
    outcome = {
        "success": evaluation.success,
        "turn_number": ctx.record.turn,
        "quality": evaluation.quality_score,
    }
    with ctx.tracer.span("learning", "record_outcome", "FeedbackLoop"):
        loop.record_outcome(signal, routing, outcome, session_id=state.session_id)
    # The pattern changes are the record's ``learning``; no record of their own (D331).
    for le in loop.last_events:
        ctx.record.learning.append({"event_type": le.event_type, **le.payload})
    state.last_signal, state.last_routing = signal, routing
