"""One governed chat completion: the turn, its summary, and a resent conversation's replay.

Runs in a turn thread (`StackPool.run`), never on the event loop. The client's history is not
hrm's: the last user message is the turn's input and hrm answers from its own state. A client
that resends the very same conversation within the regenerate window (a "regenerate" button,
a retry after a dropped connection) gets the turn it already caused, marked ``replayed``,
instead of a second turn — as long as that turn is still the stack's last record (D205). The
last reply of each stack is kept on the home as well, so that a resend still finds it after
the server (or the worker that ran the turn) was restarted.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hrm._atomic import atomic_write
from hrm._private import make_private_dirs
from hrm.errors import ErrorCode, HRMError
from hrm.home import stack_dirname
from hrm.pipeline import HRM, decision_of
from hrm.scrubbing import scrub_text
from hrm.server.chat_request import ChatRequest
from hrm.server.extension import (
    HrmExtension,
    extension_of,
    find_turn_record,
    position_of,
    usage_of,
)
from hrm.storage.ledger import LedgerRecord

__all__ = ["ReplyCache", "TurnOutcome", "governed_turn", "provider_failure", "reply_dir"]

logger = logging.getLogger(__name__)

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


def reply_dir(home_root: Path) -> Path:
    """Where the last reply of each stack is kept: ``<home>/server/replies/<stack>.json``."""
    return home_root / "server" / "replies"


@dataclass(frozen=True)
class _Reply:
    conversation_hash: str
    seq: int
    hash: str
    """The turn record's position: a replay is allowed only while it is the stack's last."""
    at: float
    """When it was answered, in seconds since the epoch (a restarted process reads it too)."""
    response: str
    outcome: TurnOutcome | None = None
    """The outcome itself in the process that answered; None when read back from the file, then
    rebuilt from the turn's record."""


class ReplyCache:
    """The last answered conversation of each stack (D205). Thread-safe.

    Kept in memory and, with `directory`, in one small file per stack there, so that a resend
    after a restart — a client retrying once the server is back, a turn whose worker died
    after it was recorded — is still recognised. The file holds the conversation's hash, the
    turn record's position and the answer (scrubbed, as everything hrm writes; the ledger keeps
    only the answer's first part); the rest is rebuilt from the turn's record. This process
    reads each stack's file once, on its first request: after that it knows the stack's last
    reply itself.

    The file is written by one thread of its own, not the turn's: a write costs half a
    millisecond on a slow disk, and a turn is answered in a few. Only each stack's latest
    reply waits to be written, without fsync; `close` writes what waits. Losing it to a crash
    costs a replay, never a turn.
    """

    def __init__(self, window_s: float, *, directory: Path | None = None) -> None:
        self.window_s = window_s
        self.directory = directory
        self._replies: dict[str, _Reply | None] = {}
        self._unwritten: dict[str, _Reply] = {}
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="hrm-replies")

    def lookup(self, agent_class: str, conversation_hash: str) -> _Reply | None:
        """The stack's last reply if it answered this conversation within the window."""
        with self._lock:
            if agent_class not in self._replies:
                self._replies[agent_class] = self._read(agent_class)
            reply = self._replies[agent_class]
        if reply is None or reply.conversation_hash != conversation_hash:
            return None
        if time.time() - reply.at > self.window_s:
            return None
        return reply

    def store(self, agent_class: str, conversation_hash: str, outcome: TurnOutcome) -> None:
        position = outcome.extension.ledger
        reply = _Reply(
            conversation_hash, position.seq, position.hash, time.time(), outcome.response,
            outcome,
        )
        with self._lock:
            self._replies[agent_class] = reply
            if self.directory is None:
                return
            waiting = agent_class in self._unwritten
            self._unwritten[agent_class] = reply
        if not waiting:  # one write per stack at a time: it takes the latest reply
            self._writer.submit(self._write, agent_class)

    def close(self) -> None:
        """Write every reply still waiting, then stop the writer."""
        self._writer.shutdown(wait=True)

    def _path(self, agent_class: str) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / f"{stack_dirname(agent_class)}.json"

    def _read(self, agent_class: str) -> _Reply | None:
        path = self._path(agent_class)
        if path is None:
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return _Reply(
                str(data["conversation_hash"]), int(data["seq"]), str(data["hash"]),
                float(data["at"]), str(data["response"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:  # cut short by a crash
            logger.debug("the last reply of %s in %s cannot be read: %s", agent_class, path, exc)
            return None

    def _write(self, agent_class: str) -> None:
        with self._lock:
            reply = self._unwritten.pop(agent_class, None)
        path = self._path(agent_class)
        if reply is None or path is None:
            return
        data = {
            "conversation_hash": reply.conversation_hash, "seq": reply.seq, "hash": reply.hash,
            "at": reply.at, "response": scrub_text(reply.response),
        }
        try:
            make_private_dirs(path.parent)
            atomic_write(path, json.dumps(data, ensure_ascii=False), durable=False)
        except OSError as exc:  # the turn is answered and recorded: only a replay is lost
            logger.warning(
                "the reply of %s could not be kept for a resend after a restart (%s): %s",
                agent_class, path, exc,
            )


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
        replayed = _replay(hrm, replies, request.conversation_hash)
        if replayed is not None:
            return replayed
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


def _replay(hrm: HRM, replies: ReplyCache, conversation_hash: str) -> TurnOutcome | None:
    """The earlier turn of this very conversation, marked replayed, while its record is still
    the stack's last (nothing happened since); else None."""
    earlier = replies.lookup(hrm.agent_class, conversation_hash)
    if earlier is None:
        return None
    last = hrm.decisions.last()
    if last is None or last.kind != "turn" or (last.seq, last.hash) != (earlier.seq, earlier.hash):
        return None
    outcome = earlier.outcome or _outcome_of(hrm, last, earlier.response)
    return replace(outcome, extension=replace(outcome.extension, replayed=True))


def _outcome_of(hrm: HRM, record: LedgerRecord, response: str) -> TurnOutcome:
    """The outcome of a recorded turn, rebuilt from its record as `governed_turn` built it."""
    decision = decision_of(record.data) or {}
    extension = extension_of(
        decision, action=str(record.data.get("action") or ""),
        asked=bool(record.data.get("asked")),
        position=position_of(record, hrm.home.root, hrm.decisions.path),
        policy=hrm.config.policy,
    )
    return TurnOutcome(response=response, extension=extension, usage=usage_of(decision))


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
