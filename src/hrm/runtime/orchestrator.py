"""The agent runtime (001 §4.5) and the MapReduce orchestrator (001 §8.4).

`AgentRuntime` executes approved bundles: map (serial or on a bounded pool), validate every
output through the firewall, reduce. Each agent is one model call (plus tool rounds) through the
adapter ``llm_for(definition)`` returns, so per-agent provider and model overrides work; the
caller passes the gateway-wrapped adapters. Recoverable errors are retried by the one retry
decision (`hrm.errors.recover_from_error`). Timeouts return what finished and name the rest;
`cancel` stops waiting; `get_status` can be polled from any thread while a bundle runs. One
``work_order`` record per agent run goes to the injected ``record`` callable (the stack's
execution ledger).

`Orchestrator` is 001 §8.4's façade: agent ids, a `Reducer` and ``parallel``, no proposal.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.errors import HRMError, recover_from_error
from hrm.llm.types import LLMCallConfig, Message
from hrm.runtime import _packets
from hrm.runtime._map import AgentSlot, MapRun
from hrm.runtime.firewall import check_output
from hrm.runtime.reducers import Reducer, SynthesisReducer, reducer_for
from hrm.runtime.types import (
    AgentExecutionContext,
    AgentExecutionHandle,
    AgentExecutionResult,
    AgentExecutionStatus,
    AgentFailure,
    AgentOutput,
    DroppedOutput,
)
from hrm.scrubbing import scrub
from hrm.types import Clock, ReducerType, system_clock

if TYPE_CHECKING:
    from hrm.config import PolicySurface
    from hrm.llm.types import ILLMAdapter
    from hrm.reasoning.types import AgentBundleProposal
    from hrm.runtime.agents import AgentDefinition, AgentRegistry
    from hrm.runtime.tools import ToolRegistry

__all__ = ["AgentRuntime", "LLMFor", "Orchestrator", "OrchestratorResult", "RecordFn"]

logger = logging.getLogger(__name__)

LLMFor = Callable[["AgentDefinition"], "ILLMAdapter"]
"""Gives the model (usually a gateway) an agent runs on, honouring its overrides."""
RecordFn = Callable[[str, dict[str, Any]], Any]
"""Appends ``(kind, data)`` to the stack's execution ledger."""

_DEFAULT_MAX_DEPTH = {ReducerType.SYNTHESIZE: 2}
_MAX_FINISHED_HANDLES = 256


@dataclass
class _Run:
    """A bundle in flight: its handle, and the map run once it started."""

    handle: AgentExecutionHandle
    cancel_requested: bool = False
    map_run: MapRun | None = None
    done: threading.Event = field(default_factory=threading.Event)


