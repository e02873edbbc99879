"""Altitude's data types (001 §2, 002): classifications, plans, evaluations, execution results.

`Plan` and `PlanStep` are ONE type shared by the Altitude planner and the plan engine
(``hrm.plans``): 001's fields plus 002's step-execution fields, so a plan the planner writes is
the plan the engine runs, with no conversion in between (ARCHITECTURE §1, "One vocabulary").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from hrm.types import AltitudeLevel, JSONDict, Stance

__all__ = [
    "PLAN_ACTION_TYPES",
    "AltitudeClassification",
    "Evaluation",
    "ExecutionResult",
    "Plan",
    "PlanStep",
    "PlanStepStatus",
    "TransitionEvent",
]

PLAN_ACTION_TYPES = ("research", "execute", "validate", "ask", "respond")
"""What a plan step may do: 001's four, plus ``respond`` — compose an answer from the outputs of
earlier steps with no side effects (the single step of ``quick_answer``, the synthesis of
``exploration``, the reconciliation of ``verification``)."""


@dataclass(kw_only=True)
class AltitudeClassification:
    """How high an input lives (001 §2.1)."""

    level: AltitudeLevel
    confidence: float
    """0.0-1.0: how clearly the markers pointed at one level."""
    signals: list[str]
    """What triggered this classification (markers fired, defaults, model refinement)."""
    suggested_stance: Stance | None
    """The stance this level usually works in; ``None`` leaves the current stance alone."""
    allows_agents: bool
    """Whether work at this level may be delegated to agents."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TransitionEvent:
    """An altitude change, appended to the decision ledger as ``altitude_transition`` (001 §8.3)."""

    from_level: AltitudeLevel
    to_level: AltitudeLevel
    reason: str
    at: datetime
    event_type: str = "altitude_transition"

    def payload(self) -> JSONDict:
        """The event payload exactly as 001 §8.3 writes it."""
        return {"from": self.from_level.value, "to": self.to_level.value, "reason": self.reason}


class PlanStepStatus(str, Enum):
    """Where a step is in its run (002 StepPreparation)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


@dataclass(kw_only=True)
class PlanStep:
    """One step of a plan: 001's fields plus what the 002 engine needs to run it.

    Mutable on purpose: the plan engine moves ``status`` and fills ``incoming_context``,
    ``output`` and ``handoff_to_next`` as it runs.
    """

    order: int
    """1-based position; dependencies refer to it."""
    description: str
    action_type: str
    """One of `PLAN_ACTION_TYPES`."""
    dependencies: list[int] = field(default_factory=list)
    """Orders of the steps that must be COMPLETE before this one runs."""
    step_id: str = ""
    """Stable id (``step_<order>`` unless given)."""
    status: PlanStepStatus = PlanStepStatus.PENDING
    incoming_context: dict[str, Any] = field(default_factory=dict)
    """Outputs of the dependencies, filled by the engine before the step runs (002)."""
    step_index: int = 0
    """1-based index in the plan (002 ``populate_step_indices``)."""
    total_steps: int = 0
    handoff_to_next: str | None = None
    """What this step passes to the steps depending on it."""
    output: Any = None
    tool: str | None = None
    """The tool this step calls, if any."""
    agent: str | None = None
    """The agent this step is delegated to, if any."""
    capabilities: list[str] = field(default_factory=list)
    """Capabilities the step needs (used to pick a tool or agent)."""

    def __post_init__(self) -> None:
        if not self.step_id:
            self.step_id = f"step_{self.order}"
        if not self.step_index:
            self.step_index = self.order


@dataclass(kw_only=True)
class Plan:
    """A plan for one input (001 §2.2), runnable by the plan engine (002)."""

    id: str
    steps: list[PlanStep]
    estimated_turns: int
    """Depth of the step graph: steps without mutual dependencies share a turn."""
    requires_agents: bool
    agent_suggestion: str | None
    """Agent id to delegate to when agents are needed."""
    strategy: str | None = None
    """The reasoning strategy the plan realises (``quick_answer``, ``decomposition``...)."""
    source: str = "template"
    """``template`` (deterministic) or ``model`` (model-generated and validated)."""
    signals: list[str] = field(default_factory=list)
    """How the plan was made, including why a model plan was rejected."""

    def step(self, order: int) -> PlanStep | None:
        """The step with this order, or None."""
        for candidate in self.steps:
            if candidate.order == order:
                return candidate
        return None


@dataclass(kw_only=True)
class ExecutionResult:
    """What running a plan produced (001 §2.4)."""

    success: bool
    outputs: list[str] = field(default_factory=list)
    artifacts_created: list[str] = field(default_factory=list)
    turns_used: int = 1
    errors: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Evaluation:
    """An execution result assessed against its plan (001 §2.3)."""

    success: bool
    completion_ratio: float
    """0.0-1.0: share of the plan's (not skipped) steps that completed."""
    quality_score: float
    """0.0-1.0: completion, less penalties for errors, failed steps and overrun."""
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
