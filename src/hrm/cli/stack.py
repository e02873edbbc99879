"""`hrm stack …`: create, list, inspect and tear down cognitive stacks; salience anchors.

Thin by design: each command calls `hrm.stacks` and renders. Inspecting a stack reads its
ledgers as HO3 (the operator's view), so each read is in the governance ledger; nothing here
deletes anything — teardown is a record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._root import SuggestingGroup

if TYPE_CHECKING:
    from pathlib import Path

    from hrm.home import HRMHome

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Create, inspect and tear down cognitive stacks.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
anchor_app = typer.Typer(
    cls=SuggestingGroup,
    help="Salience anchors: what a resident should mention first (HO3).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(anchor_app, name="anchor")

ClassArgument = Annotated[str, typer.Argument(help="ADMIN or RESIDENT:<name>.")]
OptionalClass = Annotated[
    str | None,
    typer.Option("--as", help="Only this stack (ADMIN or RESIDENT:<name>); default: every stack.",
                 show_default=False),
]


def _home(home: Path | None) -> HRMHome:
    from hrm.home import HRMHome, initialize

    resolved = HRMHome.resolve(home)
    initialize(resolved)
    return resolved


@app.command("list")
def list_stacks(home: HomeOption = None, json_output: JsonOption = False) -> None:
    """List the stacks that have partitions in the home, with their ledger sizes."""
    with handle_errors():
        from hrm.stacks.lifecycle import lifecycle_events

        h = _home(home)
        events = lifecycle_events(h)
        rows: list[dict[str, Any]] = []
        for agent_class in h.stack_classes():
            mine = [e for e in events if e.get("agent_class") == agent_class]
            rows.append({
                "agent_class": agent_class,
                "ledgers": _ledger_sizes(h, agent_class),
                "last_event": mine[-1]["kind"] if mine else None,
                "last_event_at": mine[-1]["ts"] if mine else None,
            })
    if json_output:
        emit_json(rows)
        return
    from hrm.cli._table import print_table, stdout_is_terminal

    if not rows and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No stacks yet — `hrm stack create ADMIN` creates one.")
        return
    print_table(
        ["stack", "HO2m records", "HO1m records", "last event"],
        [
            (row["agent_class"], row["ledgers"]["ho2m"]["records"],
             row["ledgers"]["ho1m"]["records"],
             f"{row['last_event'] or '-'} {row['last_event_at'] or ''}".strip())
            for row in rows
        ],
    )


@app.command()
def create(agent_class: ClassArgument, home: HomeOption = None,
           json_output: JsonOption = False) -> None:
    """Initialise a stack's partitions, validate its templates and record its creation."""
    with handle_errors():
        from hrm.config import load_config
        from hrm.stacks.lifecycle import provision

        h = _home(home)
        record = provision(h, agent_class, load_config(h).config)
    if json_output:
        emit_json(record)
        return
    templates = ", ".join(record["templates"]) or "none"
    console.print(f"Created stack {agent_class} (partition {record['partition']}; "
                  f"templates {templates}).")


@app.command()
def inspect(agent_class: ClassArgument, home: HomeOption = None,
            json_output: JsonOption = False) -> None:
    """Partitions, ledger sizes, bound templates, last session, tokens and open problems."""
    with handle_errors():
        data = _inspect(_home(home), agent_class)
    if json_output:
        emit_json(data)
        return
    console.print(f"[bold]{escape(agent_class)}[/bold]", markup=True)
    for name, info in data["ledgers"].items():
        console.print(f"  {name:9} {info['path']}  {info['records']} records, {info['bytes']} B")
    console.print(f"  templates  {', '.join(data['templates']) or 'none'}")
    console.print(f"  session    {data['last_session'] or 'none'}")
    console.print(f"  tokens     {data['tokens_used']:,} of {data['budget_ceiling']:,}")
    if data["open_problems"]:
        console.print("  open problems:")
        for problem in data["open_problems"]:
            console.print(f"    [{problem['status']}] {problem['title']} ({problem['id']})",
                          markup=False)
    else:
        console.print("  open problems: none")


