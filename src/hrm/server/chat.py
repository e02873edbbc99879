"""One governed chat completion: the turn, its summary, and a resent conversation's replay.

Runs in a turn thread (`StackPool.run`), never on the event loop. The client's history is not
hrm's: the last user message is the turn's input and hrm answers from its own state. A client
that resends the very same conversation within the regenerate window (a "regenerate" button,
a retry after a dropped connection) gets the turn it already caused, marked ``replayed``,
instead of a second turn — as long as that turn is still the stack's last record (D205).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hrm.errors import ErrorCode, HRMError
from hrm.pipeline import HRM, decision_of
from hrm.server.chat_request import ChatRequest
from hrm.server.extension import (
    HrmExtension,
    extension_of,
    find_turn_record,
    position_of,
    usage_of,
)

__all__ = ["ReplyCache", "TurnOutcome", "governed_turn", "provider_failure"]

# What a model call's failure means for the client: the provider, not the request, failed.
_PROVIDER_CODES = {
    ErrorCode.PROVIDER_ERROR.value: ErrorCode.PROVIDER_ERROR,
    ErrorCode.TIMEOUT.value: ErrorCode.TIMEOUT,
    ErrorCode.RATE_LIMIT.value: ErrorCode.RATE_LIMIT,
    ErrorCode.BUDGET_EXHAUSTED.value: ErrorCode.BUDGET_EXHAUSTED,
}


@dataclass(frozen=True, kw_only=True)
class TurnOutcome:
    """What one governed turn (or its replay) answers."""

    response: str
    extension: HrmExtension
    usage: dict[str, int]
    failure: HRMError | None = None
    """Set when every model call of the turn failed at the provider: the turn is recorded,
    but the client is told the provider failed (503, 429), not given an apology as an
    answer (D207)."""


@dataclass(frozen=True)
class _Reply:
    conversation_hash: str
    outcome: TurnOutcome
    at: float


class ReplyCache:
    """The last answered conversation of each stack in this process (D205). Thread-safe."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._replies: dict[str, _Reply] = {}
        self._lock = threading.Lock()

    def lookup(self, agent_class: str, conversation_hash: str) -> TurnOutcome | None:
        with self._lock:
            reply = self._replies.get(agent_class)
        if reply is None or reply.conversation_hash != conversation_hash:
            return None
        if time.monotonic() - reply.at > self.window_s:
            return None
        return reply.outcome

    def store(self, agent_class: str, conversation_hash: str, outcome: TurnOutcome) -> None:
        with self._lock:
            self._replies[agent_class] = _Reply(conversation_hash, outcome, time.monotonic())


def governed_turn(
    hrm: HRM,
    request: ChatRequest,
    *,
    replies: ReplyCache,
    on_text: Callable[[str], None] | None = None,
) -> TurnOutcome:
    """Run the request's last user message as a turn of `hrm`'s stack, or replay its turn.

    Blocking: call it in a turn thread, with the stack's slot held.
    """
    if replies.window_s > 0:
        earlier = replies.lookup(hrm.agent_class, request.conversation_hash)
        if earlier is not None and _still_last(hrm, earlier):
            return replace(earlier, extension=replace(earlier.extension, replayed=True))
    result = hrm.turn(request.text, on_text=on_text)
    # The record the turn just appended, as the runner got it back; read from the ledger's
    # end only for a result without it (a tenth of a request's time, D392). Its decision is
    # the one the decisions API serves, already JSON: `to_dict` would copy the record anew.
    stored = decision_of(result.record.data) if result.record is not None else None
    decision: dict[str, Any] = stored or result.to_dict()["decision"]
    number = int(decision.get("turn") or 0)
    record = result.record or find_turn_record(hrm.decisions, number)
    if record is None:
        raise HRMError.internal(
            f"turn {number} of {hrm.agent_class} was answered but its record is not at the end "
            f"of {hrm.decisions.path}; `hrm ledger verify` checks the ledger"
        )
    extension = extension_of(
        decision, action=result.action, asked=result.asked,
        position=position_of(record, hrm.home.root, hrm.decisions.path),
        policy=hrm.config.policy,
    )
    failure = provider_failure(decision)
    outcome = TurnOutcome(
        response=result.response, extension=extension, usage=usage_of(decision), failure=failure
    )
    if failure is None and replies.window_s > 0:
        replies.store(hrm.agent_class, request.conversation_hash, outcome)
    return outcome


def _still_last(hrm: HRM, earlier: TurnOutcome) -> bool:
    """Whether the replayed turn is still the stack's last record: nothing happened since."""
    last = hrm.decisions.last()
    return last is not None and (last.seq, last.hash) == (
        earlier.extension.ledger.seq, earlier.extension.ledger.hash
    )


def provider_failure(decision: dict[str, Any]) -> HRMError | None:
    """The provider's error when the turn called a model and every call failed, else None."""
    calls = [
        wo for wo in decision.get("work_orders") or []
        if isinstance(wo, dict) and wo.get("type") == "llm_call"
    ]
    if not calls or any(wo.get("outcome") == "ok" for wo in calls):
        return None
    last = calls[-1]
    code = _PROVIDER_CODES.get(str(last.get("error_code")))
    if code is None:
        return None
    where = f"{last.get('provider')}/{last.get('model')}"
    return HRMError(
        code,
        f"The model provider failed for this turn ({where}: {last.get('error') or code.value}); "
        f"the turn is recorded as turn {decision.get('turn')} of {decision.get('agent_class')}, "
        "retry when the provider is back",
        recoverable=True,
        retry_after_ms=1000 if code is ErrorCode.RATE_LIMIT else None,
    )
