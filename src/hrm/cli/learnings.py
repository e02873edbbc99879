"""`hrm memory learn|search|show|decay|export|import|reembed|confirm|forget`: the learnings store
(003 §2).

Thin: parse options, call `LearningsRepository`, render. Whether search is hybrid follows the
``continuity.embeddings`` setting (``auto`` by default); decay weights default to the
``continuity.decay_*`` settings. Export writes JSON Lines (one learning per line), which import
reads back (a JSON array is accepted too).
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._progress import progress_bar
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import Column, print_table

if TYPE_CHECKING:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import Learning, SearchResults

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Remember and search learnings.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_DURATION = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}

EmbeddingsOption = Annotated[
    str | None,
    typer.Option(
        "--embeddings",
        help="auto | on | off (default: the continuity.embeddings setting).",
        show_default=False,
    ),
]


def _settings(home: Path | None) -> Any:
    from hrm.config import load_config
    from hrm.home import HRMHome

    return load_config(HRMHome.resolve(home)).config.continuity


def _open(home: Path | None, embeddings: str | None = None) -> LearningsRepository:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.home import HRMHome

    mode = embeddings or _settings(home).embeddings
    return LearningsRepository.open(HRMHome.resolve(home), embeddings=mode)


def _when(value: str | None, *, option: str) -> datetime | None:
    """An ISO timestamp (naive = UTC) or, for expiry, a duration from now (``7d``, ``12h``)."""
    from hrm.continuity._learnings_sql import parse_ts
    from hrm.errors import HRMError

    if value is None:
        return None
    duration = _DURATION.match(value)
    if duration and option == "--expires":
        try:
            return datetime.now(UTC) + timedelta(**{_UNITS[duration[2]]: int(duration[1])})
        except (OverflowError, ValueError):
            raise HRMError.validation_failed(
                f"{option}: {value!r} reaches past the year 9999", option=option
            ) from None
    try:
        return parse_ts(value)
    except HRMError as exc:
        raise HRMError.validation_failed(f"{option}: {exc.message}", option=option) from exc


@app.command()
def learn(
    content: Annotated[str, typer.Argument(help="The learning text.")],
    *,
    type_: Annotated[
        str, typer.Option("--type", "-t", help="FAILED_APPROACH, WORKING_SOLUTION, ... (any case).")
    ],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    confidence: Annotated[str, typer.Option(help="HIGH, MEDIUM or LOW.")] = "MEDIUM",
    context: Annotated[str | None, typer.Option(help="Where it applies.")] = None,
    session: Annotated[str | None, typer.Option(help="The session it came from.")] = None,
    expires: Annotated[
        str | None, typer.Option(help="Expiry: ISO time or a duration (7d, 12h).")
    ] = None,
    home: HomeOption = None,
    embeddings: EmbeddingsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Store a learning (secrets scrubbed; duplicates rejected with the existing id)."""
    from hrm.continuity.learnings_types import LearningInput

    with handle_errors(), _open(home, embeddings) as repo:
        stored = repo.store_learning(
            LearningInput(
                content=content,
                type=type_,
                tags=list(tag or []),
                confidence=confidence,
                context=context,
                session_id=session,
                expires_at=_when(expires, option="--expires"),
            )
        )
        learning = repo.get(stored.id)
    if json_output:
        emit_json({"id": stored.id, "stored_at": stored.stored_at, "status": learning.status})
        return
    note = "" if learning.status == "active" else f" ({learning.status})"
    console.print(f"Stored {stored.id}{note}")