@app.command()
def teardown(
    agent_class: ClassArgument,
    reason: Annotated[str, typer.Option(help="Why the stack is deactivated.")] = (
        "explicit deactivation"
    ),
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Record a stack's teardown; its ledgers are kept (nothing is deleted)."""
    with handle_errors():
        from hrm.stacks.lifecycle import record_teardown

        record = record_teardown(_home(home), agent_class, reason=reason)
    if json_output:
        emit_json(record)
        return
    console.print(f"Recorded teardown of {agent_class}; its ledgers are kept.")


@anchor_app.command("add")
def anchor_add(
    text: Annotated[str, typer.Argument(help="What matters (e.g. 'dance recital Friday').")],
    agent_class: OptionalClass = None,
    must_mention: Annotated[
        bool, typer.Option("--must-mention", help="Always surface it first.")
    ] = False,
    tag: Annotated[list[str] | None, typer.Option(help="A tag (repeatable).")] = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Record a salience anchor in HO3."""
    with handle_errors():
        from hrm.stacks.anchors import add_anchor

        anchor = add_anchor(_home(home), text, agent_class=agent_class,
                            must_mention=must_mention, tags=tag or [])
    if json_output:
        emit_json(anchor)
        return
    console.print(f"Added anchor {anchor['id']}.")


@anchor_app.command("list")
def anchor_list(agent_class: OptionalClass = None, home: HomeOption = None,
                json_output: JsonOption = False) -> None:
    """List live salience anchors (for one stack: those for it and for every stack)."""
    with handle_errors():
        from hrm.stacks.anchors import read_anchors

        h = _home(home)
        anchors = read_anchors(h.governance_ledger, agent_class=agent_class)
    if json_output:
        emit_json(anchors)
        return
    if not anchors:
        console.print("No anchors.")
        return
    for anchor in anchors:
        flag = " [must mention]" if anchor.get("must_mention") else ""
        scope = anchor.get("agent_class") or "every stack"
        console.print(f"{anchor['id']}  {anchor['text']}  ({scope}){flag}", markup=False)


@anchor_app.command("retire")
def anchor_retire(
    anchor_id: Annotated[str, typer.Argument(help="The anchor id (anc_…).")],
    reason: Annotated[str, typer.Option(help="Why it no longer matters.")] = "",
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Retire an anchor (a new record; nothing is edited)."""
    with handle_errors():
        from hrm.errors import HRMError
        from hrm.stacks.anchors import read_anchors, retire_anchor

        h = _home(home)
        if anchor_id not in {a["id"] for a in read_anchors(h.governance_ledger)}:
            raise HRMError.not_found("anchor", anchor_id, "`hrm stack anchor list` shows them")
        retire_anchor(h, anchor_id, reason)
    if json_output:
        emit_json({"id": anchor_id, "retired": True, "reason": reason})
        return
    console.print(f"Retired anchor {anchor_id}.")


def _ledger_sizes(home: HRMHome, agent_class: str) -> dict[str, dict[str, Any]]:
    from hrm.stacks.visibility import LEDGER_NAMES, ROLE_HO3, CrossStackReader
    from hrm.storage.ledger import Ledger

    reader = CrossStackReader(home, ROLE_HO3, purpose="hrm stack")
    sizes: dict[str, dict[str, Any]] = {}
    for name in LEDGER_NAMES:
        path = reader.path(agent_class, name)
        records = 0
        if path.exists():
            with Ledger(path, read_only=True) as ledger:
                last = ledger.last()
                records = 0 if last is None else last.seq
        sizes[name] = {"path": str(path), "records": records,
                       "bytes": path.stat().st_size if path.exists() else 0}
    return sizes


def _inspect(home: HRMHome, agent_class: str) -> dict[str, Any]:
    from hrm.config import load_config
    from hrm.errors import HRMError
    from hrm.governance.problems import ProblemStatus
    from hrm.stacks.attention import AttentionPipeline
    from hrm.stacks.lifecycle import lifecycle_events
    from hrm.stacks.visibility import ROLE_HO3, CrossStackReader

    reader = CrossStackReader(home, ROLE_HO3, purpose="hrm stack inspect")
    reader.path(agent_class)  # a crafted class is refused (and recorded) before anything else
    if agent_class not in home.stack_classes():
        raise HRMError.not_found("stack", agent_class, "`hrm stack list` shows the stacks")
    config = load_config(home).config
    last_session: str | None = None
    for rec in reader.records(agent_class, "ho2m"):
        if rec.kind == "session_started":
            last_session = str(rec.data.get("session_id"))
    tokens = 0
    for rec in reader.records(agent_class, "ho1m"):
        if rec.kind == "work_order":
            tokens += int(rec.data.get("input_tokens") or 0)
            tokens += int(rec.data.get("output_tokens") or 0)
    problems = [p.to_record() for status in (ProblemStatus.ACTIVE, ProblemStatus.PAUSED,
                                             ProblemStatus.QUEUED)
                for p in _problems(reader, agent_class) if p.status is status]
    events = lifecycle_events(home, agent_class)
    return {
        "agent_class": agent_class,
        "ledgers": _ledger_sizes(home, agent_class),
        "templates": AttentionPipeline.bind(home, agent_class, config).template_ids,
        "last_session": last_session,
        "lifecycle": events[-5:],
        "tokens_used": tokens,
        "budget_ceiling": config.stack_token_budget,
        "open_problems": problems,
    }


def _problems(reader: Any, agent_class: str) -> list[Any]:
    """The stack's problems, read by HO3 through a read-only view of the stack's own database
    (recorded in the governance ledger); none when it has no database or no problems yet."""
    from hrm.errors import ErrorCode, HRMError
    from hrm.governance.problems import problems_from_rows

    try:
        view = reader.open_db(agent_class)
    except HRMError as exc:
        if exc.code is ErrorCode.NOT_FOUND:
            return []
        raise
    with view:
        tables = {r[0] for r in view.execute("SELECT name FROM sqlite_master")}
        if "problems" not in tables:
            return []
        return problems_from_rows(view.execute("SELECT * FROM problems"))
