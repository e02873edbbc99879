"""The PlanEngine (002's kernel): runs a plan in passes under a step budget.

The engine holds the run's state and calls the phases only through their functions
(`hrm.plans.phases`), passing copies; it adopts what a phase returns or falls back, and keeps
the history. One run:

1. Phase A: task profile and TTL (`AdaptiveDepth`; bounded by ``ttl`` and the commitment).
   TTL 0 -> expired at the boundary before B.
2. The initial plan: the one given, or `RecursivePlanner.generate`. Phase B validates and
   refines it; a plan that still has a cycle, a dangling dependency or no steps raises
   ``VALIDATION_FAILED`` naming the problem — nothing has run.
3. Passes, each: TTL 0 -> expired at the boundary before C; phase C runs the ready steps (up to
   the TTL, independent ones in parallel), evaluates and refines. Ready steps the TTL did not
   cover -> expired mid-phase C. Converged -> done. No step can run any more -> failed. TTL 0
   and the step cap reached -> expired at the boundary before D. Phase D adapts the depth and
   moves the TTL.

``on_event(kind, data)`` receives ``run_started``, ``profile``, ``plan``, ``pass_started``,
``step_started``, ``step_finished``, ``evaluation``, ``refinement``, ``ttl_adjusted`` and
``run_finished`` (the CLI's live display); it is called from worker threads too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from hrm._process import new_id
from hrm.altitude.types import Plan, PlanStepStatus
from hrm.errors import HRMError
from hrm.plans import phases
from hrm.plans.convergence import ConvergenceEngine
from hrm.plans.depth import AdaptiveDepth
from hrm.plans.executor import StepExecutor
from hrm.plans.planner import RecursivePlanner
from hrm.plans.refinement import apply_actions
from hrm.plans.step_prep import get_ready_steps
from hrm.plans.ttl import create_expiration_response
from hrm.plans.types import (
    ExecutionHistory,
    ExecutionPass,
    OrchestrationState,
    PlanRunResult,
    RefinementAction,
    StepMemory,
    TaskProfile,
    copy_plan,
    dump,
    plan_to_dict,
)
from hrm.plans.validation import SemanticValidator, structure_issues
from hrm.types import Stance

if TYPE_CHECKING:
    from hrm.config import HRMConfig
    from hrm.llm.gateway import RecordFn
    from hrm.llm.types import ILLMAdapter
    from hrm.plans.types import Memory, Supervisor
    from hrm.reasoning.types import InputClassification

__all__ = ["PlanEngine"]

logger = logging.getLogger(__name__)

EventFn = Callable[[str, dict[str, Any]], None]


class PlanEngine:
    """Runs plans through phases A-D (see the module docstring).

    Args:
        llm: The model for steps, planning, validation and convergence (default: offline).
            With the offline model every judgement is deterministic.
        global_ttl: Step budget of a run when ``run`` is given none (``plan_default_ttl``).
        tool_registry: The runtime's tools, for steps with a ``tool``.
        orchestrator: The runtime's agent orchestrator, for steps with an ``agent``.
        record: Appends work orders to the execution ledger.
        memory: Where step outputs are kept between steps (default: a `StepMemory`).
        supervisor: The gate each step passes before it runs.
        stance: The stance plans must satisfy and agent bundles run under.
        max_parallel: Most independent steps run at once.
        adaptive: Whether phases A and D adapt depth and TTL (off: the TTL is the budget).
        planner, validator, convergence, step_executor: Replace the default collaborators.

    Runs are serialised (one at a time per engine); close the engine to stop its threads.
    """

    def __init__(
        self,
        llm: ILLMAdapter | None = None,
        *,
        global_ttl: int = 12,
        tool_registry: Any | None = None,
        orchestrator: Any | None = None,
        record: RecordFn | None = None,
        memory: Memory | None = None,
        supervisor: Supervisor | None = None,
        stance: Stance = Stance.EXECUTION,
        max_parallel: int = 4,
        adaptive: bool = True,
        planner: RecursivePlanner | None = None,
        validator: SemanticValidator | None = None,
        convergence: ConvergenceEngine | None = None,
        step_executor: StepExecutor | None = None,
    ) -> None:
        if global_ttl < 0:
            raise HRMError.validation_failed(f"global_ttl must not be negative, got {global_ttl}")
        if llm is None:
            from hrm.llm.offline import OfflineAdapter

            llm = OfflineAdapter()
        self.llm = llm
        self.global_ttl = global_ttl
        self.tool_registry = tool_registry
        self.memory: Memory = memory if memory is not None else StepMemory()
        self.supervisor = supervisor
        self.adaptive = adaptive
        self.planner = planner or RecursivePlanner(llm=llm, stance=stance)
        self.validator = validator or SemanticValidator(llm)
        self.convergence = convergence or ConvergenceEngine(llm)
        self.step_executor = step_executor or StepExecutor(
            llm,
            tool_registry=tool_registry,
            orchestrator=orchestrator,
            record=record,
            stance=stance,
            max_parallel=max_parallel,
        )
        self._run_lock = threading.Lock()

    @classmethod
    def from_config(cls, config: HRMConfig, llm: ILLMAdapter, **options: Any) -> PlanEngine:
        """An engine with the config's step budget and agent deadline."""
        executor = options.pop("step_executor", None) or StepExecutor(
            llm,
            tool_registry=options.get("tool_registry"),
            orchestrator=options.pop("orchestrator", None),
            record=options.pop("record", None),
            stance=options.get("stance", Stance.EXECUTION),
            max_parallel=options.pop("max_parallel", 4),
            agent_timeout_ms=config.agent_execution_timeout_ms,
        )
        return cls(llm, global_ttl=config.plan_default_ttl, step_executor=executor, **options)

    def __enter__(self) -> PlanEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the step executor's worker threads."""
        self.step_executor.close()

    def run(
        self,
        goal: str,
        *,
        classification: InputClassification | None = None,
        plan: Plan | None = None,
        ttl: int | None = None,
        commitment_turns_remaining: int | None = None,
        on_event: EventFn | None = None,
    ) -> PlanRunResult:
        """Run ``plan`` (or a generated one) for ``goal`` until it converges, fails or the TTL
        is spent.

        Args:
            goal: The request.
            classification: The request's classification (sizes depth and TTL).
            plan: The plan to run; ``None`` generates one. It is copied, never changed.
            ttl: The run's step budget (default: ``global_ttl``).
            commitment_turns_remaining: The active commitment's bound on the budget.
            on_event: Progress listener.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a negative TTL or a plan that cannot run
                (dependency cycle, dangling dependency, no steps).
        """
        budget = self.global_ttl if ttl is None else ttl
        if budget < 0:
            raise HRMError.validation_failed(f"ttl must not be negative, got {budget}")
        with self._run_lock:
            run = _Run(self, goal, budget, commitment_turns_remaining, on_event)
            self.step_executor.on_event = run.emit
            try:
                return run.execute(classification, plan)
            finally:
                self.step_executor.on_event = None


