"""`hrm memory shared|working|episodes|synthesis`: inspect and edit the memory bus compartments.

Thin: each command opens the stack's `MemoryBus` (``--as``) in the home (``--home``) with the
configured policy, TTL and ledger durability, calls one library method, and renders the result
as a rich table or, with ``--json``, as JSON on stdout. Edits go through the bus, so they pass
the write gate and are logged as ``write_completed`` episodes like any other write. A value given
on the command line is parsed as JSON when it is JSON (``3``, ``[1,2]``, ``{"a":1}``, ``"x"``)
and taken as a plain string otherwise (``--string`` forces a string).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hrm.cli._common import (
    EXIT_DENIED,
    AgentClassOption,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import Column, print_table, stdout_is_terminal

if TYPE_CHECKING:
    from hrm.memory.bus import MemoryBus
    from hrm.memory.types import EpisodeEntry, SynthesizedPattern, WriteDecision

__all__ = ["app"]

_SETTINGS = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    cls=SuggestingGroup,
    help="Inspect and edit the memory bus compartments.",
    no_args_is_help=True,
    context_settings=_SETTINGS,
)
shared_app = typer.Typer(
    cls=SuggestingGroup,
    help="The Shared Reference: versioned, citable facts.",
    no_args_is_help=True,
    context_settings=_SETTINGS,
)
working_app = typer.Typer(
    cls=SuggestingGroup,
    help="Working sets: per-problem scratch memory with a TTL.",
    no_args_is_help=True,
    context_settings=_SETTINGS,
)
episodes_app = typer.Typer(
    cls=SuggestingGroup,
    help="The episodic trace: what happened, newest first.",
    context_settings=_SETTINGS,
)
synthesis_app = typer.Typer(
    cls=SuggestingGroup,
    help="Semantic synthesis: patterns linked to their evidence.",
    no_args_is_help=True,
    context_settings=_SETTINGS,
)
app.add_typer(shared_app, name="shared")
app.add_typer(working_app, name="working")
app.add_typer(episodes_app, name="episodes")
app.add_typer(synthesis_app, name="synthesis")

StringOption = Annotated[
    bool, typer.Option("--string", help="Store VALUE as a string even if it parses as JSON.")
]
LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many.")]
TypeFilter = Annotated[
    str | None, typer.Option("--type", help="Only entries of this type.", show_default=False)
]
TagFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--tag", help="Only entries with this tag (repeat: all of them).", show_default=False
    ),
]
ProblemFilter = Annotated[
    str | None, typer.Option("--problem", help="Only entries of this problem.", show_default=False)
]
SinceFilter = Annotated[
    str | None,
    typer.Option("--since", help="Only entries at or after this ISO time.", show_default=False),
]
UntilFilter = Annotated[
    str | None,
    typer.Option("--until", help="Only entries at or before this ISO time.", show_default=False),
]


@contextmanager
def _bus(home: Path | None, agent_class: str) -> Iterator[MemoryBus]:
    """The stack's bus with the configured policy, TTL and durability; closed on exit."""
    from hrm.config import load_config
    from hrm.governance.preferences import PreferenceClassifier
    from hrm.home import HRMHome
    from hrm.memory.bus import MemoryBus
    from hrm.memory.write_gate import WriteGate

    resolved = HRMHome.resolve(home)
    config = load_config(resolved).config
    bus = MemoryBus.open(
        resolved,
        agent_class,
        gate=WriteGate(PreferenceClassifier(config.policy)),
        durability=config.ledger_durability,
        working_set_ttl_hours=config.working_set_default_ttl_hours,
    )
    try:
        yield bus
    finally:
        bus.close()


