"""The root `hrm` command: mounts one typer app per command group.

A command group's module is imported only when that group runs (or when help lists it): each
one pulls in its own subsystems, and `hrm turn` would otherwise import all fourteen before it
could answer.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.models import TyperInfo

from hrm.cli._common import (
    HomeOption,
    JsonOption,
    console,
    emit_json,
    handle_errors,
)

# Command groups written as separate modules: (module, attribute, name, help).
_GROUPS: list[tuple[str, str, str, str]] = [
    ("hrm.cli.ledger", "app", "ledger", "Verify, tail and reindex the tamper-evident ledgers."),
    ("hrm.cli.memory", "app", "memory", "Inspect and edit memory: compartments and learnings."),
    ("hrm.cli.handoff", "app", "handoff", "Create, read and migrate session handoffs."),
    ("hrm.cli.skills", "app", "skills", "Match prompts against skill activation rules."),
    ("hrm.cli.migrate", "app", "migrate", "Import data from Ring or Continuous-Claude projects."),
    ("hrm.cli.install", "app", "install", "Install hrm's hooks into a coding assistant."),
    ("hrm.cli.models", "app", "models", "List, install and test model providers."),
    ("hrm.cli.agents", "app", "agents", "List, show and run agents."),
    ("hrm.cli.plan", "app", "plan", "Run multi-step plans under a step budget."),
    ("hrm.cli.stack", "app", "stack", "Create, inspect and tear down cognitive stacks."),
    ("hrm.cli.problems", "app", "problems", "List a stack's problems and resolve them."),
    ("hrm.cli.meta", "app", "meta", "Cross-stack analysis by the meta agent."),
]


class _LazyGroups(TyperGroup):
    """The root group: it builds a command group from its module the first time it is asked."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return names + [g[2] for g in _GROUPS if g[2] not in names]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        for module_name, attr, name, help_text in _GROUPS:
            if name != cmd_name:
                continue
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:
                    raise
                return None
            # What `app.add_typer(sub, name=…, help=…)` would have built, built now.
            command = typer.main.get_group_from_info(
                TyperInfo(getattr(module, attr), name=name, help=help_text),
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                suggest_commands=app.suggest_commands,
            )
            self.add_command(command, name)
            return command
        return None


app = typer.Typer(
    name="hrm",
    cls=_LazyGroups,
    help="hrm — a governed cognitive runtime for LLM assistants.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    add_completion=False,
)

config_app = typer.Typer(help="Show the effective configuration and where each value came from.")
app.add_typer(config_app, name="config")

for _module in ("hrm.cli.turns",):
    try:
        importlib.import_module(_module).register(app)
    except ModuleNotFoundError as _exc:
        if _exc.name != _module:
            raise


@app.command()
def init(
    home: HomeOption = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Reinstall shipped files; ledgers and data are kept."),
    ] = False,
    agent_class: Annotated[
        str, typer.Option("--as", help="Create the partitions of this stack.")
    ] = "ADMIN",
    json_out: JsonOption = False,
) -> None:
    """Create the hrm home (idempotent)."""
    from hrm.home import initialize

    with handle_errors():
        result = initialize(home, force=force, agent_class=agent_class)
    data = {
        "path": str(result.path),
        "config_path": str(result.config_path),
        "memory_path": str(result.memory_path),
        "handoffs_path": str(result.handoffs_path),
        "created": result.created,
        "installed_files": list(result.installed_files),
    }
    if json_out:
        emit_json(data)
        return
    verb = "Created" if result.created else "Home already exists at"
    console.print(f"{verb} {result.path}")
    if result.installed_files:
        console.print(f"Installed {len(result.installed_files)} shipped file(s).")


@config_app.callback(invoke_without_command=True)
def config_default(
    ctx: typer.Context,
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show the effective configuration (`hrm config` is `hrm config show`)."""
    if ctx.invoked_subcommand is None:
        config_show(key=None, home=home, project=None, json_out=json_out)


@config_app.command("show")
def config_show(
    key: Annotated[str | None, typer.Argument(help="A dotted key, e.g. llm.provider.")] = None,
    home: HomeOption = None,
    project: Annotated[
        Path | None, typer.Option("--project", help="Project directory (default: cwd).")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Print each effective value with its source and precedence."""
    from hrm.config import load_config

    with handle_errors():
        resolved = load_config(home, project)
        values = (
            [resolved.get(key)] if key else sorted(resolved.values.values(), key=lambda v: v.key)
        )
    rows = [
        {
            "key": v.key,
            "value": _plain(v.value),
            "source": v.source.value,
            "precedence": v.precedence,
            "origin": v.origin,
        }
        for v in values
    ]
    if json_out:
        emit_json(rows[0] if key else {"values": rows, "files": [str(f) for f in resolved.files]})
        return
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    for column in ("key", "value", "source", "origin"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["key"], repr(row["value"]), row["source"], row["origin"])
    console.print(table)


def _plain(value: Any) -> Any:
    if hasattr(value, "value") and not isinstance(value, dict | list):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


@app.command()
def version() -> None:
    """Print the hrm version."""
    import hrm

    console.print(hrm.__version__)


class _OneLine(logging.Formatter):
    """``warning: message`` on one line; the traceback only under ``HRM_DEBUG=1``."""

    def format(self, record: logging.LogRecord) -> str:
        message = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and os.environ.get("HRM_DEBUG"):
            message += "\n" + self.formatException(record.exc_info)
        elif record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        return message


def _configure_logging() -> None:
    """Warnings from the library reach the terminal as one line each, not as tracebacks.

    Without this, Python's last-resort handler prints every `logger.exception` in full. The
    level comes from ``HRM_LOG_LEVEL`` (default WARNING).
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    library = logging.getLogger("hrm")
    library.addHandler(handler)
    wanted = os.environ.get("HRM_LOG_LEVEL", "WARNING").upper()
    level = logging.getLevelName(wanted)
    if not isinstance(level, int):
        level = logging.WARNING
        handler.handle(logging.makeLogRecord({
            "levelname": "WARNING", "levelno": logging.WARNING,
            "msg": f"HRM_LOG_LEVEL={wanted!r} is not a level (DEBUG, INFO, WARNING, ERROR);"
                   " using WARNING",
        }))
    library.setLevel(level)
    library.propagate = False


def run() -> None:
    """Run the root app."""
    _configure_logging()
    app()
