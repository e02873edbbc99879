"""The plan engine's data (002): profiles, state, passes, history, refinements, reports.

Plain dataclasses. 002 calls ``.model_dump()`` on several of them, so each has one returning a
JSON-ready dict; `plan_to_dict` and `plan_from_dict` do the same for the shared `Plan` type
(which lives in `hrm.altitude.types`: one type for the planner and the engine). `Memory` is the
small protocol 002's phases read step outputs through; `StepMemory` is its dict-backed form.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from typing import Any, Literal, Protocol, runtime_checkable

from hrm.altitude.types import Plan, PlanStep, PlanStepStatus

__all__ = [
    "CLARITY_STATES",
    "REFINEMENT_ACTION_TYPES",
    "SEVERITIES",
    "ConvergenceAssessment",
    "ExecutionHistory",
    "ExecutionPass",
    "Memory",
    "OrchestrationState",
    "Phase",
    "PlanRunResult",
    "RefinementAction",
    "SemanticValidationReport",
    "StepMemory",
    "Supervisor",
    "TTLExpirationResponse",
    "TaskProfile",
    "ValidationIssue",
    "copy_plan",
    "dump",
    "plan_from_dict",
    "plan_to_dict",
]

Phase = Literal["A", "B", "C", "D"]
"""002's phases: A task profile and TTL, B initial plan, C execution, D adaptive depth."""

REFINEMENT_ACTION_TYPES = ("ADD", "MODIFY", "REMOVE", "REPLACE")
"""What a refinement may do to a plan (002 PlanRefinement)."""

SEVERITIES = ("low", "medium", "high", "critical")
"""Validation issue severities, mildest first; ``high`` and ``critical`` block convergence."""

CLARITY_STATES = ("CLEAR", "PARTIALLY_CLEAR", "BLOCKED")
"""How usable a step's result is: a full output, a thin or empty one, or none (failed)."""


_PRIMITIVES = (str, int, float, bool, type(None))


