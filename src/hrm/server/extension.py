"""The ``hrm`` object every chat completion carries: why the answer is this answer.

Built from the turn's decision record as `TurnResult.to_dict` gives it — a dictionary whose
parts may gain fields as the turn loop grows — and read only through ``.get``, so a record of
another age yields a summary with a part missing, never an error. The typed records below are
the server's contract with its clients; the decision record's full shape is the decisions
API's (``/v1/hrm/turns/{n}``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from hrm.config import PolicySurface
from hrm.storage.ledger import Ledger, LedgerRecord

__all__ = [
    "ArbitrationSummary",
    "CommitmentSummary",
    "HrmExtension",
    "LedgerPosition",
    "MemoryWrite",
    "StanceSummary",
    "arbitration_band",
    "extension_of",
    "find_turn_record",
    "position_of",
    "usage_of",
]

_TAIL_READS = (1, 8, 256)
"""Records read back from the ledger's end, widening, to find a turn's own record: it is
almost always the last one (the turn lock keeps other turns of the stack out), and each record
read back is parsed and its hash checked, so the first read is of one record only."""


@dataclass(frozen=True, kw_only=True)
class LedgerPosition:
    """Where a turn's record sits: enough to find and verify it."""

    ledger: str
    """The decision ledger's path relative to the home."""
    seq: int
    hash: str


@dataclass(frozen=True, kw_only=True)
class ArbitrationSummary:
    """Which problem the input went to, and the score that decided it (001 §12.3)."""

    disposition: str | None
    """stay | switch | queue | ask."""
    score: float | None
    """The preempt score."""
    band: str | None
    """Where the score fell: ``preempt`` (at or over the auto-preempt threshold), ``ask``
    (the ask band) or ``below`` (D206)."""
    reason: str | None
    problem: dict[str, Any] | None
    """The problem the turn was about: id and title."""


@dataclass(frozen=True, kw_only=True)
class StanceSummary:
    """The stance before and after, and what the gates allowed."""

    before: str | None
    after: str | None
    allowed: str | None
    """The action type the gates let through."""
    fallback_used: bool
    denied: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CommitmentSummary:
    """The commitment in force before and after the turn (id, description, turns left)."""

    before: dict[str, Any] | None
    after: dict[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class MemoryWrite:
    """One write the turn asked for, with the write gate's verdict."""

    key: str | None
    target: str | None
    approved: bool
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class HrmExtension:
    """The decision summary of one governed turn."""

    agent_class: str
    turn: int
    session_id: str | None
    action: str
    asked: bool
    """True when the answer is a question back to the person, not the work."""
    strategy: str | None
    arbitration: ArbitrationSummary
    stance: StanceSummary
    commitment: CommitmentSummary
    memory_writes: list[MemoryWrite]
    reading: dict[str, Any] | None
    """The message's reading (intents with confidences), when the turn recorded one."""
    ledger: LedgerPosition
    trace_id: str | None
    replayed: bool = False
    """True when a resent conversation was answered from this earlier turn (D205)."""

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON data, for a response body.

        The parts that came from the decision record (problems, commitments, the reading) are
        shared, not copied: `dataclasses.asdict` deep-copied them, a tenth of a served
        request's time, for a value only ever serialised.
        """
        plain: dict[str, Any] = _plain(self)
        return plain


def _plain(value: Any) -> Any:
    # The summary's own records are dataclass instances; everything else in it is JSON data.
    names = getattr(type(value), "__dataclass_fields__", None)
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if type(value) is list:
        return [_plain(item) for item in value]
    return value


def arbitration_band(score: float | None, policy: PolicySurface) -> str | None:
    """The band of the policy a preempt score fell in."""
    if score is None:
        return None
    if score >= policy.AUTO_PREEMPT_THRESHOLD:
        return "preempt"
    if score >= policy.ASK_BAND_LOW:
        return "ask"
    return "below"


def extension_of(
    decision: dict[str, Any],
    *,
    action: str,
    asked: bool,
    position: LedgerPosition,
    policy: PolicySurface,
) -> HrmExtension:
    """The summary of a decision record (`TurnResult.to_dict()["decision"]`)."""
    arb = _part(decision, "arbitration")
    score = arb.get("preempt_score")
    score = float(score) if isinstance(score, int | float) else None
    problem = decision.get("problem") or arb.get("candidate")
    gov = _part(decision, "governance")
    return HrmExtension(
        agent_class=str(decision.get("agent_class", "")),
        turn=int(decision.get("turn") or 0),
        session_id=decision.get("session_id"),
        action=action,
        asked=asked,
        strategy=_part(decision, "strategy").get("strategy"),
        arbitration=ArbitrationSummary(
            disposition=arb.get("disposition"), score=score,
            band=arbitration_band(score, policy), reason=arb.get("reason"),
            problem=(
                {"id": problem.get("id"), "title": problem.get("title")}
                if isinstance(problem, dict) else None
            ),
        ),
        stance=StanceSummary(
            before=decision.get("stance_before") or None,
            after=decision.get("stance_after") or None,
            allowed=gov.get("allowed_type"),
            fallback_used=bool(gov.get("fallback_used")),
            denied=[str(d) for d in gov.get("denied") or []],
        ),
        commitment=CommitmentSummary(
            before=decision.get("commitment_before"), after=decision.get("commitment_after")
        ),
        memory_writes=[
            MemoryWrite(
                key=w.get("key"), target=w.get("target"), approved=bool(w.get("approved")),
                reason=w.get("reason"),
            )
            for w in decision.get("writes") or [] if isinstance(w, dict)
        ],
        reading=decision.get("reading") if isinstance(decision.get("reading"), dict) else None,
        ledger=position,
        trace_id=decision.get("trace_id"),
    )


def usage_of(decision: dict[str, Any]) -> dict[str, int]:
    """OpenAI's ``usage`` from the turn's model calls (every call of the turn, summed)."""
    prompt = completion = 0
    for wo in decision.get("work_orders") or []:
        if isinstance(wo, dict) and wo.get("type") == "llm_call":
            prompt += int(wo.get("input_tokens") or 0)
            completion += int(wo.get("output_tokens") or 0)
    return {
        "prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def find_turn_record(ledger: Ledger, turn: int) -> LedgerRecord | None:
    """The ``turn`` record of turn number `turn`, searched from the ledger's end."""
    for count in _TAIL_READS:
        for record in reversed(ledger.tail(count)):
            if record.kind == "turn" and record.data.get("turn") == turn:
                return record
    return None


def position_of(record: LedgerRecord, home_root: Path, ledger_path: Path) -> LedgerPosition:
    """A record's position, its ledger named relative to the home."""
    return LedgerPosition(ledger=_shown(home_root, ledger_path), seq=record.seq, hash=record.hash)


@lru_cache(maxsize=256)
def _shown(home_root: Path, ledger_path: Path) -> str:
    """A ledger's path as the ``hrm`` object names it (asked once per stack, not per turn)."""
    try:
        return str(ledger_path.relative_to(home_root))
    except ValueError:
        return str(ledger_path)


def _part(decision: dict[str, Any], name: str) -> dict[str, Any]:
    value = decision.get(name)
    return value if isinstance(value, dict) else {}
