"""Step ``altitude``: the input's level and the transition to it (001 §2.1), an event."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.turn.records import AltitudeRecord

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["altitude"]


def altitude(ctx: TurnContext) -> Outcome | None:
    governor = ctx.services.altitude
    with ctx.tracer.span("altitude", "classify_input", "AltitudeGovernor") as span:
        classification = governor.classify_input(ctx.turn_input)
        span.set_output(classification.level.value)
    before = governor.current_level
    level = classification.level
    reason = f"input classified at {level.value}"
    if level is not before and governor.transition(level, reason):
        ctx.event("altitude_transition", **{"from": before.value, "to": level.value,
                                            "reason": reason})  # fmt: skip
    ctx.record.altitude = AltitudeRecord(
        level=level.value,
        confidence=classification.confidence,
        signals=classification.signals,
        suggested_stance=classification.suggested_stance,
        allows_agents=classification.allows_agents,
        came_from=before.value,
    )
    ctx.hctx.altitude = level
    ctx.classification = classification
    return None
