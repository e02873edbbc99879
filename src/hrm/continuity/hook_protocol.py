"""Claude Code's hook protocol: payload bytes in, the orchestrator's DTOs out, one JSON answer back.

This module is the trust boundary of `hrm hook` (reference/claude-code-hooks.md §9). Input is
parsed tolerantly: unknown fields are ignored, any documented field may be missing, ``null`` or
of the wrong type, and the answer is "nothing to do" rather than an error. Two input shapes are
accepted: Claude Code's flat object (the event in ``hook_event_name``) and the spec's simplified
envelope ``{"event", "session_id", "timestamp", "data": {...}}`` (003 "Hook Input Format").

Answers follow §5.3 exactly: ``hookSpecificOutput`` with ``hookEventName`` equal to the input
event and ``additionalContext`` (SessionStart, UserPromptSubmit), or ``{"decision": "block",
"reason"}`` (UserPromptSubmit only). Every other case is silence: exit 0 and an empty stdout.
The spec's ``{"result": …}`` outputs are not part of the protocol and are never emitted.

Standard library only: this runs on every prompt.
"""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path

from hrm._values import Value
from hrm.continuity.hooks import (
    MAX_ADDITIONAL_CONTEXT,
    FileInfo,
    HookAction,
    HookResponse,
    SessionCheckpoint,
    SessionContext,
    SessionMode,
    StopSignal,
    UserPrompt,
)

TYPE_CHECKING = False  # this runs on every prompt: no typing or dataclasses at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ENV_PROJECT_DIR",
    "HookEvent",
    "HookRequest",
    "ParsedHook",
    "event_from_argument",
    "parse_hook_input",
    "render_response",
]

ENV_PROJECT_DIR = "CLAUDE_PROJECT_DIR"
"""Claude Code's project root (protocol §2); wins over the payload's ``cwd``."""

_PREVIEW_CHARS = 500
_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})


class HookEvent(str, Enum):
    """The events hrm answers; the value is Claude Code's ``hook_event_name``."""

    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    POST_TOOL_USE = "PostToolUse"
    PRE_COMPACT = "PreCompact"
    STOP = "Stop"
    SESSION_END = "SessionEnd"

    @property
    def argument(self) -> str:
        """The kebab-case name used on the command line (``user-prompt-submit``)."""
        out = "".join(f"-{c.lower()}" if c.isupper() else c for c in self.value)
        return out.lstrip("-")


_BY_NAME = {e.value: e for e in HookEvent}
_BY_ARGUMENT = {e.argument: e for e in HookEvent}

_MODES = {
    "startup": SessionMode.STARTUP,
    "resume": SessionMode.RESUME,
    "clear": SessionMode.CLEAR,
    "compact": SessionMode.COMPACT,
    "fork": SessionMode.RESUME,
}

Payload = SessionContext | UserPrompt | FileInfo | SessionCheckpoint | StopSignal


class HookRequest(Value):
    """One event to handle, with its DTO for the orchestrator."""

    _fields = ("event", "payload")
    __slots__ = _fields
    event: HookEvent
    payload: Payload

    def __init__(self, event: HookEvent, payload: Payload) -> None:
        self._init(event=event, payload=payload)


