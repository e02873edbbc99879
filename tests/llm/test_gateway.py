"""The gateway: one retry policy, rate limits, token budget, cost alert, one record per call."""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import (
    ILLMAdapter,
    LLMCallConfig,
    LLMGateway,
    LLMResponse,
    Message,
    OfflineAdapter,
    RetryPolicy,
)

MESSAGES = [Message(role="user", content="hello there")]


def make_gateway(adapter: Any, clock: Any, ledger: Any, **options: Any) -> LLMGateway:
    return LLMGateway(
        adapter,
        record=ledger,
        sleep=clock.sleep,
        clock=clock,
        rng=random.Random(7),
        **options,
    )


def response(content: str = "fine", *, input_tokens: int = 10, output_tokens: int = 5) -> LLMResponse:
    return LLMResponse(
        content=content,
        model="scripted-1",
        provider="scripted",
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
        finish_reason="stop",
        latency_ms=3,
    )


def test_gateway_is_an_adapter(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger)
    assert isinstance(gateway, ILLMAdapter)
    assert gateway.provider == "scripted"
    assert gateway.model == "scripted-1"
    assert gateway.count_tokens("one two three") == scripted.count_tokens("one two three")


def test_success_records_one_work_order(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger, agent_class="ADMIN")
    result = gateway.chat(MESSAGES, "system", purpose="respond")
    assert result.content == "ok"
    [order] = ledger.of("work_order")
    assert order["type"] == "llm_call"
    assert order["wo_id"].startswith("wo_")
    assert order["outcome"] == "ok"
    assert order["error_code"] is None
    assert order["attempts"] == 1
    assert (order["input_tokens"], order["output_tokens"]) == (10, 5)
    assert order["provider"] == "scripted"
    assert order["model"] == "scripted-1"
    assert order["agent_class"] == "ADMIN"
    assert order["purpose"] == "respond"
    assert gateway.tokens_used == 15
    assert gateway.usage()["calls"] == 1


def test_purpose_from_call_config(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger)
    gateway.chat(MESSAGES, "s", LLMCallConfig(purpose="classification"))
    assert ledger.of("work_order")[0]["purpose"] == "classification"


def test_rate_limit_is_retried_after_the_servers_delay(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.rate_limit(2500), "after retry"]
    gateway = make_gateway(scripted, clock, ledger, retry=RetryPolicy(retry_delay_ms=100))
    assert gateway.chat(MESSAGES, "s").content == "after retry"
    assert clock.sleeps == [2.5]
    [order] = ledger.of("work_order")
    assert order["attempts"] == 2
    assert order["outcome"] == "ok"


def test_server_errors_back_off_exponentially_then_surface(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.provider_error(503, "busy") for _ in range(4)]
    policy = RetryPolicy(max_retries=3, retry_delay_ms=1000, jitter=0.0)
    gateway = make_gateway(scripted, clock, ledger, retry=policy)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value.code is ErrorCode.PROVIDER_ERROR
    assert clock.sleeps == [1.0, 2.0, 4.0]
    [order] = ledger.of("work_order")
    assert order["outcome"] == "error"
    assert order["error_code"] == "provider_error"
    assert order["attempts"] == 4
    assert order["recoverable"] is True


def test_timeouts_are_retried(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.timeout("chat", 100), "ok"]
    gateway = make_gateway(scripted, clock, ledger)
    assert gateway.chat(MESSAGES, "s").content == "ok"
    assert len(clock.sleeps) == 1


@pytest.mark.parametrize(
    "error",
    [
        HRMError.provider_error(400, "bad request"),
        HRMError.content_filtered("scripted"),
        HRMError.token_limit(10, 20),
        HRMError.validation_failed("no key"),
    ],
)
def test_permanent_errors_are_not_retried(scripted, clock, ledger, error: HRMError) -> None:
    scripted.steps = [error, "never"]
    gateway = make_gateway(scripted, clock, ledger)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value is error
    assert clock.sleeps == []
    assert ledger.of("work_order")[0]["attempts"] == 1


