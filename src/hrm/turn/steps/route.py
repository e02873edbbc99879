"""Step ``route``: what the routing table's pick needs before Focus governs it (issue 33, D264).

A plan runs under a commitment: when the table picked ``execute_plan`` and no commitment is
active, one is made on the problem in focus, and making it moves the stance to execution
through the COMMITMENT gate, so a multi-step request runs the 002 plan engine from an ordinary
turn in whatever stance the conversation is in. A row may name a stance to enter first
(perspectives wanted while the problem is being made sense of: discovery, through the FRAMING
gate). Every move goes through its gate and a refused one changes nothing; Focus then governs
the action as always, and falls back, saying so. An active commitment is never replaced: one
the person made, or a plan's, wins over the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.types import GateType

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["route"]


def route(ctx: TurnContext) -> Outcome | None:
    routed = ctx.reasoning.route
    if routed is None or ctx.reasoning.selected.primary.id != routed.candidate_id:
        return None
    focus = ctx.services.focus
    problem = focus.problem_registry.get_active()
    if routed.enter is not None and focus.stance.get_current() is not routed.enter:
        move = focus.stance.attempt(
            routed.enter,
            routed.describe(),
            GateType.FRAMING,
            {"problem_id": problem.id if problem is not None else None},
        )
        event = move.event()
        ctx.event(event["event_type"], **event["payload"])
        if move.success:
            ctx.record.notes.append(f"stance: {move.from_stance.value} -> {routed.enter.value}")
    if not routed.commit or problem is None or focus.commitments.get_active() is not None:
        return None
    # The commitment's turns bound the plan's step budget (002 TTL, `hrm.plans.depth`): a
    # shorter lease would cut every plan of more steps short, so it gets the longest allowed;
    # a delivered plan completes it at once (D264).
    turns = ctx.services.config.max_commitment_turns
    description = f"plan: {ctx.text[:60]}".strip()
    ctx.events_of(focus.commit(description, turns))
    ctx.record.notes.append(f"commitment created: {description!r} for {turns} turn(s)")
    return None
