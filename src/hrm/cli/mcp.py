"""`hrm mcp`: serve learnings, handoffs, skills and why to a coding assistant over MCP (stdio)."""

from __future__ import annotations

import typer

from hrm.cli._common import HomeOption, handle_errors

__all__ = ["mcp", "register"]


def mcp(home: HomeOption = None) -> None:
    """Serve learnings, handoffs, skills and why over MCP (stdio) until the client disconnects.

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


def register(app: typer.Typer) -> None:
    """Add `mcp` to the root app (the SDK is imported only when it runs)."""
    app.command("mcp")(mcp)