class _Run:
    """One run's state and history; the kernel loop lives in `execute`."""

    def __init__(
        self,
        engine: PlanEngine,
        goal: str,
        global_ttl: int,
        commitment: int | None,
        on_event: EventFn | None,
    ) -> None:
        self.engine = engine
        self.goal = goal
        self.global_ttl = global_ttl
        self.commitment = commitment
        self.on_event = on_event
        self.execution_id = new_id("run", 12)
        self.started = time.perf_counter()
        self.passes: list[ExecutionPass] = []
        self.profile = TaskProfile()
        self.depth: AdaptiveDepth | None = None
        self.configuration: dict[str, Any] = {}

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(kind, {"execution_id": self.execution_id, **data})
        except Exception:  # a display must never break a run
            logger.warning("plan event listener failed on %s", kind, exc_info=True)

    def execute(
        self, classification: InputClassification | None, given: Plan | None
    ) -> PlanRunResult:
        engine = self.engine
        self.emit("run_started", {"goal": self.goal, "ttl": self.global_ttl})
        if engine.adaptive:
            self.depth = AdaptiveDepth(
                classification, commitment_turns_remaining=self.commitment
            )
        pass0 = ExecutionPass(pass_number=0, phase="A", plan_state={})
        self.passes.append(pass0)
        ok, (profile, allocated), error = phases.phase_a_taskprofile_ttl(
            self.goal, self.depth, self.global_ttl
        )
        if not ok:
            pass0.errors.append(str(error))
        self.profile = profile or TaskProfile(reasons=["default profile (inference failed)"])
        if self.depth is None or not ok:
            allocated = min(allocated, *self._caps())
        self.configuration = {
            "global_ttl": self.global_ttl,
            "allocated_ttl": allocated,
            "commitment_turns_remaining": self.commitment,
            "task_profile": self.profile.model_dump(),
            "adaptive": engine.adaptive,
            "provider": str(engine.llm.provider),
        }
        self.emit("profile", {"task_profile": self.profile.model_dump(), "ttl": allocated})
        plan = copy_plan(given) if given is not None else Plan(
            id=new_id("plan", 12), steps=[], estimated_turns=0,
            requires_agents=False, agent_suggestion=None,
        )
        state = OrchestrationState(
            plan=plan, ttl_remaining=allocated, global_ttl=self.global_ttl, goal=self.goal,
            commitment_turns_remaining=self.commitment,
        )
        if allocated <= 0:
            return self._expire("phase_boundary", "B", state)
        state = self._phase_b(state, given is not None)
        return self._passes(state)

    def _phase_b(self, state: OrchestrationState, given: bool) -> OrchestrationState:
        engine = self.engine
        pass0 = self.passes[0]
        pass0.phase = "B"
        plan = state.plan
        if not given:
            try:
                plan = engine.planner.generate(self.goal, self.profile)
            except HRMError as exc:
                pass0.errors.append(f"plan generation failed: {exc}")
        ok, refined, error = phases.phase_b_initial_plan_refinement(
            self.goal, copy_plan(plan), self.profile, engine.planner, engine.validator,
            engine.tool_registry,
        )
        if ok:
            plan = refined
        else:
            pass0.errors.append(str(error))
        broken = structure_issues(plan)
        if broken:
            raise HRMError.validation_failed(
                f"Plan {plan.id} cannot run: " + "; ".join(i.description for i in broken),
                plan_id=plan.id,
                issues=[i.model_dump() for i in broken],
            )
        pass0.plan_state = plan_to_dict(plan)
        pass0.ttl_remaining = state.ttl_remaining
        if self.on_event is not None:
            self.emit("plan", {"plan": pass0.plan_state})
        state.plan = plan
        return state

    def _passes(self, state: OrchestrationState) -> PlanRunResult:
        engine = self.engine
        max_passes = 2 * max(1, state.step_cap()) + 4
        while True:
            if state.ttl_remaining <= 0:
                return self._expire("phase_boundary", "C", state)
            if state.pass_number >= max_passes:
                return self._finish("failed", state, error=f"no convergence in {max_passes} passes")
            state.pass_number += 1
            state.phase = "C"
            current = ExecutionPass(
                pass_number=state.pass_number, phase="C", plan_state=plan_to_dict(state.plan)
            )
            self.passes.append(current)
            self.emit("pass_started", {"pass_number": state.pass_number,
                                       "ttl_remaining": state.ttl_remaining})
            started = time.perf_counter()
            snapshot = state.snapshot()
            results = phases.phase_c_execute_batch(
                snapshot.plan, snapshot, engine.step_executor, engine.tool_registry,
                engine.memory, engine.supervisor,
            )
            state = snapshot
            current.execution_results = [dump(r) for r in results]
            current.ttl_remaining = state.ttl_remaining
            if any(r.get("skipped_reason") == phases.TTL_EXPIRED for r in results):
                self._timed(current, started)
                return self._expire("mid_phase", "C", state)
            evaluation = phases.phase_c_evaluate(
                copy_plan(state.plan), results, engine.validator, engine.convergence,
                engine.tool_registry, goal=self.goal,
            )
            current.evaluation_results = _json_evaluation(evaluation)
            current.errors += evaluation.get("errors") or []
            self.emit("evaluation", {
                "converged": evaluation["converged"],
                "reason_codes": evaluation["convergence_reason_codes"],
                "issues": len(evaluation["validation_issues"]),
            })
            if evaluation["converged"]:
                self._skip_pending(state)
                self._timed(current, started)
                return self._finish("converged", state)
            state = self._refine(state, evaluation, current)
            if not get_ready_steps(copy_plan(state.plan), engine.memory):
                self._timed(current, started)
                return self._finish("failed", state, error=_stuck(state.plan))
            if state.ttl_remaining <= 0 and (
                self.depth is None or state.ttl_used >= state.step_cap()
            ):
                self._timed(current, started)
                return self._expire("phase_boundary", "D", state)
            state = self._phase_d(state, evaluation, current)
            current.ttl_remaining = state.ttl_remaining
            self._timed(current, started)

    def _refine(
        self, state: OrchestrationState, evaluation: dict[str, Any], current: ExecutionPass
    ) -> OrchestrationState:
        ok, changes, error = phases.phase_c_refine(
            copy_plan(state.plan), evaluation, self.engine.planner
        )
        if not ok:
            current.errors.append(str(error))
            return state
        if not changes:
            return state
        actions = [RefinementAction(**change) for change in changes]
        applied, plan, error = apply_actions(state.plan, actions)
        if not applied:
            current.errors.append(str(error))
            return state
        current.refinement_changes = changes
        self.emit("refinement", {"changes": changes})
        state.plan = plan
        return state

    def _phase_d(
        self, state: OrchestrationState, evaluation: dict[str, Any], current: ExecutionPass
    ) -> OrchestrationState:
        state.phase = "D"
        current.phase = "D"
        snapshot = state.snapshot()
        before = len(current.ttl_adjustments)
        ok, updated, error = phases.phase_d_adaptive_depth(
            self.profile, evaluation, copy_plan(state.plan), self.depth, snapshot,
            self.global_ttl, [*self.passes],
        )
        if not ok:
            current.errors.append(str(error))
            return state
        if updated is not None:
            self.profile = updated
            state.ttl_remaining = snapshot.ttl_remaining
            for adjustment in current.ttl_adjustments[before:]:
                self.emit("ttl_adjusted", dict(adjustment))
        return state

    def _caps(self) -> list[int]:
        caps = [self.global_ttl]
        if self.commitment is not None:
            caps.append(max(0, self.commitment))
        return caps

    def _skip_pending(self, state: OrchestrationState) -> None:
        for step in state.plan.steps:
            if step.status == PlanStepStatus.PENDING:
                step.status = PlanStepStatus.SKIPPED
                state.plan.signals.append(f"{step.step_id} skipped: the goal was met without it")

    def _expire(
        self, kind: Literal["phase_boundary", "mid_phase"], phase: Literal["A", "B", "C", "D"],
        state: OrchestrationState,
    ) -> PlanRunResult:
        last = self.passes[-1]
        ok, response, error = create_expiration_response(
            kind, phase, last, self.passes, state, self.execution_id, self.goal
        )
        expiration = response.get("ttl_expiration") if ok else {
            "expiration_type": kind, "phase": phase, "message": error,
        }
        return self._finish("ttl_expired", state, expiration=expiration)

    def _finish(
        self,
        status: Literal["converged", "ttl_expired", "failed"],
        state: OrchestrationState,
        *,
        error: str | None = None,
        expiration: dict[str, Any] | None = None,
    ) -> PlanRunResult:
        plan = state.plan
        outputs = {s.step_id: s.output for s in plan.steps if s.status == PlanStepStatus.COMPLETE}
        duration_ms = int((time.perf_counter() - self.started) * 1000)
        history = ExecutionHistory(
            execution_id=self.execution_id,
            task_input=self.goal,
            configuration=self.configuration,
            passes=self.passes,
            final_result={
                "status": status,
                "plan": plan_to_dict(plan),
                "outputs": dump(outputs),
                "error": error,
                "expiration": expiration,
                "task_profile": self.profile.model_dump(),
            },
            overall_statistics={
                "total_passes": len(self.passes),
                "total_refinements": sum(len(p.refinement_changes) for p in self.passes),
                "convergence_achieved": status == "converged",
                "steps_executed": state.ttl_used,
                "ttl_remaining": state.ttl_remaining,
                "duration_ms": duration_ms,
            },
        )
        self.emit("run_finished", {"status": status, "error": error,
                                   "steps_executed": state.ttl_used})
        return PlanRunResult(
            status=status, plan=plan, history=history, outputs=outputs,
            expiration=expiration, error=error,
        )

    @staticmethod
    def _timed(current: ExecutionPass, started: float) -> None:
        current.timing_information = {"duration_ms": int((time.perf_counter() - started) * 1000)}


def _json_evaluation(evaluation: dict[str, Any]) -> dict[str, Any]:
    data = dump({k: v for k, v in evaluation.items() if k != "validation_issues"})
    return data if isinstance(data, dict) else {}


def _stuck(plan: Plan) -> str:
    failed = [s for s in plan.steps if s.status == PlanStepStatus.FAILED]
    if failed:
        detail = "; ".join(f"{s.step_id}: {str(s.output or '')[:160]}" for s in failed)
        return f"no step can run: {len(failed)} step(s) failed for good ({detail})"
    return "no step can run: the remaining steps wait on steps that will not complete"
