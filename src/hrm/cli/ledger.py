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
import dataclasses
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
    from hrm.storage.ledger_index import LedgerIndex, ReindexReport
    from hrm.storage.ledger_quarantine import QuarantineReport
    from hrm.types import ProgressCallback

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
    """Check every record's hash, sequence and chain link; name the first bad record."""
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.storage.ledger import Ledger

        resolved = HRMHome.resolve(home)
        if path is not None and all_ledgers:
            raise fail("give a ledger PATH or --all, not both", EXIT_USAGE)
        paths = resolved.all_ledgers() if path is None else [_ledger_path(path, resolved)]
        reports: list[VerifyReport] = []
        with contextlib.ExitStack() as stack:
            index = _open_index(resolved, stack)
            bar = stack.enter_context(
                progress_bar("verifying", json_output=json_output, unit="bytes")
            )
            sizes = [_size(p) for p in paths] if bar.callback is not None else []
            for number, ledger_path in enumerate(paths):
                bar.describe(_display(ledger_path, resolved))
                with Ledger(ledger_path, read_only=True) as ledger:
                    if ledger.repaired is not None:
                        err_console.print(
                            f"warning: {ledger.repaired.describe()}", markup=False, soft_wrap=True
                        )
                    report = ledger.verify(progress=_across(bar, sizes, number))
                    problem = index.check(ledger) if index is not None and report.ok else None
                if problem is not None:
                    report = dataclasses.replace(report, ok=False, first_error=problem)
                reports.append(report)
    failed = [report for report in reports if not report.ok]
    for report in failed:
        err_console.print(report.describe(), markup=False, highlight=False, soft_wrap=True)
    if json_output:
        emit_json({"ok": not failed, "ledgers": [r.to_dict() for r in reports]})
    elif not reports:
        console.print(f"No ledgers in {resolved.root}")
    else:
        for report in reports:
            if report.ok:
                name = _display(report.path, resolved)
                console.print(f"ok  {name}  {report.records} records", markup=False)
    if failed:
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
    """Drop the SQLite index over the ledgers and rebuild it from the ledgers themselves."""
    with handle_errors():
        from hrm.home import HRMHome

        resolved = HRMHome.resolve(home)
        with progress_bar("indexing ledgers", json_output=json_output, unit="bytes") as bar:
            report = _rebuild_indexes(resolved, bar)
    for name, error in sorted(report.errors.items()):
        err_console.print(f"{name}: {error}", markup=False, highlight=False, soft_wrap=True)
    if json_output:
        emit_json(report.to_dict())
    else:
        for name, count in sorted(report.counts.items()):
            console.print(f"{count:>8}  {name}", markup=False)
        console.print(f"{report.total:>8}  records indexed in {len(report.counts)} ledgers")
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
            with progress_bar("indexing ledgers", json_output=json_output, unit="bytes") as bar:
                reindexed = _rebuild_indexes(resolved, bar)
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
    reports: list[QuarantineReport], home: HRMHome, reindexed: ReindexReport | None
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
            f"cut {report.cut_bytes:,} bytes",
        ]
        if report.copy is not None:
            lines.append(f"  whole file copied to {report.copy.name}")
            lines.append(f"  sha256 {report.copy_sha256}, recorded as seq {report.record_seq}")
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    if reindexed is not None and reindexed.ok:
        console.print(f"Rebuilt the ledger index: {reindexed.total} records.")


def _rebuild_indexes(home: HRMHome, bar: ProgressBar | None = None) -> ReindexReport:
    """Re-derive the ledger index and, if that worked, each stack's episodic index."""
    from hrm.memory.episodic import EpisodicTraceStore
    from hrm.storage import Database, LedgerIndex

    bar = bar or ProgressBar()
    with Database(home.memory_db) as db:
        report = LedgerIndex(db, home=home).rebuild(progress=bar.callback)
        if report.ok:
            # The episodic trace's query index is derived from the same ledgers.
            bar.describe("indexing episodes", indeterminate=True)
            for agent_class in home.stack_classes():
                if home.episodic_ledger(agent_class).exists():
                    store = EpisodicTraceStore(db, home, agent_class)
                    try:
                        store.rebuild_index()
                    finally:
                        store.close()
    return report


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _across(bar: ProgressBar, sizes: list[int], number: int) -> ProgressCallback | None:
    """The callback for ledger `number` of several, counting the bytes of those before it."""
    if bar.callback is None:
        return None
    base, total = sum(sizes[:number]), sum(sizes)

    def report(done: int, _size: int) -> None:
        bar.update(min(base + done, total), total)

    return report


def _open_index(home: HRMHome, stack: contextlib.ExitStack) -> LedgerIndex | None:
    """The home's ledger index as a second anchor, if the home has a database at all."""
    if not home.memory_db.is_file():
        return None
    from hrm.storage import Database, LedgerIndex

    db = stack.enter_context(Database(home.memory_db))
    return LedgerIndex(db, home=home)


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
