"""`hrm ledger …`: verify the hash chains, show the latest records, rebuild the index, and
set a damaged ledger's bad records aside.

Thin by design: each command resolves paths, calls `hrm.storage`, and renders. A damaged ledger
is one ``file:line seq N: reason`` line on stderr and exit code 3 (bad input); a torn tail cut
on open is a warning on stderr, since no acknowledged record was lost. `verify` also checks each
ledger against the home's index when there is one, a second anchor against records cut from
the end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hrm.cli._common import (
    EXIT_INPUT,
    EXIT_USAGE,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    fail,
    handle_errors,
)
from hrm.cli._progress import ProgressBar, progress_bar
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import Column, print_table

if TYPE_CHECKING:
    from hrm.home import HRMHome
    from hrm.storage.ledger import VerifyReport
    from hrm.storage.ledger_index import LedgerIndex
    from hrm.storage.ledger_quarantine import QuarantineReport
    from hrm.storage.rebuild import RebuildReport

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Verify, tail, reindex and quarantine the tamper-evident ledgers.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

PathArgument = Annotated[
    Path | None,
    typer.Argument(
        help="A ledger file; relative paths are tried from here, then from the home.",
        show_default=False,
    ),
]
_DATA_WIDTH = 80


@app.command()
def verify(
    path: PathArgument = None,
    all_ledgers: Annotated[
        bool, typer.Option("--all", help="Verify every ledger in the home (the default).")
    ] = False,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check every record's hash, sequence and chain link; name the first bad record.

    Read-only (works on a full disk, without memory.db). Without PATH, also checks every
    ledger against the home's manifest: a deleted ledger or one cut from the end shows.
    """
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.storage.home_verify import verify_home

        resolved = HRMHome.resolve(home)
        if path is not None and all_ledgers:
            raise fail("give a ledger PATH or --all, not both", EXIT_USAGE)
        paths = None if path is None else [_ledger_path(path, resolved)]
        with progress_bar("verifying", json_output=json_output, unit="bytes") as bar:
            checked = verify_home(
                resolved,
                paths=paths,
                progress=bar.callback,
                on_ledger=lambda p: bar.describe(_display(p, resolved)),
            )
        reports: list[VerifyReport] = checked.ledgers
        for report in reports:
            if report.repaired is not None:
                err_console.print(
                    f"warning: {report.repaired.describe()}", markup=False, soft_wrap=True
                )
    failed = [report for report in reports if not report.ok]
    for report in failed:
        err_console.print(report.describe(), markup=False, highlight=False, soft_wrap=True)
    for problem in checked.problems:
        prefix = "warning: " if problem.warning else ""
        err_console.print(
            prefix + problem.describe(), markup=False, highlight=False, soft_wrap=True
        )
    if json_output:
        emit_json(checked.to_dict())
    elif not reports:
        console.print(f"No ledgers in {resolved.root}")
    else:
        for report in reports:
            if report.ok:
                name = _display(report.path, resolved)
                console.print(f"ok  {name}  {report.records} records", markup=False)
    if not checked.ok:
        raise typer.Exit(EXIT_INPUT)


