"""`hrm install …`: register hrm's hooks in a coding assistant's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
    command: Annotated[
        str | None,
        typer.Option("--command", help="How Claude Code should run hrm (default: `hrm` on "
                     "PATH, or the project's own venv)."),
    ] = None,
    no_mcp: Annotated[
        bool, typer.Option("--no-mcp", help="Do not register `hrm mcp` in the project's .mcp.json.")
    ] = False,
    plugin: Annotated[
        Path | None,
        typer.Option("--plugin", help="Write a Claude Code plugin (hooks and MCP server) to DIR "
                     "instead of changing settings."),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Merge hrm's hook entries into Claude Code's settings.json (idempotent, with a backup)."""
    from hrm.continuity._install_plugin import install_mcp_json, portable_command, write_plugin
    from hrm.continuity.install import hook_command, install_claude_code, settings_path

    if project and global_scope:
        raise fail("choose one of --project and --global", EXIT_USAGE)
    if project_dir is not None and not project_dir.is_dir():
        # A mistyped path would otherwise become a new project with hooks nobody runs.
        raise fail(f"--project-dir '{project_dir}' is not an existing directory", EXIT_INPUT)
    folder = project_dir or Path.cwd()
    with handle_errors():
        portable = portable_command(folder, chosen=command)
        if plugin is not None:
            from hrm.cli.version import version_info

            written = write_plugin(plugin, portable, version=version_info().version)
            _report_plugin(written, portable.note, json_out)
            return
        if global_scope:  # the person's own file, never shared: an absolute path works best
            path = settings_path("global")
            prefix = f"{command} hook" if command else hook_command()
        else:
            path = settings_path("project", project_dir=project_dir)
            prefix = f"{portable.shell} hook"
        result = install_claude_code(path, command=prefix, uninstall=uninstall)
        mcp_path = folder / ".mcp.json"
        mcp = "skipped" if global_scope or no_mcp else install_mcp_json(
            mcp_path, portable, uninstall=uninstall
        )
    if json_out:
        emit_json({**result.to_dict(), "mcp_json": str(mcp_path) if mcp != "skipped" else None,
                   "mcp_server": mcp, "note": portable.note if not global_scope else ""})
        return
    _report(result, mcp, mcp_path, uninstall=uninstall)
    if portable.note and not global_scope:
        console.print(f"note: {portable.note}")


def _report(result: Any, mcp: str, mcp_path: Path, *, uninstall: bool) -> None:
    if not result.changed:
        console.print(
            f"{result.settings_path}: already {'clean' if uninstall else 'up to date'}; "
            "nothing changed"
        )
    for label, events in (
        ("added", result.added),
        ("updated", result.updated),
        ("removed", result.removed),
    ):
        if events:
            console.print(f"{label}: {', '.join(events)}")
    if result.changed:
        console.print(f"{result.action} hrm hooks in {result.settings_path}")
    if result.backup_path:
        console.print(f"backup of the previous file: {result.backup_path}")
    if mcp not in ("skipped", "unchanged"):
        console.print(f"MCP server `hrm mcp` {mcp} in {mcp_path}")
    if not uninstall and result.changed:
        console.print(f"hook command: {result.command} <event>")


def _report_plugin(written: list[Path], note: str, json_out: bool) -> None:
    if json_out:
        emit_json({"plugin_files": [str(p) for p in written], "note": note})
        return
    for path in written:
        console.print(f"wrote {path}")
    if note:
        console.print(f"note: {note}")
