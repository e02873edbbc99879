"""`hrm memory`: the memory bus compartments (shared, working, episodes, synthesis) and learnings
(learn, search, show, decay, export, import, confirm) under one group."""

from __future__ import annotations

import importlib

import typer

from hrm.cli._root import SuggestingGroup

app = typer.Typer(
    cls=SuggestingGroup,
    help="Inspect and edit memory: compartments and learnings.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for _module in ("hrm.cli.memory_bus", "hrm.cli.learnings", "hrm.cli.erase"):
    try:
        _sub: typer.Typer = importlib.import_module(_module).app
    except ModuleNotFoundError as _exc:
        if _exc.name != _module:
            raise
        continue
    app.registered_commands.extend(_sub.registered_commands)
    app.registered_groups.extend(_sub.registered_groups)