@app.command()
def tail(
    path: Annotated[Path, typer.Argument(help="A ledger file (relative: here, then the home).")],
    count: Annotated[int, typer.Option("-n", "--lines", help="How many records.", min=1)] = 10,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show the last records of a ledger, oldest first."""
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.storage.ledger import Ledger, canonical_json

        resolved = HRMHome.resolve(home)
        with Ledger(_ledger_path(path, resolved), read_only=True) as ledger:
            if ledger.repaired is not None:
                err_console.print(
                    f"warning: {ledger.repaired.describe()}", markup=False, soft_wrap=True
                )
            records = ledger.tail(count)
    if json_output:
        emit_json([record.to_dict() for record in records])
        return
    print_table(
        [Column(c, no_wrap=True, overflow="ellipsis") for c in ("seq", "ts", "kind")]
        + [Column("data", no_wrap=True, overflow="ellipsis", max_width=_DATA_WIDTH)],
        [(record.seq, record.ts, record.kind, canonical_json(record.data)) for record in records],
        boxed=False,
    )


@app.command()
def reindex(home: HomeOption = None, json_output: JsonOption = False) -> None:
    """Rebuild every database from the ledgers alone: the home's memory.db and each stack's.

    Each database is made from its own memory ledger; every index is re-derived. An old file
    is moved aside (``memory.db.damaged-TIME`` or ``.replaced-TIME``), never deleted; a
    damaged one is never opened. Stop other hrm processes of the home first.
    """
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.storage.rebuild import rebuild

        resolved = HRMHome.resolve(home)
        with progress_bar("rebuilding memory.db", json_output=json_output) as bar:
            report = rebuild(resolved, progress=_stages(bar))
    for name, error in sorted(report.errors.items()):
        err_console.print(f"{name}: {error}", markup=False, highlight=False, soft_wrap=True)
    if json_output:
        emit_json(report.to_dict())
    else:
        for name, count in sorted(report.counts.items()):
            console.print(f"{count:>8}  {name}", markup=False)
        console.print(f"{report.indexed:>8}  records indexed in {len(report.counts)} ledgers")
        for name, count in sorted(report.databases.items()):
            console.print(f"{name} rebuilt from {count} memory ledger records", markup=False)
        for moved in report.moved_aside:
            if moved.name.endswith("Z"):  # the database itself, not its -wal or -shm
                console.print(f"the old database is at {_display(moved, resolved)}",
                              markup=False)
    if not report.ok:
        raise typer.Exit(EXIT_INPUT)


@app.command()
def quarantine(
    path: PathArgument = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be cut; change nothing.")
    ] = False,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Set a damaged ledger's bad records aside so that it can be written again.

    Copies the whole file and its anchor beside it (``NAME.quarantined-TIME``), cuts the ledger
    back to its last record that verifies, and chains a ``ledger_quarantine`` record naming the
    copy and its SHA-256. Without PATH, every damaged ledger in the home; sound ones are left
    alone. Then rebuilds the home's ledger index. Stop processes using the ledger first.
    """
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.storage import Ledger, quarantine_damage

        resolved = HRMHome.resolve(home)
        paths = resolved.all_ledgers() if path is None else [_ledger_path(path, resolved)]
        reports = []
        with contextlib.ExitStack() as stack:
            index = _open_index(resolved, stack)
            for ledger_path in paths:
                beyond = None
                if index is not None:  # acted on only if the file itself verifies
                    with Ledger(ledger_path, read_only=True) as ledger:
                        beyond = index.check(ledger)
                reports.append(quarantine_damage(ledger_path, also=beyond, dry_run=dry_run))
        changed = [r for r in reports if r.quarantined and not r.dry_run]
        inside = [r for r in changed if r.path.is_relative_to(resolved.root)]
        reindexed = None
        if inside and resolved.memory_db.is_file():
            from hrm.storage.rebuild import after_quarantine

            with progress_bar("rebuilding memory.db", json_output=json_output) as bar:
                reindexed = after_quarantine(
                    resolved, [r.path for r in inside], progress=_stages(bar)
                )
    if json_output:
        emit_json({
            "ledgers": [r.to_dict() for r in reports],
            "reindex": reindexed.to_dict() if reindexed is not None else None,
        })
    else:
        _print_quarantine(reports, resolved, reindexed)
    if reindexed is not None and not reindexed.ok:
        for name, error in sorted(reindexed.errors.items()):
            err_console.print(f"{name}: {error}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT)


def _print_quarantine(
    reports: list[QuarantineReport], home: HRMHome, reindexed: RebuildReport | None
) -> None:
    if not reports:
        console.print(f"No ledgers in {home.root}")
        return
    for report in reports:
        name = _display(report.path, home)
        damage = report.damage
        if damage is None:
            console.print(f"ok           {name}", markup=False)
            continue
        lines = [
            f"{'would cut' if report.dry_run else 'quarantined':<11}  {name}",
            f"  line {damage.line}: {damage.reason}",
            f"  {'would keep' if report.dry_run else 'kept'} {report.kept_records} records, "
            f"salvaged {report.salvaged} after the damage, cut {report.cut_bytes:,} bytes",
        ]
        if report.copy is not None:
            lines.append(f"  whole file copied to {report.copy.name}")
            lines.append(f"  sha256 {report.copy_sha256}, recorded as seq {report.record_seq}")
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    if reindexed is not None and reindexed.ok:
        console.print(f"Rebuilt the ledger index: {reindexed.indexed} records.")


def _stages(bar: ProgressBar) -> Callable[[str, int], None] | None:
    """A rebuild's progress (a stage and how many records it has done) as the bar's text."""
    if bar.callback is None:
        return None

    def report(stage: str, done: int) -> None:
        bar.describe(f"{stage}: {done} records", indeterminate=True)

    return report


def _open_index(home: HRMHome, stack: contextlib.ExitStack) -> LedgerIndex | None:
    """The home's ledger index as a second anchor, if the home has a database at all."""
    if not home.memory_db.is_file():
        return None
    from hrm.errors import HRMError
    from hrm.storage import Database, LedgerIndex

    try:  # a damaged memory.db must not keep a person from repairing the ledgers
        db = stack.enter_context(Database(home.memory_db))
        return LedgerIndex(db, home=home)
    except HRMError as exc:
        err_console.print(f"warning: memory.db not used: {exc.message}", markup=False)
        return None


def _ledger_path(path: Path, home: HRMHome) -> Path:
    """`path` as given if it exists, else inside the home; a missing ledger is an error."""
    from hrm.errors import HRMError

    candidates = [path] if path.is_absolute() else [Path.cwd() / path, home.root / path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise HRMError.not_found(
        "ledger", str(path), f"looked in {', '.join(str(c.parent) for c in candidates)}"
    )


def _display(path: Path, home: HRMHome) -> str:
    try:
        return path.relative_to(home.root).as_posix()
    except ValueError:
        return str(path)
