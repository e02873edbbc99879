"""One exception type for all of hrm: `HRMError` carrying an `ErrorCode` (001 §9).

Variety lives in codes, not subclasses. The codes, grouped by who must act:

Caller mistake (fix the call):
    VALIDATION_FAILED, NOT_FOUND, KEY_NOT_FOUND, INVALID_SCOPE, QUERY_INVALID

Bad input (fix the file, payload or text):
    PARSE_ERROR, UNKNOWN_FORMAT, SCHEMA_MISMATCH, LEDGER_CORRUPT, SOURCE_NOT_FOUND

Policy denial (a gate said no; fall back or ask):
    GATE_DENIED, STANCE_VIOLATION, WRITE_DENIED, CONFLICT_DETECTED, VISIBILITY_DENIED,
    DUPLICATE_DETECTED, ESCALATION_REQUIRED, STRATEGY_FAILED, AGENT_VIOLATION, AGENT_TIMEOUT,
    BUDGET_EXHAUSTED

Provider (the model service; usually retry):
    RATE_LIMIT, TOKEN_LIMIT, CONTENT_FILTERED, PROVIDER_ERROR, TIMEOUT

Storage (the machine; retry or move):
    PERMISSION_DENIED, PATH_EXISTS, DISK_FULL, DB_LOCKED, DB_UNAVAILABLE

Internal (a bug in hrm; report it):
    INTERNAL_ERROR

Named constructors fill the structured fields (``context``, ``retry_after_ms``,
``recoverable``) and derive the message from them, so no handler ever parses a message.
Whether to retry is decided in one place, `recover_from_error`.
"""

from __future__ import annotations

from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib stay unimported at run time: `hrm hook` starts fast
    from pathlib import Path
    from typing import Any

__all__ = ["ErrorCode", "HRMError", "recover_from_error"]


class ErrorCode(str, Enum):
    """Every error code of 001 §9.1 and 003's error catalog, in one enum."""

    # 001 §9.1 — gates
    GATE_DENIED = "gate_denied"
    STANCE_VIOLATION = "stance_violation"
    # writes
    WRITE_DENIED = "write_denied"
    CONFLICT_DETECTED = "conflict_detected"
    # reasoning
    ESCALATION_REQUIRED = "escalation_required"
    STRATEGY_FAILED = "strategy_failed"
    # agents
    AGENT_VIOLATION = "agent_violation"
    AGENT_TIMEOUT = "agent_timeout"
    # LLM
    RATE_LIMIT = "rate_limit"
    TOKEN_LIMIT = "token_limit"
    CONTENT_FILTERED = "content_filtered"
    PROVIDER_ERROR = "provider_error"
    # system
    VALIDATION_FAILED = "validation_failed"
    INTERNAL_ERROR = "internal_error"

    # 003 error catalog and operation errors
    PERMISSION_DENIED = "permission_denied"
    PATH_EXISTS = "path_exists"
    DISK_FULL = "disk_full"
    KEY_NOT_FOUND = "key_not_found"
    INVALID_SCOPE = "invalid_scope"
    PARSE_ERROR = "parse_error"
    DUPLICATE_DETECTED = "duplicate_detected"
    DB_LOCKED = "db_locked"
    DB_UNAVAILABLE = "db_unavailable"
    QUERY_INVALID = "query_invalid"
    TIMEOUT = "timeout"
    SOURCE_NOT_FOUND = "source_not_found"
    UNKNOWN_FORMAT = "unknown_format"
    SCHEMA_MISMATCH = "schema_mismatch"

    # hrm additions
    NOT_FOUND = "not_found"
    LEDGER_CORRUPT = "ledger_corrupt"
    VISIBILITY_DENIED = "visibility_denied"
    BUDGET_EXHAUSTED = "budget_exhausted"


