"""The agent runtime (001 §4.5, §8.4): agent definitions, MapReduce orchestration, reducers,
the output firewall and tools.

Agents are YAML definitions (`AgentRegistry`); `AgentRuntime` runs an approved
`AgentBundleProposal` — map serially or on a bounded pool, check every output through the
firewall, reduce — and reports what finished, what was dropped and why, and what timed out.
"""

from __future__ import annotations

from hrm.runtime.agents import AgentDefinition, AgentLoadError, AgentRegistry
from hrm.runtime.firewall import RULES, FirewallRule, check_output, validate_output
from hrm.runtime.orchestrator import AgentRuntime, Orchestrator, OrchestratorResult
from hrm.runtime.reducers import (
    MergeReducer,
    PassThroughReducer,
    Reducer,
    SynthesisReducer,
    VotingReducer,
    reducer_for,
)
from hrm.runtime.tools import Tool, ToolRegistry
from hrm.runtime.types import (
    AgentExecutionContext,
    AgentExecutionHandle,
    AgentExecutionResult,
    AgentExecutionStatus,
    AgentFailure,
    AgentOutput,
    DroppedOutput,
)

__all__ = [
    "RULES",
    "AgentDefinition",
    "AgentExecutionContext",
    "AgentExecutionHandle",
    "AgentExecutionResult",
    "AgentExecutionStatus",
    "AgentFailure",
    "AgentLoadError",
    "AgentOutput",
    "AgentRegistry",
    "AgentRuntime",
    "DroppedOutput",
    "FirewallRule",
    "MergeReducer",
    "Orchestrator",
    "OrchestratorResult",
    "PassThroughReducer",
    "Reducer",
    "SynthesisReducer",
    "Tool",
    "ToolRegistry",
    "VotingReducer",
    "check_output",
    "reducer_for",
    "validate_output",
]
