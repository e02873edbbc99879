"""The agent runtime's data (001 §4.5, 000 §4.5-4.6): outputs, contexts, results, status, handles.

Plain values with no I/O, so Focus, the pipeline and the CLI can read a bundle's outcome without
importing the orchestrator. `AgentOutput` keeps the two checks the spec puts on it
(`contains_decision`, `is_valid_packet`); the firewall (`hrm.runtime.firewall`) builds its rule
table on top of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hrm.types import ReducerType, Stance

__all__ = [
    "DECISION_MARKERS",
    "HANDLE_STATES",
    "OUTPUT_TYPES",
    "AgentExecutionContext",
    "AgentExecutionHandle",
    "AgentExecutionResult",
    "AgentExecutionStatus",
    "AgentFailure",
    "AgentOutput",
    "DroppedOutput",
]

OUTPUT_TYPES = ("proposal", "data", "artifact")
"""The packet types an agent may return (001 §4.5)."""

DECISION_MARKERS = ("DECISION:", "I have decided", "Final answer:")
"""Phrases that mark a decision; agents propose, they never decide (001 §4.5)."""

HANDLE_STATES = ("pending", "running", "completed", "failed", "cancelled")
"""The states of an execution handle (000 §4.5)."""


@dataclass(kw_only=True)
class AgentOutput:
    """One agent's packet, checked by the firewall before any reducer sees it (001 §4.5)."""

    agent_id: str
    """The agent that wrote it."""
    output_type: str
    """``proposal``, ``data`` or ``artifact``."""
    content: Any
    """What the agent produced (text for model-backed agents)."""
    requested_capabilities: list[str] = field(default_factory=list)
    """Capabilities the agent asked for (tools it called, delegation it requested)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """``confidence`` (used by ``select_best``), ``tokens``, ``model``, ``delegate``..."""

    def contains_decision(self) -> bool:
        """Whether the content carries a decision marker instead of a proposal."""
        text = str(self.content)
        return any(marker in text for marker in DECISION_MARKERS)

    def is_valid_packet(self) -> bool:
        """Whether the packet has an agent id, a known type and list-shaped requests."""
        return (
            isinstance(self.agent_id, str)
            and bool(self.agent_id.strip())
            and self.output_type in OUTPUT_TYPES
            and isinstance(self.requested_capabilities, list)
            and all(isinstance(c, str) for c in self.requested_capabilities)
            and isinstance(self.metadata, dict)
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for ``--json`` output."""
        return {
            "agent_id": self.agent_id,
            "output_type": self.output_type,
            "content": self.content,
            "requested_capabilities": list(self.requested_capabilities),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class DroppedOutput:
    """An output the firewall (or the depth bound) refused, with the rule that refused it."""

    agent_id: str
    """The offending agent."""
    rule: str
    """``decision_marker``, ``packet_structure``, ``capability_request``,
    ``prompt_injection`` or ``max_depth``."""
    reason: str
    """What in the output broke the rule."""

    def to_dict(self) -> dict[str, str]:
        """``{agent_id, rule, reason}``."""
        return {"agent_id": self.agent_id, "rule": self.rule, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class AgentFailure:
    """An agent whose model call failed after the retries were spent."""

    agent_id: str
    """The agent that failed."""
    code: str
    """The `hrm.errors.ErrorCode` value of the last error."""
    message: str
    """The last error's message."""

    def to_dict(self) -> dict[str, str]:
        """``{agent_id, code, message}``."""
        return {"agent_id": self.agent_id, "code": self.code, "message": self.message}


@dataclass(kw_only=True)
class AgentExecutionContext:
    """What a bundle runs for (001 §4.5, plus the task and the timeout hrm needs)."""

    problem_id: str
    """The problem the bundle works on."""
    commitment_id: str | None = None
    """The active commitment, if any."""
    stance: Stance = Stance.EXECUTION
    """The stance that approved the bundle."""
    reducer: ReducerType = ReducerType.PASS_THROUGH
    """How outputs are combined (the proposal's reducer wins when one is given)."""
    reducer_config: dict[str, Any] = field(default_factory=dict)
    """Reducer settings (the proposal's win when one is given)."""
    task: str = ""
    """hrm: the work itself, sent to every agent."""
    background: str = ""
    """hrm: what the agents should know for it (a stack's assembled context), sent after the
    task as its ``Context:`` part; delegated subtasks are sent it too."""
    timeout_ms: int | None = None
    """hrm: bundle deadline; ``None`` takes ``reducer_config["timeout_ms"]`` or none."""


@dataclass(kw_only=True)
class AgentExecutionResult:
    """What a bundle produced (001 §4.5), with what did not make it and why."""

    id: str
    """The bundle (and handle) id."""
    agents: list[str]
    """The agents that were asked to run, in order."""
    reducer: ReducerType
    """The reducer that combined the outputs."""
    success: bool
    """Whether a reduced result was produced."""
    result: Any
    """The reducer's value (``None`` when it failed, abstained or the bundle was cancelled)."""
    error: str | None
    """Why there is no result, when there is none."""
    duration_ms: int
    """Wall time of the bundle."""
    outputs: list[AgentOutput] = field(default_factory=list)
    """The outputs that passed the firewall, in agent order."""
    dropped: list[DroppedOutput] = field(default_factory=list)
    """Outputs the firewall refused, with rule and reason."""
    timed_out: list[str] = field(default_factory=list)
    """Agents that did not finish before their or the bundle's deadline."""
    failed: list[AgentFailure] = field(default_factory=list)
    """Agents whose calls failed after retries."""
    cancelled: bool = False
    """Whether `AgentRuntime.cancel` stopped the bundle."""
    not_started: list[str] = field(default_factory=list)
    """Agents never started because the bundle was cancelled or ran out of time first."""
    error_code: str | None = None
    """The `ErrorCode` value behind ``error`` (``escalation_required`` for a tied vote...)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for ``--json`` output and records."""
        return {
            "id": self.id,
            "agents": list(self.agents),
            "reducer": self.reducer.value,
            "success": self.success,
            "result": self.result,
            "error": self.error,
            "error_code": self.error_code,
            "duration_ms": self.duration_ms,
            "outputs": [o.to_dict() for o in self.outputs],
            "dropped": [d.to_dict() for d in self.dropped],
            "timed_out": list(self.timed_out),
            "failed": [f.to_dict() for f in self.failed],
            "not_started": list(self.not_started),
            "cancelled": self.cancelled,
        }


@dataclass(kw_only=True)
class AgentExecutionStatus:
    """A snapshot of a running (or finished) bundle, safe to take from any thread (001 §4.5)."""

    handle_id: str
    """The bundle's handle."""
    status: str
    """``pending``, ``running``, ``completed``, ``failed`` or ``cancelled``."""
    progress: float
    """Settled agents (finished, failed, dropped or timed out) over all agents, 0.0-1.0."""
    current_agent: str | None
    """The most recently started agent still running, if any."""
    outputs_so_far: list[str]
    """Ids of the agents whose outputs have passed the firewall so far, in finishing order."""
    running: list[str] = field(default_factory=list)
    """hrm: every agent running now (several in a parallel map)."""


@dataclass(kw_only=True)
class AgentExecutionHandle:
    """A started bundle (000 §4.5); ``result`` is set once it settles."""

    id: str
    """The handle id, also the bundle id in records."""
    agents: list[str]
    """The agents of the bundle."""
    reducer: ReducerType
    """The bundle's reducer (000's ``mode``)."""
    status: str
    """One of `HANDLE_STATES`."""
    started_at: datetime
    """When the bundle was started."""
    completed_at: datetime | None = None
    """When it settled."""
    result: AgentExecutionResult | None = None
    """The outcome, once settled."""
    error: str | None = None
    """Why it failed or was cancelled."""
