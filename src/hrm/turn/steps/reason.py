"""Step ``reason``: classification, patterns from Learning, strategy, escalation, candidates
and one selected action with its fallback (001 §3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hrm.turn.records import CandidateRecord, EscalationStep, SelectedRecord, jsonable

if TYPE_CHECKING:
    from hrm.reasoning.types import PatternMatch
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["PATTERNS_KEPT", "kept_patterns", "reason"]

PATTERNS_KEPT = 3
"""Matched patterns a turn's record lists, best first (D330). What reads them: the strategy
selector acts on the best match and de-escalation on the strongest cheaper one, both named in
the record's strategy; `/why` and the server show the pattern that decided. Three keeps the
decider and its nearest rivals; the rest are counted (`patterns_matched`)."""


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
    # record for each repeated them (D315). More match as a person's patterns accumulate, so
    # the record keeps the best few and the one that decided, and counts them all (D330).
    record.patterns = kept_patterns(reasoning.patterns, reasoning.strategy.pattern_id)
    record.patterns_matched = len(reasoning.patterns)
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
        # The turn record holds the step (``escalation_events``): no record of its own (D331).
        record.escalations.append(step)
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


def kept_patterns(matches: list[PatternMatch], decided_by: str | None) -> list[dict[str, Any]]:
    """The `PATTERNS_KEPT` best matches (they come best first), and the pattern that chose
    or pulled the strategy when it is not among them: a record whose size does not grow
    with the number of patterns learned."""
    kept = matches[:PATTERNS_KEPT]
    if decided_by and all(m.pattern_id != decided_by for m in kept):
        kept += [m for m in matches[PATTERNS_KEPT:] if m.pattern_id == decided_by][:1]
    return [jsonable(m) for m in kept]
