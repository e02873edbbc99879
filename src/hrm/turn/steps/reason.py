"""Step ``reason``: classification, patterns from Learning, strategy, escalation, candidates
and one selected action with its fallback (001 §3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.records import CandidateRecord, EscalationStep, SelectedRecord, jsonable

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["reason"]


def reason(ctx: TurnContext) -> Outcome | None:
    services, record = ctx.services, ctx.record
    with ctx.tracer.span("reasoning", "reason", "ReasoningRouter") as span:
        reasoning = services.router.reason(
            ctx.turn_input, stance=services.stance, context=ctx.hctx,
            conflict_hint=ctx.signals.conflict_level,
        )
        span.set_output(f"{reasoning.strategy.strategy} -> {reasoning.selected.primary.id}")
    ctx.reasoning = reasoning
    record.classification = jsonable(reasoning.classification)
    # The matched patterns (id and confidence) are in the turn record; a ``pattern_matched``
    # record for each repeated them, several a turn, and nothing read those (D315).
    record.patterns = [jsonable(p) for p in reasoning.patterns]
    record.strategy = jsonable(reasoning.strategy)
    if reasoning.request is not None:
        record.strategy["request"] = reasoning.request.to_record()
    if reasoning.route is not None:
        record.strategy["route"] = reasoning.route.to_record()
    escalation = record.escalation
    if escalation is not None:
        escalation.score = reasoning.escalation_score
        escalation.escalated = reasoning.escalated
        escalation.deescalated = reasoning.deescalated
        escalation.level = reasoning.routing.escalation_level
        escalation.reasoned = True
    if reasoning.escalated or reasoning.deescalated:
        step = EscalationStep(
            kind="escalation" if reasoning.escalated else "deescalation",
            strategy=reasoning.rule_strategy or reasoning.strategy.strategy,
            level=reasoning.routing.escalation_level,
            score=reasoning.escalation_score,
            reason=reasoning.strategy.reason,
        )
        record.escalations.append(step)
        ctx.event("escalation", **step.to_record())
    record.candidates = [
        CandidateRecord(id=c.id, action_type=c.action_type, description=c.description)
        for c in reasoning.candidates
    ]
    selected = reasoning.selected
    record.selected = SelectedRecord(
        id=selected.primary.id,
        action_type=selected.primary.action_type,
        rationale=selected.rationale,
        priority_score=selected.priority_score,
        fallback=None if selected.fallback is None else selected.fallback.id,
        use_voting=selected.use_voting,
        batch=None
        if not selected.is_batch() or selected.batch is None
        else [c.id for c in selected.batch],
    )
    ctx.notes += reasoning.notes
    return None
