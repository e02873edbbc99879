"""`hrm mcp`: serve learnings, handoffs, skills and why to a coding assistant over MCP (stdio)."""

from __future__ import annotations

import typer

from hrm.cli._common import HomeOption, handle_errors
from hrm.cli._root import SuggestingGroup

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Serve learnings, handoffs, skills and why to a coding assistant over MCP (stdio).",
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def mcp(home: HomeOption = None) -> None:
    """Run the MCP server on stdin/stdout until the client disconnects.

    Claude Code starts it from the project's .mcp.json (`hrm install claude-code` writes it);
    stdout carries the protocol only. Needs the mcp extra: pip install 'hrm[mcp]'.
    """
    with handle_errors():
        from hrm.home import HRMHome, initialize
        from hrm.mcp_server import run_stdio

        resolved = HRMHome.resolve(home)
        if not resolved.root.is_dir():
            initialize(resolved)  # as the hooks do: the first session needs no `hrm init`
        run_stdio(resolved)
