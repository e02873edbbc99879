"""The multi-pass plan engine (002): phases A-D, refinement, step preparation, TTL.

`PlanEngine.run` is the entry point: it profiles the request (depth and a step budget), makes or
takes a plan, and runs it in passes — ready steps in parallel, evaluation, refinement, depth
adaptation — until it converges, fails, or the budget is spent. The phase functions
(`hrm.plans.phases`) keep 002's tuple contracts and never raise.
"""

from hrm.plans.convergence import ConvergenceEngine
from hrm.plans.depth import AdaptiveDepth
from hrm.plans.engine import PlanEngine
from hrm.plans.executor import StepExecutor
from hrm.plans.phases import (
    phase_a_taskprofile_ttl,
    phase_b_initial_plan_refinement,
    phase_c_evaluate,
    phase_c_execute_batch,
    phase_c_refine,
    phase_d_adaptive_depth,
)
from hrm.plans.planner import RecursivePlanner
from hrm.plans.refinement import apply_actions
from hrm.plans.step_prep import get_ready_steps, populate_incoming_context, populate_step_indices
from hrm.plans.ttl import create_expiration_response
from hrm.plans.types import (
    ConvergenceAssessment,
    ExecutionHistory,
    ExecutionPass,
    Memory,
    OrchestrationState,
    PlanRunResult,
    RefinementAction,
    SemanticValidationReport,
    StepMemory,
    Supervisor,
    TaskProfile,
    TTLExpirationResponse,
    ValidationIssue,
    plan_from_dict,
    plan_to_dict,
)
from hrm.plans.validation import SemanticValidator

__all__ = [
    "AdaptiveDepth",
    "ConvergenceAssessment",
    "ConvergenceEngine",
    "ExecutionHistory",
    "ExecutionPass",
    "Memory",
    "OrchestrationState",
    "PlanEngine",
    "PlanRunResult",
    "RecursivePlanner",
    "RefinementAction",
    "SemanticValidationReport",
    "SemanticValidator",
    "StepExecutor",
    "StepMemory",
    "Supervisor",
    "TTLExpirationResponse",
    "TaskProfile",
    "ValidationIssue",
    "apply_actions",
    "create_expiration_response",
    "get_ready_steps",
    "phase_a_taskprofile_ttl",
    "phase_b_initial_plan_refinement",
    "phase_c_evaluate",
    "phase_c_execute_batch",
    "phase_c_refine",
    "phase_d_adaptive_depth",
    "plan_from_dict",
    "plan_to_dict",
    "populate_incoming_context",
    "populate_step_indices",
]