def test_retry_on_restricts_which_codes_retry(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.timeout("chat", 10), "ok"]
    policy = RetryPolicy.from_names(["rate_limit"], max_retries=3, retry_delay_ms=10)
    gateway = make_gateway(scripted, clock, ledger, retry=policy)
    with pytest.raises(HRMError):
        gateway.chat(MESSAGES, "s")


def test_retry_after_beyond_the_wait_bound_surfaces(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.rate_limit(10 * 60 * 1000), "never"]
    gateway = make_gateway(scripted, clock, ledger)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value.code is ErrorCode.RATE_LIMIT
    assert clock.sleeps == []


def test_foreign_exceptions_become_internal_errors_and_are_not_retried(
    scripted, clock, ledger
) -> None:
    scripted.steps = [RuntimeError("adapter bug"), "never"]
    gateway = make_gateway(scripted, clock, ledger)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert ledger.of("work_order")[0]["error_code"] == "internal_error"


def test_budget_refuses_before_calling(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger, budget_tokens=19, agent_class="ADMIN")
    gateway.chat(MESSAGES, "s")  # 15 tokens
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert caught.value.context == {"scope": "ADMIN", "limit": 19, "used": 15, "needed": 5}
    assert "15 of 19 tokens used" in caught.value.message
    assert len(scripted.calls) == 1
    refused = ledger.of("work_order")[1]
    assert refused["outcome"] == "error"
    assert refused["error_code"] == "budget_exhausted"
    assert refused["attempts"] == 0
    assert gateway.budget_remaining == 4


def test_budget_counts_the_requested_answer_length(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger, budget_tokens=100)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s", LLMCallConfig(max_tokens=200))
    assert caught.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert scripted.calls == []


def test_max_input_tokens_refuses_long_prompts(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger)
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "a long system prompt " * 20, LLMCallConfig(max_input_tokens=10))
    assert caught.value.code is ErrorCode.TOKEN_LIMIT
    assert scripted.calls == []


def test_requests_per_minute_waits_for_the_bucket(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger, requests_per_minute=2)
    for _ in range(3):
        gateway.chat(MESSAGES, "s")
    # Two requests fit the bucket; the third waits for one refill (30 s at 2 per minute).
    assert len(clock.sleeps) == 1
    assert 29.9 <= clock.sleeps[0] <= 30.1


def test_tokens_per_minute_waits_and_is_bounded(scripted, clock, ledger) -> None:
    gateway = make_gateway(
        scripted, clock, ledger, tokens_per_minute=60, max_wait_ms=5_000
    )
    scripted.steps = [response(input_tokens=50, output_tokens=50)]
    gateway.chat(MESSAGES, "s")  # spends 100 of 60: the bucket is in debt
    with pytest.raises(HRMError) as caught:
        gateway.chat(MESSAGES, "s")
    assert caught.value.code is ErrorCode.RATE_LIMIT
    assert caught.value.context["scope"] == "local"
    assert caught.value.retry_after_ms is not None and caught.value.retry_after_ms > 5_000
    assert len(scripted.calls) == 1


def test_cost_tracking_and_one_alert(scripted, clock, ledger, caplog) -> None:
    scripted.steps = [response(input_tokens=1000, output_tokens=1000) for _ in range(3)]
    gateway = make_gateway(
        scripted,
        clock,
        ledger,
        pricing={"input_per_1k": 1.0, "output_per_1k": 2.0},
        cost_alert_threshold=5.0,
    )
    with caplog.at_level(logging.WARNING, logger="hrm.llm.gateway"):
        for _ in range(3):
            gateway.chat(MESSAGES, "s")
    assert gateway.session_cost == pytest.approx(9.0)
    assert [o["cost"] for o in ledger.of("work_order")] == [3.0, 3.0, 3.0]
    [alert] = ledger.of("cost_alert")
    assert alert["session_cost"] == pytest.approx(6.0)
    assert alert["threshold"] == 5.0
    assert len([r for r in caplog.records if "alert threshold" in r.getMessage()]) == 1


def test_costs_off_records_zero(scripted, clock, ledger) -> None:
    gateway = make_gateway(
        scripted, clock, ledger, pricing={"input_per_1k": 1.0}, track_costs=False
    )
    gateway.chat(MESSAGES, "s")
    assert gateway.session_cost == 0.0
    assert ledger.of("work_order")[0]["cost"] == 0.0


