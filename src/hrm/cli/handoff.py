"""`hrm handoff`: create, show, list, resume, migrate and validate handoffs (003 §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hrm.cli._common import (
    EXIT_INPUT,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    fail,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup

app = typer.Typer(
    cls=SuggestingGroup,
    name="handoff",
    help="Write and read handoffs: what one session leaves for the next.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command()
def create(
    *,
    task: Annotated[str, typer.Option("--task", help="What the task was.")],
    status: Annotated[
        str, typer.Option("--status", help="completed, paused, blocked or failed.")
    ] = "paused",
    next_step: Annotated[
        list[str] | None, typer.Option("--next-step", help="A next step (repeatable).")
    ] = None,
    project: Annotated[
        Path | None, typer.Option("--project", help="The project (default: current folder).")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Session name (default: project folder).")
    ] = None,
    notes: Annotated[str, typer.Option("--notes", help="Free-form Markdown notes.")] = "",
    format: Annotated[str, typer.Option("--format", help="yaml or markdown.")] = "yaml",
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Write a handoff for the current work into the home."""
    from hrm.continuity.handoff_store import HandoffStore
    from hrm.continuity.handoffs import (
        ContextInfo,
        HandoffData,
        HandoffFormat,
        ResumeInstructions,
        SessionMetadata,
        TaskInfo,
        TaskStatus,
    )
    from hrm.home import HRMHome
    from hrm.types import system_clock

    with handle_errors():
        for option, value, kind in (("--status", status, TaskStatus),
                                    ("--format", format, HandoffFormat)):
            if value.lower() not in {m.value for m in kind}:
                raise fail(f"{option} {value!r} is not one of "
                           f"{', '.join(m.value for m in kind)}", EXIT_INPUT)
        chosen_status = TaskStatus(status.lower())
        chosen_format = HandoffFormat(format.lower())
        project_dir = (project or Path.cwd()).resolve()
        now = system_clock()
        handoff = HandoffData(
            session=SessionMetadata(id=session or project_dir.name or "general", started_at=now),
            task=TaskInfo(description=task, status=chosen_status),
            context=ContextInfo(project_path=str(project_dir)),
            resume=ResumeInstructions(next_steps=list(next_step or [])),
            notes=notes,
        )
        path = HandoffStore(HRMHome.resolve(home)).write(handoff, format=chosen_format)
    if json_output:
        emit_json({"path": str(path), "session_id": handoff.session.id})
    else:
        console.print(f"Handoff written: {path}", markup=False)


@app.command()
def show(
    handoff_ref: Annotated[str, typer.Argument(metavar="PATH|ID", help="A file or stored id.")],
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print one handoff."""
    from hrm.continuity.handoff_store import HandoffStore
    from hrm.continuity.handoffs import handoff_to_dict, resume_brief
    from hrm.home import HRMHome

    with handle_errors():
        handoff = HandoffStore(HRMHome.resolve(home)).load(handoff_ref)
    if json_output:
        emit_json(handoff_to_dict(handoff))
        return
    console.print(resume_brief(handoff, max_chars=20_000), markup=False)
    if handoff.notes.strip():
        console.print("\n" + handoff.notes.strip(), markup=False)


@app.command("list")
def list_handoffs(
    *,
    project: Annotated[
        Path | None, typer.Option("--project", help="Only this project's handoffs.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="At most this many.", min=1)
    ] = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """List stored handoffs, newest first."""
    from hrm.cli._table import Column, fit, print_table, stdout_is_terminal
    from hrm.continuity.handoff_store import HandoffStore
    from hrm.home import HRMHome

    with handle_errors():
        rows = HandoffStore(HRMHome.resolve(home)).list(
            project_path=str(project.resolve()) if project else None, limit=limit
        )
    if json_output:
        emit_json([vars(row) for row in rows])
        return
    terminal = stdout_is_terminal()
    if not rows and terminal:  # a pipe gets the header and no rows
        console.print("No handoffs.")
        return
    print_table(
        [Column("created", no_wrap=True), "session", "status", "description", "path"],
        [
            (row.created_at.strftime("%Y-%m-%d %H:%M") if terminal else row.created_at.isoformat(),
             row.session_id, row.status, fit(row.description, 60), row.path)
            for row in rows
        ],
    )


@app.command()
def resume(
    handoff_ref: Annotated[
        str | None, typer.Argument(metavar="[PATH]", help="A handoff (default: the latest).")
    ] = None,
    project: Annotated[
        Path | None, typer.Option("--project", help="Latest handoff of this project.")
    ] = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print the resume brief of the latest (or the given) handoff."""
    from hrm.continuity.handoff_store import HandoffStore
    from hrm.continuity.handoffs import handoff_to_dict, resume_brief
    from hrm.home import HRMHome

    with handle_errors():
        store = HandoffStore(HRMHome.resolve(home))
        if handoff_ref is not None:
            path, handoff = Path(handoff_ref), store.load(handoff_ref)
        else:
            found = store.latest(project_path=str(project.resolve()) if project else None)
            if found is None:
                raise fail("No handoff to resume; write one with `hrm handoff create`", EXIT_INPUT)
            path, handoff = found
    brief = resume_brief(handoff)
    if json_output:
        emit_json({"path": str(path), "brief": brief, "handoff": handoff_to_dict(handoff)})
    else:
        console.print(brief, markup=False)


@app.command()
def migrate(
    source: Annotated[Path, typer.Argument(help="A legacy (Markdown) handoff.")],
    dest: Annotated[Path | None, typer.Option("--dest", help="Where to write the YAML.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Convert a handoff to our YAML beside it, keeping the original."""
    from hrm.continuity.handoffs import migrate as migrate_handoff

    with handle_errors():
        result = migrate_handoff(source, dest)
    if json_output:
        emit_json(vars(result))
        return
    console.print(f"Migrated {result.source} → {result.destination}", markup=False)
    for warning in result.warnings:
        console.print(f"  warning: {warning}", markup=False)


@app.command()
def validate(
    source: Annotated[Path, typer.Argument(help="A handoff file.")],
    json_output: JsonOption = False,
) -> None:
    """Check a handoff against the schema; exit non-zero listing every error."""
    from hrm._paths import read_text
    from hrm._yaml import MAX_BYTES
    from hrm.continuity.handoffs import deserialize, validate_schema

    with handle_errors():
        try:
            text = read_text(source, max_bytes=MAX_BYTES, what="handoff")  # never a FIFO (D131)
        except OSError as exc:
            raise fail(f"cannot read '{source}': {exc}", EXIT_INPUT) from None
        except UnicodeDecodeError as exc:
            raise fail(f"'{source}' is not UTF-8 text (byte {exc.start}): not a handoff",
                       EXIT_INPUT) from None
        report = validate_schema(deserialize(text, path=str(source)))
    if json_output:
        emit_json(
            {
                "valid": report.valid,
                "errors": [vars(error) for error in report.errors],
                "warnings": report.warnings,
            }
        )
    else:
        for error in report.errors:
            console.print(f"{error.field}: {error.message} ({error.constraint})", markup=False)
        for warning in report.warnings:
            console.print(f"warning: {warning}", markup=False)
        if report.valid:
            console.print(f"{source}: valid", markup=False)
    if not report.valid:
        raise typer.Exit(EXIT_INPUT)