class HRMError(Exception):
    """The only exception hrm raises at its public API.

    Attributes:
        code: What kind of failure this is; handlers switch on it.
        message: One human sentence naming what was wrong, where, and what fixes it.
        recoverable: Whether retrying or falling back can succeed without a human.
        retry_after_ms: How long to wait before retrying, when the cause says so.
        context: Structured details (file, line, key, record id, gate, ...).
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        recoverable: bool = True,
        retry_after_ms: int | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.recoverable = recoverable
        self.retry_after_ms = retry_after_ms
        self.context: dict[str, Any] = dict(context or {})

    def __str__(self) -> str:
        return f"[{self.code.value}] {self.message}"

    def __repr__(self) -> str:
        return (
            f"HRMError(code={self.code.name}, message={self.message!r}, context={self.context!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments need an explicit recipe to cross process boundaries.
        return (
            _rebuild,
            (self.code, self.message, self.recoverable, self.retry_after_ms, self.context),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for `--json` output and ledger records."""
        return {
            "code": self.code.value,
            "message": self.message,
            "recoverable": self.recoverable,
            "retry_after_ms": self.retry_after_ms,
            "context": _jsonable(self.context),
        }

    # ── 001 §9.1 factories ────────────────────────────────────────────────

    @classmethod
    def gate_denied(cls, gate: str, reason: str, **context: Any) -> HRMError:
        return cls(ErrorCode.GATE_DENIED, reason, context={"gate": gate, **context})

    @classmethod
    def stance_violation(cls, stance: str, action: str) -> HRMError:
        return cls(
            ErrorCode.STANCE_VIOLATION,
            f"Action '{action}' not allowed in stance '{stance}'",
            context={"stance": stance, "action": action},
        )

    @classmethod
    def write_denied(cls, target: str, reason: str, **context: Any) -> HRMError:
        return cls(ErrorCode.WRITE_DENIED, reason, context={"target": target, **context})

    @classmethod
    def conflict_detected(cls, key: str, reason: str) -> HRMError:
        return cls(ErrorCode.CONFLICT_DETECTED, reason, context={"key": key})

    @classmethod
    def escalation_required(cls, reason: str, **context: Any) -> HRMError:
        return cls(ErrorCode.ESCALATION_REQUIRED, reason, context=context)

    @classmethod
    def strategy_failed(cls, strategy: str, reason: str) -> HRMError:
        return cls(
            ErrorCode.STRATEGY_FAILED,
            f"Strategy '{strategy}' failed: {reason}",
            context={"strategy": strategy},
        )

    @classmethod
    def agent_violation(
        cls, reason: str, *, agent_id: str | None = None, rule: str | None = None
    ) -> HRMError:
        context: dict[str, Any] = {}
        if agent_id is not None:
            context["agent_id"] = agent_id
        if rule is not None:
            context["rule"] = rule
        prefix = f"Agent '{agent_id}' violated rule '{rule}': " if agent_id and rule else ""
        return cls(ErrorCode.AGENT_VIOLATION, prefix + reason, recoverable=False, context=context)

    @classmethod
    def agent_timeout(cls, agent_id: str, timeout_ms: int) -> HRMError:
        return cls(
            ErrorCode.AGENT_TIMEOUT,
            f"Agent '{agent_id}' did not finish within {timeout_ms} ms",
            context={"agent_id": agent_id, "timeout_ms": timeout_ms},
        )

    @classmethod
    def rate_limit(cls, retry_after_ms: int, **context: Any) -> HRMError:
        return cls(
            ErrorCode.RATE_LIMIT,
            f"Rate limit exceeded; retry after {retry_after_ms} ms",
            retry_after_ms=retry_after_ms,
            context=context,
        )

    @classmethod
    def token_limit(cls, limit: int, actual: int, **context: Any) -> HRMError:
        return cls(
            ErrorCode.TOKEN_LIMIT,
            f"Token limit exceeded: {actual} > {limit}",
            recoverable=False,
            context={"limit": limit, "actual": actual, **context},
        )

    @classmethod
    def content_filtered(cls, provider: str, detail: str = "") -> HRMError:
        message = f"Content blocked by {provider}'s safety filter"
        return cls(
            ErrorCode.CONTENT_FILTERED,
            f"{message}: {detail}" if detail else message,
            recoverable=False,
            context={"provider": provider},
        )

    @classmethod
    def provider_error(cls, status_code: int, message: str, **context: Any) -> HRMError:
        # Server errors (5xx) and transport failures (status 0) are retryable.
        return cls(
            ErrorCode.PROVIDER_ERROR,
            message,
            recoverable=status_code >= 500 or status_code == 0,
            context={"status_code": status_code, **context},
        )

    @classmethod
    def budget_exhausted(cls, scope: str, limit: int, used: int) -> HRMError:
        return cls(
            ErrorCode.BUDGET_EXHAUSTED,
            f"Token budget of {scope} exhausted: {used} of {limit} tokens used",
            recoverable=False,
            context={"scope": scope, "limit": limit, "used": used},
        )

    # ── hrm and 003 factories ─────────────────────────────────────────────

    @classmethod
    def validation_failed(cls, message: str, **context: Any) -> HRMError:
        return cls(ErrorCode.VALIDATION_FAILED, message, recoverable=False, context=context)

    @classmethod
    def not_found(cls, what: str, key: str, hint: str = "") -> HRMError:
        message = f"No {what} '{key}'"
        return cls(
            ErrorCode.NOT_FOUND,
            f"{message}; {hint}" if hint else message,
            recoverable=False,
            context={"what": what, "key": key},
        )

    @classmethod
    def parse_error(
        cls, message: str, *, path: str | Path | None = None, line: int | None = None
    ) -> HRMError:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        context: dict[str, Any] = {}
        if path is not None:
            context["path"] = str(path)
        if line is not None:
            context["line"] = line
        return cls(ErrorCode.PARSE_ERROR, where + message, recoverable=False, context=context)

    @classmethod
    def path_exists(cls, path: str | Path, what: str = "", *, hint: str = "") -> HRMError:
        """A file that must not be overwritten is already there (never recoverable by retry)."""
        message = f"{what} '{path}' already exists" if what else f"'{path}' already exists"
        return cls(
            ErrorCode.PATH_EXISTS,
            message + (f"; {hint}" if hint else ""),
            recoverable=False,
            context={"path": str(path)},
        )

    @classmethod
    def permission_denied(
        cls, path: str | Path, fallback_path: str | Path | None = None
    ) -> HRMError:
        message = f"Cannot write to '{path}'"
        if fallback_path is not None:
            message += f"; use the fallback '{fallback_path}' (e.g. --home {fallback_path})"
        return cls(
            ErrorCode.PERMISSION_DENIED,
            message,
            context={
                "path": str(path),
                "fallback_path": None if fallback_path is None else str(fallback_path),
            },
        )

    @classmethod
    def duplicate_detected(cls, existing_id: str, what: str = "learning") -> HRMError:
        return cls(
            ErrorCode.DUPLICATE_DETECTED,
            f"A similar {what} already exists: {existing_id}",
            context={"duplicate_id": existing_id},
        )

    @classmethod
    def db_locked(cls, path: str | Path) -> HRMError:
        return cls(
            ErrorCode.DB_LOCKED,
            f"Database '{path}' is locked by another process; retry shortly",
            retry_after_ms=100,
            context={"path": str(path)},
        )

    @classmethod
    def timeout(cls, operation: str, budget_ms: int) -> HRMError:
        return cls(
            ErrorCode.TIMEOUT,
            f"{operation} exceeded its budget of {budget_ms} ms",
            context={"operation": operation, "budget_ms": budget_ms},
        )

    @classmethod
    def ledger_corrupt(
        cls, path: str | Path, line: int, sequence: int | None, reason: str
    ) -> HRMError:
        seq = f", sequence {sequence}" if sequence is not None else ""
        return cls(
            ErrorCode.LEDGER_CORRUPT,
            f"{path}:{line}{seq}: {reason}",
            recoverable=False,
            context={"path": str(path), "line": line, "sequence": sequence, "reason": reason},
        )

    @classmethod
    def visibility_denied(cls, observer: str, target: str, reason: str) -> HRMError:
        return cls(
            ErrorCode.VISIBILITY_DENIED,
            f"Stack '{observer}' may not read '{target}': {reason}",
            recoverable=False,
            context={"observer": observer, "target": target},
        )

    @classmethod
    def internal(cls, message: str, **context: Any) -> HRMError:
        return cls(ErrorCode.INTERNAL_ERROR, message, recoverable=False, context=context)


