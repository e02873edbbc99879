"""`hrm mcp`: learnings, handoffs, skill matching and a turn's `why` as MCP tools (stdio).

Coding assistants that speak the Model Context Protocol (Claude Code, through the project's
``.mcp.json`` that ``hrm install claude-code`` writes) call these tools where hooks cannot reach:
mid-session searches, storing a learning the moment it is found, writing a handoff on request.
The tools are `HrmTools` (plain functions over one home); `build_server` publishes them with the
official ``mcp`` SDK, an optional extra (``pip install 'hrm[mcp]'``).
"""

from __future__ import annotations

from hrm.mcp_server.server import TOOL_NAMES, build_server, run_stdio
from hrm.mcp_server.tools import HandoffLearningInput, HrmTools

__all__ = ["TOOL_NAMES", "HandoffLearningInput", "HrmTools", "build_server", "run_stdio"]
