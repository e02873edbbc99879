"""The stack's HO1 runtime: agent bundles and plans run on this stack's gateway, tools and
ledgers. Built once per stack, on first use (most turns never delegate)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hrm.altitude.types import ExecutionResult, Plan, PlanStep, PlanStepStatus

if TYPE_CHECKING:
    from hrm.runtime.agents import AgentDefinition
    from hrm.runtime.orchestrator import AgentRuntime
    from hrm.runtime.tools import ToolRegistry
    from hrm.stacks.executor import ExecutionOutcome, StackExecutor
    from hrm.stacks.factory import CognitiveStack

__all__ = ["agent_runtime", "execute_bundle", "stack_tools"]


def stack_tools(stack: CognitiveStack) -> ToolRegistry:
    """Safe built-in tools for this stack: files inside HOT/ (shared, read-only), its own memory,
    and learnings. Cached on the stack."""
    cached = getattr(stack, "_tools", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from hrm.runtime.tools import ToolRegistry

    def search_memory(query: str, limit: int) -> Sequence[Mapping[str, Any]]:
        words = {w.lower() for w in query.split() if len(w) > 2}
        hits = []
        for entry in stack.bus.episodic.query(limit=200):
            text = str(entry.content)
            if words & {w.lower().strip(".,:;'\"") for w in text.split()}:
                hits.append({"id": entry.id, "type": entry.entry_type, "content": text[:300]})
        return hits[:limit]

    def search_learnings(query: str, limit: int) -> Sequence[Mapping[str, Any]]:
        from hrm.continuity.learnings_types import SearchQuery

        if not query.strip():
            return []
        query_ = SearchQuery(text=query[:2000], limit=max(1, min(limit, 100)))
        results = stack.learnings().search_memories(query_, budget_ms=500)
        return [{"id": r.learning.id, "content": r.learning.content,
                 "relevance": r.relevance_score} for r in results.results]

    tools = ToolRegistry.with_builtins(
        allowed_roots=[stack.home.hot_dir],
        search_memory=search_memory,
        search_learnings=search_learnings,
    )
    object.__setattr__(stack, "_tools", tools)
    return tools


def agent_runtime(stack: CognitiveStack) -> AgentRuntime:
    """The stack's `AgentRuntime` (cached): agents run on the stack's gateway, or on a gateway
    of their own provider/model override that records into the same execution ledger."""
    cached = getattr(stack, "_runtime", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from hrm.llm import LLMAdapterFactory, LLMGateway
    from hrm.runtime.agents import AgentRegistry
    from hrm.runtime.orchestrator import AgentRuntime

    overrides: dict[tuple[str | None, str | None], Any] = {}

    def llm_for(agent: AgentDefinition) -> Any:
        if not agent.provider and not agent.model:
            return stack.gateway
        key = (agent.provider, agent.model)
        if key not in overrides:
            config = replace(
                stack.config.llm,
                provider=agent.provider or stack.config.llm.provider,
                model=agent.model or stack.config.llm.model,
            )
            adapter = LLMAdapterFactory.create(config)
            # An agent's own model counts against the same session as the stack's (D280).
            usage = getattr(stack.gateway, "usage_source", None)
            budget = stack.gateway.budget_tokens if usage else stack.gateway.budget_remaining
            overrides[key] = LLMGateway.from_config(
                adapter, config, budget_tokens=budget, usage=usage,
                record=stack.record_work_order, agent_class=stack.agent_class,
            )
        return overrides[key]

    runtime = AgentRuntime(
        AgentRegistry.load(stack.home),
        llm_for,
        policy=stack.config.policy,
        agent_timeout_ms=stack.config.agent_execution_timeout_ms,
        tools=stack_tools(stack),
        record=stack.record_work_order,
    )
    object.__setattr__(stack, "_runtime", runtime)
    return runtime


def execute_bundle(
    executor: StackExecutor,
    proposal: Any,
    turn_input: Any,
    assembled: Any,
    event: Callable[..., None],
) -> ExecutionOutcome:
    """Run an approved bundle (001 §4.5) and turn its result into the turn's outcome."""
    from hrm.runtime.types import AgentExecutionContext
    from hrm.stacks.executor import ExecutionOutcome

    stack = executor.stack
    problem = stack.focus.problem_registry.get_active()
    commitment = stack.focus.commitments.get_active()
    event("agent_activated", agents=list(proposal.agents), reducer=proposal.reducer.value,
          parallel=proposal.parallel)
    context = AgentExecutionContext(
        problem_id=problem.id if problem else "",
        commitment_id=commitment.id if commitment else None,
        stance=stack.focus.stance.get_current(),
        reducer=proposal.reducer,
        reducer_config=dict(proposal.reducer_config),
        task=turn_input.text[:8000],
        background=assembled.transcript()[:4000],
    )
    result = agent_runtime(stack).execute_bundle(proposal, context)
    steps = [
        PlanStep(order=i + 1, description=f"agent {agent}", action_type="research", agent=agent,
                 status=PlanStepStatus.COMPLETE if any(o.agent_id == agent for o in result.outputs)
                 else PlanStepStatus.FAILED)
        for i, agent in enumerate(proposal.agents)
    ]
    plan = Plan(id=f"bundle_{result.id}", steps=steps, estimated_turns=1, requires_agents=True,
                agent_suggestion=proposal.agents[0] if proposal.agents else None,
                strategy=proposal.strategy)
    notes = [f"{d.agent_id}'s output was dropped by the firewall ({d.rule}): {d.reason}"
             for d in result.dropped]
    notes += [f"{agent} timed out" for agent in result.timed_out]
    if result.success:
        content = result.result
        response = content if isinstance(content, str) else "\n".join(map(str, content or []))
    else:
        response = f"The agents could not produce an answer: {result.error}"
    event("agent_bundle_finished", bundle_id=result.id, success=result.success,
          dropped=[{"agent_id": d.agent_id, "rule": d.rule} for d in result.dropped],
          timed_out=list(result.timed_out))
    return ExecutionOutcome(
        response,
        ExecutionResult(success=result.success,
                        outputs=[str(o.content)[:2000] for o in result.outputs],
                        errors=[result.error] if result.error else []),
        plan,
        "delegate",
        delivered=result.success,
        notes=notes,
        details={"bundle_id": result.id, "reducer": proposal.reducer.value,
                 "agents": list(proposal.agents), "duration_ms": result.duration_ms},
    )
