"""What every command shares: exit codes, the output-format and home options, JSON output, and
turning an error into one line on stderr.

Machine output (`--json`) is written with `json.dumps` straight to stdout, never through rich, so
it is always parseable. Errors become one line on stderr and an exit code; the traceback is
shown only with ``hrm --debug …`` (or ``HRM_DEBUG=1``).

Exit codes (README, "Command-line conventions", shows the same table):

====  =====================================================================================
0     success (an empty list too)
1     internal error: a bug, or a failure no other code names
2     usage: unknown command or option, missing argument, value of the wrong type, options
      that exclude each other; or an optional extra that is not installed (D110)
3     bad input: a file, payload, configuration or option value, or id that is invalid,
      unknown or a duplicate; a damaged ledger
4     denied: a gate or policy said no (a base URL whose project is no longer trusted)
5     provider: the model provider failed, or a turn answered only to say so (D223)
6     storage: the home or database could not be used (permissions, lock, disk), or a turn
      ran without governance because of it
7     `hrm plan run`: the step budget ran out before the plan converged
130   interrupted (Ctrl-C)
====  =====================================================================================
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import typer
from rich.console import Console

from hrm.errors import ErrorCode, HRMError

__all__ = [
    "ENV_DEBUG",
    "ENV_FORCE_TTY",
    "EXIT_BUDGET",
    "EXIT_DENIED",
    "EXIT_ERROR",
    "EXIT_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROVIDER",
    "EXIT_STORAGE",
    "EXIT_USAGE",
    "AgentClassOption",
    "HomeOption",
    "JsonOption",
    "ModelOption",
    "ProviderOption",
    "console",
    "debug_enabled",
    "emit_json",
    "emit_json_line",
    "err_console",
    "exit_code_for",
    "fail",
    "force_tty",
    "handle_errors",
    "missing_extra_message",
    "report_error",
    "report_unexpected",
    "set_debug",
]

ENV_DEBUG = "HRM_DEBUG"
"""Set to 1 to show tracebacks, as ``hrm --debug`` does, in every invocation."""
ENV_FORCE_TTY = "HRM_FORCE_TTY"
"""Set to 1 to draw tables and progress bars as on a terminal even in a pipe (like gh's
``GH_FORCE_TTY``): for ``watch``, ``less -R`` and tests."""

EXIT_OK = 0
"""Success (an empty list too)."""
EXIT_ERROR = 1
"""Internal error (a bug, or a failure no other code names)."""
EXIT_USAGE = 2
"""Usage: the command line is wrong (click's own code for what it cannot parse, and options that
exclude each other), or it asks for a feature whose optional extra is not installed."""
EXIT_INPUT = 3
"""Bad input: a file, payload, configuration or option value, or id that is invalid, unknown or a
duplicate; a damaged ledger."""
EXIT_DENIED = 4
"""A gate or policy denied the request."""
EXIT_PROVIDER = 5
"""The model provider failed (also a turn that answered only to say its model could not be
reached: `hrm turn`, `hrm chat`, D223)."""
EXIT_STORAGE = 6
"""The home or database could not be used (permissions, lock, disk)."""
EXIT_BUDGET = 7
"""`hrm plan run`: the step budget ran out before the plan converged."""
EXIT_INTERRUPTED = 130
"""Interrupted with Ctrl-C (128 + SIGINT, as shells report it)."""

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
class _ConsoleOptions(TypedDict, total=False):
    stderr: bool
    highlight: bool
    soft_wrap: bool
    markup: bool


_CONSOLE_OPTIONS = _ConsoleOptions(highlight=False, soft_wrap=False, markup=False)
# Notes and warnings on stderr are never wrapped: a path cut in two cannot be grepped.
_ERR_CONSOLE_OPTIONS = _ConsoleOptions(stderr=True, highlight=False, markup=False, soft_wrap=True)
console = Console(**_CONSOLE_OPTIONS)
err_console = Console(**_ERR_CONSOLE_OPTIONS)


def reset_consoles() -> None:
    """Look at the terminal and the environment again, as a new process would.

    A console settles its colours and width when it is made. A process forked from the
    resident one (`hrm.resident`) made these before it took its client's standard streams and
    environment, so it makes them again — in place, because every command module holds them.
    """
    console.__init__(**_CONSOLE_OPTIONS)  # type: ignore[misc]
    err_console.__init__(**_ERR_CONSOLE_OPTIONS)  # type: ignore[misc]

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


# Whether tracebacks are shown: `hrm --debug` sets it for one invocation; HRM_DEBUG=1 always.
_debug = False


def set_debug(enabled: bool) -> None:
    """Show tracebacks (``--debug``) for the rest of this invocation, or stop showing them."""
    global _debug
    _debug = enabled


def debug_enabled() -> bool:
    """Whether errors should show their traceback: ``hrm --debug …`` or ``HRM_DEBUG=1``."""
    return _debug or os.environ.get(ENV_DEBUG, "") not in ("", "0")


def force_tty() -> bool:
    """Whether ``HRM_FORCE_TTY=1`` asks for terminal output wherever output goes."""
    return os.environ.get(ENV_FORCE_TTY, "") not in ("", "0")


def exit_code_for(error: HRMError) -> int:
    """The exit code a command returns for a library error."""
    return _CODE_EXIT.get(error.code, EXIT_ERROR)


def emit_json(data: Any) -> None:
    """Write `data` as JSON to stdout (never through rich)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=_default) + "\n")
    sys.stdout.flush()


def emit_json_line(data: Any) -> None:
    """Write `data` as one line of JSON Lines to stdout (for a stream of records)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=_default) + "\n")
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
    """Turn an `HRMError` or a missing extra into one stderr line and its exit code.

    With ``--debug`` the error propagates and its traceback is shown.
    """
    try:
        yield
    except HRMError as exc:
        if debug_enabled():
            raise
        raise typer.Exit(report_error(exc)) from None
    except ImportError as exc:
        message = missing_extra_message(exc)
        if message is None or debug_enabled():
            raise
        _error_line(message)
        raise typer.Exit(EXIT_USAGE) from None


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


def missing_extra_message(exc: ImportError) -> str | None:
    """The one-line message for an optional dependency that is not installed, else None.

    `MissingExtraError` says it already; a bare ``ModuleNotFoundError`` for a module that one
    of the distribution's extras brings is named with that extra. Any other import failure
    is a bug, not a missing extra.
    """
    from hrm._extras import MissingExtraError, extra_for_module, install_hint

    if isinstance(exc, MissingExtraError):
        return str(exc)
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    extra = extra_for_module(exc.name)
    if extra is None:
        return None
    return f"{exc.name} is not installed; the {extra} extra brings it: {install_hint(extra)}"


def report_unexpected(exc: BaseException) -> int:
    """Print an exception no one expected as one stderr line; return `EXIT_ERROR`.

    The line names the exception's type and message and how to see the traceback, which a
    bug report needs; a credential that slipped into the message is scrubbed from it.
    """
    from hrm.scrubbing import scrub_text

    detail = f"{type(exc).__name__}: {scrub_text(str(exc))}" if str(exc) else type(exc).__name__
    _error_line(f"internal error: {detail} (run `hrm --debug …` to see the traceback)")
    return EXIT_ERROR
