"""Which handoff a new session sees: the newest of the project's, wherever it was written.

A handoff reaches hrm two ways: into its own store (the hooks at session end, ``hrm handoff
create``, the MCP tool), or into the project, when Claude writes one (Continuous-Claude's
``thoughts/shared/handoffs/…``, Ring's ``docs/handoffs/…``) and the PostToolUse hook indexes it
in the artifact index. Before issue 31 SessionStart read only the store and showed a stale
migrated handoff while the one Claude had just written sat unread in the index.

`newest_handoff` looks at both and returns the newest, with a sentence saying where it came from.
One exception (D242): the handoff hrm writes by itself at session end summarises the session
mechanically; when the same session also produced a handoff someone wrote on purpose, that one
is shown, and the automatic one is named beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hrm.continuity.handoffs import HandoffData
    from hrm.continuity.hooks import HookOrchestrator

__all__ = ["HandoffChoice", "newest_handoff"]

_CANDIDATES = 5
"""Handoffs read from each source: the newest few are enough to find the newest deliberate one."""


@dataclass(frozen=True)
class HandoffChoice:
    """The handoff a session starts from, and where it came from."""

    path: Path
    data: HandoffData
    origin: str
    """One sentence for the reader: hrm's store, or the project file the index points at."""
    when: datetime
    automatic: bool
    """Written by hrm's hooks at session end or compaction, not by a person or an agent."""
    session_id: str
    """The session that wrote it (for an indexed file, the session whose tool wrote it)."""


def newest_handoff(orchestrator: HookOrchestrator, project: Path) -> HandoffChoice | None:
    """The handoff to show at the start of a session in `project` (see the module docstring)."""
    candidates = _from_store(orchestrator, project)
    if orchestrator.home.memory_db.exists():
        candidates += orchestrator._guard(
            "indexed handoffs", lambda: _from_index(orchestrator, project), []
        )
    if not candidates:
        return None
    candidates.sort(key=lambda c: c.when, reverse=True)
    newest = candidates[0]
    if not newest.automatic:
        return newest
    deliberate = [c for c in candidates if not c.automatic and c.session_id == newest.session_id]
    if not deliberate:
        return newest
    chosen = deliberate[0]
    note = f"{chosen.origin}; hrm's automatic handoff of the same session is at {newest.path}"
    return HandoffChoice(path=chosen.path, data=chosen.data, origin=note, when=chosen.when,
                         automatic=False, session_id=chosen.session_id)


def _from_store(orchestrator: HookOrchestrator, project: Path) -> list[HandoffChoice]:
    store = orchestrator._handoffs_factory()
    recent = getattr(store, "recent", None)
    if callable(recent):
        found = recent(project_path=str(project), limit=_CANDIDATES)
    else:  # a store injected by a test may only know `latest`
        latest = store.latest(project_path=str(project))
        found = [] if latest is None else [(latest[0], latest[1], None)]
    return [_stored(Path(path), data, when) for path, data, when in found]


def _stored(path: Path, data: HandoffData, when: datetime | None) -> HandoffChoice:
    moment = when or data.session.ended_at or data.session.started_at or _mtime(path)
    return HandoffChoice(path=path, data=data, origin=f"from hrm's handoff store ({path})",
                         when=_aware(moment), automatic=_is_automatic(data),
                         session_id=data.session.id)


def _from_index(orchestrator: HookOrchestrator, project: Path) -> list[HandoffChoice]:
    from hrm.continuity._learnings_sql import parse_ts
    from hrm.continuity.handoffs import deserialize
    from hrm.errors import HRMError

    rows = orchestrator.learnings().artifacts.newest(
        "handoff", under=str(project), limit=_CANDIDATES
    )
    choices = []
    for row in rows:
        try:
            data = deserialize(row["content"], path=row["path"])
        except HRMError as exc:
            orchestrator._fail("indexed handoff", exc)
            continue
        path = Path(row["path"])
        shown = _relative(path, project)
        origin = f"written into the project at {shown}, indexed when it was written"
        when = parse_ts(row["indexed_at"]) or _mtime(path)
        choices.append(HandoffChoice(
            path=path, data=data, origin=origin, when=_aware(when),
            automatic=_is_automatic(data), session_id=row.get("session_id") or data.session.id,
        ))
    return choices


def _is_automatic(data: HandoffData) -> bool:
    extra: dict[str, Any] = data.extra if isinstance(data.extra, dict) else {}
    return extra.get("source") == "hrm-hook"


def _relative(path: Path, project: Path) -> str:
    try:
        return str(path.relative_to(project))
    except ValueError:
        return str(path)


def _mtime(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except OSError:
        return datetime.fromtimestamp(0, tz=UTC)


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
