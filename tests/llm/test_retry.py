"""Retry decisions and provider status mapping: by code and status, never by message parsing."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.llm._retry import RetryPolicy, error_from_status, parse_retry_after

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_retry_after_seconds_and_milliseconds() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3000
    assert parse_retry_after({"Retry-After": "1.5"}) == 1500
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 250


def test_retry_after_http_date() -> None:
    later = format_datetime(NOW + timedelta(seconds=20), usegmt=True)
    assert parse_retry_after({"retry-after": later}, now=NOW) == 20_000
    earlier = format_datetime(NOW - timedelta(seconds=20), usegmt=True)
    assert parse_retry_after({"retry-after": earlier}, now=NOW) == 0


def test_retry_after_garbage_is_ignored() -> None:
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) is None
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "2"}) == 2000


@settings(max_examples=100)
@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms", "x"]), st.text()))
def test_retry_after_never_raises_and_is_never_negative(headers: dict[str, str]) -> None:
    value = parse_retry_after(headers, now=NOW)
    assert value is None or value >= 0


def test_status_mapping() -> None:
    limited = error_from_status("p", 429, "slow down", retry_after_ms=1200)
    assert (limited.code, limited.retry_after_ms, limited.recoverable) == (
        ErrorCode.RATE_LIMIT,
        1200,
        True,
    )
    assert error_from_status("p", 429, "x").retry_after_ms == 1000
    quota = error_from_status("p", 429, "no money", error_code="insufficient_quota")
    assert (quota.code, quota.recoverable) == (ErrorCode.PROVIDER_ERROR, False)
    assert error_from_status("p", 500, "boom").recoverable
    assert error_from_status("p", 529, "overloaded").recoverable
    assert not error_from_status("p", 404, "no such model").recoverable
    auth = error_from_status("p", 401, "invalid x-api-key")
    assert "api_key_env" in auth.message
    assert error_from_status("p", 400, "x", error_code="context_length_exceeded").code is (
        ErrorCode.TOKEN_LIMIT
    )
    assert error_from_status("p", 400, "prompt is too long: 9 > 8").code is ErrorCode.TOKEN_LIMIT
    assert error_from_status("p", 400, "x", error_code="content_filter").code is (
        ErrorCode.CONTENT_FILTERED
    )


def test_policy_gives_up_after_max_retries() -> None:
    policy = RetryPolicy(max_retries=2, retry_delay_ms=100, jitter=0.0)
    error = HRMError.provider_error(500, "x")
    rng = random.Random(1)
    assert [policy.delay_ms(n, error, rng) for n in (1, 2, 3)] == [100, 200, None]


@settings(max_examples=150)
@given(
    attempt=st.integers(min_value=1, max_value=10),
    base=st.integers(min_value=0, max_value=5000),
    retry_after=st.one_of(st.none(), st.integers(min_value=0, max_value=120_000)),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_policy_delays_are_bounded_and_honour_retry_after(
    attempt: int, base: int, retry_after: int | None, seed: int
) -> None:
    policy = RetryPolicy(max_retries=10, retry_delay_ms=base)
    error = HRMError.rate_limit(retry_after) if retry_after is not None else HRMError.timeout("x", 1)
    delay = policy.delay_ms(attempt, error, random.Random(seed))
    if delay is None:
        assert retry_after is not None and retry_after > policy.max_wait_ms
        return
    assert 0 <= delay <= max(policy.max_delay_ms, retry_after or 0)
    assert delay <= policy.max_wait_ms
    if retry_after is not None:
        assert delay >= retry_after
    expected = min(policy.max_delay_ms, base * 2 ** (attempt - 1))
    assert delay >= int(expected * (1 - policy.jitter)) or retry_after is not None