def test_records_never_carry_secrets_or_prompts(scripted, clock, ledger) -> None:
    key = "sk-ant-api03-" + "A" * 40
    scripted.steps = [HRMError.provider_error(401, f"bad key {key}")]
    gateway = make_gateway(scripted, clock, ledger)
    with pytest.raises(HRMError):
        gateway.chat([Message(role="user", content="my secret plan")], "system prompt")
    gateway.chat(MESSAGES, "s", purpose=f"respond with {key}")
    assert len(ledger.of("work_order")) == 2
    text = repr(ledger.records)
    assert key not in text
    assert "my secret plan" not in text
    assert "system prompt" not in text


def test_stream_retries_before_the_first_chunk(scripted, clock, ledger) -> None:
    scripted.steps = [HRMError.provider_error(502, "bad gateway"), "one two three"]
    gateway = make_gateway(scripted, clock, ledger)
    chunks = list(gateway.stream(MESSAGES, "s", purpose="respond"))
    assert chunks[-1].done
    assert chunks[-1].accumulated == "one two three"
    assert "".join(c.delta for c in chunks) == "one two three"
    [order] = ledger.of("work_order")
    assert order["attempts"] == 2
    assert order["outcome"] == "ok"
    assert (order["input_tokens"], order["output_tokens"]) == (10, 5)
    assert gateway.tokens_used == 15


def test_abandoned_stream_is_recorded_as_cancelled(scripted, clock, ledger) -> None:
    scripted.steps = ["one two three four"]
    gateway = make_gateway(scripted, clock, ledger)
    stream = gateway.stream(MESSAGES, "s")
    next(stream)
    stream.close()
    [order] = ledger.of("work_order")
    assert order["outcome"] == "cancelled"
    assert order["output_tokens"] > 0


def test_stream_budget_refusal_is_recorded(scripted, clock, ledger) -> None:
    gateway = make_gateway(scripted, clock, ledger, budget_tokens=1)
    with pytest.raises(HRMError) as caught:
        list(gateway.stream(MESSAGES, "a system prompt"))
    assert caught.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert ledger.of("work_order")[0]["error_code"] == "budget_exhausted"


def test_stream_without_usage_is_estimated(clock, ledger) -> None:
    gateway = make_gateway(OfflineAdapter(), clock, ledger)
    text = "".join(c.delta for c in gateway.stream(MESSAGES, "context line"))
    assert text.startswith("(offline model)")
    assert gateway.tokens_used > 0


def test_from_config_reads_retry_limits_and_pricing(scripted, clock, ledger) -> None:
    config = LLMConfig(
        max_retries=1,
        retry_delay_ms=50,
        retry_on=["server_error"],
        requests_per_minute=1,
        pricing={"input_per_1k": 1.0},
        cost_alert_threshold=99.0,
    )
    gateway = LLMGateway.from_config(
        scripted, config, budget_tokens=1000, record=ledger, sleep=clock.sleep, clock=clock
    )
    assert gateway.retry.max_retries == 1
    assert gateway.retry.retry_on == frozenset({ErrorCode.PROVIDER_ERROR})
    assert gateway.budget_tokens == 1000
    gateway.chat(MESSAGES, "s")
    gateway.chat(MESSAGES, "s")
    assert len(clock.sleeps) == 1  # one request per minute applies to a remote provider


def test_from_config_applies_no_rate_limit_in_process(clock, ledger) -> None:
    gateway = LLMGateway.from_config(
        OfflineAdapter(), LLMConfig(requests_per_minute=1), sleep=clock.sleep, clock=clock
    )
    for _ in range(3):
        gateway.chat(MESSAGES, "s")
    assert clock.sleeps == []


def test_unknown_retry_on_name_is_a_validation_error() -> None:
    with pytest.raises(HRMError) as caught:
        RetryPolicy.from_names(["sometimes"], max_retries=1, retry_delay_ms=1)
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert "rate_limit" in caught.value.message


def test_negative_budget_is_rejected(scripted) -> None:
    with pytest.raises(HRMError):
        LLMGateway(scripted, budget_tokens=-1)
