"""The hook orchestrator (003 §6): what hrm does at each moment of a coding-assistant session.

`HookOrchestrator` is protocol-agnostic: it receives the DTOs of 003 §6 (`SessionContext`,
`UserPrompt`, `FileInfo`, plus `SessionCheckpoint` and `StopSignal` for the events the spec names
without a DTO) and returns a `HookResponse`. Turning Claude Code's JSON into those DTOs and a
response back into JSON is `hook_protocol`'s job; running it as a process is `hook_entry`'s.

Hooks never raise (ARCHITECTURE §5): every collaborator call is guarded, a failure is recorded in
`HookOrchestrator.failures` (the caller logs it) and the hook answers with what it has. Slow work
(memory search, skill matching, the session-end handoff) runs on a worker thread awaited with the
configured budget, so an overrun answers with what is ready instead of being killed by Claude
Code and losing everything.

Module level imports only cheap standard-library modules and the record base `hrm._values`: no
`typing`, `dataclasses`, `logging` or `threading`, whose imports would cost `hrm hook` more than
the interpreter's own start-up (D21). The DTOs are hand-written frozen records (`Value`) with
dataclass semantics. The collaborators (learnings, handoffs, the continuity ledger) are imported
inside the handler that needs them, so an event pays only for what it uses; so are the helpers
only SessionStart, PostToolUse, PreCompact and SessionEnd need, in `_hook_artifacts`.
"""

from __future__ import annotations

import _thread
import time
from enum import Enum
from pathlib import Path

from hrm._values import Value

TYPE_CHECKING = False  # `hrm hook` imports this module: no typing, dataclasses or logging
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Literal, TypeVar

    from hrm.home import HRMHome

    T = TypeVar("T")

__all__ = [
    "MAX_ADDITIONAL_CONTEXT",
    "FileInfo",
    "HookAction",
    "HookOrchestrator",
    "HookResponse",
    "HookSettings",
    "SessionCheckpoint",
    "SessionContext",
    "SessionMode",
    "SkillSuggestion",
    "StopSignal",
    "UserPrompt",
]

MAX_ADDITIONAL_CONTEXT = 10_000
"""Claude Code caps injected context at 10,000 characters (protocol §5.1); we never exceed it."""

class SessionMode(str, Enum):
    """How the session began (003 §6 `SessionContext.mode`, from the protocol's `source`)."""

    STARTUP = "STARTUP"
    RESUME = "RESUME"
    CLEAR = "CLEAR"
    COMPACT = "COMPACT"


class HookAction(str, Enum):
    """What a hook decided (003 §6): only BLOCK changes what the assistant does."""

    BLOCK = "BLOCK"
    SUGGEST = "SUGGEST"
    CONTINUE = "CONTINUE"


class SessionContext(Value):
    """A session that is starting (003 §6 `SessionContext`)."""

    _fields = ("session_id", "mode", "project_path", "previous_session_id", "transcript_path")
    __slots__ = _fields
    session_id: str
    mode: SessionMode
    project_path: Path
    previous_session_id: str | None
    """Claude Code never provides it; kept for the spec's envelope."""
    transcript_path: Path | None

    def __init__(
        self,
        *,
        session_id: str,
        mode: SessionMode,
        project_path: Path,
        previous_session_id: str | None = None,
        transcript_path: Path | None = None,
    ) -> None:
        self._init(
            session_id=session_id,
            mode=mode,
            project_path=project_path,
            previous_session_id=previous_session_id,
            transcript_path=transcript_path,
        )


class UserPrompt(Value):
    """A prompt the user submitted, before the assistant sees it (003 §6 `UserPrompt`)."""

    _fields = ("text", "session_id", "turn_number", "project_path")
    __slots__ = _fields
    text: str
    session_id: str
    turn_number: int
    """Not provided by Claude Code; 0 when unknown."""
    project_path: Path

    def __init__(
        self, *, text: str, session_id: str, turn_number: int = 0, project_path: Path
    ) -> None:
        self._init(
            text=text, session_id=session_id, turn_number=turn_number, project_path=project_path
        )


class FileInfo(Value):
    """A file the assistant just wrote or edited (003 §6 `FileInfo`)."""

    _fields = (
        "path", "content_preview", "file_type", "session_id", "project_path", "tool_name"
    )
    __slots__ = _fields
    path: Path
    content_preview: str
    """The first 500 characters of what was written (`content` or `new_string`)."""
    file_type: str
    """From the extension: ``markdown``, ``yaml``, ``json``, ``jsonl``, ``text`` or ``other``."""
    session_id: str
    project_path: Path
    tool_name: str

    def __init__(
        self,
        *,
        path: Path,
        content_preview: str,
        file_type: str,
        session_id: str,
        project_path: Path,
        tool_name: str = "Write",
    ) -> None:
        self._init(
            path=path,
            content_preview=content_preview,
            file_type=file_type,
            session_id=session_id,
            project_path=project_path,
            tool_name=tool_name,
        )


class SessionCheckpoint(Value):
    """A moment to save the session as a handoff: before compaction or at session end."""

    _fields = (
        "kind", "session_id", "project_path", "transcript_path", "trigger", "instructions"
    )
    __slots__ = _fields
    kind: Literal["pre_compact", "session_end"]
    session_id: str
    project_path: Path
    transcript_path: Path | None
    trigger: str
    """PreCompact ``manual``/``auto``, or SessionEnd's ``reason`` (``clear``, ``logout``, …)."""
    instructions: str
    """PreCompact's ``custom_instructions`` (what the user typed after ``/compact``)."""

    def __init__(
        self,
        *,
        kind: Literal["pre_compact", "session_end"],
        session_id: str,
        project_path: Path,
        transcript_path: Path | None = None,
        trigger: str = "",
        instructions: str = "",
    ) -> None:
        self._init(
            kind=kind,
            session_id=session_id,
            project_path=project_path,
            transcript_path=transcript_path,
            trigger=trigger,
            instructions=instructions,
        )


