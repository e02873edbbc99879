"""`hrm migrate`: import a Ring or Continuous-Claude project's handoffs, ledgers and state."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, err_console, handle_errors
from hrm.cli._progress import progress_bar
from hrm.cli._root import SuggestingGroup

app = typer.Typer(
    cls=SuggestingGroup,
    name="migrate",
    help="Import legacy continuity data into the hrm home (the source is never modified).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

OnlyOption = Annotated[
    list[str] | None,
    typer.Option("--only", help="handoffs, ledgers or state (repeatable; default: all)."),
]


def _run(layout: str, path: Path, only: list[str] | None, home: Path | None, as_json: bool) -> None:
    from hrm.continuity.migration import DataType, detect_layout, migrate_legacy_data
    from hrm.home import HRMHome, initialize

    with handle_errors():
        try:
            kinds = [DataType(kind.lower()) for kind in only] if only else list(DataType)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--only") from None
        detected = detect_layout(path) if path.exists() else layout
        if detected not in (layout, "unknown"):
            err_console.print(f"note: '{path}' looks like a {detected} project", markup=False)
        target = HRMHome.resolve(home)
        initialize(target)
        results = []
        with progress_bar("migrating", json_output=as_json) as bar:
            for kind in kinds:
                bar.describe(f"migrating {kind.value}", indeterminate=True)
                results.append(
                    migrate_legacy_data(path, kind, target, progress=bar.callback, layout=layout)
                )
    summary = {
        "layout": layout,
        "source": str(path),
        "items_migrated": sum(r.items_migrated for r in results),
        "items_skipped": sum(r.items_skipped for r in results),
        "warnings": [w for r in results for w in r.warnings],
        "results": [{"data_type": k.value, **vars(r)} for k, r in zip(kinds, results, strict=True)],
    }
    if as_json:
        emit_json(summary)
        return
    for kind, result in zip(kinds, results, strict=True):
        console.print(
            f"{kind.value:<9} {result.items_migrated} migrated, {result.items_skipped} skipped"
            f" → {result.destination}",
            markup=False,
        )
        for warning in result.warnings:
            console.print(f"  warning: {warning}", markup=False)


@app.command("ring")
def ring(
    path: Annotated[Path, typer.Argument(help="A Ring project (with .ring/) or its folder.")],
    only: OnlyOption = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Import from a Ring project."""
    _run("ring", path, only, home, json_output)


@app.command("continuous-claude")
def continuous_claude(
    path: Annotated[Path, typer.Argument(help="A Continuous-Claude project (with thoughts/).")],
    only: OnlyOption = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Import from a Continuous-Claude project."""
    _run("continuous-claude", path, only, home, json_output)
