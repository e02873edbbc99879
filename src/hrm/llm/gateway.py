"""The gateway around every adapter: retries, rate limits, token budget, cost, work orders.

`LLMGateway` is the syntactic kernel's model client (ARCHITECTURE §1, 004 KERNEL.syntactic). It
satisfies `ILLMAdapter` itself, so components receive a gateway where the spec says adapter and
never know the difference. Per call it:

1. refuses a prompt longer than ``max_input_tokens`` (``TOKEN_LIMIT``) and a call that would
   overrun the stack's token budget (``BUDGET_EXHAUSTED``) — before spending anything;
2. waits for the requests- and tokens-per-minute buckets (bounded by ``max_wait_ms``);
3. calls the adapter, retrying by `RetryPolicy` (rate limits, timeouts, 5xx), honouring
   ``retry-after``;
4. charges the tokens to the budget and the cost to the session, warning once past
   ``cost_alert_threshold``;

With a `UsageSource` (a stack's gateway has one over its execution ledger), the budget, the
cost alert and the rate limits count what the whole session spent, in every process that
served it, not only this gateway's calls: `hrm turn` is a process per turn (D280, D281).
5. appends one ``work_order`` record (model, tokens, latency, cost, outcome, attempts — never
   the prompt, the answer or a key) through the injected ``record`` callable, failed calls
   included.

A stream is retried only until its first chunk arrives: after that, retrying would repeat
text the caller already showed.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm._turn_slot import TURN_SLOT
from hrm.errors import ErrorCode, HRMError
from hrm.llm._ratelimit import TokenBucket, window_wait_ms
from hrm.llm._retry import RetryPolicy
from hrm.llm.types import (
    ILLMAdapter,
    LLMCallConfig,
    LLMResponse,
    Message,
    StreamChunk,
    prompt_tokens,
)
from hrm.scrubbing import scrub, scrub_text

if TYPE_CHECKING:
    from hrm.config import LLMConfig
    from hrm.llm.session_usage import SessionUsage, UsageSource

__all__ = ["IN_PROCESS_PROVIDERS", "LLMGateway", "RecordFn"]

logger = logging.getLogger(__name__)

RecordFn = Callable[[str, dict[str, Any]], Any]
"""Appends one record ``(kind, data)`` to the stack's execution ledger (HO1m)."""

IN_PROCESS_PROVIDERS = frozenset({"offline", "local"})
"""Providers with no remote quota: `LLMGateway.from_config` applies no rate limits to them."""

_WORK_ORDER = "work_order"
_COST_ALERT = "cost_alert"


@dataclass
class _WorkOrder:
    """What the gateway learns about one call while it runs; recorded once at the end."""

    provider: str
    model: str
    purpose: str | None
    started: float
    wo_id: str = field(default_factory=lambda: new_id("wo"))
    attempts: int = 0
    recorded: bool = False
    streamed: bool = False


