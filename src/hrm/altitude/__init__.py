"""Altitude (001 §2): which level an input lives at, plans for it, and how the result went.

`AltitudeGovernor` classifies inputs into L1-L4, validates actions per level and records
transitions; `AltitudePlanner` makes plans per reasoning strategy and checks them against the
stance; `AltitudeEvaluator` scores results and proposes altitude changes.
"""

from hrm.altitude.evaluator import AltitudeEvaluator
from hrm.altitude.governor import AltitudeGovernor
from hrm.altitude.planner import AltitudePlanner, plan_violations
from hrm.altitude.types import (
    PLAN_ACTION_TYPES,
    AltitudeClassification,
    Evaluation,
    ExecutionResult,
    Plan,
    PlanStep,
    PlanStepStatus,
    TransitionEvent,
)

__all__ = [
    "PLAN_ACTION_TYPES",
    "AltitudeClassification",
    "AltitudeEvaluator",
    "AltitudeGovernor",
    "AltitudePlanner",
    "Evaluation",
    "ExecutionResult",
    "Plan",
    "PlanStep",
    "PlanStepStatus",
    "TransitionEvent",
    "plan_violations",
]
