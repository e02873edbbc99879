"""The MCP server: `HrmTools` published through the official SDK's `MCPServer`, over stdio.

The SDK validates every call's arguments against the tool's signature, so a wrong type becomes
a tool error naming the argument before any hrm code runs. What hrm itself rejects (`HRMError`:
an empty query, an unknown learning type, a handoff id not in the store, a duplicate) becomes a
tool error carrying hrm's one-line message. Anything else is a bug: the client gets a tool
error naming its type, and the server keeps serving (D249).

The tools are synchronous (SQLite, files); each runs on a worker thread so the event loop that
reads the client stays responsive (STYLE §7).
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.mcp_server.tools import HrmTools

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.mcpserver import MCPServer

    from hrm.home import HRMHome

__all__ = ["TOOL_NAMES", "build_server", "run_stdio"]

TOOL_NAMES = (
    "learnings_search", "learnings_store", "handoff_latest", "handoff_read", "handoff_create",
    "skill_match", "why",
)
"""Every tool `hrm mcp` offers, in the order it lists them."""

_INSTRUCTIONS = (
    "hrm keeps what coding sessions learned and where they stopped. Search learnings before "
    "repeating a past investigation; store what you learn (a fix, a failed approach, a "
    "decision); read the project's latest handoff when resuming and create one before stopping."
)


def build_server(home: HRMHome, *, tools: HrmTools | None = None) -> MCPServer:
    """An `MCPServer` named ``hrm`` whose tools act on `home`."""
    from importlib import metadata

    from mcp.server.mcpserver import MCPServer

    from hrm._extras import distribution_name

    try:
        version = metadata.version(distribution_name())
    except metadata.PackageNotFoundError:  # running from a source tree
        version = "0"
    impl = tools or HrmTools(home)
    server: MCPServer = MCPServer(
        "hrm", version=version, instructions=_INSTRUCTIONS, log_level="WARNING"
    )
    for name in TOOL_NAMES:
        method = getattr(impl, name)
        server.add_tool(_threaded(method), name=name, description=_summary(method))
    return server


def _summary(method: Callable[..., Any]) -> str:
    return inspect.getdoc(method) or method.__name__


def _threaded(method: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    """An async tool running `method` on a worker thread, its errors made tool errors."""
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(method)
    async def tool(**arguments: Any) -> dict[str, Any]:
        call = functools.partial(method, **arguments)
        try:
            return await anyio.to_thread.run_sync(call)
        except HRMError as exc:
            raise ToolError(exc.message) from None
        except Exception as exc:  # a bug must not take the server down with it
            raise ToolError(f"internal error in {method.__name__}: {type(exc).__name__}") from exc

    # The SDK reads the signature for the argument schema: it is the method's, without self.
    tool.__signature__ = inspect.signature(method, eval_str=True)  # type: ignore[attr-defined]
    return tool


def run_stdio(home: HRMHome) -> None:
    """Serve `home` over stdio until the client closes the connection (blocks).

    An entry point: it runs its own event loop, so it fails inside a running one.
    """
    build_server(home).run("stdio")
