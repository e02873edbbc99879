"""The one place that decides whether a failed model call is retried, and after how long.

Adapters turn provider failures into `HRMError` with `error_from_status`; the gateway asks
`RetryPolicy.delay_ms` whether to try again. Nothing retries on a bare exception: the decision
is made by error code and HTTP status only.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hrm.errors import ErrorCode, HRMError

__all__ = [
    "RETRY_ON_NAMES",
    "RetryPolicy",
    "error_from_status",
    "parse_retry_after",
]

RETRY_ON_NAMES: dict[str, ErrorCode] = {
    "rate_limit": ErrorCode.RATE_LIMIT,
    "timeout": ErrorCode.TIMEOUT,
    "server_error": ErrorCode.PROVIDER_ERROR,
}
"""001 §11.4's ``retry_on`` names and the code each one retries."""

_DEFAULT_RETRY_AFTER_MS = 1000
_MAX_HEADER_SECONDS = 86_400.0


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> int | None:
    """Milliseconds a server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be seconds (integer or, non-standard, fractional) or an HTTP date.
    Returns ``None`` when no header is present or none parses to a sane, non-negative delay.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms)
        except ValueError:
            value = -1.0
        if 0 <= value <= _MAX_HEADER_SECONDS * 1000:
            return int(value)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds: float | None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = _seconds_until(raw, now)
    if seconds is None or not 0 <= seconds <= _MAX_HEADER_SECONDS:
        return None
    return int(seconds * 1000)


def _seconds_until(http_date: str, now: datetime | None) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now or datetime.now(UTC)
    return max(0.0, (when - current).total_seconds())


def error_from_status(
    provider: str,
    status_code: int,
    message: str,
    *,
    retry_after_ms: int | None = None,
    error_code: str | None = None,
) -> HRMError:
    """The `HRMError` for an HTTP failure of ``provider``.

    429 is ``RATE_LIMIT`` (recoverable, honouring ``retry_after_ms``) unless the provider says
    the quota is spent; a context-length complaint is ``TOKEN_LIMIT``; a safety refusal is
    ``CONTENT_FILTERED``; everything else is ``PROVIDER_ERROR``, recoverable for 5xx and
    transport failures (status 0) only. ``message`` must already be free of secrets.
    """
    code = (error_code or "").lower()
    lowered = message.lower()
    if status_code == 429 and code != "insufficient_quota":
        return HRMError.rate_limit(
            retry_after_ms if retry_after_ms is not None else _DEFAULT_RETRY_AFTER_MS,
            provider=provider,
            status_code=status_code,
        )
    if code in {"context_length_exceeded", "string_above_max_length"} or (
        status_code in {400, 413} and ("context length" in lowered or "too long" in lowered)
    ):
        return HRMError(
            ErrorCode.TOKEN_LIMIT,
            f"{provider}: the prompt is longer than the model accepts ({message})",
            recoverable=False,
            context={"provider": provider, "status_code": status_code},
        )
    if code in {"content_filter", "content_policy_violation"}:
        return HRMError.content_filtered(provider, message)
    hint = ""
    if status_code in {401, 403}:
        hint = "; check the API key (llm.api_key or the variable named by llm.api_key_env)"
    elif code == "insufficient_quota":
        hint = "; the account's quota is spent"
    return HRMError.provider_error(
        status_code,
        f"{provider} returned HTTP {status_code}: {message}{hint}",
        provider=provider,
        error_code=error_code,
    )


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter, by error code (001 §11.4 retry policy).

    Attempt ``n`` (1-based, the attempt that just failed) waits ``base * 2**(n-1)`` ms scaled by
    a jitter factor in ``[1 - jitter, 1]``, capped at ``max_delay_ms``; a server's
    ``retry_after_ms`` is honoured as a floor. A wait longer than ``max_wait_ms`` is not worth
    blocking a turn for: the error surfaces instead.
    """

    max_retries: int = 3
    """Retries after the first attempt; 0 disables retrying."""
    retry_delay_ms: int = 1000
    """Base delay of the first retry."""
    retry_on: frozenset[ErrorCode] = field(
        default_factory=lambda: frozenset(RETRY_ON_NAMES.values())
    )
    """Codes worth retrying (recoverable errors with other codes are not retried)."""
    max_delay_ms: int = 30_000
    """Upper bound of one computed backoff."""
    max_wait_ms: int = 60_000
    """A requested wait beyond this is not honoured; the error surfaces."""
    jitter: float = 0.25
    """Fraction of the delay that is randomised, so clients do not retry in lockstep."""

    @classmethod
    def from_names(
        cls, names: Iterable[str], *, max_retries: int, retry_delay_ms: int
    ) -> RetryPolicy:
        """A policy from 001 §11.4's config values (``retry_on: [rate_limit, ...]``)."""
        codes: set[ErrorCode] = set()
        for name in names:
            code = RETRY_ON_NAMES.get(name.strip().lower())
            if code is None:
                raise HRMError.validation_failed(
                    f"Unknown retry_on value '{name}'; use any of {sorted(RETRY_ON_NAMES)}",
                    key="llm.retry_on",
                )
            codes.add(code)
        if max_retries < 0 or retry_delay_ms < 0:
            raise HRMError.validation_failed(
                "llm.max_retries and llm.retry_delay_ms must not be negative",
                max_retries=max_retries,
                retry_delay_ms=retry_delay_ms,
            )
        return cls(
            max_retries=max_retries, retry_delay_ms=retry_delay_ms, retry_on=frozenset(codes)
        )

    def should_retry(self, error: HRMError) -> bool:
        """Whether ``error`` is transient and its code is one we retry."""
        return error.recoverable and error.code in self.retry_on

    def delay_ms(self, attempt: int, error: HRMError, rng: random.Random) -> int | None:
        """How long to wait before the next attempt, or ``None`` to give up.

        Args:
            attempt: The 1-based number of the attempt that just failed.
            error: Why it failed.
            rng: Source of jitter (seeded in tests).
        """
        if attempt > self.max_retries or not self.should_retry(error):
            return None
        backoff = min(self.max_delay_ms, self.retry_delay_ms * 2 ** (attempt - 1))
        delay = int(backoff * (1 - self.jitter * rng.random()))
        if error.retry_after_ms is not None:
            delay = max(delay, error.retry_after_ms)
        if delay > self.max_wait_ms:
            return None
        return delay