def _parse_value(text: str, as_string: bool) -> Any:
    if as_string:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _short(value: Any, limit: int = 80) -> str:
    """A value as text, cut to `limit` on a terminal; whole in a pipe (a script wants it all)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= limit or not stdout_is_terminal():
        return text
    return text[: limit - 1] + "…"


def _when(moment: datetime | None) -> str:
    """A time to read on a terminal; ISO 8601 with its offset in a pipe, as gh writes it."""
    if moment is None:
        return ""
    return moment.strftime("%Y-%m-%d %H:%M:%S") if stdout_is_terminal() else moment.isoformat()


def _report_decision(
    decision: WriteDecision, what: str, extra: dict[str, Any], *, as_json: bool
) -> None:
    if as_json:
        emit_json({**decision.to_dict(), **extra})
    elif decision.approved:
        where = decision.target.value
        console.print(f"{what}: written to {where} ({decision.reason})", markup=False)
    else:
        conditions = f" [{', '.join(decision.conditions)}]" if decision.conditions else ""
        console.print(f"{what}: denied ({decision.reason}){conditions}", markup=False)
    if not decision.approved:
        raise typer.Exit(EXIT_DENIED)


# ── shared ────────────────────────────────────────────────────────────────


@shared_app.command("set")
def shared_set(
    key: Annotated[str, typer.Argument(help="The reference's key.")],
    value: Annotated[str, typer.Argument(help="The value (JSON, or a plain string).")],
    *,
    source: Annotated[str, typer.Option("--source", help="Who sets it.")] = "user",
    preference: Annotated[
        bool, typer.Option("--preference", help="Apply the preference truth model first.")
    ] = False,
    reason: Annotated[str, typer.Option("--reason", help="Why; kept in the trace.")] = "",
    as_string: StringOption = False,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Write a new version of KEY through the write gate (exit 4 when denied)."""
    from hrm.memory.types import WriteSignals

    with handle_errors(), _bus(home, agent_class) as bus:
        decision = bus.write_to_shared(
            key,
            _parse_value(value, as_string),
            source,
            WriteSignals.trusted(),
            is_preference=preference,
            reason=reason,
        )
        extra: dict[str, Any] = {"key": key}
        if decision.approved and decision.target.value == "shared_reference":
            extra["version"] = bus.shared.list_versions(key)[-1]
    _report_decision(decision, key, extra, as_json=as_json)


