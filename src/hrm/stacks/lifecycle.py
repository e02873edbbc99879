"""Stack lifecycle (004 §8): creation, active, teardown, recovery, and degradation.

The factory records ``stack_created`` and `CognitiveStack.teardown` records ``stack_teardown``
in the governance ledger. This module adds what the other phases need:

* `provision` and `record_teardown` — creation and explicit deactivation from the command line,
  without running a model (partitions initialised and guarded, templates validated; nothing is
  ever deleted).
* `recover` — a new session of an agent class rebuilds its context from ledger queries only
  (Invariant #3: agents READ, they do not remember) and records ``stack_recovered``.
* `degrade` — when the supervisor (HO2) fails, the turn falls back to one direct model call
  through the gateway with a minimal system prompt, and a ``degradation`` record lands in HO1m,
  so a degraded answer is never silent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.home import HRMHome, initialize, stack_dirname
from hrm.stacks.visibility import guard_partitions
from hrm.storage.ledger import Ledger

if TYPE_CHECKING:
    from hrm.config import HRMConfig
    from hrm.stacks.factory import CognitiveStack

__all__ = [
    "LIFECYCLE_KINDS",
    "MINIMAL_SYSTEM_PROMPT",
    "DirectCall",
    "RecoveryReport",
    "degrade",
    "direct_call",
    "lifecycle_events",
    "provision",
    "record_teardown",
    "recover",
]

logger = logging.getLogger(__name__)

MINIMAL_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the person's message directly, briefly and honestly."
)
"""The system prompt of a degraded turn: no assembled context, since assembling it failed."""

LIFECYCLE_KINDS = ("stack_created", "stack_recovered", "stack_teardown")
"""Governance-ledger record kinds that mark a stack's lifecycle phases."""

_MAX_DIRECT_INPUT = 8_000


@dataclass(frozen=True)
class DirectCall:
    """One model call made straight through a stack's gateway."""

    reply: str
    wo_id: str | None
    """The work order the gateway recorded in HO1m (None if nothing was recorded)."""
    error: HRMError | None = None


def direct_call(
    stack: CognitiveStack,
    text: str,
    *,
    system: str,
    purpose: str,
    max_tokens: int | None = None,
) -> DirectCall:
    """Call the model through the stack's gateway (so HO1m gets a work order); never raises."""
    from hrm.llm import LLMCallConfig, Message

    before = stack.execution_ledger.last()
    try:
        response = stack.gateway.chat(
            [Message(role="user", content=text[:_MAX_DIRECT_INPUT])],
            system,
            LLMCallConfig(purpose=purpose, max_tokens=max_tokens),
        )
        reply, error = str(response.content or ""), None
    except HRMError as exc:
        reply, error = "", exc
    after = stack.execution_ledger.last()
    wo_id = None
    if after is not None and (before is None or after.seq != before.seq):
        wo_id = after.data.get("wo_id")
    return DirectCall(reply, None if wo_id is None else str(wo_id), error)


def degrade(
    stack: CognitiveStack, turn_input: Any, error: HRMError
) -> tuple[str, dict[str, Any]]:
    """Answer a turn whose supervisor failed with a direct model call; record it in HO1m.

    Args:
        stack: The stack whose HO2 failed.
        turn_input: The turn (`TurnInput` or anything with ``text``; a plain string works).
        error: Why HO2 failed (budget exhausted, an unrecoverable error...).

    Returns:
        ``(response, record)``: the answer to show, and the ``degradation`` record as appended
        to HO1m (with its ``seq`` and ``hash``). When the direct call fails as well (a spent
        budget refuses it too), the response says so plainly. Never raises for either failure.
    """
    text = str(getattr(turn_input, "text", turn_input))
    call = direct_call(stack, text, system=MINIMAL_SYSTEM_PROMPT, purpose="degraded_direct")
    record: dict[str, Any] = {
        "wo_id": new_id("wo"),
        "type": "degradation",
        "reason": error.code.value,
        "error": error.message,
        "recoverable": error.recoverable,
        "fallback": "direct_llm_call",
        "llm_wo_id": call.wo_id,
        "outcome": "ok" if call.error is None and call.reply.strip() else "failed",
        "notice": f"answered by a direct model call: the supervisor failed ({error.code.value})",
    }
    if call.error is not None:
        record["fallback_error"] = call.error.to_dict()
        response = (
            f"I could not process this turn ({error.code.value}: {error.message}), and the "
            f"direct model call failed too ({call.error.code.value}: {call.error.message})."
        )
    elif not call.reply.strip():
        response = (
            f"I could not process this turn ({error.code.value}: {error.message}), and the "
            "direct model call returned nothing."
        )
    else:
        response = call.reply
    stored = stack.record_work_order("degradation", record)
    stack.execution_ledger.commit()
    logger.warning("stack %s degraded to a direct model call: %s", stack.agent_class, error)
    return response, {**stored.data, "seq": stored.seq, "hash": stored.hash}


