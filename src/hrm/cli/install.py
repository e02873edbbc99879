"""`hrm install …`: register hrm's hooks in a coding assistant's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hrm.cli._common import (
    EXIT_INPUT,
    EXIT_USAGE,
    JsonOption,
    console,
    emit_json,
    fail,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Install hrm's hooks into a coding assistant.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def install() -> None:
    """Install hrm's hooks into a coding assistant."""


@app.command("claude-code")
def claude_code(
    project: Annotated[
        bool, typer.Option("--project", help="Change <project>/.claude/settings.json (default).")
    ] = False,
    global_scope: Annotated[
        bool, typer.Option("--global", help="Change ~/.claude/settings.json (every project).")
    ] = False,
    uninstall: Annotated[
        bool, typer.Option("--uninstall", help="Remove hrm's hooks; leave everything else.")
    ] = False,
    project_dir: Annotated[
        Path | None,
        typer.Option("--project-dir", help="The project (default: the current directory)."),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Merge hrm's hook entries into Claude Code's settings.json (idempotent, with a backup)."""
    from hrm.continuity.install import install_claude_code, settings_path

    if project and global_scope:
        raise fail("choose one of --project and --global", EXIT_USAGE)
    if project_dir is not None and not project_dir.is_dir():
        # A mistyped path would otherwise become a new project with hooks nobody runs.
        raise fail(f"--project-dir '{project_dir}' is not an existing directory", EXIT_INPUT)
    if global_scope:
        path = settings_path("global")
    else:
        path = settings_path("project", project_dir=project_dir)
    with handle_errors():
        result = install_claude_code(path, uninstall=uninstall)
    if json_out:
        emit_json(result.to_dict())
        return
    if not result.changed:
        console.print(f"{path}: already {'clean' if uninstall else 'up to date'}; nothing changed")
        return
    for label, events in (
        ("added", result.added),
        ("updated", result.updated),
        ("removed", result.removed),
    ):
        if events:
            console.print(f"{label}: {', '.join(events)}")
    console.print(f"{result.action} hrm hooks in {path}")
    if result.backup_path:
        console.print(f"backup of the previous file: {result.backup_path}")
    if not uninstall:
        console.print(f"hook command: {result.command} <event>")
