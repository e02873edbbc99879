"""Whether a turn that returned an answer did what a turn promises, for the exit code.

A turn never raises for a model that could not be reached or a supervisor that failed: it
answers with what happened ("The model call failed …") or with a direct model call, and records
it. Issue 32 found `hrm turn` exiting 0 for both — a script could not tell a real answer from a
connection refused, a 500 after every retry, or a turn answered without governance on a full
disk. `turn_failure` reads the turn's record for those cases; `hrm turn` and `hrm chat` print
its one-line reason and exit with its documented code (D223).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hrm.cli._common import EXIT_ERROR, exit_code_for
from hrm.errors import ErrorCode, HRMError

__all__ = ["TurnFailure", "turn_failure"]


@dataclass(frozen=True, slots=True)
class TurnFailure:
    """Why a turn's answer is not what was asked for, and the exit code that says so."""

    exit_code: int
    reason: str
    """One line, without the ``error:`` prefix."""


def turn_failure(
    result: Any, events: Callable[[], Sequence[Mapping[str, Any]]]
) -> TurnFailure | None:
    """The failure a turn's record shows, or None when the turn did its work.

    Args:
        result: The `TurnResult`: its action (``degraded`` when the supervisor failed) and
            its decision record's ``execution`` (``success`` and the model call's ``error``).
        events: The turn's ledger events (`HRM.last_events`), read only for a degraded turn,
            whose ``turn_degraded`` event holds the supervisor's error.
    """
    if result.action == "degraded":
        return _degraded(events())
    execution = result.decision.execution or {}
    error = execution.get("error")
    if execution.get("success") is False and isinstance(error, Mapping):
        failure = _error(error)
        what = "the model could not be reached" if _is_provider(failure) else "the turn failed"
        return TurnFailure(exit_code_for(failure), f"{what}: {failure}")
    return None


def _degraded(events: Sequence[Mapping[str, Any]]) -> TurnFailure:
    found = next((e for e in reversed(events) if e.get("kind") == "turn_degraded"), None)
    cause = _error(found.get("error") or {}) if found is not None else None
    if cause is None:
        return TurnFailure(EXIT_ERROR, "the turn ran without governance (its supervisor failed)")
    return TurnFailure(
        exit_code_for(cause),
        f"the turn ran without governance: its supervisor failed ({cause}); the answer, if "
        "any, is a direct model call (`hrm why` shows the turn)",
    )


def _error(data: Mapping[str, Any]) -> HRMError:
    try:
        code = ErrorCode(str(data.get("code")))
    except ValueError:
        code = ErrorCode.INTERNAL_ERROR
    return HRMError(code, str(data.get("message") or code.value))


def _is_provider(error: HRMError) -> bool:
    return error.code in (
        ErrorCode.PROVIDER_ERROR, ErrorCode.TIMEOUT, ErrorCode.RATE_LIMIT,
        ErrorCode.TOKEN_LIMIT, ErrorCode.CONTENT_FILTERED,
    )
