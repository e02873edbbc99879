"""The root `hrm` command: mounts one typer app per command group, and the root options.

A command group's module is imported only when that group runs (or when help or completion
lists it): each one pulls in its own subsystems, and `hrm turn` would otherwise import all
fourteen before it could answer. `RootGroup` (``_root.py``) does the loading, the suggestions
for a mistyped name and the turning of every error into one line.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from hrm.cli._common import (
    HomeOption,
    JsonOption,
    console,
    debug_enabled,
    emit_json,
    err_console,
    handle_errors,
    set_debug,
)
from hrm.cli._root import LazyGroup, RootGroup, SuggestingGroup
from hrm.cli._table import Column, print_table

# Command groups written as separate modules: (module, attribute, name, help).
_GROUPS: list[tuple[str, str, str, str]] = [
    ("hrm.cli.ledger", "app", "ledger", "Verify, tail, reindex and quarantine the ledgers."),
    ("hrm.cli.memory", "app", "memory", "Inspect and edit memory: compartments and learnings."),
    ("hrm.cli.handoff", "app", "handoff", "Create, read and migrate session handoffs."),
    ("hrm.cli.skills", "app", "skills", "Match prompts against skill activation rules."),
    ("hrm.cli.migrate", "app", "migrate", "Import data from Ring or Continuous-Claude projects."),
    ("hrm.cli.install", "app", "install", "Install hrm's hooks into a coding assistant."),
    ("hrm.cli.models", "app", "models", "Find a capable model; list, install, test providers."),
    ("hrm.cli.agents", "app", "agents", "List, show and run agents."),
    ("hrm.cli.plan", "app", "plan", "Run multi-step plans under a step budget."),
    ("hrm.cli.stack", "app", "stack", "Create, inspect and tear down cognitive stacks."),
    ("hrm.cli.problems", "app", "problems", "List a stack's problems and resolve them."),
    ("hrm.cli.meta", "app", "meta", "Cross-stack analysis by the meta agent."),
    ("hrm.cli.serve", "app", "serve", "Serve governed stacks over an OpenAI-compatible API."),
    ("hrm.cli.resident", "app", "resident", "See or stop the warm process behind `hrm turn`."),
]


class _LazyGroups(RootGroup):
    """The root group, with this CLI's command groups."""

    lazy_groups = tuple(LazyGroup(*group) for group in _GROUPS)


app = typer.Typer(
    name="hrm",
    cls=_LazyGroups,
    help="hrm — a governed cognitive runtime for LLM assistants.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    # `hrm --install-completion` / `--show-completion [SHELL]`: the shell asks `hrm` itself
    # for candidates, so groups loaded on demand complete like the others.
    add_completion=True,
)


def _print_version(value: bool) -> None:
    if value:
        from hrm.cli.version import version_info

        console.print(f"hrm {version_info().version}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the traceback when a command fails (also: HRM_DEBUG=1)."
        ),
    ] = False,
    _version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """hrm — a governed cognitive runtime for LLM assistants."""
    set_debug(debug)


config_app = typer.Typer(
    cls=SuggestingGroup,
    help="Show the effective configuration and where each value came from.",
)
app.add_typer(config_app, name="config")

_COMMAND_MODULES = (
    "hrm.cli.turns", "hrm.cli.why", "hrm.cli.version", "hrm.cli.hook", "hrm.cli.trust",
    "hrm.cli.mcp",
)
for _module in _COMMAND_MODULES:
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
        resolved = load_config(home, project, announce=False)  # said below, every time
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
        emit_json(rows[0] if key else {
            "values": rows,
            "files": [str(f) for f in resolved.files],
            "ignored": [ignored.to_dict() for ignored in resolved.ignored],
        })
        return
    print_table(
        [Column("key", no_wrap=True), Column("value"), Column("source"), Column("origin")],
        [(row["key"], repr(row["value"]), row["source"], row["origin"]) for row in rows],
    )
    for ignored in resolved.ignored:  # an untrusted project's keys (D216)
        err_console.print(f"note: {ignored.message()}", highlight=False)


def _plain(value: Any) -> Any:
    if hasattr(value, "value") and not isinstance(value, dict | list):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


class _OneLine(logging.Formatter):
    """``warning: message`` on one line; the traceback only with ``--debug``."""

    def format(self, record: logging.LogRecord) -> str:
        message = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and debug_enabled():
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