def dump(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses to dicts, enums to values, tuples to lists."""
    if isinstance(value, _PRIMITIVES) and not isinstance(value, Enum):
        return value
    if isinstance(value, Plan):
        return plan_to_dict(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: dump(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [dump(v) for v in value]
    return value


class _Dumpable:
    """``model_dump()`` as 002 calls it, for the dataclasses below."""

    def model_dump(self) -> dict[str, Any]:
        """This record as a JSON-ready dict."""
        data = dump(self)
        return data if isinstance(data, dict) else {}


@runtime_checkable
class Memory(Protocol):
    """Where step outputs and handoffs are kept between steps (002's ``Memory`` parameter).

    Implementations must be safe to call from the engine's worker threads.
    """

    def get(self, key: str) -> Any:
        """The value stored under ``key``, or ``None``."""
        ...

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        ...


class StepMemory:
    """A dict-backed, thread-safe `Memory` for one engine (the default)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        """The value stored under ``key``, or ``None``."""
        with self._lock:
            return self._values.get(key)

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        with self._lock:
            self._values[key] = value

    def keys(self) -> list[str]:
        """Every stored key, sorted (for inspection and tests)."""
        with self._lock:
            return sorted(self._values)


@runtime_checkable
class Supervisor(Protocol):
    """The gates every step passes before it runs (002's Supervisor; Focus in hrm)."""

    def review_step(self, step: PlanStep) -> str | None:
        """Why ``step`` may not run, or ``None`` to let it run. Gates fail closed."""
        ...


@dataclass(kw_only=True)
class TaskProfile(_Dumpable):
    """How deep a request needs to go, derived from its classification (002 Phase A)."""

    profile_version: int = 1
    """Incremented by each Phase D update."""
    reasoning_depth: int = 2
    """1 (a direct answer) to 5 (deep, high-stakes work); sizes the TTL."""
    complexity: str = "moderate"
    """The classification's complexity: simple | moderate | complex."""
    uncertainty: float = 0.5
    """The classification's uncertainty, 0.0-1.0."""
    stakes: str = "medium"
    """The classification's stakes: low | medium | high."""
    confidence_requirement: str = "medium"
    """How sure the result must be before it converges: low | medium | high (from stakes)."""
    reasons: list[str] = field(default_factory=list)
    """Why the depth is what it is (inference and every update)."""


@dataclass(kw_only=True)
class ValidationIssue(_Dumpable):
    """One problem the validator found in a plan or its outputs."""

    issue_type: str
    """``no_steps``, ``duplicate_step``, ``unknown_action_type``, ``dangling_dependency``,
    ``dependency_cycle``, ``unknown_tool``, ``tool_not_allowed``, ``step_failed``,
    ``empty_output`` or ``goal_gap`` (a model's review)."""
    severity: str
    """One of `SEVERITIES`."""
    description: str
    """What is wrong and where, for a person."""
    step_id: str | None = None
    """The step concerned, if one is."""
    proposed_fix: str | None = None
    """What would resolve it (a model's suggestion becomes an added step's description)."""

    @property
    def is_blocking(self) -> bool:
        """Whether the issue prevents convergence (severity high or critical)."""
        return self.severity in ("high", "critical")


@dataclass(kw_only=True)
class SemanticValidationReport(_Dumpable):
    """What `SemanticValidator.validate` found."""

    validation_id: str
    issues: list[ValidationIssue] = field(default_factory=list)
    overall_severity: str = "none"
    """The worst issue's severity, or ``none``."""
    source: str = "deterministic"
    """``deterministic``, or ``model`` when a model's review contributed issues."""

    @property
    def blocking(self) -> list[ValidationIssue]:
        """The issues that prevent convergence."""
        return [issue for issue in self.issues if issue.is_blocking]


@dataclass(kw_only=True)
class ConvergenceAssessment(_Dumpable):
    """Whether the plan's goal is met (002 ConvergenceEngine)."""

    converged: bool
    reason_codes: list[str] = field(default_factory=list)
    """``ALL_STEPS_COMPLETE``, ``STEPS_PENDING``, ``STEPS_FAILED``, ``BLOCKING_ISSUES``,
    ``NO_STEPS``, ``MODEL_JUDGED_COMPLETE``, ``MODEL_JUDGED_INCOMPLETE``, ``ASSESSMENT_FAILED``."""
    completeness_score: float = 0.0
    """COMPLETE steps over all steps, 0.0-1.0."""
    confidence: float = 1.0
    """1.0 for the deterministic rule; the model's stated confidence when it decided."""
    source: str = "deterministic"


@dataclass(kw_only=True)
class RefinementAction(_Dumpable):
    """One change to a plan (002 PlanRefinement)."""

    action_type: str
    """One of `REFINEMENT_ACTION_TYPES`."""
    target_step_id: str | None = None
    """The step changed, removed or replaced (``None`` for ADD)."""
    new_step: dict[str, Any] | None = None
    """PlanStep fields for ADD and REPLACE; the fields to change for MODIFY."""
    reason: str = ""
    """Why, for the history."""


@dataclass(kw_only=True)
class OrchestrationState(_Dumpable):
    """The engine's run state; phases receive a copy (002 "state snapshots")."""

    plan: Plan
    ttl_remaining: int
    """Steps the run may still execute."""
    global_ttl: int
    """The hard ceiling on steps for the whole run."""
    goal: str = ""
    """The request the plan serves (model steps see it)."""
    pass_number: int = 0
    phase: str = "A"
    ttl_used: int = 0
    """Steps executed so far."""
    commitment_turns_remaining: int | None = None
    """The active commitment's bound on the run's steps, if any."""
    step_outputs: dict[str, Any] = field(default_factory=dict)
    """Output of each executed step, by step id."""
    clarity_states: dict[str, str] = field(default_factory=dict)
    """Latest `CLARITY_STATES` value of each executed step, by step id."""
    executed_step_ids: list[str] = field(default_factory=list)
    """Every step started, in order (a retried step appears once per run)."""

    def snapshot(self) -> OrchestrationState:
        """A copy the phases may change without touching the engine's state."""
        return replace(
            self,
            plan=copy_plan(self.plan),
            step_outputs=dict(self.step_outputs),
            clarity_states=dict(self.clarity_states),
            executed_step_ids=list(self.executed_step_ids),
        )

    def step_cap(self) -> int:
        """The most steps the run may execute in total (global TTL and commitment)."""
        caps = [self.global_ttl]
        if self.commitment_turns_remaining is not None:
            caps.append(self.commitment_turns_remaining)
        return max(0, min(caps))


@dataclass(kw_only=True)
class ExecutionPass(_Dumpable):
    """One iteration of the multi-pass loop (pass 0 is phases A and B)."""

    pass_number: int
    phase: str
    """The last phase the pass reached."""
    plan_state: dict[str, Any]
    """The plan when the pass started (`plan_to_dict`)."""
    execution_results: list[dict[str, Any]] = field(default_factory=list)
    evaluation_results: dict[str, Any] = field(default_factory=dict)
    refinement_changes: list[dict[str, Any]] = field(default_factory=list)
    ttl_remaining: int = 0
    """TTL when the pass ended."""
    ttl_adjustments: list[dict[str, Any]] = field(default_factory=list)
    """Phase D's changes: ``{from, to, reason, profile_version}``."""
    errors: list[str] = field(default_factory=list)
    """Phase errors the engine recovered from."""
    timing_information: dict[str, Any] = field(default_factory=dict)
    """``duration_ms`` of the pass."""


@dataclass(kw_only=True)
class ExecutionHistory(_Dumpable):
    """Everything a run did, pass by pass (saved by ``hrm plan run`` for ``hrm plan show``)."""

    execution_id: str
    task_input: str
    configuration: dict[str, Any] = field(default_factory=dict)
    passes: list[ExecutionPass] = field(default_factory=list)
    final_result: dict[str, Any] = field(default_factory=dict)
    overall_statistics: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class TTLExpirationResponse(_Dumpable):
    """Where and when the step budget ran out (002 TTLStrategy)."""

    expiration_type: Literal["phase_boundary", "mid_phase"]
    phase: str
    pass_number: int
    ttl_remaining: int
    plan_state: dict[str, Any]
    execution_results: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""


@dataclass(kw_only=True)
class PlanRunResult(_Dumpable):
    """What `PlanEngine.run` returns."""

    status: Literal["converged", "ttl_expired", "failed"]
    plan: Plan
    """The plan as it stood when the run ended."""
    history: ExecutionHistory
    outputs: dict[str, Any] = field(default_factory=dict)
    """Output of each COMPLETE step, by step id, in plan order."""
    expiration: dict[str, Any] | None = None
    """The expiration response when ``status`` is ``ttl_expired``."""
    error: str | None = None
    """Why the run failed, when it did."""

    @property
    def final_output(self) -> Any:
        """The last COMPLETE step's output (what a caller shows as the answer), or ``None``."""
        for step in reversed(self.plan.steps):
            if step.status == PlanStepStatus.COMPLETE:
                return step.output
        return None


def copy_plan(plan: Plan) -> Plan:
    """A copy whose steps, lists and dicts are new objects (outputs are shared, not copied).

    Copies attribute dictionaries directly: the engine snapshots the plan several times a pass,
    and `dataclasses.replace` (a full ``__init__`` per step) was most of its overhead.
    """
    steps = []
    for step in plan.steps:
        new = PlanStep.__new__(PlanStep)
        new.__dict__.update(step.__dict__)
        new.dependencies = list(step.dependencies)
        new.incoming_context = dict(step.incoming_context)
        new.capabilities = list(step.capabilities)
        steps.append(new)
    copied = Plan.__new__(Plan)
    copied.__dict__.update(plan.__dict__)
    copied.steps = steps
    copied.signals = list(plan.signals)
    return copied


_STEP_FIELDS = tuple(f.name for f in fields(PlanStep))
_PLAN_FIELDS = tuple(f.name for f in fields(Plan) if f.name != "steps")


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data (status as its value)."""
    data = {name: dump(getattr(plan, name)) for name in _PLAN_FIELDS}
    data["steps"] = [
        {name: dump(getattr(step, name)) for name in _STEP_FIELDS} for step in plan.steps
    ]
    return data


def plan_from_dict(data: dict[str, Any]) -> Plan:
    """A plan back from `plan_to_dict` output (unknown keys ignored)."""
    step_names = {f.name for f in fields(PlanStep)}
    steps = []
    for raw in data.get("steps") or []:
        values = {k: v for k, v in raw.items() if k in step_names}
        if "status" in values:
            values["status"] = PlanStepStatus(values["status"])
        steps.append(PlanStep(**values))
    plan_names = {f.name for f in fields(Plan)} - {"steps"}
    values = {k: v for k, v in data.items() if k in plan_names}
    return Plan(steps=steps, **values)
