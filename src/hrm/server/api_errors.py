"""Errors of the HTTP surface in OpenAI's shape, and the one table from `ErrorCode` to status.

Every error a client sees is ``{"error": {"message", "type", "param", "code"}}`` with the
status the OpenAI API would use: clients (the `openai` SDK, chat front-ends) turn these into
their own exception classes and retry decisions by status, so the status must mean what it
means there. Library errors (`HRMError`) are mapped here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hrm.errors import ErrorCode, HRMError

__all__ = ["LEDGER_REPAIR", "APIError", "from_hrm_error", "json_kind"]

LEDGER_REPAIR = (
    "`hrm ledger verify` names every damaged ledger; stop the servers on this home, then "
    "`hrm ledger quarantine {path}` copies it aside and cuts it back to its last good record"
)
"""The repair of a damaged ledger, as the CLI's hint gives it (`hrm.cli._common.report_error`):
a client told only "line 4 is bad" has nowhere to go."""


class APIError(Exception):
    """An error answered to the client as the OpenAI error object with an HTTP status.

    Args:
        status: The HTTP status.
        message: What was wrong, where, and what fixes it.
        type: OpenAI's error type (``invalid_request_error``, ``authentication_error`` …).
        code: A short machine-readable code (``model_not_found``, ``stack_busy`` …).
        param: The request field at fault, when one is.
        headers: Extra response headers (``Retry-After``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self, **extra: Any) -> dict[str, Any]:
        """The JSON body; `extra` adds top-level members (the ``hrm`` object of a turn)."""
        return {
            "error": {
                "message": self.message, "type": self.type, "param": self.param,
                "code": self.code,
            },
            **extra,
        }


@dataclass(frozen=True)
class _Mapping:
    status: int
    type: str
    code: str


_BAD = _Mapping(400, "invalid_request_error", "invalid_request")
_TABLE: dict[ErrorCode, _Mapping] = {
    ErrorCode.VALIDATION_FAILED: _BAD,
    ErrorCode.PARSE_ERROR: _BAD,
    ErrorCode.QUERY_INVALID: _BAD,
    ErrorCode.INVALID_SCOPE: _BAD,
    ErrorCode.SCHEMA_MISMATCH: _BAD,
    ErrorCode.UNKNOWN_FORMAT: _BAD,
    ErrorCode.TOKEN_LIMIT: _Mapping(400, "invalid_request_error", "context_length_exceeded"),
    ErrorCode.CONTENT_FILTERED: _Mapping(400, "invalid_request_error", "content_filter"),
    ErrorCode.NOT_FOUND: _Mapping(404, "not_found_error", "not_found"),
    ErrorCode.KEY_NOT_FOUND: _Mapping(404, "not_found_error", "not_found"),
    ErrorCode.SOURCE_NOT_FOUND: _Mapping(404, "not_found_error", "not_found"),
    ErrorCode.VISIBILITY_DENIED: _Mapping(403, "permission_error", "visibility_denied"),
    ErrorCode.GATE_DENIED: _Mapping(403, "permission_error", "gate_denied"),
    ErrorCode.WRITE_DENIED: _Mapping(403, "permission_error", "write_denied"),
    ErrorCode.STANCE_VIOLATION: _Mapping(403, "permission_error", "stance_violation"),
    ErrorCode.AGENT_VIOLATION: _Mapping(403, "permission_error", "agent_violation"),
    ErrorCode.ESCALATION_REQUIRED: _Mapping(403, "permission_error", "escalation_required"),
    ErrorCode.DB_LOCKED: _Mapping(409, "conflict_error", "stack_busy"),
    ErrorCode.CONFLICT_DETECTED: _Mapping(409, "conflict_error", "conflict"),
    ErrorCode.DUPLICATE_DETECTED: _Mapping(409, "conflict_error", "duplicate"),
    ErrorCode.RATE_LIMIT: _Mapping(429, "rate_limit_error", "rate_limit_exceeded"),
    ErrorCode.BUDGET_EXHAUSTED: _Mapping(429, "insufficient_quota", "budget_exhausted"),
    ErrorCode.PROVIDER_ERROR: _Mapping(503, "provider_error", "provider_unavailable"),
    ErrorCode.TIMEOUT: _Mapping(503, "provider_error", "provider_timeout"),
    ErrorCode.DB_UNAVAILABLE: _Mapping(503, "server_error", "storage_unavailable"),
}
_SERVER = _Mapping(500, "server_error", "internal_error")


def from_hrm_error(error: HRMError) -> APIError:
    """The client-facing error for a library error (500 for what no row names)."""
    row = _TABLE.get(error.code, _SERVER)
    headers = {}
    if error.retry_after_ms:
        headers["Retry-After"] = str(max(1, -(-error.retry_after_ms // 1000)))
    code = row.code if row is not _SERVER else error.code.value
    return APIError(row.status, _with_repair(error), type=row.type, code=code, headers=headers)


def _with_repair(error: HRMError) -> str:
    """The message, with the repair when the error names one the person must run."""
    if error.code is not ErrorCode.LEDGER_CORRUPT or "quarantine" in error.message:
        return error.message
    path = error.context.get("path") or "PATH"
    return f"{error.message}. {LEDGER_REPAIR.format(path=path)}"


def json_kind(value: Any) -> str:
    """What a JSON value is, as an error message names it: "an empty array", "a string" …

    An empty string, array or object is named so: "is empty (got an array)" would read as if
    the type were the fault.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        return "a string" if value.strip() else "a string of only whitespace"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    return type(value).__name__
