"""Step ``signals``: the governance signals of the input (001 §12.2), with the Shared Reference
as canon for contradictions. Pasted material (code, logs, data) is said in the record to have
been read as material, not as the person's words (D71)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hrm.reading.pasted import spoken
from hrm.turn.records import EscalationRecord

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, TurnContext

__all__ = ["signals"]


def signals(ctx: TurnContext) -> Outcome | None:
    text = ctx.text
    ctx.said = spoken(text)
    if ctx.said is not text:
        pasted = _lines(text) - _lines(ctx.said)
        ctx.record.notes.append(
            f"{pasted} pasted line(s) (code, logs, data) were read as material, not as the "
            "person's words: signals, preferences and arbitration's cues read the rest"
        )
    kernel = ctx.services.kernel
    with ctx.tracer.span("governance", "derive_signals", "GovernanceKernel"):
        ctx.signals = kernel.derive_signals(
            ctx.turn_input, ctx.hctx, canon=ctx.services.stack.canon()
        )
    ctx.record.escalation = EscalationRecord(signals=ctx.signals.to_record())
    found = ctx.signals.deterministic_components
    if found.get("urgency_markers") or found.get("emergency_markers"):
        reading = ctx.reading
        ctx.reading = replace(reading, cues=replace(reading.cues, urgency=True))
    return None


def _lines(text: str) -> int:
    """How many lines of `text` have something on them."""
    return sum(1 for line in text.split("\n") if line.strip())
