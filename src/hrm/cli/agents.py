"""`hrm agents`: list, show and run agents (issue 4, item 7).

``hrm agents run researcher writer editor "Summarize the design"`` runs a bundle: the last
argument is the task, the ones before it are agent ids. Each agent calls the configured model
(or its own provider/model override) through the gateway; every agent run and model call is
recorded in the stack's execution ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from hrm.cli._common import (
    EXIT_INPUT,
    EXIT_USAGE,
    AgentClassOption,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    fail,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import print_table

if TYPE_CHECKING:
    from hrm.config import ResolvedConfig
    from hrm.llm.types import ILLMAdapter
    from hrm.runtime import AgentDefinition, AgentExecutionResult, AgentRegistry

app = typer.Typer(
    cls=SuggestingGroup,
    help="List, show and run agents.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", help="Project whose .hrm/agents/ adds agents (default: cwd)."),
]
_REDUCERS = ("pass_through", "merge", "vote", "synthesize")


def _registry(home: Path | None, project: Path | None) -> AgentRegistry:
    from hrm.runtime import AgentRegistry

    return AgentRegistry.load(home, project if project is not None else Path.cwd())


def _report_errors(registry: AgentRegistry) -> None:
    for error in registry.errors:
        err_console.print(f"warning: skipped {error.message}", markup=False, highlight=False)


@app.command("list")
def list_agents(
    home: HomeOption = None, project: ProjectOption = None, json_out: JsonOption = False
) -> None:
    """List the agents: built-in, the home's and the project's (later ones override)."""
    with handle_errors():
        registry = _registry(home, project)
    if json_out:
        emit_json({
            "agents": [
                {"id": d.id, "role": d.role, "origin": d.origin, "source": d.source,
                 "capabilities": list(d.capabilities), "tools": list(d.tools)}
                for d in registry
            ],
            "errors": [e.to_dict() for e in registry.errors],
        })
        return
    print_table(
        ["id", "role", "origin", "capabilities"],
        [(d.id, d.role, d.origin, ", ".join(d.capabilities) or "-") for d in registry],
    )
    _report_errors(registry)


@app.command("show")
def show(
    agent_id: Annotated[str, typer.Argument(help="The agent's id.")],
    home: HomeOption = None,
    project: ProjectOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show one agent's definition: role, prompt, overrides, capabilities and tools."""
    with handle_errors():
        definition = _registry(home, project).get(agent_id)
    if json_out:
        emit_json(definition.to_dict())
        return
    console.print(f"[bold]{escape(definition.id)}[/] — {escape(definition.role)}", markup=True)
    console.print(f"origin: {definition.origin} ({definition.source})", markup=False)
    overrides = {
        k: v for k, v in (("provider", definition.provider), ("model", definition.model),
                          ("temperature", definition.temperature),
                          ("max_tokens", definition.max_tokens),
                          ("timeout_ms", definition.timeout_ms)) if v is not None
    }
    console.print(f"output type: {definition.output_type}", markup=False)
    console.print(f"overrides: {overrides or 'none'}", markup=False)
    console.print(f"capabilities: {', '.join(definition.capabilities) or 'none'}", markup=False)
    console.print(f"tools: {', '.join(definition.tools) or 'none'}", markup=False)
    if definition.description:
        console.print(f"\n{definition.description}", markup=False)
    console.print("\nsystem prompt:", markup=False)
    console.print(definition.system_prompt, markup=False, highlight=False)


@app.command("run")
def run(
    items: Annotated[
        list[str], typer.Argument(help="Agent ids, then the task as the last argument.")
    ],
    reducer: Annotated[
        str, typer.Option("--reducer", "-r", help="pass_through, merge, vote or synthesize.")
    ] = "pass_through",
    parallel: Annotated[
        bool, typer.Option("--parallel", help="Run the agents concurrently (default: in turn).")
    ] = False,
    strategy: Annotated[
        str, typer.Option("--strategy", help="merge: concatenate, dedupe or select_best.")
    ] = "concatenate",
    threshold: Annotated[float, typer.Option("--threshold", help="vote: share to win.")] = 0.6,
    tiebreaker: Annotated[
        str, typer.Option("--tiebreaker", help="vote: first, abstain or escalate.")
    ] = "first",
    lead: Annotated[
        str | None, typer.Option("--lead", help="synthesize: the lead (default: first id).")
    ] = None,
    max_depth: Annotated[
        int, typer.Option("--max-depth", help="synthesize: how deep delegation may nest.")
    ] = 2,
    timeout_ms: Annotated[
        int | None, typer.Option("--timeout-ms", help="Bundle deadline in milliseconds.")
    ] = None,
    home: HomeOption = None,
    project: ProjectOption = None,
    agent_class: AgentClassOption = "ADMIN",
    json_out: JsonOption = False,
) -> None:
    """Run agents on a task and combine their outputs with a reducer."""
    if len(items) < 2:
        raise fail("give at least one agent id and then the task, e.g. "
                   "hrm agents run researcher writer \"Summarize the design\"", EXIT_USAGE)
    if reducer not in _REDUCERS:
        raise fail(f"--reducer must be one of {', '.join(_REDUCERS)}", EXIT_INPUT)
    agents, task = items[:-1], items[-1]
    config: dict[str, Any] = {}
    if reducer == "merge":
        config = {"strategy": strategy}
    elif reducer == "vote":
        config = {"threshold": threshold, "tiebreaker": tiebreaker}
    elif reducer == "synthesize":
        chosen = lead or agents[0]
        config = {"lead": chosen, "delegates": [a for a in agents if a != chosen] or agents,
                  "max_depth": max_depth}
        agents = [chosen, *[a for a in agents if a != chosen]]
    if timeout_ms is not None:
        config["timeout_ms"] = timeout_ms
    with handle_errors():
        result = _run_bundle(agents, task, reducer, parallel, config, home=home,
                             project=project, agent_class=agent_class)
    _render(result, json_out)
    if not result.success:
        raise typer.Exit(1)