class LLMGateway:
    """Wraps an `ILLMAdapter` with one retry policy, limits, a budget, costs and records.

    Args:
        adapter: The provider to call.
        retry: The retry policy (default: 3 retries from 1 s, on rate limits, timeouts, 5xx).
        requests_per_minute: Request rate limit; ``None`` for none.
        tokens_per_minute: Token rate limit (prompt estimate, then actual usage); ``None``.
        max_wait_ms: Longest the gateway waits for a rate-limit bucket before failing with
            ``RATE_LIMIT`` instead.
        budget_tokens: The stack's token budget; ``None`` for unlimited.
        pricing: ``input_per_1k`` / ``output_per_1k`` for cost tracking.
        track_costs: Whether to add up costs at all.
        cost_alert_threshold: Session cost past which one warning and one ``cost_alert``
            record are emitted; ``None`` for no alert.
        record: Appends ``(kind, data)`` to the execution ledger; ``None`` records nothing.
        usage: What the session spent in every process (`hrm.llm.session_usage`); with it,
            ``budget_tokens`` bounds the session and the alert and limits count it all.
        agent_class: The stack the gateway serves, written into each record.
        sleep: Blocks for the given seconds (injected so tests never wait).
        clock: Monotonic seconds, for rate limits and latency.
        rng: Jitter source for backoff.
    """

    def __init__(
        self,
        adapter: ILLMAdapter,
        *,
        retry: RetryPolicy | None = None,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        max_wait_ms: int = 60_000,
        budget_tokens: int | None = None,
        pricing: Mapping[str, float] | None = None,
        track_costs: bool = True,
        cost_alert_threshold: float | None = None,
        record: RecordFn | None = None,
        usage: UsageSource | None = None,
        agent_class: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if budget_tokens is not None and budget_tokens < 0:
            raise HRMError.validation_failed(
                f"budget_tokens must not be negative, got {budget_tokens}"
            )
        self.adapter = adapter
        self.retry = retry or RetryPolicy()
        self.max_wait_ms = max_wait_ms
        self.budget_tokens = budget_tokens
        self.pricing = dict(pricing or {})
        self.track_costs = track_costs
        self.cost_alert_threshold = cost_alert_threshold
        self.agent_class = agent_class
        self._record = record
        self.usage_source = usage
        self._requests_per_minute = requests_per_minute
        self._tokens_per_minute = tokens_per_minute
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._requests = (
            TokenBucket(requests_per_minute, clock=clock, name="requests_per_minute")
            if requests_per_minute
            else None
        )
        self._tokens = (
            TokenBucket(tokens_per_minute, clock=clock, name="tokens_per_minute")
            if tokens_per_minute
            else None
        )
        self._lock = threading.Lock()
        self._tokens_used = 0
        self._session_cost = 0.0
        self._calls = 0
        self._alerted = False

    @classmethod
    def from_config(
        cls,
        adapter: ILLMAdapter,
        config: LLMConfig,
        *,
        budget_tokens: int | None = None,
        record: RecordFn | None = None,
        usage: UsageSource | None = None,
        agent_class: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> LLMGateway:
        """A gateway with 001 §11.4's retry, rate-limit and cost settings from ``config``.

        Rate limits apply only to remote providers (not `IN_PROCESS_PROVIDERS`): they protect
        a provider's quota, and an in-process model has none.
        """
        remote = adapter.provider not in IN_PROCESS_PROVIDERS
        return cls(
            adapter,
            retry=RetryPolicy.from_names(
                config.retry_on,
                max_retries=config.max_retries,
                retry_delay_ms=config.retry_delay_ms,
            ),
            requests_per_minute=config.requests_per_minute if remote else None,
            tokens_per_minute=config.tokens_per_minute if remote else None,
            budget_tokens=budget_tokens,
            pricing=config.pricing,
            track_costs=config.track_costs,
            cost_alert_threshold=config.cost_alert_threshold,
            record=record,
            usage=usage,
            agent_class=agent_class,
            sleep=sleep,
            clock=clock,
        )

    # ── ILLMAdapter ──────────────────────────────────────────────────────

    @property
    def provider(self) -> str:
        """The wrapped adapter's provider."""
        return self.adapter.provider

    @property
    def model(self) -> str:
        """The wrapped adapter's default model."""
        return self.adapter.model

    def count_tokens(self, text: str) -> int:
        """The wrapped adapter's count."""
        return self.adapter.count_tokens(text)

    def chat(
        self,
        messages: list[Message],
        system: str,
        config: LLMCallConfig | None = None,
        *,
        purpose: str | None = None,
    ) -> LLMResponse:
        """One governed chat call; see the module docstring for the steps.

        Raises:
            HRMError: ``TOKEN_LIMIT`` or ``BUDGET_EXHAUSTED`` before the call; ``RATE_LIMIT``
                when a limit would need a longer wait than ``max_wait_ms``; the adapter's
                error after the retries are spent.
        """
        call = (config or LLMCallConfig()).resolve(LLMCallConfig(purpose=purpose))
        order = self._open(call)
        try:
            estimated = self._admit(messages, system, call)
            response = self._attempts(order, estimated, messages, system, call)
        except HRMError as exc:
            self._close(order, error=exc)
            raise
        except KeyboardInterrupt:  # the person stopped it: the call still happened
            self._close(order, outcome="cancelled")
            raise
        order.model = response.model or order.model
        self._charge(response.input_tokens, response.output_tokens, estimated)
        cost = self._add_cost(response)
        self._close(
            order,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            cost=cost,
            finish_reason=response.finish_reason,
        )
        return response

    def stream(
        self,
        messages: list[Message],
        system: str,
        config: LLMCallConfig | None = None,
        *,
        purpose: str | None = None,
    ) -> Iterator[StreamChunk]:
        """A governed stream: retried until the first chunk, recorded when it ends.

        An abandoned stream (the caller stops iterating, or Ctrl-C stops the wait for the next
        piece) is recorded with outcome ``cancelled`` and the tokens seen so far.
        """
        call = (config or LLMCallConfig()).resolve(LLMCallConfig(purpose=purpose))
        order = self._open(call)
        order.streamed = True
        accumulated = ""
        final: StreamChunk | None = None
        estimated = 0
        chunks: Iterator[StreamChunk] | None = None
        try:
            estimated = self._admit(messages, system, call)
            chunks, first = self._first_chunk(order, estimated, messages, system, call)
            for chunk in _chain(first, chunks, wait=_waits(self.adapter)):
                accumulated = chunk.accumulated
                if chunk.done:
                    final = chunk
                yield chunk
        except HRMError as exc:
            self._close(order, error=exc)
            raise
        except (GeneratorExit, KeyboardInterrupt):
            # Close the provider's stream now, not when it is collected: the local model stops
            # decoding when its stream closes, and the next call waits for it until then.
            close = getattr(chunks, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    logger.warning("closing the %s stream failed", order.provider, exc_info=True)
            self._finish_stream(order, estimated, accumulated, None, outcome="cancelled")
            raise
        self._finish_stream(order, estimated, accumulated, final, outcome="ok")

    # ── accounting ───────────────────────────────────────────────────────

    @property
    def tokens_used(self) -> int:
        """Tokens charged to the budget so far (prompt and answer, as providers counted)."""
        with self._lock:
            return self._tokens_used

    @property
    def session_cost(self) -> float:
        """Cost of the calls so far, from ``pricing``."""
        with self._lock:
            return self._session_cost

    @property
    def budget_remaining(self) -> int | None:
        """Tokens left in the budget, or ``None`` when unlimited."""
        if self.budget_tokens is None:
            return None
        return max(0, self.budget_tokens - self._budget_spent())

    def usage(self) -> dict[str, Any]:
        """A snapshot for status output: calls, tokens, cost and budget — the whole session's
        (every process's) when the gateway has a usage source, else this gateway's."""
        shared = self._shared(window=False)
        with self._lock:
            snapshot: dict[str, Any] = {
                "provider": self.provider,
                "model": self.model,
                "calls": self._calls,
                "tokens_used": self._tokens_used,
                "session_cost": self._session_cost,
                "budget_tokens": self.budget_tokens,
            }
        if shared is not None:
            snapshot.update(
                session_id=shared.session_id,
                session_calls=shared.calls,
                session_tokens=shared.tokens,
                session_cost=shared.cost,
            )
        return snapshot

    def _shared(self, *, window: bool = True) -> SessionUsage | None:
        source = self.usage_source
        return source.read(window=window) if source is not None else None

    def _budget_spent(self) -> int:
        """What counts against ``budget_tokens``: the session's tokens, or this gateway's."""
        shared = self._shared(window=False)
        if shared is not None:
            return shared.tokens
        with self._lock:
            return self._tokens_used

    # ── steps ────────────────────────────────────────────────────────────

    def _open(self, call: LLMCallConfig) -> _WorkOrder:
        return _WorkOrder(
            provider=self.adapter.provider,
            model=call.model or self.adapter.model,
            purpose=call.purpose,
            started=self._clock(),
        )

    def _admit(self, messages: list[Message], system: str, call: LLMCallConfig) -> int:
        estimated = prompt_tokens(self.adapter, messages, system)
        if call.max_input_tokens is not None and estimated > call.max_input_tokens:
            raise HRMError.token_limit(
                call.max_input_tokens, estimated, provider=self.adapter.provider, side="input"
            )
        if self.budget_tokens is not None:
            used = self._budget_spent()
            needed = estimated + (call.output_limit or 0)
            if used + needed > self.budget_tokens:
                raise self._budget_error(used, needed)
        return estimated

    def _budget_error(self, used: int, needed: int) -> HRMError:
        """The refusal, in the figures that decided it (never "0 of 0 tokens used")."""
        limit = self.budget_tokens or 0
        scope = self.agent_class or "stack"
        span = "this session" if self.usage_source is not None else "this process"
        message = (
            f"Token budget of {scope} exhausted: {used:,} of {limit:,} tokens used in {span}, "
            f"and this call needs about {needed:,} more; raise `stack_token_budget` in the "
            "config, or continue in a new session"
        )
        return HRMError(
            ErrorCode.BUDGET_EXHAUSTED,
            message,
            recoverable=False,
            context={"scope": scope, "limit": limit, "used": used, "needed": needed},
        )

    def _acquire(self, estimated: int) -> None:
        waits = [0]
        if self._requests is not None:
            waits.append(self._requests.wait_ms(1))
        if self._tokens is not None:
            waits.append(self._tokens.wait_ms(estimated))
        waits += self._shared_waits(estimated)
        wait = max(waits)
        if wait > self.max_wait_ms:
            raise HRMError.rate_limit(wait, provider=self.adapter.provider, scope="local")
        if wait > 0:
            logger.info("rate limit: waiting %s ms before calling %s", wait, self.provider)
            with TURN_SLOT.released():  # a pause other stacks' turns need not share
                self._sleep(wait / 1000)
        if self._requests is not None:
            self._requests.take(1)
        if self._tokens is not None:
            self._tokens.take(estimated)

    def _shared_waits(self, estimated: int) -> list[int]:
        """The waits the last minute's calls of every process impose (D281)."""
        if self._requests is None and self._tokens is None:
            return []
        shared = self._shared()
        if shared is None:
            return []
        waits: list[int] = []
        if self._requests_per_minute:
            calls = [(at, 1.0) for at, _tokens in shared.window]
            waits.append(
                window_wait_ms(calls, shared.now, per_minute=self._requests_per_minute, amount=1)
            )
        if self._tokens_per_minute:
            tokens = [(at, float(used)) for at, used in shared.window]
            waits.append(
                window_wait_ms(
                    tokens, shared.now, per_minute=self._tokens_per_minute, amount=estimated
                )
            )
        return waits

    def _attempts(
        self,
        order: _WorkOrder,
        estimated: int,
        messages: list[Message],
        system: str,
        call: LLMCallConfig,
    ) -> LLMResponse:
        while True:
            order.attempts += 1
            self._acquire(estimated)
            try:
                response: LLMResponse = _guarded(
                    self.adapter.chat, messages, system, call, wait=_waits(self.adapter)
                )
            except HRMError as exc:
                self._back_off(order, exc)
            else:
                return response

    def _first_chunk(
        self,
        order: _WorkOrder,
        estimated: int,
        messages: list[Message],
        system: str,
        call: LLMCallConfig,
    ) -> tuple[Iterator[StreamChunk], StreamChunk | None]:
        while True:
            order.attempts += 1
            self._acquire(estimated)
            try:
                wait = _waits(self.adapter)
                chunks = iter(_guarded(self.adapter.stream, messages, system, call, wait=wait))
                return chunks, _guarded(next, chunks, None, wait=wait)
            except HRMError as exc:
                self._back_off(order, exc)

    def _back_off(self, order: _WorkOrder, error: HRMError) -> None:
        delay = self.retry.delay_ms(order.attempts, error, self._rng)
        if delay is None:
            raise error
        logger.info(
            "%s call failed (%s, attempt %s); retrying in %s ms",
            order.provider,
            error.code.value,
            order.attempts,
            delay,
        )
        with TURN_SLOT.released():
            self._sleep(delay / 1000)

    def _charge(self, input_tokens: int, output_tokens: int, estimated: int) -> None:
        with self._lock:
            self._tokens_used += input_tokens + output_tokens
        if self._tokens is not None:
            extra = input_tokens - estimated + output_tokens
            if extra >= 0:
                self._tokens.take(extra)
            else:
                self._tokens.give_back(-extra)

    def _add_cost(self, response: LLMResponse) -> float:
        if not self.track_costs or not self.pricing:
            return 0.0
        cost = response.cost_estimate(self.pricing)
        # The session's earlier calls, every process's, are in the ledger; this one is not
        # recorded yet, so it is added here (D280).
        shared = self._shared(window=False) if self.cost_alert_threshold is not None else None
        with self._lock:
            self._session_cost += cost
            total = self._session_cost if shared is None else shared.cost + cost
            calls = self._calls + 1 if shared is None else shared.calls + 1
            # Once per session: the ledger says whether any process alerted in this one.
            alerted = self._alerted if shared is None else shared.alerted
            crossed = (
                self.cost_alert_threshold is not None
                and total >= self.cost_alert_threshold
                and not alerted
            )
            if crossed:
                self._alerted = True
        if crossed:
            self._alert(total, calls, response.model)
        return cost

    def _alert(self, total: float, calls: int, model: str) -> None:
        threshold = self.cost_alert_threshold or 0.0
        logger.warning(
            "session LLM cost %.4f over %s calls crossed the alert threshold %.4f (%s)",
            total,
            calls,
            threshold,
            self.agent_class or "stack",
        )
        self._emit(
            _COST_ALERT,
            {
                "session_cost": round(total, 6),
                "threshold": threshold,
                "calls": calls,
                "provider": self.provider,
                "model": model,
                "agent_class": self.agent_class,
                "message": (
                    f"This session's model calls have cost {total:.4f} over {calls} calls, "
                    f"past the alert threshold of {threshold:.4f} (llm.cost_alert_threshold)"
                ),
            },
        )

    def _finish_stream(
        self,
        order: _WorkOrder,
        estimated: int,
        accumulated: str,
        final: StreamChunk | None,
        *,
        outcome: str,
    ) -> None:
        input_tokens = estimated
        output_tokens = self.adapter.count_tokens(accumulated) if accumulated else 0
        if final is not None and final.input_tokens is not None:
            input_tokens = final.input_tokens
        if final is not None and final.output_tokens is not None:
            output_tokens = final.output_tokens
        self._charge(input_tokens, output_tokens, estimated)
        response = LLMResponse(
            content=accumulated,
            model=order.model,
            provider=order.provider,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            finish_reason=_stream_finish(final, outcome),
            latency_ms=0,
        )
        cost = self._add_cost(response)
        self._close(
            order,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost=cost,
            finish_reason=response.finish_reason,
            outcome=outcome,
        )

    def _close(
        self,
        order: _WorkOrder,
        *,
        error: HRMError | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost: float = 0.0,
        finish_reason: str | None = None,
        outcome: str = "ok",
    ) -> None:
        if order.recorded:
            return
        order.recorded = True
        with self._lock:
            self._calls += 1
        data: dict[str, Any] = {
            "wo_id": order.wo_id,
            "type": "llm_call",
            "provider": order.provider,
            "model": order.model,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "latency_ms": int((self._clock() - order.started) * 1000),
            "cost": round(cost, 8),
            "outcome": "error" if error is not None else outcome,
            "error_code": error.code.value if error is not None else None,
            "attempts": order.attempts,
            "finish_reason": finish_reason,
        }
        if error is not None:
            data["error"] = scrub_text(error.message)
            data["recoverable"] = error.recoverable
        if self.agent_class is not None:
            data["agent_class"] = self.agent_class
        if order.purpose is not None:
            data["purpose"] = order.purpose
        if order.streamed:
            data["streamed"] = True
        if self._record is not None:
            # Only these fields can hold caller- or provider-supplied text; the rest are ids,
            # numbers and fixed words (scrub_text memoises short texts like these).
            for key in ("provider", "model", "agent_class", "purpose"):
                if isinstance(data.get(key), str):
                    data[key] = scrub_text(data[key])
            self._record(_WORK_ORDER, data)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        if self._record is not None:
            self._record(kind, scrub(data))


def _stream_finish(final: StreamChunk | None, outcome: str) -> str:
    if final is not None and final.finish_reason:
        return final.finish_reason
    return "stop" if outcome == "ok" else outcome


def _chain(
    first: StreamChunk | None, rest: Iterator[StreamChunk], *, wait: bool
) -> Iterator[StreamChunk]:
    if first is None:
        return
    yield first
    while True:
        chunk = _guarded(next, rest, None, wait=wait)
        if chunk is None:
            return
        yield chunk


def _waits(adapter: ILLMAdapter) -> bool:
    """Is a call into `adapter` a wait other turns can use (network, C code that lets the
    interpreter lock go), not Python computing throughout (`python_bound`, the offline model)?"""
    return getattr(adapter, "python_bound", False) is not True


def _guarded(function: Callable[..., Any], *args: Any, wait: bool = True) -> Any:
    """Call into an adapter; a foreign exception becomes ``INTERNAL_ERROR`` (never retried).

    A call that `wait`s lets the turn slot go (other turns run meanwhile); a Python-bound one
    keeps it: letting it go would only hand the interpreter lock to another turn and back.
    """
    try:
        if not wait:
            return function(*args)
        with TURN_SLOT.released():  # the model's time is a wait: other turns run meanwhile
            return function(*args)
    except HRMError:
        raise
    except Exception as exc:
        raise HRMError.internal(
            f"LLM adapter raised {type(exc).__name__}: {scrub_text(str(exc))}",
            exception=type(exc).__name__,
        ) from exc
