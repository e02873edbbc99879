"""`hrm hook` as the command tree knows it, for help, suggestions and completion.

The console script answers ``hrm hook …`` before this tree is even imported (`__main__`), since
Claude Code starts it on every prompt; the command here is what `hrm --help` lists, what
``hrm hok`` is told it meant, and what runs when options come first (``hrm --debug hook``).
Either way the same `run_hook` answers.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["HOOK_EVENTS", "hook", "register"]

HOOK_EVENTS = (
    "session-start", "user-prompt-submit", "post-tool-use", "pre-compact", "stop", "session-end",
)
"""The event names `hrm hook` takes (its own usage text lists the same)."""


def _complete_event(incomplete: str) -> list[str]:
    return [event for event in HOOK_EVENTS if event.startswith(incomplete)]


def hook(
    event: Annotated[
        str | None,
        typer.Argument(
            help="The hook event (the payload's hook_event_name wins).",
            autocompletion=_complete_event,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Answer one Claude Code hook: JSON on stdin, at most one JSON object out; always exits 0."""
    from hrm.continuity.hook_entry import run_hook

    raise typer.Exit(run_hook([event] if event else []))


def register(app: typer.Typer) -> None:
    """Add `hook` to the root app."""
    app.command("hook")(hook)