@shared_app.command("get")
def shared_get(
    key: Annotated[str, typer.Argument(help="The reference's key.")],
    version: Annotated[
        int | None, typer.Option("--version", "-v", help="This version, not the latest.")
    ] = None,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Show the latest (or a given) version of KEY."""
    with handle_errors(), _bus(home, agent_class) as bus:
        ref = bus.shared.get(key, version)
    if as_json:
        emit_json(ref.to_dict())
        return
    header = f"{ref.key} v{ref.version} by {ref.source}, {_when(ref.updated_at)}"
    console.print(header, markup=False)
    console.print(json.dumps(ref.value, indent=2, ensure_ascii=False), markup=False)


@shared_app.command("history")
def shared_history(
    key: Annotated[str, typer.Argument(help="The reference's key.")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List every version of KEY, oldest first."""
    from hrm.errors import HRMError

    with handle_errors(), _bus(home, agent_class) as bus:
        versions = bus.shared.history(key)
        if not versions:
            raise HRMError.not_found("shared reference", key, f"it was never set for {agent_class}")
    if as_json:
        emit_json([v.to_dict() for v in versions])
        return
    print_table(
        ["version", "updated", "source", "value", "restores"],
        [
            (ref.version, _when(ref.updated_at), ref.source, _short(ref.value),
             "" if ref.rollback_of is None else f"v{ref.rollback_of}")
            for ref in versions
        ],
        title=f"shared reference {key}",
    )


@shared_app.command("rollback")
def shared_rollback(
    key: Annotated[str, typer.Argument(help="The reference's key.")],
    version: Annotated[int, typer.Argument(help="The version whose value to restore.")],
    *,
    source: Annotated[str, typer.Option("--source", help="Who rolls back.")] = "user",
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Restore the exact value of VERSION as a new version of KEY."""
    with handle_errors(), _bus(home, agent_class) as bus:
        new_version = bus.rollback_shared(key, version, source=source)
        ref = bus.shared.get(key)
    if as_json:
        emit_json(ref.to_dict())
        return
    console.print(f"{key}: v{version} restored as v{new_version}", markup=False)


@shared_app.command("cite")
def shared_cite(
    key: Annotated[str, typer.Argument(help="The reference's key.")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Print a citation of the latest version of KEY."""
    with handle_errors(), _bus(home, agent_class) as bus:
        citation = bus.shared.cite(key)
    if as_json:
        emit_json({"key": key, "citation": citation})
        return
    console.print(citation, markup=False)


@shared_app.command("list")
def shared_list(
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List every key with its latest version."""
    with handle_errors(), _bus(home, agent_class) as bus:
        refs = [bus.shared.get(key) for key in bus.shared.keys()]  # noqa: SIM118
    if as_json:
        emit_json([r.to_dict() for r in refs])
        return
    if not refs and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No shared references.", markup=False)
        return
    print_table(
        ["key", "version", "updated", "source", "value"],
        [
            (ref.key, ref.version, _when(ref.updated_at), ref.source, _short(ref.value))
            for ref in refs
        ],
        title=f"shared references of {agent_class}",
    )


# ── working ───────────────────────────────────────────────────────────────


@working_app.command("show")
def working_show(
    problem: Annotated[str, typer.Argument(help="The problem id.")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Show the live working set of PROBLEM."""
    from hrm.errors import HRMError

    with handle_errors(), _bus(home, agent_class) as bus:
        working = bus.working.get(problem)
        if working is None:
            raise HRMError.not_found("working set", problem, "none is live (it may have expired)")
        summary = bus.working.export_summary(problem)
    if as_json:
        emit_json(working.to_dict())
        return
    console.print(summary, markup=False, end="")


@working_app.command("set")
def working_set(
    problem: Annotated[str, typer.Argument(help="The problem id.")],
    key: Annotated[str, typer.Argument(help="The artifact's key.")],
    value: Annotated[str, typer.Argument(help="The value (JSON, or a plain string).")],
    *,
    as_string: StringOption = False,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Store VALUE under KEY in the partial artifacts of PROBLEM's working set."""
    with handle_errors(), _bus(home, agent_class) as bus:
        bus.write_to_working(problem, key, _parse_value(value, as_string))
        working = bus.working.get(problem)
    if as_json:
        emit_json(None if working is None else working.to_dict())
        return
    console.print(f"{problem}: {key} set", markup=False)


@working_app.command("list")
def working_list(
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List the live working sets, soonest to expire first."""
    with handle_errors(), _bus(home, agent_class) as bus:
        sets = bus.working.list_active()
    if as_json:
        emit_json([w.to_dict() for w in sets])
        return
    if not sets and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No live working sets.", markup=False)
        return
    print_table(
        ["problem", "created", "expires", "artifacts", "open questions"],
        [
            (w.problem_id, _when(w.created_at), _when(w.expires_at), len(w.partial_artifacts),
             len(w.open_questions))
            for w in sets
        ],
        title=f"working sets of {agent_class}",
    )


@working_app.command("expire")
def working_expire(
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Archive and delete expired working sets."""
    with handle_errors(), _bus(home, agent_class) as bus:
        count = bus.expire_working()
    if as_json:
        emit_json({"expired": count})
        return
    console.print(f"Expired {count} working set(s).", markup=False)


# ── episodes ──────────────────────────────────────────────────────────────


def _list_episodes(
    *,
    home: Path | None,
    agent_class: str,
    entry_type: str | None,
    tags: list[str] | None,
    problem: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    as_json: bool,
) -> None:
    from hrm.memory.types import parse_timestamp

    with handle_errors():
        start = parse_timestamp(since) if since else None
        end = parse_timestamp(until) if until else None
        with _bus(home, agent_class) as bus:
            entries = bus.episodic.query(
                start=start,
                end=end,
                problem_id=problem,
                tags=tags,
                entry_type=entry_type,
                limit=limit,
            )
    if as_json:
        emit_json([e.to_dict() for e in entries])
        return
    _render_episodes(entries, f"episodes of {agent_class}")


def _render_episodes(entries: list[EpisodeEntry], title: str) -> None:
    if not entries and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No matching episodes.", markup=False)
        return
    print_table(
        [Column("id", no_wrap=True), Column("time", no_wrap=True), Column("type", no_wrap=True),
         Column("problem"), Column("tags"), Column("content")],
        [
            (e.id + (f" → {e.superseded_by}" if e.superseded_by else ""), _when(e.timestamp),
             e.entry_type, e.problem_id or "", ", ".join(e.tags), _short(e.content, 60))
            for e in entries
        ],
        title=title,
    )


@episodes_app.callback(invoke_without_command=True)
def episodes_default(
    ctx: typer.Context,
    *,
    entry_type: TypeFilter = None,
    tags: TagFilter = None,
    problem: ProblemFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    limit: LimitOption = 100,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """The episodic trace, newest first (the same as `episodes list`)."""
    if ctx.invoked_subcommand is None:
        _list_episodes(
            home=home,
            agent_class=agent_class,
            entry_type=entry_type,
            tags=tags,
            problem=problem,
            since=since,
            until=until,
            limit=limit,
            as_json=as_json,
        )


@episodes_app.command("list")
def episodes_list(
    *,
    entry_type: TypeFilter = None,
    tags: TagFilter = None,
    problem: ProblemFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    limit: LimitOption = 100,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List episodes matching every filter, newest first."""
    _list_episodes(
        home=home,
        agent_class=agent_class,
        entry_type=entry_type,
        tags=tags,
        problem=problem,
        since=since,
        until=until,
        limit=limit,
        as_json=as_json,
    )


@episodes_app.command("show")
def episodes_show(
    entry_id: Annotated[str, typer.Argument(help="The episode id (ep_…).")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Show one episode in full."""
    with handle_errors(), _bus(home, agent_class) as bus:
        entry = bus.episodic.get(entry_id)
    if as_json:
        emit_json(entry.to_dict())
        return
    console.print(json.dumps(entry.to_dict(), indent=2, ensure_ascii=False), markup=False)


# ── synthesis ─────────────────────────────────────────────────────────────


def _render_patterns(patterns: list[SynthesizedPattern], title: str) -> None:
    if not patterns and stdout_is_terminal():  # a pipe gets the header and no rows
        console.print("No synthesized patterns.", markup=False)
        return
    print_table(
        ["id", "type", "confidence", "evidence", "description"],
        [
            (p.id, p.pattern_type, f"{p.confidence:.2f}", len(p.evidence_ids),
             _short(p.description))
            for p in patterns
        ],
        title=title,
    )


@synthesis_app.command("list")
def synthesis_list(
    pattern_type: Annotated[
        str | None, typer.Option("--type", help="Only patterns of this type.", show_default=False)
    ] = None,
    min_confidence: Annotated[
        float, typer.Option("--min-confidence", min=0.0, max=1.0, help="Confidence floor.")
    ] = 0.0,
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List patterns, highest confidence first."""
    with handle_errors(), _bus(home, agent_class) as bus:
        patterns = bus.synthesis.search(pattern_type, min_confidence)
    if as_json:
        emit_json([p.to_dict() for p in patterns])
        return
    _render_patterns(patterns, f"synthesized patterns of {agent_class}")


@synthesis_app.command("show")
def synthesis_show(
    pattern_id: Annotated[str, typer.Argument(help="The pattern id (syn_…).")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """Show one pattern in full, with its weakenings."""
    with handle_errors(), _bus(home, agent_class) as bus:
        pattern = bus.synthesis.get_pattern(pattern_id)
        weakenings = bus.synthesis.weakenings(pattern_id)
    data = pattern.to_dict()
    data["weakenings"] = [
        {"reason": w.reason, "confidence_after": w.confidence_after, "at": w.at.isoformat()}
        for w in weakenings
    ]
    if as_json:
        emit_json(data)
        return
    console.print(json.dumps(data, indent=2, ensure_ascii=False), markup=False)


@synthesis_app.command("evidence")
def synthesis_evidence(
    pattern_id: Annotated[str, typer.Argument(help="The pattern id (syn_…).")],
    home: HomeOption = None,
    agent_class: AgentClassOption = "ADMIN",
    as_json: JsonOption = False,
) -> None:
    """List the episodes a pattern was learned from, in link order."""
    with handle_errors(), _bus(home, agent_class) as bus:
        chain = bus.get_evidence_chain(pattern_id)
    if as_json:
        emit_json([e.to_dict() for e in chain])
        return
    _render_episodes(chain, f"evidence of {pattern_id}")