@dataclass(frozen=True, kw_only=True)
class RecoveryReport:
    """What a new session of a stack read back from its own ledgers (004 §8 recovery)."""

    agent_class: str
    session_id: str
    """The new session."""
    previous_session_id: str | None
    sessions: int
    """Sessions recorded in HO2m before this one."""
    turns: int
    """``turn`` records in HO2m."""
    last_turn: int
    last_turn_at: str | None
    decision_records: int
    execution_records: int
    work_orders: int
    failed_work_orders: int
    degradations: int
    tokens_used: int
    recent: list[dict[str, Any]] = field(default_factory=list)
    """The last turns' inputs, actions and responses (clipped), oldest first."""

    @property
    def recovered(self) -> bool:
        """True when there was prior state to read (otherwise this is a first session)."""
        return self.decision_records > 0 or self.execution_records > 0

    def to_record(self) -> dict[str, Any]:
        """JSON-ready fields (for the governance record and ``--json`` output)."""
        return {
            "agent_class": self.agent_class,
            "session_id": self.session_id,
            "previous_session_id": self.previous_session_id,
            "sessions": self.sessions,
            "turns": self.turns,
            "last_turn": self.last_turn,
            "last_turn_at": self.last_turn_at,
            "decision_records": self.decision_records,
            "execution_records": self.execution_records,
            "work_orders": self.work_orders,
            "failed_work_orders": self.failed_work_orders,
            "degradations": self.degradations,
            "tokens_used": self.tokens_used,
            "recent": list(self.recent),
        }


def recover(stack: CognitiveStack, *, record: bool = True) -> RecoveryReport:
    """Rebuild a stack's context from its own HO2m and HO1m, and record ``stack_recovered``.

    Reads only the stack's own ledgers (its partitions guarded first) — nothing is taken from
    memory. Records made by the current session are left out, so the report describes what
    came before it. A checkpoint in memory.db means only the records since the last recovery
    are read; without a usable one, both ledgers are replayed whole (`hrm.stacks.checkpoint`,
    D310).

    Args:
        stack: A freshly created stack.
        record: Append ``stack_recovered`` to the governance ledger when there was prior state.
    """
    from hrm.stacks.checkpoint import recovery_fold

    guard_partitions(stack.home, stack.agent_class)
    current = stack.session_id
    fold = recovery_fold(stack.db, stack.agent_class, stack.decision_ledger,
                         stack.execution_ledger, current)
    report = RecoveryReport(
        agent_class=stack.agent_class, session_id=current,
        previous_session_id=fold.previous_session_id, sessions=fold.sessions, turns=fold.turns,
        last_turn=fold.last_turn, last_turn_at=fold.last_turn_at,
        decision_records=fold.decision_records, execution_records=fold.execution_records,
        work_orders=fold.work_orders, failed_work_orders=fold.failed_work_orders,
        degradations=fold.degradations, tokens_used=fold.tokens_used,
        recent=[dict(t.entry) for t in fold.recent],
    )
    if record and report.recovered:
        data = report.to_record()
        data.pop("recent")
        stack.governance_ledger.append("stack_recovered", data)
        stack.governance_ledger.commit()
    return report


def provision(home: HRMHome, agent_class: str, config: HRMConfig) -> dict[str, Any]:
    """Create a stack's partitions and record its creation, without opening a model.

    The partitions are guarded and the attention templates validated (a stack never starts
    with an invalid template), then ``stack_created`` is appended with ``source: cli``.

    Raises:
        HRMError: ``VALIDATION_FAILED`` for a bad class or template; ``VISIBILITY_DENIED`` for
            a partition that is not the stack's own.
    """
    from hrm.stacks.attention import AttentionPipeline

    initialize(home, agent_class=agent_class)
    guard_partitions(home, agent_class)
    attention = AttentionPipeline.bind(home, agent_class, config)
    data = {
        "agent_class": agent_class,
        "partition": stack_dirname(agent_class),
        "session_id": None,
        "budget_ceiling": config.stack_token_budget,
        "templates": attention.template_ids,
        "source": "cli",
    }
    with Ledger(home.governance_ledger) as gov:
        stored = gov.append("stack_created", data)
    return {**stored.data, "seq": stored.seq}


def record_teardown(
    home: HRMHome, agent_class: str, *, reason: str = "explicit deactivation"
) -> dict[str, Any]:
    """Record an explicit teardown of a stack; every ledger entry stays (004 §8).

    Raises:
        HRMError: ``NOT_FOUND`` when the stack has no partition in the home.
    """
    guard_partitions(home, agent_class)
    if agent_class not in home.stack_classes():
        raise HRMError.not_found("stack", agent_class, "`hrm stack list` shows the stacks")
    last = next((e for e in reversed(lifecycle_events(home, agent_class))
                 if e.get("session_id")), None)
    data = {
        "agent_class": agent_class,
        "session_id": None if last is None else last.get("session_id"),
        "reason": reason,
        "source": "cli",
    }
    with Ledger(home.governance_ledger) as gov:
        stored = gov.append("stack_teardown", data)
    return {**stored.data, "seq": stored.seq}


def lifecycle_events(home: HRMHome, agent_class: str | None = None) -> list[dict[str, Any]]:
    """Creation, recovery and teardown records from the governance ledger, oldest first."""
    path = home.governance_ledger
    if not path.exists():
        return []
    events: list[dict[str, Any]] = []
    with Ledger(path) as gov:
        for rec in gov.records():
            if rec.kind in LIFECYCLE_KINDS and (
                agent_class is None or rec.data.get("agent_class") == agent_class
            ):
                events.append({"kind": rec.kind, "seq": rec.seq, "ts": rec.ts, **rec.data})
    return events