def _rebuild(
    code: ErrorCode,
    message: str,
    recoverable: bool,
    retry_after_ms: int | None,
    context: dict[str, Any],
) -> HRMError:
    return HRMError(
        code, message, recoverable=recoverable, retry_after_ms=retry_after_ms, context=context
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Enum):
        return value.value
    return str(value)


_FALLBACK_CODES = frozenset(
    {
        ErrorCode.GATE_DENIED,
        ErrorCode.STANCE_VIOLATION,
        ErrorCode.WRITE_DENIED,
        ErrorCode.CONFLICT_DETECTED,
        ErrorCode.VISIBILITY_DENIED,
        ErrorCode.DUPLICATE_DETECTED,
        ErrorCode.STRATEGY_FAILED,
        ErrorCode.PERMISSION_DENIED,
    }
)
_RETRY_CODES = frozenset(
    {
        ErrorCode.RATE_LIMIT,
        ErrorCode.PROVIDER_ERROR,
        ErrorCode.TIMEOUT,
        ErrorCode.AGENT_TIMEOUT,
        ErrorCode.DB_LOCKED,
        ErrorCode.DB_UNAVAILABLE,
    }
)


def recover_from_error(error: HRMError) -> dict[str, Any]:
    """The one place that decides how to recover from an error (001 §9.1).

    Returns:
        ``{"action": "retry" | "fallback" | "escalate" | "abort", "delay_ms": int}``.
        Unrecoverable errors abort; denials fall back; transient failures retry after the
        delay the cause asked for (``retry_after_ms``) or one second.
    """
    if not error.recoverable:
        return {"action": "abort", "delay_ms": 0}
    if error.code == ErrorCode.ESCALATION_REQUIRED:
        return {"action": "escalate", "delay_ms": 0}
    if error.code in _FALLBACK_CODES:
        return {"action": "fallback", "delay_ms": 0}
    if error.code in _RETRY_CODES:
        return {"action": "retry", "delay_ms": error.retry_after_ms or 1000}
    return {"action": "retry", "delay_ms": error.retry_after_ms or 1000}