class ParsedHook(Value):
    """What parsing found: a request, or why there is nothing to do (for the log)."""

    _fields = ("request", "event", "problem", "notes")
    __slots__ = _fields
    request: HookRequest | None
    event: HookEvent | None
    """The event named by the input, even when there is nothing to do for it."""
    problem: str | None
    """Why the input was not usable (malformed, unknown event…); None when fine or a no-op."""
    notes: tuple[str, ...]
    """Oddities worth logging that did not stop the hook (argument and payload disagree…)."""

    def __init__(
        self,
        request: HookRequest | None,
        event: HookEvent | None = None,
        problem: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        self._init(request=request, event=event, problem=problem, notes=notes)


def event_from_argument(argument: str | None) -> HookEvent | None:
    """``session-start``, ``SessionStart`` or ``session_start`` → the event; else None."""
    if not argument:
        return None
    text = argument.strip()
    if text in _BY_NAME:
        return _BY_NAME[text]
    return _BY_ARGUMENT.get(text.lower().replace("_", "-"))


def parse_hook_input(
    raw: bytes,
    *,
    argument_event: HookEvent | None = None,
    environ: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> ParsedHook:
    """Parse one hook payload; never raises.

    Args:
        raw: Everything read from standard input.
        argument_event: The event named on the command line, a convenience: the payload's
            event wins, and a disagreement is noted for the log.
        environ: The environment (for ``CLAUDE_PROJECT_DIR``); default `os.environ`.
        cwd: The process directory, the last resort for the project; default `Path.cwd()`.
    """
    try:
        data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
    except (ValueError, RecursionError):
        return ParsedHook(None, problem="input is not JSON")
    if data is None:
        return ParsedHook(None, problem="empty input")
    if not isinstance(data, dict):
        return ParsedHook(None, problem=f"input is a JSON {type(data).__name__}, not an object")
    fields, named = _flatten(data)
    notes: list[str] = []
    event = _BY_NAME.get(named) if isinstance(named, str) else None
    if named is not None and event is None:
        return ParsedHook(None, problem=f"unknown hook event {str(named)[:80]!r}")
    if event is None:
        if argument_event is None:
            return ParsedHook(None, problem="the input names no hook event")
        event = argument_event
        notes.append("the input names no event; using the command-line argument")
    elif argument_event is not None and argument_event is not event:
        notes.append(
            f"argument {argument_event.argument!r} disagrees with the input's {event.value!r};"
            " the input wins"
        )
    env = os.environ if environ is None else environ
    project = _project_dir(env, fields, cwd)
    payload = _payload(event, fields, project)
    request = HookRequest(event, payload) if payload is not None else None
    return ParsedHook(request, event=event, notes=tuple(notes))


def render_response(event: HookEvent, response: HookResponse) -> str | None:
    """The exact stdout for `response` (§5.3), or None for silence."""
    if event is HookEvent.USER_PROMPT_SUBMIT and response.action is HookAction.BLOCK:
        reason = (response.blocking_reason or "").strip()
        if not reason:
            return None
        return _dump({"decision": "block", "reason": reason[:MAX_ADDITIONAL_CONTEXT]})
    if event not in (HookEvent.SESSION_START, HookEvent.USER_PROMPT_SUBMIT):
        return None
    context = (response.additional_context or "").strip()
    if not context or response.action is HookAction.CONTINUE:
        return None
    output = {"hookEventName": event.value, "additionalContext": context[:MAX_ADDITIONAL_CONTEXT]}
    return _dump({"hookSpecificOutput": output})


def _dump(answer: dict[str, Any]) -> str:
    return json.dumps(answer, ensure_ascii=True, separators=(",", ":"))


def _flatten(data: dict[str, Any]) -> tuple[dict[str, Any], object]:
    """Claude Code's flat payload as is; the spec's envelope with ``data`` lifted to the top."""
    if "hook_event_name" in data:
        return data, data.get("hook_event_name")
    if "event" in data:
        inner = data.get("data")
        fields = {k: v for k, v in data.items() if k != "data"}
        if isinstance(inner, dict):
            fields.update({k: v for k, v in inner.items() if k not in ("event",)})
        return fields, data.get("event")
    return data, None


def _text(fields: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = fields.get(name)
        if isinstance(value, str):
            return value
    return None


def _path(value: str | None) -> Path | None:
    if not value or "\x00" in value:
        return None
    return Path(value)


def _project_dir(env: Any, fields: dict[str, Any], cwd: Path | None) -> Path:
    for candidate in (env.get(ENV_PROJECT_DIR), _text(fields, "cwd", "project_path")):
        path = _path(candidate) if isinstance(candidate, str) else None
        if path is not None and path.is_absolute():
            return path
    try:
        return cwd if cwd is not None else Path.cwd()
    except OSError:
        return Path(os.sep)


def _payload(event: HookEvent, fields: dict[str, Any], project: Path) -> Payload | None:
    session_id = (_text(fields, "session_id") or "").strip()[:200]
    transcript = _path(_text(fields, "transcript_path"))
    if event is HookEvent.SESSION_START:
        source = (_text(fields, "source", "mode") or "").lower()
        return SessionContext(
            session_id=session_id,
            mode=_MODES.get(source, SessionMode.STARTUP),
            project_path=project,
            previous_session_id=_text(fields, "previous_session_id"),
            transcript_path=transcript,
        )
    if event is HookEvent.USER_PROMPT_SUBMIT:
        text = _text(fields, "prompt", "text")
        if text is None:
            return None
        turn = fields.get("turn_number")
        return UserPrompt(
            text=text,
            session_id=session_id,
            turn_number=turn if isinstance(turn, int) and not isinstance(turn, bool) else 0,
            project_path=project,
        )
    if event is HookEvent.POST_TOOL_USE:
        return _file_info(fields, session_id, project)
    if event in (HookEvent.PRE_COMPACT, HookEvent.SESSION_END):
        return SessionCheckpoint(
            kind="pre_compact" if event is HookEvent.PRE_COMPACT else "session_end",
            session_id=session_id,
            project_path=project,
            transcript_path=transcript,
            trigger=(_text(fields, "trigger", "reason") or "")[:100],
            instructions=_text(fields, "custom_instructions") or "",
        )
    active = fields.get("stop_hook_active")
    return StopSignal(
        session_id=session_id, stop_hook_active=active is True, project_path=project,
        transcript_path=transcript,
    )


def _file_info(fields: dict[str, Any], session_id: str, project: Path) -> FileInfo | None:
    tool = _text(fields, "tool_name")
    tool_input = fields.get("tool_input")
    if isinstance(tool_input, dict):
        raw_path = _text(tool_input, "file_path")
        preview = _text(tool_input, "content", "new_string")
        edits = tool_input.get("edits")
        if preview is None and isinstance(edits, list):
            preview = "\n".join(
                e["new_string"] for e in edits
                if isinstance(e, dict) and isinstance(e.get("new_string"), str)
            )
    else:  # the spec's envelope: {"file_path" | "path", "content_preview"}
        raw_path = _text(fields, "file_path", "path")
        preview = _text(fields, "content_preview", "content")
        tool = tool or "Write"
    if tool not in _WRITE_TOOLS:
        return None
    path = _path(raw_path)
    if path is None:
        return None
    if not path.is_absolute():
        path = project / path
    return FileInfo(
        path=path,
        content_preview=(preview or "")[:_PREVIEW_CHARS],
        file_type=_file_type(path),
        session_id=session_id,
        project_path=project,
        tool_name=tool,
    )


def _file_type(path: Path) -> str:
    suffix = path.suffix.lower()
    return {
        ".md": "markdown",
        ".markdown": "markdown",
        ".yaml": "yaml",
        ".yml": "yaml",
        ".json": "json",
        ".jsonl": "jsonl",
        ".txt": "text",
    }.get(suffix, "other")
