"""The StepExecutor (002): runs one plan step and says how it went.

A step runs one of three ways (HO1's work, ARCHITECTURE §1):

- ``step.agent`` set: an agent bundle of that one agent through the runtime's orchestrator
  (``execute_bundle(proposal, context)``, `hrm.runtime`);
- ``step.tool`` set: a call through `hrm.runtime.tools.ToolRegistry`, holding only the step's
  ``capabilities`` (the registry refuses a tool whose capability the step lacks). Arguments come
  from ``incoming_context["tool_arguments"]``; without them a tool taking ``query`` gets the
  step's description;
- otherwise a model call through the injected adapter (normally the stack's `LLMGateway`), with
  the goal, the step and its dependencies' results in the system prompt.

`StepExecutor.execute` never raises: every failure becomes a FAILED result carrying the error.
It records one work order per step through the injected ``record(kind, data)`` — what ran, how
long, the outcome; never the output or the prompt (the gateway records the model call itself).
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm._turn_slot import TURN_SLOT
from hrm.altitude.types import PlanStepStatus
from hrm.errors import HRMError
from hrm.plans.deliverable import CHECK_INSTRUCTION
from hrm.plans.step_prep import DEPENDENCIES_KEY
from hrm.scrubbing import scrub
from hrm.types import Stance

if TYPE_CHECKING:
    from hrm.altitude.types import PlanStep
    from hrm.llm.gateway import RecordFn
    from hrm.llm.types import ILLMAdapter

__all__ = ["EventFn", "StepExecutor", "clarity_of"]

EventFn = Callable[[str, dict[str, Any]], None]
"""Receives ``(kind, data)`` progress events (``step_started``, ``step_finished``)."""

logger = logging.getLogger(__name__)

_INSTRUCTIONS = {
    "research": "Gather what the goal needs for this step and report it plainly.",
    "execute": "Do the work of this step and give its result.",
    "validate": CHECK_INSTRUCTION,
    "respond": "Write the answer to the goal from the earlier results.",
    "ask": "Write the one question the user must answer before the work can go on.",
}
_MAX_CONTEXT_CHARS = 1500
_HANDOFF_CHARS = 400
_THIN_OUTPUT_CHARS = 3


def clarity_of(status: PlanStepStatus, output: Any) -> str:
    """``CLEAR`` for a complete step with output, ``PARTIALLY_CLEAR`` when it is empty,
    ``BLOCKED`` when the step failed."""
    if status != PlanStepStatus.COMPLETE:
        return "BLOCKED"
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    return "CLEAR" if len(text.strip()) >= _THIN_OUTPUT_CHARS else "PARTIALLY_CLEAR"


class StepExecutor:
    """Runs plan steps on a model, a tool or an agent.

    Args:
        llm: The model for model steps (default: the offline model).
        tool_registry: The runtime's `ToolRegistry`, for steps with a ``tool``.
        orchestrator: The runtime's agent orchestrator (``execute_bundle``), for steps with an
            ``agent``.
        record: Appends ``(kind, data)`` to the execution ledger; ``None`` records nothing.
        stance: The stance agent bundles run under.
        max_tokens: Answer bound of a model step.
        agent_timeout_ms: Deadline of an agent step's bundle.
        max_parallel: Most steps of one batch run at once (threads); 1 runs them in turn.

    Use it as a context manager (or call `close`) to stop its worker threads.
    """

    def __init__(
        self,
        llm: ILLMAdapter | None = None,
        *,
        tool_registry: Any | None = None,
        orchestrator: Any | None = None,
        record: RecordFn | None = None,
        stance: Stance = Stance.EXECUTION,
        max_tokens: int = 512,
        agent_timeout_ms: int | None = None,
        max_parallel: int = 4,
    ) -> None:
        if llm is None:
            from hrm.llm.offline import OfflineAdapter

            llm = OfflineAdapter()
        self.llm = llm
        self.tool_registry = tool_registry
        self.orchestrator = orchestrator
        self.record = record
        self.stance = Stance(stance)
        self.max_tokens = max_tokens
        self.agent_timeout_ms = agent_timeout_ms
        self.max_parallel = max(1, max_parallel)
        self.on_event: EventFn | None = None
        """Progress listener; called from worker threads, so it must be thread-safe."""
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def __enter__(self) -> StepExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker threads (idempotent); later batches start new ones."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def execute_batch(
        self, steps: Sequence[PlanStep], *, goal: str = "", plan_id: str = ""
    ) -> list[dict[str, Any]]:
        """Run independent steps, in parallel up to ``max_parallel``; results in step order.

        Each worker runs in a copy of the caller's context (tracing spans, stack scope).
        """
        if len(steps) <= 1 or self.max_parallel == 1:
            return [self.execute(step, goal=goal, plan_id=plan_id) for step in steps]
        pool = self._ensure_pool()
        futures = [
            pool.submit(contextvars.copy_context().run, self.execute, step,
                        goal=goal, plan_id=plan_id)
            for step in steps
        ]
        with TURN_SLOT.released():  # the steps' own threads work; this one only waits
            return [future.result() for future in futures]

    def _ensure_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.max_parallel, thread_name_prefix="hrm-plan-step"
                )
            return self._pool

    def execute(self, step: PlanStep, *, goal: str = "", plan_id: str = "") -> dict[str, Any]:
        """Run ``step``; never raises.

        Returns:
            ``{step_id, status, output, handoff_to_next, clarity_state, executor, error,
            error_code, duration_ms, wo_id}`` with ``status`` ``COMPLETE`` or ``FAILED``.
        """
        started = time.perf_counter()
        wo_id = new_id("wo")
        executor = "agent" if step.agent else "tool" if step.tool else "model"
        self._emit("step_started", {
            "step_id": step.step_id, "description": step.description, "executor": executor,
            "action_type": step.action_type,
        })
        error: str | None = None
        error_code: str | None = None
        output: Any = None
        try:
            if executor == "agent":
                output = self._run_agent(step, goal, plan_id)
            elif executor == "tool":
                output = self._run_tool(step)
            else:
                output = self._run_model(step, goal)
        except HRMError as exc:
            error, error_code = str(exc), exc.code.value
        except Exception as exc:  # a tool's own code may raise anything; the step fails
            logger.warning("step %s raised %s", step.step_id, type(exc).__name__, exc_info=True)
            error, error_code = f"{type(exc).__name__}: {exc}", "internal_error"
        status = PlanStepStatus.FAILED if error is not None else PlanStepStatus.COMPLETE
        duration_ms = int((time.perf_counter() - started) * 1000)
        result = {
            "step_id": step.step_id,
            "status": status.value,
            "output": output if error is None else f"error: {error}",
            "handoff_to_next": _handoff(output) if error is None else None,
            "clarity_state": clarity_of(status, output),
            "executor": executor,
            "error": error,
            "error_code": error_code,
            "duration_ms": duration_ms,
            "wo_id": wo_id,
        }
        self._record(step, plan_id, result)
        self._emit("step_finished", {
            k: result[k] for k in ("step_id", "status", "clarity_state", "executor",
                                   "error", "duration_ms")
        })
        return result

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        listener = self.on_event
        if listener is None:
            return
        try:
            listener(kind, data)
        except Exception:  # a display must never break a run
            logger.warning("plan event listener failed on %s", kind, exc_info=True)

    def _run_model(self, step: PlanStep, goal: str) -> str:
        from hrm.llm.types import LLMCallConfig, Message

        instruction = _INSTRUCTIONS.get(step.action_type, _INSTRUCTIONS["execute"])
        lines = ["You carry out one part of a larger plan. " + instruction]
        earlier = _dependency_lines(step)
        if earlier:
            lines.append("Results of earlier steps:")
            lines.extend(earlier)
        request = step.description
        if goal:
            request += f"\n\nThe overall request: {goal[:2000]}"
        response = self.llm.chat(
            [Message(role="user", content=request)],
            "\n".join(lines),
            LLMCallConfig(max_tokens=self.max_tokens, purpose=f"plan_step:{step.action_type}"),
        )
        return response.content

    def _run_tool(self, step: PlanStep) -> Any:
        registry = self.tool_registry
        if registry is None:
            raise HRMError.not_found("tool registry", str(step.tool), "the engine was given none")
        arguments = step.incoming_context.get("tool_arguments")
        if not isinstance(arguments, dict):
            tool = registry.get(step.tool)
            arguments = {"query": step.description} if "query" in tool.parameters else {}
        return registry.call(
            step.tool, arguments, capabilities=list(step.capabilities), caller=step.step_id
        )

    def _run_agent(self, step: PlanStep, goal: str, plan_id: str) -> Any:
        if self.orchestrator is None:
            raise HRMError.not_found(
                "agent orchestrator", str(step.agent), "the engine was given none"
            )
        from hrm.reasoning.types import AgentBundleProposal, InputClassification
        from hrm.runtime.types import AgentExecutionContext
        from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes

        earlier = _dependency_lines(step)
        background = [f"The overall request: {goal[:2000]}"] if goal else []
        if earlier:
            background += ["Results of earlier steps:", *earlier]
        proposal = AgentBundleProposal(
            strategy="decomposition",
            classification=InputClassification(
                complexity=Complexity.MODERATE,
                uncertainty=0.5,
                conflict=ConflictLevel.NONE,
                stakes=Stakes.MEDIUM,
                horizon="immediate",
                domain=[],
                confidence=0.5,
            ),
            agents=[str(step.agent)],
            reducer=ReducerType.PASS_THROUGH,
            parallel=False,
            reason=f"plan step {step.step_id}",
        )
        context = AgentExecutionContext(
            problem_id=plan_id or step.step_id,
            stance=self.stance,
            task=step.description,
            background="\n".join(background),
            timeout_ms=self.agent_timeout_ms,
        )
        outcome = self.orchestrator.execute_bundle(proposal, context)
        if not outcome.success:
            raise HRMError.strategy_failed(
                "plan_step", f"agent '{step.agent}' gave no result: {outcome.error}"
            )
        return outcome.result

    def _record(self, step: PlanStep, plan_id: str, result: dict[str, Any]) -> None:
        if self.record is None:
            return
        data = {
            "wo_id": result["wo_id"],
            "unit": "plan_step",
            "plan_id": plan_id,
            "step_id": step.step_id,
            "action_type": step.action_type,
            "executor": result["executor"],
            "tool": step.tool,
            "agent": step.agent,
            "outcome": "ok" if result["error"] is None else "error",
            "error_code": result["error_code"],
            "duration_ms": result["duration_ms"],
        }
        try:
            self.record("work_order", scrub(data))
        except HRMError as exc:
            logger.warning("could not record the work order of step %s: %s", step.step_id, exc)


def _dependency_lines(step: PlanStep) -> list[str]:
    deps = step.incoming_context.get(DEPENDENCIES_KEY)
    if not isinstance(deps, dict):
        return []
    lines: list[str] = []
    budget = _MAX_CONTEXT_CHARS
    for step_id, item in deps.items():
        if not isinstance(item, dict) or budget <= 0:
            continue
        value = item.get("handoff") or item.get("output")
        text = " ".join(str(value).split())[:budget] if value is not None else "(no output)"
        budget -= len(text)
        lines.append(f"- {step_id} ({str(item.get('description', ''))[:120]}): {text}")
    return lines


def _handoff(output: Any) -> str | None:
    if output is None:
        return None
    text = output if isinstance(output, str) else str(output)
    flat = " ".join(text.split())
    return flat[:_HANDOFF_CHARS] if flat else None
