"""`hrm meta …`: run the cross-stack meta agent and show what it has found."""

from __future__ import annotations

from typing import Annotated

import typer

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._progress import progress_bar
from hrm.cli._root import SuggestingGroup

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Cross-stack analysis by the meta agent.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command()
def analyze(
    min_stacks: Annotated[
        int, typer.Option(min=2, help="Stacks that must show a pattern before it is recorded.")
    ] = 2,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Read every stack's ledgers, find patterns that span stacks, record new ones."""
    with handle_errors():
        from hrm.home import HRMHome, initialize
        from hrm.stacks.meta import MetaAgent

        h = HRMHome.resolve(home)
        initialize(h)
        with progress_bar("reading stacks", json_output=json_output) as bar:
            report = MetaAgent(h, min_stacks=min_stacks).analyze(progress=bar.callback)
    if json_output:
        emit_json(report.to_record())
        return
    console.print(f"Read {report.records_read:,} records from {len(report.stacks)} stack(s): "
                  f"{len(report.patterns)} pattern(s), {len(report.written)} new or changed.")
    written = set(report.written)
    for pattern in report.patterns:
        mark = "new" if pattern.pattern_id in written else "   "
        console.print(f"{mark} {pattern.pattern_id} [{pattern.pattern_type}] {pattern.summary}",
                      markup=False)


@app.command("list")
def list_patterns(home: HomeOption = None, json_output: JsonOption = False) -> None:
    """Show the patterns in the Meta Learning Ledger (latest version of each)."""
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.stacks.meta import read_meta_patterns

        patterns = read_meta_patterns(HRMHome.resolve(home))
    if json_output:
        emit_json([p.to_record() for p in patterns])
        return
    if not patterns:
        console.print("No cross-stack patterns yet — `hrm meta analyze` looks for them.")
        return
    for pattern in patterns:
        console.print(f"{pattern.pattern_id} [{pattern.pattern_type}] {pattern.summary} "
                      f"(evidence: {pattern.evidence_count})", markup=False)
