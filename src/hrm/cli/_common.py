"""What every command shares: the output-format and home options, JSON output, error rendering.

Machine output (`--json`) is written with `json.dumps` straight to stdout, never through rich, so
it is always parseable. Library errors become one line on stderr and a non-zero exit code; the
traceback is shown only with `--debug` (or HRM_DEBUG=1).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from hrm.errors import ErrorCode, HRMError

__all__ = [
    "EXIT_DENIED",
    "EXIT_ERROR",
    "EXIT_INPUT",
    "EXIT_PROVIDER",
    "EXIT_STORAGE",
    "AgentClassOption",
    "HomeOption",
    "JsonOption",
    "ModelOption",
    "ProviderOption",
    "console",
    "emit_json",
    "err_console",
    "exit_code_for",
    "fail",
    "handle_errors",
    "report_error",
]

EXIT_ERROR = 1
"""Internal error (a bug, or a failure no other code names)."""
EXIT_INPUT = 3
"""Bad input: a file, payload, config, argument or id that is invalid, unknown or a duplicate."""
EXIT_DENIED = 4
"""A gate or policy denied the request."""
EXIT_PROVIDER = 5
"""The model provider failed."""
EXIT_STORAGE = 6
"""The home or database could not be used (permissions, lock, disk)."""

_CODE_EXIT = {
    ErrorCode.VALIDATION_FAILED: EXIT_INPUT,
    ErrorCode.QUERY_INVALID: EXIT_INPUT,
    ErrorCode.KEY_NOT_FOUND: EXIT_INPUT,
    ErrorCode.NOT_FOUND: EXIT_INPUT,
    ErrorCode.DUPLICATE_DETECTED: EXIT_INPUT,
    ErrorCode.INVALID_SCOPE: EXIT_INPUT,
    ErrorCode.CONFLICT_DETECTED: EXIT_INPUT,
    ErrorCode.PARSE_ERROR: EXIT_INPUT,
    ErrorCode.UNKNOWN_FORMAT: EXIT_INPUT,
    ErrorCode.SCHEMA_MISMATCH: EXIT_INPUT,
    ErrorCode.LEDGER_CORRUPT: EXIT_INPUT,
    ErrorCode.SOURCE_NOT_FOUND: EXIT_INPUT,
    ErrorCode.GATE_DENIED: EXIT_DENIED,
    ErrorCode.STANCE_VIOLATION: EXIT_DENIED,
    ErrorCode.WRITE_DENIED: EXIT_DENIED,
    ErrorCode.VISIBILITY_DENIED: EXIT_DENIED,
    ErrorCode.AGENT_VIOLATION: EXIT_DENIED,
    ErrorCode.ESCALATION_REQUIRED: EXIT_DENIED,
    ErrorCode.BUDGET_EXHAUSTED: EXIT_DENIED,
    ErrorCode.RATE_LIMIT: EXIT_PROVIDER,
    ErrorCode.TOKEN_LIMIT: EXIT_PROVIDER,
    ErrorCode.CONTENT_FILTERED: EXIT_PROVIDER,
    ErrorCode.PROVIDER_ERROR: EXIT_PROVIDER,
    ErrorCode.TIMEOUT: EXIT_PROVIDER,
    ErrorCode.PERMISSION_DENIED: EXIT_STORAGE,
    ErrorCode.PATH_EXISTS: EXIT_STORAGE,
    ErrorCode.DISK_FULL: EXIT_STORAGE,
    ErrorCode.DB_LOCKED: EXIT_STORAGE,
    ErrorCode.DB_UNAVAILABLE: EXIT_STORAGE,
}

# Markup off: what is printed is mostly the person's own text (titles, answers, commands,
# paths), and rich would take "[urgent]" in a title for a style and drop it, or fail on "[/x]".
# The few lines that style something say markup=True and escape what they interpolate.
console = Console(highlight=False, soft_wrap=False, markup=False)
err_console = Console(stderr=True, highlight=False, markup=False)

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
HomeOption = Annotated[
    Path | None,
    typer.Option("--home", help="The hrm home (default: $HRM_HOME or ~/.hrm).", show_default=False),
]
AgentClassOption = Annotated[
    str,
    typer.Option("--as", help="The stack to use: ADMIN or RESIDENT:<name>."),
]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="Model provider: offline, local, anthropic, openai (default: configuration).",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model id for the provider (local: smollm2-135m, qwen2.5-coder-0.5b; "
        "default: configuration).",
    ),
]


def exit_code_for(error: HRMError) -> int:
    """The exit code a command returns for a library error."""
    return _CODE_EXIT.get(error.code, EXIT_ERROR)


def emit_json(data: Any) -> None:
    """Write `data` as JSON to stdout (never through rich)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=_default) + "\n")
    sys.stdout.flush()


def _default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "value"):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def _error_line(message: str) -> None:
    # Plain text, never wrapped: scripts grep error lines for file:line locations.
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    sys.stderr.flush()


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print one error line on stderr and return the exit to raise."""
    _error_line(message)
    return typer.Exit(code)


@contextlib.contextmanager
def handle_errors() -> Iterator[None]:
    """Turn an `HRMError` into one stderr line and its exit code (traceback with HRM_DEBUG=1)."""
    try:
        yield
    except HRMError as exc:
        if os.environ.get("HRM_DEBUG"):
            raise
        raise typer.Exit(report_error(exc)) from None


def report_error(exc: HRMError) -> int:
    """Print `exc` as one stderr line (and a hint where one helps); return its exit code.

    For loops that outlive one failure (`hrm chat`); one-shot commands use `handle_errors`.
    """
    _error_line(str(exc))
    if exc.code is ErrorCode.LEDGER_CORRUPT and "quarantine" not in exc.message:
        sys.stderr.write(
            "hint: `hrm ledger verify` names every damaged ledger; `hrm ledger quarantine` "
            "copies one aside and cuts it back to its last good record\n"
        )
    return exit_code_for(exc)
