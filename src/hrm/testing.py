"""Test helpers users need (STYLE §1): a scripted model adapter.

`ScriptedAdapter` is an `ILLMAdapter` that answers from a queue. A reply may block until an
event is set (so a test controls exactly when an agent finishes, without sleeping), fail with
an `HRMError`, or be computed from the call. Calls beyond the script and replies left unused
are both failures: `assert_done` raises on either, so a test cannot pass by accident.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hrm.errors import HRMError
from hrm.llm.types import (
    FINISH_STOP,
    LLMCallConfig,
    LLMResponse,
    Message,
    StreamChunk,
    estimate_tokens,
)

__all__ = ["ScriptedAdapter", "ScriptedCall", "ScriptedReply"]

Responder = Callable[[list[Message], str, "LLMCallConfig | None"], str]
"""Computes a reply's text from the call."""


@dataclass(kw_only=True)
class ScriptedReply:
    """One queued answer.

    Exactly one of ``content``, ``error`` or ``respond`` says what the call returns.
    """

    content: str | None = None
    """The text to answer with."""
    error: HRMError | None = None
    """Raise this instead of answering."""
    respond: Responder | None = None
    """Compute the answer from ``(messages, system, config)``."""
    wait_for: threading.Event | None = None
    """Block until this event is set before answering (the test decides when)."""
    wait_timeout_s: float = 30.0
    """Give up waiting after this long (a safety net so a broken test cannot hang)."""
    delay_s: float = 0.0
    """Block this long before answering (benchmarks; tests should prefer ``wait_for``)."""
    finish_reason: str = FINISH_STOP
    """Why the answer ended: ``length`` or ``repetition`` act out a model cut short."""


@dataclass(frozen=True)
class ScriptedCall:
    """One call the adapter received."""

    messages: list[Message]
    system: str
    config: LLMCallConfig | None
    started: float = field(compare=False)


class ScriptedAdapter:
    """An `ILLMAdapter` answering from a script; thread-safe.

    Args:
        replies: Answers in order: strings, `ScriptedReply`, or `HRMError` to raise.
        model: The model id it reports.
        provider: The provider name it reports.
        repeat: Answer every call with the last reply instead of failing when the script runs
            out (for benchmarks and load tests).
    """

    def __init__(
        self,
        replies: Iterable[str | ScriptedReply | HRMError] = (),
        *,
        model: str = "scripted-1",
        provider: str = "scripted",
        repeat: bool = False,
    ) -> None:
        self._model = model
        self._provider = provider
        self._repeat = repeat
        self._queue: list[ScriptedReply] = [_as_reply(r) for r in replies]
        self._last: ScriptedReply | None = self._queue[-1] if self._queue else None
        self._cond = threading.Condition()
        self.calls: list[ScriptedCall] = []
        """Every call received, in arrival order."""
        self.unexpected: list[ScriptedCall] = []
        """Calls that arrived after the script ran out."""

    def add(self, *replies: str | ScriptedReply | HRMError) -> None:
        """Queue more replies."""
        with self._cond:
            for reply in replies:
                item = _as_reply(reply)
                self._queue.append(item)
                self._last = item

    @property
    def provider(self) -> str:
        """The provider name given at construction."""
        return self._provider

    @property
    def model(self) -> str:
        """The model id given at construction."""
        return self._model

    def count_tokens(self, text: str) -> int:
        """The shared estimate."""
        return estimate_tokens(text)

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """The next scripted reply (waiting, failing or computing as scripted)."""
        call = ScriptedCall(list(messages), system, config, started=time.monotonic())
        with self._cond:
            self.calls.append(call)
            if self._queue:
                reply = self._queue.pop(0)
            elif self._repeat and self._last is not None:
                reply = self._last
            else:
                self.unexpected.append(call)
                self._cond.notify_all()
                raise HRMError.internal(
                    f"ScriptedAdapter got an unexpected call #{len(self.calls)} "
                    "(the script is empty)",
                    system=system[:80],
                )
            self._cond.notify_all()
        return self._answer(reply, messages, system, config, call.started)

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """The `chat` answer as one chunk and a final one."""
        response = self.chat(messages, system, config)
        yield StreamChunk(delta=response.content, accumulated=response.content, done=False)
        yield StreamChunk(
            delta="", accumulated=response.content, done=True,
            finish_reason=response.finish_reason,
            input_tokens=response.input_tokens, output_tokens=response.output_tokens,
        )

    def wait_for_calls(self, count: int, timeout_s: float = 10.0) -> bool:
        """Block until at least ``count`` calls arrived; ``False`` on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.calls) >= count, timeout=timeout_s)

    @property
    def remaining(self) -> int:
        """Replies not yet used."""
        with self._cond:
            return len(self._queue)

    def assert_done(self) -> None:
        """Raise `AssertionError` if a call was unexpected or a reply is left over."""
        with self._cond:
            problems = []
            if self.unexpected:
                problems.append(f"{len(self.unexpected)} unexpected call(s)")
            if self._queue:
                problems.append(f"{len(self._queue)} scripted reply(ies) never used")
        if problems:
            raise AssertionError("ScriptedAdapter: " + "; ".join(problems))

    def _answer(
        self,
        reply: ScriptedReply,
        messages: list[Message],
        system: str,
        config: LLMCallConfig | None,
        started: float,
    ) -> LLMResponse:
        if reply.wait_for is not None and not reply.wait_for.wait(reply.wait_timeout_s):
            raise HRMError.timeout("scripted reply", int(reply.wait_timeout_s * 1000))
        if reply.delay_s > 0:
            time.sleep(reply.delay_s)
        if reply.error is not None:
            raise reply.error
        if reply.respond is not None:
            content = reply.respond(messages, system, config)
        else:
            content = reply.content or ""
        prompt = estimate_tokens(system) + sum(estimate_tokens(m.content) for m in messages)
        output = estimate_tokens(content)
        return LLMResponse(
            content=content,
            model=(config.model if config is not None and config.model else self._model),
            provider=self._provider,
            input_tokens=prompt,
            output_tokens=output,
            total_tokens=prompt + output,
            finish_reason=reply.finish_reason,
            latency_ms=int((time.monotonic() - started) * 1000),
        )


def _as_reply(item: str | ScriptedReply | HRMError | Any) -> ScriptedReply:
    if isinstance(item, ScriptedReply):
        return item
    if isinstance(item, HRMError):
        return ScriptedReply(error=item)
    if isinstance(item, str):
        return ScriptedReply(content=item)
    raise HRMError.validation_failed(
        f"A scripted reply must be a string, ScriptedReply or HRMError, got {type(item).__name__}"
    )