class StopSignal(Value):
    """The assistant finished its turn."""

    _fields = ("session_id", "stop_hook_active", "project_path", "transcript_path")
    __slots__ = _fields
    session_id: str
    stop_hook_active: bool
    """True when the assistant is already continuing because a Stop hook blocked."""
    project_path: Path
    transcript_path: Path | None
    """The session's transcript, where the turn's learnings are read from."""

    def __init__(
        self,
        *,
        session_id: str,
        stop_hook_active: bool,
        project_path: Path,
        transcript_path: Path | None = None,
    ) -> None:
        self._init(
            session_id=session_id,
            stop_hook_active=stop_hook_active,
            project_path=project_path,
            transcript_path=transcript_path,
        )


class SkillSuggestion(Value):
    """One skill worth using for this prompt (003 §6 `SkillSuggestion`)."""

    _fields = ("skill", "reason", "confidence")
    __slots__ = _fields
    skill: str
    reason: str
    confidence: float

    def __init__(self, skill: str, reason: str, confidence: float) -> None:
        self._init(skill=skill, reason=reason, confidence=confidence)


class HookResponse(Value):
    """What a hook answers (003 §6 `HookResponse`, one type for every event)."""

    _fields = (
        "action",
        "additional_context",
        "blocking_reason",
        "suggestions",
        "indexed",
        "artifact_type",
        "metadata",
    )
    __slots__ = _fields
    action: HookAction
    additional_context: str | None
    """Text to put in front of the assistant (SessionStart, UserPromptSubmit)."""
    blocking_reason: str | None
    """Shown to the user when `action` is BLOCK; required then."""
    suggestions: tuple[SkillSuggestion, ...]
    indexed: bool
    artifact_type: str | None
    metadata: Mapping[str, Any]
    """Figures for the log (memories_loaded, index_time_ms, …); the protocol has no channel."""

    def __init__(
        self,
        *,
        action: HookAction = HookAction.CONTINUE,
        additional_context: str | None = None,
        blocking_reason: str | None = None,
        suggestions: tuple[SkillSuggestion, ...] = (),
        indexed: bool = False,
        artifact_type: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._init(
            action=action,
            additional_context=additional_context,
            blocking_reason=blocking_reason,
            suggestions=suggestions,
            indexed=indexed,
            artifact_type=artifact_type,
            metadata={} if metadata is None else metadata,
        )


class HookSettings(Value):
    """The continuity settings hooks use (001 §10 `continuity` section, 003 §6 budgets)."""

    _fields = (
        "memory_search_budget_ms",
        "skill_match_budget_ms",
        "session_end_budget_ms",
        "skill_rules",
        "session_start_max_learnings",
        "prompt_max_learnings",
        "prompt_recall_budget_ms",
        "additional_context_max_chars",
        "embeddings",
        "enforcement",
        "capture",
        "ignored_note",
        "ignored_file",
        "ignored_digest",
    )
    __slots__ = _fields
    memory_search_budget_ms: int
    skill_match_budget_ms: int
    session_end_budget_ms: int
    """Claude Code gives all SessionEnd hooks 1.5 s together; we stay under it."""
    skill_rules: tuple[str, ...]
    """Extra skill-rule files, beside the defaults of the home and the project."""
    session_start_max_learnings: int
    prompt_max_learnings: int
    prompt_recall_budget_ms: int
    """Recalling learnings for a prompt is optional: it may hold the prompt this long at most."""
    additional_context_max_chars: int
    embeddings: str
    """``on`` loads the embedding model (slow start); anything else keeps hooks on FTS5 only."""
    enforcement: str
    """``suggest``: a rule marked block is a required step; ``block``: it stops the prompt."""
    capture: str
    """``off``: the hooks store nothing from this project (handoffs, artifact index)."""
    ignored_note: str
    """What the project's untrusted config had that was left aside (one line), or empty."""
    ignored_file: str
    ignored_digest: str
    """The file and content the note is about: it is given once per content (D217)."""

    def __init__(
        self,
        *,
        memory_search_budget_ms: int = 2000,
        skill_match_budget_ms: int = 1000,
        session_end_budget_ms: int = 1200,
        skill_rules: tuple[str, ...] = (),
        session_start_max_learnings: int = 5,
        prompt_max_learnings: int = 3,
        prompt_recall_budget_ms: int = 300,
        additional_context_max_chars: int = MAX_ADDITIONAL_CONTEXT,
        embeddings: str = "off",
        enforcement: str = "suggest",
        capture: str = "on",
        ignored_note: str = "",
        ignored_file: str = "",
        ignored_digest: str = "",
    ) -> None:
        self._init(
            memory_search_budget_ms=memory_search_budget_ms,
            skill_match_budget_ms=skill_match_budget_ms,
            session_end_budget_ms=session_end_budget_ms,
            skill_rules=skill_rules,
            session_start_max_learnings=session_start_max_learnings,
            prompt_max_learnings=prompt_max_learnings,
            prompt_recall_budget_ms=prompt_recall_budget_ms,
            additional_context_max_chars=additional_context_max_chars,
            embeddings=embeddings,
            enforcement=enforcement,
            capture=capture,
            ignored_note=ignored_note,
            ignored_file=ignored_file,
            ignored_digest=ignored_digest,
        )

    @classmethod
    def from_continuity(cls, continuity: object, ignored: object = None) -> HookSettings:
        """Take the fields hooks use from a `ContinuityConfig` (or anything shaped like one),
        and what the project's untrusted config had that was left aside (`IgnoredSettings`)."""
        defaults = cls()
        rules = getattr(continuity, "skill_rules", ()) or ()
        note = ignored.message() if ignored is not None else ""  # type: ignore[attr-defined]
        return cls(
            memory_search_budget_ms=_int(continuity, "memory_search_budget_ms", defaults),
            skill_match_budget_ms=_int(continuity, "skill_match_budget_ms", defaults),
            skill_rules=tuple(str(r) for r in rules),
            session_start_max_learnings=_int(continuity, "session_start_max_learnings", defaults),
            additional_context_max_chars=min(
                _int(continuity, "additional_context_max_chars", defaults), MAX_ADDITIONAL_CONTEXT
            ),
            embeddings="on" if getattr(continuity, "embeddings", None) == "on" else "off",
            enforcement="block" if getattr(continuity, "enforcement", None) == "block"
            else "suggest",
            capture="off" if getattr(continuity, "capture", None) == "off" else "on",
            ignored_note=note,
            ignored_file=str(getattr(ignored, "file", "") or ""),
            ignored_digest=str(getattr(ignored, "digest", "") or ""),
        )

    @property
    def context_limit(self) -> int:
        """The most context characters any answer may carry."""
        return max(0, min(self.additional_context_max_chars, MAX_ADDITIONAL_CONTEXT))


def _int(source: object, name: str, defaults: HookSettings) -> int:
    value = getattr(source, name, None)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return int(getattr(defaults, name))


class _Outcome:
    """What a worker produced; written by the worker, read once `finished` (or the deadline)."""

    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class _Budgeted:
    """One piece of work on its own thread; `wait` returns what is ready by the deadline.

    Built on `_thread`, not `threading` (whose import costs each hook process ~2 ms): the lock
    is held while the work runs, and waiting is acquiring it with a timeout. Such a thread never
    holds up the interpreter's exit, like a daemon thread.
    """

    def __init__(self, name: str, fn: Callable[[], Any]) -> None:
        self.name = name
        self._fn = fn
        self._running = _thread.allocate_lock()
        self._running.acquire()
        self.outcome = _Outcome()
        _thread.start_new_thread(self._run, ())

    def _run(self) -> None:
        try:
            self.outcome.value = self._fn()
            self.outcome.done = True
        except BaseException as exc:  # a hook never raises; the caller logs it
            self.outcome.error = exc
        finally:
            self._running.release()

    def wait(self, deadline: float) -> _Outcome:
        """Wait until `deadline` (a `time.monotonic()` value) at most."""
        if self._running.acquire(timeout=max(0.0, deadline - time.monotonic())):
            self._running.release()
        return self.outcome

    @property
    def finished(self) -> bool:
        return not self._running.locked()


class HookOrchestrator:
    """Runs the continuity hooks of 003 §6 against one home.

    Collaborators are injected for tests; by default each is built lazily from the home, the
    first time a hook needs it, so an event pays only for what it uses.
    """

    def __init__(
        self,
        home: HRMHome,
        settings: HookSettings | None = None,
        *,
        learnings: Callable[[], Any] | None = None,
        skill_activator: Callable[[], Any] | None = None,
        handoff_store: Callable[[], Any] | None = None,
    ) -> None:
        """Create an orchestrator.

        Args:
            home: The hrm home whose memory, handoffs and rules the hooks use.
            settings: Budgets and limits; defaults to `HookSettings()`.
            learnings: Factory of a `LearningsRepository` (default: opens the home's).
            skill_activator: Factory of a `SkillActivator`.
            handoff_store: Factory of a `HandoffStore`.
        """
        self.home = home
        self.settings = settings or HookSettings()
        self._learnings_factory = learnings or self._open_learnings
        self._skills_factory = skill_activator or (lambda: _default_skill_activator(home))
        self._handoffs_factory = handoff_store or self._open_handoff_store
        self._learnings: Any = None
        self._learnings_lock = _thread.allocate_lock()
        self.abandoned_workers = 0
        """Workers still running after their budget; the process may exit without them."""
        self.failures: list[tuple[str, BaseException]] = []
        """(what failed, the exception) for the caller's log; hooks never raise."""
        self._verdicts: Any = None

    # -- collaborators -----------------------------------------------------------------------

    def _open_learnings(self) -> Any:
        from hrm.continuity.learnings import LearningsRepository

        # Recalls go to the recall log: a hook never writes, nor waits for, memory.db to
        # stamp what it recalled (D397).
        return LearningsRepository.open(
            self.home, embeddings=self.settings.embeddings, recalls="log"
        )

    def _open_handoff_store(self) -> Any:
        from hrm.continuity.handoff_store import HandoffStore

        return HandoffStore(self.home)

    def close(self) -> None:
        """Close the learnings repository if this orchestrator opened it."""
        with self._learnings_lock:
            repository, self._learnings = self._learnings, None
        close = getattr(repository, "close", None)
        if callable(close):
            self._guard("close learnings", close, None)

    def learnings(self) -> Any:
        """The learnings repository, opened once (thread-safe: workers share it)."""
        with self._learnings_lock:
            if self._learnings is None:
                self._learnings = self._learnings_factory()
            return self._learnings

    def verdicts(self) -> Any:
        """The home's cache of screening verdicts (`hrm.runtime._verdicts`), opened once."""
        if self._verdicts is None:
            from hrm.runtime._verdicts import VerdictCache

            self._verdicts = VerdictCache(self.home.cache_dir / "injection-verdicts.json")
        return self._verdicts

    def _save_verdicts(self) -> None:
        if self._verdicts is not None:
            self._guard("save screening verdicts", self._verdicts.save, None)

    def _guard(self, what: str, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except Exception as exc:
            self._fail(what, exc)
            return default

    def _fail(self, what: str, exc: BaseException) -> None:
        self.failures.append((what, exc))

    def _collect(self, what: str, job: _Budgeted, deadline: float) -> Any:
        outcome = job.wait(deadline)
        if outcome.error is not None:
            self._fail(what, outcome.error)
            return None
        if not outcome.done:
            self.abandoned_workers += 1
            self.failures.append((what, TimeoutError(f"{what} overran its budget")))
            return None
        return outcome.value

    # -- SessionStart ------------------------------------------------------------------------

    def on_session_start(self, context: SessionContext) -> HookResponse:
        """Compile the latest handoff, the active continuity ledger and relevant learnings.

        The handoff lookup and the memory search share the memory-search budget on a worker
        (the search query needs the handoff's task); the ledger is read meanwhile.
        """
        from hrm.continuity._hook_artifacts import _ledger_summary, _render_header

        started = time.monotonic()
        deadline = started + self.settings.memory_search_budget_ms / 1000
        project = context.project_path
        found: dict[str, Any] = {}
        job = _Budgeted(
            "session-start", lambda: self._gather_session_start(project, deadline, found)
        )
        ledger = self._guard("continuity ledger", lambda: _ledger_summary(project), None)
        self._collect("handoff and memory search", job, deadline)
        latest = found.get("handoff")
        preferences = list(found.get("preferences") or [])
        shown = {p.id for p in preferences}
        learnings = [x for x in found.get("learnings") or [] if x.id not in shown]
        shown |= {x.id for x in learnings}
        captured = [x for x in found.get("captured") or [] if x.id not in shown]
        firewall: list[dict[str, Any]] = []
        sections = self._session_start_sections(
            latest, ledger, (preferences, learnings, captured), firewall
        )
        trust_notes = self._trust_notes([])
        sections.insert(0, "\n".join(trust_notes))
        text = _compose_context(
            _render_header(project, context.mode.value), sections, self.settings.context_limit
        )
        metadata: dict[str, Any] = {
            "memories_loaded": len(learnings) + len(preferences) + len(captured),
            "captured_loaded": len(captured),
            "preferences_loaded": len(preferences),
            "ledger_loaded": ledger is not None,
            "handoff_loaded": latest is not None,
            "elapsed_ms": round((time.monotonic() - started) * 1000),
        }
        if firewall:
            metadata["firewall"] = firewall
        if trust_notes:
            metadata["trust"] = trust_notes
        has_content = any(sections)
        return HookResponse(
            action=HookAction.SUGGEST if has_content else HookAction.CONTINUE,
            additional_context=text if has_content else None,
            metadata=metadata,
        )

    def _gather_session_start(
        self, project: Path, deadline: float, found: dict[str, Any]
    ) -> None:
        """SessionStart's worker: the latest handoff, then the standing preferences, the
        learnings its task and the project call up, and what capture learned there, each
        put in `found` as soon as it is known (the budget may end the wait before the rest)."""
        from hrm.continuity._hook_artifacts import _handoff_description, _project_query
        from hrm.continuity._session_learnings import captured_for

        limit = self.settings.session_start_max_learnings
        latest = self._guard("latest handoff", lambda: self._latest_handoff(project), None)
        found["handoff"] = latest
        if limit <= 0 or not self.home.memory_db.exists():
            return
        # The person's standing preferences hold in every project, whatever the search
        # finds: "Always run the tests before committing" matches no project's name.
        found["preferences"] = self._guard("standing preferences", lambda: _standing(
            self.learnings().recent(3 * _PREFERENCES_AT_START, types=["USER_PREFERENCE"])
        ), [])
        description = _handoff_description(latest[1]) if latest else ""
        query = _project_query(project, description)
        found["learnings"] = self._search(query, min(limit, 100), deadline, decayed=True)
        nothing: list[Any] = []
        found["captured"] = self._guard("captured learnings", lambda: captured_for(
            self.learnings(), project, limit), nothing)

    def _session_start_sections(
        self,
        latest: tuple[Path, Any, str] | None,
        ledger: Any,
        kept: tuple[list[Any], list[Any], list[Any]],
        firewall: list[dict[str, Any]],
    ) -> list[str]:
        """SessionStart's sections: the handoff, the continuity ledger, and the standing
        preferences, relevant learnings and captured ones (`kept`). Everything here is stored
        text about to become the assistant's context: each line passes the injection
        screening first (D141), and what it held back is noted in `firewall`."""
        from hrm.continuity._hook_artifacts import _render_handoff_section, _render_ledger_section

        preferences, learnings, captured = kept
        verdicts = self._guard("screening verdicts", self.verdicts, None)
        originals = _originals(latest, preferences + learnings + captured)
        sections = [
            _screened(_render_handoff_section(*latest) if latest else "", "handoff", firewall,
                      None, originals),
            _screened(_render_ledger_section(*ledger) if ledger else "", "ledger", firewall),
            _screened(_render_learnings_section("Your standing preferences", preferences),
                      "preference", firewall, verdicts, originals),
            _screened(_render_learnings_section("Learnings relevant to this project", learnings),
                      "learning", firewall, verdicts, originals),
            _screened(_render_learnings_section(
                "Learned by itself in recent sessions of this project (inferred, unconfirmed)",
                captured), "learning", firewall, verdicts, originals),
        ]
        self._save_verdicts()
        return sections

    def _latest_handoff(self, project: Path) -> tuple[Path, Any, str] | None:
        """(path, handoff, where it came from) of the project's newest handoff (D242)."""
        from hrm.continuity._handoff_sources import newest_handoff

        choice = newest_handoff(self, project)
        return None if choice is None else (choice.path, choice.data, choice.origin)

    def _search(
        self, query: str, limit: int, deadline: float, *, decayed: bool = False
    ) -> list[Any]:
        if not query.strip():
            return list(self.learnings().recent(limit))
        from hrm.continuity.learnings_types import SearchQuery

        budget_ms = max(1, int((deadline - time.monotonic()) * 1000))
        results = self.learnings().search_memories(
            SearchQuery(text=query, filters=None, limit=limit), budget_ms=budget_ms
        )
        if decayed:  # SessionStart: an old learning nobody reads gives way (D246)
            from hrm.continuity._session_learnings import rank_by_decay

            return rank_by_decay(list(results.results))
        return [result.learning for result in results.results]

    # -- UserPromptSubmit --------------------------------------------------------------------

    def on_user_prompt_submit(self, prompt: UserPrompt) -> HookResponse:
        """Suggest matching skills (or block for a `block` rule) and recall related learnings."""
        started = time.monotonic()
        if not prompt.text.strip():
            return HookResponse(metadata={"skipped": "empty prompt"})
        deadline = started + self.settings.skill_match_budget_ms / 1000
        recall_ms = min(self.settings.prompt_recall_budget_ms, self.settings.skill_match_budget_ms)
        recall_deadline = started + recall_ms / 1000
        recall: _Budgeted | None = None
        if self.settings.prompt_max_learnings > 0 and self.home.memory_db.exists():
            query = _prompt_query(prompt.text)
            limit = min(self.settings.prompt_max_learnings, 100)
            # Import here, before any worker exists: an import is pure CPU under the GIL, and
            # done on the recall thread it contends with matching (each waits out the other's
            # 5 ms switch interval); the recall thread then spends its time in SQLite, which
            # releases the GIL, while matching runs. ~2 ms per prompt. Opening the database
            # (which can wait on a lock) stays on the budgeted thread.
            self._guard("prompt recall", _import_learnings, None)
            recall = _Budgeted(
                "prompt-recall", lambda: self._search(query, limit, recall_deadline)
            )
        matching = _Budgeted("skill-match", lambda: self._match(prompt, deadline))
        outcome = self._collect("skill matching", matching, deadline)
        learnings: list[Any] = []
        if recall is not None:
            learnings = self._collect("prompt recall", recall, recall_deadline) or []
        metadata: dict[str, Any] = {
            "memories_loaded": len(learnings),
            "matching_ready": outcome is not None,
            "elapsed_ms": round((time.monotonic() - started) * 1000),
        }
        firewall: list[dict[str, Any]] = []
        verdicts = self._guard("screening verdicts", self.verdicts, None) if learnings else None
        decision = _decide_prompt(outcome, learnings, limit=self.settings.context_limit,
                                  firewall=firewall, verdicts=verdicts,
                                  config_path=self.home.config_path)
        self._save_verdicts()
        if firewall:
            metadata["firewall"] = firewall
        trust_notes = self._trust_notes(outcome.held if outcome is not None else [])
        if trust_notes:
            metadata["trust"] = trust_notes
            decision = _with_notes(decision, trust_notes, self.settings.context_limit)
        return HookResponse(
            action=decision.action,
            additional_context=decision.context,
            blocking_reason=decision.reason,
            suggestions=decision.suggestions,
            metadata=metadata,
        )

    def _match(self, prompt: UserPrompt, deadline: float) -> _Matched:
        """What the rules make of the prompt (no action when there are no rules)."""
        paths = _rule_paths(self.home, prompt.project_path, self.settings.skill_rules)
        paths = [path for path in paths if path.is_file()]
        if not paths:
            return _Matched(None, [], {}, [])
        activator = self._skills_factory()
        rules = activator.load_rules(paths)
        for error in getattr(rules, "errors", None) or []:
            self._fail("skill rules", ValueError(str(error)))
        budget_ms = max(1, int((deadline - time.monotonic()) * 1000))
        found = activator.match_skills(prompt.text, rules, budget_ms=budget_ms)
        if getattr(found, "timed_out", False):
            checked = getattr(found, "total_checked", 0)
            overrun = TimeoutError(f"stopped at its {budget_ms} ms budget after {checked} rules")
            self._fail("skill matching", overrun)
        matches = list(found.matches)
        if not matches:
            return _Matched(activator.apply_enforcement(matches), matches, {}, [])
        from hrm.continuity._prompt_rules import blocking_permission, rule_sources

        sources = rule_sources(rules, matches)
        held: list[Any] = []
        enforcement = self.settings.enforcement
        may_block = (
            blocking_permission(self.home, prompt.project_path, sources, held)
            if enforcement == "block"
            else None
        )
        action = activator.apply_enforcement(
            matches, enforcement=enforcement, may_block=may_block
        )
        return _Matched(action, matches, sources, held)

    def _trust_notes(self, held: list[Any]) -> list[str]:
        """Lines about project settings left aside for want of trust, each given once per file
        content (D217): the config's untrusted keys, a project rule that would have blocked."""
        told: list[tuple[str, str, str | None]] = []
        if self.settings.ignored_note:
            told.append((
                "hrm: " + self.settings.ignored_note, self.settings.ignored_file,
                self.settings.ignored_digest,
            ))
        told.extend((rule.note(), str(rule.path), rule.digest) for rule in held)
        if not told:
            return []

        from hrm.trust import TrustStore

        store = TrustStore(self.home)
        notes = []
        for note, path, digest in dict.fromkeys(told):
            try:
                if store.first_notice("hook", Path(path), digest):
                    notes.append(note)
            except Exception as exc:  # a notice is never worth a failed hook
                self._fail("trust notice", exc)
        return notes

    # -- PostToolUse -------------------------------------------------------------------------

    def on_post_write(self, file_info: FileInfo) -> HookResponse:
        """Index a handoff, plan or continuity ledger that was just written (best effort)."""
        from hrm.continuity._hook_artifacts import (
            _artifact_roots,
            _classify_artifact,
            _read_bounded,
        )

        started = time.monotonic()
        if self.settings.capture == "off":
            return HookResponse(metadata={"indexed": False, "capture": "off"})
        kind = _classify_artifact(file_info.path, self.home)
        if kind is None:
            return HookResponse(metadata={"indexed": False})
        roots = _artifact_roots(self.home, file_info.project_path)
        content = self._guard("read artifact", lambda: _read_bounded(file_info.path, roots), None)
        if content is None:
            return HookResponse(artifact_type=kind, metadata={"indexed": False})
        artifact_id = self._guard(
            "index artifact",
            lambda: self.learnings().index_artifact(
                str(file_info.path), kind, content, session_id=file_info.session_id or None
            ),
            None,
        )
        metadata: dict[str, Any] = {"artifact_id": artifact_id}
        if kind == "handoff" and artifact_id is not None:
            from hrm.continuity._session_learnings import store_handoff_learnings

            # A handoff's `learnings:` become searchable learnings of the project (D245).
            metadata["learnings_stored"] = self._guard("handoff learnings", lambda: (
                store_handoff_learnings(
                    self.learnings(), content, path=str(file_info.path),
                    session_id=file_info.session_id or None, project=file_info.project_path,
                )
            ), 0)
        metadata["index_time_ms"] = round((time.monotonic() - started) * 1000)
        return HookResponse(indexed=artifact_id is not None, artifact_type=kind, metadata=metadata)

    # -- PreCompact, SessionEnd, Stop --------------------------------------------------------

    def on_pre_compact(self, checkpoint: SessionCheckpoint) -> HookResponse:
        """Save the session as a handoff before compaction forgets it. Never blocks."""
        return self._checkpoint(checkpoint, budget_ms=None)

    def on_session_end(self, checkpoint: SessionCheckpoint) -> HookResponse:
        """Save the session as a handoff, inside Claude Code's 1.5 s SessionEnd budget."""
        return self._checkpoint(checkpoint, budget_ms=self.settings.session_end_budget_ms)

    def on_stop(self, signal: StopSignal) -> HookResponse:
        """The turn ended: capture what it learned. hrm never blocks a stop."""
        from hrm.continuity._session_save import capture_at_stop

        metadata: dict[str, Any] = {"stop_hook_active": signal.stop_hook_active}
        if self.settings.capture == "off":  # the person keeps nothing of this project (D222)
            metadata["capture"] = "off"
            return HookResponse(metadata=metadata)
        found = self._guard("capture learnings", lambda: capture_at_stop(self, signal), None)
        metadata.update(found or {})
        return HookResponse(metadata=metadata)

    def _checkpoint(self, checkpoint: SessionCheckpoint, *, budget_ms: int | None) -> HookResponse:
        from hrm.continuity._session_save import save_session

        if self.settings.capture == "off":  # the person keeps nothing of this project (D222)
            return HookResponse(metadata={"handoff_path": None, "capture": "off"})
        metadata = save_session(self, checkpoint, budget_ms=budget_ms)
        path = metadata.get("handoff_path")
        # The handoff repeats what the transcript said; what reads as a planted instruction is
        # recorded now, where it came in, and quoted or left out when a session injects it.
        flagged = self._guard(
            "screen handoff", lambda: _flagged_handoff(Path(path) if path else None), None
        )
        if flagged is not None:
            metadata["firewall"] = [flagged]
        return HookResponse(metadata=metadata)


# -- helpers: pure where they can be ---------------------------------------------------------

_LEARNING_CHARS = 400
_PREFERENCES_AT_START = 10
"""Standing preferences (active ``USER_PREFERENCE`` learnings, newest first) every session
starts with: they are short, and a person rarely states more that still hold."""
_NOT_STANDING = frozenset({"INFERRED_SILENT", "BEHAVIORAL"})
"""Preference classes of learnings that are observations, not preferences the person stated
("The tests took long yesterday" stored as a preference is kept, at LOW confidence)."""


def _standing(learnings: list[Any]) -> list[Any]:
    """The learnings that state a preference (explicit, or inferred and since confirmed)."""
    kept = [x for x in learnings if x.metadata.get("preference_class") not in _NOT_STANDING]
    return kept[:_PREFERENCES_AT_START]


class _Matched:
    """What the skill rules made of a prompt."""

    __slots__ = ("action", "held", "matches", "sources")

    def __init__(
        self, action: Any, matches: list[Any], sources: dict[str, Path], held: list[Any]
    ) -> None:
        self.action = action
        """The `EnforcementAction`."""
        self.matches = matches
        self.sources = sources
        """The file each matched rule came from."""
        self.held = held
        """Project rules that would have blocked but the project is not trusted."""


class _PromptDecision:
    __slots__ = ("action", "context", "reason", "suggestions")

    def __init__(
        self,
        action: HookAction,
        context: str | None = None,
        reason: str | None = None,
        suggestions: tuple[SkillSuggestion, ...] = (),
    ) -> None:
        self.action = action
        self.context = context
        self.reason = reason
        self.suggestions = suggestions


def _import_learnings() -> None:
    """Import the learnings repository's module (see `on_user_prompt_submit` for why)."""
    import hrm.continuity.learnings  # noqa: F401 - imported for its cost, not a name


def _default_skill_activator(home: HRMHome) -> Any:
    from hrm.continuity.skills import SkillActivator

    return SkillActivator(cache_dir=home.cache_dir)


def _rule_paths(home: HRMHome, project: Path, extra: tuple[str, ...]) -> list[Path]:
    from hrm.continuity.skills import default_rule_paths

    paths = [Path(p) for p in default_rule_paths(home, project)]
    for raw in extra:
        path = Path(raw).expanduser()
        paths.append(path if path.is_absolute() else project / path)
    return list(dict.fromkeys(paths))


def _name(value: Any) -> str:
    """An enum member's name, or the text of anything else, upper-cased."""
    name = getattr(value, "name", None)
    return str(name if isinstance(name, str) else value).upper()


def _one_line(text: Any, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _prompt_query(text: str) -> str:
    """A bounded memory query for a prompt: a megabyte prompt must not become a megabyte query."""
    return _one_line(text[:4000], 500)


def _render_learnings_section(title: str, learnings: list[Any]) -> str:
    if not learnings:
        return ""
    lines = [f"## {title}"]
    for learning in learnings:
        kind = _name(getattr(learning, "type", "LEARNING"))
        content = _one_line(getattr(learning, "content", ""), _LEARNING_CHARS)
        ident = getattr(learning, "id", "")
        lines.append(f"- [{kind}] {content}" + (f" (id {ident})" if ident else ""))
    return "\n".join(lines)


def _originals(latest: tuple[Any, ...] | None, learnings: list[Any]) -> dict[str, str]:
    """Rendered line (without its bullet) -> the stored text it shows.

    Rendering flattens a text to one line and cuts it; the screening reads the text as stored,
    so a forged turn ("\n\nHuman: …") or letters spaced apart keep the shape that gives
    them away.
    """
    found: dict[str, str] = {}
    for learning in learnings:
        raw = str(getattr(learning, "content", "") or "")
        kind = _name(getattr(learning, "type", "LEARNING"))
        ident = getattr(learning, "id", "")
        shown = f"[{kind}] {_one_line(raw, _LEARNING_CHARS)}" + (f" (id {ident})" if ident else "")
        found[shown] = raw
    if latest is not None:
        data = latest[1]
        task = getattr(data, "task", None)
        resume = getattr(data, "resume", None)
        description = str(getattr(task, "description", "") or "")
        found[f"Task: {_one_line(description or '(none)', 500)}"] = description
        for raw in [*(getattr(resume, "next_steps", None) or []),
                    *(getattr(data, "blockers", None) or []),
                    *(getattr(resume, "warnings", None) or [])]:
            found[_one_line(raw, 300)] = str(raw)
        from hrm.continuity._hook_artifacts import _marked

        for item in list(getattr(data, "learnings", None) or [])[:8]:
            found[_marked(item)] = str(getattr(item, "content", ""))
    return found


def _screened(
    section: str,
    source: str,
    firewall: list[dict[str, Any]],
    verdicts: Any = None,
    originals: dict[str, str] | None = None,
) -> str:
    """``section`` with each flagged line quoted as untrusted data or left out (D141).

    Sections are rendered a line per item (a next step, a blocker, a learning), so a line is
    the unit that is kept, quoted or dropped; the section as a whole is screened too, for an
    instruction spread over lines. Each decision is appended to ``firewall`` for the hook log.
    With a `VerdictCache`, a section whose every line was judged clean before is kept without
    loading the screening (D142).
    """
    if not section:
        return section
    head, *lines = section.split("\n")
    rendered = [line.lstrip("- ") for line in lines]
    bodies = [(originals or {}).get(body, body) for body in rendered]
    joined = " ".join(bodies)
    if verdicts is not None and all(verdicts.get(b) is False for b in (*bodies, joined)):
        return section
    from hrm.runtime.injection import guard, screen

    out = [head]
    before = len(firewall)
    for number, (line, body) in enumerate(zip(lines, bodies, strict=True), 1):
        guarded = guard(body, source=source)
        if verdicts is not None:
            verdicts.put(body, guarded.action != "pass")
        if guarded.action == "pass":
            out.append(line)
            continue
        bullet = line[: len(line) - len(line.lstrip("- "))]
        firewall.append(guarded.record(source=source, line=number))
        families = ", ".join(guarded.screening.families)
        shown = guarded.text or f"[left out: stored {source} text flagged as {families}]"
        out.append(bullet + shown)
    whole = screen(joined).flagged
    if verdicts is not None:
        verdicts.put(joined, whole)
    if len(firewall) == before and whole:
        guarded = guard(joined, source=source)
        firewall.append(guarded.record(source=source, line=0))
        families = ", ".join(guarded.screening.families)
        out = [head, guarded.text or f"[left out: stored {source} text flagged as {families}]"]
    return "\n".join(out)


def _flagged_handoff(path: Path | None) -> dict[str, Any] | None:
    """The screening of a handoff just written, when it flags (bounded read)."""
    if path is None:
        return None
    from hrm.runtime.injection import screen

    with Path(path).open("rb") as fh:
        text = fh.read(1 << 20).decode("utf-8", errors="replace")
    found = screen(text)
    if not found.flagged:
        return None
    return {"source": "handoff", "path": str(path), "action": "recorded", **found.record()}


def _compose_context(header: str, sections: list[str], limit: int) -> str:
    """Join sections in order of importance, cutting the first that overflows `limit`."""
    marker = "\n… (truncated)"
    out = header
    for section in (s for s in sections if s):
        candidate = f"{out}\n\n{section}"
        if len(candidate) <= limit:
            out = candidate
            continue
        room = limit - len(out) - 2 - len(marker)
        if room > 80:
            out = f"{out}\n\n{section[:room]}{marker}"
        break
    return out[:limit]


def _decide_prompt(
    outcome: _Matched | None,
    learnings: list[Any],
    *,
    limit: int,
    firewall: list[dict[str, Any]] | None = None,
    verdicts: Any = None,
    config_path: Path | None = None,
) -> _PromptDecision:
    """Turn what the rules made of the prompt (None when matching did not finish) and the
    recalled learnings into the hook's decision."""
    action = outcome.action if outcome is not None else None
    matches = outcome.matches if outcome is not None else []
    verdict = _name(getattr(action, "action", "CONTINUE")) if action is not None else "CONTINUE"
    suggestions = tuple(_suggestion(m) for m in matches)
    if verdict == "BLOCK" and outcome is not None:
        from hrm.continuity._prompt_rules import block_reason

        blocking = [str(s) for s in getattr(action, "blocking_skills", None) or []]
        names = blocking or [s.skill for s in suggestions] or ["a required skill"]
        reason = block_reason(
            names, matches, outcome.sources, config_path or Path("~/.hrm/config.yaml")
        )
        return _PromptDecision(HookAction.BLOCK, reason=reason, suggestions=suggestions)
    sections: list[str] = []
    if verdict in ("SUGGEST", "WARN") and matches:
        required = [m for m in matches if _name(getattr(m, "enforcement", "")) == "BLOCK"]
        if required:
            from hrm.continuity._prompt_rules import required_section

            sections.append(required_section(required, _render_match))
        others = [m for m in matches if m not in required]
        if others:
            heading = (
                "Skills that match this prompt" if verdict == "SUGGEST" else "Skills available"
            )
            lines = [f"## {heading} (from the project's skill rules)"]
            lines.extend(_render_match(m) for m in others[:8])
            sections.append("\n".join(lines))
    recalled = _render_learnings_section("Learnings related to this prompt", learnings)
    sections.append(_screened(recalled, "learning", [] if firewall is None else firewall,
                              verdicts, _originals(None, learnings)))
    body = "\n\n".join(s for s in sections if s)
    if not body:
        return _PromptDecision(HookAction.CONTINUE)
    return _PromptDecision(
        HookAction.SUGGEST,
        context=_compose_context("", [body], limit).strip(),
        suggestions=suggestions,
    )


def _with_notes(decision: _PromptDecision, notes: list[str], limit: int) -> _PromptDecision:
    """The decision with the trust notes first in its context (a block keeps its reason)."""
    if decision.action is HookAction.BLOCK:
        return decision
    context = _compose_context("\n".join(notes), [decision.context or ""], limit).strip()
    action = HookAction.SUGGEST if decision.action is HookAction.CONTINUE else decision.action
    return _PromptDecision(action, context=context, suggestions=decision.suggestions)


def _match_reason(match: Any) -> str:
    reason = getattr(match, "match_reason", None)
    if isinstance(reason, str):
        return reason
    keywords = list(getattr(reason, "matched_keywords", None) or [])
    patterns = list(getattr(reason, "matched_patterns", None) or [])
    parts = []
    if keywords:
        parts.append("keywords " + ", ".join(repr(k) for k in keywords[:5]))
    if patterns:
        parts.append("intent " + ", ".join(repr(p) for p in patterns[:3]))
    return "matched " + "; ".join(parts) if parts else ""


def _render_match(match: Any) -> str:
    skill = str(getattr(match, "skill", match))
    labels = [
        _name(value).lower()
        for value in (getattr(match, "priority", None), getattr(match, "enforcement", None))
        if value is not None
    ]
    line = f"- {skill}" + (f" ({', '.join(labels)})" if labels else "")
    description = getattr(match, "description", "")
    if description:
        line += f": {_one_line(description, 200)}"
    reason = _match_reason(match)
    return f"{line} [{_one_line(reason, 200)}]" if reason else line


def _suggestion(match: Any) -> SkillSuggestion:
    confidence = getattr(match, "confidence", 0.0)
    return SkillSuggestion(
        skill=str(getattr(match, "skill", match)),
        reason=_one_line(_match_reason(match), 300),
        confidence=float(confidence) if isinstance(confidence, int | float) else 0.0,
    )
