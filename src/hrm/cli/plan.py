"""`hrm plan`: run a goal as a multi-step plan under a step budget, and show the last run.

`run` uses the configured model through the gateway (work orders go to the stack's execution
ledger), shows each step live while it runs, and saves the run's history to
``<home>/logs/last_plan.json`` (atomically) for `show`. Exit codes: 0 converged,
`EXIT_FAILED` failed, `EXIT_TTL_EXPIRED` the step budget ran out.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from hrm._text import shorten
from hrm.cli._common import (
    EXIT_BUDGET,
    EXIT_DENIED,
    EXIT_INPUT,
    AgentClassOption,
    HomeOption,
    JsonOption,
    ModelOption,
    ProviderOption,
    console,
    emit_json,
    fail,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import stdout_is_terminal

if TYPE_CHECKING:
    from pathlib import Path

    from hrm.plans.types import PlanRunResult

__all__ = ["EXIT_FAILED", "EXIT_TTL_EXPIRED", "LAST_PLAN_FILE", "app"]

EXIT_FAILED = 1
"""The plan could not finish: a step failed for good."""
EXIT_TTL_EXPIRED = EXIT_BUDGET
"""The step budget ran out; the partial results are shown and saved (7: 2 is a usage error)."""
LAST_PLAN_FILE = "last_plan.json"
"""Where `run` saves its history, inside the home's logs directory."""

app = typer.Typer(
    cls=SuggestingGroup,
    help="Run multi-step plans under a step budget.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_STATUS_STYLE = {
    "PENDING": "dim",
    "RUNNING": "yellow",
    "COMPLETE": "green",
    "FAILED": "red",
    "SKIPPED": "dim",
    "REMOVED": "dim strike",
}