class AgentRuntime:
    """Executes approved agent bundles with MapReduce (001 §4.5).

    Thread-safe: bundles may run concurrently, and `get_status`/`cancel` may be called from any
    thread while they run.

    Args:
        registry: The agents that may run.
        llm_for: The model each agent calls (inject gateways; tests inject scripted adapters).
        policy: Supplies ``MAX_CONCURRENT_AGENTS`` and ``AGENT_TIMEOUT_MS``.
        max_concurrent: Overrides the policy's concurrency.
        agent_timeout_ms: Overrides the policy's per-agent timeout.
        max_retries: Retries of a recoverable model error per agent run.
        tools: Tools agents may call (each needs its capability and a listing in ``tools``).
        max_tool_rounds: Tool round trips per agent run before its answer is taken as is.
        record: Receives one ``work_order`` record per agent run; ``None`` records nothing.
        sleep: Waits between retries; default waits on the bundle's cancel event.
        clock: Wall clock for handle timestamps.
    """

    def __init__(
        self,
        registry: AgentRegistry,
        llm_for: LLMFor,
        *,
        policy: PolicySurface | None = None,
        max_concurrent: int | None = None,
        agent_timeout_ms: int | None = None,
        max_retries: int = 2,
        tools: ToolRegistry | None = None,
        max_tool_rounds: int = 3,
        record: RecordFn | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Clock = system_clock,
    ) -> None:
        concurrency = max_concurrent or (policy.MAX_CONCURRENT_AGENTS if policy else 3)
        timeout = agent_timeout_ms or (policy.AGENT_TIMEOUT_MS if policy else 30_000)
        if concurrency < 1 or timeout < 1 or max_retries < 0:
            raise HRMError.validation_failed(
                "max_concurrent and agent_timeout_ms must be at least 1, max_retries at least 0",
                max_concurrent=concurrency, agent_timeout_ms=timeout, max_retries=max_retries,
            )
        self.registry = registry
        self.llm_for = llm_for
        self.max_concurrent = concurrency
        self.agent_timeout_ms = timeout
        self.max_retries = max_retries
        self.tools = tools
        self.max_tool_rounds = max_tool_rounds
        self._record = record
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}

    # ── 001 §4.5 ─────────────────────────────────────────────────────────

    def execute_bundle(
        self,
        proposal: AgentBundleProposal,
        context: AgentExecutionContext,
        *,
        handle_id: str | None = None,
    ) -> AgentExecutionResult:
        """Run a bundle to the end in the caller's thread (map, validate, reduce).

        Args:
            proposal: The approved bundle; its reducer and ``reducer_config`` win over the
                context's.
            context: Problem, stance, task and optional bundle timeout.
            handle_id: Use this id (so another thread can poll `get_status` meanwhile).

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown agent, ``VALIDATION_FAILED`` for a bad
                reducer configuration — before anything runs. Agent failures, violations and
                timeouts are reported in the result, not raised.
        """
        run_id = self._open(proposal.agents, ReducerType(proposal.reducer), handle_id)
        try:
            return self._execute(run_id, proposal, context)
        finally:
            self._close(run_id)

    def start_bundle(
        self, proposal: AgentBundleProposal, context: AgentExecutionContext
    ) -> str:
        """Start a bundle on a background thread and return its handle id at once.

        Poll `get_status`, stop it with `cancel`, collect it with `wait`. Configuration errors
        are raised here, before the thread starts.
        """
        self._plan(proposal, context)  # fail fast on unknown agents or bad reducer settings
        run_id = self._open(proposal.agents, ReducerType(proposal.reducer), None)

        def target() -> None:
            try:
                self._execute(run_id, proposal, context)
            except HRMError as exc:
                self._finish(run_id, None, error=exc.message)
            finally:
                self._close(run_id)

        threading.Thread(target=target, name=f"hrm-bundle-{run_id}", daemon=True).start()
        return run_id

    def wait(self, handle_id: str, timeout_s: float | None = None) -> AgentExecutionResult | None:
        """The bundle's result once it settles; ``None`` if ``timeout_s`` passes first."""
        run = self._get(handle_id)
        if not run.done.wait(timeout_s):
            return None
        return run.handle.result

    def cancel(self, handle_id: str) -> bool:
        """Cancel a running bundle; ``False`` when it has already settled.

        Running agents are abandoned (reported as ``cancelled``), waiting ones never start;
        the bundle returns promptly with what had finished and ``cancelled=True``.
        """
        run = self._get(handle_id)
        with self._lock:
            if run.handle.status not in ("pending", "running"):
                return False
            run.cancel_requested = True
            map_run = run.map_run
        if map_run is not None:
            map_run.cancel()
        logger.info("bundle %s cancelled", handle_id)
        return True

    def get_status(self, handle_id: str) -> AgentExecutionStatus:
        """Progress, the current agent and the outputs so far; callable from any thread.

        Raises:
            HRMError: ``NOT_FOUND`` for an unknown handle.
        """
        run = self._get(handle_id)
        with self._lock:
            status = run.handle.status
            map_run = run.map_run
            result = run.handle.result
        if result is not None:
            settled_ids = [o.agent_id for o in result.outputs]
            return AgentExecutionStatus(
                handle_id=handle_id, status=status, progress=1.0, current_agent=None,
                outputs_so_far=settled_ids,
            )
        if map_run is None:
            return AgentExecutionStatus(
                handle_id=handle_id, status=status, progress=0.0, current_agent=None,
                outputs_so_far=[],
            )
        running, accepted, settled = map_run.snapshot()
        return AgentExecutionStatus(
            handle_id=handle_id,
            status=status,
            progress=settled / len(map_run.slots) if map_run.slots else 1.0,
            current_agent=running[0] if running else None,
            outputs_so_far=accepted,
            running=running,
        )

    def get_handle(self, handle_id: str) -> AgentExecutionHandle:
        """The handle (000 §4.5) of a bundle this runtime ran or runs."""
        return self._get(handle_id).handle

    # ── execution ────────────────────────────────────────────────────────

    def _plan(
        self, proposal: AgentBundleProposal, context: AgentExecutionContext
    ) -> tuple[list[str], Reducer, int]:
        for agent_id in proposal.agents:
            self.registry.get(agent_id)
        reducer_type = ReducerType(proposal.reducer)
        config = proposal.reducer_config or {}
        mapped = list(proposal.agents)
        lead_llm: ILLMAdapter | None = None
        lead_prompt: str | None = None
        lead_config: LLMCallConfig | None = None
        if reducer_type == ReducerType.SYNTHESIZE:
            lead_id = str(config.get("lead") or (mapped[0] if mapped else ""))
            lead = self.registry.get(lead_id)
            delegates = config.get("delegates")
            if delegates:
                mapped = [str(a) for a in delegates]
            else:
                mapped = [a for a in mapped if a != lead_id]
            for agent_id in mapped:
                self.registry.get(agent_id)
            lead_llm = self.llm_for(lead)
            lead_prompt = lead.system_prompt
            lead_config = self._call_config(lead)
        reducer = reducer_for(
            proposal, lead_llm, task=context.task,
            lead_system_prompt=lead_prompt, lead_config=lead_config,
        )
        depth = config.get("max_depth", _DEFAULT_MAX_DEPTH.get(reducer_type, 1))
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise HRMError.validation_failed(f"max_depth must be an integer >= 1, got {depth!r}")
        return mapped, reducer, depth

    def _execute(
        self, run_id: str, proposal: AgentBundleProposal, context: AgentExecutionContext
    ) -> AgentExecutionResult:
        mapped, reducer, max_depth = self._plan(proposal, context)
        config = proposal.reducer_config or {}
        timeout_ms = context.timeout_ms or config.get("timeout_ms")
        result = self.run(
            mapped, reducer, parallel=proposal.parallel, context=context,
            timeout_ms=timeout_ms, max_depth=max_depth, run_id=run_id,
            reducer_type=ReducerType(proposal.reducer),
        )
        return result

    def run(
        self,
        agents: list[str],
        reducer: Reducer,
        *,
        parallel: bool,
        context: AgentExecutionContext,
        timeout_ms: int | None = None,
        max_depth: int = 1,
        run_id: str | None = None,
        reducer_type: ReducerType | None = None,
    ) -> AgentExecutionResult:
        """Map ``agents``, validate, reduce with ``reducer``: the engine under both façades.

        Args:
            agents: Agent ids to map (for a synthesis, the delegates).
            reducer: How to combine the accepted outputs.
            parallel: Pool (``True``) or pipeline (``False``).
            context: Problem, stance and task.
            timeout_ms: Bundle deadline; ``None`` for none.
            max_depth: How deep delegation may nest (agents of this map are at depth 1).
            run_id: An id opened with this runtime (internal); a new handle otherwise.
            reducer_type: The reducer's type for the result (derived from ``reducer``).
        """
        own = run_id is None
        kind = reducer_type or _reducer_type(reducer)
        run_id = run_id or self._open(agents, kind, None)
        try:
            return self._run(run_id, agents, reducer, kind, parallel=parallel, context=context,
                             timeout_ms=timeout_ms, max_depth=max_depth)
        finally:
            if own:
                self._close(run_id)

    def _run(
        self,
        run_id: str,
        agents: list[str],
        reducer: Reducer,
        kind: ReducerType,
        *,
        parallel: bool,
        context: AgentExecutionContext,
        timeout_ms: int | None,
        max_depth: int,
    ) -> AgentExecutionResult:
        started = time.monotonic()
        ids = set(agents) | set(self.registry.ids())
        map_run = MapRun(
            agents,
            work=lambda agent_id, previous, cancel: self._run_agent(
                agent_id, previous, cancel, context=context, task=context.task,
                depth=1, max_depth=max_depth, bundle_id=run_id, lineage=(agent_id,),
            ),
            validate=lambda output: self._validate(output, ids, depth=1, max_depth=max_depth),
            parallel=parallel,
            max_concurrent=self.max_concurrent,
            timeout_for=self._timeout_for,
            deadline=started + timeout_ms / 1000 if timeout_ms else None,
            on_settle=lambda slot: self._emit(slot, run_id),
        )
        run = self._get(run_id)
        with self._lock:
            run.map_run = map_run
            run.handle.status = "running"
            cancel_now = run.cancel_requested
        if cancel_now:
            map_run.cancel()
        slots = map_run.run()
        result = self._result(run_id, agents, kind, slots, map_run, reducer, started)
        self._finish(run_id, result)
        return result

    def _result(
        self,
        run_id: str,
        agents: list[str],
        kind: ReducerType,
        slots: list[AgentSlot],
        map_run: MapRun,
        reducer: Reducer,
        started: float,
    ) -> AgentExecutionResult:
        in_order = sorted(map_run.accepted, key=lambda s: s.index)  # map order, not finish order
        outputs = [s.output for s in in_order if s.output is not None]
        dropped = [d for s in slots for d in s.dropped]
        for slot in map_run.accepted:
            if slot.output is not None:
                dropped.extend(slot.output.metadata.pop("nested_dropped", []))
        cancelled = map_run.cancel_event.is_set()
        value: Any = None
        error: str | None = None
        code: str | None = None
        if cancelled:
            error = "The bundle was cancelled"
        elif not outputs and kind != ReducerType.VOTE:
            error = "No agent output passed: " + _why_none(slots)
        else:
            try:
                value = reducer.reduce(outputs)
            except HRMError as exc:
                error, code = exc.message, exc.code.value
        return AgentExecutionResult(
            id=run_id,
            agents=list(agents),
            reducer=kind,
            success=error is None,
            result=value,
            error=error,
            error_code=code,
            duration_ms=int((time.monotonic() - started) * 1000),
            outputs=outputs,
            dropped=dropped,
            timed_out=[s.agent_id for s in slots if s.state == "timed_out"],
            failed=[
                AgentFailure(s.agent_id, s.error.code.value, s.error.message)
                for s in slots
                if s.state == "failed" and s.error is not None
            ],
            cancelled=cancelled,
            not_started=[s.agent_id for s in slots if s.state == "not_started"],
        )

    def _timeout_for(self, agent_id: str) -> int:
        definition = self.registry.get(agent_id)
        return definition.timeout_ms or self.agent_timeout_ms

    def _call_config(self, definition: AgentDefinition) -> LLMCallConfig:
        return LLMCallConfig(
            model=definition.model,
            temperature=definition.temperature,
            max_tokens=definition.max_tokens,
            timeout_ms=definition.timeout_ms or self.agent_timeout_ms,
            purpose="agent_run",
        )

    def _run_agent(
        self,
        agent_id: str,
        previous: AgentOutput | None,
        cancel: threading.Event,
        *,
        context: AgentExecutionContext,
        task: str,
        depth: int,
        max_depth: int,
        bundle_id: str,
        lineage: tuple[str, ...],
        delegated_by: str | None = None,
    ) -> AgentOutput:
        """One agent: its model call, tool rounds and (within ``max_depth``) delegation."""
        definition = self.registry.get(agent_id)
        llm = self.llm_for(definition)
        system = _packets.system_prompt(definition, self.tools)
        messages = [Message(role="user", content=_packets.user_prompt(
            context, task=task, previous=previous, delegated_by=delegated_by,
        ))]
        config = self._call_config(definition)
        tokens = 0
        requested: list[str] = []
        for _round in range(self.max_tool_rounds + 1):
            response = self._chat(llm, messages, system, config, cancel)
            tokens += response.total_tokens
            parsed = _packets.parse_reply(response.content)
            if not parsed.tool_calls or _round == self.max_tool_rounds:
                break
            results, asked = self._call_tools(definition, parsed.tool_calls)
            requested.extend(asked)
            messages.append(Message(role="assistant", content=response.content))
            messages.append(Message(role="user", content=results))
        parsed.requested_capabilities = list(
            dict.fromkeys([*parsed.requested_capabilities, *requested])
        )
        output = _packets.build_output(definition, parsed, metadata={
            "tokens": tokens, "model": response.model, "provider": response.provider,
            "depth": depth,
        })
        delegation = output.metadata.get("delegate")
        allowed = "delegate" in definition.capabilities
        if delegation and allowed and depth < max_depth:
            return self._delegate(
                definition, output, llm, config, cancel, context=context, depth=depth,
                max_depth=max_depth, bundle_id=bundle_id, lineage=lineage,
            )
        return output

    def _chat(
        self,
        llm: ILLMAdapter,
        messages: list[Message],
        system: str,
        config: LLMCallConfig,
        cancel: threading.Event,
    ) -> Any:
        attempt = 0
        while True:
            try:
                return llm.chat(list(messages), system, config)
            except HRMError as exc:
                plan = recover_from_error(exc)
                if plan["action"] != "retry" or attempt >= self.max_retries or cancel.is_set():
                    raise
                attempt += 1
                delay = plan["delay_ms"] / 1000
                logger.info("agent call failed (%s); retry %s in %s s", exc.code.value, attempt,
                            delay)
                if self._sleep is not None:
                    self._sleep(delay)
                elif cancel.wait(delay):
                    raise

    def _call_tools(
        self, definition: AgentDefinition, calls: list[tuple[str, dict[str, Any]]]
    ) -> tuple[str, list[str]]:
        """Run an agent's tool calls; returns the results message and capabilities asked for."""
        import json

        lines: list[str] = []
        asked: list[str] = []
        for name, arguments in calls:
            if self.tools is None or name not in self.tools.names():
                lines.append(f"Tool {name}: not available")
                continue
            tool = self.tools.get(name)
            asked.append(tool.capability)
            if name not in definition.tools:
                lines.append(f"Tool {name}: refused (not listed in the agent's tools)")
                continue
            try:
                value = self.tools.call(
                    name, arguments, capabilities=definition.capabilities, caller=definition.id
                )
                text = json.dumps(value, ensure_ascii=False, default=str)
            except HRMError as exc:
                text = f"error: {exc.message}"
            lines.append(f"Tool {name} result: {text}")
        return "\n".join(lines), asked

    def _delegate(
        self,
        definition: AgentDefinition,
        output: AgentOutput,
        llm: ILLMAdapter,
        config: LLMCallConfig,
        cancel: threading.Event,
        *,
        context: AgentExecutionContext,
        depth: int,
        max_depth: int,
        bundle_id: str,
        lineage: tuple[str, ...],
    ) -> AgentOutput:
        """Run the agents ``output`` delegates to, then have this agent synthesize them."""
        requests: list[dict[str, Any]] = output.metadata.get("delegate", [])
        nested_dropped: list[DroppedOutput] = []
        sub_outputs: list[AgentOutput] = []
        ids = set(self.registry.ids())
        for request in requests:
            subtask = request.get("task") or context.task
            for sub_id in request.get("agents", []):
                if sub_id in lineage or sub_id not in self.registry:
                    why = "a delegation cycle" if sub_id in lineage else "an unknown agent"
                    nested_dropped.append(DroppedOutput(
                        definition.id, "capability_request",
                        f"delegation to '{sub_id}' refused: {why}",
                    ))
                    continue
                if cancel.is_set():
                    break
                try:
                    sub = self._run_agent(
                        sub_id, None, cancel, context=context, task=subtask, depth=depth + 1,
                        max_depth=max_depth, bundle_id=bundle_id,
                        lineage=(*lineage, sub_id), delegated_by=definition.id,
                    )
                except HRMError as exc:
                    logger.info("delegate %s of %s failed: %s", sub_id, definition.id, exc)
                    continue
                verdicts = self._validate(sub, ids, depth=depth + 1, max_depth=max_depth)
                if verdicts:
                    nested_dropped.extend(verdicts)
                else:
                    nested_dropped.extend(sub.metadata.pop("nested_dropped", []))
                    sub_outputs.append(sub)
        meta = {k: v for k, v in output.metadata.items() if k != "delegate"}
        requested = [c for c in output.requested_capabilities]
        if sub_outputs:
            synthesis = SynthesisReducer(
                definition.id, llm, system_prompt=definition.system_prompt,
                task=context.task, config=config,
            ).reduce(sub_outputs)
            content: Any = synthesis
            meta["delegated_to"] = [o.agent_id for o in sub_outputs]
        else:
            content = output.content
        meta["nested_dropped"] = nested_dropped
        return AgentOutput(
            agent_id=output.agent_id, output_type=output.output_type, content=content,
            requested_capabilities=requested, metadata=meta,
        )

    def _validate(
        self, output: AgentOutput, agent_ids: set[str], *, depth: int, max_depth: int
    ) -> list[DroppedOutput]:
        known = output.agent_id in self.registry
        definition = self.registry.get(output.agent_id) if known else None
        verdict = check_output(output, definition, agent_ids=agent_ids)
        if verdict is not None:
            logger.warning("agent %s output dropped (%s): %s", verdict.agent_id, verdict.rule,
                           verdict.reason)
            return [verdict]
        if output.metadata.get("delegate") and depth >= max_depth:
            return [DroppedOutput(
                output.agent_id, "max_depth",
                f"requested delegation at depth {depth}, beyond the bundle's max_depth "
                f"{max_depth}",
            )]
        return []

    # ── handles and records ──────────────────────────────────────────────

    def _open(self, agents: list[str], kind: ReducerType, handle_id: str | None) -> str:
        run_id = handle_id or new_id("bundle")
        handle = AgentExecutionHandle(
            id=run_id, agents=list(agents), reducer=kind, status="pending",
            started_at=self._clock(),
        )
        with self._lock:
            if run_id in self._runs and not self._runs[run_id].done.is_set():
                raise HRMError.validation_failed(f"Bundle '{run_id}' is already running")
            self._runs[run_id] = _Run(handle=handle)
        return run_id

    def _finish(
        self, run_id: str, result: AgentExecutionResult | None, *, error: str | None = None
    ) -> None:
        with self._lock:
            run = self._runs[run_id]
            handle = run.handle
            handle.result = result
            handle.completed_at = self._clock()
            if result is not None and result.cancelled:
                handle.status, handle.error = "cancelled", result.error
            elif result is not None and result.success:
                handle.status = "completed"
            else:
                handle.status = "failed"
                handle.error = result.error if result is not None else error

    def _close(self, run_id: str) -> None:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            if run.handle.status in ("pending", "running"):
                run.handle.status = "failed"
                run.handle.error = run.handle.error or "the bundle stopped before a result"
                run.handle.completed_at = self._clock()
            run.done.set()
            finished = [k for k, r in self._runs.items() if r.done.is_set()]
            for stale in finished[: max(0, len(finished) - _MAX_FINISHED_HANDLES)]:
                del self._runs[stale]

    def _get(self, handle_id: str) -> _Run:
        with self._lock:
            run = self._runs.get(handle_id)
        if run is None:
            raise HRMError.not_found("agent bundle", handle_id)
        return run

    def _emit(self, slot: AgentSlot, bundle_id: str) -> None:
        if self._record is None:
            return
        status = {"completed": "completed", "dropped": "dropped"}.get(slot.state, slot.state)
        error: str | None = None
        if slot.error is not None:
            error = f"{slot.error.code.value}: {slot.error.message}"
        elif slot.dropped:
            error = f"{slot.dropped[0].rule}: {slot.dropped[0].reason}"
        elif slot.state in ("timed_out", "cancelled", "not_started"):
            error = slot.state
        tokens = slot.output.metadata.get("tokens") if slot.output is not None else None
        data = {
            "wo_id": new_id("wo"),
            "type": "agent_run",
            "agent_id": slot.agent_id,
            "bundle_id": bundle_id,
            "status": status,
            "duration_ms": slot.duration_ms,
            "error": error,
            "tokens": tokens,
        }
        try:
            self._record("work_order", scrub(data))
        except HRMError:
            logger.warning("could not record agent run %s of %s", slot.agent_id, bundle_id,
                           exc_info=True)


