"""The agent runtime (001 §4.5, §8.4): agent definitions, MapReduce orchestration, reducers,
the output firewall and tools.

Agents are YAML definitions (`AgentRegistry`); `AgentRuntime` runs an approved
`AgentBundleProposal` — map serially or on a bounded pool, check every output through the
firewall, reduce — and reports what finished, what was dropped and why, and what timed out.

Names load on first use: the hook imports `hrm.runtime.injection` to screen what SessionStart
injects, and must not pay for the orchestrator and its model gateway.
"""

from __future__ import annotations

from hrm._lazy import lazy_exports

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook path imports this package
if TYPE_CHECKING:
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

_LAZY = {
    "RULES": "firewall",
    "AgentDefinition": "agents",
    "AgentExecutionContext": "types",
    "AgentExecutionHandle": "types",
    "AgentExecutionResult": "types",
    "AgentExecutionStatus": "types",
    "AgentFailure": "types",
    "AgentLoadError": "agents",
    "AgentOutput": "types",
    "AgentRegistry": "agents",
    "AgentRuntime": "orchestrator",
    "DroppedOutput": "types",
    "FirewallRule": "firewall",
    "MergeReducer": "reducers",
    "Orchestrator": "orchestrator",
    "OrchestratorResult": "orchestrator",
    "PassThroughReducer": "reducers",
    "Reducer": "reducers",
    "SynthesisReducer": "reducers",
    "Tool": "tools",
    "ToolRegistry": "tools",
    "VotingReducer": "reducers",
    "check_output": "firewall",
    "reducer_for": "reducers",
    "validate_output": "firewall",
}

__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