@app.command("run")
def run(
    goal: Annotated[str, typer.Argument(help="What the plan should achieve.")],
    ttl: Annotated[
        int | None,
        typer.Option("--ttl", min=0, help="Step budget (default: plan_default_ttl)."),
    ] = None,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    provider: ProviderOption = None,
    model: ModelOption = None,
    anyway: Annotated[
        bool,
        typer.Option("--anyway", help="Run even on a model too small for plans (slow, weak)."),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Run GOAL as a plan: profile, plan, execute in passes, refine, until done or out of TTL.

    Prints the deliverable (what the work steps made) with the verdict of the plan's checks
    beside it; a check by a model too small to judge is reported unverified, never passed.
    """
    from dataclasses import replace

    from hrm._atomic import atomic_write
    from hrm._private import make_private_dirs
    from hrm.config import load_config
    from hrm.home import HRMHome
    from hrm.llm import LLMAdapterFactory, LLMGateway
    from hrm.llm.capability import model_capability
    from hrm.plans import PlanEngine
    from hrm.plans.deliverable import plan_report
    from hrm.plans.fitness import plan_refusal
    from hrm.storage.ledger import Ledger

    with handle_errors():
        resolved = HRMHome.resolve(home)
        config = load_config(resolved).config
        if provider is not None or model is not None:  # as `hrm turn --provider/--model` do
            config = replace(config, llm=replace(
                config.llm, provider=provider or config.llm.provider,
                model=model or config.llm.model,
            ))
        capability = model_capability(config.llm)
        refusal = plan_refusal(capability)
        if refusal is not None and not anyway:  # before any call: minutes, not seconds (D284)
            raise fail(f"{refusal}; or pass --anyway to run it on this model", EXIT_DENIED)
        ledger = Ledger(resolved.execution_ledger(agent_class),
                        durability=config.ledger_durability)
        try:
            adapter = LLMAdapterFactory.create(config.llm)
            gateway = LLMGateway.from_config(
                adapter, config.llm, budget_tokens=config.stack_token_budget,
                record=ledger.append, agent_class=agent_class,
            )
            # The live table redraws itself: on a terminal only, never into a pipe or JSON.
            display = _LiveDisplay() if not json_out and stdout_is_terminal() else None
            with PlanEngine.from_config(config, gateway, record=ledger.append) as engine:
                if display is None:
                    result = engine.run(goal, ttl=ttl)
                else:
                    with display:
                        result = engine.run(goal, ttl=ttl, on_event=display.on_event)
                    console.print()
        finally:
            ledger.close()
        saved = _saved(result)
        saved["report"] = plan_report(result.plan, capability).to_dict()
        make_private_dirs(resolved.logs_dir)
        atomic_write(resolved.logs_dir / LAST_PLAN_FILE, json.dumps(saved, default=str))
    if json_out:
        emit_json(_summary(saved))
    else:
        _render_summary(saved)
    code = {"converged": 0, "failed": EXIT_FAILED}.get(result.status, EXIT_TTL_EXPIRED)
    if code:
        raise typer.Exit(code)


@app.command("show")
def show(home: HomeOption = None, json_out: JsonOption = False) -> None:
    """Show the last run's history, pass by pass."""
    from hrm.home import HRMHome

    with handle_errors():
        path = HRMHome.resolve(home).logs_dir / LAST_PLAN_FILE
        saved = _load(path)
    if json_out:
        emit_json(saved)
        return
    _render_history(saved)


def _load(path: Path) -> dict[str, Any]:
    from hrm.errors import HRMError

    if not path.is_file():
        raise fail(
            f"no plan has run yet ({path} is missing); try `hrm plan run \"goal\"`", EXIT_INPUT
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HRMError.parse_error(f"Cannot read the last plan run: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise HRMError.parse_error("The last plan run is not a JSON object", path=path)
    return data


def _saved(result: PlanRunResult) -> dict[str, Any]:
    from hrm.plans.types import dump, plan_to_dict

    return {
        "status": result.status,
        "error": result.error,
        "expiration": result.expiration,
        "plan": plan_to_dict(result.plan),
        "outputs": dump(result.outputs),
        "history": result.history.model_dump(),
    }


def _summary(saved: dict[str, Any]) -> dict[str, Any]:
    history = saved.get("history") or {}
    return {
        "execution_id": history.get("execution_id"),
        "goal": history.get("task_input"),
        "status": saved.get("status"),
        "error": saved.get("error"),
        "expiration": saved.get("expiration"),
        "steps": [_step_row(s) for s in (saved.get("plan") or {}).get("steps") or []],
        "outputs": saved.get("outputs"),
        "report": saved.get("report"),
        "statistics": history.get("overall_statistics"),
    }


def _step_row(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "step_id": step.get("step_id"),
        "description": step.get("description"),
        "action_type": step.get("action_type"),
        "status": step.get("status"),
        "dependencies": step.get("dependencies"),
    }


def _render_summary(saved: dict[str, Any]) -> None:
    status = str(saved.get("status"))
    style = {"converged": "green", "failed": "red"}.get(status, "yellow")
    console.print(f"[bold {style}]{escape(status)}[/]", markup=True)
    if saved.get("error"):
        console.print(f"  {saved['error']}", markup=False)
    expiration = saved.get("expiration") or {}
    if expiration.get("message"):
        console.print(f"  {expiration['message']}", markup=False)
    _render_report(saved)
    stats = (saved.get("history") or {}).get("overall_statistics") or {}
    console.print(
        f"\n{stats.get('steps_executed', 0)} step(s) in {stats.get('total_passes', 0)} pass(es), "
        f"{stats.get('total_refinements', 0)} refinement(s); `hrm plan show` for the history",
        markup=False,
    )


def _render_report(saved: dict[str, Any]) -> None:
    """The deliverable, then the verdict beside it (D283); a run saved before reports existed
    shows its last step's output as it always did."""
    report = saved.get("report")
    if not isinstance(report, dict):
        outputs = saved.get("outputs") or {}
        if outputs:
            last_id = list(outputs)[-1]
            console.print(f"\n[bold]{escape(last_id)}[/]", markup=True)
            console.print(str(outputs[last_id]), markup=False)
        return
    deliverable = report.get("deliverable") or {}
    verdict = report.get("verdict") or {}
    if deliverable:
        steps = ", ".join(deliverable.get("step_ids") or [])
        console.print(f"\n[bold]Deliverable[/] ({escape(steps)})", markup=True)
        console.print(str(deliverable.get("content", "")), markup=False)
    else:
        console.print("\nNo step produced a result.", markup=False)
    status = str(verdict.get("status", "unchecked"))
    style = {"passed": "green", "failed": "red"}.get(status, "yellow")
    console.print(
        f"\n[bold]Verification:[/] [{style}]{escape(status)}[/] — "
        f"{escape(str(verdict.get('reason', '')))}",
        markup=True,
    )


def _render_history(saved: dict[str, Any]) -> None:
    from hrm.cli._table import print_table

    history = saved.get("history") or {}
    console.print(str(history.get("task_input", "")), style="bold", markup=False)
    config = history.get("configuration") or {}
    profile = config.get("task_profile") or {}
    console.print(
        f"run {history.get('execution_id')}: {saved.get('status')}; depth "
        f"{profile.get('reasoning_depth')}, TTL {config.get('allocated_ttl')} of "
        f"{config.get('global_ttl')}, model {config.get('provider')}",
        markup=False,
    )
    rows: list[tuple[str, ...]] = []
    for item in history.get("passes") or []:
        results = item.get("execution_results") or []
        ran = [f"{r.get('step_id')}:{r.get('status')}" for r in results]
        refinements = [
            f"{c.get('action_type')} {c.get('target_step_id') or ''}".strip()
            for c in item.get("refinement_changes") or []
        ]
        notes = [f"TTL {a.get('from')}->{a.get('to')}" for a in item.get("ttl_adjustments") or []]
        notes += list(item.get("errors") or [])
        rows.append((
            str(item.get("pass_number")), str(item.get("phase")), ", ".join(ran) or "-",
            ", ".join(refinements) or "-", str(item.get("ttl_remaining")),
            "; ".join(notes) or "-",
        ))
    print_table(["pass", "phase", "steps run", "refinements", "TTL left", "notes"], rows)
    _render_summary(saved)


class _LiveDisplay:
    """A rich live table of the plan's steps, updated from the engine's events."""

    def __init__(self) -> None:
        from rich.live import Live

        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, str]] = {}
        self._status = "planning"
        self._live = Live(self._table(), console=console, refresh_per_second=8, transient=False)

    def __enter__(self) -> _LiveDisplay:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._live.__exit__(*exc)

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        with self._lock:
            if kind == "plan":
                for step in data["plan"]["steps"]:
                    self._row(step["step_id"], step["description"], "PENDING")
            elif kind == "step_started":
                self._row(data["step_id"], data.get("description", ""), "RUNNING")
            elif kind == "step_finished":
                note = data.get("error") or f"{data.get('duration_ms', 0)} ms"
                self._row(data["step_id"], None, str(data["status"]), note)
            elif kind == "refinement":
                self._refined(data["changes"])
            elif kind == "pass_started":
                self._status = f"pass {data['pass_number']}, TTL {data['ttl_remaining']}"
            elif kind == "ttl_adjusted":
                self._status += f" (TTL {data['from']}->{data['to']})"
            elif kind == "run_finished":
                self._status = str(data["status"])
            table = self._table()
        self._live.update(table)

    def _row(self, step_id: str, description: str | None, status: str, note: str = "") -> None:
        row = self._rows.setdefault(step_id, {"description": description or "", "note": ""})
        if description:
            row["description"] = description
        row["status"], row["note"] = status, note

    def _refined(self, changes: list[dict[str, Any]]) -> None:
        for change in changes:
            target = change.get("target_step_id")
            kind = change.get("action_type")
            if kind == "REMOVE" and target in self._rows:
                self._rows[target]["status"] = "REMOVED"
            elif kind == "MODIFY" and target in self._rows:
                self._rows[target]["status"] = "PENDING"
                self._rows[target]["note"] = "retry"
            new = change.get("new_step") or {}
            if kind in ("ADD", "REPLACE") and new.get("description"):
                step_id = new.get("step_id") or f"new ({kind.lower()})"
                self._row(step_id, new["description"], "PENDING", kind.lower())

    def _table(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self._status, show_header=True, header_style="bold")
        for column in ("step", "description", "status", "note"):
            table.add_column(column)
        for step_id, row in self._rows.items():
            style = _STATUS_STYLE.get(row.get("status", ""), "")
            table.add_row(
                Text(step_id), Text(shorten(row["description"], 100)),
                Text(row.get("status", ""), style=style), Text(shorten(row.get("note", ""), 60)),
            )
        return table