def _reducer_type(reducer: Reducer) -> ReducerType:
    try:
        return ReducerType(reducer.name)
    except ValueError:
        return ReducerType.PASS_THROUGH


def _why_none(slots: list[AgentSlot]) -> str:
    counts: dict[str, int] = {}
    for slot in slots:
        counts[slot.state] = counts.get(slot.state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no agents"


@dataclass
class OrchestratorResult:
    """The outcome of `Orchestrator.execute` (001 §8.4)."""

    success: bool
    """Whether a result was produced."""
    result: Any = None
    """The reduced value."""
    error: HRMError | None = None
    """Why not, when not."""
    execution: AgentExecutionResult | None = None
    """hrm: the full account — outputs, dropped, timed out, failed."""


class Orchestrator:
    """One execution engine for every orchestration mode (001 §8.4): Map + a `Reducer`.

    Args:
        runtime: The runtime whose agents, models and policy are used.
        timeout_ms: The bundle deadline.
    """

    def __init__(self, runtime: AgentRuntime, timeout_ms: int = 30_000) -> None:
        self.runtime = runtime
        self.timeout_ms = timeout_ms

    def execute(
        self,
        agents: list[str],
        reducer: Reducer,
        parallel: bool = True,
        context: AgentExecutionContext | None = None,
    ) -> OrchestratorResult:
        """Map ``agents`` (parallel or serial), validate, reduce; errors become the result."""
        ctx = context or AgentExecutionContext(problem_id="adhoc")
        try:
            for agent_id in agents:
                self.runtime.registry.get(agent_id)
            execution = self.runtime.run(
                agents, reducer, parallel=parallel, context=ctx, timeout_ms=self.timeout_ms,
                max_depth=_DEFAULT_MAX_DEPTH.get(_reducer_type(reducer), 1),
            )
        except HRMError as exc:
            return OrchestratorResult(success=False, error=exc)
        error = None
        if not execution.success:
            error = _execution_error(execution)
        return OrchestratorResult(
            success=execution.success, result=execution.result, error=error, execution=execution
        )


def _execution_error(execution: AgentExecutionResult) -> HRMError:
    from hrm.errors import ErrorCode

    message = execution.error or "the bundle produced no result"
    try:
        code = ErrorCode(execution.error_code) if execution.error_code else None
    except ValueError:
        code = None
    return HRMError(code or ErrorCode.STRATEGY_FAILED, message, context={"bundle": execution.id})