@app.command()
def search(
    text: Annotated[str, typer.Argument(help="What to look for (any text is safe).")],
    *,
    type_: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Only this type (repeatable).")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Any of these tags.")] = None,
    min_confidence: Annotated[
        str | None, typer.Option("--min-confidence", help="HIGH, MEDIUM or LOW.")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Created at or after (ISO).")] = None,
    until: Annotated[str | None, typer.Option(help="Created at or before (ISO).")] = None,
    session: Annotated[str | None, typer.Option(help="Only from this session.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="1 to 100.")] = 10,
    include_expired: Annotated[
        bool, typer.Option("--include-expired", help="Also expired and pruned learnings.")
    ] = False,
    include_pending: Annotated[
        bool, typer.Option("--include-pending", help="Also unconfirmed inferred preferences.")
    ] = False,
    home: HomeOption = None,
    embeddings: EmbeddingsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search learnings, best first (full-text, hybrid with embeddings)."""
    from hrm.continuity.learnings_types import SearchFilters, SearchQuery

    # Hybrid search loads the embedding model and embeds learnings it has not seen: a second
    # or more the first time, shown as a pulsing bar on a terminal.
    quiet = json_output or embeddings == "off"
    with handle_errors(), progress_bar("searching", json_output=quiet) as bar, _open(
        home, embeddings
    ) as repo:
        bar.describe("searching", indeterminate=True)
        start, end = _when(since, option="--since"), _when(until, option="--until")
        filters = SearchFilters(
            types=list(type_) if type_ else None,
            tags=list(tag) if tag else None,
            confidence=min_confidence,
            date_range=(start, end) if start or end else None,
            session_id=session,
            include_pending=include_pending,
        )
        results = repo.search_memories(
            SearchQuery(text=text, filters=filters, limit=limit, include_expired=include_expired)
        )
    if json_output:
        emit_json(results.to_dict())
        return
    _render_results(results)


def _render_results(results: SearchResults) -> None:
    from hrm.cli._table import stdout_is_terminal

    if not results.results and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No matching learnings.")
        return
    print_table(
        [Column("score"), Column("id", no_wrap=True), Column("type"), Column("conf"),
         Column("content")],
        [
            (f"{hit.relevance_score:.2f}", hit.learning.id, hit.learning.type.value,
             hit.learning.confidence.value, hit.learning.content)
            for hit in results.results
        ],
    )
    if stdout_is_terminal():
        console.print(
            f"{len(results.results)} of {results.total_count} ({results.mode},"
            f" {results.query_time_ms} ms)"
        )


@app.command()
def show(
    learning_id: Annotated[str, typer.Argument(help="The learning id.")],
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show one learning with all its fields."""
    with handle_errors(), _open(home, "off") as repo:
        learning = repo.get(learning_id)
    if json_output:
        emit_json(learning.to_dict())
        return
    _render_learning(learning)


def _render_learning(learning: Learning) -> None:
    for key, value in learning.to_dict().items():
        if value not in (None, [], {}):
            console.print(f"[bold]{escape(key)}[/]: {escape(str(value))}", markup=True)


@app.command()
def decay(
    age_weight: Annotated[float | None, typer.Option(help="Weight of age, 0-1.")] = None,
    access_weight: Annotated[float | None, typer.Option(help="Weight of disuse, 0-1.")] = None,
    min_score: Annotated[float | None, typer.Option(help="Prune below this score.")] = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Re-score learnings by age and use; prune (mark, never delete) those below min-score."""
    from hrm.continuity.learnings_types import DecayStrategy

    with handle_errors():
        settings = _settings(home)
        strategy = DecayStrategy(
            age_weight=settings.decay_age_weight if age_weight is None else age_weight,
            access_weight=settings.decay_access_weight if access_weight is None else access_weight,
            min_score=settings.decay_min_score if min_score is None else min_score,
        )
        with _open(home, "off") as repo:
            result = repo.apply_decay(strategy)
    if json_output:
        emit_json(
            {
                "memories_decayed": result.memories_decayed,
                "memories_pruned": result.memories_pruned,
                "average_age_days": result.average_age_days,
            }
        )
        return
    console.print(
        f"Re-scored {result.memories_decayed} learnings, pruned {result.memories_pruned};"
        f" average age {result.average_age_days:.1f} days"
    )


@app.command("export")
def export_(
    file: Annotated[Path | None, typer.Argument(help="Write here (default: stdout).")] = None,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Export every learning (any status) as JSON Lines."""
    with handle_errors(), _open(home, "off") as repo:
        items = repo.export()
        lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        if file is None:
            sys.stdout.write(lines)
            return
        _write_export(file, lines.encode("utf-8"))
    if json_output:
        emit_json({"exported": len(items), "file": str(file)})
    else:
        console.print(f"Exported {len(items)} learnings to {file}")


def _write_export(file: Path, payload: bytes) -> None:
    """Write the export whole or not at all; a bad destination is named, not a traceback."""
    from hrm._atomic import atomic_write
    from hrm.errors import HRMError

    if file.is_dir():
        raise HRMError.validation_failed(
            f"'{file}' is a directory; give the export a file name", path=str(file)
        )
    if not file.parent.is_dir():
        raise HRMError.validation_failed(
            f"Cannot export to '{file}': the directory '{file.parent}' does not exist",
            path=str(file),
        )
    try:
        atomic_write(file, payload)
    except PermissionError:
        raise HRMError.permission_denied(file) from None
    except OSError as exc:
        raise HRMError.internal(f"Cannot write '{file}': {exc.strerror or exc}") from exc


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="JSON Lines (or a JSON array) from export.")],
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Import learnings; duplicates are skipped, a bad item aborts with nothing written."""
    with handle_errors():
        items = _read_items(file)
        with _open(home, "off") as repo, progress_bar(
            "importing learnings", json_output=json_output
        ) as bar:
            imported, skipped = repo.import_(items, progress=bar.callback)
    if json_output:
        emit_json({"imported": imported, "skipped": skipped})
    else:
        console.print(f"Imported {imported} learnings, skipped {skipped} duplicates")


def _read_items(file: Path) -> list[Any]:
    from hrm._paths import read_text
    from hrm.errors import HRMError

    try:
        text = read_text(file, max_bytes=256 << 20, what="import file")  # never a FIFO (D131)
    except OSError as exc:
        raise HRMError.not_found("file", str(file), str(exc.strerror or exc)) from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HRMError.parse_error(exc.msg, path=file, line=exc.lineno) from exc
        return list(data)
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise HRMError.parse_error(f"not JSON: {exc.msg}", path=file, line=number) from exc
    return items


@app.command()
def reembed(
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Embed every learning that has no vector of the current model (after an import or a
    model change); search would otherwise do it a few dozen at a time."""
    with handle_errors(), _open(home, "on") as repo, progress_bar(
        "embedding learnings", json_output=json_output
    ) as bar:
        embedded = repo.reembed(progress=bar.callback)
    if json_output:
        emit_json({"embedded": embedded})
    else:
        console.print(f"Embedded {embedded} learnings")


@app.command()
def confirm(
    learning_id: Annotated[str, typer.Argument(help="The pending preference's id.")],
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Confirm an inferred preference so it becomes active."""
    with handle_errors(), _open(home, "off") as repo:
        learning = repo.confirm(learning_id)
    if json_output:
        emit_json(learning.to_dict())
        return
    console.print(f"{learning.id} is {learning.status}")


@app.command()
def forget(
    learning: Annotated[str, typer.Argument(help="A learning's id, or words only it holds.")],
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a learning for real: from memory.db, every ledger, handoffs, logs and caches."""
    with handle_errors(), _open(home, "off") as repo:
        done = repo.forget(learning)
    if json_output:
        emit_json(done.to_dict())
        return
    console.print(f"forgot {done.learning.id}", markup=False)
    report = done.report
    if report is not None:
        for name, seqs in sorted(report.ledgers.items()):
            console.print(f"  redacted {len(seqs)} record(s) in {name}", markup=False)
        for problem in report.remaining:
            console.print(f"  warning: {problem}", markup=False)
