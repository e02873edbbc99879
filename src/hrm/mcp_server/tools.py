"""What `hrm mcp` can do, as plain synchronous functions over one home (no MCP in here).

Each tool is a method of `HrmTools` taking typed arguments and returning a JSON-ready dict; a
wrong value raises `HRMError` naming the argument, which the server turns into a tool error
(`hrm.mcp_server.server`). Keeping them free of the SDK lets the CLI's own code paths be reused
as they are — the learnings repository, the handoff store, the skill activator, `hrm why`'s
reader — and tested without a transport.

What a client sends is data: a handoff id is resolved inside the store only, a project path is
only a key, text to store is scrubbed by the store, and a search's size is capped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError

if TYPE_CHECKING:
    from hrm.home import HRMHome

__all__ = ["HandoffLearningInput", "HrmTools"]

_MAX_RESULTS = 50
_MAX_TEXT = 20_000


@dataclass(frozen=True)
class HandoffLearningInput:
    """A learning to record with a handoff (``learnings:``)."""

    type: str
    """ERROR_FIX, WORKING_SOLUTION, FAILED_APPROACH, ARCHITECTURAL_DECISION, CODEBASE_PATTERN, …"""
    content: str
    confidence: str = "inferred"
    """verified, inferred or uncertain (003 §5)."""


@dataclass
class HrmTools:
    """The tools of `hrm mcp` over one home; `project` is the default project path."""

    home: HRMHome
    project: Path = field(default_factory=lambda: Path(os.environ.get(
        "CLAUDE_PROJECT_DIR") or Path.cwd()))

    def _project(self, project_path: str | None) -> Path:
        if project_path is None or not project_path.strip():
            return self.project
        path = Path(project_path).expanduser()
        if not path.is_absolute():
            raise HRMError.validation_failed(
                f"project_path must be absolute, got {project_path!r}", field="project_path"
            )
        return path

    # -- learnings ---------------------------------------------------------------------------

    def learnings_search(
        self, query: str, limit: int = 5, types: list[str] | None = None
    ) -> dict[str, Any]:
        """Full-text (and, with embeddings, hybrid) search of the learnings."""
        from hrm.continuity.learnings import LearningsRepository
        from hrm.continuity.learnings_types import SearchFilters, SearchQuery

        _text(query, "query")
        if not 1 <= limit <= _MAX_RESULTS:
            raise HRMError.validation_failed(
                f"limit must be between 1 and {_MAX_RESULTS}, got {limit}", field="limit"
            )
        filters = SearchFilters(types=list(types)) if types else None
        with LearningsRepository.open(self.home, embeddings="off") as repo:
            found = repo.search_memories(SearchQuery(text=query, filters=filters, limit=limit))
        return found.to_dict()

    def learnings_store(
        self,
        content: str,
        type: str,
        confidence: str = "MEDIUM",
        tags: list[str] | None = None,
        context: str | None = None,
    ) -> dict[str, Any]:
        """Store one learning (scrubbed and de-duplicated by the store)."""
        from hrm.continuity.learnings import LearningsRepository
        from hrm.continuity.learnings_types import LearningInput

        _text(content, "content")
        with LearningsRepository.open(self.home, embeddings="off") as repo:
            stored = repo.store_learning(LearningInput(
                content=content, type=type, confidence=confidence, tags=list(tags or []),
                context=context, source="agent",
            ))
        return {"id": stored.id, "stored_at": stored.stored_at.isoformat()}

    # -- handoffs ----------------------------------------------------------------------------

    def handoff_latest(self, project_path: str | None = None) -> dict[str, Any]:
        """The project's newest handoff, from hrm's store or the project's own files."""
        from hrm.continuity._handoff_sources import newest_handoff
        from hrm.continuity.handoffs import handoff_to_dict
        from hrm.continuity.hooks import HookOrchestrator

        project = self._project(project_path)
        orchestrator = HookOrchestrator(self.home)
        try:
            choice = newest_handoff(orchestrator, project)
        finally:
            orchestrator.close()
        if choice is None:
            raise HRMError.not_found("handoff", str(project), "none stored for this project yet")
        return {"path": str(choice.path), "origin": choice.origin,
                "handoff": handoff_to_dict(choice.data)}

    def handoff_read(self, id: str) -> dict[str, Any]:
        """A stored handoff by id (``<session>/<name>`` or its file stem)."""
        from hrm.continuity.handoff_store import HandoffStore
        from hrm.continuity.handoffs import handoff_to_dict

        _text(id, "id")
        path, data = HandoffStore(self.home).read(id)
        return {"path": str(path), "handoff": handoff_to_dict(data)}

    def handoff_create(
        self,
        task: str,
        status: str = "paused",
        next_steps: list[str] | None = None,
        decisions: list[str] | None = None,
        learnings: list[HandoffLearningInput] | None = None,
        blockers: list[str] | None = None,
        notes: str = "",
        project_path: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Write a handoff to the store; its learnings become searchable learnings."""
        from hrm.continuity.handoff_store import HandoffStore

        _text(task, "task")
        handoff = _handoff(
            task=task, status=status, project=self._project(project_path),
            session_id=session_id or f"mcp-{datetime.now(UTC):%Y%m%dT%H%M%S}",
            next_steps=next_steps or [], decisions=decisions or [], learnings=learnings or [],
            blockers=blockers or [], notes=notes,
        )
        path = HandoffStore(self.home).write(handoff)
        stored = self._store_handoff_learnings(handoff)
        return {"path": str(path), "id": f"{path.parent.name}/{path.stem}",
                "learnings_stored": stored}

    def _store_handoff_learnings(self, handoff: Any) -> int:
        if not handoff.learnings:
            return 0
        from hrm.continuity.capture import store_captured
        from hrm.continuity.learnings import LearningsRepository

        with LearningsRepository.open(self.home, embeddings="off") as repo:
            ids, _ = store_captured(repo, handoff.learnings, session_id=handoff.session.id,
                                    project_path=handoff.context.project_path, source="handoff")
        return len(ids)

    # -- skills and why ----------------------------------------------------------------------

    def skill_match(self, prompt: str, project_path: str | None = None) -> dict[str, Any]:
        """The skills the project's, the person's and the home's rules match for `prompt`."""
        from hrm.continuity.skills import SkillActivator, default_rule_paths

        _text(prompt, "prompt")
        activator = SkillActivator(cache_dir=self.home.cache_dir)
        paths = [p for p in default_rule_paths(self.home, self._project(project_path))
                 if p.is_file()]
        if not paths:
            return {"matches": [], "action": "continue", "errors": []}
        rules = activator.load_rules(paths)
        found = activator.match_skills(prompt, rules)
        action = activator.apply_enforcement(found.matches)
        return {
            "matches": [
                {"skill": m.skill, "enforcement": m.enforcement.value,
                 "priority": m.priority.value, "confidence": m.confidence,
                 "description": m.description,
                 "keywords": list(m.match_reason.matched_keywords),
                 "patterns": list(m.match_reason.matched_patterns)}
                for m in found.matches
            ],
            "action": action.action.value,
            "message": action.message,
            "timed_out": found.timed_out,
            "errors": [str(e) for e in rules.errors],
        }

    def why(self, turn: int | None = None, agent_class: str | None = None) -> dict[str, Any]:
        """A turn's decision record, explained layer by layer (what ``hrm why --json`` prints)."""
        from hrm.cli.why import explain, read_turn
        from hrm.config import load_config
        from hrm.home import parse_agent_class

        if turn is not None and turn < 1:
            raise HRMError.validation_failed(f"turn must be 1 or more, got {turn}", field="turn")
        stack = agent_class or load_config(self.home).config.default_agent_class
        parse_agent_class(stack)
        found = read_turn(self.home.decision_ledger(stack), stack, turn)
        rows = explain(found.decision, found.events)
        return {
            "agent_class": found.agent_class, "turn": found.turn, "ts": found.ts,
            "explanation": [{"layer": layer, "text": text} for layer, text in rows],
            "decision": found.decision, "events": found.events,
        }


def _text(value: str, name: str) -> None:
    if not value.strip():
        raise HRMError.validation_failed(f"{name} is empty", field=name)
    if len(value) > _MAX_TEXT:
        raise HRMError.validation_failed(
            f"{name} is {len(value)} characters; at most {_MAX_TEXT}", field=name
        )


def _handoff(
    *, task: str, status: str, project: Path, session_id: str, next_steps: list[str],
    decisions: list[str], learnings: list[HandoffLearningInput], blockers: list[str], notes: str,
) -> Any:
    from hrm.continuity.handoffs import (
        Blocker,
        BlockerType,
        ContextInfo,
        Decision,
        HandoffData,
        HandoffLearning,
        ResumeInstructions,
        SessionMetadata,
        TaskInfo,
        TaskStatus,
    )

    try:
        state = TaskStatus(status.strip().lower())
    except ValueError:
        valid = ", ".join(s.value for s in TaskStatus)
        raise HRMError.validation_failed(
            f"status {status!r} is not one of {valid}", field="status"
        ) from None
    now = datetime.now(UTC)
    return HandoffData(
        session=SessionMetadata(id=session_id, started_at=now, ended_at=now),
        task=TaskInfo(description=task, status=state),
        context=ContextInfo(project_path=str(project)),
        decisions=[Decision(decision=d) for d in decisions],
        learnings=[HandoffLearning(type=item.type, content=item.content,
                                   confidence=item.confidence) for item in learnings],
        blockers=[Blocker(type=BlockerType.TECHNICAL, description=b) for b in blockers],
        resume=ResumeInstructions(next_steps=list(next_steps)),
        notes=notes,
        extra={"source": "mcp"},
    )
