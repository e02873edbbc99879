"""`hrm problems …`: the problems a stack's arbitration weighs, and resolving them.

Listing reads `memory.db` and records nothing. Resolving goes through `HRM.resolve_problem`,
so it takes the stack's turn lock and is recorded in the stack's decision ledger.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hrm.cli._common import (
    HomeOption,
    JsonOption,
    console,
    emit_json,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup

__all__ = ["app", "show_problems"]

StackOption = Annotated[
    str | None,
    typer.Option(
        "--as", help="The stack: ADMIN or RESIDENT:<name> (default: configuration).",
        show_default=False,
    ),
]

app = typer.Typer(
    cls=SuggestingGroup,
    help="List a stack's problems and resolve them.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("list")
def list_problems(
    agent_class: StackOption = None,
    home: HomeOption = None,
    include_resolved: Annotated[
        bool, typer.Option("--all", help="Include resolved problems.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Open problems of a stack: the active one, then by priority and latest progress."""
    from hrm.config import load_config
    from hrm.governance.problems import ProblemRegistry, ProblemStatus
    from hrm.home import HRMHome, initialize, parse_agent_class
    from hrm.storage.stack_db import open_stack_db

    with handle_errors():
        h = HRMHome.resolve(home)
        initialize(h)
        cls = agent_class or load_config(h).config.default_agent_class
        parse_agent_class(cls)
        db = open_stack_db(h, cls)
        try:
            problems = [
                p.to_record()
                for p in ProblemRegistry(db, cls).list()
                if include_resolved or p.status is not ProblemStatus.RESOLVED
            ]
        finally:
            db.close()
    problems.sort(key=lambda p: p["status"] != "active")  # stable: the registry's order after
    if json_output:
        emit_json(problems)
        return
    from hrm.cli._table import stdout_is_terminal

    if not problems and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print(f"No {'' if include_resolved else 'open '}problems for {cls}.")
        return
    show_problems(problems)


def show_problems(problems: list[dict[str, Any]]) -> None:
    """Problems (as `Problem.to_record` gives them) as a table: here and in `hrm chat`."""
    from hrm.cli._table import Column, fit, print_table, stdout_is_terminal

    terminal = stdout_is_terminal()
    print_table(
        [Column("id", no_wrap=True), "title", "status", "priority", "last progress"],
        [
            (p["id"], fit(str(p["title"]), 60), p["status"], p["priority"],
             str(p["last_progress_at"])[:16].replace("T", " ") if terminal
             else p["last_progress_at"])
            for p in problems
        ],
    )


@app.command("resolve")
def resolve(
    problem_id: Annotated[
        str | None, typer.Argument(help="The problem's id; default: the active problem.")
    ] = None,
    agent_class: StackOption = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Mark a problem resolved: it stops matching inputs; a commitment on it completes."""
    from hrm.pipeline import HRM

    with handle_errors():
        hrm = HRM.open(home, agent_class, "offline")
        try:
            resolved = hrm.resolve_problem(problem_id)
        finally:
            hrm.close()
    record: dict[str, Any] = resolved.to_record()
    if json_output:
        emit_json(record)
        return
    console.print(f"Resolved {record['id']}: {record['title']}", highlight=False)