def _run_bundle(
    agents: list[str],
    task: str,
    reducer: str,
    parallel: bool,
    config: dict[str, Any],
    *,
    home: Path | None,
    project: Path | None,
    agent_class: str,
) -> AgentExecutionResult:
    from hrm.config import load_config
    from hrm.home import HRMHome, parse_agent_class
    from hrm.reasoning.types import AgentBundleProposal, InputClassification
    from hrm.runtime import AgentExecutionContext, AgentRuntime, ToolRegistry
    from hrm.storage.ledger import Ledger
    from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes

    parse_agent_class(agent_class)
    h = HRMHome.resolve(home)
    project_dir = project if project is not None else Path.cwd()
    resolved = load_config(h, project_dir)
    registry = _registry(h.root, project_dir)
    _report_errors(registry)
    with Ledger(h.execution_ledger(agent_class),
                durability=resolved.config.ledger_durability) as ledger:
        runtime = AgentRuntime(
            registry,
            _llm_for(resolved, ledger.append, agent_class),
            policy=resolved.config.policy,
            tools=ToolRegistry.with_builtins(allowed_roots=[project_dir]),
            record=ledger.append,
        )
        classification = InputClassification(
            complexity=Complexity.MODERATE, uncertainty=0.5, conflict=ConflictLevel.NONE,
            stakes=Stakes.LOW, horizon="immediate", domain=[], confidence=1.0,
            signals=["cli"],
        )
        proposal = AgentBundleProposal(
            strategy="cli", classification=classification, agents=agents,
            reducer=ReducerType(reducer), parallel=parallel, reducer_config=config,
            reason="requested on the command line", confidence=1.0,
        )
        context = AgentExecutionContext(
            problem_id="cli", reducer=ReducerType(reducer), reducer_config=config, task=task,
        )
        return runtime.execute_bundle(proposal, context)


def _llm_for(resolved: ResolvedConfig, record: Any, agent_class: str) -> Any:
    """Gateways per (provider, model), built once, honouring each agent's overrides."""
    import dataclasses
    import threading

    from hrm.llm import LLMAdapterFactory, LLMGateway

    base = resolved.config.llm
    cache: dict[tuple[str, str], ILLMAdapter] = {}
    lock = threading.Lock()

    def llm_for(definition: AgentDefinition) -> ILLMAdapter:
        llm_config = dataclasses.replace(
            base,
            provider=definition.provider or base.provider,
            model=definition.model or (base.model if not definition.provider else ""),
        )
        key = (llm_config.provider, llm_config.model)
        with lock:
            if key not in cache:
                adapter = LLMAdapterFactory.create(llm_config)
                cache[key] = LLMGateway.from_config(
                    adapter, llm_config, record=record, agent_class=agent_class
                )
            return cache[key]

    return llm_for


def _render(result: AgentExecutionResult, json_out: bool) -> None:
    if json_out:
        emit_json(result.to_dict())
        return
    for output in result.outputs:
        console.print(f"[dim]✓ {escape(output.agent_id)}[/]", markup=True)
    for dropped in result.dropped:
        err_console.print(f"dropped {dropped.agent_id} ({dropped.rule}): {dropped.reason}",
                          markup=False, highlight=False)
    for failure in result.failed:
        err_console.print(f"failed {failure.agent_id} ({failure.code}): {failure.message}",
                          markup=False, highlight=False)
    for agent_id in result.timed_out:
        err_console.print(f"timed out: {agent_id}", markup=False, highlight=False)
    if result.not_started:
        err_console.print(f"not started: {', '.join(result.not_started)}", markup=False)
    if not result.success:
        err_console.print(f"error: {result.error}", markup=False, highlight=False)
        return
    value = result.result
    if isinstance(value, list):
        for item in value:
            console.print(str(item), markup=False, highlight=False)
            console.print("")
    else:
        console.print(str(value), markup=False, highlight=False)
