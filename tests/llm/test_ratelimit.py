"""Token buckets over a fake clock: waits are computed, never slept in tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import HRMError
from hrm.llm._ratelimit import TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_bucket_starts_full_and_refills_continuously() -> None:
    clock = Clock()
    bucket = TokenBucket(60, clock=clock, name="requests_per_minute")
    assert bucket.wait_ms(60) == 0
    bucket.take(60)
    assert bucket.wait_ms(1) == 1000
    clock.now += 0.5
    assert bucket.wait_ms(1) == 500
    clock.now += 0.5
    assert bucket.wait_ms(1) == 0


def test_oversized_requests_wait_for_a_full_bucket_not_forever() -> None:
    clock = Clock()
    bucket = TokenBucket(100, clock=clock, name="tokens_per_minute")
    bucket.take(100)
    assert bucket.wait_ms(1_000_000) == 60_000


def test_give_back_returns_over_charged_units() -> None:
    clock = Clock()
    bucket = TokenBucket(100, clock=clock, name="tokens_per_minute")
    bucket.take(80)
    bucket.give_back(30)
    assert bucket.level == pytest.approx(50)
    bucket.give_back(500)
    assert bucket.level == pytest.approx(100)


def test_non_positive_limit_is_rejected() -> None:
    with pytest.raises(HRMError) as caught:
        TokenBucket(0, clock=Clock(), name="requests_per_minute")
    assert "llm.requests_per_minute" in caught.value.message


@settings(max_examples=100)
@given(
    per_minute=st.integers(min_value=1, max_value=10_000),
    spends=st.lists(st.integers(min_value=0, max_value=20_000), max_size=10),
)
def test_waiting_the_given_time_always_suffices(per_minute: int, spends: list[int]) -> None:
    clock = Clock()
    bucket = TokenBucket(per_minute, clock=clock, name="tokens_per_minute")
    for amount in spends:
        wait = bucket.wait_ms(amount)
        assert wait >= 0
        clock.now += wait / 1000
        assert bucket.wait_ms(amount) == 0
        bucket.take(amount)
