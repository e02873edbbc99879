"""Step ``govern``: Focus governs the selected action (001 §4) — the stance must allow it,
delegation passes the agent approval gate, irreversible high-stakes work needs a commitment.
A denial falls back, and says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.records import GovernanceRecord

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["govern"]


def govern(ctx: TurnContext) -> Outcome | None:
    services, record = ctx.services, ctx.record
    selected = ctx.reasoning.selected
    stance = services.stance
    with ctx.tracer.span("focus", "govern", "FocusHRM") as span:
        governed = services.focus.govern(selected, ctx.reasoning.classification)
        span.set_output(governed.allowed_action.id)
    ctx.events_of(governed)
    record.gate_decisions = [d.to_record() for d in governed.gate_decisions]
    action = governed.allowed_action
    ctx.action = action
    record.governance = GovernanceRecord(
        allowed=action.id,
        allowed_type=action.action_type,
        denied=governed.denied,
        fallback_used=governed.fallback_used,
        interrupt=governed.interrupt,
        stance=stance.value,
    )
    if governed.fallback_used:
        ctx.notes.append(
            f"Focus did not allow '{selected.primary.action_type}' in stance "
            f"{services.stance.value}; fell back to '{action.action_type}'"
        )
    return None
