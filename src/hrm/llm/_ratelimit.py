"""Token buckets for the requests- and tokens-per-minute limits of 001 §11.4.

A bucket holds up to ``per_minute`` units and refills continuously at ``per_minute / 60`` units
a second. `TokenBucket.wait_ms` is pure arithmetic over an injected monotonic clock, so the
gateway decides how long to sleep and tests never wait for real time.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

from hrm.errors import HRMError

__all__ = ["TokenBucket", "window_wait_ms"]


class TokenBucket:
    """A thread-safe token bucket measured in whole units (requests or tokens).

    Args:
        per_minute: Capacity and refill rate per minute; must be positive.
        clock: Monotonic seconds (``time.monotonic`` in production).
        name: What the bucket limits, for error messages (``requests_per_minute``).
    """

    def __init__(self, per_minute: int, *, clock: Callable[[], float], name: str) -> None:
        if per_minute <= 0:
            raise HRMError.validation_failed(
                f"llm.{name} must be positive, got {per_minute}", key=f"llm.{name}"
            )
        self.capacity = float(per_minute)
        self.name = name
        self._rate_per_second = per_minute / 60.0
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        self._level = min(self.capacity, self._level + elapsed * self._rate_per_second)

    def wait_ms(self, amount: float) -> int:
        """Milliseconds until ``amount`` units are available (0 when they are now).

        A request larger than the whole bucket is treated as a full bucket, so it waits at
        most one refill instead of forever.
        """
        needed = min(float(amount), self.capacity)
        with self._lock:
            self._refill()
            missing = needed - self._level
        if missing <= 0:
            return 0
        return math.ceil(round(missing / self._rate_per_second * 1000, 6))

    def take(self, amount: float) -> None:
        """Spend ``amount`` units (the level may go negative: later callers wait longer)."""
        with self._lock:
            self._refill()
            self._level -= min(float(amount), self.capacity)

    def give_back(self, amount: float) -> None:
        """Return units charged in advance but not used (an estimate was too high)."""
        with self._lock:
            self._refill()
            self._level = min(self.capacity, self._level + float(amount))

    @property
    def level(self) -> float:
        """Units available now."""
        with self._lock:
            self._refill()
            return self._level


def window_wait_ms(
    window: Sequence[tuple[float, float]], now: float, *, per_minute: int, amount: float
) -> int:
    """Milliseconds until `amount` more units fit the last minute's `window` (0 when now).

    `window` holds (epoch seconds, units) of what other processes spent too, oldest first, as
    the session's ledger recorded it (D281): a bucket in one process cannot see them. Like a
    bucket, a request larger than the whole limit counts as the whole limit.
    """
    needed = min(float(amount), float(per_minute))
    recent = [(at, units) for at, units in window if at > now - 60.0]
    spent = sum(units for _at, units in recent)
    if spent + needed <= per_minute:
        return 0
    for at, units in recent:  # oldest first: each one ageing out frees its units
        spent -= units
        if spent + needed <= per_minute:
            return max(0, math.ceil(round((at + 60.0 - now) * 1000, 6)))
    return 0
